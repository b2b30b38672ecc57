#include "net/datapath.h"

#include <errno.h>
#include <linux/virtio_net.h>
#include <stdlib.h>
#include <string.h>

struct dp_queue *dp_queue_create(struct net_queue_pair *qp)
{
	struct dp_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->qp = qp;
	q->ops = qp->guest->ops;
	unsigned n = qp->rx_ring_size;
	/* calloc of large blocks maps zero pages: only slots in use cost RSS. */
	q->rx_chain = calloc(n, sizeof(q->rx_chain[0]));
	q->rx_free = calloc(n, sizeof(uint16_t));
	q->rx_empty = calloc(n, sizeof(uint16_t));
	q->discard = malloc(DP_DISCARD_BYTES);
	if (!q->rx_chain || !q->rx_free || !q->rx_empty || !q->discard) {
		dp_queue_free(q);
		return NULL;
	}
	for (unsigned i = 0; i < n; i++)
		q->rx_empty[i] = (uint16_t)(n - 1 - i);
	q->rx_nr_empty = n;
	return q;
}

void dp_queue_free(struct dp_queue *q)
{
	if (!q)
		return;
	free(q->rx_chain);
	free(q->rx_free);
	free(q->rx_empty);
	free(q->discard);
	free(q);
}

static void dp_fail(struct dp_queue *q, void *ring)
{
	if (q->broken)
		return;
	q->broken = true;
	q->qp->guest->fail(q->qp->guest->opaque, q->ops->error(ring));
}

/* ---- RX ------------------------------------------------------------------ */

/* A chain slot holding an unused guest buffer: from the pool, or freshly
 * popped from the ring. Returns -1 when none (or the ring broke). */
static int dp_rx_take_chain(struct dp_queue *q)
{
	if (q->rx_nr_free)
		return q->rx_free[--q->rx_nr_free];
	if (!q->rx_nr_empty)
		return -1;
	uint16_t slot = q->rx_empty[q->rx_nr_empty - 1];
	int rc = q->ops->pop(q->qp->rx.ring, &q->rx_chain[slot]);
	if (rc < 0) {
		dp_fail(q, q->qp->rx.ring);
		return -1;
	}
	if (rc == 0)
		return -1;
	q->rx_nr_empty--;
	if (q->rx_chain[slot].nr_writable == 0 ||
	    q->rx_chain[slot].writable_len < q->qp->vnet_hdr_len) {
		/* A receive buffer with no room for the header is useless;
		 * hand it back empty rather than stall on it. */
		q->ops->push(q->qp->rx.ring, q->rx_chain[slot].head, 0);
		q->rx_dirty = true;
		q->rx_empty[q->rx_nr_empty++] = slot;
		return dp_rx_take_chain(q);
	}
	return slot;
}

static void dp_rx_return_chain(struct dp_queue *q, uint16_t slot)
{
	q->rx_free[q->rx_nr_free++] = slot;
}

static bool dp_read_add_chain(struct dp_read *r, struct guest_chain *c, uint16_t slot)
{
	if (r->nr_chains == DP_READ_MAX_CHAINS || r->nr_iov + c->nr_writable >= DP_READ_MAX_IOV)
		return false;
	struct iovec *w = guest_chain_writable(c);
	for (unsigned i = 0; i < c->nr_writable; i++)
		r->iov[r->nr_iov++] = w[i];
	r->slot[r->nr_chains++] = slot;
	r->capacity += c->writable_len;
	return true;
}

/* With no buffers, ask for a kick; if buffers raced in, keep going. */
static bool dp_rx_wait_for_buffers(struct dp_queue *q)
{
	if (q->ops->enable_kicks(q->qp->rx.ring))
		return false;   /* buffers arrived meanwhile */
	if (!q->rx_waiting_kick)
		NET_STAT_ADD(q->qp, rx_no_buffer, 1);
	q->rx_waiting_kick = true;
	return true;
}

/* Gather guest RX chains into *r until `want` bytes fit. Returns 1 with
 * chains (maybe fewer than wanted, when nothing else can free any), 0 when
 * waiting for the guest is better (kicks enabled), -1 if the ring broke. */
static int dp_rx_gather(struct dp_queue *q, struct dp_read *r, uint32_t want)
{
	if (q->broken)
		return -1;
	r->nr_chains = r->nr_iov = 0;
	r->capacity = 0;
	while (r->capacity < want) {
		int slot = dp_rx_take_chain(q);
		if (slot < 0) {
			if (q->broken)
				goto give_back;
			if (r->nr_chains && q->rx_reads_inflight == 0)
				break;   /* nothing else will free chains: use what we have */
			if (dp_rx_wait_for_buffers(q))
				goto give_back;
			continue;
		}
		if (!dp_read_add_chain(r, &q->rx_chain[slot], (uint16_t)slot)) {
			dp_rx_return_chain(q, (uint16_t)slot);
			break;
		}
	}
	q->rx_waiting_kick = false;
	q->ops->disable_kicks(q->qp->rx.ring);
	return 1;

give_back:
	for (unsigned i = 0; i < r->nr_chains; i++)
		dp_rx_return_chain(q, r->slot[i]);
	r->nr_chains = 0;
	return q->broken ? -1 : 0;
}

int dp_rx_prepare(struct dp_queue *q, struct dp_read *r)
{
	/* Without MRG_RXBUF one chain holds a whole frame; with it, gather
	 * chains until a largest-possible frame fits. */
	uint32_t want = q->qp->mrg_rxbuf ? q->qp->rx_frame_max : 1;
	int rc = dp_rx_gather(q, r, want);
	if (rc <= 0)
		return rc;
	r->iov[r->nr_iov].iov_base = q->discard;
	r->iov[r->nr_iov].iov_len = DP_DISCARD_BYTES;
	r->nr_iov++;
	q->rx_reads_inflight++;
	return 1;
}

/* num_buffers is the last field of the 12-byte header, which may itself be
 * split over iovecs of the first chain. */
static void dp_write_num_buffers(struct guest_chain *first, uint16_t num)
{
	size_t off = offsetof(struct virtio_net_hdr_v1, num_buffers);
	uint8_t bytes[2] = { (uint8_t)num, (uint8_t)(num >> 8) };
	struct iovec *w = guest_chain_writable(first);
	for (unsigned i = 0, done = 0; i < first->nr_writable && done < 2; i++) {
		while (done < 2 && off < w[i].iov_len)
			((uint8_t *)w[i].iov_base)[off++] = bytes[done++];
		off = off >= w[i].iov_len ? off - w[i].iov_len : off;
	}
}

/* Copy len bytes at offset off of what a read delivered. */
static bool dp_read_peek(const struct dp_read *r, size_t off, uint8_t *out, size_t len)
{
	for (unsigned i = 0; i < r->nr_iov && len; i++) {
		size_t seg = r->iov[i].iov_len;
		if (off >= seg) {
			off -= seg;
			continue;
		}
		size_t take = seg - off < len ? seg - off : len;
		memcpy(out, (const uint8_t *)r->iov[i].iov_base + off, take);
		out += take;
		len -= take;
		off = 0;
	}
	return len == 0;
}

static bool dp_rx_wanted(struct dp_queue *q, const struct dp_read *r)
{
	const struct net_guest *g = q->qp->guest;
	uint8_t dst[6];
	if (!g->rx_accept || !dp_read_peek(r, q->qp->vnet_hdr_len, dst, sizeof(dst)))
		return true;
	return g->rx_accept(g->opaque, dst);
}

static void dp_rx_push_frame(struct dp_queue *q, struct dp_read *r, uint32_t n)
{
	uint32_t left = n;
	unsigned used = 0;
	while (left && used < r->nr_chains) {
		struct guest_chain *c = &q->rx_chain[r->slot[used]];
		uint32_t take = left < c->writable_len ? left : c->writable_len;
		q->ops->push(q->qp->rx.ring, c->head, take);
		left -= take;
		used++;
	}
	/* virtio 1.x: num_buffers is always there; 1 without MRG_RXBUF. */
	dp_write_num_buffers(&q->rx_chain[r->slot[0]], (uint16_t)used);
	for (unsigned i = 0; i < used; i++)
		q->rx_empty[q->rx_nr_empty++] = r->slot[i];
	for (unsigned i = used; i < r->nr_chains; i++)
		dp_rx_return_chain(q, r->slot[i]);
	q->rx_dirty = true;
	NET_STAT_ADD(q->qp, rx_frames, 1);
	NET_STAT_ADD(q->qp, rx_bytes, n - q->qp->vnet_hdr_len);
}

void dp_rx_complete(struct dp_queue *q, struct dp_read *r, ssize_t n)
{
	q->rx_reads_inflight--;
	if (n < 0 || (size_t)n < q->qp->vnet_hdr_len || (uint32_t)n > r->capacity) {
		if (n < 0 && n != -ECANCELED && n != -EAGAIN && n != -EINTR)
			NET_STAT_ADD(q->qp, rx_errors, 1);
		else if (n >= 0)
			NET_STAT_ADD(q->qp, rx_dropped, 1);   /* runt, or bigger than the buffers */
		for (unsigned i = 0; i < r->nr_chains; i++)
			dp_rx_return_chain(q, r->slot[i]);
		r->nr_chains = 0;
		return;
	}
	if (!dp_rx_wanted(q, r)) {
		NET_STAT_ADD(q->qp, rx_filtered, 1);
		for (unsigned i = 0; i < r->nr_chains; i++)
			dp_rx_return_chain(q, r->slot[i]);
		r->nr_chains = 0;
		return;
	}
	dp_rx_push_frame(q, r, (uint32_t)n);
	r->nr_chains = 0;
}

int dp_rx_deliver(struct dp_queue *q, const uint8_t *frame, uint32_t len)
{
	struct dp_read r;
	int rc = dp_rx_gather(q, &r, q->qp->mrg_rxbuf ? len : 1);
	if (rc <= 0)
		return rc;
	if (r.capacity < len) {
		if (q->qp->mrg_rxbuf && q->rx_nr_free + r.nr_chains < q->qp->rx_ring_size) {
			/* More buffers will come: wait rather than drop. */
			for (unsigned i = 0; i < r.nr_chains; i++)
				dp_rx_return_chain(q, r.slot[i]);
			return dp_rx_wait_for_buffers(q) ? 0 : dp_rx_deliver(q, frame, len);
		}
		q->rx_reads_inflight++;
		dp_rx_complete(q, &r, (ssize_t)len);   /* too big for the buffers: dropped, counted */
		return 1;
	}
	uint32_t off = 0;
	for (unsigned i = 0; i < r.nr_iov && off < len; i++) {
		uint32_t take = len - off < r.iov[i].iov_len ? len - off : (uint32_t)r.iov[i].iov_len;
		memcpy(r.iov[i].iov_base, frame + off, take);
		off += take;
	}
	q->rx_reads_inflight++;   /* dp_rx_complete accounts one finished read */
	dp_rx_complete(q, &r, (ssize_t)len);
	return 1;
}

void dp_rx_kicked(struct dp_queue *q)
{
	NET_STAT_ADD(q->qp, rx_kicks, 1);
	q->rx_waiting_kick = false;
}

void dp_rx_release_all(struct dp_queue *q)
{
	while (q->rx_nr_free) {
		uint16_t slot = q->rx_free[--q->rx_nr_free];
		q->ops->push(q->qp->rx.ring, q->rx_chain[slot].head, 0);
		q->rx_empty[q->rx_nr_empty++] = slot;
		q->rx_dirty = true;
	}
}

/* ---- TX ------------------------------------------------------------------ */

int dp_tx_pop(struct dp_queue *q, struct guest_chain *c)
{
	if (q->broken)
		return -1;
	for (;;) {
		int rc = q->ops->pop(q->qp->tx.ring, c);
		if (rc < 0) {
			dp_fail(q, q->qp->tx.ring);
			return -1;
		}
		if (rc > 0) {
			if (c->readable_len <= q->qp->vnet_hdr_len || c->nr_writable) {
				/* No frame after the header, or writable parts in a
				 * TX chain: not a frame. Return it and go on. */
				q->ops->push(q->qp->tx.ring, c->head, 0);
				q->tx_dirty = true;
				NET_STAT_ADD(q->qp, tx_errors, 1);
				continue;
			}
			if (q->tx_waiting_kick) {
				q->tx_waiting_kick = false;
				q->ops->disable_kicks(q->qp->tx.ring);
			}
			return 1;
		}
		/* Drained: ask for a kick, then look once more (the guest may
		 * have added a frame before it saw our request). */
		if (q->ops->enable_kicks(q->qp->tx.ring))
			continue;
		q->tx_waiting_kick = true;
		return 0;
	}
}

void dp_tx_complete(struct dp_queue *q, const struct guest_chain *c, ssize_t n)
{
	q->ops->push(q->qp->tx.ring, c->head, 0);
	q->tx_dirty = true;
	if (n < 0) {
		NET_STAT_ADD(q->qp, tx_errors, 1);
		return;
	}
	NET_STAT_ADD(q->qp, tx_frames, 1);
	NET_STAT_ADD(q->qp, tx_bytes, c->readable_len - q->qp->vnet_hdr_len);
}

void dp_tx_kicked(struct dp_queue *q)
{
	NET_STAT_ADD(q->qp, tx_kicks, 1);
}

bool dp_flush(struct dp_queue *q)
{
	bool signal = false;
	if (q->rx_dirty) {
		q->ops->publish(q->qp->rx.ring);
		signal |= q->ops->should_signal(q->qp->rx.ring);
		q->rx_dirty = false;
	}
	if (q->tx_dirty) {
		q->ops->publish(q->qp->tx.ring);
		signal |= q->ops->should_signal(q->qp->tx.ring);
		q->tx_dirty = false;
	}
	return signal;
}
