/* The io_uring engine. One loop serves every queue pair of the worker:
 *  - TX: drain the avail ring, one writev SQE per frame straight from guest
 *    memory, all submitted with one io_uring_enter; tap writes complete
 *    inline, so their CQEs are reaped in the same iteration;
 *  - RX: once the backend is readable, one batch of up to URING_RX_READS
 *    readv SQEs straight into guest buffers on the non-blocking fd. They
 *    run in order within one io_uring_enter, so frames keep their order;
 *    the first -EAGAIN ends the batch and re-arms a poll on the fd.
 *    (Reads left waiting in the kernel would complete in any order and
 *    reorder a flow.)
 *  - kicks: one read SQE on each kick eventfd.
 * After reaping, used rings are published and each device is interrupted
 * at most once per iteration. */
#include "net/worker.h"

#include "net/packet.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define URING_RX_READS  32     /* reads posted per queue pair */
#define URING_TX_BATCH  64     /* writes in flight per queue pair */
/* Operations one queue pair can have in flight at once: its reads and
 * writes, a read on each kick eventfd, an RX poll with its linked timeout
 * (or the retry timer), and a cancel. The ring is sized from this, so an SQE
 * is always there when asked for and the CQ can never overflow. */
#define URING_OPS_PER_QP (URING_RX_READS + URING_TX_BATCH + 2 + 2 + 1)
#define URING_OPS_LOOP   2     /* the stop read and the final cancel */

enum op_type { OP_RX_READ = 1, OP_TX_WRITE, OP_RX_KICK, OP_TX_KICK, OP_STOP, OP_CANCEL, OP_RX_POLL,
	       OP_RX_RETRY, OP_RX_POLL_TIMEOUT };

/* user_data: type | queue pair | slot */
static uint64_t op_pack(enum op_type t, unsigned qp, unsigned slot)
{
	return ((uint64_t)t << 48) | ((uint64_t)qp << 32) | slot;
}
static enum op_type op_type_of(uint64_t d) { return (enum op_type)(d >> 48); }
static unsigned op_qp(uint64_t d) { return (unsigned)(d >> 32) & 0xffff; }
static unsigned op_slot(uint64_t d) { return (unsigned)d; }

struct uring_qp {
	struct dp_read read[URING_RX_READS];
	uint16_t read_free[URING_RX_READS];
	unsigned nr_read_free;
	struct guest_chain tx[URING_TX_BATCH];
	uint16_t tx_free[URING_TX_BATCH];
	unsigned nr_tx_free;
	uint64_t rx_kick_buf, tx_kick_buf;
	bool was_active;
	bool rx_poll_armed;      /* waiting for the backend to be readable */
	unsigned ring_retries;   /* ring mode: timed re-checks left after a wake-up */
	struct __kernel_timespec retry_ts;
	struct __kernel_timespec poll_limit_ts;
	bool rx_need_poll;       /* the last batch drained the backend */
	unsigned rx_batch;       /* reads of the current batch not yet completed */
};

struct uring_loop {
	struct net_worker *w;
	struct io_uring ring;
	struct uring_qp q[NET_WORKER_MAX_QPS];
	uint64_t stop_buf;
	unsigned outstanding;     /* SQEs submitted or queued, not yet completed */
	bool stopping;
};

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

static void arm_read_u64(struct uring_loop *l, int fd, uint64_t *buf, uint64_t tag)
{
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return;
	io_uring_prep_read(sqe, fd, buf, sizeof(*buf), 0);
	io_uring_sqe_set_data64(sqe, tag);
}

/* Pull every TX frame the guest has made available into writev SQEs. */
static void uring_tx(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	struct dp_queue *dp = l->w->qp[i]->dp;
	/* Room for the write is made sure of before the frame leaves the
	 * guest's ring: a frame popped is a frame written. */
	while (uq->nr_tx_free && loop_has_room(l, 1)) {
		uint16_t slot = uq->tx_free[uq->nr_tx_free - 1];
		struct guest_chain *c = &uq->tx[slot];
		if (dp_tx_pop(dp, c) <= 0)
			return;
		struct io_uring_sqe *sqe = loop_sqe(l);
		uq->nr_tx_free--;
		io_uring_prep_writev(sqe, dp->qp->fd, c->iov, c->nr_readable, 0);
		io_uring_sqe_set_data64(sqe, op_pack(OP_TX_WRITE, i, slot));
	}
}

/* A packet ring's readiness can be missed by a one-shot poll (see
 * uring_rx_ring): its poll is bounded by a linked timeout, so a missed
 * wake-up costs at most this long. */
#define RING_POLL_LIMIT_NS 10000000

static void uring_arm_poll(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	bool ring = l->w->qp[i]->rx_ring != NULL;
	if (ring && io_uring_sq_space_left(&l->ring) < 2)
		io_uring_submit(&l->ring);   /* poll and its timeout go in together */
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return;
	io_uring_prep_poll_add(sqe, l->w->qp[i]->fd, POLLIN);
	io_uring_sqe_set_data64(sqe, op_pack(OP_RX_POLL, i, 0));
	if (ring) {
		struct io_uring_sqe *limit = loop_sqe(l);
		if (limit) {
			sqe->flags |= IOSQE_IO_LINK;
			uq->poll_limit_ts = (struct __kernel_timespec){ .tv_nsec = RING_POLL_LIMIT_NS };
			io_uring_prep_link_timeout(limit, &uq->poll_limit_ts, 0);
			io_uring_sqe_set_data64(limit, op_pack(OP_RX_POLL_TIMEOUT, i, 0));
		}
	}
	uq->rx_poll_armed = true;
	uq->rx_need_poll = false;
}

/* Packet ring: copy out what is ready; when nothing is, wait for the
 * socket to become readable (one block handed over per wake-up). */
/* A TPACKET_V3 socket can signal readability before the block it closed
 * is marked ours, and a one-shot poll does not fire twice. After each
 * wake-up the ring is therefore re-checked a few times, 1 ms apart (the
 * block retire timeout), before going back to a plain poll. */
#define RING_RETRIES 4

static void uring_arm_retry(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return;
	uq->retry_ts = (struct __kernel_timespec){ .tv_nsec = 1000000 };
	io_uring_prep_timeout(sqe, &uq->retry_ts, 0, 0);
	io_uring_sqe_set_data64(sqe, op_pack(OP_RX_RETRY, i, 0));
	uq->rx_poll_armed = true;
	uq->ring_retries--;
}

static void uring_rx_ring(struct uring_loop *l, unsigned i)
{
	struct uring_qp *uq = &l->q[i];
	struct net_queue_pair *qp = l->w->qp[i];
	if (uq->rx_poll_armed)
		return;
	int rc = pkt_ring_consume(qp->rx_ring, qp->dp);
	if (rc != 0)
		return;   /* no guest buffers (the RX kick resumes us), or broken */
	if (uq->ring_retries)
		uring_arm_retry(l, i);
	else
		uring_arm_poll(l, i);
}



/* One batch of reads while the guest has buffers and the backend has
 * frames; a poll when it has none. */
static void uring_rx(struct uring_loop *l, unsigned i)
{
	if (l->w->qp[i]->rx_ring) {
		uring_rx_ring(l, i);
		return;
	}
	struct uring_qp *uq = &l->q[i];
	struct dp_queue *dp = l->w->qp[i]->dp;
	if (uq->rx_poll_armed || uq->rx_batch)
		return;
	if (uq->rx_need_poll) {
		uring_arm_poll(l, i);
		return;
	}
	while (uq->nr_read_free && loop_has_room(l, 1)) {
		uint16_t slot = uq->read_free[uq->nr_read_free - 1];
		struct dp_read *r = &uq->read[slot];
		if (dp_rx_prepare(dp, r) <= 0)
			return;
		struct io_uring_sqe *sqe = loop_sqe(l);
		uq->nr_read_free--;
		uq->rx_batch++;
		io_uring_prep_readv(sqe, dp->qp->fd, r->iov, r->nr_iov, 0);
		io_uring_sqe_set_data64(sqe, op_pack(OP_RX_READ, i, slot));
	}
}

/* A pair that VQ_PAIRS_SET turned off: stop waiting on its backend
 * (reads never wait, only the poll does). */
static void uring_deactivate(struct uring_loop *l, unsigned i)
{
	if (!l->q[i].rx_poll_armed)
		return;
	struct io_uring_sqe *sqe = loop_sqe(l);
	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, op_pack(OP_RX_POLL, i, 0), 0);
	io_uring_sqe_set_data64(sqe, op_pack(OP_CANCEL, i, 0));
}

static void uring_complete(struct uring_loop *l, struct io_uring_cqe *cqe)
{
	uint64_t d = io_uring_cqe_get_data64(cqe);
	unsigned i = op_qp(d), slot = op_slot(d);
	struct uring_qp *uq = &l->q[i];
	struct dp_queue *dp = l->w->qp[i]->dp;
	l->outstanding--;
	switch (op_type_of(d)) {
	case OP_RX_READ:
		dp_rx_complete(dp, &uq->read[slot], cqe->res);
		if (cqe->res < 0)
			dp_backend_failed(dp, -cqe->res);
		uq->read_free[uq->nr_read_free++] = (uint16_t)slot;
		uq->rx_batch--;
		if (cqe->res == -EAGAIN)
			uq->rx_need_poll = true;   /* drained: wait for readability */
		break;
	case OP_TX_WRITE:
		dp_tx_complete(dp, &uq->tx[slot], cqe->res);
		if (cqe->res < 0)
			dp_backend_failed(dp, -cqe->res);
		uq->tx_free[uq->nr_tx_free++] = (uint16_t)slot;
		break;
	case OP_RX_KICK:
		if (cqe->res > 0)   /* not the cancelled read at shutdown */
			dp_rx_kicked(dp);
		if (!l->stopping)
			arm_read_u64(l, dp->qp->rx.kick_fd, &uq->rx_kick_buf, op_pack(OP_RX_KICK, i, 0));
		break;
	case OP_TX_KICK:
		if (cqe->res > 0)
			dp_tx_kicked(dp);
		if (!l->stopping)
			arm_read_u64(l, dp->qp->tx.kick_fd, &uq->tx_kick_buf, op_pack(OP_TX_KICK, i, 0));
		break;
	case OP_STOP:
		l->stopping = true;
		break;
	case OP_RX_POLL:
		uq->rx_poll_armed = false;   /* the next service pass consumes */
		uq->ring_retries = RING_RETRIES;
		if (cqe->res > 0 && (cqe->res & (POLLERR | POLLHUP))) {
			int e = net_worker_fd_error(l->w->qp[i]->fd);
			if (e && !dp_backend_failed(dp, e))
				dp_log(dp, "backend error: %s", strerror(e));
		}
		break;
	case OP_RX_RETRY:
		uq->rx_poll_armed = false;
		break;
	case OP_RX_POLL_TIMEOUT:
		break;   /* the poll it bounds completes (cancelled) on its own */
	case OP_CANCEL:
		break;
	}
}

static void uring_reap(struct uring_loop *l)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0;
	io_uring_for_each_cqe(&l->ring, head, cqe) {
		uring_complete(l, cqe);
		n++;
	}
	io_uring_cq_advance(&l->ring, n);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Busy-poll window: look for completions or new TX frames for poll_us
 * before sleeping in the kernel. */
static void uring_poll_briefly(struct uring_loop *l)
{
	uint64_t end = now_ns() + (uint64_t)l->w->cfg.poll_us * 1000;
	while (now_ns() < end) {
		if (io_uring_cq_ready(&l->ring))
			return;
		for (unsigned i = 0; i < l->w->nr_qps; i++) {
			struct net_queue_pair *qp = l->w->qp[i];
			if (net_qp_active(qp) && qp->guest->ops->pending(qp->tx.ring))
				return;
		}
		__builtin_ia32_pause();
	}
}

static void uring_service(struct uring_loop *l)
{
	for (unsigned i = 0; i < l->w->nr_qps; i++) {
		bool active = net_qp_active(l->w->qp[i]);
		if (!active) {
			if (l->q[i].was_active)
				uring_deactivate(l, i);
			l->q[i].was_active = false;
			continue;
		}
		l->q[i].was_active = true;
		if (l->w->qp[i]->dp->backend_gone) {
			dp_tx_drop_all(l->w->qp[i]->dp);   /* no I/O on a dead fd */
			continue;
		}
		uring_tx(l, i);
		uring_rx(l, i);
	}
}

/* What the engine submits, and nothing else: seccomp sees io_uring_enter
 * but not the operations it carries, so the ring itself is restricted
 * (IORING_REGISTER_RESTRICTIONS, before it is enabled). Without this a worker
 * could openat, connect or sendmsg through its ring whatever its filter says. */
static const uint8_t uring_allowed_ops[] = {
	IORING_OP_READ, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_POLL_ADD,
	IORING_OP_TIMEOUT, IORING_OP_LINK_TIMEOUT, IORING_OP_ASYNC_CANCEL,
};

int net_uring_restrict(struct io_uring *ring)
{
	struct io_uring_restriction res[sizeof(uring_allowed_ops) + 1];
	memset(res, 0, sizeof(res));
	unsigned n = 0;
	for (; n < sizeof(uring_allowed_ops); n++) {
		res[n].opcode = IORING_RESTRICTION_SQE_OP;
		res[n].sqe_op = uring_allowed_ops[n];
	}
	res[n].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[n++].sqe_flags = IOSQE_IO_LINK;   /* the RX poll and its timeout */
	/* No IORING_RESTRICTION_REGISTER_OP: io_uring_register refuses
	 * everything once the ring is enabled. (Debian 12's liburing.so does
	 * not export io_uring_register_restrictions or io_uring_enable_rings;
	 * its raw io_uring_register does the same, returning -errno.) */
	int rc = io_uring_register((unsigned)ring->ring_fd, IORING_REGISTER_RESTRICTIONS, res, n);
	if (rc < 0)
		return rc;
	return io_uring_register((unsigned)ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
}

static int uring_setup(struct uring_loop *l, struct net_worker *w)
{
	memset(l, 0, sizeof(*l));
	l->w = w;
	unsigned ops = w->nr_qps * URING_OPS_PER_QP + URING_OPS_LOOP;
	struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE | IORING_SETUP_R_DISABLED,
				     .cq_entries = ops };
	int rc = io_uring_queue_init_params(ops, &l->ring, &p);
	if (rc < 0) {
		snprintf(w->error, sizeof(w->error), "io_uring_queue_init: %s", strerror(-rc));
		return rc;
	}
	rc = net_uring_restrict(&l->ring);
	if (rc < 0) {
		snprintf(w->error, sizeof(w->error), "io_uring restrictions: %s", strerror(-rc));
		io_uring_queue_exit(&l->ring);
		return rc;
	}
	for (unsigned i = 0; i < w->nr_qps; i++) {
		struct uring_qp *uq = &l->q[i];
		for (unsigned s = 0; s < URING_RX_READS; s++)
			uq->read_free[uq->nr_read_free++] = (uint16_t)s;
		for (unsigned s = 0; s < URING_TX_BATCH; s++)
			uq->tx_free[uq->nr_tx_free++] = (uint16_t)s;
		/* Non-blocking backend fd: a read with no frame fails at once
		 * instead of waiting out of order (see the top of this file). */
		int fd = w->qp[i]->fd;
		if (fd >= 0)
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		arm_read_u64(l, w->qp[i]->rx.kick_fd, &uq->rx_kick_buf, op_pack(OP_RX_KICK, i, 0));
		arm_read_u64(l, w->qp[i]->tx.kick_fd, &uq->tx_kick_buf, op_pack(OP_TX_KICK, i, 0));
	}
	arm_read_u64(l, w->stop_fd, &l->stop_buf, op_pack(OP_STOP, 0, 0));
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
			give_up = now_ns() + DRAIN_GIVE_UP_NS;
			snprintf(l->w->error, sizeof(l->w->error), "io_uring drain: %s", strerror(-rc));
		}
		if (now_ns() > give_up)
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
	/* Set up; from here on the guest's rings drive this thread. A worker
	 * that cannot confine itself carries no traffic. */
	rc = net_worker_confine(w);
	if (rc < 0)
		l->stopping = true;
	while (!l->stopping) {
		uring_service(l);
		/* Publish before sleeping: ring-mode RX delivers synchronously
		 * in uring_service, and the guest must see it now. */
		net_worker_flush(w);
		if (w->cfg.poll_us && !io_uring_cq_ready(&l->ring)) {
			io_uring_submit(&l->ring);
			uring_poll_briefly(l);
		}
		rc = io_uring_submit_and_wait(&l->ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			snprintf(w->error, sizeof(w->error), "io_uring_submit_and_wait: %s", strerror(-rc));
			break;
		}
		uring_reap(l);
	}
	l->stopping = true;
	uring_drain(l);
	net_worker_flush(l->w);
	io_uring_queue_exit(&l->ring);
	free(l);
	return rc < 0 && rc != -EINTR ? rc : 0;
}
