/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the virtio-mmio register interface (devices/virtio/mmio.c),
 * reached the way a vCPU reaches it: bus_access() on an MMIO bus holding
 * the transport's bus_device, with a fake machine (recording ioeventfd and
 * irqfd registrations, failing the one the input picks) and a fake device
 * behind the transport.
 *
 * The input is the transport's shape (queues, largest queue size, offered
 * features, config space size) and then a sequence of accesses: offset
 * (a known register or anywhere in and around the window, config space
 * included), width 1 to 8, value, read or write; and now and then what a
 * worker does from its thread (signal used buffers, ask for a reset,
 * change the config).
 *
 * Checked: DRIVER_OK only after FEATURES_OK; the device is activated once
 * per reset, with a subset of its features that includes VERSION_1; queue
 * configuration does not change while the device runs; queue sizes stay
 * within the maximum; only defined interrupt bits are ever set; identity
 * registers read their constants and non-32-bit register reads read 0; the
 * config callbacks never see an access past the window; every registration
 * is undone at destroy and no fd is left open. */
#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <string.h>

#include "devices/bus.h"
#include "devices/virtio/mmio.h"
#include "tests/fuzz/fuzz_common.h"

#define BASE      0xd0000000ull
#define WINDOW    0x1000
#define DEVICE_ID 1
#define MAGIC     0x74726976u

struct fake_dev {
	uint64_t offered;
	uint8_t config[64];
	unsigned config_size;
	bool fail_activate;
	bool active;
	unsigned activations, resets;
	struct virtio_mmio *t;
	struct virtio_queue_config at_activate[VIRTIO_MMIO_MAX_QUEUES];
};

static uint64_t fake_features(void *opaque)
{
	struct fake_dev *d = opaque;
	return d->offered;
}

static void fake_config_read(void *opaque, uint32_t off, uint8_t *data, unsigned len)
{
	struct fake_dev *d = opaque;
	FUZZ_CHECK(len >= 1 && len <= 8, "config read of %u bytes", len);
	FUZZ_CHECK(off < WINDOW - VIRTIO_MMIO_CONFIG, "config read at 0x%x, past the window", off);
	if (off < d->config_size && len <= d->config_size - off)
		memcpy(data, d->config + off, len);
}

static void fake_config_write(void *opaque, uint32_t off, const uint8_t *data, unsigned len)
{
	struct fake_dev *d = opaque;
	FUZZ_CHECK(len >= 1 && len <= 8, "config write of %u bytes", len);
	FUZZ_CHECK(off < WINDOW - VIRTIO_MMIO_CONFIG, "config write at 0x%x, past the window", off);
	if (off < d->config_size && len <= d->config_size - off)
		memcpy(d->config + off, data, len);
}

static int fake_activate(void *opaque, uint64_t features, struct vmm_err *err)
{
	struct fake_dev *d = opaque;
	FUZZ_CHECK(!d->active, "activated twice without a reset");
	FUZZ_CHECK((features & ~d->offered) == 0, "activated with features 0x%llx not offered (0x%llx)",
		   (unsigned long long)features, (unsigned long long)d->offered);
	FUZZ_CHECK(features & (1ull << VIRTIO_F_VERSION_1), "activated without VERSION_1");
	d->activations++;
	if (d->fail_activate)
		return vmm_err_set(err, EINVAL, "fake device refuses to start");
	d->active = true;
	memcpy(d->at_activate, d->t->queue, sizeof(d->at_activate));
	return 0;
}

static void fake_reset(void *opaque)
{
	struct fake_dev *d = opaque;
	d->active = false;
	d->resets++;
}

static const struct virtio_device_ops fake_ops = {
	.device_id = DEVICE_ID,
	.features = fake_features,
	.config_read = fake_config_read,
	.config_write = fake_config_write,
	.activate = fake_activate,
	.reset = fake_reset,
};

/* The registers of spec 4.2.2, so the fuzzer hits them without guessing. */
static const uint16_t regs[] = {
	VIRTIO_MMIO_MAGIC_VALUE, VIRTIO_MMIO_VERSION, VIRTIO_MMIO_DEVICE_ID, VIRTIO_MMIO_VENDOR_ID,
	VIRTIO_MMIO_DEVICE_FEATURES, VIRTIO_MMIO_DEVICE_FEATURES_SEL, VIRTIO_MMIO_DRIVER_FEATURES,
	VIRTIO_MMIO_DRIVER_FEATURES_SEL, VIRTIO_MMIO_QUEUE_SEL, VIRTIO_MMIO_QUEUE_NUM_MAX,
	VIRTIO_MMIO_QUEUE_NUM, VIRTIO_MMIO_QUEUE_READY, VIRTIO_MMIO_QUEUE_NOTIFY,
	VIRTIO_MMIO_INTERRUPT_STATUS, VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_STATUS,
	VIRTIO_MMIO_QUEUE_DESC_LOW, VIRTIO_MMIO_QUEUE_DESC_HIGH, VIRTIO_MMIO_QUEUE_AVAIL_LOW,
	VIRTIO_MMIO_QUEUE_AVAIL_HIGH, VIRTIO_MMIO_QUEUE_USED_LOW, VIRTIO_MMIO_QUEUE_USED_HIGH,
	VIRTIO_MMIO_SHM_SEL, VIRTIO_MMIO_SHM_LEN_LOW, VIRTIO_MMIO_SHM_LEN_HIGH,
	VIRTIO_MMIO_SHM_BASE_LOW, VIRTIO_MMIO_SHM_BASE_HIGH, VIRTIO_MMIO_CONFIG_GENERATION,
	VIRTIO_MMIO_CONFIG, VIRTIO_MMIO_CONFIG + 4,
};
#define NR_REGS (sizeof(regs) / sizeof(regs[0]))

static void check_state(const struct fake_dev *d, const struct virtio_mmio *t)
{
	uint32_t status = __atomic_load_n(&t->status, __ATOMIC_SEQ_CST);
	FUZZ_CHECK(!(status & VIRTIO_CONFIG_S_DRIVER_OK) || (status & VIRTIO_CONFIG_S_FEATURES_OK),
		   "status 0x%x: DRIVER_OK without FEATURES_OK", status);
	FUZZ_CHECK((status & ~0xffu) == 0, "status 0x%x has bits above the byte", status);
	FUZZ_CHECK(!d->active || (status & VIRTIO_CONFIG_S_DRIVER_OK),
		   "device running with status 0x%x", status);
	uint32_t isr = __atomic_load_n(&t->interrupt_status, __ATOMIC_SEQ_CST);
	FUZZ_CHECK((isr & ~(uint32_t)(VIRTIO_MMIO_INT_VRING | VIRTIO_MMIO_INT_CONFIG)) == 0,
		   "interrupt status 0x%x", isr);
	for (unsigned q = 0; q < t->nr_queues; q++)
		FUZZ_CHECK(t->queue[q].size <= t->queue[q].max_size, "queue %u size %u > max %u", q,
			   t->queue[q].size, t->queue[q].max_size);
	if (d->active)
		FUZZ_CHECK(memcmp(d->at_activate, t->queue, sizeof(d->at_activate)) == 0,
			   "queue configuration changed while the device runs");
}

static void check_read(const struct fake_dev *d, uint64_t off, const uint8_t *data, unsigned len)
{
	if (off >= VIRTIO_MMIO_CONFIG || off >= WINDOW)
		return;
	uint32_t v = (uint32_t)bus_load_le(data, 4);
	if (len != 4 || off % 4) {
		for (unsigned i = 0; i < len; i++)
			FUZZ_CHECK(data[i] == 0, "%u-byte register read at 0x%llx is not 0", len,
				   (unsigned long long)off);
		return;
	}
	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE: FUZZ_CHECK(v == MAGIC, "magic 0x%x", v); break;
	case VIRTIO_MMIO_VERSION: FUZZ_CHECK(v == 2, "version %u", v); break;
	case VIRTIO_MMIO_DEVICE_ID: FUZZ_CHECK(v == DEVICE_ID, "device id %u", v); break;
	case VIRTIO_MMIO_VENDOR_ID: FUZZ_CHECK(v == VIRTIO_MMIO_VENDOR, "vendor 0x%x", v); break;
	default: break;
	}
	(void)d;
}

static void worker_event(struct virtio_mmio *t, struct fz *in)
{
	uint8_t e = fz_u8(in);
	switch (e % 3) {
	case 0:
		virtio_mmio_signal_used(t);
		break;
	case 1: {
		char why[200];
		size_t got;
		const uint8_t *p = fz_take(in, e % sizeof(why), &got);
		memcpy(why, p, got);
		why[got < sizeof(why) ? got : sizeof(why) - 1] = '\0';
		virtio_mmio_set_needs_reset(t, why);
		break;
	}
	case 2:
		virtio_mmio_config_changed(t);
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_fd_baseline();
	struct fz in = fz_init(data, size);
	static struct fake_dev d;
	memset(&d, 0, sizeof(d));
	unsigned nr_queues = fz_u8(&in) % (VIRTIO_MMIO_MAX_QUEUES + 2);   /* 0 and 65 are refused */
	uint8_t shape = fz_u8(&in);
	uint16_t max_size = (shape & 0x80) ? fz_u16(&in) : (uint16_t)(1u << (shape % 11));
	uint64_t features = fz_u64(&in);
	d.offered = (shape & 0x40) ? features : features | (1ull << VIRTIO_F_VERSION_1);
	d.config_size = fz_u8(&in) % (sizeof(d.config) + 1);
	d.fail_activate = shape & 0x20;
	unsigned fail_call = (shape & 0x10) ? fz_u8(&in) : 0;

	static struct fuzz_machine fm;
	fuzz_machine_init(&fm, fail_call);
	struct virtio_mmio *t = NULL;
	int rc = virtio_mmio_create(&t, &fm.m, BASE, 5, nr_queues, max_size, &fake_ops, &d, NULL);
	d.t = t;
	if (rc == 0) {
		struct bus bus;
		bus_init(&bus, "mmio");
		struct bus_device dev = virtio_mmio_bus_device(t);
		FUZZ_CHECK(bus_add(&bus, BASE, WINDOW, &dev, NULL) == 0, "bus_add");
		while (!fz_empty(&in)) {
			uint8_t op = fz_u8(&in);
			unsigned kind = op >> 6;
			if (kind == 3) {
				worker_event(t, &in);
				check_state(&d, t);
				continue;
			}
			static const unsigned widths[8] = { 4, 1, 2, 8, 3, 5, 6, 7 };
			unsigned len = kind == 2 ? 4 : widths[op & 7];
			/* A known register, or any offset in and just around the window. */
			uint64_t off = (kind == 2 || (op & 8)) ? regs[fz_u8(&in) % NR_REGS]
							       : (uint64_t)(fz_u16(&in) % (WINDOW + 0x20));
			uint64_t addr = BASE + off - ((op & 0x10) ? 0x10 : 0);
			uint8_t buf[8] = { 0 };
			bool write = kind != 0;
			if (write) {
				size_t got;
				memcpy(buf, fz_take(&in, len, &got), got);
			}
			bool hit = bus_access(&bus, addr, buf, len, write);
			FUZZ_CHECK(hit == (addr >= BASE && addr < BASE + WINDOW), "bus dispatch at 0x%llx",
				   (unsigned long long)addr);
			if (!write && hit)
				check_read(&d, addr - BASE, buf, len);
			check_state(&d, t);
		}
	}
	virtio_mmio_destroy(t);
	FUZZ_CHECK(!d.active, "device still running after destroy");
	FUZZ_CHECK(fm.nr_ioeventfds == 0 && fm.nr_irqfds == 0,
		   "%u ioeventfds and %u irqfds still registered after destroy", fm.nr_ioeventfds,
		   fm.nr_irqfds);
	fuzz_fd_check("virtio-mmio create/destroy");
	return 0;
}
