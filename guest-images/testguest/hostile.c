/* SPDX-License-Identifier: Apache-2.0 */
/* test=net-hostile kind=K: a guest that breaks the virtio rules on purpose.
 *
 * The project rule under test: a misbehaving guest must never crash, hang
 * or spin the VMM or make it touch memory outside the guest; the device
 * reports DEVICE_NEEDS_RESET (Status 0x40, with a configuration-change
 * interrupt) or drops just that request, and keeps running. So each kind
 *
 *   1. brings the device up its own way (hostile_up),
 *   2. misbehaves and prints `testguest: hostile <kind> armed ...` (the
 *      host sends traffic from then on),
 *   3. waits for NEEDS_RESET (up to 2 s for kinds the device must refuse,
 *      `wait-ms` for the others, which may also just drop the request),
 *      checks what it can see (guard bytes, used lengths, answers) and
 *      prints `testguest: hostile <kind> -> needs-reset|no-needs-reset ...`,
 *   4. resets the device (Status = 0), checks that Status reads 0,
 *      brings it up again with the ordinary driver (vnet_init) and
 *   5. answers ARP, ping and UDP echo (like net-echo) until the stop
 *      datagram or `secs=`, proving the device recovered.
 *
 * This file has the steps, the shared bring-up and helpers and the kinds
 * that misbehave on the TX ring; hostile_mmio.c, hostile_rx.c,
 * hostile_ctrl.c and hostile_reset.c have the others. Success ends with
 * the i8042 reset (exit 0); the exit codes in hostile.h say which step
 * failed (docs/testguest.md). */
#include "hostile.h"

#include <stdarg.h>
#include <stddef.h>

#include <linux/virtio_ids.h>

#include "cmdline.h"
#include "delay.h"
#include "hostile_int.h"
#include "io.h"
#include "lib.h"
#include "minivmm_abi.h"
#include "serial.h"
#include "sys.h"

#define TX_WAIT_US          1000000
#define DRAIN_US            200000
#define ARP_TIMEOUT_US      5000000
#define ARP_RETRY_US        250000
#define STOP_LEN            (sizeof(MINIVMM_NET_STOP_MAGIC) - 1)
#define CTRL_QUEUE_SIZE     256

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
	K_RX_HEADS_IN_FLIGHT,
	K_RX_ONE_BYTE_SEGS,
	K_RX_READ_ONLY,
	K_RX_SMALL,
	K_CTRL_GARBAGE,
	K_RESET_UNDER_LOAD,
};

enum nr_policy {
	NR_REQUIRED,        /* the device must say NEEDS_RESET */
	NR_OPTIONAL,        /* NEEDS_RESET, or the request dropped: both fine */
};

static void run_tx_kind(struct hostile *h);
static void run_ring_outside_ram(struct hostile *h);

static const struct kind_desc {
	const char *name;
	enum nr_policy nr;
	void (*run)(struct hostile *h);
} kinds[] = {
	[K_DESC_OUTSIDE_RAM] = { "desc-outside-ram", NR_REQUIRED, run_tx_kind },
	[K_DESC_OVERFLOW] = { "desc-overflow", NR_REQUIRED, run_tx_kind },
	[K_DESC_LOOP] = { "desc-loop", NR_REQUIRED, run_tx_kind },
	[K_CHAIN_TOO_LONG] = { "chain-too-long", NR_REQUIRED, run_tx_kind },
	[K_AVAIL_JUMP] = { "avail-jump", NR_REQUIRED, run_tx_kind },
	[K_HEAD_OUT_OF_RANGE] = { "head-out-of-range", NR_REQUIRED, run_tx_kind },
	[K_BAD_INDIRECT] = { "bad-indirect", NR_REQUIRED, run_tx_kind },
	[K_RING_OUTSIDE_RAM] = { "ring-outside-ram", NR_REQUIRED, run_ring_outside_ram },
	[K_MMIO_GARBAGE] = { "mmio-garbage", NR_OPTIONAL, hostile_mmio_garbage },
	[K_DRIVER_OK_TWICE] = { "driver-ok-twice", NR_OPTIONAL, hostile_driver_ok_twice },
	[K_RX_HEADS_IN_FLIGHT] = { "rx-heads-in-flight", NR_REQUIRED, hostile_rx_heads_in_flight },
	[K_RX_ONE_BYTE_SEGS] = { "rx-one-byte-segs", NR_OPTIONAL, hostile_rx_one_byte_segs },
	[K_RX_READ_ONLY] = { "rx-read-only", NR_OPTIONAL, hostile_rx_read_only },
	[K_RX_SMALL] = { "rx-small", NR_OPTIONAL, hostile_rx_small },
	[K_CTRL_GARBAGE] = { "ctrl-garbage", NR_OPTIONAL, hostile_ctrl_garbage },
	[K_RESET_UNDER_LOAD] = { "reset-under-load", NR_OPTIONAL, hostile_reset_under_load },
};

static struct hostile H;

/* ---- shared bring-up ---------------------------------------------------- */

static void up_fail(struct hostile *h, const char *what)
{
	tg_printf("testguest: hostile %s: %s\n", h->kind, what);
	vmmio_fail(&h->net.dev);
	tg_exit(TG_EXIT_NET_SETUP);
}

static uint64_t up_features(struct hostile *h, const struct hostile_up_opts *o)
{
	uint64_t f = h->net.offered & (HOSTILE_FEATURES | o->extra |
				       (o->ctrl ? HOSTILE_CTRL_FEATURES : 0));

	if (!(f & F(VIRTIO_NET_F_CTRL_VQ)))
		f &= ~(F(VIRTIO_NET_F_MQ) | F(VIRTIO_NET_F_CTRL_RX));
	return f;
}

/* Queue pair 0 (and the control queue): allocated the first time, the same
 * memory zeroed and programmed again after. */
static void up_queues(struct hostile *h)
{
	struct vnet *n = &h->net;
	struct vmmio_dev *d = &n->dev;
	struct vnet_pair *p = &n->pair[0];
	int ev = vnet_has(n, VIRTIO_RING_F_EVENT_IDX);

	if (!h->allocated) {
		if (vmmio_queue_setup(d, &p->rx, 0, VNET_QUEUE_SIZE, ev) ||
		    vmmio_queue_setup(d, &p->tx, 1, VNET_QUEUE_SIZE, ev) ||
		    !(p->rxbuf = dma_alloc((size_t)p->rx.num * VNET_BUF_SIZE, 4096)) ||
		    !(p->txbuf = dma_alloc((size_t)p->tx.num * VNET_BUF_SIZE, 4096)))
			up_fail(h, "queue pair 0 setup failed");
		h->allocated = 1;
	} else {
		virtq_rewind(&p->rx, ev);
		virtq_rewind(&p->tx, ev);
		if (vmmio_queue_program(d, &p->rx) || vmmio_queue_program(d, &p->tx))
			up_fail(h, "queue pair 0 cannot be set up again");
	}
	p->index = 0;
	p->mrg = vnet_has(n, VIRTIO_NET_F_MRG_RXBUF);
	p->rx_errors = 0;
	for (uint16_t i = 0; i < p->rx.num; i++)
		virtq_set_desc(&p->rx, i, p->rxbuf + (uint32_t)i * VNET_BUF_SIZE, VNET_BUF_SIZE,
			       VRING_DESC_F_WRITE, 0);
	for (uint16_t i = 0; i < p->tx.num; i++) {
		virtq_set_desc(&p->tx, i, vnet_tx_buf(p, i), 0, 0, 0);
		p->tx.free[p->tx.nfree++] = (uint16_t)(p->tx.num - 1 - i);
	}
	n->npairs = 1;
	n->has_ctrl = 0;
	if (!vnet_has(n, VIRTIO_NET_F_CTRL_VQ))
		return;
	uint16_t idx = vnet_has(n, VIRTIO_NET_F_MQ) ? (uint16_t)(2 * n->max_pairs) : 2;
	if (!h->ctrl_allocated) {
		if (vmmio_queue_setup(d, &n->ctrl, idx, CTRL_QUEUE_SIZE, ev))
			up_fail(h, "control queue setup failed");
		h->ctrl_allocated = 1;
	} else {
		virtq_rewind(&n->ctrl, ev);
		if (vmmio_queue_program(d, &n->ctrl))
			up_fail(h, "control queue cannot be set up again");
	}
	n->has_ctrl = 1;
}

void hostile_up(struct hostile *h, const struct hostile_up_opts *o)
{
	struct vnet *n = &h->net;
	struct vmmio_dev *d = &n->dev;

	if (!h->allocated) {
		memset(n, 0, sizeof(*n));
		if (vmmio_find(VIRTIO_ID_NET, d, 0) != VMMIO_FOUND) {
			tg_printf("testguest: no virtio-net (version 2) device\n");
			tg_exit(TG_EXIT_NET_NO_DEVICE);
		}
	}
	vmmio_begin(d);
	n->offered = vmmio_device_features(d);
	n->features = up_features(h, o);
	if (!(n->features & F(VIRTIO_F_VERSION_1)) || vmmio_set_features(d, n->features)) {
		tg_printf("testguest: hostile: features 0x%llx of 0x%llx refused\n",
			  U(n->features), U(n->offered));
		tg_exit(TG_EXIT_NET_SETUP);
	}
	for (unsigned i = 0; i < 6; i++)
		n->mac[i] = vmmio_config8(d, (uint32_t)(offsetof(struct virtio_net_config, mac) + i));
	memcpy(h->self.mac, n->mac, ETH_ALEN);
	n->max_pairs = vnet_has(n, VIRTIO_NET_F_MQ) ?
		vmmio_config16(d, offsetof(struct virtio_net_config, max_virtqueue_pairs)) : 1;
	if (!n->max_pairs || n->max_pairs > 0x8000)
		up_fail(h, "bad max_virtqueue_pairs");
	up_queues(h);
	if (o->ring_outside_ram) {
		/* Queue registers are writable again once QueueReady is 0. */
		vmmio_write(d, VIRTIO_MMIO_QUEUE_SEL, 0);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_READY, 0);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)OUTSIDE_RAM);
		vmmio_write(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(OUTSIDE_RAM >> 32));
		vmmio_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
	}
	vmmio_driver_ok(d);
	if (o->post_rx)
		vnet_rx_post_all(&n->pair[0]);
	if (!o->quiet)
		tg_printf("testguest: hostile bring-up features 0x%llx of 0x%llx rx %u tx %u%s status 0x%x\n",
			  U(n->features), U(n->offered), n->pair[0].rx.num, n->pair[0].tx.num,
			  n->has_ctrl ? " ctrl" : "", vmmio_read(d, VIRTIO_MMIO_STATUS));
}

/* ---- helpers -------------------------------------------------------------- */

uint32_t hostile_wait_needs_reset(struct hostile *h, uint64_t us)
{
	uint64_t end = tsc_deadline_us(us);
	uint32_t status;

	do {
		status = vmmio_read(&h->net.dev, VIRTIO_MMIO_STATUS);
		if (status & VIRTIO_CONFIG_S_NEEDS_RESET)
			break;
		cpu_pause();
	} while (!tsc_passed(end));
	h->status = status;
	h->isr = vmmio_read(&h->net.dev, VIRTIO_MMIO_INTERRUPT_STATUS);
	return status;
}

int hostile_reset(struct hostile *h)
{
	uint64_t end = tsc_deadline_us(NEEDS_RESET_WAIT_US);
	uint32_t status;

	vmmio_write(&h->net.dev, VIRTIO_MMIO_STATUS, 0);
	while ((status = vmmio_read(&h->net.dev, VIRTIO_MMIO_STATUS)) && !tsc_passed(end))
		cpu_pause();
	return status ? -1 : 0;
}

void hostile_armed(struct hostile *h, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tg_printf("testguest: hostile %s armed %s\n", h->kind, buf);
}

void hostile_violation(struct hostile *h, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tg_printf("testguest: hostile %s: CHECK FAILED: %s\n", h->kind, buf);
	h->violations++;
}

void hostile_kick(struct virtq *q)
{
	virtq_publish(q);
	mb();
	*q->notify = q->index;
}

int hostile_ping_send(struct hostile *h, uint16_t seq)
{
	struct vnet_pair *p = &h->net.pair[0];
	uint16_t id;
	uint8_t *buf = vnet_tx_get(p, &id);

	if (!buf)
		return 0;
	memset(buf, 0, VNET_HDR_LEN);
	vnet_tx_put(p, id, np_icmp_request(buf + VNET_HDR_LEN, &h->self, h->peer_mac,
					   h->peer_ip, h->ping_id, seq, 32));
	vnet_tx_flush(p);
	return 1;
}

int hostile_ping_wait(struct hostile *h, uint16_t seq, uint64_t us)
{
	struct vnet_pair *p = &h->net.pair[0];
	uint64_t end = tsc_deadline_us(us);
	int got = 0;

	while (!got && !tsc_passed(end)) {
		struct vnet_rx rx;
		unsigned n = 0;
		uint16_t s;

		while (n < 64 && vnet_rx_next(p, &rx)) {
			if (np_icmp_is_reply(rx.frame, rx.len, &h->self, h->peer_ip, h->ping_id, &s) &&
			    s == seq)
				got = 1;
			vnet_rx_recycle(p, rx.id);
			n++;
		}
		if (n) {
			vnet_rx_flush(p);
			virtq_update_used_event(&p->rx);
		}
		vnet_tx_reclaim(p);
		cpu_pause();
	}
	return got;
}

/* A normal bring-up to learn the peer's MAC, and to know that the host
 * side is configured and can send, before the kind misbehaves. */
static void resolve_peer(struct hostile *h)
{
	struct hostile_up_opts o = { .post_rx = 1, .quiet = 1 };
	struct vnet_pair *p = &h->net.pair[0];
	uint64_t end = tsc_deadline_us(ARP_TIMEOUT_US), next = 0;

	hostile_up(h, &o);
	while (!h->peer_known) {
		struct vnet_rx rx;
		struct np_view v;
		uint16_t id;
		uint8_t *out;

		if (tsc_passed(end)) {
			tg_printf("testguest: no ARP reply from %u.%u.%u.%u\n", h->peer_ip[0],
				  h->peer_ip[1], h->peer_ip[2], h->peer_ip[3]);
			tg_exit(TG_EXIT_NET_ARP);
		}
		if (tsc_passed(next) && (out = vnet_tx_get(p, &id))) {
			memset(out, 0, VNET_HDR_LEN);
			vnet_tx_put(p, id, np_arp_request(out + VNET_HDR_LEN, &h->self, h->peer_ip));
			vnet_tx_flush(p);
			next = tsc_deadline_us(ARP_RETRY_US);
		}
		while (vnet_rx_next(p, &rx)) {
			if (np_classify(rx.frame, rx.len, &h->self, &v) == NP_ARP_REPLY &&
			    !memcmp(v.arp->spa, h->peer_ip, 4)) {
				memcpy(h->peer_mac, v.arp->sha, ETH_ALEN);
				h->peer_known = 1;
			}
			vnet_rx_recycle(p, rx.id);
		}
		vnet_rx_flush(p);
		vnet_tx_reclaim(p);
		cpu_pause();
	}
	tg_printf("testguest: peer %u.%u.%u.%u is %02x:%02x:%02x:%02x:%02x:%02x\n",
		  h->peer_ip[0], h->peer_ip[1], h->peer_ip[2], h->peer_ip[3], h->peer_mac[0],
		  h->peer_mac[1], h->peer_mac[2], h->peer_mac[3], h->peer_mac[4], h->peer_mac[5]);
}

/* ---- misbehaving on TX queue 1 ------------------------------------------- */

static void misbehave_tx(struct hostile *h, enum kind k, struct vnet_pair *p)
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
			if (!t || !vnet_has(&h->net, VIRTIO_RING_F_INDIRECT_DESC)) {
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

		if (!t || !vnet_has(&h->net, VIRTIO_RING_F_INDIRECT_DESC)) {
			tg_printf("testguest: hostile bad-indirect: INDIRECT_DESC not negotiated (offered 0x%llx)\n",
				  U(h->net.offered));
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
	hostile_kick(q);
}

static void run_tx_kind(struct hostile *h)
{
	struct hostile_up_opts o = { 0 };

	if (h->kind_id == K_BAD_INDIRECT || h->kind_id == K_CHAIN_TOO_LONG)
		o.extra = F(VIRTIO_RING_F_INDIRECT_DESC);
	hostile_up(h, &o);
	tg_printf("testguest: hostile %s: misbehaving now\n", h->kind);
	misbehave_tx(h, (enum kind)h->kind_id, &h->net.pair[0]);
	hostile_armed(h, "queue 1");
	hostile_wait_needs_reset(h, NEEDS_RESET_WAIT_US);
}

static void run_ring_outside_ram(struct hostile *h)
{
	struct hostile_up_opts o = { .ring_outside_ram = 1 };

	hostile_up(h, &o);
	tg_printf("testguest: hostile %s: misbehaving now\n", h->kind);
	hostile_armed(h, "queue 0 desc 0x%llx", U(OUTSIDE_RAM));
	hostile_wait_needs_reset(h, NEEDS_RESET_WAIT_US);
}

/* ---- after: reset, bring-up, traffic -------------------------------------- */

static uint8_t *tx_begin(struct vnet_pair *p, uint16_t *id)
{
	return vnet_tx_begin(p, id, TX_WAIT_US);
}

struct echo_stats {
	uint64_t frames, rx, tx, arp, icmp, drops;
	uint64_t partial;           /* NEEDS_CSUM without GUEST_CSUM negotiated */
};

/* A partial checksum the device should not have handed over (GUEST_CSUM
 * is not negotiated: spec 5.1.6.4.1 wants flags 0 and a full checksum):
 * counted, and finished here so the echo still carries a valid one. */
static void finish_partial_csum(const struct vnet_rx *rx, uint8_t *frame, unsigned len,
				struct echo_stats *st)
{
	unsigned start = rx->hdr->csum_start, off = rx->hdr->csum_offset;
	uint16_t c;

	if (!(rx->hdr->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return;
	st->partial++;
	if (start + off + 2 > len)
		return;
	c = np_csum_fold(np_csum_add(0, frame + start, len - start));
	if (!c)
		c = 0xffff;
	memcpy(frame + start + off, &c, 2);
}

/* Like net-echo on one queue: ARP, ping, UDP back; 1 at the stop datagram. */
static int serve_frame(struct vnet_pair *p, const struct vnet_rx *rx, struct echo_stats *st)
{
	struct np_view v;
	uint16_t id;
	uint8_t *out;
	int stop = 0;

	st->frames++;
	switch (np_classify(rx->frame, rx->len, &H.self, &v)) {
	case NP_ARP_REQUEST:
		if ((out = tx_begin(p, &id))) {
			vnet_tx_put(p, id, np_arp_reply(out, &v, &H.self));
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
			unsigned len = np_udp_echo(out, &v);

			finish_partial_csum(rx, out, len, st);
			vnet_tx_put(p, id, len);
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
	struct vnet_pair *p = &H.net.pair[0];
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

/* ---- command line ------------------------------------------------------------ */

static enum kind parse_kind(void)
{
	const char *k = cmdline_get("kind", "");

	for (unsigned i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(k, kinds[i].name))
			return (enum kind)i;
	tg_printf("testguest: net-hostile needs kind=K; kinds:");
	for (unsigned i = 0; i < ARRAY_SIZE(kinds); i++)
		tg_printf(" %s", kinds[i].name);
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

static void get_ip(const char *key, const char *def, uint8_t ip[4])
{
	if (np_parse_ip(cmdline_get(key, def), ip)) {
		tg_printf("testguest: bad %s=%s\n", key, cmdline_get(key, ""));
		tg_exit(TG_EXIT_BAD_CMDLINE);
	}
}

static void parse_params(struct hostile *h)
{
	h->iters = get_num("iters", 4000, 100000000);
	h->seed = get_num("seed", 1, UINT64_MAX);
	h->keep_status = get_num("keep-status", 0, 1) != 0;
	h->wait_us = get_num("wait-ms", 1000, 60000) * 1000;
	h->cycles = get_num("cycles", 20, 100000);
	h->cycle_us = get_num("cycle-ms", 30, 10000) * 1000;
	get_ip("ip", "10.0.0.2", h->self.ip);
	get_ip("peer", "10.0.0.1", h->peer_ip);
	h->ping_id = 0x4d56;
}

/* ---- the test ------------------------------------------------------------------ */

void test_net_hostile(void)
{
	enum kind k = parse_kind();
	const struct kind_desc *kd = &kinds[k];
	struct hostile *h = &H;
	uint64_t secs = get_num("secs", 30, 1000000);
	struct echo_stats st;
	uint32_t status;
	int needs_reset, r;

	h->kind = kd->name;
	h->kind_id = k;
	parse_params(h);

	/* 1-3: bring up, misbehave, watch. The peer answering ARP first means
	 * the host side is set up (and ready to send) before we misbehave. */
	resolve_peer(h);
	kd->run(h);
	needs_reset = !!(h->status & VIRTIO_CONFIG_S_NEEDS_RESET);
	tg_printf("testguest: hostile %s -> %s status 0x%x isr 0x%x\n", h->kind,
		  needs_reset ? "needs-reset" : "no-needs-reset", h->status, h->isr);

	/* 4: reset, then the ordinary driver. */
	r = hostile_reset(h);
	status = vmmio_read(&h->net.dev, VIRTIO_MMIO_STATUS);
	tg_printf("testguest: hostile %s reset -> status 0x%x\n", h->kind, status);
	if (r) {
		tg_printf("testguest: hostile %s: the device did not reset\n", h->kind);
		tg_exit(TG_EXIT_HOSTILE_RESET);
	}
	r = vnet_init(&h->net, 1, 0, 0);
	if (r) {
		tg_printf("testguest: hostile %s: bring-up after the reset failed (0x%x)\n", h->kind, r);
		tg_exit(TG_EXIT_HOSTILE_RESET);
	}
	memcpy(h->self.mac, h->net.mac, ETH_ALEN);
	vnet_rx_post_all(&h->net.pair[0]);

	/* 5: traffic. */
	tg_printf("testguest: net-hostile ready ip %u.%u.%u.%u port 5001 queues 1\n",
		  h->self.ip[0], h->self.ip[1], h->self.ip[2], h->self.ip[3]);
	memset(&st, 0, sizeof(st));
	serve(secs, &st);
	status = vmmio_read(&h->net.dev, VIRTIO_MMIO_STATUS);
	tg_printf("testguest: net-hostile done kind %s frames %llu rx %llu tx %llu arp %llu icmp %llu drops %llu rxerr %llu status 0x%x partial-csum %llu\n",
		  h->kind, U(st.frames), U(st.rx), U(st.tx), U(st.arp), U(st.icmp), U(st.drops),
		  U(h->net.pair[0].rx_errors), status, U(st.partial));
	if (status & VIRTIO_CONFIG_S_NEEDS_RESET) {
		tg_printf("testguest: hostile %s: NEEDS_RESET while passing traffic after the reset\n",
			  h->kind);
		tg_exit(TG_EXIT_HOSTILE_RESET);
	}
	if (h->violations) {
		tg_printf("testguest: hostile %s: %u check(s) failed\n", h->kind, h->violations);
		tg_exit(TG_EXIT_HOSTILE_CHECK);
	}
	if (!needs_reset && kd->nr == NR_REQUIRED)
		tg_exit(TG_EXIT_HOSTILE_NO_NEEDS_RESET);
	tg_reset();
}
