/* SPDX-License-Identifier: Apache-2.0 */
#include "devices/virtio/mmio.h"

#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define MMIO_MAGIC    0x74726976   /* "virt" */
#define MMIO_VERSION  2
#define MMIO_WINDOW   0x1000

/* ---- notifications ---------------------------------------------------- */

/* QueueNotify writes of queue q's index signal its kick eventfd in KVM,
 * without an exit to us. */
static int mmio_ioeventfd(struct virtio_mmio *t, unsigned q, bool assign)
{
	return machine_ioeventfd(t->machine, t->base + VIRTIO_MMIO_QUEUE_NOTIFY, 4, q, t->kick_fd[q],
				 assign);
}

static int mmio_irqfd(struct virtio_mmio *t, bool assign)
{
	return machine_irqfd(t->machine, t->irq_fd, t->gsi, assign);
}

static void mmio_raise(struct virtio_mmio *t, uint32_t bits)
{
	__atomic_or_fetch(&t->interrupt_status, bits, __ATOMIC_SEQ_CST);
	uint64_t one = 1;
	/* Only fails if the counter would overflow, i.e. it is already set. */
	if (write(t->irq_fd, &one, sizeof(one)) < 0) {
	}
}

void virtio_mmio_signal_used(struct virtio_mmio *t)
{
	mmio_raise(t, VIRTIO_MMIO_INT_VRING);
}

void virtio_mmio_config_changed(struct virtio_mmio *t)
{
	__atomic_add_fetch(&t->config_generation, 1, __ATOMIC_SEQ_CST);
	mmio_raise(t, VIRTIO_MMIO_INT_CONFIG);
}

void virtio_mmio_set_needs_reset(struct virtio_mmio *t, const char *why)
{
	uint32_t old = __atomic_fetch_or(&t->status, VIRTIO_CONFIG_S_NEEDS_RESET, __ATOMIC_SEQ_CST);
	if (old & VIRTIO_CONFIG_S_NEEDS_RESET)
		return;
	snprintf(t->last_error, sizeof(t->last_error), "%s", why);
	mmio_raise(t, VIRTIO_MMIO_INT_CONFIG);
}

/* ---- status state machine ------------------------------------------- */

static uint32_t mmio_status(const struct virtio_mmio *t)
{
	return __atomic_load_n(&t->status, __ATOMIC_SEQ_CST);
}

static void mmio_reset(struct virtio_mmio *t)
{
	t->ops->reset(t->dev);
	for (unsigned q = 0; q < t->nr_queues; q++) {
		uint16_t max = t->queue[q].max_size;
		t->queue[q] = (struct virtio_queue_config){ .max_size = max, .size = max };
	}
	__atomic_store_n(&t->status, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t->interrupt_status, 0, __ATOMIC_SEQ_CST);
	t->device_features_sel = t->driver_features_sel = t->queue_sel = 0;
	t->driver_features = 0;
	t->last_error[0] = '\0';
}

/* FEATURES_OK sticks only if the driver took a subset of what we offered
 * and speaks virtio 1.x. */
static bool mmio_features_acceptable(struct virtio_mmio *t)
{
	uint64_t offered = t->ops->features(t->dev);
	return (t->driver_features & ~offered) == 0 &&
	       (t->driver_features & (1ull << VIRTIO_F_VERSION_1));
}

static void mmio_driver_ok(struct virtio_mmio *t)
{
	struct vmm_err err = { 0 };
	if (t->ops->activate(t->dev, t->driver_features, &err) < 0)
		virtio_mmio_set_needs_reset(t, err.msg);
}

/* A driver that sets FAILED gave up on the device: without a word from the
 * VMM the user sees only a missing NIC. Once per device (a guest could set
 * it after every reset). */
static void mmio_say_failed(struct virtio_mmio *t)
{
	if (t->failed_said)
		return;
	t->failed_said = true;
	char line[480];
	snprintf(line, sizeof(line), "virtio-mmio device at 0x%llx: the guest's driver gave up on it "
		 "(status FAILED: its probe or set-up failed)%s%s", (unsigned long long)t->base,
		 t->failed_hint ? "; " : "", t->failed_hint ? t->failed_hint : "");
	machine_log(t->machine, line);
}

static void mmio_write_status(struct virtio_mmio *t, uint32_t value)
{
	if (value == 0) {
		mmio_reset(t);
		return;
	}
	uint32_t old = mmio_status(t);
	/* "The driver MUST NOT clear a device status bit" (2.1.2): only a
	 * reset clears them, so a write can only add bits. Otherwise DRIVER_OK
	 * dropped and set again would activate a running device twice. */
	uint32_t next = (value & 0xff) | old;
	/* Bits only get set in order; a driver never clears one except by reset. */
	if ((next & VIRTIO_CONFIG_S_FEATURES_OK) && !(old & VIRTIO_CONFIG_S_FEATURES_OK) &&
	    !mmio_features_acceptable(t))
		next &= ~(uint32_t)VIRTIO_CONFIG_S_FEATURES_OK;
	if ((next & VIRTIO_CONFIG_S_DRIVER_OK) && !(next & VIRTIO_CONFIG_S_FEATURES_OK))
		next &= ~(uint32_t)VIRTIO_CONFIG_S_DRIVER_OK;   /* out of order: ignore */
	__atomic_store_n(&t->status, next, __ATOMIC_SEQ_CST);
	if ((next & VIRTIO_CONFIG_S_DRIVER_OK) && !(old & VIRTIO_CONFIG_S_DRIVER_OK))
		mmio_driver_ok(t);
	if ((next & VIRTIO_CONFIG_S_FAILED) && !(old & VIRTIO_CONFIG_S_FAILED)) {
		t->ops->reset(t->dev);   /* the driver gave up: stop touching its memory */
		mmio_say_failed(t);
	}
}

/* ---- registers --------------------------------------------------------- */

static struct virtio_queue_config *mmio_selected_queue(struct virtio_mmio *t)
{
	return t->queue_sel < t->nr_queues ? &t->queue[t->queue_sel] : NULL;
}

static uint32_t mmio_read_reg(struct virtio_mmio *t, uint32_t off)
{
	struct virtio_queue_config *q = mmio_selected_queue(t);
	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE: return MMIO_MAGIC;
	case VIRTIO_MMIO_VERSION: return MMIO_VERSION;
	case VIRTIO_MMIO_DEVICE_ID: return t->ops->device_id;
	case VIRTIO_MMIO_VENDOR_ID: return VIRTIO_MMIO_VENDOR;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		if (t->device_features_sel > 1)
			return 0;
		return (uint32_t)(t->ops->features(t->dev) >> (32 * t->device_features_sel));
	case VIRTIO_MMIO_QUEUE_NUM_MAX: return q ? q->max_size : 0;
	case VIRTIO_MMIO_QUEUE_READY: return q ? q->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS:
		return __atomic_load_n(&t->interrupt_status, __ATOMIC_SEQ_CST);
	case VIRTIO_MMIO_STATUS: return mmio_status(t);
	case VIRTIO_MMIO_CONFIG_GENERATION:
		return __atomic_load_n(&t->config_generation, __ATOMIC_SEQ_CST);
	case VIRTIO_MMIO_SHM_LEN_LOW: case VIRTIO_MMIO_SHM_LEN_HIGH:
		return 0xffffffff;   /* no shared memory regions */
	default: return 0;
	}
}

/* Queue registers may change only while the queue is not ready and the
 * driver has not said DRIVER_OK (spec 4.2.2.2). */
static bool mmio_queue_writable(struct virtio_mmio *t, struct virtio_queue_config *q)
{
	return q && !q->ready && !(mmio_status(t) & VIRTIO_CONFIG_S_DRIVER_OK);
}

static void set_low(uint64_t *v, uint32_t low) { *v = (*v & ~0xffffffffull) | low; }
static void set_high(uint64_t *v, uint32_t high) { *v = (*v & 0xffffffffull) | ((uint64_t)high << 32); }

static void mmio_write_queue_reg(struct virtio_mmio *t, uint32_t off, uint32_t v)
{
	struct virtio_queue_config *q = mmio_selected_queue(t);
	if (off == VIRTIO_MMIO_QUEUE_READY) {
		if (q && !(mmio_status(t) & VIRTIO_CONFIG_S_DRIVER_OK))
			q->ready = v & 1;
		return;
	}
	if (!mmio_queue_writable(t, q))
		return;
	switch (off) {
	case VIRTIO_MMIO_QUEUE_NUM:
		q->size = v <= q->max_size ? (uint16_t)v : q->size;
		break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW: set_low(&q->desc, v); break;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH: set_high(&q->desc, v); break;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW: set_low(&q->driver, v); break;
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH: set_high(&q->driver, v); break;
	case VIRTIO_MMIO_QUEUE_USED_LOW: set_low(&q->device, v); break;
	case VIRTIO_MMIO_QUEUE_USED_HIGH: set_high(&q->device, v); break;
	default: break;
	}
}

static void mmio_write_reg(struct virtio_mmio *t, uint32_t off, uint32_t v)
{
	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		t->device_features_sel = v;
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		/* Features are fixed once FEATURES_OK is set. */
		if (!(mmio_status(t) & VIRTIO_CONFIG_S_FEATURES_OK) && t->driver_features_sel < 2) {
			if (t->driver_features_sel == 0)
				set_low(&t->driver_features, v);
			else
				set_high(&t->driver_features, v);
		}
		break;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
		t->driver_features_sel = v;
		break;
	case VIRTIO_MMIO_QUEUE_SEL:
		t->queue_sel = v;
		break;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		/* Valid indices are caught by ioeventfds and never get here. */
		break;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		__atomic_and_fetch(&t->interrupt_status, ~v, __ATOMIC_SEQ_CST);
		break;
	case VIRTIO_MMIO_STATUS:
		mmio_write_status(t, v);
		break;
	default:
		mmio_write_queue_reg(t, off, v);
		break;
	}
}

static void mmio_bus_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	struct virtio_mmio *t = opaque;
	pthread_mutex_lock(&t->lock);
	if (off >= VIRTIO_MMIO_CONFIG) {
		memset(data, 0, len);
		t->ops->config_read(t->dev, (uint32_t)(off - VIRTIO_MMIO_CONFIG), data, len);
	} else if (len == 4 && off % 4 == 0) {
		bus_store_le(data, 4, mmio_read_reg(t, (uint32_t)off));
	} else {
		memset(data, 0, len);   /* registers are 32-bit only (spec 4.2.2) */
	}
	pthread_mutex_unlock(&t->lock);
}

static void mmio_bus_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct virtio_mmio *t = opaque;
	pthread_mutex_lock(&t->lock);
	if (off >= VIRTIO_MMIO_CONFIG)
		t->ops->config_write(t->dev, (uint32_t)(off - VIRTIO_MMIO_CONFIG), data, len);
	else if (len == 4 && off % 4 == 0)
		mmio_write_reg(t, (uint32_t)off, (uint32_t)bus_load_le(data, 4));
	pthread_mutex_unlock(&t->lock);
}

struct bus_device virtio_mmio_bus_device(struct virtio_mmio *t)
{
	return (struct bus_device){ .name = "virtio-mmio", .opaque = t,
				    .read = mmio_bus_read, .write = mmio_bus_write };
}

void virtio_mmio_cmdline_word(const struct virtio_mmio *t, char *buf, size_t size)
{
	snprintf(buf, size, "virtio_mmio.device=4K@0x%llx:%u", (unsigned long long)t->base, t->gsi);
}

/* ---- lifetime ----------------------------------------------------------- */

int virtio_mmio_create(struct virtio_mmio **out, const struct machine *m, uint64_t base, unsigned gsi,
		       unsigned nr_queues, uint16_t max_queue_size,
		       const struct virtio_device_ops *ops, void *dev, struct vmm_err *err)
{
	if (nr_queues == 0 || nr_queues > VIRTIO_MMIO_MAX_QUEUES)
		return vmm_err_set(err, EINVAL, "virtio-mmio: %u queues (1 to %d)", nr_queues,
				   VIRTIO_MMIO_MAX_QUEUES);
	struct virtio_mmio *t = calloc(1, sizeof(*t));
	if (!t)
		return vmm_err_set(err, ENOMEM, "out of memory for virtio-mmio");
	pthread_mutex_init(&t->lock, NULL);
	t->ops = ops;
	t->dev = dev;
	t->machine = m;
	t->base = base;
	t->gsi = gsi;
	t->nr_queues = nr_queues;
	t->irq_fd = -1;
	for (unsigned q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
		t->kick_fd[q] = -1;
	*out = t;

	for (unsigned q = 0; q < nr_queues; q++) {
		t->queue[q] = (struct virtio_queue_config){ .max_size = max_queue_size,
							    .size = max_queue_size };
		/* Blocking: an io_uring read on it waits for the kick. */
		t->kick_fd[q] = eventfd(0, EFD_CLOEXEC);
		if (t->kick_fd[q] < 0)
			return vmm_err_sys(err, errno, "eventfd for queue %u", q);
		int rc = mmio_ioeventfd(t, q, true);
		if (rc)
			return vmm_err_sys(err, -rc, "KVM_IOEVENTFD for queue %u", q);
	}
	t->irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->irq_fd < 0)
		return vmm_err_sys(err, errno, "eventfd for the device interrupt");
	int rc = mmio_irqfd(t, true);
	if (rc) {
		close(t->irq_fd);
		t->irq_fd = -1;
		return vmm_err_sys(err, -rc, "KVM_IRQFD for GSI %u", gsi);
	}
	return 0;
}

void virtio_mmio_destroy(struct virtio_mmio *t)
{
	if (!t)
		return;
	t->ops->reset(t->dev);
	for (unsigned q = 0; q < t->nr_queues; q++) {
		if (t->kick_fd[q] >= 0) {
			mmio_ioeventfd(t, q, false);
			close(t->kick_fd[q]);
		}
	}
	if (t->irq_fd >= 0) {
		mmio_irqfd(t, false);
		close(t->irq_fd);
	}
	pthread_mutex_destroy(&t->lock);
	free(t);
}
