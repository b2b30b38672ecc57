/* test=net-hostile kind=K: a guest that breaks the virtio rules on purpose.
 *
 * The project rule under test: a misbehaving guest must never crash or hang
 * the VMM or make it touch memory outside the guest; the device reports
 * DEVICE_NEEDS_RESET (Status 0x40, with a configuration-change interrupt)
 * and keeps running. So each kind
 *
 *   1. brings the device up (queue pair 0 only, no control queue),
 *   2. misbehaves on queue pair 0 (or on the transport registers),
 *   3. waits up to 2 s for NEEDS_RESET in Status and prints
 *      `testguest: hostile <kind> -> needs-reset|no-needs-reset ...`,
 *   4. resets the device (Status = 0), checks that Status reads 0,
 *      brings it up again with the ordinary driver (vnet_init) and
 *   5. answers ARP, ping and UDP echo (like net-echo) until the stop
 *      datagram or `secs=`, proving the device recovered.
 *
 * Success ends with the i8042 reset (exit 0); the exit codes below say
 * which step failed (docs/testguest.md). */
#include "hostile.h"

#include <stddef.h>

#include <linux/virtio_ids.h>

#include "cmdline.h"
#include "delay.h"
#include "io.h"
#include "lib.h"
#include "minivmm_abi.h"
#include "netproto.h"
#include "serial.h"
#include "sys.h"
#include "vnet.h"

#define F(bit) (1ull << (bit))

#define NEEDS_RESET_WAIT_US 2000000
#define TX_WAIT_US          1000000
#define DRAIN_US            200000
#define OUTSIDE_RAM         0x7fff00000000ull   /* far beyond any --mem */
#define STOP_LEN            (sizeof(MINIVMM_NET_STOP_MAGIC) - 1)

/* Features of the first bring-up: what the driver takes, without the
 * control queue (so queue pair 0 is all the device looks at). */
#define HOSTILE_FEATURES (F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC) | \
			  F(VIRTIO_NET_F_MTU) | F(VIRTIO_NET_F_STATUS) | \
			  F(VIRTIO_RING_F_EVENT_IDX) | F(VIRTIO_NET_F_MRG_RXBUF))

enum kind {
	K_DESC_OUTSIDE_RAM,
	K_DESC_OVERFLOW,
	K_DESC_LOOP,
	K_CHAIN_TOO_LONG,
	K_AVAIL_JUMP,
	K_HEAD_OUT_OF_RANGE,
	K_BAD_INDIRECT,
	K_RING_OUTSIDE_RAM,
	K_MMIO_GARBAGE,
	K_DRIVER_OK_TWICE,
};

static const char *const kind_names[] = {
	[K_DESC_OUTSIDE_RAM] = "desc-outside-ram",
	[K_DESC_OVERFLOW] = "desc-overflow",
	[K_DESC_LOOP] = "desc-loop",
	[K_CHAIN_TOO_LONG] = "chain-too-long",
	[K_AVAIL_JUMP] = "avail-jump",
	[K_HEAD_OUT_OF_RANGE] = "head-out-of-range",
	[K_BAD_INDIRECT] = "bad-indirect",
	[K_RING_OUTSIDE_RAM] = "ring-outside-ram",
	[K_MMIO_GARBAGE] = "mmio-garbage",
	[K_DRIVER_OK_TWICE] = "driver-ok-twice",
};

static struct vnet net;
static struct np_addr self;

#define U(x) ((unsigned long long)(x))

/* ---- first bring-up --------------------------------------------------------- */

/* vnet_init without the control queue, with `extra` features (e.g.
 * INDIRECT_DESC) and, for ring-outside-ram, queue 0's descriptor table
 * moved outside RAM just before DRIVER_OK. TX descriptor i <-> buffer i
 * (length 0 until used); no RX buffers are posted. */
static void hostile_bringup(struct vnet *n, uint64_t extra, int ring_outside_ram)
{
	struct vmmio_dev *d = &n->dev;
	struct vnet_pair *p = &n->pair[0];
	int ev;

	memset(n, 0, sizeof(*n));
	if (vmmio_find(VIRTIO_ID_NET, d, 0) != VMMIO_FOUND) {
		tg_printf("testguest: no virtio-net (version 2) device\n");
		tg_exit(TG_EXIT_NET_NO_DEVICE);
	}
	vmmio_begin(d);
	n->offered = vmmio_device_features(d);
	n->features = n->offered & (HOSTILE_FEATURES | extra);
	if (!(n->features & F(VIRTIO_F_VERSION_1)) || vmmio_set_features(d, n->features)) {
		tg_printf("testguest: hostile: features 0x%llx of 0x%llx refused\n",
			  U(n->features), U(n->offered));
		tg_exit(TG_EXIT_NET_SETUP);
	}
	for (unsigned i = 0; i < 6; i++)
		n->mac[i] = vmmio_config8(d, (uint32_t)(offsetof(struct virtio_net_config, mac) + i));
	ev = vnet_has(n, VIRTIO_RING_F_EVENT_IDX);
	p->index = 0;
	p->mrg = vnet_has(n, VIRTIO_NET_F_MRG_RXBUF);
	if (vmmio_queue_setup(d, &p->rx, 0, VNET_QUEUE_SIZE, ev) ||
	    vmmio_queue_setup(d, &p->tx, 1, VNET_QUEUE_SIZE, ev) ||
	    !(p->txbuf = dma_alloc((size_t)p->tx.num * VNET_BUF_SIZE, 4096))) {
		tg_printf("testguest: hostile: queue pair 0 setup failed\n");
		vmmio_fail(d);
		tg_exit(TG_EXIT_NET_SETUP);
	}
	for (uint16_t i = 0; i < p->tx.num; i++)
		virtq_set_desc(&p->tx, i, vnet_tx_buf(p, i), 0, 0, 0);
	n->npairs = 1;
	if (ring_outside_ram) {
		/* Queue registers are writable again once QueueReady is 0. */
		vmmio_write(d, VIRTIO_MMIO_QUEUE_SEL, 0);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_READY, 0);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)OUTSIDE_RAM);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(OUTSIDE_RAM >> 32));
		vmmio_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
	}
	vmmio_driver_ok(d);
	tg_printf("testguest: hostile bring-up features 0x%llx of 0x%llx rx %u tx %u status 0x%x\n",
		  U(n->features), U(n->offered), p->rx.num, p->tx.num,
		  vmmio_read(d, VIRTIO_MMIO_STATUS));
}

/* ---- misbehaving on TX queue 1 ------------------------------------------- */

/* Publish whatever is in the avail ring and kick, whether the device asked
 * for it or not. */
static void tx_kick_raw(struct vnet_pair *p)
{
	virtq_publish(&p->tx);
	mb();
	*p->tx.notify = p->tx.index;
}

static void misbehave_tx(enum kind k, struct vnet_pair *p)
{
	struct virtq *q = &p->tx;
	uint8_t *buf = vnet_tx_buf(p, 0);

	memset(buf, 0, VNET_BUF_SIZE);
	switch (k) {
	case K_DESC_OUTSIDE_RAM:
		virtq_set_desc(q, 0, (void *)(uintptr_t)OUTSIDE_RAM, VNET_HDR_LEN + ETH_ZLEN, 0, 0);
		virtq_push(q, 0);
		break;
	case K_DESC_OVERFLOW:
		/* addr + len wraps around 2^64. */
		virtq_set_desc(q, 0, (void *)(uintptr_t)0xfffffffffffff000ull, 0x2000, 0, 0);
		virtq_push(q, 0);
		break;
	case K_DESC_LOOP:
		/* 0 -> 1 -> 0 -> ...; zero lengths, so only a bound on the walk
		 * itself (not on the segments collected) ends it. */
		virtq_set_desc(q, 0, buf, 0, VRING_DESC_F_NEXT, 1);
		virtq_set_desc(q, 1, buf, 0, VRING_DESC_F_NEXT, 0);
		virtq_push(q, 0);
		break;
	case K_CHAIN_TOO_LONG: {
		/* 100 readable 16-byte segments: header + 1588 bytes of frame. */
		struct vring_desc *t = q->desc;
		uint16_t flags = 0;

		if (q->num < 128) {
			/* Not enough descriptors: an indirect table instead. */
			t = dma_alloc(100 * sizeof(*t), 16);
			if (!t || !vnet_has(&net, VIRTIO_RING_F_INDIRECT_DESC)) {
				tg_printf("testguest: hostile chain-too-long: queue size %u and no INDIRECT_DESC\n",
					  q->num);
				tg_exit(TG_EXIT_HOSTILE_SETUP);
			}
			flags = VRING_DESC_F_INDIRECT;
		}
		for (unsigned i = 0; i < 100; i++) {
			t[i].addr = (uint64_t)(uintptr_t)(buf + 16 * i);
			t[i].len = 16;
			t[i].flags = i < 99 ? VRING_DESC_F_NEXT : 0;
			t[i].next = (uint16_t)(i + 1);
		}
		if (flags)
			virtq_set_desc(q, 0, t, 100 * sizeof(*t), flags, 0);
		virtq_push(q, 0);
		break;
	}
	case K_AVAIL_JUMP:
		/* Nothing new in the ring, but the index runs 5000 ahead. */
		q->avail_idx = (uint16_t)(q->avail_idx + 5000);
		break;
	case K_HEAD_OUT_OF_RANGE:
		q->avail->ring[q->avail_idx & (q->num - 1)] = (uint16_t)(q->num + 7);
		q->avail_idx++;
		break;
	case K_BAD_INDIRECT: {
		/* A valid-looking table of two entries, announced as 24 bytes. */
		struct vring_desc *t = dma_alloc(2 * sizeof(*t), 16);

		if (!t || !vnet_has(&net, VIRTIO_RING_F_INDIRECT_DESC)) {
			tg_printf("testguest: hostile bad-indirect: INDIRECT_DESC not negotiated (offered 0x%llx)\n",
				  U(net.offered));
			tg_exit(TG_EXIT_HOSTILE_SETUP);
		}
		t[0] = (struct vring_desc){ (uint64_t)(uintptr_t)buf, VNET_HDR_LEN, VRING_DESC_F_NEXT, 1 };
		t[1] = (struct vring_desc){ (uint64_t)(uintptr_t)(buf + VNET_HDR_LEN), ETH_ZLEN, 0, 0 };
		virtq_set_desc(q, 0, t, 24, VRING_DESC_F_INDIRECT, 0);
		virtq_push(q, 0);
		break;
	}
	default:
		break;
	}
	tx_kick_raw(p);
}

/* ---- mmio-garbage ------------------------------------------------------------- */

static uint64_t rng;

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
	uint64_t f = net.offered;

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

/* ---- after: reset, bring-up, traffic -------------------------------------- */

static uint8_t *tx_begin(struct vnet_pair *p, uint16_t *id)
{
	uint8_t *buf = vnet_tx_get(p, id);

	if (!buf) {
		uint64_t end = tsc_deadline_us(TX_WAIT_US);

		vnet_tx_flush(p);
		while (!(buf = vnet_tx_get(p, id)) && !tsc_passed(end))
			cpu_pause();
		if (!buf)
			return NULL;
	}
	memset(buf, 0, VNET_HDR_LEN);
	return buf + VNET_HDR_LEN;
}

struct echo_stats {
	uint64_t frames, rx, tx, arp, icmp, drops;
};

/* Like net-echo on one queue: ARP, ping, UDP back; 1 at the stop datagram. */
static int serve_frame(struct vnet_pair *p, const struct vnet_rx *rx, struct echo_stats *st)
{
	struct np_view v;
	uint16_t id;
	uint8_t *out;
	int stop = 0;

	st->frames++;
	switch (np_classify(rx->frame, rx->len, &self, &v)) {
	case NP_ARP_REQUEST:
		if ((out = tx_begin(p, &id))) {
			vnet_tx_put(p, id, np_arp_reply(out, &v, &self));
			st->arp++;
		} else {
			st->drops++;
		}
		break;
	case NP_ICMP_ECHO:
		if (ETH_HLEN + v.ip_len <= ETH_FRAME_MAX && (out = tx_begin(p, &id))) {
			vnet_tx_put(p, id, np_icmp_reply(out, &v));
			st->icmp++;
		} else {
			st->drops++;
		}
		break;
	case NP_UDP:
		stop = v.payload_len >= STOP_LEN &&
		       !memcmp(v.payload, MINIVMM_NET_STOP_MAGIC, STOP_LEN);
		if (!stop)
			st->rx++;
		if ((out = tx_begin(p, &id))) {
			vnet_tx_put(p, id, np_udp_echo(out, &v));
			st->tx += !stop;
		} else {
			st->drops++;
		}
		break;
	default:
		break;
	}
	return stop;
}

static void serve(uint64_t secs, struct echo_stats *st)
{
	struct vnet_pair *p = &net.pair[0];
	uint64_t deadline = tsc_deadline_us(secs * 1000000);
	int stop = 0;

	while (!stop && !tsc_passed(deadline)) {
		struct vnet_rx rx;
		unsigned n = 0;

		while (n < 64 && vnet_rx_next(p, &rx)) {
			stop |= serve_frame(p, &rx, st);
			vnet_rx_recycle(p, rx.id);
			n++;
		}
		if (n) {
			vnet_tx_flush(p);
			vnet_rx_flush(p);
			virtq_update_used_event(&p->rx);
		}
		vnet_tx_reclaim(p);
		cpu_pause();
	}
	/* Let the last replies (the stop acknowledgement) go out. */
	deadline = tsc_deadline_us(DRAIN_US);
	vnet_tx_flush(p);
	while (vnet_tx_inflight(p) && !tsc_passed(deadline)) {
		vnet_tx_reclaim(p);
		cpu_pause();
	}
}

static enum kind parse_kind(void)
{
	const char *k = cmdline_get("kind", "");

	for (unsigned i = 0; i < ARRAY_SIZE(kind_names); i++)
		if (!strcmp(k, kind_names[i]))
			return (enum kind)i;
	tg_printf("testguest: net-hostile needs kind=K; kinds:");
	for (unsigned i = 0; i < ARRAY_SIZE(kind_names); i++)
		tg_printf(" %s", kind_names[i]);
	tg_printf("\n");
	tg_exit(TG_EXIT_BAD_CMDLINE);
}

static uint64_t get_num(const char *key, uint64_t def, uint64_t max)
{
	uint64_t v;

	if (cmdline_get_u64(key, def, &v) < 0 || v > max) {
		tg_printf("testguest: bad %s=%s\n", key, cmdline_get(key, ""));
		tg_exit(TG_EXIT_BAD_CMDLINE);
	}
	return v;
}

void test_net_hostile(void)
{
	enum kind k = parse_kind();
	const char *name = kind_names[k];
	uint64_t secs = get_num("secs", 30, 1000000);
	uint64_t iters = get_num("iters", 4000, 100000000);
	uint64_t extra = 0, end;
	struct echo_stats st;
	uint32_t status = 0, isr = 0;
	int needs_reset, r;

	rng = (get_num("seed", 1, UINT64_MAX) ^ 0x6d696e69766d6d31ull) * 0x9e3779b97f4a7c15ull;
	if (!rng)
		rng = 1;        /* xorshift never leaves 0 */
	keep_status = get_num("keep-status", 0, 1) != 0;
	if (np_parse_ip(cmdline_get("ip", "10.0.0.2"), self.ip)) {
		tg_printf("testguest: bad ip=%s\n", cmdline_get("ip", ""));
		tg_exit(TG_EXIT_BAD_CMDLINE);
	}
	if (k == K_BAD_INDIRECT || k == K_CHAIN_TOO_LONG)
		extra = F(VIRTIO_RING_F_INDIRECT_DESC);

	/* 1-2: bring up, misbehave. */
	hostile_bringup(&net, extra, k == K_RING_OUTSIDE_RAM);
	tg_printf("testguest: hostile %s: misbehaving now\n", name);
	if (k == K_MMIO_GARBAGE)
		mmio_garbage(&net.dev, iters);
	else if (k == K_DRIVER_OK_TWICE)
		driver_ok_twice(&net.dev, &net.pair[0], iters / 8 ? iters / 8 : 1);
	else if (k != K_RING_OUTSIDE_RAM)
		misbehave_tx(k, &net.pair[0]);

	/* 3: the device must say so (for mmio-garbage: whatever it says). */
	end = tsc_deadline_us(NEEDS_RESET_WAIT_US);
	do {
		status = vmmio_read(&net.dev, VIRTIO_MMIO_STATUS);
		if (status & VIRTIO_CONFIG_S_NEEDS_RESET)
			break;
		cpu_pause();
	} while (!tsc_passed(end));
	isr = vmmio_read(&net.dev, VIRTIO_MMIO_INTERRUPT_STATUS);
	needs_reset = !!(status & VIRTIO_CONFIG_S_NEEDS_RESET);
	tg_printf("testguest: hostile %s -> %s status 0x%x isr 0x%x\n", name,
		  needs_reset ? "needs-reset" : "no-needs-reset", status, isr);

	/* 4: reset, then the ordinary driver. */
	vmmio_write(&net.dev, VIRTIO_MMIO_STATUS, 0);
	end = tsc_deadline_us(NEEDS_RESET_WAIT_US);
	while ((status = vmmio_read(&net.dev, VIRTIO_MMIO_STATUS)) && !tsc_passed(end))
		cpu_pause();
	tg_printf("testguest: hostile %s reset -> status 0x%x\n", name, status);
	if (status) {
		tg_printf("testguest: hostile %s: the device did not reset\n", name);
		tg_exit(TG_EXIT_HOSTILE_RESET);
	}
	r = vnet_init(&net, 1, 0, 0);
	if (r) {
		tg_printf("testguest: hostile %s: bring-up after the reset failed (0x%x)\n", name, r);
		tg_exit(TG_EXIT_HOSTILE_RESET);
	}
	memcpy(self.mac, net.mac, ETH_ALEN);
	vnet_rx_post_all(&net.pair[0]);

	/* 5: traffic. */
	tg_printf("testguest: net-hostile ready ip %u.%u.%u.%u port 5001 queues 1\n",
		  self.ip[0], self.ip[1], self.ip[2], self.ip[3]);
	memset(&st, 0, sizeof(st));
	serve(secs, &st);
	status = vmmio_read(&net.dev, VIRTIO_MMIO_STATUS);
	tg_printf("testguest: net-hostile done kind %s frames %llu rx %llu tx %llu arp %llu icmp %llu drops %llu rxerr %llu status 0x%x\n",
		  name, U(st.frames), U(st.rx), U(st.tx), U(st.arp), U(st.icmp), U(st.drops),
		  U(net.pair[0].rx_errors), status);
	if (status & VIRTIO_CONFIG_S_NEEDS_RESET) {
		tg_printf("testguest: hostile %s: NEEDS_RESET while passing traffic after the reset\n",
			  name);
		tg_exit(TG_EXIT_HOSTILE_RESET);
	}
	if (!needs_reset && k != K_MMIO_GARBAGE && k != K_DRIVER_OK_TWICE)
		tg_exit(TG_EXIT_HOSTILE_NO_NEEDS_RESET);
	tg_reset();
}
