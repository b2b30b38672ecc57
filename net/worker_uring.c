/* SPDX-License-Identifier: Apache-2.0 */
/* The io_uring engine. One loop serves every queue pair of the worker.
 *
 * What the kernel does, measured (docs/virtio-net.md, "The io_uring engine"):
 * a readv SQE on a tap fd opened O_NONBLOCK does NOT fail with -EAGAIN when
 * the tap is empty: io_uring ignores O_NONBLOCK there, arms an internal poll
 * and parks the read until a frame comes. Parked reads pin guest buffers,
 * cannot be told apart from reads that will complete at once, and complete in
 * whatever order their wake-ups run. A read with RWF_NOWAIT, on the other
 * hand, comes back with -EAGAIN at once (tun and sockets honour it). So:
 *
 *  - RX on an fd (tap, packet rx=recv): bursts of readv SQEs with RWF_NOWAIT
 *    straight into guest buffers, all in one io_uring_enter; the kernel runs
 *    them in order and none parks, so frames keep their order. The first
 *    -EAGAIN ends the burst and arms one poll for readability; the next
 *    burst's size follows how many frames the last one found. A kernel that
 *    refuses RWF_NOWAIT for an fd (-EOPNOTSUPP) gets plain non-blocking readv
 *    calls for it instead, with one log line.
 *  - TX on an fd: one writev SQE per frame, straight from guest memory, all
 *    submitted with one io_uring_enter (tap writes complete inline).
 *  - Ring backends (TPACKET_V3, AF_XDP): their own rx()/tx() in each pass;
 *    the engine only waits for their fd.
 *  - Kicks: one multishot poll per kick eventfd for the worker's life (one
 *    CQE per guest kick; the counter is never read, there is no need).
 *  - Fixed files for the backend fds, SINGLE_ISSUER + DEFER_TASKRUN (task
 *    work runs only when we wait, not as interrupts), and, if asked, guest RAM
 *    as fixed buffers (READ_FIXED/WRITE_FIXED for one-segment chains,
 *    READV_FIXED/WRITEV_FIXED where the kernel has them): each probed, used
 *    when there, left out with one line when not.
 * After reaping, used rings are published and each device is interrupted at
 * most once per iteration. */
#include "net/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "net/helper.h"
#include "net/rate_limit.h"
#include "net/worker_poll.h"

#define URING_RX_READS  32     /* reads in flight per queue pair, at most */
#define URING_TX_BATCH  64     /* writes in flight per queue pair */
#define RX_BURST_MIN    4
/* Operations one queue pair can have in flight at once: its reads and
 * writes, two kick polls (or reads), an RX poll with its linked timeout or
 * the recheck timer, a TX poll, a cancel, and the rate limiter's timers of
 * both directions with their cancels (a live change). The ring is sized from this, so an SQE is always there
 * when asked for and the CQ can never overflow. */
#define URING_OPS_PER_QP (URING_RX_READS + URING_TX_BATCH + 2 + 2 + 1 + 1 + 4)
#define URING_OPS_LOOP   2     /* the stop poll and the final cancel */
_Static_assert(NET_WORKER_MAX_QPS * URING_OPS_PER_QP + URING_OPS_LOOP <= NET_URING_MAX_OPS,
	       "the helper would refuse a worker's ring");

/* Linux 6.15's vectored fixed-buffer ops; liburing 2.3 predates them. */
#ifndef IORING_OP_READV_FIXED
#define IORING_OP_READV_FIXED  60
#define IORING_OP_WRITEV_FIXED 61
#endif

enum op_type { OP_RX_READ = 1, OP_TX_WRITE, OP_RX_KICK, OP_TX_KICK, OP_STOP, OP_CANCEL, OP_RX_POLL,
	       OP_RX_RECHECK, OP_RX_POLL_TIMEOUT, OP_TX_POLL, OP_THROTTLE };

/* user_data: type | queue pair | slot */
static uint64_t op_pack(enum op_type t, unsigned qp, unsigned slot)
{
	return ((uint64_t)t << 48) | ((uint64_t)qp << 32) | slot;
}
static enum op_type op_type_of(uint64_t d) { return (enum op_type)(d >> 48); }
static unsigned op_qp(uint64_t d) { return (unsigned)(d >> 32) & 0xffff; }
static unsigned op_slot(uint64_t d) { return (unsigned)d; }

/* What this kernel's io_uring gave us. */
struct uring_features {
	bool fixed_files;
	bool fixed_buffers;
	bool vec_fixed;            /* READV_FIXED / WRITEV_FIXED */
	bool multishot_poll;
	const char *taskrun;       /* "defer", "coop" or "plain" */
};

struct uring_qp {
	struct dp_read read[URING_RX_READS];
	uint16_t read_free[URING_RX_READS];
	unsigned nr_read_free;
	struct guest_chain tx[URING_TX_BATCH];
	uint16_t tx_free[URING_TX_BATCH];
	unsigned nr_tx_free;
	uint64_t rx_kick_buf, tx_kick_buf;   /* only without multishot polls */
	bool was_active;
	/* RX */
	bool rx_poll_armed;        /* waiting for the backend to be readable (or a recheck timer) */
	bool rx_drained;           /* the last burst found the backend empty: poll before reading */
	bool rx_nowait;            /* RWF_NOWAIT works on this fd (else plain readv calls) */
	unsigned rx_inflight;      /* reads of the current burst not yet completed */
	unsigned rx_burst;         /* reads the next burst issues */
	unsigned rx_burst_done;    /* frames the current burst got */
	unsigned rechecks_left;    /* ring backends: timed re-checks left after a wake-up */
	/* Ring backends: a kick came while their poll or timer was armed. A
	 * backend that gives guest buffers to the kernel (AF_XDP's fill ring)
	 * must see new ones at once, not when the next frame or timer comes. */
	bool rx_kicked, tx_kicked;
	struct __kernel_timespec recheck_ts, poll_limit_ts;
	/* TX */
	bool tx_poll_armed;        /* a ring backend's TX is stopped: waiting for POLLOUT or its retry timer */
	/* Writes the backend refused for want of room (dp_tx_backend_full),
	 * oldest first, written again once tx_held_due (the retry timer,
	 * OP_TX_POLL, fired); meanwhile no new frame is taken. */
	uint16_t tx_held[URING_TX_BATCH];
	unsigned nr_tx_held;
	bool tx_held_due;
	unsigned tx_full_wait_us;   /* the last wait (dp_tx_full_backoff); 0 after a write went through */
	struct __kernel_timespec tx_retry_ts;
	/* The rate limiter holds TX [0] or RX [1] back: its timer is armed and
	 * the direction is not served until it fires. */
	bool throttle_armed[2];
	unsigned throttle_gen[2];  /* the limiter's generation when armed */
	unsigned throttle_seq[2];  /* which timer is the armed one (in its user_data) */
	struct __kernel_timespec throttle_ts[2];
	/* fixed-file indices (or the fd itself when not registered) */
	int fd_ref, rxk_ref, txk_ref;
	bool fd_plain;             /* the backend fd is not registered (io->not_fixed), the rest may be */
};

struct uring_loop {
	struct net_worker *w;
	struct io_uring ring;
	struct uring_features feat;
	struct uring_qp q[NET_WORKER_MAX_QPS];
	uint64_t stop_buf;
	int stop_ref;
	unsigned outstanding;      /* SQEs submitted or queued, not yet completed */
	unsigned next_first;       /* the pair the next pass serves first */
	bool stopping;
	struct net_poll_window poll;
};

/* ---- SQEs ---------------------------------------------------------------- */

/* An SQE for one more operation. The ring holds every operation the loop
 * can have in flight (URING_OPS_PER_QP), so this fails only if the kernel
 * refuses to take the queued ones; the caller then leaves the work where it
 * is (a TX frame stays in the guest's ring) and retries on the next pass. */
static struct io_uring_sqe *loop_sqe(struct uring_loop *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
	if (!sqe) {
		io_uring_submit(&l->ring);   /* SQ full: flush and retry */
		sqe = io_uring_get_sqe(&l->ring);
	}
	if (sqe)
		l->outstanding++;
	return sqe;
}

/* Is there room to queue n more operations (flushing the queue if need be)? */
static bool loop_has_room(struct uring_loop *l, unsigned n)
{
	if (io_uring_sq_space_left(&l->ring) >= n)
		return true;
	io_uring_submit(&l->ring);
	return io_uring_sq_space_left(&l->ring) >= n;
}

/* The fd of an SQE: a registered index, or the fd itself. */
static void sqe_file(const struct uring_loop *l, struct io_uring_sqe *sqe, int ref)
{
	sqe->fd = ref;
	if (l->feat.fixed_files)
		sqe->flags |= IOSQE_FIXED_FILE;
}

/* The same for queue i's backend fd, which may be the one left plain. */
static void sqe_backend_file(const struct uring_loop *l, unsigned i, struct io_uring_sqe *sqe)
{
	sqe->fd = l->q[i].fd_ref;
	if (l->feat.fixed_files && !l->q[i].fd_plain)
		sqe->flags |= IOSQE_FIXED_FILE;
}

/* ---- kicks ----------------------------------------------------------------- */

static void arm_kick(struct uring_loop *l, unsigned i, bool rx)
{
	struct uring_qp *uq = &l->q[i];
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return;
	int ref = rx ? uq->rxk_ref : uq->txk_ref;
	if (l->feat.multishot_poll)
		io_uring_prep_poll_multishot(sqe, 0, POLLIN);
	else
		io_uring_prep_read(sqe, 0, rx ? &uq->rx_kick_buf : &uq->tx_kick_buf, sizeof(uint64_t), 0);
	sqe_file(l, sqe, ref);
	io_uring_sqe_set_data64(sqe, op_pack(rx ? OP_RX_KICK : OP_TX_KICK, i, 0));
}

static void arm_stop(struct uring_loop *l)
{
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return;
	io_uring_prep_poll_add(sqe, 0, POLLIN);
	sqe_file(l, sqe, l->stop_ref);
	io_uring_sqe_set_data64(sqe, op_pack(OP_STOP, 0, 0));
}

/* ---- buffers ---------------------------------------------------------------- */

/* Which registered buffer (guest RAM region) holds [p, p+len), or -1. */
static int fixed_buf_index(const struct uring_loop *l, const void *p, size_t len)
{
	const struct guest_mem *m = l->w->cfg.uring.mem;
	const uint8_t *b = p;
	for (unsigned r = 0; m && r < m->nr_regions; r++) {
		const uint8_t *h = m->region[r].host;
		if (b >= h && len <= m->region[r].size && (size_t)(b - h) <= m->region[r].size - len)
			return (int)r;
	}
	return -1;
}

/* A readv or writev of iov[0..n) on queue i's backend, through guest RAM's
 * registered buffer when there is one that covers it. */
static void prep_rw(struct uring_loop *l, struct io_uring_sqe *sqe, bool write, unsigned i,
		    const struct iovec *iov, unsigned n)
{
	int idx = -1;
	if (l->feat.fixed_buffers && n == 1)
		idx = fixed_buf_index(l, iov[0].iov_base, iov[0].iov_len);
	if (idx >= 0 && write)
		io_uring_prep_write_fixed(sqe, 0, iov[0].iov_base, (unsigned)iov[0].iov_len, 0, idx);
	else if (idx >= 0)
		io_uring_prep_read_fixed(sqe, 0, iov[0].iov_base, (unsigned)iov[0].iov_len, 0, idx);
	else if (write)
		io_uring_prep_writev(sqe, 0, iov, n, 0);
	else
		io_uring_prep_readv(sqe, 0, iov, n, 0);
	sqe_backend_file(l, i, sqe);
}

/* ---- TX ----------------------------------------------------------------- */

/* A ring backend's TX stopped: wait for its fd to be writable (its ring is
 * full), or, when it asks to be called again after tx_retry_us (the kernel
 * owes it completions and will not say when they come), for that long. The
 * timer shares OP_TX_POLL's user_data, so one cancel covers both. */
static void uring_arm_tx_wait(struct uring_loop *l, unsigned i, unsigned retry_us)
{
	struct uring_qp *uq = &l->q[i];
	struct io_uring_sqe *sqe = uq->tx_poll_armed ? NULL : loop_sqe(l);
	if (!sqe)
		return;
	if (retry_us) {
		uq->tx_retry_ts = (struct __kernel_timespec){ .tv_sec = retry_us / 1000000,
							      .tv_nsec = (long long)(retry_us % 1000000) * 1000 };
		io_uring_prep_timeout(sqe, &uq->tx_retry_ts, 0, 0);
	} else {
		io_uring_prep_poll_add(sqe, 0, POLLOUT);
		sqe_backend_file(l, i, sqe);
	}
	io_uring_sqe_set_data64(sqe, op_pack(OP_TX_POLL, i, 0));
	uq->tx_poll_armed = true;
}

/* Write the frames the backend refused again, oldest first, once their
 * timer fired; until then wait for it. */
static void uring_tx_resubmit(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	if (!uq->tx_held_due) {
		if (!uq->tx_poll_armed) {
			uq->tx_full_wait_us = dp_tx_full_backoff(uq->tx_full_wait_us);
			uring_arm_tx_wait(l, i, uq->tx_full_wait_us);
		}
		return;
	}
	unsigned k = 0;
	while (k < uq->nr_tx_held && loop_has_room(l, 1)) {
		uint16_t slot = uq->tx_held[k++];
		struct guest_chain *c = &uq->tx[slot];
		struct io_uring_sqe *sqe = loop_sqe(l);
		prep_rw(l, sqe, true, i, c->iov, c->nr_readable);
		io_uring_sqe_set_data64(sqe, op_pack(OP_TX_WRITE, i, slot));
	}
	memmove(uq->tx_held, uq->tx_held + k, (uq->nr_tx_held - k) * sizeof(uq->tx_held[0]));
	uq->nr_tx_held -= k;
	uq->tx_held_due = uq->nr_tx_held != 0;
}

/* The frames still held go back to the guest as dropped: the queue was
 * switched off, or the worker stops. */
static void uring_tx_drop_held(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	for (unsigned k = 0; k < uq->nr_tx_held; k++) {
		uint16_t slot = uq->tx_held[k];
		dp_tx_complete(l->w->qp[i]->dp, &uq->tx[slot], -ECANCELED);
		uq->tx_free[uq->nr_tx_free++] = slot;
	}
	uq->nr_tx_held = 0;
	uq->tx_held_due = false;
}

/* The device's rate limiter told the last pop or read of this direction
 * to wait (dp_tx_take_throttle): a timer brings a pass back once it may go
 * on, and until then the direction is not served (the guest's TX frames
 * stay in its ring, no RX buffer is posted). A direction waiting for its
 * timer is not asked again before it fires. Without an SQE for the timer
 * it is not held back: a queue must never stall for want of a wake-up. */
/* Is this direction waiting for its timer? Not once the limiter has been
 * changed since (a live change is felt at once): that timer is cancelled,
 * and the direction asks the new limiter. */
static bool uring_throttle_waiting(struct uring_loop *l, unsigned i, bool tx)
{
	struct uring_qp *uq = &l->q[i];
	unsigned d = tx ? 0 : 1;
	if (!uq->throttle_armed[d])
		return false;
	struct net_queue_pair *qp = l->w->qp[i];
	if (rate_limit_gen(tx ? qp->tx_limit : qp->rx_limit) == uq->throttle_gen[d])
		return true;
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return true;   /* the old timer still ends the wait */
	io_uring_prep_cancel64(sqe, op_pack(OP_THROTTLE, i, d | uq->throttle_seq[d] << 1), 0);
	io_uring_sqe_set_data64(sqe, op_pack(OP_CANCEL, i, 0));
	uq->throttle_armed[d] = false;
	return false;
}

static void uring_throttle(struct uring_loop *l, unsigned i, bool tx)
{
	struct uring_qp *uq = &l->q[i];
	struct dp_queue *dp = l->w->qp[i]->dp;
	unsigned d = tx ? 0 : 1;
	uint64_t wait = tx ? dp_tx_take_throttle(dp) : dp_rx_take_throttle(dp);
	if (!wait || uq->throttle_armed[d])
		return;
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return;
	/* Absolute (CLOCK_MONOTONIC, as dp_now_ns): pairs told to wait for
	 * the same token wake together, whenever their timers were submitted,
	 * and the pass that follows serves them in turn. */
	uint64_t at = dp_now_ns() + wait;
	uq->throttle_ts[d] = (struct __kernel_timespec){ .tv_sec = (long long)(at / 1000000000ull),
							 .tv_nsec = (long long)(at % 1000000000ull) };
	io_uring_prep_timeout(sqe, &uq->throttle_ts[d], 0, IORING_TIMEOUT_ABS);
	uq->throttle_seq[d]++;
	io_uring_sqe_set_data64(sqe, op_pack(OP_THROTTLE, i, d | uq->throttle_seq[d] << 1));
	uq->throttle_gen[d] = rate_limit_gen(tx ? l->w->qp[i]->tx_limit : l->w->qp[i]->rx_limit);
	uq->throttle_armed[d] = true;
}

/* Pull every TX frame the guest has made available into writev SQEs. Room
 * for the write is made sure of before the frame leaves the guest's ring: a
 * frame popped is a frame written. */
static void uring_tx(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	struct net_queue_io *io = l->w->qp[i]->io;
	struct dp_queue *dp = l->w->qp[i]->dp;
	if (uring_throttle_waiting(l, i, true))
		return;
	if (io->tx) {
		if (uq->tx_poll_armed && !uq->tx_kicked)
			return;
		uq->tx_kicked = false;
		if (io->tx(io, dp) == 1 && !uq->tx_poll_armed)
			uring_arm_tx_wait(l, i, io->tx_retry_us);   /* its ring is full, or it owes completions */
		uring_throttle(l, i, true);
		return;
	}
	if (uq->nr_tx_held) {
		uring_tx_resubmit(l, i);
		return;
	}
	while (uq->nr_tx_free && loop_has_room(l, 1)) {
		uint16_t slot = uq->tx_free[uq->nr_tx_free - 1];
		struct guest_chain *c = &uq->tx[slot];
		if (dp_tx_pop(dp, c) <= 0)
			break;
		struct io_uring_sqe *sqe = loop_sqe(l);
		uq->nr_tx_free--;
		prep_rw(l, sqe, true, i, c->iov, c->nr_readable);
		io_uring_sqe_set_data64(sqe, op_pack(OP_TX_WRITE, i, slot));
	}
	uring_throttle(l, i, true);
}

/* ---- RX ------------------------------------------------------------------ */

/* Wait for the backend to be readable, bounded when the queue asks (a ring
 * that may miss a wake-up). */
static void uring_arm_rx_poll(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	const struct net_queue_io *io = l->w->qp[i]->io;
	if (!loop_has_room(l, 2))
		return;
	struct io_uring_sqe *sqe = loop_sqe(l);
	io_uring_prep_poll_add(sqe, 0, POLLIN);
	sqe_backend_file(l, i, sqe);
	io_uring_sqe_set_data64(sqe, op_pack(OP_RX_POLL, i, 0));
	if (io->rx_poll_limit_us) {
		struct io_uring_sqe *limit = loop_sqe(l);
		sqe->flags |= IOSQE_IO_LINK;
		uq->poll_limit_ts = (struct __kernel_timespec){ .tv_nsec = (long long)io->rx_poll_limit_us * 1000 };
		io_uring_prep_link_timeout(limit, &uq->poll_limit_ts, 0);
		io_uring_sqe_set_data64(limit, op_pack(OP_RX_POLL_TIMEOUT, i, 0));
	}
	uq->rx_poll_armed = true;
}

static void uring_arm_recheck(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	const struct net_queue_io *io = l->w->qp[i]->io;
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return;
	uq->recheck_ts = (struct __kernel_timespec){ .tv_nsec = (long long)io->rx_recheck_us * 1000 };
	io_uring_prep_timeout(sqe, &uq->recheck_ts, 0, 0);
	io_uring_sqe_set_data64(sqe, op_pack(OP_RX_RECHECK, i, 0));
	uq->rx_poll_armed = true;
	uq->rechecks_left--;
}

/* A ring backend: take what is ready; when nothing is, wait for the fd. */
static void uring_rx_ring(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	struct net_queue_io *io = l->w->qp[i]->io;
	if (uq->rx_poll_armed && !uq->rx_kicked)
		return;
	uq->rx_kicked = false;
	if (io->rx(io, l->w->qp[i]->dp) != 0)
		return;   /* no guest buffers (the RX kick resumes us), or broken */
	if (uq->rx_poll_armed)
		return;   /* still armed from before the kick */
	if (uq->rechecks_left)
		uring_arm_recheck(l, i);
	else
		uring_arm_rx_poll(l, i);
}

/* A kernel that will not do RWF_NOWAIT reads on this fd: non-blocking
 * readv calls, which return -EAGAIN when it is empty, in order. */
static void uring_rx_readv_calls(struct uring_loop *l, unsigned i)
{
	struct dp_queue *dp = l->w->qp[i]->dp;
	int fd = l->w->qp[i]->io->fd;
	struct dp_read r;
	while (dp_rx_prepare(dp, &r) > 0) {
		ssize_t n = readv(fd, r.iov, (int)r.nr_iov);
		int e = errno;
		dp_rx_complete(dp, &r, n < 0 ? -e : n);
		if (n < 0) {
			if (!dp_backend_failed(dp, e))
				l->q[i].rx_drained = true;
			return;
		}
	}
}

/* One burst of non-parking reads while the guest has buffers and the
 * backend may have frames; a poll once it had none. */
static void uring_rx_fd(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	struct dp_queue *dp = l->w->qp[i]->dp;
	if (uq->rx_poll_armed || uq->rx_inflight)
		return;
	if (uq->rx_drained) {
		uring_arm_rx_poll(l, i);
		return;
	}
	if (!uq->rx_nowait) {
		uring_rx_readv_calls(l, i);
		if (uq->rx_drained)
			uring_arm_rx_poll(l, i);
		return;
	}
	uq->rx_burst_done = 0;
	while (uq->nr_read_free && uq->rx_inflight < uq->rx_burst && loop_has_room(l, 1)) {
		uint16_t slot = uq->read_free[uq->nr_read_free - 1];
		struct dp_read *r = &uq->read[slot];
		if (dp_rx_prepare(dp, r) <= 0)
			return;
		struct io_uring_sqe *sqe = loop_sqe(l);
		uq->nr_read_free--;
		uq->rx_inflight++;
		prep_rw(l, sqe, false, i, r->iov, r->nr_iov);
		sqe->rw_flags = RWF_NOWAIT;
		io_uring_sqe_set_data64(sqe, op_pack(OP_RX_READ, i, slot));
	}
}

static void uring_rx(struct uring_loop *l, unsigned i)
{
	if (uring_throttle_waiting(l, i, false))
		return;
	if (l->w->qp[i]->io->rx)
		uring_rx_ring(l, i);
	else
		uring_rx_fd(l, i);
	uring_throttle(l, i, false);
}

/* The burst is over: size the next one from what this one found (grow
 * while every read got a frame, else aim just above what came). */
static void uring_rx_burst_done(struct uring_qp *uq)
{
	if (uq->rx_burst_done >= uq->rx_burst)
		uq->rx_burst = uq->rx_burst * 2 > URING_RX_READS ? URING_RX_READS : uq->rx_burst * 2;
	else
		uq->rx_burst = uq->rx_burst_done + 1 < RX_BURST_MIN ? RX_BURST_MIN : uq->rx_burst_done + 1;
}

static void uring_rx_read_done(struct uring_loop *l, unsigned i, unsigned slot, int res)
{
	struct uring_qp *uq = &l->q[i];
	struct dp_queue *dp = l->w->qp[i]->dp;
	dp_rx_complete(dp, &uq->read[slot], res);
	uq->read_free[uq->nr_read_free++] = (uint16_t)slot;
	uq->rx_inflight--;
	if (res >= 0)
		uq->rx_burst_done++;
	else if (res == -EAGAIN)
		uq->rx_drained = true;   /* empty: wait for readability */
	else if (res == -EOPNOTSUPP && uq->rx_nowait) {
		uq->rx_nowait = false;
		dp_log(dp, "this kernel does not do RWF_NOWAIT reads on the backend: plain readv calls instead");
	} else if (res < 0) {
		dp_backend_failed(dp, -res);
	}
	if (uq->rx_inflight == 0)
		uring_rx_burst_done(uq);
}

/* A pair that VQ_PAIRS_SET turned off: stop waiting on its backend
 * (reads never wait, only the polls do). */
static void uring_deactivate(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	uring_tx_drop_held(l, i);
	for (int k = 0; k < 2; k++) {
		bool armed = k == 0 ? uq->rx_poll_armed : uq->tx_poll_armed;
		if (!armed)
			continue;
		struct io_uring_sqe *sqe = loop_sqe(l);
		if (!sqe)
			return;
		io_uring_prep_cancel64(sqe, op_pack(k == 0 ? OP_RX_POLL : OP_TX_POLL, i, 0), 0);
		io_uring_sqe_set_data64(sqe, op_pack(OP_CANCEL, i, 0));
	}
}

/* ---- completions -------------------------------------------------------------- */

static void uring_poll_done(struct uring_loop *l, unsigned i, int res)
{
	struct uring_qp *uq = &l->q[i];
	struct dp_queue *dp = l->w->qp[i]->dp;
	uq->rx_poll_armed = false;   /* the next service pass reads */
	uq->rx_drained = false;
	uq->rechecks_left = l->w->qp[i]->io->rx_rechecks;
	if (res > 0 && (res & (POLLERR | POLLHUP))) {
		int e = net_worker_fd_error(l->w->qp[i]->io->fd);
		if (e && !dp_backend_failed(dp, e))
			dp_log(dp, "backend error: %s", strerror(e));
	}
}

static void uring_kick_done(struct uring_loop *l, unsigned i, bool rx, const struct io_uring_cqe *cqe)
{
	struct dp_queue *dp = l->w->qp[i]->dp;
	if (cqe->res > 0) {   /* not the cancelled one at shutdown */
		rx ? dp_rx_kicked(dp) : dp_tx_kicked(dp);
		*(rx ? &l->q[i].rx_kicked : &l->q[i].tx_kicked) = true;
	}
	/* A multishot poll stays armed while the kernel says MORE. */
	if (!l->stopping && !(l->feat.multishot_poll && (cqe->flags & IORING_CQE_F_MORE)))
		arm_kick(l, i, rx);
}

static void uring_complete(struct uring_loop *l, struct io_uring_cqe *cqe)
{
	uint64_t d = io_uring_cqe_get_data64(cqe);
	unsigned i = op_qp(d), slot = op_slot(d);
	struct uring_qp *uq = &l->q[i];
	struct dp_queue *dp = l->w->qp[i]->dp;
	/* A multishot CQE with MORE is not the operation's last. */
	if (!(cqe->flags & IORING_CQE_F_MORE))
		l->outstanding--;
	switch (op_type_of(d)) {
	case OP_RX_READ:
		uring_rx_read_done(l, i, slot, cqe->res);
		break;
	case OP_TX_WRITE:
		if (dp_tx_backend_full(cqe->res) && !l->stopping) {
			uq->tx_held[uq->nr_tx_held++] = (uint16_t)slot;   /* not sent: again later */
			uq->tx_held_due = false;
			break;
		}
		if (cqe->res >= 0)
			uq->tx_full_wait_us = 0;
		/* Refused as the worker stops: not sent, and not an error. */
		dp_tx_complete(dp, &uq->tx[slot], dp_tx_backend_full(cqe->res) ? -ECANCELED : cqe->res);
		uq->tx_free[uq->nr_tx_free++] = (uint16_t)slot;
		if (cqe->res < 0)
			dp_backend_failed(dp, -cqe->res);
		break;
	case OP_RX_KICK:
		uring_kick_done(l, i, true, cqe);
		break;
	case OP_TX_KICK:
		uring_kick_done(l, i, false, cqe);
		break;
	case OP_STOP:
		l->stopping = true;
		break;
	case OP_RX_POLL:
		uring_poll_done(l, i, cqe->res);
		break;
	case OP_RX_RECHECK:
		uq->rx_poll_armed = false;
		break;
	case OP_TX_POLL:
		uq->tx_poll_armed = false;
		uq->tx_held_due = uq->nr_tx_held != 0;
		break;
	case OP_THROTTLE:
		/* The armed one (not one a live change cancelled): the next
		 * pass asks again. */
		if (uq->throttle_seq[slot & 1] == slot >> 1)
			uq->throttle_armed[slot & 1] = false;
		break;
	case OP_RX_POLL_TIMEOUT:
	case OP_CANCEL:
		break;   /* the operation they bound or cancel completes on its own */
	}
}

static unsigned uring_reap(struct uring_loop *l)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	io_uring_for_each_cqe(&l->ring, head, cqe) {
		uring_complete(l, cqe);
		n++;
	}
	io_uring_cq_advance(&l->ring, n);
	return n;
}

/* ---- the loop ------------------------------------------------------------------ */

/* Did a pass do anything? (frames moved either way, completions seen) */
static uint64_t uring_progress(const struct uring_loop *l)
{
	uint64_t p = 0;
	for (unsigned i = 0; i < l->w->nr_qps; i++) {
		const struct net_queue_stats *s = &l->w->qp[i]->stats;
		p += s->rx_frames + s->tx_frames + s->tx_dropped + s->rx_dropped;
	}
	return p;
}

static void uring_service(struct uring_loop *l)
{
	/* Each pass starts one pair further: pairs sharing the device's rate
	 * limit take turns at the tokens a refill brings. */
	unsigned n = l->w->nr_qps, first = l->next_first;
	l->next_first = n ? (first + 1) % n : 0;
	for (unsigned k = 0; k < n; k++) {
		unsigned i = (first + k) % n;
		struct dp_queue *dp = l->w->qp[i]->dp;
		if (!net_qp_active(l->w->qp[i])) {
			if (l->q[i].was_active)
				uring_deactivate(l, i);
			l->q[i].was_active = false;
			continue;
		}
		l->q[i].was_active = true;
		if (net_qp_paused(l->w->qp[i]))
			continue;   /* no new frame; what is in flight finishes */
		if (dp->backend_gone || net_qp_link_down(l->w->qp[i])) {
			/* no I/O on a dead fd; none without carrier */
			uring_tx_drop_held(l, i);
			dp_tx_drop_all(dp);
			continue;
		}
		uring_tx(l, i);
		uring_rx(l, i);
	}
	/* Paused with nothing of its pairs in flight: say so (the device
	 * waits for it), or take it back once resumed. */
	bool idle = n > 0;
	for (unsigned i = 0; i < n && idle; i++) {
		const struct uring_qp *uq = &l->q[i];
		idle = net_qp_paused(l->w->qp[i]) && uq->rx_inflight == 0 &&
		       uq->nr_tx_free + uq->nr_tx_held == URING_TX_BATCH;
	}
	/* Only this worker writes it: no store on every pass, only on a change. */
	if (__atomic_load_n(&l->w->paused_idle, __ATOMIC_RELAXED) != idle)
		__atomic_store_n(&l->w->paused_idle, idle, __ATOMIC_RELEASE);
}

/* While spinning: has work come in without our being told? New TX frames
 * show in the guest's ring; completions and kicks need a look into the
 * kernel with DEFER_TASKRUN, so every few turns the loop asks for them. */
static bool uring_work_waiting(struct uring_loop *l, unsigned turn)
{
	if (io_uring_cq_ready(&l->ring))
		return true;
	for (unsigned i = 0; i < l->w->nr_qps; i++) {
		struct net_queue_pair *qp = l->w->qp[i];
		if (net_qp_active(qp) && !net_qp_paused(qp) && !qp->dp->backend_gone && !l->q[i].throttle_armed[0] &&
		    qp->guest->ops->pending(qp->tx.ring))
			return true;
	}
	if ((turn & 63) == 63 && io_uring_get_events(&l->ring) >= 0 && io_uring_cq_ready(&l->ring))
		return true;
	return false;
}

static void uring_spin(struct uring_loop *l)
{
	uint64_t until = net_poll_window_start(&l->poll);
	bool found = false;
	for (unsigned turn = 0; net_poll_now_ns() < until; turn++) {
		if (uring_work_waiting(l, turn)) {
			found = true;
			break;
		}
		__builtin_ia32_pause();
	}
	net_poll_window_end(&l->poll, found);
}

/* ---- set-up and teardown -------------------------------------------------------- */

/* A ring with SINGLE_ISSUER + DEFER_TASKRUN (Linux 6.1), else COOP_TASKRUN
 * (5.19), else plain; every op the loop can have in flight fits it. It is
 * made disabled and restricted to the engine's operations by the device's
 * helper (net_uring_make_ring, net/helper.h: no worker, nor the spawner
 * that starts it, may call io_uring_setup); the worker maps it, registers
 * its resources and enables it, which makes it the ring's single issuer. */
static int uring_init_ring(struct uring_loop *l, unsigned ops)
{
	struct net_worker *w = l->w;
	struct io_uring_params p;
	int fd = -1;
	struct vmm_err err = { 0 };
	int rc = w->cfg.backend ? net_backend_make_ring(w->cfg.backend, ops, w->cfg.uring.no_defer_taskrun, &fd, &p, &err)
				: net_uring_make_ring(ops, w->cfg.uring.no_defer_taskrun, &fd, &p, &err);
	if (rc < 0) {
		snprintf(w->error, sizeof(w->error), "%s", err.msg);
		return rc;
	}
	rc = net_uring_map(fd, &p, &l->ring);
	if (rc < 0) {
		close(fd);
		snprintf(w->error, sizeof(w->error), "io_uring mmap: %s", strerror(-rc));
		return rc;
	}
	l->feat.taskrun = p.flags & IORING_SETUP_DEFER_TASKRUN ? "defer" :
			  p.flags & IORING_SETUP_COOP_TASKRUN ? "coop" : "plain";
	l->feat.multishot_poll = p.features & IORING_FEAT_FAST_POLL;   /* 5.13+ has both */
	return 0;
}

int net_uring_map(int fd, struct io_uring_params *p, struct io_uring *ring)
{
	int rc = io_uring_queue_mmap(fd, p, ring);
	if (rc < 0)
		return rc;
	/* What io_uring_queue_init_params does after mapping a ring it made
	 * (liburing 2.3): SQ slots map straight to SQEs; the features. */
	for (unsigned i = 0; i < ring->sq.ring_entries; i++)
		ring->sq.array[i] = i;
	ring->features = p->features;
	return 0;
}

int net_uring_make_ring(unsigned ops, bool no_defer_taskrun, int *fd, struct io_uring_params *out,
			struct vmm_err *err)
{
	static const unsigned tries[] = {
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	*fd = -1;
	if (ops == 0 || ops > NET_URING_MAX_OPS)
		return vmm_err_set(err, EINVAL, "io_uring: %u entries asked for (at most %u)", ops, NET_URING_MAX_OPS);
	int rc = -EINVAL;
	for (size_t t = no_defer_taskrun ? 1 : 0; t < sizeof(tries) / sizeof(tries[0]); t++) {
		struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE | IORING_SETUP_R_DISABLED | tries[t],
					     .cq_entries = ops };
		rc = io_uring_setup(ops, &p);
		if (rc >= 0) {
			int r = net_uring_restrict_fd(rc);
			if (r < 0) {
				close(rc);
				return vmm_err_sys(err, -r, "io_uring restrictions");
			}
			*fd = rc;
			*out = p;
			return 0;
		}
		if (rc != -EINVAL)
			break;
	}
	return vmm_err_sys(err, -rc, "io_uring_setup");
}

static void uring_probe_ops(struct uring_loop *l)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(&l->ring);
	if (!p)
		return;
	l->feat.vec_fixed = io_uring_opcode_supported(p, IORING_OP_READV_FIXED) &&
			    io_uring_opcode_supported(p, IORING_OP_WRITEV_FIXED);
	io_uring_free_probe(p);
}

/* Backend fds, kick eventfds and the stop eventfd as fixed files. */
static void uring_register_files(struct uring_loop *l)
{
	struct net_worker *w = l->w;
	int fds[3 * NET_WORKER_MAX_QPS + 1];
	unsigned n = 0;
	for (unsigned i = 0; i < w->nr_qps; i++) {
		l->q[i].fd_ref = w->qp[i]->io->fd;
		l->q[i].rxk_ref = w->qp[i]->rx.kick_fd;
		l->q[i].txk_ref = w->qp[i]->tx.kick_fd;
	}
	l->stop_ref = w->stop_fd;
	if (w->cfg.uring.no_fixed_files)
		return;
	for (unsigned i = 0; i < w->nr_qps; i++) {
		/* -1 is a hole: a gone or inactive queue, or a backend fd the
		 * ring must not hold (not_fixed), used as it is. */
		l->q[i].fd_plain = w->qp[i]->io->not_fixed;
		fds[n++] = l->q[i].fd_plain ? -1 : w->qp[i]->io->fd;
		fds[n++] = w->qp[i]->rx.kick_fd;
		fds[n++] = w->qp[i]->tx.kick_fd;
	}
	fds[n++] = w->stop_fd;
	if (io_uring_register_files(&l->ring, fds, n) < 0)
		return;   /* the plain fds are used */
	l->feat.fixed_files = true;
	for (unsigned i = 0; i < w->nr_qps; i++) {
		if (!l->q[i].fd_plain)
			l->q[i].fd_ref = (int)(3 * i);
		l->q[i].rxk_ref = (int)(3 * i + 1);
		l->q[i].txk_ref = (int)(3 * i + 2);
	}
	l->stop_ref = (int)(n - 1);
}

/* Guest RAM as fixed buffers: each region pinned once (it all becomes
 * resident: asked for explicitly). io_uring takes at most 1 GiB per buffer. */
static void uring_register_buffers(struct uring_loop *l)
{
	const struct guest_mem *m = l->w->cfg.uring.mem;
	if (!l->w->cfg.uring.fixed_buffers || !m)
		return;
	struct iovec iov[GUEST_MEM_MAX_REGIONS];
	for (unsigned r = 0; r < m->nr_regions; r++) {
		if (m->region[r].size > (1ull << 30))
			return;   /* larger regions stay unregistered */
		iov[r] = (struct iovec){ .iov_base = m->region[r].host, .iov_len = m->region[r].size };
	}
	l->feat.fixed_buffers = io_uring_register_buffers(&l->ring, iov, m->nr_regions) == 0;
}

/* What the engine submits, and nothing else: seccomp sees io_uring_enter
 * but not the operations it carries, so the ring itself is restricted
 * (IORING_REGISTER_RESTRICTIONS, before it is enabled; they bind from
 * IORING_REGISTER_ENABLE_RINGS on, so the worker can still register its
 * files and buffers in between). Without this a worker
 * could openat, connect or sendmsg through its ring whatever its filter
 * says. (The vectored fixed-buffer ops are not used: prep_rw takes the
 * single-segment ones, which every kernel with fixed buffers has.) */
static const uint8_t uring_allowed_ops[] = {
	IORING_OP_READ, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_READ_FIXED,
	IORING_OP_WRITE_FIXED, IORING_OP_POLL_ADD, IORING_OP_TIMEOUT, IORING_OP_LINK_TIMEOUT,
	IORING_OP_ASYNC_CANCEL,
};

static const uint8_t uring_allowed_register_ops[] = { IORING_UNREGISTER_FILES, IORING_UNREGISTER_BUFFERS };

int net_uring_restrict_fd(int ring_fd)
{
	struct io_uring_restriction res[sizeof(uring_allowed_ops) + 1 + sizeof(uring_allowed_register_ops)];
	memset(res, 0, sizeof(res));
	unsigned n = 0;
	for (; n < sizeof(uring_allowed_ops); n++) {
		res[n].opcode = IORING_RESTRICTION_SQE_OP;
		res[n].sqe_op = uring_allowed_ops[n];
	}
	res[n].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[n++].sqe_flags = IOSQE_IO_LINK | IOSQE_FIXED_FILE;   /* poll + its timeout; fixed files */
	/* Files and buffers are registered before the ring is enabled; once
	 * it is, io_uring_register only takes them back (uring_unregister, as
	 * the worker stops). Debian 12's liburing.so does not export
	 * io_uring_register_restrictions or io_uring_enable_rings; its raw
	 * io_uring_register does the same, returning -errno. */
	for (size_t k = 0; k < sizeof(uring_allowed_register_ops); k++) {
		res[n].opcode = IORING_RESTRICTION_REGISTER_OP;
		res[n++].register_op = uring_allowed_register_ops[k];
	}
	return io_uring_register((unsigned)ring_fd, IORING_REGISTER_RESTRICTIONS, res, n);
}

int net_uring_enable(struct io_uring *ring)
{
	return io_uring_register((unsigned)ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
}

/* Give the fixed files and buffers back before the ring goes. A ring's
 * close() leaves its teardown to a kernel work item (io_ring_exit_work),
 * which drops the files only at its end: a tap queue stays attached for
 * 20-40 ms after io_uring_queue_exit (measured, Linux 6.18), so a minivmm
 * started on the same tap right after this one exits is refused ("already
 * in use"), and guest RAM stays pinned as long. Unregistered, they go now,
 * in this thread. Only once nothing is in flight (an operation left behind
 * may still use them); if the kernel refuses, the ring's teardown drops
 * them later. */
static void uring_unregister(struct uring_loop *l)
{
	if (l->outstanding)
		return;
	if (l->feat.fixed_files)
		io_uring_unregister_files(&l->ring);
	if (l->feat.fixed_buffers)
		io_uring_unregister_buffers(&l->ring);
}

static int uring_setup(struct uring_loop *l, struct net_worker *w)
{
	memset(l, 0, sizeof(*l));
	l->w = w;
	unsigned ops = w->nr_qps * URING_OPS_PER_QP + URING_OPS_LOOP;
	int rc = uring_init_ring(l, ops);
	if (rc < 0)
		return rc;
	uring_probe_ops(l);
	/* Non-blocking for the readv fallback (io_uring's own reads use
	 * RWF_NOWAIT, which does not depend on it), and set BEFORE the fds are
	 * registered: Linux 6.1 works out once, at registration, whether a
	 * registered file can do non-blocking I/O; a tap made O_NONBLOCK
	 * after it then had every write complete with -EAGAIN without reaching
	 * the tap (found by the nested tests, Debian's 6.1 kernel). */
	for (unsigned i = 0; i < w->nr_qps; i++) {
		int fd = w->qp[i]->io->fd;
		if (fd >= 0)
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	}
	uring_register_files(l);
	uring_register_buffers(l);
	rc = net_uring_enable(&l->ring);
	if (rc < 0) {
		snprintf(w->error, sizeof(w->error), "io_uring enable: %s", strerror(-rc));
		uring_unregister(l);
		io_uring_queue_exit(&l->ring);
		return rc;
	}
	net_poll_window_init(&l->poll, w->cfg.poll_us);
	for (unsigned i = 0; i < w->nr_qps; i++) {
		struct uring_qp *uq = &l->q[i];
		for (unsigned s = 0; s < URING_RX_READS; s++)
			uq->read_free[uq->nr_read_free++] = (uint16_t)s;
		for (unsigned s = 0; s < URING_TX_BATCH; s++)
			uq->tx_free[uq->nr_tx_free++] = (uint16_t)s;
		uq->rx_nowait = true;
		uq->rx_burst = RX_BURST_MIN;
		arm_kick(l, i, true);
		arm_kick(l, i, false);
	}
	arm_stop(l);
	return 0;
}

/* Cancel everything and wait for it: after this no read can land in guest
 * memory, which the guest may reuse after a reset. io_uring_submit_and_wait
 * returns -errno (it does not set errno): a signal (-EINTR) or a busy
 * completion queue (-EBUSY, -EAGAIN) only means "wait again". Anything else
 * is a broken ring; we keep trying for a while, then give up and say so
 * (w->left_in_flight): returning early would let a late read write into
 * memory the guest owns again. */
#define DRAIN_GIVE_UP_NS (10ull * 1000000000ull)

static void uring_drain(struct uring_loop *l)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
	if (sqe) {
		io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
		io_uring_sqe_set_data64(sqe, op_pack(OP_CANCEL, 0, 0));
		l->outstanding++;
	}
	uint64_t give_up = 0;
	while (l->outstanding) {
		int rc = io_uring_submit_and_wait(&l->ring, 1);
		uring_reap(l);
		if (rc >= 0 || rc == -EINTR || rc == -EBUSY || rc == -EAGAIN || rc == -ETIME)
			continue;
		if (!give_up) {
			give_up = net_poll_now_ns() + DRAIN_GIVE_UP_NS;
			snprintf(l->w->error, sizeof(l->w->error), "io_uring drain: %s", strerror(-rc));
		}
		if (net_poll_now_ns() > give_up)
			break;
		struct timespec pause = { .tv_nsec = 1000000 };
		nanosleep(&pause, NULL);
	}
	l->w->left_in_flight = l->outstanding;
}

int net_uring_probe(struct vmm_err *err)
{
	struct io_uring ring;
	int rc = io_uring_queue_init(2, &ring, 0);
	if (rc < 0)
		return vmm_err_sys(err, -rc, "io_uring is not available (engine=epoll works without it)");
	/* With nothing in flight, a supported CANCEL_ANY finds nothing (-ENOENT);
	 * a kernel without it rejects the flag (-EINVAL). */
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	struct io_uring_cqe *cqe;
	rc = io_uring_submit_and_wait(&ring, 1);
	int res = rc < 0 ? rc : (io_uring_peek_cqe(&ring, &cqe) == 0 ? cqe->res : -EIO);
	io_uring_queue_exit(&ring);
	if (res == -EINVAL)
		return vmm_err_set(err, ENOTSUP,
				   "this kernel's io_uring lacks IORING_ASYNC_CANCEL_ANY (Linux 5.19 or later); use --net engine=epoll");
	if (res < 0 && res != -ENOENT)
		return vmm_err_sys(err, -res, "io_uring probe");
	return 0;
}

void net_uring_describe(const struct net_worker *w, char *buf, size_t size)
{
	/* Written once by the worker, then published. */
	bool ready = __atomic_load_n(&w->uring_features_ready, __ATOMIC_ACQUIRE);
	snprintf(buf, size, "%s", ready ? w->uring_features : "");
}

static void uring_note_features(struct uring_loop *l)
{
	if (__atomic_load_n(&l->w->uring_features_ready, __ATOMIC_ACQUIRE))
		return;
	snprintf(l->w->uring_features, sizeof(l->w->uring_features),
		 "taskrun=%s fixed-files=%s fixed-buffers=%s%s multishot-poll=%s",
		 l->feat.taskrun, l->feat.fixed_files ? "on" : "off",
		 l->feat.fixed_buffers ? "on" : "off",
		 l->feat.fixed_buffers ? (l->feat.vec_fixed ? " (vectored too)" : " (single-segment)") : "",
		 l->feat.multishot_poll ? "on" : "off");
	__atomic_store_n(&l->w->uring_features_ready, true, __ATOMIC_RELEASE);
}

int net_worker_run_uring(struct net_worker *w)
{
	struct uring_loop *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	int rc = uring_setup(l, w);
	if (rc < 0) {
		free(l);
		return rc;
	}
	uring_note_features(l);
	/* Set up; from here on the guest's rings drive this thread. A worker
	 * that cannot confine itself carries no traffic. */
	rc = net_worker_confine(w);
	if (rc < 0)
		l->stopping = true;
	uint64_t slept_ns = UINT64_MAX;
	while (!l->stopping) {
		uint64_t before = uring_progress(l);
		uring_service(l);
		/* Publish before sleeping: ring-style RX delivers synchronously
		 * in uring_service, and the guest must see it now. */
		net_worker_flush(w);
		bool worked = uring_progress(l) != before;
		net_poll_window_slept(&l->poll, slept_ns, worked);
		net_poll_window_note(&l->poll, worked);
		if (!io_uring_cq_ready(&l->ring) && net_poll_window_wanted(&l->poll)) {
			io_uring_submit(&l->ring);
			uring_spin(l);
		}
		bool block = !io_uring_cq_ready(&l->ring);
		uint64_t t0 = block ? net_poll_now_ns() : 0;
		rc = io_uring_submit_and_wait(&l->ring, block ? 1 : 0);
		slept_ns = block ? net_poll_now_ns() - t0 : UINT64_MAX;
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY && rc != -ETIME) {
			snprintf(w->error, sizeof(w->error), "io_uring_submit_and_wait: %s", strerror(-rc));
			break;
		}
		uring_reap(l);
	}
	l->stopping = true;
	uring_drain(l);
	for (unsigned i = 0; i < w->nr_qps; i++)
		uring_tx_drop_held(l, i);
	net_worker_flush(l->w);
	uring_unregister(l);
	io_uring_queue_exit(&l->ring);
	free(l);
	return rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY && rc != -ETIME ? rc : 0;
}
