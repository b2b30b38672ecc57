/* SPDX-License-Identifier: Apache-2.0 */
#include "net/datapath.h"

#include "base/iov.h"
#include "net/csum.h"
#include "net/gso.h"
#include "net/rate_limit.h"

#include <errno.h>
#include <linux/virtio_net.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	free(q->gso_scratch);
	free(q->rx_chain);
	free(q->rx_free);
	free(q->rx_empty);
	free(q->discard);
	free(q);
}

static void dp_fail_why(struct dp_queue *q, const char *why)
{
	if (q->broken)
		return;
	q->broken = true;
	q->qp->guest->fail(q->qp->guest->opaque, why);
}

static void dp_fail(struct dp_queue *q, void *ring)
{
	dp_fail_why(q, q->ops->error(ring));
}

/* ---- messages ------------------------------------------------------------- */

#define DP_LOG_INTERVAL_NS 1000000000ull

uint64_t dp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void dp_log(struct dp_queue *q, const char *fmt, ...)
{
	const struct net_guest *g = q->qp->guest;
	if (!g->log)
		return;
	uint64_t now = dp_now_ns();
	if (now < q->log_limit.next_ns) {
		q->log_limit.suppressed++;
		return;
	}
	char msg[200], line[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (q->log_limit.suppressed)
		snprintf(line, sizeof(line), "queue pair %u: %s (%u similar suppressed)", q->qp->index, msg,
			 q->log_limit.suppressed);
	else
		snprintf(line, sizeof(line), "queue pair %u: %s", q->qp->index, msg);
	q->log_limit.next_ns = now + DP_LOG_INTERVAL_NS;
	q->log_limit.suppressed = 0;
	g->log(g->opaque, line);
}

/* ---- backend faults --------------------------------------------------------- */

bool dp_backend_error_is_fatal(int err)
{
	return err == EBADFD || err == ENXIO || err == ENODEV || err == ENETDOWN;
}

bool dp_backend_failed(struct dp_queue *q, int err)
{
	if (!dp_backend_error_is_fatal(err))
		return false;
	if (!q->backend_gone) {
		q->backend_gone = true;
		const struct net_guest *g = q->qp->guest;
		if (g->backend_lost)
			g->backend_lost(g->opaque, q->qp->index, -err);
	}
	return true;
}

/* ---- RX ------------------------------------------------------------------ */

enum dp_take {
	DP_TAKE_OK,
	DP_TAKE_EMPTY,     /* the guest has made no more buffers available */
	DP_TAKE_NO_SLOT,   /* every slot holds a chain: only a finished read frees one */
	DP_TAKE_BROKEN,
};

/* A receive buffer with no room for the header is useless: hand it back
 * empty rather than stall on it. */
static bool dp_rx_chain_usable(const struct dp_queue *q, const struct guest_chain *c)
{
	return c->nr_writable > 0 && c->writable_len >= q->qp->vnet_hdr_len;
}

/* A chain slot holding an unused guest buffer: from the pool, or freshly
 * popped from the ring. Useless chains are returned on the way; there are
 * at most rx_ring_size of them outstanding, so the loop ends. */
static enum dp_take dp_rx_take_chain(struct dp_queue *q, uint16_t *slot)
{
	for (unsigned skipped = 0; skipped <= q->qp->rx_ring_size; skipped++) {
		if (q->rx_nr_free) {
			*slot = q->rx_free[--q->rx_nr_free];
			return DP_TAKE_OK;
		}
		if (!q->rx_nr_empty)
			return DP_TAKE_NO_SLOT;
		uint16_t s = q->rx_empty[q->rx_nr_empty - 1];
		int rc = q->ops->pop(q->qp->rx.ring, &q->rx_chain[s]);
		if (rc < 0) {
			dp_fail(q, q->qp->rx.ring);
			return DP_TAKE_BROKEN;
		}
		if (rc == 0)
			return DP_TAKE_EMPTY;
		if (dp_rx_chain_usable(q, &q->rx_chain[s])) {
			q->rx_nr_empty--;
			*slot = s;
			return DP_TAKE_OK;
		}
		dp_log(q, "RX buffer (head %u) without a writable part of at least %u bytes: returned unused",
		       q->rx_chain[s].head, q->qp->vnet_hdr_len);
		q->ops->push(q->qp->rx.ring, q->rx_chain[s].head, 0);
		q->rx_dirty = true;
	}
	/* More useless chains than the ring holds without running dry: only
	 * a ring that hands out what it does not have does that. */
	dp_fail_why(q, "RX ring keeps handing out buffers without room for a header");
	return DP_TAKE_BROKEN;
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

/* A guest that takes GSO frames (up to 64 KiB) gets no read that cannot
 * hold the largest one while it can still post buffers: a frame that does
 * not fit is dropped whole, and a TCP stream then loses a GSO frame's worth
 * of segments each time the guest's ring runs low (seen in the nested
 * iperf3 cases). Its kick costs little: a guest refills as it takes frames.
 * A ring too small for the largest frame is read short once every slot is
 * in the read (DP_TAKE_NO_SLOT). */
static bool dp_rx_read_short_for_gso(const struct dp_queue *q, const struct dp_read *r, uint32_t want)
{
	return (net_qp_rx_offloads(q->qp) & NET_RX_GSO) && r->capacity < want;
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

static void dp_read_give_back(struct dp_queue *q, struct dp_read *r)
{
	for (unsigned i = 0; i < r->nr_chains; i++)
		dp_rx_return_chain(q, r->slot[i]);
	r->nr_chains = 0;
}

/* Gather guest RX chains into *r until `want` bytes fit. Returns 1 with
 * chains (maybe fewer than wanted, when nothing else can free any, or when
 * the read cannot take more: r->full), 0 when waiting is better (for the
 * guest: kicks enabled; or for a read in flight to finish), -1 if broken.
 * Every pass either takes a chain or returns, and the ring hands out at most
 * rx_ring_size chains before it runs dry, so this ends; the bound below
 * makes sure of it even for a ring that claims buffers it never gives. */
static int dp_rx_gather(struct dp_queue *q, struct dp_read *r, uint32_t want)
{
	if (q->broken)
		return -1;
	r->nr_chains = r->nr_iov = 0;
	r->capacity = 0;
	r->full = false;
	unsigned passes = 2u * q->qp->rx_ring_size + 2;
	while (r->capacity < want) {
		if (passes-- == 0) {
			dp_fail_why(q, "RX ring reports buffers it does not hand out");
			dp_read_give_back(q, r);
			return -1;
		}
		uint16_t slot;
		switch (dp_rx_take_chain(q, &slot)) {
		case DP_TAKE_OK:
			if (!dp_read_add_chain(r, &q->rx_chain[slot], slot)) {
				dp_rx_return_chain(q, slot);
				r->full = true;
				goto ready;
			}
			continue;
		case DP_TAKE_BROKEN:
			dp_read_give_back(q, r);
			return -1;
		case DP_TAKE_NO_SLOT:
			if (q->rx_reads_inflight == 0)
				goto ready;   /* every slot is in this read: it is all there is */
			/* Work may be pending, but the other slots are in reads
			 * in flight: a completion brings us back. No kick can
			 * help, so none is asked for. */
			dp_read_give_back(q, r);
			return 0;
		case DP_TAKE_EMPTY:
			if (r->nr_chains && q->rx_reads_inflight == 0 && !dp_rx_read_short_for_gso(q, r, want))
				goto ready;   /* nothing else will free chains: use what we have */
			if (dp_rx_wait_for_buffers(q)) {
				dp_read_give_back(q, r);
				return 0;
			}
			continue;     /* buffers raced in as kicks were enabled */
		}
	}
ready:
	q->rx_waiting_kick = false;
	q->ops->disable_kicks(q->qp->rx.ring);
	return 1;
}

int dp_rx_prepare(struct dp_queue *q, struct dp_read *r)
{
	if (rate_limit_on(q->qp->rx_limit) && !q->broken) {
		uint64_t w = rate_limit_wait(q->qp->rx_limit, q->qp->index, dp_now_ns());
		if (w) {
			q->rx_throttle_wait = w;
			r->nr_chains = 0;
			r->nr_iov = 0;
			return 0;
		}
	}
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

void dp_read_restore(struct dp_queue *q, uint16_t slot, struct dp_read *r)
{
	r->nr_chains = r->nr_iov = 0;
	r->capacity = 0;
	r->full = false;
	dp_read_add_chain(r, &q->rx_chain[slot], slot);   /* one chain always fits */
	r->iov[r->nr_iov].iov_base = q->discard;
	r->iov[r->nr_iov].iov_len = DP_DISCARD_BYTES;
	r->nr_iov++;
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
	return iov_copy_out(r->iov, r->nr_iov, off, out, len) == len;
}

/* Why a frame bigger than the guest's buffers came: for a guest with TSO,
 * its whole ring, or the most chains a read takes, held less than the
 * largest frame (dp_rx_read_short_for_gso);
 * a GSO frame for a guest without TSO can only come from a packet socket
 * read with rx=recv (the ring path cuts those; a tap sends GSO frames only
 * to a guest with TSO). */
static void dp_rx_explain_oversized(struct dp_queue *q, const struct dp_read *r, uint32_t n)
{
	uint8_t gso_type = 0;
	bool gso = dp_read_peek(r, offsetof(struct virtio_net_hdr_v1, gso_type), &gso_type, 1) &&
		   gso_type != VIRTIO_NET_HDR_GSO_NONE;
	if (gso && (net_qp_rx_offloads(q->qp) & NET_RX_GSO))
		dp_log(q, "%u-byte GSO frame dropped: it had %u bytes of buffers (the guest's whole RX ring, "
		       "or as many chains as one read takes)", n, r->capacity);
	else if (gso)
		dp_log(q, "%u-byte GSO frame for a guest without TSO dropped: reads straight into guest "
		       "buffers cannot cut it (packet backend: use rx=ring)", n);
	else
		dp_log(q, "%u-byte frame larger than the guest's %u bytes of buffers dropped", n, r->capacity);
}

static bool dp_rx_wanted(struct dp_queue *q, const struct dp_read *r)
{
	const struct net_guest *g = q->qp->guest;
	uint8_t dst[6];
	if (!g->rx_accept || !dp_read_peek(r, q->qp->vnet_hdr_len, dst, sizeof(dst)))
		return true;
	return g->rx_accept(g->opaque, dst);
}

/* Write one byte at offset off of what a read delivered. */
static void dp_read_poke(struct dp_read *r, size_t off, uint8_t v)
{
	for (unsigned i = 0; i < r->nr_iov; i++) {
		if (off < r->iov[i].iov_len) {
			((uint8_t *)r->iov[i].iov_base)[off] = v;
			return;
		}
		off -= r->iov[i].iov_len;
	}
}

/* Whether a frame of this GSO type (NONE included) may go to the guest as
 * it is, with these NET_RX_* offloads. */
static bool dp_guest_takes_gso(unsigned offloads, uint8_t gso_type)
{
	return gso_guest_takes(gso_type, offloads & NET_RX_TSO4, offloads & NET_RX_TSO6,
			       offloads & NET_RX_ECN);
}

/* What the guest negotiated bounds what a frame may carry (virtio 1.2,
 * 5.1.6.4.1): no NEEDS_CSUM without GUEST_CSUM, no GSO type it did not
 * take. A backend can still hand such a frame over: a tap's queue keeps
 * frames from before a reset that renegotiated its offloads, and a packet
 * socket read with rx=recv has no offload switch. Finish the checksum in
 * place; drop a GSO frame, which cannot be cut inside the guest's buffers.
 * False: the frame is dropped (counted and said). */
static bool dp_rx_fit_offloads(struct dp_queue *q, struct dp_read *r, uint32_t n)
{
	const struct net_queue_pair *qp = q->qp;
	struct virtio_net_hdr_v1 h;
	if (!dp_read_peek(r, 0, (uint8_t *)&h, offsetof(struct virtio_net_hdr_v1, num_buffers)))
		return true;
	unsigned offloads = net_qp_rx_offloads(qp);
	if (h.gso_type != VIRTIO_NET_HDR_GSO_NONE && !dp_guest_takes_gso(offloads, h.gso_type)) {
		NET_STAT_ADD(q->qp, rx_dropped, 1);
		dp_log(q, "%u-byte GSO frame (type %u) for a guest that did not negotiate it dropped "
		       "(queued before the offloads changed, or a packet socket read with rx=recv)",
		       n - qp->vnet_hdr_len, h.gso_type);
		return false;
	}
	if (!(h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || (offloads & NET_RX_CSUM))
		return true;
	if (!csum_finish_iov(r->iov, r->nr_iov, qp->vnet_hdr_len, n - qp->vnet_hdr_len,
			     h.csum_start, h.csum_offset)) {
		NET_STAT_ADD(q->qp, rx_dropped, 1);
		dp_log(q, "%u-byte frame with a partial checksum at %u+%u, outside the frame, dropped",
		       n - qp->vnet_hdr_len, h.csum_start, h.csum_offset);
		return false;
	}
	dp_read_poke(r, offsetof(struct virtio_net_hdr_v1, flags),
		     (uint8_t)(h.flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM));
	return true;
}

uint64_t dp_tx_take_throttle(struct dp_queue *q)
{
	uint64_t w = q->tx_throttle_wait;
	q->tx_throttle_wait = 0;
	return w;
}

uint64_t dp_rx_take_throttle(struct dp_queue *q)
{
	uint64_t w = q->rx_throttle_wait;
	q->rx_throttle_wait = 0;
	return w;
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
	if (rate_limit_on(q->qp->rx_limit))
		rate_limit_charge(q->qp->rx_limit, q->qp->index, n - q->qp->vnet_hdr_len, 1, dp_now_ns());
}

void dp_rx_complete(struct dp_queue *q, struct dp_read *r, ssize_t n)
{
	q->rx_reads_inflight--;
	if (n < 0 || (size_t)n < q->qp->vnet_hdr_len || (uint32_t)n > r->capacity) {
		/* Not errors: a cancelled or interrupted read, an empty backend,
		 * a read with RWF_NOWAIT the kernel does not do (the engine
		 * switches to plain reads). */
		if (n < 0 && n != -ECANCELED && n != -EAGAIN && n != -EINTR && n != -EOPNOTSUPP) {
			NET_STAT_ADD(q->qp, rx_errors, 1);
			dp_log(q, "reading from the backend failed (%s)", strerror((int)-n));
		}
		else if (n >= 0)
			NET_STAT_ADD(q->qp, rx_dropped, 1);   /* runt, or bigger than the buffers */
		if (n > 0 && (uint32_t)n > r->capacity)
			dp_rx_explain_oversized(q, r, (uint32_t)n);
		for (unsigned i = 0; i < r->nr_chains; i++)
			dp_rx_return_chain(q, r->slot[i]);
		r->nr_chains = 0;
		return;
	}
	bool wanted = dp_rx_wanted(q, r);
	if (!wanted)
		NET_STAT_ADD(q->qp, rx_filtered, 1);
	if (!wanted || !dp_rx_fit_offloads(q, r, (uint32_t)n)) {
		for (unsigned i = 0; i < r->nr_chains; i++)
			dp_rx_return_chain(q, r->slot[i]);
		r->nr_chains = 0;
		return;
	}
	dp_rx_push_frame(q, r, (uint32_t)n);
	r->nr_chains = 0;
}

static void dp_rx_copy_in(struct dp_read *r, const uint8_t *frame, uint32_t len)
{
	uint32_t off = 0;
	for (unsigned i = 0; i < r->nr_iov && off < len; i++) {
		uint32_t take = len - off < r->iov[i].iov_len ? len - off : (uint32_t)r->iov[i].iov_len;
		memcpy(r->iov[i].iov_base, frame + off, take);
		off += take;
	}
}

int dp_rx_deliver(struct dp_queue *q, const uint8_t *frame, uint32_t len)
{
	struct dp_read r;
	/* A pass that does not end the loop waited for buffers the guest
	 * posted as kicks were enabled, so the next one holds more chains: at
	 * most rx_ring_size passes. `pass` bounds it even for a lying ring. */
	for (unsigned pass = 0;; pass++) {
		int rc = dp_rx_gather(q, &r, q->qp->mrg_rxbuf ? len : 1);
		if (rc <= 0)
			return rc;
		if (r.capacity >= len)
			break;
		/* Too small. More buffers help only with MRG_RXBUF, while the read
		 * can take more chains and the guest can still post some. */
		bool may_grow = q->qp->mrg_rxbuf && !r.full && pass < q->qp->rx_ring_size &&
				q->rx_nr_free + r.nr_chains < q->qp->rx_ring_size;
		if (!may_grow)
			break;   /* no buffers the guest can give will hold it */
		dp_read_give_back(q, &r);
		if (dp_rx_wait_for_buffers(q))
			return 0;
	}
	if (r.capacity >= len)
		dp_rx_copy_in(&r, frame, len);
	q->rx_reads_inflight++;   /* dp_rx_complete accounts one finished read */
	dp_rx_complete(q, &r, (ssize_t)len);   /* bigger than the buffers: dropped, counted */
	return 1;
}

struct dp_gso_emit_ctx {
	struct dp_queue *q;
	unsigned *done;
	int rc;           /* what dp_rx_deliver said when it stopped us */
};

static int dp_gso_emit(void *opaque, const uint8_t *frame, uint32_t len)
{
	struct dp_gso_emit_ctx *c = opaque;
	int rc = dp_rx_deliver(c->q, frame, len);
	if (rc <= 0) {
		c->rc = rc;
		return 0;
	}
	(*c->done)++;
	return 1;
}

int dp_rx_deliver_frame(struct dp_queue *q, const uint8_t *frame, uint32_t len, unsigned *segs_done)
{
	const struct net_queue_pair *qp = q->qp;
	struct virtio_net_hdr_v1 h = { .gso_type = VIRTIO_NET_HDR_GSO_NONE };
	if (len >= sizeof(h))
		memcpy(&h, frame, sizeof(h));
	if (dp_guest_takes_gso(net_qp_rx_offloads(qp), h.gso_type))
		return dp_rx_deliver(q, frame, len);
	if (!q->gso_scratch)
		q->gso_scratch = malloc(DP_GSO_SCRATCH);
	struct dp_gso_emit_ctx c = { .q = q, .done = segs_done, .rc = 1 };
	int n = q->gso_scratch ? gso_segment(frame, len, *segs_done, q->gso_scratch, DP_GSO_SCRATCH,
					     dp_gso_emit, &c)
			       : -ENOMEM;
	if (n < 0) {
		NET_STAT_ADD(q->qp, rx_dropped, 1);
		dp_log(q, "GSO frame (type %u, %u bytes) that the guest cannot take and minivmm cannot cut: dropped",
		       h.gso_type, len);
	} else if (n == 0) {
		return c.rc;   /* out of guest buffers (0) or a broken ring (-1): resume later */
	} else {
		NET_STAT_ADD(q->qp, rx_gso_cut, 1);
	}
	*segs_done = 0;
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

/* The next TX frame; limited: as the rate limiter lets it (a frame that
 * is dropped, not sent, owes it nothing). */
static int dp_tx_take(struct dp_queue *q, struct guest_chain *c, bool limited)
{
	if (q->broken)
		return -1;
	if (limited && rate_limit_on(q->qp->tx_limit)) {
		uint64_t w = rate_limit_wait(q->qp->tx_limit, q->qp->index, dp_now_ns());
		if (w) {
			q->tx_throttle_wait = w;
			return 0;
		}
	}
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
				dp_log(q, "TX chain (head %u) is not a frame (%u readable bytes, %u writable parts): returned unused",
				       c->head, c->readable_len, c->nr_writable);
				q->ops->push(q->qp->tx.ring, c->head, 0);
				q->tx_dirty = true;
				NET_STAT_ADD(q->qp, tx_errors, 1);
				continue;
			}
			if (q->tx_waiting_kick) {
				q->tx_waiting_kick = false;
				q->ops->disable_kicks(q->qp->tx.ring);
			}
			if (limited && rate_limit_on(q->qp->tx_limit))
				rate_limit_charge(q->qp->tx_limit, q->qp->index, c->readable_len - q->qp->vnet_hdr_len, 1, dp_now_ns());
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

int dp_tx_pop(struct dp_queue *q, struct guest_chain *c)
{
	return dp_tx_take(q, c, true);
}

void dp_tx_done(struct dp_queue *q, uint16_t head, uint32_t readable_len, ssize_t n)
{
	q->ops->push(q->qp->tx.ring, head, 0);
	q->tx_dirty = true;
	if (n == -ECANCELED) {
		NET_STAT_ADD(q->qp, tx_dropped, 1);
		return;
	}
	if (n < 0) {
		NET_STAT_ADD(q->qp, tx_errors, 1);
		dp_log(q, "writing a %u-byte frame to the backend failed (%s): dropped",
		       readable_len - q->qp->vnet_hdr_len, strerror((int)-n));
		return;
	}
	NET_STAT_ADD(q->qp, tx_frames, 1);
	NET_STAT_ADD(q->qp, tx_bytes, readable_len - q->qp->vnet_hdr_len);
}

void dp_tx_complete(struct dp_queue *q, const struct guest_chain *c, ssize_t n)
{
	dp_tx_done(q, c->head, c->readable_len, n);
}

void dp_tx_drop_all(struct dp_queue *q)
{
	struct guest_chain c;
	while (dp_tx_take(q, &c, false) > 0) {
		q->ops->push(q->qp->tx.ring, c.head, 0);
		q->tx_dirty = true;
		NET_STAT_ADD(q->qp, tx_dropped, 1);
	}
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
