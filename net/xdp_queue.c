/* SPDX-License-Identifier: Apache-2.0 */
/* One queue of the AF_XDP backend: its socket, which lives with its worker
 * (start creates it, stop closes it before any guest buffer goes back), and
 * the buffers it has given the kernel.
 *
 * RX: each guest RX chain dp_rx_prepare hands us goes on the fill ring as
 * the address of a chunk placed so that the kernel writes the frame right
 * after the chain's 12-byte virtio_net_hdr_v1 (the kernel puts a frame at
 * chunk + headroom + XDP_PACKET_HEADROOM and writes at most frame_len bytes,
 * dropping larger frames; net/xdp.c chooses chunk size and headroom). A
 * chain whose first writable segment cannot hold header + frame_len, or
 * whose chunk would start before the UMEM, or that repeats an address
 * already posted, gets one of the queue's bounce chunks instead, and the
 * frame is copied into it when it comes (rx_bounced).
 *
 * TX: a guest frame whose bytes after the header are in one segment goes on
 * the TX ring at its own address; any other is copied into a bounce chunk
 * (tx_bounced). The chain goes back to the guest when its completion does.
 * In copy mode sendto() transmits; in zero-copy mode it wakes the driver. */
#include "net/xdp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/iov.h"
#include "net/csum.h"
#include "net/helper.h"

#define XDP_TX_RETRY_MIN_US   20
#define XDP_TX_RETRY_MAX_US   2000
#define XDP_KICK_TRIES        64
#define XDP_ERROR_CHECK_NS    250000000ull    /* look for a vanished interface this often when idle */

static uint64_t xq_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t rx_bounce_addr(const struct xdp_queue *xq, unsigned b)
{
	return xq->bounce_base + (uint64_t)b * XDP_CHUNK_MAX;
}

static uint64_t tx_bounce_addr(const struct xdp_queue *xq, unsigned b)
{
	return xq->bounce_base + (uint64_t)(XDP_RX_BOUNCE + b) * XDP_CHUNK_MAX;
}

static void xq_reset_buffers(struct xdp_queue *xq)
{
	xq->nr_rx_bounce_free = 0;
	for (unsigned b = XDP_RX_BOUNCE; b-- > 0;)
		xq->rx_bounce_free[xq->nr_rx_bounce_free++] = (uint16_t)b;
	xq->nr_tx_bounce_free = 0;
	for (unsigned b = XDP_TX_BOUNCE; b-- > 0;)
		xq->tx_bounce_free[xq->nr_tx_bounce_free++] = (uint16_t)b;
	xq->nr_tx_entry_free = 0;
	for (unsigned e = xq->xb->sizes.tx; e-- > 0;)
		xq->tx_entry_free[xq->nr_tx_entry_free++] = (uint16_t)e;
	xq->tx_has_pending = false;
}

/* ---- RX ------------------------------------------------------------------ */

/* The fill address that makes the kernel write this read's frame right
 * after the header in its own guest buffer, if it can. */
static bool rx_direct_addr(const struct xdp_queue *xq, const struct dp_read *r, uint64_t *addr)
{
	const struct xdp_backend *xb = xq->xb;
	/* SAFETY: iov[0] came from guest_mem_ptr(): inside guest RAM, which
	 * is inside the UMEM; xdp_rx_chunk_for keeps the kernel's writes in it. */
	if (r->nr_chains != 1 ||
	    !xdp_rx_chunk_for(&xb->geo, xdp_umem_offset(xb, r->iov[0].iov_base), r->iov[0].iov_len,
			      xb->umem_len, xb->zero_copy, addr))
		return false;
	return !addr_table_has(&xq->rx_posted, *addr);   /* posted twice: one copy bounces */
}

/* Give the kernel buffers for every read the guest's RX chains make, as
 * many as the fill ring takes. -1 if the guest's ring broke. */
static int xq_rx_refill(struct xdp_queue *xq, struct dp_queue *dp)
{
	struct xsk *s = &xq->sock;
	uint32_t room = xdp_ring_free(&s->fill), prod = *s->fill.producer, n = 0;
	int rc = 0;
	while (n < room && !addr_table_full(&xq->rx_posted)) {
		struct dp_read r;
		rc = dp_rx_prepare(dp, &r);
		if (rc <= 0)
			break;
		uint64_t addr;
		uint32_t val;
		if (rx_direct_addr(xq, &r, &addr)) {
			val = r.slot[0];
		} else if (xq->nr_rx_bounce_free) {
			unsigned b = xq->rx_bounce_free[--xq->nr_rx_bounce_free];
			xq->rx_bounce_read[b] = r;
			addr = rx_bounce_addr(xq, b);
			val = XDP_BOUNCE_TAG | b;
		} else {
			/* Every bounce chunk is out: this read waits in the pool
			 * until a frame brings one back. */
			dp_rx_complete(dp, &r, -EAGAIN);
			break;
		}
		addr_table_insert(&xq->rx_posted, addr, val);   /* room and no duplicate: checked */
		*xdp_ring_addr(&s->fill, prod + n) = addr;
		n++;
	}
	if (n) {
		xdp_ring_submit(&s->fill, n);
		/* Zero-copy drivers stop looking at an empty fill ring until told. */
		if (xdp_ring_needs_wakeup(&s->fill))
			recvfrom(s->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
	return rc < 0 ? -1 : 0;
}

static void xq_rx_bounced(struct xdp_queue *xq, struct dp_queue *dp, unsigned b, uint8_t *frame,
			  uint32_t len)
{
	static const uint8_t zero_hdr[XDP_VNET_HDR];
	struct dp_read *r = &xq->rx_bounce_read[b];
	csum_complete_partial(frame, len);
	/* The read's last iovec is dp's 64 KiB discard tail: a frame (at most
	 * a chunk) never runs past it; one larger than the guest's buffers is
	 * dropped and counted by dp_rx_complete. */
	iov_copy_in(r->iov, r->nr_iov, 0, zero_hdr, XDP_VNET_HDR);
	iov_copy_in(r->iov, r->nr_iov, XDP_VNET_HDR, frame, len);
	NET_STAT_ADD(dp->qp, rx_bounced, 1);
	dp_rx_complete(dp, r, (ssize_t)(XDP_VNET_HDR + len));
	xq->rx_bounce_free[xq->nr_rx_bounce_free++] = (uint16_t)b;
}

static void xq_rx_frame(struct xdp_queue *xq, struct dp_queue *dp, const struct xdp_desc *d)
{
	const struct xdp_geometry *g = &xq->xb->geo;
	uint64_t base = d->addr & XSK_UNALIGNED_BUF_ADDR_MASK;
	uint64_t off = d->addr >> XSK_UNALIGNED_BUF_OFFSET_SHIFT;
	uint32_t val;
	if (!addr_table_take(&xq->rx_posted, base, &val)) {
		dp_log(dp, "the kernel returned RX chunk %#llx, never posted: ignored", (unsigned long long)base);
		return;
	}
	bool bounce = val & XDP_BOUNCE_TAG;
	unsigned b = val & ~XDP_BOUNCE_TAG;
	/* Where our program leaves it: anywhere else, something moved it
	 * (another program's bpf_xdp_adjust_head) and it is not ours to
	 * place. */
	if (off != g->data_off || d->len > g->frame_len || d->len < XDP_ETH_HLEN) {
		NET_STAT_ADD(dp->qp, rx_dropped, 1);
		dp_log(dp, "frame of %u bytes at offset %llu of its chunk (expected %u, at most %u bytes): dropped",
		       d->len, (unsigned long long)off, g->data_off, g->frame_len);
		if (bounce) {
			dp_rx_complete(dp, &xq->rx_bounce_read[b], -ECANCELED);
			xq->rx_bounce_free[xq->nr_rx_bounce_free++] = (uint16_t)b;
		} else {
			struct dp_read r;
			dp_read_restore(dp, (uint16_t)val, &r);
			dp_rx_complete(dp, &r, -ECANCELED);
		}
		return;
	}
	if (bounce) {
		xq_rx_bounced(xq, dp, b, xq->xb->umem_area + base + off, d->len);
		return;
	}
	struct dp_read r;
	dp_read_restore(dp, (uint16_t)val, &r);
	uint8_t *hdr = r.iov[0].iov_base;
	/* SAFETY: the frame is at buf + 12 (off == data_off), len <= frame_len,
	 * and iov[0] holds 12 + frame_len bytes (rx_direct_addr). */
	csum_complete_partial(hdr + XDP_VNET_HDR, d->len);
	memset(hdr, 0, XDP_VNET_HDR);   /* no checksum or GSO to report; dp writes num_buffers */
	dp_rx_complete(dp, &r, (ssize_t)(XDP_VNET_HDR + d->len));
}

static unsigned xq_rx_reap(struct xdp_queue *xq, struct dp_queue *dp)
{
	struct xdp_ring *rx = &xq->sock.rx;
	uint32_t n = xdp_ring_avail(rx), cons = *rx->consumer;
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc d = *xdp_ring_desc(rx, cons + i);   /* shared memory: read it once */
		xq_rx_frame(xq, dp, &d);
	}
	if (n)
		xdp_ring_release(rx, n);
	return n;
}

/* The interface went away (the kernel unbinds the socket and reports
 * ENETDOWN on it, but poll says nothing): asked about now and then. */
static void xq_check_gone(struct xdp_queue *xq, struct dp_queue *dp)
{
	uint64_t now = xq_now_ns();
	if (now < xq->next_error_check_ns)
		return;
	xq->next_error_check_ns = now + XDP_ERROR_CHECK_NS;
	int e = 0;
	socklen_t len = sizeof(e);
	if (getsockopt(xq->sock.fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e)
		dp_backend_failed(dp, e);
}

static int xq_rx(struct net_queue_io *io, struct dp_queue *dp)
{
	struct xdp_queue *xq = io->priv;
	if (xq->sock.fd < 0)
		return 1;   /* no socket (an inactive queue): nothing to do until a restart */
	unsigned got = xq_rx_reap(xq, dp);
	if (xq_rx_refill(xq, dp) < 0)
		return -1;
	if (!got)
		xq_check_gone(xq, dp);
	/* With buffers posted, frames come to the RX ring: wait for it to be
	 * readable. With none, the guest has none to give: its kick. */
	return xq->rx_posted.count ? 0 : (dp->rx_waiting_kick ? 1 : 0);
}

/* ---- TX ------------------------------------------------------------------ */

static void xq_tx_reap(struct xdp_queue *xq, struct dp_queue *dp)
{
	struct xdp_ring *comp = &xq->sock.comp;
	uint32_t n = xdp_ring_avail(comp), cons = *comp->consumer;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = *xdp_ring_addr(comp, cons + i);
		uint32_t e;
		if (!addr_table_take(&xq->tx_inflight, addr, &e)) {
			dp_log(dp, "the kernel completed TX address %#llx, never sent: ignored", (unsigned long long)addr);
			continue;
		}
		struct xdp_tx_entry *t = &xq->tx_entry[e];
		dp_tx_done(dp, t->head, t->readable_len, (ssize_t)t->readable_len);
		if (t->bounce != UINT16_MAX)
			xq->tx_bounce_free[xq->nr_tx_bounce_free++] = t->bounce;
		xq->tx_entry_free[xq->nr_tx_entry_free++] = (uint16_t)e;
	}
	if (n) {
		xdp_ring_release(comp, n);
		xq->tx_backoff_us = XDP_TX_RETRY_MIN_US;
	}
}

/* The frame's address if the kernel can send it from where it is: its bytes
 * after the header in one segment. */
static bool tx_direct_addr(const struct xdp_queue *xq, const struct guest_chain *c, uint32_t len,
			   uint64_t *addr)
{
	size_t off = XDP_VNET_HDR;
	for (unsigned k = 0; k < c->nr_readable; k++) {
		if (off >= c->iov[k].iov_len) {
			off -= c->iov[k].iov_len;
			continue;
		}
		if (c->iov[k].iov_len - off < len)
			return false;   /* split over segments */
		/* SAFETY: a readable segment from guest_mem_ptr(): in the UMEM. */
		uint64_t a = xdp_umem_offset(xq->xb, (const uint8_t *)c->iov[k].iov_base + off);
		if (xq->xb->zero_copy && !xdp_within_page(a, len))
			return false;
		if (addr_table_has(&xq->tx_inflight, a))
			return false;   /* two frames at one address in flight: one copy bounces */
		*addr = a;
		return true;
	}
	return false;
}


enum tx_put { TX_PUT_OK, TX_PUT_DROPPED, TX_PUT_WAIT };

/* Put the pending chain on the TX ring at slot idx. */
static enum tx_put xq_tx_put(struct xdp_queue *xq, struct dp_queue *dp, uint32_t idx)
{
	const struct guest_chain *c = &xq->tx_pending;
	uint32_t len = c->readable_len - XDP_VNET_HDR;
	if (len < XDP_ETH_HLEN || len > xq->xb->geo.chunk_size) {
		dp_log(dp, "TX frame of %u bytes (head %u): not %u to %u bytes, dropped", len, c->head,
		       XDP_ETH_HLEN, xq->xb->geo.chunk_size);
		dp_tx_done(dp, c->head, c->readable_len, -EINVAL);
		return TX_PUT_DROPPED;
	}
	if (!xq->nr_tx_entry_free)
		return TX_PUT_WAIT;
	uint64_t addr;
	uint16_t bounce = UINT16_MAX;
	if (!tx_direct_addr(xq, c, len, &addr)) {
		if (!xq->nr_tx_bounce_free)
			return TX_PUT_WAIT;
		bounce = xq->tx_bounce_free[--xq->nr_tx_bounce_free];
		addr = tx_bounce_addr(xq, bounce);
		iov_copy_out(c->iov, c->nr_readable, XDP_VNET_HDR, xq->xb->umem_area + addr, len);
		NET_STAT_ADD(dp->qp, tx_bounced, 1);
	}
	uint16_t e = xq->tx_entry_free[--xq->nr_tx_entry_free];
	xq->tx_entry[e] = (struct xdp_tx_entry){ .head = c->head, .bounce = bounce,
						 .readable_len = c->readable_len };
	addr_table_insert(&xq->tx_inflight, addr, e);   /* entries <= table size, no duplicate */
	*xdp_ring_desc(&xq->sock.tx, idx) = (struct xdp_desc){ .addr = addr, .len = len };
	return TX_PUT_OK;
}

/* Make the kernel take what is on the TX ring. Copy mode sends in the
 * syscall, at most a budget of frames per call (32 by default): call again
 * while it says EAGAIN and takes some. 0, or a fatal -errno. */
static int xq_tx_kick(struct xdp_queue *xq)
{
	struct xdp_ring *tx = &xq->sock.tx;
	for (unsigned i = 0; i < XDP_KICK_TRIES; i++) {
		uint32_t cons = __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE);
		if (cons == *tx->producer || !xdp_ring_needs_wakeup(tx))
			return 0;
		if (sendto(xq->sock.fd, NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0) {
			if (xq->xb->zero_copy)
				return 0;   /* the driver sends from its own context */
			continue;
		}
		int e = errno;
		if (e == EBUSY)
			continue;   /* one frame dropped by the device, the rest go on */
		if (e == EAGAIN) {
			if (__atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) == cons)
				return 0;   /* no progress: device busy or completions due */
			continue;
		}
		if (dp_backend_error_is_fatal(e))
			return -e;
		return 0;   /* ENOBUFS and the like: try again on the next pass */
	}
	return 0;
}

static int xq_tx(struct net_queue_io *io, struct dp_queue *dp)
{
	struct xdp_queue *xq = io->priv;
	struct xdp_ring *tx = &xq->sock.tx;
	if (xq->sock.fd < 0) {
		dp_tx_drop_all(dp);   /* no socket (an inactive queue): do not let the guest's ring stall */
		return 0;
	}
	xq_tx_reap(xq, dp);
	uint32_t room = xdp_ring_free(tx), prod = *tx->producer, queued = 0;
	bool ring_full = false, waiting = false, broken = false;
	for (;;) {
		if (!xq->tx_has_pending) {
			int rc = dp_tx_pop(dp, &xq->tx_pending);
			if (rc <= 0) {
				broken = rc < 0;
				break;
			}
			xq->tx_has_pending = true;
		}
		if (queued == room) {
			ring_full = true;
			break;
		}
		enum tx_put p = xq_tx_put(xq, dp, prod + queued);
		if (p == TX_PUT_WAIT) {
			waiting = true;
			break;
		}
		xq->tx_has_pending = false;
		queued += p == TX_PUT_OK;
	}
	if (queued)
		xdp_ring_submit(tx, queued);
	int e = xq_tx_kick(xq);
	if (e && dp_backend_failed(dp, -e))
		return 0;   /* the engine stops using the queue */
	xq_tx_reap(xq, dp);
	if (broken)
		return -1;
	bool unsent = __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) != *tx->producer;
	if (ring_full && unsent) {
		io->tx_retry_us = 0;   /* the kernel must take from the ring: POLLOUT */
		return 1;
	}
	if (ring_full || waiting || unsent || xq->tx_inflight.count) {
		/* Completions are due (or frames the kernel did not take):
		 * nothing signals them, so come back, less often while none
		 * comes. */
		io->tx_retry_us = xq->tx_backoff_us;
		if (xq->tx_backoff_us < XDP_TX_RETRY_MAX_US)
			xq->tx_backoff_us *= 2;
		return 1;
	}
	return 0;
}

/* ---- the socket's life ------------------------------------------------------- */

static void xq_give_back(struct xdp_queue *xq, struct dp_queue *dp);

static int xq_start(struct net_queue_io *io, struct dp_queue *dp, struct vmm_err *err)
{
	struct xdp_queue *xq = io->priv;
	struct xdp_backend *xb = xq->xb;
	io->fd = -1;
	io->tx_retry_us = 0;
	/* An inactive queue keeps the backend's drain socket (xdp.c); the
	 * device restarts workers whenever that changes. */
	if (!net_qp_active(dp->qp))
		return 0;
	xq_reset_buffers(xq);
	/* The socket is made, bound and put in the XSKMAP by the backend's
	 * helper (net/helper.h): this thread makes no socket. Under the
	 * backend's lock, which the helper's steps run under too. */
	pthread_mutex_lock(&xb->lock);
	int rc = net_backend_queue_step(&xb->base, xq->index, NET_QUEUE_OPEN, err);
	/* Buffers first, frames after: a frame that found the socket with an
	 * empty fill ring would be dropped. */
	if (rc == 0)
		xq_rx_refill(xq, dp);
	if (rc == 0)
		rc = net_backend_queue_step(&xb->base, xq->index, NET_QUEUE_ATTACH, err);
	if (rc)
		xsk_close(&xq->sock);
	pthread_mutex_unlock(&xb->lock);
	if (rc) {
		xq_give_back(xq, dp);   /* what the refill posted, before the socket closed */
		return rc;
	}
	io->fd = xq->sock.fd;
	__atomic_store_n(&xq->drops_seen, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&xq->stats_fd, xq->sock.fd, __ATOMIC_RELEASE);
	__atomic_store_n(&xb->ever_started, true, __ATOMIC_RELEASE);
	xq->tx_backoff_us = XDP_TX_RETRY_MIN_US;
	xq->next_error_check_ns = xq_now_ns() + XDP_ERROR_CHECK_NS;
	return 0;
}

/* Every buffer the kernel had goes back: RX chains to dp's pool (unused),
 * TX chains to the guest (dropped: sent or not, we cannot tell). */
static void xq_give_back(struct xdp_queue *xq, struct dp_queue *dp)
{
	uint64_t key;
	uint32_t val;
	while (addr_table_take_any(&xq->rx_posted, &key, &val)) {
		if (val & XDP_BOUNCE_TAG) {
			dp_rx_complete(dp, &xq->rx_bounce_read[val & ~XDP_BOUNCE_TAG], -ECANCELED);
		} else {
			struct dp_read r;
			dp_read_restore(dp, (uint16_t)val, &r);
			dp_rx_complete(dp, &r, -ECANCELED);
		}
	}
	while (addr_table_take_any(&xq->tx_inflight, &key, &val))
		dp_tx_done(dp, xq->tx_entry[val].head, xq->tx_entry[val].readable_len, -ECANCELED);
	if (xq->tx_has_pending)
		dp_tx_done(dp, xq->tx_pending.head, xq->tx_pending.readable_len, -ECANCELED);
	xq_reset_buffers(xq);
}

static void xq_stop(struct net_queue_io *io, struct dp_queue *dp)
{
	struct xdp_queue *xq = io->priv;
	struct xdp_backend *xb = xq->xb;
	if (xq->sock.fd < 0)
		return;
	uint64_t invalid = 0, drops = xsk_drops(xq->sock.fd, &invalid);
	__atomic_store_n(&xq->stats_fd, -1, __ATOMIC_RELEASE);
	uint64_t seen = __atomic_load_n(&xq->drops_seen, __ATOMIC_RELAXED);
	if (drops > seen)
		__atomic_add_fetch(&xq->drops_carry, drops - seen, __ATOMIC_RELAXED);
	if (invalid)
		dp_log(dp, "the kernel refused %llu of this queue's descriptors", (unsigned long long)invalid);
	/* Closed first, buffers given back after: once the last reference to
	 * the socket (its fd and the rings' mappings; the engine holds none
	 * now) is gone, the kernel unbinds it and waits for every receive in
	 * progress (synchronize_net) before close() returns. */
	pthread_mutex_lock(&xb->lock);
	xsk_close(&xq->sock);
	pthread_mutex_unlock(&xb->lock);
	io->fd = -1;
	/* Zero copy: the driver may still DMA into buffers it took from the
	 * fill ring until the kernel's deferred release of the queue's pool
	 * has run; the queue is free again only then. */
	if (xb->zero_copy) {
		struct vmm_err err = { 0 };
		if (net_backend_queue_step(&xb->base, xq->index, NET_QUEUE_WAIT_FREE, &err) < 0)
			dp_log(dp, "%s", err.msg);
	}
	xq_give_back(xq, dp);
}

/* The helper's side of xq_start and xq_stop (net/helper.h): OPEN and
 * ATTACH run while the worker that asked holds xb->lock. */
int xdp_queue_step(struct net_backend *b, unsigned q, enum net_queue_step step, struct vmm_err *err)
{
	struct xdp_backend *xb = (struct xdp_backend *)b;   /* base comes first */
	struct xdp_queue *xq = &xb->q[q];
	switch (step) {
	case NET_QUEUE_OPEN: {
		int shared = xdp_backend_umem_fd(xb, q);
		struct xsk_umem_spec umem = { .area = xb->umem_area, .len = xb->umem_len,
					      .chunk_size = xb->geo.chunk_size, .headroom = xb->geo.headroom };
		uint16_t flags = (xb->zero_copy ? XDP_ZEROCOPY : XDP_COPY) | XDP_USE_NEED_WAKEUP;
		int rc = xsk_create(&xq->sock, shared < 0 ? &umem : NULL, &xb->sizes, err);
		if (rc == 0)
			rc = xsk_bind(&xq->sock, xb->iface.ifindex, q, shared, flags, err);
		if (rc)
			xsk_close(&xq->sock);
		return rc;
	}
	case NET_QUEUE_ATTACH:
		return xdp_prog_set_socket(&xb->prog, q, xq->sock.fd, err);
	case NET_QUEUE_WAIT_FREE:
		xdp_backend_wait_queue_free(xb, q);
		return 0;
	default:
		return vmm_err_set(err, EINVAL, "xdp backend: no queue step %u", (unsigned)step);
	}
}

void xdp_queue_io_setup(struct xdp_backend *xb, unsigned q)
{
	xb->base.io[q] = (struct net_queue_io){
		.fd = -1, .rx = xq_rx, .tx = xq_tx, .start = xq_start, .stop = xq_stop, .priv = &xb->q[q],
		/* Idle waits end four times a second to ask whether the
		 * interface is still there (xq_check_gone): the kernel reports
		 * its loss only through SO_ERROR and failing sends. */
		.rx_poll_limit_us = XDP_ERROR_CHECK_NS / 1000,
		/* stop closes the socket and gives its buffers back: nothing may hold it. */
		.not_fixed = true,
		.start_pace = &xb->start_pace,
	};
}

int xdp_queue_init(struct xdp_backend *xb, unsigned q, struct vmm_err *err)
{
	struct xdp_queue *xq = &xb->q[q];
	memset(xq, 0, sizeof(*xq));
	xq->xb = xb;
	xq->index = q;
	xq->sock.fd = -1;
	xq->stats_fd = -1;
	xq->bounce_base = xdp_umem_offset(xb, xb->tail + (uint64_t)q * XDP_TAIL_PER_QUEUE);
	xq->rx_bounce_read = calloc(XDP_RX_BOUNCE, sizeof(xq->rx_bounce_read[0]));
	xq->tx_entry = calloc(xb->sizes.tx, sizeof(xq->tx_entry[0]));
	xq->tx_entry_free = calloc(xb->sizes.tx, sizeof(xq->tx_entry_free[0]));
	if (!xq->rx_bounce_read || !xq->tx_entry || !xq->tx_entry_free ||
	    addr_table_init(&xq->rx_posted, xb->sizes.fill) < 0 ||
	    addr_table_init(&xq->tx_inflight, xb->sizes.tx) < 0)
		return vmm_err_set(err, ENOMEM, "out of memory for xdp queue %u", q);
	xq_reset_buffers(xq);
	xdp_queue_io_setup(xb, q);
	return 0;
}

void xdp_queue_free(struct xdp_queue *xq)
{
	addr_table_free(&xq->rx_posted);
	addr_table_free(&xq->tx_inflight);
	free(xq->rx_bounce_read);
	free(xq->tx_entry);
	free(xq->tx_entry_free);
	xq->rx_bounce_read = NULL;
	xq->tx_entry = NULL;
	xq->tx_entry_free = NULL;
}
