/* SPDX-License-Identifier: Apache-2.0 */
/* net-hostile kinds on the transport registers: mmio-garbage (random
 * accesses over registers and config space, with driver-like bring-ups on
 * garbage rings) and driver-ok-twice (DRIVER_OK taken back without a reset
 * and set again). Nothing in particular is expected of the device but to
 * stay up and come back after a reset. */
#include "delay.h"
#include "hostile.h"
#include "hostile_int.h"
#include "io.h"
#include "lib.h"
#include "serial.h"
#include "sys.h"

/* ---- mmio-garbage ------------------------------------------------------------- */

static uint64_t rng;
static uint64_t offered;     /* the device's features */

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

#define SCRATCH_SIZE (128u << 10)
static uint8_t *scratch;

/* Rings the garbage may point the device at: page 0 (where every ring
 * address is after a reset) and the scratch area. Filled with 0xff (or
 * random bytes), any descriptor address there is far outside RAM and any
 * avail index jumps, so the device can only fail, never write into the
 * guest's own memory. */
static void poison_ring_areas(int random)
{
	uintptr_t zero = 0;

	__asm__("" : "+r"(zero));       /* page 0 on purpose: hide it from gcc */
	memset((void *)zero, 0xff, 4096);
	if (!random) {
		memset(scratch, 0xff, SCRATCH_SIZE);
		return;
	}
	/* Random bytes: a descriptor address lands in RAM with odds of
	 * about 2^-36, so still nothing the device may write to. */
	for (unsigned i = 0; i < SCRATCH_SIZE; i += 8) {
		uint64_t v = rnd();

		__builtin_memcpy(scratch + i, &v, 8);
	}
}

static void mmio_access(uintptr_t a, unsigned width, int write, uint32_t v)
{
	switch (width) {
	case 1:
		if (write)
			*(volatile uint8_t *)a = (uint8_t)v;
		else
			(void)*(volatile uint8_t *)a;
		break;
	case 2:
		if (write)
			*(volatile uint16_t *)a = (uint16_t)v;
		else
			(void)*(volatile uint16_t *)a;
		break;
	default:
		if (write)
			*(volatile uint32_t *)a = v;
		else
			(void)*(volatile uint32_t *)a;
		break;
	}
}

static uint32_t drv_sel;        /* last DriverFeaturesSel written */
static int keep_status;         /* keep-status=1 */

/* Half `sel` of the device's features, sometimes without the control queue
 * (so activation does not depend on a third queue). */
static uint32_t offered_half(uint32_t v, uint32_t sel)
{
	uint64_t f = offered;

	if (v & 2)
		f &= ~(F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_MQ));
	return sel == 1 ? (uint32_t)(f >> 32) : (uint32_t)f;
}

/* A value worth writing to register `off` (4-byte aligned): mostly random,
 * biased towards the interesting edges. Ring addresses stay in the poisoned
 * areas or outside RAM (see poison_ring_areas). */
static uint32_t garbage_value(uint32_t off)
{
	uint64_t r = rnd();
	unsigned pick = (unsigned)(r >> 56) & 7;
	uint32_t v = (uint32_t)r;

	switch (off) {
	case VIRTIO_MMIO_QUEUE_SEL:
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		return pick < 4 ? v % 5 : v;           /* 0-4 (3, 4: no such queue) */
	case VIRTIO_MMIO_QUEUE_NUM:
		switch (pick) {
		case 0: return 0;
		case 1: return 0xffffffffu;
		case 2: return 0x10000;
		case 3: return 1u << (v % 12);
		default: return v % 1024;
		}
	case VIRTIO_MMIO_DRIVER_FEATURES:
		switch (pick) {
		case 0: return 0xffffffffu;
		case 1: case 2: case 3:
			/* What the device offers, so FEATURES_OK can stick and
			 * DRIVER_OK can activate the device on garbage rings. */
			return offered_half(v, drv_sel);
		default: return v;
		}
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL:
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL:
		return pick < 6 ? v % 3 : v;
	case VIRTIO_MMIO_STATUS:
		switch (pick) {
		case 0: return 0;
		case 1: return v;
		default: return v & 0xff;
		}
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_USED_LOW:
		if (pick < 5)       /* in the scratch area, sometimes misaligned */
			return (uint32_t)(uintptr_t)scratch + (v % (SCRATCH_SIZE - 8192));
		return v | 0xf0000000u;     /* the MMIO hole / beyond RAM */
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		return pick < 4 ? 0 : (v | 1);
	default:
		return pick < 2 ? 0 : pick < 4 ? 0xffffffffu : v;
	}
}

static void garbage_one(const struct vmmio_dev *d, uint32_t off, unsigned width, int write,
			uint32_t v)
{
	if (write && width == 4 && off == VIRTIO_MMIO_DRIVER_FEATURES_SEL)
		drv_sel = v;
	/* keep-status: never take a status bit back except by a reset (to
	 * look past the driver-ok-twice bug). */
	if (keep_status && write && width == 4 && off == VIRTIO_MMIO_STATUS && v)
		v |= vmmio_read(d, VIRTIO_MMIO_STATUS);
	mmio_access(d->base + off, width, write, v);
}

/* The registers a driver writes, to aim most 32-bit writes at. */
static const uint32_t live_regs[] = {
	VIRTIO_MMIO_DEVICE_FEATURES_SEL, VIRTIO_MMIO_DRIVER_FEATURES,
	VIRTIO_MMIO_DRIVER_FEATURES_SEL, VIRTIO_MMIO_QUEUE_SEL, VIRTIO_MMIO_QUEUE_NUM,
	VIRTIO_MMIO_QUEUE_READY, VIRTIO_MMIO_QUEUE_NOTIFY, VIRTIO_MMIO_INTERRUPT_ACK,
	VIRTIO_MMIO_STATUS, VIRTIO_MMIO_QUEUE_DESC_LOW, VIRTIO_MMIO_QUEUE_DESC_HIGH,
	VIRTIO_MMIO_QUEUE_AVAIL_LOW, VIRTIO_MMIO_QUEUE_AVAIL_HIGH,
	VIRTIO_MMIO_QUEUE_USED_LOW, VIRTIO_MMIO_QUEUE_USED_HIGH,
};

/* A driver-like bring-up on garbage rings (scratch or outside RAM, sizes
 * sometimes wrong), so DRIVER_OK really activates the device now and then
 * and its queues meet the garbage; then a few kicks. */
static unsigned plausible_bringup(const struct vmmio_dev *d)
{
	unsigned w = 0;
	int sane = (rnd() & 3) != 0;    /* rings in scratch, aligned: activates */

	garbage_one(d, VIRTIO_MMIO_STATUS, 4, 1, 0);
	garbage_one(d, VIRTIO_MMIO_STATUS, 4, 1, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	for (uint32_t sel = 0; sel < 2; sel++) {
		garbage_one(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 4, 1, sel);
		garbage_one(d, VIRTIO_MMIO_DRIVER_FEATURES, 4, 1,
			    (rnd() & 7) ? offered_half(2, sel) : (uint32_t)rnd());
	}
	garbage_one(d, VIRTIO_MMIO_STATUS, 4, 1, VIRTIO_CONFIG_S_ACKNOWLEDGE |
		    VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK);
	w += 7;
	for (uint32_t q = 0; q < 3; q++) {
		static const uint32_t addr_regs[] = {
			VIRTIO_MMIO_QUEUE_DESC_LOW, VIRTIO_MMIO_QUEUE_DESC_HIGH,
			VIRTIO_MMIO_QUEUE_AVAIL_LOW, VIRTIO_MMIO_QUEUE_AVAIL_HIGH,
			VIRTIO_MMIO_QUEUE_USED_LOW, VIRTIO_MMIO_QUEUE_USED_HIGH,
		};

		garbage_one(d, VIRTIO_MMIO_QUEUE_SEL, 4, 1, q);
		garbage_one(d, VIRTIO_MMIO_QUEUE_NUM, 4, 1,
			    sane ? 1u << (rnd() % 9) : garbage_value(VIRTIO_MMIO_QUEUE_NUM));
		for (unsigned i = 0; i < ARRAY_SIZE(addr_regs); i++) {
			uint32_t v = garbage_value(addr_regs[i]);

			if (sane)
				v = (i & 1) ? 0 : (uint32_t)(uintptr_t)scratch +
					((uint32_t)rnd() % (SCRATCH_SIZE - 8192) & ~15u);
			garbage_one(d, addr_regs[i], 4, 1, v);
		}
		garbage_one(d, VIRTIO_MMIO_QUEUE_READY, 4, 1, 1);
		w += 9;
	}
	garbage_one(d, VIRTIO_MMIO_STATUS, 4, 1, VIRTIO_CONFIG_S_ACKNOWLEDGE |
		    VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
	for (uint32_t q = 0; q < 3; q++)
		garbage_one(d, VIRTIO_MMIO_QUEUE_NOTIFY, 4, 1, q);
	return w + 4;
}

static void mmio_garbage(const struct vmmio_dev *d, uint64_t iters)
{
	static const uint32_t sels[] = { 3, 4, 0xffff, 0x10000, 0x7fffffff, 0xffffffffu };
	uint64_t writes = 0, reads = 0, bringups = 0;

	scratch = dma_alloc(SCRATCH_SIZE, 4096);
	if (!scratch) {
		tg_printf("testguest: hostile mmio-garbage: no memory for the scratch area\n");
		tg_exit(TG_EXIT_HOSTILE_SETUP);
	}
	poison_ring_areas(0);

	/* The edges first, on the live device. */
	for (unsigned i = 0; i < ARRAY_SIZE(sels); i++) {
		vmmio_write(d, VIRTIO_MMIO_QUEUE_SEL, sels[i]);
		(void)vmmio_read(d, VIRTIO_MMIO_QUEUE_NUM_MAX);
		(void)vmmio_read(d, VIRTIO_MMIO_QUEUE_READY);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_NUM, 0xffffffffu);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_DESC_LOW, 0xfffff000u);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0xffffffffu);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_NOTIFY, sels[i]);
		vmmio_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, sels[i]);
		(void)vmmio_read(d, VIRTIO_MMIO_DEVICE_FEATURES);
		vmmio_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, sels[i]);
		vmmio_write(d, VIRTIO_MMIO_DRIVER_FEATURES, 0xffffffffu);
		writes += 9;
		reads += 3;
	}
	for (uint32_t q = 0; q < 3; q++) {
		vmmio_write(d, VIRTIO_MMIO_QUEUE_SEL, q);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_NUM, 0);       /* live queue: ignored */
		vmmio_write(d, VIRTIO_MMIO_QUEUE_READY, 0);
		writes += 3;
	}
	for (uint32_t v = 0; v < 8; v++) {
		vmmio_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, v & 1);
		vmmio_write(d, VIRTIO_MMIO_DRIVER_FEATURES, 0xffffffffu);
		vmmio_write(d, VIRTIO_MMIO_STATUS, (uint32_t)(rnd() & 0xff));
		writes += 3;
	}

	for (uint64_t i = 0; i < iters; i++) {
		uint64_t r = rnd();
		unsigned width = 1u << (r % 3);
		int write = ((r >> 2) & 7) < 6;
		uint32_t off;

		if (!(i & 63))
			poison_ring_areas((i >> 6) & 1);
		if (((r >> 24) & 63) == 0) {
			writes += plausible_bringup(d);
			bringups++;
			continue;
		}
		if ((r >> 5) & 1) {
			/* A register, usually aligned and 32-bit (what counts),
			 * usually one a driver writes. */
			off = (uint32_t)((r >> 8) & 0xfc);
			if (((r >> 30) & 3) != 0)
				off = live_regs[(r >> 32) % ARRAY_SIZE(live_regs)];
			if (((r >> 16) & 3) == 0)
				off |= (uint32_t)((r >> 18) & 3);       /* misaligned */
			else
				width = ((r >> 20) & 3) ? 4 : width;
		} else {
			off = VIRTIO_MMIO_CONFIG + (uint32_t)((r >> 8) & 0xff);
		}
		if (off + width > 0x200)
			off = 0x200 - width;
		if (write)
			garbage_one(d, off, width, 1,
				    (width == 4 && !(off & 3)) ? garbage_value(off) : (uint32_t)rnd());
		else
			garbage_one(d, off, width, 0, 0);
		if (write)
			writes++;
		else
			reads++;
	}
	tg_printf("testguest: hostile mmio-garbage writes %llu reads %llu bring-ups %llu status 0x%x\n",
		  U(writes), U(reads), U(bringups), vmmio_read(d, VIRTIO_MMIO_STATUS));
}

/* driver-ok-twice: take DRIVER_OK back without a reset (only a reset may
 * clear status bits), set it again, repeat, kicking both queues each time:
 * a second activation must not pull the pair from under its running worker. */
static void driver_ok_twice(const struct vmmio_dev *d, struct vnet_pair *p, uint64_t rounds)
{
	const uint32_t up = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			    VIRTIO_CONFIG_S_FEATURES_OK;

	for (uint64_t i = 0; i < rounds; i++) {
		vmmio_write(d, VIRTIO_MMIO_STATUS, up);
		vmmio_write(d, VIRTIO_MMIO_STATUS, up | VIRTIO_CONFIG_S_DRIVER_OK);
		*p->rx.notify = p->rx.index;
		*p->tx.notify = p->tx.index;
	}
	tg_printf("testguest: hostile driver-ok-twice rounds %llu status 0x%x\n", U(rounds),
		  vmmio_read(d, VIRTIO_MMIO_STATUS));
}


void hostile_mmio_garbage(struct hostile *h)
{
	struct hostile_up_opts o = { 0 };

	rng = (h->seed ^ 0x6d696e69766d6d31ull) * 0x9e3779b97f4a7c15ull;
	if (!rng)
		rng = 1;        /* xorshift never leaves 0 */
	keep_status = h->keep_status;
	hostile_up(h, &o);
	offered = h->net.offered;
	tg_printf("testguest: hostile %s: misbehaving now\n", h->kind);
	hostile_armed(h, "iters %llu seed %llu keep-status %d", U(h->iters), U(h->seed), keep_status);
	mmio_garbage(&h->net.dev, h->iters);
	hostile_wait_needs_reset(h, h->wait_us);
}

void hostile_driver_ok_twice(struct hostile *h)
{
	struct hostile_up_opts o = { 0 };
	uint64_t rounds = h->iters / 8 ? h->iters / 8 : 1;

	hostile_up(h, &o);
	tg_printf("testguest: hostile %s: misbehaving now\n", h->kind);
	hostile_armed(h, "rounds %llu", U(rounds));
	driver_ok_twice(&h->net.dev, &h->net.pair[0], rounds);
	hostile_wait_needs_reset(h, h->wait_us);
}
