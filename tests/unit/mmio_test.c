/* SPDX-License-Identifier: Apache-2.0 */
/* virtio-mmio transport (version 2): the tests play the driver, poking the
 * registers through the bus device, with a fake device behind the transport
 * that counts what the transport asks of it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <stdio.h>
#include <string.h>

#include "devices/virtio/mmio.h"

#define BASE      0xd0000000ull
#define GSI       5
#define NR_QUEUES 3
#define QMAX      256
#define DEVICE_ID 42

#define F_VERSION_1 (1ull << VIRTIO_F_VERSION_1)   /* bit 32 */
#define F_LOW_A     (1ull << 0)
#define F_LOW_B     (1ull << 5)
#define F_NOT_OFFERED (1ull << 7)
#define OFFERED     (F_VERSION_1 | F_LOW_A | F_LOW_B | (1ull << 33))

struct fake_dev {
	uint64_t offered;
	unsigned features_calls;
	unsigned activate_calls;
	uint64_t activated_with;
	int activate_rc;
	unsigned reset_calls;
	uint8_t config[64];
	uint32_t last_read_off, last_write_off;
	unsigned last_read_len, last_write_len;
	unsigned config_reads, config_writes;
};

static uint64_t fake_features(void *opaque)
{
	struct fake_dev *d = opaque;
	d->features_calls++;
	return d->offered;
}

static void fake_config_read(void *opaque, uint32_t off, uint8_t *data, unsigned len)
{
	struct fake_dev *d = opaque;
	d->config_reads++;
	d->last_read_off = off;
	d->last_read_len = len;
	for (unsigned i = 0; i < len && off + i < sizeof(d->config); i++)
		data[i] = d->config[off + i];
}

static void fake_config_write(void *opaque, uint32_t off, const uint8_t *data, unsigned len)
{
	struct fake_dev *d = opaque;
	d->config_writes++;
	d->last_write_off = off;
	d->last_write_len = len;
	for (unsigned i = 0; i < len && off + i < sizeof(d->config); i++)
		d->config[off + i] = data[i];
}

static int fake_activate(void *opaque, uint64_t features, struct vmm_err *err)
{
	struct fake_dev *d = opaque;
	d->activate_calls++;
	d->activated_with = features;
	if (d->activate_rc)
		return vmm_err_set(err, -d->activate_rc, "fake device refuses to start");
	return 0;
}

static void fake_reset(void *opaque)
{
	struct fake_dev *d = opaque;
	d->reset_calls++;
}

static const struct virtio_device_ops fake_ops = {
	.device_id = DEVICE_ID,
	.features = fake_features,
	.config_read = fake_config_read,
	.config_write = fake_config_write,
	.activate = fake_activate,
	.reset = fake_reset,
};

/* ---- a fake machine: records what KVM would have been asked ---------- */

struct fake_machine {
	struct machine m;
	int ioeventfds;          /* registered now */
	int irqfds;
	uint64_t notify_addr;    /* the last ioeventfd address */
	unsigned log_lines;
	char last_log[512];
};

static void fm_stop(void *o, int status, const char *reason) { (void)o; (void)status; (void)reason; }

static void fm_log(void *o, const char *line)
{
	struct fake_machine *f = o;
	f->log_lines++;
	snprintf(f->last_log, sizeof(f->last_log), "%s", line);
}

static int fm_ioeventfd(void *o, uint64_t addr, unsigned len, uint64_t datamatch, int fd, bool assign)
{
	struct fake_machine *f = o;
	(void)len; (void)datamatch; (void)fd;
	f->ioeventfds += assign ? 1 : -1;
	f->notify_addr = addr;
	return 0;
}

static int fm_irqfd(void *o, int fd, unsigned gsi, bool assign)
{
	struct fake_machine *f = o;
	(void)fd; (void)gsi;
	f->irqfds += assign ? 1 : -1;
	return 0;
}

static void fake_machine_init(struct fake_machine *f)
{
	memset(f, 0, sizeof(*f));
	f->m = (struct machine){ .opaque = f, .request_stop = fm_stop, .log = fm_log,
				 .ioeventfd = fm_ioeventfd, .irqfd = fm_irqfd };
}

struct env {
	struct fake_machine machine;
	struct fake_dev dev;
	struct virtio_mmio *t;
	struct bus_device bus;
};

static void env_init(struct env *e)
{
	memset(e, 0, sizeof(*e));
	struct vmm_err err = { 0 };
	fake_machine_init(&e->machine);
	e->dev.offered = OFFERED;
	cr_assert_eq(virtio_mmio_create(&e->t, &e->machine.m, BASE, GSI, NR_QUEUES, QMAX, &fake_ops,
					&e->dev, &err), 0, "virtio_mmio_create: %s", err.msg);
	e->bus = virtio_mmio_bus_device(e->t);
}

static void env_done(struct env *e)
{
	virtio_mmio_destroy(e->t);
	cr_assert_eq(e->machine.ioeventfds, 0, "every queue notification is unregistered");
	cr_assert_eq(e->machine.irqfds, 0, "the interrupt eventfd is unregistered");
}

static uint32_t rd(struct env *e, uint64_t off)
{
	uint8_t b[4] = { 0xaa, 0xaa, 0xaa, 0xaa };
	e->bus.read(e->bus.opaque, off, b, 4);
	return (uint32_t)bus_load_le(b, 4);
}

static void wr(struct env *e, uint64_t off, uint32_t v)
{
	uint8_t b[4];
	bus_store_le(b, 4, v);
	e->bus.write(e->bus.opaque, off, b, 4);
}

static uint64_t read_device_features(struct env *e)
{
	wr(e, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	uint64_t lo = rd(e, VIRTIO_MMIO_DEVICE_FEATURES);
	wr(e, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	uint64_t hi = rd(e, VIRTIO_MMIO_DEVICE_FEATURES);
	return lo | hi << 32;
}

static void write_driver_features(struct env *e, uint64_t f)
{
	wr(e, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(e, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)f);
	wr(e, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(e, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(f >> 32));
}

#define S_ACK  VIRTIO_CONFIG_S_ACKNOWLEDGE
#define S_DRV  VIRTIO_CONFIG_S_DRIVER
#define S_FOK  VIRTIO_CONFIG_S_FEATURES_OK
#define S_DOK  VIRTIO_CONFIG_S_DRIVER_OK
#define S_NEEDS_RESET VIRTIO_CONFIG_S_NEEDS_RESET

/* ACKNOWLEDGE, DRIVER, features, FEATURES_OK; returns the status read back. */
static uint32_t negotiate(struct env *e, uint64_t f)
{
	wr(e, VIRTIO_MMIO_STATUS, S_ACK);
	wr(e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
	write_driver_features(e, f);
	wr(e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK);
	return rd(e, VIRTIO_MMIO_STATUS);
}

static void driver_ok(struct env *e)
{
	wr(e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
}

/* ---- identification ------------------------------------------------------ */

Test(mmio, identifies_as_virtio_mmio_v2_with_device_and_vendor_id)
{
	struct env e;
	env_init(&e);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_MAGIC_VALUE), 0x74726976, "\"virt\"");
	cr_assert_eq(rd(&e, VIRTIO_MMIO_VERSION), 2);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_DEVICE_ID), DEVICE_ID);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_VENDOR_ID), VIRTIO_MMIO_VENDOR);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_STATUS), 0, "a new device starts reset");
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	env_done(&e);
}

Test(mmio, create_rejects_zero_or_too_many_queues)
{
	struct fake_machine fm;
	fake_machine_init(&fm);
	struct fake_dev d = { .offered = OFFERED };
	struct vmm_err err = { 0 };
	struct virtio_mmio *t = NULL;
	cr_assert_lt(virtio_mmio_create(&t, &fm.m, BASE, GSI, 0, QMAX, &fake_ops, &d, &err), 0);
	cr_assert_null(t);
	cr_assert_lt(virtio_mmio_create(&t, &fm.m, BASE, GSI, VIRTIO_MMIO_MAX_QUEUES + 1, QMAX,
					&fake_ops, &d, &err), 0);
	cr_assert_null(t);
	cr_assert(strstr(err.msg, "queues"), "message: %s", err.msg);
}

/* ---- features ------------------------------------------------------------ */

Test(mmio, device_features_read_as_two_32_bit_halves)
{
	struct env e;
	env_init(&e);
	cr_assert_eq(read_device_features(&e), OFFERED);
	wr(&e, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_DEVICE_FEATURES), (uint32_t)OFFERED);
	wr(&e, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_DEVICE_FEATURES), (uint32_t)(OFFERED >> 32));
	env_done(&e);
}

Test(mmio, device_features_beyond_bit_63_read_as_zero)
{
	struct env e;
	env_init(&e);
	e.dev.offered = ~0ull;
	wr(&e, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 2);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_DEVICE_FEATURES), 0);
	wr(&e, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0xffffffff);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_DEVICE_FEATURES), 0);
	env_done(&e);
}

Test(mmio, features_ok_refused_for_a_feature_not_offered)
{
	struct env e;
	env_init(&e);
	uint32_t st = negotiate(&e, F_VERSION_1 | F_LOW_A | F_NOT_OFFERED);
	cr_assert_eq(st & S_FOK, 0, "status %#x", st);
	cr_assert_eq(st, S_ACK | S_DRV, "the other bits stay");
	env_done(&e);
}

Test(mmio, features_ok_refused_without_version_1)
{
	struct env e;
	env_init(&e);
	uint32_t st = negotiate(&e, F_LOW_A | F_LOW_B);
	cr_assert_eq(st & S_FOK, 0, "status %#x", st);
	env_done(&e);
}

Test(mmio, features_ok_sticks_for_an_offered_subset_with_version_1)
{
	struct env e;
	env_init(&e);
	uint32_t st = negotiate(&e, F_VERSION_1 | F_LOW_B);
	cr_assert_eq(st, S_ACK | S_DRV | S_FOK, "status %#x", st);
	cr_assert_eq(e.t->driver_features, F_VERSION_1 | F_LOW_B);
	env_done(&e);
}

Test(mmio, features_ok_may_be_retried_after_a_refusal)
{
	struct env e;
	env_init(&e);
	cr_assert_eq(negotiate(&e, F_NOT_OFFERED | F_VERSION_1) & S_FOK, 0);
	cr_assert_eq(negotiate(&e, F_VERSION_1) & S_FOK, S_FOK);
	env_done(&e);
}

Test(mmio, driver_feature_writes_ignored_after_features_ok)
{
	struct env e;
	env_init(&e);
	cr_assert_eq(negotiate(&e, F_VERSION_1 | F_LOW_A) & S_FOK, S_FOK);
	write_driver_features(&e, F_VERSION_1 | F_LOW_A | F_LOW_B | (1ull << 33));
	cr_assert_eq(e.t->driver_features, F_VERSION_1 | F_LOW_A);
	driver_ok(&e);
	cr_assert_eq(e.dev.activated_with, F_VERSION_1 | F_LOW_A);
	env_done(&e);
}

Test(mmio, driver_features_select_beyond_1_is_ignored)
{
	struct env e;
	env_init(&e);
	write_driver_features(&e, F_VERSION_1 | F_LOW_A);
	wr(&e, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 2);
	wr(&e, VIRTIO_MMIO_DRIVER_FEATURES, 0xffffffff);
	cr_assert_eq(e.t->driver_features, F_VERSION_1 | F_LOW_A);
	env_done(&e);
}

/* ---- status -------------------------------------------------------------- */

Test(mmio, driver_ok_without_features_ok_is_ignored)
{
	struct env e;
	env_init(&e);
	wr(&e, VIRTIO_MMIO_STATUS, S_ACK);
	wr(&e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
	write_driver_features(&e, F_VERSION_1);
	wr(&e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_DOK);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_STATUS), S_ACK | S_DRV);
	cr_assert_eq(e.dev.activate_calls, 0);
	env_done(&e);
}

Test(mmio, driver_ok_after_refused_features_ok_is_ignored)
{
	struct env e;
	env_init(&e);
	negotiate(&e, F_NOT_OFFERED | F_VERSION_1);
	wr(&e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_STATUS) & (S_FOK | S_DOK), 0);
	cr_assert_eq(e.dev.activate_calls, 0);
	env_done(&e);
}

Test(mmio, driver_ok_activates_once_with_the_acked_features)
{
	struct env e;
	env_init(&e);
	cr_assert_eq(negotiate(&e, F_VERSION_1 | F_LOW_A | (1ull << 33)) & S_FOK, S_FOK);
	driver_ok(&e);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_STATUS), S_ACK | S_DRV | S_FOK | S_DOK);
	cr_assert_eq(e.dev.activate_calls, 1);
	cr_assert_eq(e.dev.activated_with, F_VERSION_1 | F_LOW_A | (1ull << 33));
	driver_ok(&e);   /* written again: no second activation */
	cr_assert_eq(e.dev.activate_calls, 1);
	cr_assert_eq(e.dev.reset_calls, 0);
	env_done(&e);
}

Test(mmio, activate_failure_sets_needs_reset_and_a_config_interrupt)
{
	struct env e;
	env_init(&e);
	e.dev.activate_rc = -EIO;
	negotiate(&e, F_VERSION_1);
	driver_ok(&e);
	cr_assert_eq(e.dev.activate_calls, 1);
	uint32_t st = rd(&e, VIRTIO_MMIO_STATUS);
	cr_assert_eq(st & S_NEEDS_RESET, 0x40, "status %#x", st);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG,
		     VIRTIO_MMIO_INT_CONFIG);
	cr_assert(strstr(e.t->last_error, "refuses to start"), "last_error: %s", e.t->last_error);
	/* A later status write from the driver keeps NEEDS_RESET. */
	driver_ok(&e);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_STATUS) & S_NEEDS_RESET, S_NEEDS_RESET);
	env_done(&e);
}

Test(mmio, set_needs_reset_records_the_first_reason_only)
{
	struct env e;
	env_init(&e);
	virtio_mmio_set_needs_reset(e.t, "first");
	virtio_mmio_set_needs_reset(e.t, "second");
	cr_assert_str_eq(e.t->last_error, "first");
	cr_assert_eq(rd(&e, VIRTIO_MMIO_STATUS) & S_NEEDS_RESET, S_NEEDS_RESET);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
	env_done(&e);
}

Test(mmio, failed_status_resets_the_device)
{
	struct env e;
	env_init(&e);
	negotiate(&e, F_VERSION_1);
	driver_ok(&e);
	wr(&e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | S_FOK | S_DOK | VIRTIO_CONFIG_S_FAILED);
	cr_assert_eq(e.dev.reset_calls, 1);
	env_done(&e);
}

/* A driver that gives up leaves the user with a missing NIC: the VMM says
 * so once, with the machine's hint (the VM's: ACPI on, a kernel that cannot
 * read the tables), and not again after every reset. */
Test(mmio, failed_status_is_said_once_with_the_hint)
{
	struct env e;
	env_init(&e);
	e.t->failed_hint = "try --acpi=off";
	for (int i = 0; i < 3; i++) {
		wr(&e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV);
		wr(&e, VIRTIO_MMIO_STATUS, S_ACK | S_DRV | VIRTIO_CONFIG_S_FAILED);
		wr(&e, VIRTIO_MMIO_STATUS, 0);
	}
	cr_assert_eq(e.machine.log_lines, 1, "%u lines", e.machine.log_lines);
	cr_assert(strstr(e.machine.last_log, "FAILED"), "%s", e.machine.last_log);
	cr_assert(strstr(e.machine.last_log, "try --acpi=off"), "%s", e.machine.last_log);
	env_done(&e);
}

Test(mmio, status_zero_resets_device_status_queues_and_interrupts)
{
	struct env e;
	env_init(&e);
	negotiate(&e, F_VERSION_1);
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 1);
	wr(&e, VIRTIO_MMIO_QUEUE_NUM, 64);
	wr(&e, VIRTIO_MMIO_QUEUE_DESC_LOW, 0x1000);
	wr(&e, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0x1);
	wr(&e, VIRTIO_MMIO_QUEUE_AVAIL_LOW, 0x2000);
	wr(&e, VIRTIO_MMIO_QUEUE_USED_LOW, 0x3000);
	wr(&e, VIRTIO_MMIO_QUEUE_READY, 1);
	driver_ok(&e);
	virtio_mmio_signal_used(e.t);
	virtio_mmio_set_needs_reset(e.t, "broken");
	cr_assert_neq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), 0);

	wr(&e, VIRTIO_MMIO_STATUS, 0);
	cr_assert_eq(e.dev.reset_calls, 1);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_STATUS), 0);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	cr_assert_eq(e.t->driver_features, 0);
	cr_assert_str_eq(e.t->last_error, "");
	for (unsigned q = 0; q < NR_QUEUES; q++) {
		const struct virtio_queue_config *c = virtio_mmio_queue(e.t, q);
		cr_assert_eq(c->max_size, QMAX);
		cr_assert_eq(c->size, QMAX, "queue %u", q);
		cr_assert_not(c->ready);
		cr_assert_eq(c->desc, 0);
		cr_assert_eq(c->driver, 0);
		cr_assert_eq(c->device, 0);
	}
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 1);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_READY), 0);
	/* And the device can be brought up again. */
	cr_assert_eq(negotiate(&e, F_VERSION_1 | F_LOW_A) & S_FOK, S_FOK);
	driver_ok(&e);
	cr_assert_eq(e.dev.activate_calls, 2);
	cr_assert_eq(e.dev.activated_with, F_VERSION_1 | F_LOW_A);
	env_done(&e);
}

/* ---- queues -------------------------------------------------------------- */

Test(mmio, queue_num_max_for_valid_and_invalid_queue_sel)
{
	struct env e;
	env_init(&e);
	for (unsigned q = 0; q < NR_QUEUES; q++) {
		wr(&e, VIRTIO_MMIO_QUEUE_SEL, q);
		cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_NUM_MAX), QMAX, "queue %u", q);
		cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_READY), 0);
	}
	uint32_t bad[] = { NR_QUEUES, VIRTIO_MMIO_MAX_QUEUES, 0xffffffff };
	for (unsigned i = 0; i < 3; i++) {
		wr(&e, VIRTIO_MMIO_QUEUE_SEL, bad[i]);
		cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_NUM_MAX), 0, "QueueSel %#x", bad[i]);
		cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_READY), 0);
		/* Writes to a queue that does not exist go nowhere. */
		wr(&e, VIRTIO_MMIO_QUEUE_NUM, 16);
		wr(&e, VIRTIO_MMIO_QUEUE_DESC_LOW, 0x1234);
		wr(&e, VIRTIO_MMIO_QUEUE_READY, 1);
		cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_READY), 0);
	}
	for (unsigned q = 0; q < NR_QUEUES; q++) {
		cr_assert_eq(virtio_mmio_queue(e.t, q)->size, QMAX);
		cr_assert_eq(virtio_mmio_queue(e.t, q)->desc, 0);
	}
	env_done(&e);
}

Test(mmio, queue_num_above_max_is_ignored)
{
	struct env e;
	env_init(&e);
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(&e, VIRTIO_MMIO_QUEUE_NUM, 128);
	cr_assert_eq(virtio_mmio_queue(e.t, 0)->size, 128);
	wr(&e, VIRTIO_MMIO_QUEUE_NUM, QMAX + 1);
	cr_assert_eq(virtio_mmio_queue(e.t, 0)->size, 128);
	wr(&e, VIRTIO_MMIO_QUEUE_NUM, 0x10000 + 64);   /* would truncate to 64 */
	cr_assert_eq(virtio_mmio_queue(e.t, 0)->size, 128);
	wr(&e, VIRTIO_MMIO_QUEUE_NUM, QMAX);
	cr_assert_eq(virtio_mmio_queue(e.t, 0)->size, QMAX);
	env_done(&e);
}

Test(mmio, queue_addresses_assembled_from_low_and_high_halves)
{
	struct env e;
	env_init(&e);
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 2);
	wr(&e, VIRTIO_MMIO_QUEUE_DESC_LOW, 0x89abc000);
	wr(&e, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0x01234567);
	wr(&e, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0x2);   /* high first */
	wr(&e, VIRTIO_MMIO_QUEUE_AVAIL_LOW, 0x80000000);
	wr(&e, VIRTIO_MMIO_QUEUE_USED_LOW, 0xfffff000);
	wr(&e, VIRTIO_MMIO_QUEUE_USED_HIGH, 0xffffffff);
	const struct virtio_queue_config *c = virtio_mmio_queue(e.t, 2);
	cr_assert_eq(c->desc, 0x0123456789abc000ull);
	cr_assert_eq(c->driver, 0x280000000ull);
	cr_assert_eq(c->device, 0xfffffffffffff000ull);
	/* Rewriting one half keeps the other. */
	wr(&e, VIRTIO_MMIO_QUEUE_DESC_LOW, 0x1000);
	cr_assert_eq(c->desc, 0x0123456700001000ull);
	wr(&e, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	cr_assert_eq(c->desc, 0x1000ull);
	/* The other queues are untouched. */
	cr_assert_eq(virtio_mmio_queue(e.t, 0)->desc, 0);
	cr_assert_eq(virtio_mmio_queue(e.t, 1)->device, 0);
	env_done(&e);
}

static void write_queue_regs(struct env *e, uint32_t num, uint32_t base)
{
	wr(e, VIRTIO_MMIO_QUEUE_NUM, num);
	wr(e, VIRTIO_MMIO_QUEUE_DESC_LOW, base);
	wr(e, VIRTIO_MMIO_QUEUE_DESC_HIGH, 7);
	wr(e, VIRTIO_MMIO_QUEUE_AVAIL_LOW, base + 0x1000);
	wr(e, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 7);
	wr(e, VIRTIO_MMIO_QUEUE_USED_LOW, base + 0x2000);
	wr(e, VIRTIO_MMIO_QUEUE_USED_HIGH, 7);
}

Test(mmio, queue_registers_frozen_once_queue_ready)
{
	struct env e;
	env_init(&e);
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 0);
	write_queue_regs(&e, 64, 0x10000);
	wr(&e, VIRTIO_MMIO_QUEUE_READY, 1);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_READY), 1);
	write_queue_regs(&e, 32, 0x50000);
	const struct virtio_queue_config *c = virtio_mmio_queue(e.t, 0);
	cr_assert_eq(c->size, 64);
	cr_assert_eq(c->desc, 0x700010000ull);
	cr_assert_eq(c->driver, 0x700011000ull);
	cr_assert_eq(c->device, 0x700012000ull);
	/* Another queue, not ready, can still be configured. */
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 1);
	write_queue_regs(&e, 32, 0x50000);
	cr_assert_eq(virtio_mmio_queue(e.t, 1)->size, 32);
	cr_assert_eq(virtio_mmio_queue(e.t, 1)->desc, 0x700050000ull);
	/* Clearing ready before DRIVER_OK makes queue 0 writable again. */
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 0);
	wr(&e, VIRTIO_MMIO_QUEUE_READY, 0);
	wr(&e, VIRTIO_MMIO_QUEUE_NUM, 16);
	cr_assert_eq(c->size, 16);
	env_done(&e);
}

Test(mmio, queue_registers_frozen_after_driver_ok)
{
	struct env e;
	env_init(&e);
	negotiate(&e, F_VERSION_1);
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 1);
	write_queue_regs(&e, 64, 0x10000);
	wr(&e, VIRTIO_MMIO_QUEUE_READY, 1);
	driver_ok(&e);
	/* Queue 2 was never made ready, queue 1 was: neither changes now. */
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 2);
	write_queue_regs(&e, 32, 0x50000);
	wr(&e, VIRTIO_MMIO_QUEUE_READY, 1);
	cr_assert_eq(virtio_mmio_queue(e.t, 2)->size, QMAX);
	cr_assert_eq(virtio_mmio_queue(e.t, 2)->desc, 0);
	cr_assert_not(virtio_mmio_queue(e.t, 2)->ready);
	wr(&e, VIRTIO_MMIO_QUEUE_SEL, 1);
	wr(&e, VIRTIO_MMIO_QUEUE_READY, 0);
	write_queue_regs(&e, 32, 0x50000);
	cr_assert(virtio_mmio_queue(e.t, 1)->ready);
	cr_assert_eq(virtio_mmio_queue(e.t, 1)->size, 64);
	cr_assert_eq(virtio_mmio_queue(e.t, 1)->desc, 0x700010000ull);
	env_done(&e);
}

/* ---- interrupts and config ---------------------------------------------- */

Test(mmio, signal_used_sets_int_vring)
{
	struct env e;
	env_init(&e);
	virtio_mmio_signal_used(e.t);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
	virtio_mmio_signal_used(e.t);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_VRING);
	env_done(&e);
}

Test(mmio, interrupt_ack_clears_only_the_acked_bits)
{
	struct env e;
	env_init(&e);
	virtio_mmio_signal_used(e.t);
	virtio_mmio_config_changed(e.t);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS),
		     VIRTIO_MMIO_INT_VRING | VIRTIO_MMIO_INT_CONFIG);
	wr(&e, VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_VRING);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
	wr(&e, VIRTIO_MMIO_INTERRUPT_ACK, 0);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
	wr(&e, VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_INT_CONFIG);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), 0);
	env_done(&e);
}

Test(mmio, config_generation_moves_on_config_change)
{
	struct env e;
	env_init(&e);
	uint32_t g0 = rd(&e, VIRTIO_MMIO_CONFIG_GENERATION);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_CONFIG_GENERATION), g0, "stable without a change");
	virtio_mmio_config_changed(e.t);
	uint32_t g1 = rd(&e, VIRTIO_MMIO_CONFIG_GENERATION);
	cr_assert_neq(g1, g0);
	virtio_mmio_config_changed(e.t);
	cr_assert_neq(rd(&e, VIRTIO_MMIO_CONFIG_GENERATION), g1);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_INTERRUPT_STATUS), VIRTIO_MMIO_INT_CONFIG);
	env_done(&e);
}

Test(mmio, non_32_bit_register_accesses_read_zero_and_are_ignored)
{
	struct env e;
	env_init(&e);
	uint8_t b[8];
	unsigned lens[] = { 1, 2, 8 };
	for (unsigned i = 0; i < 3; i++) {
		memset(b, 0xaa, sizeof(b));
		e.bus.read(e.bus.opaque, VIRTIO_MMIO_MAGIC_VALUE, b, lens[i]);
		for (unsigned j = 0; j < lens[i]; j++)
			cr_assert_eq(b[j], 0, "len %u byte %u", lens[i], j);
	}
	/* Unaligned 4-byte read. */
	memset(b, 0xaa, sizeof(b));
	e.bus.read(e.bus.opaque, VIRTIO_MMIO_MAGIC_VALUE + 1, b, 4);
	cr_assert_eq(bus_load_le(b, 4), 0);

	/* Narrow or unaligned writes change nothing. */
	memset(b, 0, sizeof(b));
	b[0] = S_ACK;
	e.bus.write(e.bus.opaque, VIRTIO_MMIO_STATUS, b, 1);
	e.bus.write(e.bus.opaque, VIRTIO_MMIO_STATUS, b, 2);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_STATUS), 0);
	b[0] = 16;
	e.bus.write(e.bus.opaque, VIRTIO_MMIO_QUEUE_NUM, b, 2);
	e.bus.write(e.bus.opaque, VIRTIO_MMIO_QUEUE_NUM, b, 8);
	e.bus.write(e.bus.opaque, VIRTIO_MMIO_QUEUE_NUM + 2, b, 4);
	cr_assert_eq(virtio_mmio_queue(e.t, 0)->size, QMAX);
	env_done(&e);
}

Test(mmio, unknown_registers_read_zero)
{
	struct env e;
	env_init(&e);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_NOTIFY), 0);
	cr_assert_eq(rd(&e, 0x0f8), 0);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_QUEUE_DESC_LOW), 0, "queue addresses are write-only");
	cr_assert_eq(rd(&e, VIRTIO_MMIO_SHM_LEN_LOW), 0xffffffff, "no shared memory");
	cr_assert_eq(rd(&e, VIRTIO_MMIO_SHM_LEN_HIGH), 0xffffffff);
	env_done(&e);
}

Test(mmio, config_space_accesses_go_to_the_device_at_offset_0x100)
{
	struct env e;
	env_init(&e);
	for (unsigned i = 0; i < sizeof(e.dev.config); i++)
		e.dev.config[i] = (uint8_t)(0x10 + i);
	uint8_t b[8];
	memset(b, 0xee, sizeof(b));
	e.bus.read(e.bus.opaque, VIRTIO_MMIO_CONFIG + 6, b, 2);
	cr_assert_eq(e.dev.last_read_off, 6);
	cr_assert_eq(e.dev.last_read_len, 2);
	cr_assert_eq(b[0], 0x16);
	cr_assert_eq(b[1], 0x17);
	e.bus.read(e.bus.opaque, VIRTIO_MMIO_CONFIG + 1, b, 1);   /* any width, any alignment */
	cr_assert_eq(e.dev.last_read_off, 1);
	cr_assert_eq(b[0], 0x11);
	cr_assert_eq(rd(&e, VIRTIO_MMIO_CONFIG + 4), 0x17161514);
	/* A device that fills nothing reads as zero, not stale bytes. */
	memset(b, 0xee, sizeof(b));
	e.bus.read(e.bus.opaque, VIRTIO_MMIO_CONFIG + 62, b, 4);
	cr_assert_eq(b[0], 0x4e);
	cr_assert_eq(b[1], 0x4f);
	cr_assert_eq(b[2], 0);
	cr_assert_eq(b[3], 0);

	uint8_t w[2] = { 0xab, 0xcd };
	e.bus.write(e.bus.opaque, VIRTIO_MMIO_CONFIG + 3, w, 2);
	cr_assert_eq(e.dev.config_writes, 1);
	cr_assert_eq(e.dev.last_write_off, 3);
	cr_assert_eq(e.dev.last_write_len, 2);
	cr_assert_eq(e.dev.config[3], 0xab);
	cr_assert_eq(e.dev.config[4], 0xcd);
	/* Register space never reaches the device's config. */
	unsigned before = e.dev.config_reads;
	rd(&e, VIRTIO_MMIO_CONFIG_GENERATION);
	cr_assert_eq(e.dev.config_reads, before);
	env_done(&e);
}

Test(mmio, cmdline_word_names_window_and_irq)
{
	struct env e;
	env_init(&e);
	char buf[128];
	virtio_mmio_cmdline_word(e.t, buf, sizeof(buf));
	cr_assert_str_eq(buf, "virtio_mmio.device=4K@0xd0000000:5");
	char small[8];
	virtio_mmio_cmdline_word(e.t, small, sizeof(small));
	cr_assert_str_eq(small, "virtio_", "truncated, still terminated");
	env_done(&e);
}

Test(mmio, destroy_resets_the_device)
{
	struct env e;
	env_init(&e);
	negotiate(&e, F_VERSION_1);
	driver_ok(&e);
	struct fake_dev *d = &e.dev;
	virtio_mmio_destroy(e.t);
	cr_assert_eq(d->reset_calls, 1);
}
