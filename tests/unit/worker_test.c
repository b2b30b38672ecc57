/* SPDX-License-Identifier: Apache-2.0 */
/* Queue workers with real threads and real engines, over fake guest rings:
 * what the engines promise at their edges (every frame the guest offers is
 * written, nothing is in flight once a worker is stopped), whatever the
 * kernel's io_uring answers. The unit-test binary is linked with
 * -Wl,--wrap=io_uring_submit_and_wait,--wrap=io_uring_submit so a test can
 * make a wait return -EINTR (a signal arriving) or a submit refuse to take
 * the queued SQEs (-EBUSY), as the kernel may. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/helper.h"
#include "net/rate_limit.h"
#include "net/worker.h"
#include "vmm/seccomp.h"

/* ---- io_uring_submit_and_wait, interruptible on demand ------------------- */

int __real_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);
int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr);

static bool interrupt_every_wait;   /* set by a test: every wait ends in -EINTR */

int __wrap_io_uring_submit_and_wait(struct io_uring *ring, unsigned wait_nr)
{
	if (__atomic_load_n(&interrupt_every_wait, __ATOMIC_ACQUIRE)) {
		/* Like a signal during the wait: what was queued is submitted and
		 * the completion work due runs (a wait does that before it sleeps,
		 * DEFER_TASKRUN or not), then the wait is cut short. */
		io_uring_submit_and_get_events(ring);
		return -EINTR;
	}
	return __real_io_uring_submit_and_wait(ring, wait_nr);
}

int __real_io_uring_submit(struct io_uring *ring);
int __wrap_io_uring_submit(struct io_uring *ring);

static bool refuse_submits;   /* set by a test: io_uring_submit takes nothing */

int __wrap_io_uring_submit(struct io_uring *ring)
{
	if (__atomic_load_n(&refuse_submits, __ATOMIC_ACQUIRE))
		return -EBUSY;
	return __real_io_uring_submit(ring);
}

/* ---- a fake guest ring: TX frames to hand out, nothing for RX ------------ */

#define FRAMES_PER_QP 256
#define HDR 12u

struct wring {
	struct guest_chain *chains;
	unsigned nr, next;
	uint64_t pushed;
};

static int wr_pop(void *r, struct guest_chain *c)
{
	struct wring *f = r;
	if (f->next == f->nr)
		return 0;
	*c = f->chains[f->next++];
	return 1;
}
static void wr_push(void *r, uint16_t head, uint32_t len) { (void)head; (void)len; ((struct wring *)r)->pushed++; }
static void wr_publish(void *r) { (void)r; }
static bool wr_should_signal(void *r) { (void)r; return false; }
static void wr_disable_kicks(void *r) { (void)r; }
static bool wr_enable_kicks(void *r) { struct wring *f = r; return f->next < f->nr; }
static uint16_t wr_pending(void *r) { struct wring *f = r; return (uint16_t)(f->nr - f->next); }
static const char *wr_error(void *r) { (void)r; return "fake ring"; }

static const struct net_ring_ops wring_ops = {
	.pop = wr_pop, .push = wr_push, .publish = wr_publish, .should_signal = wr_should_signal,
	.disable_kicks = wr_disable_kicks, .enable_kicks = wr_enable_kicks, .pending = wr_pending,
	.error = wr_error,
};

struct wenv {
	unsigned nr_qps;
	struct wring rx[NET_WORKER_MAX_QPS], tx[NET_WORKER_MAX_QPS];
	struct net_queue_pair qp[NET_WORKER_MAX_QPS];
	struct net_queue_io io[NET_WORKER_MAX_QPS];
	struct net_queue_pair *qps[NET_WORKER_MAX_QPS];
	struct net_guest guest;
	uint8_t frame[HDR + 64];
	int fails;
	char fail_why[256];
	/* Confined runs: the backend whose helper makes the workers' rings,
	 * as a device's does (net/helper.h), confined with the same lists. */
	struct net_backend backend;
	struct machine machine;
};

static void we_signal(void *o) { (void)o; }
static void we_fail(void *o, const char *why)
{
	struct wenv *e = o;
	__atomic_add_fetch(&e->fails, 1, __ATOMIC_ACQ_REL);
	snprintf(e->fail_why, sizeof(e->fail_why), "%s", why);
}

/* nr_qps pairs, each with `frames` TX frames and a backend fd of its own
 * (backend_fd opens it: /dev/null for writes that always succeed). */
static struct wenv *wenv_new(unsigned nr_qps, unsigned frames, int (*backend_fd)(void))
{
	struct wenv *e = calloc(1, sizeof(*e));
	cr_assert_not_null(e);
	e->nr_qps = nr_qps;
	e->guest = (struct net_guest){ .ops = &wring_ops, .opaque = e, .signal = we_signal,
				       .fail = we_fail };
	for (unsigned i = 0; i < nr_qps; i++) {
		struct wring *tx = &e->tx[i];
		tx->chains = calloc(frames, sizeof(tx->chains[0]));
		cr_assert_not_null(tx->chains);
		for (unsigned f = 0; f < frames; f++) {
			struct guest_chain *c = &tx->chains[f];
			c->head = (uint16_t)f;
			c->nr_readable = 1;
			c->iov[0] = (struct iovec){ .iov_base = e->frame, .iov_len = sizeof(e->frame) };
			c->readable_len = sizeof(e->frame);
		}
		tx->nr = frames;
		e->qp[i] = (struct net_queue_pair){
			.index = i, .guest = &e->guest, .vnet_hdr_len = HDR, .rx_frame_max = 1530,
			.rx_ring_size = 256, .active = true,
			.rx = { .ring = &e->rx[i], .kick_fd = eventfd(0, EFD_CLOEXEC) },
			.tx = { .ring = tx, .kick_fd = eventfd(0, EFD_CLOEXEC) },
			.io = &e->io[i],
		};
		e->io[i] = (struct net_queue_io){ .fd = backend_fd() };
		cr_assert(e->qp[i].rx.kick_fd >= 0 && e->qp[i].tx.kick_fd >= 0 && e->io[i].fd >= 0);
		e->qp[i].dp = dp_queue_create(&e->qp[i]);
		cr_assert_not_null(e->qp[i].dp);
		e->qps[i] = &e->qp[i];
	}
	return e;
}

static void wenv_free(struct wenv *e)
{
	net_helper_stop(&e->backend);
	for (unsigned i = 0; i < e->nr_qps; i++) {
		dp_queue_free(e->qp[i].dp);
		close(e->qp[i].rx.kick_fd);
		close(e->qp[i].tx.kick_fd);
		close(e->io[i].fd);
		free(e->tx[i].chains);
	}
	free(e);
}

static struct net_worker *wenv_start_with(struct wenv *e, enum net_engine engine,
					  const struct net_uring_config *uring, const struct confine *confine,
					  struct spawner *s)
{
	struct net_worker_config cfg = { .engine = engine, .uring = *uring, .cpu = -1, .confine = confine,
					 .spawner = s };
	if (confine) {
		static const struct net_backend_ops ops = { .kind = "test" };
		e->backend.ops = &ops;
		e->backend.nr_queues = e->nr_qps;
		e->machine = (struct machine){ .confine = confine };
		struct vmm_err herr = { 0 };
		if (!e->backend.helper)
			cr_assert_eq(net_helper_start(&e->backend, &e->machine, 0, NULL, &herr), 0, "%s", herr.msg);
		cfg.backend = &e->backend;
	}
	CPU_ZERO(&cfg.unpinned);
	for (int c = 0; c < 2; c++)
		CPU_SET(c, &cfg.unpinned);
	snprintf(cfg.name, sizeof(cfg.name), "test-w");
	struct net_worker *w;
	struct vmm_err err = { 0 };
	cr_assert_eq(net_worker_start(&w, &cfg, e->qps, e->nr_qps, &err), 0, "%s", err.msg);
	return w;
}

static struct net_worker *wenv_start_confined(struct wenv *e, enum net_engine engine,
					      const struct confine *confine, struct spawner *s)
{
	return wenv_start_with(e, engine, &(struct net_uring_config){ 0 }, confine, s);
}

static struct net_worker *wenv_start(struct wenv *e, enum net_engine engine)
{
	return wenv_start_confined(e, engine, NULL, NULL);
}

/* The sum of one counter over every pair (offset of a uint64_t in struct
 * net_queue_stats). */
static uint64_t stat_sum(const struct wenv *e, size_t off)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < e->nr_qps; i++)
		n += __atomic_load_n((const uint64_t *)((const char *)&e->qp[i].stats + off), __ATOMIC_RELAXED);
	return n;
}

#define tx_frames(e)  stat_sum((e), offsetof(struct net_queue_stats, tx_frames))
#define tx_errors(e)  stat_sum((e), offsetof(struct net_queue_stats, tx_errors))
#define tx_dropped(e) stat_sum((e), offsetof(struct net_queue_stats, tx_dropped))

/* Up to `seconds` for `want` TX frames written (and, with dropped_too,
 * dropped). */
static bool wait_tx(const struct wenv *e, uint64_t want, int seconds, bool dropped_too)
{
	for (int i = 0; i < seconds * 1000; i++) {
		if (tx_frames(e) + (dropped_too ? tx_dropped(e) : 0) >= want)
			return true;
		struct timespec ms = { .tv_nsec = 1000000 };
		nanosleep(&ms, NULL);
	}
	return false;
}

#define wait_tx_frames(e, want, seconds) wait_tx((e), (want), (seconds), false)

static int open_dev_null(void)
{
	return open("/dev/null", O_RDWR | O_CLOEXEC);
}

/* A datagram socket nobody writes to: RX waits in a poll. Its peer stays
 * open (and leaks until the test process ends) so that TX writes succeed. */
static int open_quiet_socket(void)
{
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), 0);
	return sv[0];
}

/* Sixteen queue pairs on one worker, every TX ring full at once: more
 * writes than one batch of the old fixed-size ring could queue. Every frame
 * the guest made available must be written, none dropped for want of an
 * SQE (hardening 4). */
Test(worker, uring_writes_every_frame_of_sixteen_full_tx_rings, .timeout = 20)
{
	struct wenv *e = wenv_new(NET_WORKER_MAX_QPS, FRAMES_PER_QP, open_dev_null);
	struct net_worker *w = wenv_start(e, NET_ENGINE_URING);
	uint64_t want = (uint64_t)NET_WORKER_MAX_QPS * FRAMES_PER_QP;
	cr_expect(wait_tx_frames(e, want, 10), "%llu of %llu frames written",
		  (unsigned long long)tx_frames(e), (unsigned long long)want);
	net_worker_stop(w);
	cr_assert_eq(tx_frames(e), want);
	cr_assert_eq(tx_errors(e), 0u, "no frame dropped");
	cr_assert_eq(e->fails, 0, "%s", e->fail_why);
	wenv_free(e);
}

/* The same while the kernel refuses to take queued SQEs whenever the loop
 * asks mid-pass (as with a completion queue in overflow): a frame that
 * cannot be queued must stay in the guest's ring for the next pass, never be
 * popped and dropped (hardening 4). */
Test(worker, uring_keeps_frames_in_the_ring_while_submission_is_refused, .timeout = 20)
{
	struct wenv *e = wenv_new(NET_WORKER_MAX_QPS, FRAMES_PER_QP, open_dev_null);
	__atomic_store_n(&refuse_submits, true, __ATOMIC_RELEASE);
	struct net_worker *w = wenv_start(e, NET_ENGINE_URING);
	uint64_t want = (uint64_t)NET_WORKER_MAX_QPS * FRAMES_PER_QP;
	bool all = wait_tx_frames(e, want, 10);
	__atomic_store_n(&refuse_submits, false, __ATOMIC_RELEASE);
	net_worker_stop(w);
	cr_expect(all, "%llu of %llu frames written", (unsigned long long)tx_frames(e),
		  (unsigned long long)want);
	cr_assert_eq(tx_errors(e), 0u, "no frame dropped");
	wenv_free(e);
}

/* Stopping while every wait is interrupted by signals: the drain must still
 * wait for each cancelled operation, so none is left in flight to land in
 * guest memory after a reset (hardening 3). A worker that could not drain
 * reports it through the device's fail callback. */
Test(worker, uring_stop_drains_everything_even_when_every_wait_is_interrupted, .timeout = 20)
{
	struct wenv *e = wenv_new(2, 1, open_quiet_socket);
	struct net_worker *w = wenv_start(e, NET_ENGINE_URING);
	cr_assert(wait_tx_frames(e, 2, 5));
	__atomic_store_n(&interrupt_every_wait, true, __ATOMIC_RELEASE);
	net_worker_stop(w);
	__atomic_store_n(&interrupt_every_wait, false, __ATOMIC_RELEASE);
	cr_assert_eq(e->fails, 0, "worker reported: %s", e->fail_why);
	wenv_free(e);
}

Test(worker, uring_probe_accepts_this_kernel)
{
	struct vmm_err err = { 0 };
	cr_assert_eq(net_uring_probe(&err), 0, "%s", err.msg);
}

/* The lists of a tap device with both engines, and a spawner confined
 * with its own (as minivmm starts workers). */
static struct spawner *confined_spawner(struct confine *c)
{
	struct confine_needs n = { .net = true, .tap = true, .uring = true, .epoll = true,
				   .kick_signal = SIGRTMIN + 1, .pid = getpid() };
	struct vmm_err err = { 0 };
	cr_assert_eq(seccomp_lists_build(c, &n, MINIVMM_SECCOMP_ON, SECCOMP_ALL_ROLES, &err), 0, "%s", err.msg);
	struct spawner *s;
	cr_assert_eq(spawner_start(&s, c, &err), 0, "%s", err.msg);
	return s;
}

/* Both engines as minivmm runs them: started through a spawner confined
 * with its list, each worker setting up under that filter and then
 * installing its own. Only the spawner and the workers are confined (the
 * test's own thread is not): a call missing from a list kills the test. */
Test(worker, confined_workers_started_by_a_confined_spawner_carry_every_frame, .timeout = 30)
{
	struct confine c = { .filters = true };
	struct spawner *s = confined_spawner(&c);
	for (int engine = 0; engine < 2; engine++) {
		struct wenv *e = wenv_new(4, FRAMES_PER_QP, open_quiet_socket);
		struct net_worker *w = wenv_start_confined(e, engine ? NET_ENGINE_EPOLL : NET_ENGINE_URING, &c, s);
		uint64_t want = 4ull * FRAMES_PER_QP;
		cr_expect(wait_tx_frames(e, want, 10), "engine %d: %llu of %llu frames written", engine,
			  (unsigned long long)tx_frames(e), (unsigned long long)want);
		net_worker_stop(w);
		cr_assert_eq(tx_errors(e), 0u);
		cr_assert_eq(e->fails, 0, "engine %d: %s", engine, e->fail_why);
		wenv_free(e);
	}
	spawner_stop(s);
	seccomp_lists_free(&c);
}

/* ---- a stopped worker holds no reference to its backend fds -------------- */

static int watched_peer[NET_WORKER_MAX_QPS];
static unsigned nr_watched_peers;

/* A stream socket whose peer the test keeps: the peer sees the hang-up as
 * soon as the last reference to this end is gone, not before. */
static int open_watched_socket(void)
{
	int sv[2];
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	watched_peer[nr_watched_peers++] = sv[1];
	return sv[0];
}

/* Once net_worker_stop has returned and the backend fds are closed, nothing
 * holds them: a tap queue is free for the next minivmm at once. An io_uring
 * ring that still had them as fixed files would drop them only when the
 * kernel tears it down, tens of ms later. Each engine and io_uring variant,
 * confined as minivmm runs them (a worker that unregisters its files under
 * a filter without that call kills the test). */
Test(worker, a_stopped_worker_leaves_its_backend_fds_to_their_owner, .timeout = 60)
{
	static const struct {
		enum net_engine engine;
		struct net_uring_config uring;
		const char *name;
	} runs[] = {
		{ NET_ENGINE_URING, { 0 }, "uring" },
		{ NET_ENGINE_URING, { .fixed_buffers = true }, "uring fixed-buffers=on" },
		{ NET_ENGINE_URING, { .no_fixed_files = true, .no_defer_taskrun = true },
		  "uring fixed-files=off,defer-taskrun=off" },
		{ NET_ENGINE_EPOLL, { 0 }, "epoll" },
	};
	struct confine c = { .filters = true };
	struct spawner *s = confined_spawner(&c);
	/* Stands for guest RAM with fixed-buffers=on: registered, pinned. */
	size_t ram_size = 1 << 20;
	uint8_t *ram = aligned_alloc(4096, ram_size);
	cr_assert_not_null(ram);
	struct guest_mem mem = { .region = { { .size = ram_size, .host = ram } }, .nr_regions = 1,
				 .ram_size = ram_size };
	for (unsigned r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		for (int round = 0; round < 5; round++) {
			nr_watched_peers = 0;
			struct wenv *e = wenv_new(2, 4, open_watched_socket);
			struct net_uring_config uring = runs[r].uring;
			uring.mem = &mem;
			struct net_worker *w = wenv_start_with(e, runs[r].engine, &uring, &c, s);
			cr_expect(wait_tx_frames(e, 8, 10), "%s: %llu of 8 frames written", runs[r].name,
				  (unsigned long long)tx_frames(e));
			net_worker_stop(w);
			for (unsigned i = 0; i < e->nr_qps; i++) {
				close(e->io[i].fd);
				e->io[i].fd = -1;
				struct pollfd p = { .fd = watched_peer[i], .events = POLLRDHUP };
				cr_assert_eq(poll(&p, 1, 0), 1, "%s, round %d: queue %u's backend is still held after stop and close",
					     runs[r].name, round, i);
				cr_assert(p.revents & (POLLRDHUP | POLLHUP), "%s: revents %#x", runs[r].name, p.revents);
				close(watched_peer[i]);
			}
			cr_assert_eq(e->fails, 0, "%s: %s", runs[r].name, e->fail_why);
			wenv_free(e);
		}
	}
	free(ram);
	spawner_stop(s);
	seccomp_lists_free(&c);
}

/* seccomp sees io_uring_enter, not what the ring does: the engine's ring
 * takes only its own operations, and no register call once enabled. */
Test(worker, uring_ring_refuses_operations_the_engine_does_not_use)
{
	struct io_uring ring;
	struct io_uring_params p;
	int fd;
	struct vmm_err err = { 0 };
	cr_assert_eq(net_uring_make_ring(8, false, &fd, &p, &err), 0, "%s", err.msg);
	cr_assert(p.flags & IORING_SETUP_R_DISABLED);
	cr_assert_eq(net_uring_map(fd, &p, &ring), 0);
	cr_assert_eq(io_uring_register((unsigned)fd, IORING_REGISTER_RESTRICTIONS, NULL, 0), -EBUSY,
		     "restricted once, by the helper: a worker cannot loosen it");
	cr_assert_eq(net_uring_enable(&ring), 0);
	int efd = eventfd(1, EFD_CLOEXEC);
	uint64_t v;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	io_uring_prep_read(sqe, efd, &v, sizeof(v), 0);
	io_uring_sqe_set_data64(sqe, 1);
	cr_assert_eq(__real_io_uring_submit_and_wait(&ring, 1), 1);
	struct io_uring_cqe *cqe;
	cr_assert_eq(io_uring_peek_cqe(&ring, &cqe), 0);
	cr_assert_eq(cqe->res, 8, "the read of the eventfd goes through: %d", cqe->res);
	io_uring_cqe_seen(&ring, cqe);
	/* Each refused operation completes with -EACCES (and ends that
	 * submission, so one at a time). */
	for (int op = 0; op < 2; op++) {
		sqe = io_uring_get_sqe(&ring);
		if (op == 0)
			io_uring_prep_openat(sqe, AT_FDCWD, "/etc/passwd", O_RDONLY, 0);
		else
			io_uring_prep_socket(sqe, AF_INET, SOCK_DGRAM, 0, 0);
		cr_assert_eq(__real_io_uring_submit_and_wait(&ring, 1), 1);
		cr_assert_eq(io_uring_peek_cqe(&ring, &cqe), 0);
		cr_assert_eq(cqe->res, -EACCES, "%s: %d", op ? "socket" : "openat", cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	cr_assert_eq(io_uring_register((unsigned)ring.ring_fd, IORING_REGISTER_PROBE, NULL, 0), -EACCES,
		     "no register call once enabled");
	cr_assert_eq(io_uring_register((unsigned)ring.ring_fd, IORING_REGISTER_FILES, &efd, 1), -EACCES);
	/* but unregistering: nothing is registered here, so the kernel looks
	 * and finds nothing */
	cr_assert_eq(io_uring_register((unsigned)ring.ring_fd, IORING_UNREGISTER_FILES, NULL, 0), -ENXIO);
	cr_assert_eq(io_uring_register((unsigned)ring.ring_fd, IORING_UNREGISTER_BUFFERS, NULL, 0), -ENXIO);
	close(efd);
	io_uring_queue_exit(&ring);
}

/* ---- net_worker_wait_started: the start hooks have run ------------------- */

/* A backend start hook as slow as an AF_XDP bind (tens of ms), counting the
 * queues it started; priv holds the count, dp unused. */
static int slow_start(struct net_queue_io *io, struct dp_queue *dp, struct vmm_err *err)
{
	(void)dp;
	(void)err;
	struct timespec ms30 = { .tv_nsec = 30 * 1000000 };
	nanosleep(&ms30, NULL);
	__atomic_add_fetch((int *)io->priv, 1, __ATOMIC_RELEASE);
	return 0;
}

static int failing_start(struct net_queue_io *io, struct dp_queue *dp, struct vmm_err *err)
{
	(void)io;
	(void)dp;
	return vmm_err_set(err, EADDRINUSE, "test: the queue is taken");
}

/* VQ_PAIRS_SET is acknowledged once the restarted workers' queues serve:
 * the wait returns only after every start hook ran (here: the hooks of all
 * three queues of one worker, 90 ms in all). */
Test(worker, wait_started_returns_after_every_start_hook_ran, .timeout = 20)
{
	struct wenv *e = wenv_new(3, 1, open_quiet_socket);
	int started = 0;
	for (unsigned i = 0; i < e->nr_qps; i++) {
		e->io[i].start = slow_start;
		e->io[i].priv = &started;
	}
	struct net_worker *w = wenv_start(e, NET_ENGINE_URING);
	cr_assert_eq(net_worker_wait_started(w), 0);
	cr_assert_eq(__atomic_load_n(&started, __ATOMIC_ACQUIRE), 3, "%d of 3 queues started", started);
	cr_assert_eq(net_worker_wait_started(w), 0, "a second wait returns at once");
	net_worker_stop(w);
	wenv_free(e);
}

/* A start that fails ends the wait with its error (the worker reports it
 * to the device as before), rather than leaving the waiter blocked. */
Test(worker, wait_started_returns_a_failed_start_error, .timeout = 20)
{
	struct wenv *e = wenv_new(1, 1, open_quiet_socket);
	e->io[0].start = failing_start;
	struct net_worker *w = wenv_start(e, NET_ENGINE_EPOLL);
	cr_assert_eq(net_worker_wait_started(w), -EADDRINUSE);
	net_worker_stop(w);
	cr_assert_eq(e->fails, 1, "the failure is reported once: %d (%s)", e->fails, e->fail_why);
	wenv_free(e);
}

/* ---- the rate limiter in the engines ----------------------------------------- */

/* Sixteen pairs sharing one device limiter, their TX rings full: for one
 * second the worker takes what the limiter lets through, no more (the
 * rest stays in the guest's rings), and a bucket smaller than one frame,
 * or one that owes less than a millisecond's worth (Firecracker #6212),
 * slows TX but never stops it. Both engines. */
static uint64_t limited_tx_frames(enum net_engine engine, const struct minivmm_rate_limit *cfg,
				  uint64_t *least, uint64_t *most)
{
	struct wenv *e = wenv_new(NET_WORKER_MAX_QPS, FRAMES_PER_QP, open_dev_null);
	struct rate_limit rl;
	rate_limit_init(&rl, cfg, dp_now_ns());
	for (unsigned i = 0; i < e->nr_qps; i++)
		e->qp[i].tx_limit = &rl;
	struct net_worker *w = wenv_start(e, engine);
	struct timespec one_s = { .tv_sec = 1 };
	nanosleep(&one_s, NULL);
	uint64_t n = tx_frames(e);
	*least = UINT64_MAX;
	*most = 0;
	for (unsigned i = 0; i < e->nr_qps; i++) {
		uint64_t f = __atomic_load_n(&e->qp[i].stats.tx_frames, __ATOMIC_RELAXED);
		*least = f < *least ? f : *least;
		*most = f > *most ? f : *most;
	}
	net_worker_stop(w);
	cr_assert_eq(tx_errors(e), 0u);
	cr_assert_eq(e->fails, 0, "%s", e->fail_why);
	wenv_free(e);
	rate_limit_destroy(&rl);
	return n;
}

Test(worker, the_rate_limiter_holds_tx_to_its_rate, .timeout = 30)
{
	for (int engine = 0; engine < 2; engine++) {
		enum net_engine eng = engine ? NET_ENGINE_EPOLL : NET_ENGINE_URING;
		/* 1000 frames a second, 50 at once */
		struct minivmm_rate_limit ops = { .ops = { .size = 50, .refill_time_ms = 50 } };
		uint64_t least, most;
		uint64_t n = limited_tx_frames(eng, &ops, &least, &most);
		cr_assert(n >= 800 && n <= 1300, "engine %d: %llu frames in 1 s at 1000/s", engine,
			  (unsigned long long)n);
		/* The pairs take turns (each pass starts one pair further):
		 * none starves. (Measured here: 44-114 frames a pair, with
		 * 50 of the first pair's from the full bucket at the start.) */
		cr_assert(least * 3 >= n / NET_WORKER_MAX_QPS, "engine %d: pairs sent %llu to %llu frames", engine,
			  (unsigned long long)least, (unsigned long long)most);
		/* 1000 bytes a second from a 1-byte bucket: 64-byte frames, ~16 a second */
		struct minivmm_rate_limit tiny = { .bandwidth = { .size = 1, .refill_time_ms = 1 } };
		n = limited_tx_frames(eng, &tiny, &least, &most);
		cr_assert(n >= 8 && n <= 40, "engine %d: %llu frames in 1 s at 1000 B/s", engine,
			  (unsigned long long)n);
		/* 63 bytes a millisecond: every 64-byte frame owes under a millisecond */
		struct minivmm_rate_limit sub_ms = { .bandwidth = { .size = 63, .refill_time_ms = 1 } };
		n = limited_tx_frames(eng, &sub_ms, &least, &most);
		cr_assert(n >= 300 && n <= 1100, "engine %d: %llu frames in 1 s at 63 kB/s", engine,
			  (unsigned long long)n);
	}
}

/* A live change is felt at once: pairs waiting out the old limit's debt
 * (one frame a second, so a second to wait) go on at the new rate as soon
 * as the device changes it and kicks them. Both engines. */
Test(worker, a_rate_limit_change_takes_effect_at_once, .timeout = 30)
{
	for (int engine = 0; engine < 2; engine++) {
		struct wenv *e = wenv_new(4, FRAMES_PER_QP, open_dev_null);
		struct rate_limit rl;
		struct minivmm_rate_limit slow = { .ops = { .size = 1, .refill_time_ms = 1000 } };
		rate_limit_init(&rl, &slow, dp_now_ns());
		for (unsigned i = 0; i < e->nr_qps; i++)
			e->qp[i].tx_limit = &rl;
		struct net_worker *w = wenv_start(e, engine ? NET_ENGINE_EPOLL : NET_ENGINE_URING);
		struct timespec t = { .tv_nsec = 200 * 1000000 };
		nanosleep(&t, NULL);
		uint64_t before = tx_frames(e);
		cr_assert_leq(before, 2u, "engine %d: %llu frames at one a second", engine, (unsigned long long)before);
		struct minivmm_rate_limit fast = { .ops = { .size = 100, .refill_time_ms = 100 } };   /* 1000/s */
		rate_limit_set(&rl, &fast, dp_now_ns());
		uint64_t one = 1;
		for (unsigned i = 0; i < e->nr_qps; i++)
			cr_assert_eq(write(e->qp[i].tx.kick_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
		t.tv_nsec = 100 * 1000000;
		nanosleep(&t, NULL);
		uint64_t after = tx_frames(e);
		cr_assert_geq(after - before, 100u, "engine %d: %llu frames in the 100 ms after the change", engine,
			      (unsigned long long)(after - before));
		net_worker_stop(w);
		cr_assert_eq(e->fails, 0, "%s", e->fail_why);
		wenv_free(e);
		rate_limit_destroy(&rl);
	}
}

/* ---- pause --------------------------------------------------------------------- */

static void kick_all(struct wenv *e)
{
	uint64_t one = 1;
	for (unsigned i = 0; i < e->nr_qps; i++) {
		cr_assert_eq(write(e->qp[i].tx.kick_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
		cr_assert_eq(write(e->qp[i].rx.kick_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	}
}

static void set_paused(struct wenv *e, bool paused)
{
	for (unsigned i = 0; i < e->nr_qps; i++)
		__atomic_store_n(&e->qp[i].paused, paused, __ATOMIC_RELEASE);
	kick_all(e);
}

static bool wait_paused(struct net_worker *w, bool want)
{
	for (int i = 0; i < 2000; i++) {
		if (net_worker_is_paused(w) == want)
			return true;
		struct timespec ms = { .tv_nsec = 1000000 };
		nanosleep(&ms, NULL);
	}
	return false;
}

/* Four pairs with full TX rings, held to 1000 frames a second together
 * (so that their traffic lasts) by rl. */
static struct wenv *wenv_held_to_1000_a_second(struct rate_limit *rl)
{
	struct wenv *e = wenv_new(4, FRAMES_PER_QP, open_dev_null);
	struct minivmm_rate_limit c = { .ops = { .size = 20, .refill_time_ms = 20 } };
	rate_limit_init(rl, &c, dp_now_ns());
	for (unsigned i = 0; i < e->nr_qps; i++)
		e->qp[i].tx_limit = rl;
	return e;
}

/* Paused in the middle of TX (held to 1000 frames a second so it lasts):
 * the worker says it is idle, the counters stand still while paused, and
 * after the resume every frame is written once, none lost. Both engines. */
Test(worker, paused_mid_traffic_moves_nothing_and_resumes_where_it_stopped, .timeout = 60)
{
	for (int engine = 0; engine < 2; engine++) {
		struct rate_limit rl;
		struct wenv *e = wenv_held_to_1000_a_second(&rl);
		struct net_worker *w = wenv_start(e, engine ? NET_ENGINE_EPOLL : NET_ENGINE_URING);
		struct timespec t = { .tv_nsec = 150 * 1000000 };
		nanosleep(&t, NULL);
		set_paused(e, true);
		cr_assert(wait_paused(w, true), "engine %d: the worker never said it was paused", engine);
		uint64_t at_pause = tx_frames(e);
		cr_assert(at_pause > 0 && at_pause < 4ull * FRAMES_PER_QP, "engine %d: %llu frames before the pause",
			  engine, (unsigned long long)at_pause);
		nanosleep(&t, NULL);
		cr_assert_eq(tx_frames(e), at_pause, "engine %d: frames moved while paused", engine);
		set_paused(e, false);
		cr_assert(wait_paused(w, false), "engine %d: still paused after the resume", engine);
		cr_expect(wait_tx_frames(e, 4ull * FRAMES_PER_QP, 10), "engine %d: %llu of %u frames after the resume",
			  engine, (unsigned long long)tx_frames(e), 4 * FRAMES_PER_QP);
		net_worker_stop(w);
		cr_assert_eq(tx_frames(e), 4ull * FRAMES_PER_QP, "every frame once");
		cr_assert_eq(tx_errors(e), 0u);
		cr_assert_eq(e->fails, 0, "%s", e->fail_why);
		wenv_free(e);
		rate_limit_destroy(&rl);
	}
}

/* ---- the link set down ---------------------------------------------------------- */

/* The link set down in the middle of TX (held to 1000 frames a second):
 * what the guest sends from then on is dropped at once, counted, the rate
 * limiter not waited for, nothing written. (That traffic goes on once the
 * link is up again is tested through a guest: test_api.sh.) Both
 * engines. */
Test(worker, link_set_down_drops_what_the_guest_sends_without_waiting_for_the_limiter, .timeout = 60)
{
	for (int engine = 0; engine < 2; engine++) {
		struct rate_limit rl;
		struct wenv *e = wenv_held_to_1000_a_second(&rl);
		struct net_worker *w = wenv_start(e, engine ? NET_ENGINE_EPOLL : NET_ENGINE_URING);
		struct timespec t = { .tv_nsec = 150 * 1000000 };
		nanosleep(&t, NULL);
		for (unsigned i = 0; i < e->nr_qps; i++)
			__atomic_store_n(&e->qp[i].link_down, true, __ATOMIC_RELEASE);
		kick_all(e);
		cr_expect(wait_tx(e, 4ull * FRAMES_PER_QP, 5, true),
			  "engine %d: %llu written and %llu dropped of %u", engine, (unsigned long long)tx_frames(e),
			  (unsigned long long)tx_dropped(e), 4 * FRAMES_PER_QP);
		uint64_t written = tx_frames(e);
		cr_assert(written > 0 && written < 4ull * FRAMES_PER_QP / 2,
			  "engine %d: %llu frames written before the link went down (1000/s for 150 ms)", engine,
			  (unsigned long long)written);
		nanosleep(&t, NULL);
		cr_assert_eq(tx_frames(e), written, "engine %d: frames written while the link was down", engine);
		cr_assert_eq(tx_frames(e) + tx_dropped(e), 4ull * FRAMES_PER_QP, "engine %d: every frame once", engine);
		cr_assert_eq(e->fails, 0, "%s", e->fail_why);
		net_worker_stop(w);
		cr_assert_eq(tx_errors(e), 0u);
		wenv_free(e);
		rate_limit_destroy(&rl);
	}
}

/* ---- one limit across workers ------------------------------------------------------ */

/* Two and then four pairs, each on a worker of its own (threads=per-queue),
 * 2 CPUs, sharing one device limit of 1000 frames a second, every TX ring
 * full: over 2 s together they send what the limit lets through, and each
 * gets its share within 0.8-1.25 of it. (Without the limiter's turns, the
 * worker whose timer fired first took nearly every token: 184 and 1865.)
 * Both engines. */
Test(worker, pairs_on_different_workers_share_one_limit_fairly, .timeout = 60)
{
	for (int engine = 0; engine < 2; engine++) {
		for (unsigned nw = 2; nw <= 4; nw += 2) {
			struct rate_limit rl;
			struct minivmm_rate_limit c = { .ops = { .size = 50, .refill_time_ms = 50 } };
			rate_limit_init(&rl, &c, dp_now_ns());
			struct wenv *e[4];
			struct net_worker *w[4];
			for (unsigned i = 0; i < nw; i++) {
				e[i] = wenv_new(1, 4096, open_dev_null);
				e[i]->qp[0].tx_limit = &rl;
				e[i]->qp[0].index = i;   /* pair i of one device */
			}
			for (unsigned i = 0; i < nw; i++)
				w[i] = wenv_start(e[i], engine ? NET_ENGINE_EPOLL : NET_ENGINE_URING);
			struct timespec t = { .tv_sec = 2 };
			nanosleep(&t, NULL);
			uint64_t n[4] = { 0 }, sum = 0, least = UINT64_MAX, most = 0;
			for (unsigned i = 0; i < nw; i++) {
				n[i] = tx_frames(e[i]);
				sum += n[i];
				least = n[i] < least ? n[i] : least;
				most = n[i] > most ? n[i] : most;
			}
			for (unsigned i = 0; i < nw; i++) {
				net_worker_stop(w[i]);
				cr_assert_eq(e[i]->fails, 0, "%s", e[i]->fail_why);
				wenv_free(e[i]);
			}
			rate_limit_destroy(&rl);
			cr_assert(sum >= 1800 && sum <= 2300, "engine %d, %u workers: %llu frames in 2 s at 1000/s", engine,
				  nw, (unsigned long long)sum);
			cr_assert(least * nw * 5 >= sum * 4 && most * nw * 4 <= sum * 5,
				  "engine %d, %u workers: shares %llu %llu %llu %llu of %llu", engine, nw,
				  (unsigned long long)n[0], (unsigned long long)n[1], (unsigned long long)n[2],
				  (unsigned long long)n[3], (unsigned long long)sum);
		}
	}
}
