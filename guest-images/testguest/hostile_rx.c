/* SPDX-License-Identifier: Apache-2.0 */
/* net-hostile kinds on the RX ring (queue 0). The host sends traffic once
 * the `armed` line is out, so the device meets the bad buffers while it
 * has frames to deliver:
 *
 *   rx-heads-in-flight  more chains outstanding than the queue holds: every
 *                       head posted, taken by the device, and then the
 *                       index run one past what the ring can hold;
 *   rx-one-byte-segs    chains of 64 one-byte descriptors (no frame fits);
 *   rx-read-only        buffers without VRING_DESC_F_WRITE;
 *   rx-small            writable buffers of 4 bytes (less than the header).
 *
 * Only the first must end in NEEDS_RESET; for the others the device may
 * also return the buffers unused or drop the frames. Each checks what it
 * can see afterwards: no used length beyond the buffer, no byte written
 * outside the buffers (guard bytes around and between them), nothing
 * written into a read-only buffer. */
#include "delay.h"
#include "hostile.h"
#include "hostile_int.h"
#include "io.h"
#include "lib.h"
#include "serial.h"
#include "sys.h"

#define GUARD             0xa5      /* bytes the device must never write */
#define SEGS              64        /* rx-one-byte-segs: descriptors per chain */
#define SMALL_LEN         4         /* rx-small: bytes per buffer */
#define SMALL_SLOT        16        /* rx-small: buffer + guard bytes */
#define TAKE_WAIT_US      3000000   /* rx-heads-in-flight: for the device to take every head */
#define PING_EVERY_US     1000
#define PING_AFTER_US     200000    /* the device may take every head by itself: give it time */
#define STABLE_US         100000    /* used index unchanged this long: replies are in */
#define STABLE_MAX_US     1000000

static uint16_t used_idx(const struct virtq *q)
{
	return __atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE);
}

/* Entries the device returned (the guest consumes none here, so the used
 * ring holds at most num of them). */
static uint16_t used_count(const struct virtq *q)
{
	uint16_t n = used_idx(q);

	return n > q->num ? q->num : n;
}

static void post_all_heads(struct virtq *q, uint16_t step)
{
	for (uint32_t head = 0; head < q->num; head += step)
		virtq_push(q, (uint16_t)head);
	hostile_kick(q);
}

/* ---- rx-heads-in-flight ---------------------------------------------------- */

/* Make the avail index `used + num + 1`: by the driver's own count one
 * chain more outstanding than the queue holds, whatever the device has
 * returned so far. The new entries re-post the returned heads and then
 * one more (a head the device still holds, or a second copy). */
static void overcommit(struct virtq *q)
{
	uint16_t used = used_idx(q), target = (uint16_t)(used + q->num + 1);

	while (q->avail_idx != target) {
		uint16_t i = (uint16_t)(q->avail_idx - q->num), head = 0;

		if ((uint16_t)(used - i) <= q->num && i != used)
			head = (uint16_t)q->used->ring[i & (q->num - 1)].id;
		q->avail->ring[q->avail_idx & (q->num - 1)] = head < q->num ? head : 0;
		q->avail_idx++;
	}
	hostile_kick(q);
}

static void wait_used_stable(struct hostile *h, struct virtq *q)
{
	uint64_t end = tsc_deadline_us(STABLE_MAX_US);
	uint64_t since = tsc_deadline_us(STABLE_US);
	uint16_t last = used_idx(q);

	while (!tsc_passed(since) && !tsc_passed(end)) {
		uint16_t u = used_idx(q);

		if (u != last) {
			last = u;
			since = tsc_deadline_us(STABLE_US);
		}
		vnet_tx_reclaim(&h->net.pair[0]);
		cpu_pause();
	}
}

void hostile_rx_heads_in_flight(struct hostile *h)
{
	/* GSO makes the device gather many chains per read (a 64 KiB frame
	 * may come), so it holds chains it has not used; TSO needs GUEST_CSUM. */
	struct hostile_up_opts o = { .extra = F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_CSUM) };
	struct vnet_pair *p = &h->net.pair[0];
	struct virtq *q = &p->rx;
	uint64_t end, next_ping;
	unsigned pings = 0, rearms = 0;
	uint16_t avail_event, u;
	int taken;

	hostile_up(h, &o);
	if (!q->event_idx) {
		tg_printf("testguest: hostile %s: needs VIRTIO_RING_F_EVENT_IDX (offered 0x%llx)\n",
			  h->kind, U(h->net.offered));
		tg_exit(TG_EXIT_HOSTILE_SETUP);
	}
	post_all_heads(q, 1);
	/* Until the device has taken every head: it writes avail_event = its
	 * next avail index when it asks for a kick, i.e. when it found the ring
	 * empty. A device that takes chains only for frames, or that holds all
	 * of them without ever finding the ring empty (minivmm with GSO runs out
	 * of slots first), gets there with the replies to our pings. */
	end = tsc_deadline_us(TAKE_WAIT_US);
	next_ping = tsc_deadline_us(PING_AFTER_US);
	while ((avail_event = *q->avail_event) != q->num && !tsc_passed(end)) {
		if (hostile_needs_reset(h))
			break;
		if (tsc_passed(next_ping) && hostile_ping_send(h, (uint16_t)pings)) {
			pings++;
			next_ping = tsc_deadline_us(PING_EVERY_US);
		}
		vnet_tx_reclaim(p);
		cpu_pause();
	}
	taken = avail_event == q->num;
	if (hostile_needs_reset(h))
		hostile_violation(h, "NEEDS_RESET before the ring was over-committed (used %u, pings %u)",
				  used_idx(q), pings);
	wait_used_stable(h, q);
	u = used_idx(q);
	overcommit(q);
	hostile_armed(h, "heads %u avail-event %u taken %d used %u avail %u gso %d mrg %d pings %u",
		      q->num, avail_event, taken, u, q->avail_idx,
		      vnet_has(&h->net, VIRTIO_NET_F_GUEST_TSO4), p->mrg, pings);
	/* Hold the over-commit while the device returns more (each entry it
	 * returns would make room for one more legitimately). */
	end = tsc_deadline_us(NEEDS_RESET_WAIT_US);
	while (!hostile_needs_reset(h) && !tsc_passed(end)) {
		if (used_idx(q) != u) {
			u = used_idx(q);
			overcommit(q);
			rearms++;
		}
		vnet_tx_reclaim(p);
		cpu_pause();
	}
	hostile_wait_needs_reset(h, 0);
	tg_printf("testguest: hostile %s used %u avail %u rearms %u\n", h->kind, used_idx(q),
		  q->avail_idx, rearms);
}

/* ---- rx-one-byte-segs ------------------------------------------------------ */

void hostile_rx_one_byte_segs(struct hostile *h)
{
	struct hostile_up_opts o = { .extra = F(VIRTIO_RING_F_INDIRECT_DESC) };
	struct virtq *q = &h->net.pair[0].rx;
	struct vring_desc *tables = NULL;
	unsigned nchains, used, bytes = 0, max_len = 0, hits = 0;
	uint8_t *area;
	int indirect;

	hostile_up(h, &o);
	/* With indirect tables every head gets a chain; without, the 256
	 * descriptors make 4 chains. */
	indirect = vnet_has(&h->net, VIRTIO_RING_F_INDIRECT_DESC);
	nchains = indirect ? q->num : q->num / SEGS;
	/* Chain c's descriptor i is byte 2i of its 128-byte area; the odd
	 * bytes between are guards. */
	area = dma_alloc((size_t)nchains * 2 * SEGS, 64);
	if (indirect)
		tables = dma_alloc((size_t)nchains * SEGS * sizeof(*tables), 16);
	if (!area || (indirect && !tables) || !nchains) {
		tg_printf("testguest: hostile %s: no memory for %u chains\n", h->kind, nchains);
		tg_exit(TG_EXIT_HOSTILE_SETUP);
	}
	memset(area, GUARD, (size_t)nchains * 2 * SEGS);
	for (unsigned c = 0; c < nchains; c++) {
		struct vring_desc *t = indirect ? tables + c * SEGS : q->desc + c * SEGS;
		uint16_t first = indirect ? 0 : (uint16_t)(c * SEGS);

		for (unsigned i = 0; i < SEGS; i++) {
			t[i].addr = (uint64_t)(uintptr_t)(area + c * 2 * SEGS + 2 * i);
			t[i].len = 1;
			t[i].flags = VRING_DESC_F_WRITE | (i + 1 < SEGS ? VRING_DESC_F_NEXT : 0);
			t[i].next = (uint16_t)(first + i + 1);
		}
		if (indirect)
			virtq_set_desc(q, (uint16_t)c, t, SEGS * sizeof(*t), VRING_DESC_F_INDIRECT, 0);
	}
	post_all_heads(q, indirect ? 1 : SEGS);
	hostile_armed(h, "chains %u segs %u indirect %d mrg %d", nchains, SEGS, indirect,
		      h->net.pair[0].mrg);
	hostile_wait_needs_reset(h, h->wait_us);

	used = used_count(q);
	for (unsigned k = 0; k < used; k++) {
		struct vring_used_elem e = q->used->ring[k];

		if (e.id >= q->num || (!indirect && e.id % SEGS))
			hostile_violation(h, "used entry %u: id %u is not a chain head", k, e.id);
		if (e.len > SEGS)
			hostile_violation(h, "used entry %u: len %u, the chain holds %u bytes", k, e.len, SEGS);
		bytes += e.len;
		max_len = e.len > max_len ? e.len : max_len;
	}
	for (unsigned i = 1; i < nchains * 2 * SEGS; i += 2)
		if (area[i] != GUARD && hits++ == 0)
			hostile_violation(h, "guard byte %u of chain %u written (0x%02x)", i % (2 * SEGS),
					  i / (2 * SEGS), area[i]);
	tg_printf("testguest: hostile %s used %u bytes %u max-len %u guards-hit %u\n", h->kind, used,
		  bytes, max_len, hits);
}

/* ---- rx-read-only, rx-small ------------------------------------------------- */

/* Buffers returned must have been returned unused (length 0 for a
 * read-only buffer, at most `limit` for a small one). */
static unsigned check_used(struct hostile *h, struct virtq *q, uint32_t limit, unsigned *unused)
{
	unsigned used = used_count(q);

	*unused = 0;
	for (unsigned k = 0; k < used; k++) {
		struct vring_used_elem e = q->used->ring[k];

		if (e.id >= q->num)
			hostile_violation(h, "used entry %u: id %u out of range", k, e.id);
		if (e.len > limit)
			hostile_violation(h, "used entry %u (buffer %u): len %u, more than the %u the buffer allows",
					  k, e.id, e.len, limit);
		*unused += e.len == 0;
	}
	return used;
}

void hostile_rx_read_only(struct hostile *h)
{
	struct hostile_up_opts o = { 0 };
	struct vnet_pair *p = &h->net.pair[0];
	struct virtq *q = &p->rx;
	unsigned used, unused, changed = 0;

	hostile_up(h, &o);
	memset(p->rxbuf, GUARD, (size_t)q->num * VNET_BUF_SIZE);
	for (uint16_t i = 0; i < q->num; i++)
		virtq_set_desc(q, i, p->rxbuf + (uint32_t)i * VNET_BUF_SIZE, VNET_BUF_SIZE, 0, 0);
	post_all_heads(q, 1);
	hostile_armed(h, "buffers %u len %u flags 0", q->num, VNET_BUF_SIZE);
	hostile_wait_needs_reset(h, h->wait_us);

	used = check_used(h, q, 0, &unused);
	for (unsigned i = 0; i < q->num; i++) {
		const uint8_t *b = p->rxbuf + (uint32_t)i * VNET_BUF_SIZE;

		for (unsigned k = 0; k < VNET_BUF_SIZE; k++)
			if (b[k] != GUARD) {
				if (changed++ == 0)
					hostile_violation(h, "read-only buffer %u written at byte %u (0x%02x)",
							  i, k, b[k]);
				break;
			}
	}
	tg_printf("testguest: hostile %s returned %u unused %u of %u changed %u\n", h->kind, used,
		  unused, q->num, changed);
}

void hostile_rx_small(struct hostile *h)
{
	struct hostile_up_opts o = { 0 };
	struct vnet_pair *p = &h->net.pair[0];
	struct virtq *q = &p->rx;
	unsigned used, unused, hits = 0;
	uint8_t *area;

	hostile_up(h, &o);
	area = p->rxbuf;
	/* Buffer i: bytes 4-7 of its 16-byte slot; the other 12 are guards. */
	memset(area, GUARD, (size_t)q->num * SMALL_SLOT);
	for (uint16_t i = 0; i < q->num; i++)
		virtq_set_desc(q, i, area + (uint32_t)i * SMALL_SLOT + 4, SMALL_LEN, VRING_DESC_F_WRITE, 0);
	post_all_heads(q, 1);
	hostile_armed(h, "buffers %u len %u header %u", q->num, SMALL_LEN, VNET_HDR_LEN);
	hostile_wait_needs_reset(h, h->wait_us);

	used = check_used(h, q, SMALL_LEN, &unused);
	for (unsigned i = 0; i < q->num * SMALL_SLOT; i++) {
		unsigned off = i % SMALL_SLOT;

		if (off >= 4 && off < 4 + SMALL_LEN)
			continue;
		if (area[i] != GUARD && hits++ == 0)
			hostile_violation(h, "guard byte %u next to buffer %u written (0x%02x)", off,
					  i / SMALL_SLOT, area[i]);
	}
	tg_printf("testguest: hostile %s returned %u unused %u of %u guards-hit %u\n", h->kind, used,
		  unused, q->num, hits);
}
