/* SPDX-License-Identifier: Apache-2.0 */
/* The epoll engine: the baseline the benchmark compares io_uring against.
 * Same data path (datapath.c), plain system calls: readv/writev per frame on
 * a non-blocking backend fd, epoll for kicks and backend readiness. */
#include "net/worker.h"
#include "net/rate_limit.h"
#include "net/worker_poll.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum ev_kind { EV_STOP = 1, EV_RX_KICK, EV_TX_KICK, EV_BACKEND };

static uint64_t ev_pack(enum ev_kind k, unsigned qp) { return ((uint64_t)k << 32) | qp; }

struct epoll_loop {
	struct net_worker *w;
	int epfd;
	bool backend_polled[NET_WORKER_MAX_QPS];   /* EPOLLIN on the backend fd */
	bool tx_polled[NET_WORKER_MAX_QPS];        /* EPOLLOUT: a ring backend's TX is full */
	uint32_t registered[NET_WORKER_MAX_QPS];   /* events the backend fd is in the set for */
	uint64_t tx_retry_at[NET_WORKER_MAX_QPS];  /* ns: a ring backend asked to be called again,
						    * or a held frame is due (below) */
	/* A frame the backend refused for want of room (dp_tx_backend_full):
	 * written again at tx_retry_at; meanwhile no new frame is taken. */
	struct guest_chain tx_held[NET_WORKER_MAX_QPS];
	bool has_held[NET_WORKER_MAX_QPS];
	unsigned tx_full_wait_us[NET_WORKER_MAX_QPS];   /* dp_tx_full_backoff; 0 after a write went through */
	/* ns: the device's rate limiter holds this direction back until then
	 * (dp_tx_throttle_ns, dp_rx_throttle_ns); 0: it does not. */
	uint64_t tx_throttle_at[NET_WORKER_MAX_QPS], rx_throttle_at[NET_WORKER_MAX_QPS];
	unsigned tx_throttle_gen[NET_WORKER_MAX_QPS], rx_throttle_gen[NET_WORKER_MAX_QPS];
	bool stopping;
};

/* Is this direction waiting for the rate limiter (until *at)? Not once the
 * limiter has been changed since (a live change is felt at once). */
static bool ep_throttled(uint64_t *at, unsigned gen, const struct rate_limit *rl)
{
	if (*at && net_poll_now_ns() < *at && rate_limit_gen(rl) == gen)
		return true;
	*at = 0;
	return false;
}

/* The last pop or read was told to wait (dp_tx_take_throttle): not served
 * before then; epoll_wait's timeout brings the pass back (ep_timeout_ms). */
static void ep_throttle(uint64_t *at, unsigned *gen, const struct rate_limit *rl, uint64_t wait)
{
	if (wait) {
		*at = net_poll_now_ns() + wait;
		*gen = rate_limit_gen(rl);
	}
}

static int ep_add(struct epoll_loop *l, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };
	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* Watch the backend only while there are guest buffers to read into:
 * otherwise frames stay queued in the kernel until the RX kick. An fd not
 * watched is taken out of the set, not left in it with no events: epoll
 * reports EPOLLERR and EPOLLHUP whatever was asked, and a dead backend
 * would wake the loop forever. */
static void ep_update_backend(struct epoll_loop *l, unsigned i)
{
	int fd = l->w->qp[i]->io->fd;
	uint32_t want = (l->backend_polled[i] ? EPOLLIN : 0) | (l->tx_polled[i] ? EPOLLOUT : 0);
	if (fd < 0 || want == l->registered[i])
		return;
	struct epoll_event ev = { .events = want, .data.u64 = ev_pack(EV_BACKEND, i) };
	int op = !want ? EPOLL_CTL_DEL : l->registered[i] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	epoll_ctl(l->epfd, op, fd, &ev);
	l->registered[i] = want;
}

static void ep_poll_backend(struct epoll_loop *l, unsigned i, bool on)
{
	l->backend_polled[i] = on;
	ep_update_backend(l, i);
}

/* A ring backend's TX stopped (its tx() returned 1): wait for its fd to be
 * writable, or call it again after the delay it asks for (it owes
 * completions the kernel signals to no one). Every pass calls tx() anyway;
 * this only makes sure a pass comes. */
static void ep_tx_wait(struct epoll_loop *l, unsigned i, bool stopped)
{
	unsigned retry_us = l->w->qp[i]->io->tx_retry_us;
	l->tx_retry_at[i] = stopped && retry_us ? net_poll_now_ns() + (uint64_t)retry_us * 1000 : 0;
	l->tx_polled[i] = stopped && !retry_us;
	ep_update_backend(l, i);
}

/* An I/O error on the backend: if it is gone, stop watching it. */
static void ep_backend_error(struct epoll_loop *l, unsigned i, int err)
{
	if (dp_backend_failed(l->w->qp[i]->dp, err))
		ep_poll_backend(l, i, false);
}

/* Write one frame: false when the backend had no room for it, which is
 * then held (l->tx_held) for a retry. */
static bool ep_tx_write(struct epoll_loop *l, unsigned i, const struct guest_chain *c)
{
	struct dp_queue *dp = l->w->qp[i]->dp;
	ssize_t n = writev(l->w->qp[i]->io->fd, c->iov, c->nr_readable);
	int e = errno;
	if (n < 0 && dp_tx_backend_full(-e)) {
		if (c != &l->tx_held[i])
			l->tx_held[i] = *c;
		l->has_held[i] = true;
		l->tx_full_wait_us[i] = dp_tx_full_backoff(l->tx_full_wait_us[i]);
		l->tx_retry_at[i] = net_poll_now_ns() + l->tx_full_wait_us[i] * 1000ull;
		return false;
	}
	if (n >= 0)
		l->tx_full_wait_us[i] = 0;
	dp_tx_complete(dp, c, n < 0 ? -e : n);
	if (n < 0)
		ep_backend_error(l, i, e);
	return true;
}

/* A held frame goes back to the guest as dropped: the queue was switched
 * off, its backend is gone, or the worker stops. */
static void ep_tx_drop_held(struct epoll_loop *l, unsigned i)
{
	if (l->has_held[i])
		dp_tx_complete(l->w->qp[i]->dp, &l->tx_held[i], -ECANCELED);
	l->has_held[i] = false;
}

static void ep_tx(struct epoll_loop *l, unsigned i)
{
	struct dp_queue *dp = l->w->qp[i]->dp;
	struct net_queue_io *io = l->w->qp[i]->io;
	if (ep_throttled(&l->tx_throttle_at[i], l->tx_throttle_gen[i], l->w->qp[i]->tx_limit))
		return;   /* the guest's frames wait in its ring */
	if (io->tx) {
		ep_tx_wait(l, i, io->tx(io, dp) == 1);   /* the backend's own ring */
		ep_throttle(&l->tx_throttle_at[i], &l->tx_throttle_gen[i], l->w->qp[i]->tx_limit, dp_tx_take_throttle(dp));
		return;
	}
	if (l->has_held[i]) {
		if (net_poll_now_ns() < l->tx_retry_at[i] || !ep_tx_write(l, i, &l->tx_held[i]))
			return;
		l->has_held[i] = false;
		l->tx_retry_at[i] = 0;
	}
	struct guest_chain c;
	while (!dp->backend_gone && dp_tx_pop(dp, &c) > 0)
		if (!ep_tx_write(l, i, &c))
			return;
	ep_throttle(&l->tx_throttle_at[i], &l->tx_throttle_gen[i], l->w->qp[i]->tx_limit, dp_tx_take_throttle(dp));
}

static void ep_rx(struct epoll_loop *l, unsigned i)
{
	struct dp_queue *dp = l->w->qp[i]->dp;
	struct net_queue_io *io = l->w->qp[i]->io;
	if (ep_throttled(&l->rx_throttle_at[i], l->rx_throttle_gen[i], l->w->qp[i]->rx_limit)) {
		ep_poll_backend(l, i, false);   /* readable, but not read until then: no wake-ups meanwhile */
		return;
	}
	if (io->rx) {
		/* Nothing ready: wait for readability; no guest buffers: for the kick. */
		int rc = io->rx(io, dp);
		uint64_t wait = dp_rx_take_throttle(dp);
		ep_throttle(&l->rx_throttle_at[i], &l->rx_throttle_gen[i], l->w->qp[i]->rx_limit, wait);
		ep_poll_backend(l, i, rc == 0 && !wait);
		return;
	}
	struct dp_read r;
	for (;;) {
		int rc = dp_rx_prepare(dp, &r);
		if (rc <= 0) {
			ep_throttle(&l->rx_throttle_at[i], &l->rx_throttle_gen[i], l->w->qp[i]->rx_limit, dp_rx_take_throttle(dp));
			ep_poll_backend(l, i, false);
			return;
		}
		ssize_t n = readv(io->fd, r.iov, (int)r.nr_iov);
		int e = errno;
		dp_rx_complete(dp, &r, n < 0 ? -e : n);
		if (n < 0) {
			if (dp_backend_failed(dp, e))
				ep_poll_backend(l, i, false);
			else
				ep_poll_backend(l, i, true);   /* EAGAIN: nothing more queued */
			return;
		}
	}
}

static void ep_drain_eventfd(int fd)
{
	uint64_t v;
	if (read(fd, &v, sizeof(v)) < 0) {
		/* spurious wake-up: nothing to clear */
	}
}

static void ep_handle(struct epoll_loop *l, const struct epoll_event *ev)
{
	enum ev_kind kind = (enum ev_kind)(ev->data.u64 >> 32);
	unsigned i = (unsigned)ev->data.u64;
	switch (kind) {
	case EV_STOP:
		l->stopping = true;
		break;
	case EV_RX_KICK:
		ep_drain_eventfd(l->w->qp[i]->rx.kick_fd);
		dp_rx_kicked(l->w->qp[i]->dp);
		break;
	case EV_TX_KICK:
		ep_drain_eventfd(l->w->qp[i]->tx.kick_fd);
		dp_tx_kicked(l->w->qp[i]->dp);
		break;
	case EV_BACKEND:
		/* ep_rx reads on the next pass; an error condition is asked
		 * about now (a ring-mode packet socket is never read). */
		if (ev->events & (EPOLLERR | EPOLLHUP)) {
			int e = net_worker_fd_error(l->w->qp[i]->io->fd);
			if (e && !dp_backend_failed(l->w->qp[i]->dp, e))
				dp_log(l->w->qp[i]->dp, "backend error: %s", strerror(e));
			if (l->w->qp[i]->dp->backend_gone) {
				ep_poll_backend(l, i, false);
				ep_tx_wait(l, i, false);
			}
		}
		break;
	}
}

static int ep_setup(struct epoll_loop *l, struct net_worker *w)
{
	memset(l, 0, sizeof(*l));
	l->w = w;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0)
		return -errno;
	if (ep_add(l, w->stop_fd, EPOLLIN, ev_pack(EV_STOP, 0)) < 0)
		return -errno;
	for (unsigned i = 0; i < w->nr_qps; i++) {
		struct net_queue_pair *qp = w->qp[i];
		if (qp->io->fd >= 0)
			fcntl(qp->io->fd, F_SETFL, fcntl(qp->io->fd, F_GETFL) | O_NONBLOCK);
		if (ep_add(l, qp->rx.kick_fd, EPOLLIN, ev_pack(EV_RX_KICK, i)) < 0 ||
		    ep_add(l, qp->tx.kick_fd, EPOLLIN, ev_pack(EV_TX_KICK, i)) < 0)
			return -errno;
		/* The backend fd joins the set only while it is read from
		 * (ep_poll_backend). */
	}
	return 0;
}

/* How long epoll_wait may block: forever, unless a ring queue that may
 * miss a wake-up is being waited on (then its bound), or a ring backend's TX
 * asked to be called again, or the rate limiter holds a direction back
 * (then until then, rounded up to a millisecond). */
static int ep_timeout_ms(const struct epoll_loop *l)
{
	int ms = -1;
	uint64_t now = 0;
	for (unsigned i = 0; i < l->w->nr_qps; i++) {
		const struct net_queue_io *io = l->w->qp[i]->io;
		int t = -1;
		if (l->backend_polled[i] && io->rx && io->rx_poll_limit_us)
			t = (int)((io->rx_poll_limit_us + 999) / 1000);
		uint64_t due[3] = { l->tx_retry_at[i], l->tx_throttle_at[i], l->rx_throttle_at[i] };
		for (unsigned k = 0; k < 3; k++) {
			if (!due[k] || !net_qp_active(l->w->qp[i]))
				continue;
			now = now ? now : net_poll_now_ns();
			uint64_t left = due[k] > now ? due[k] - now : 0;
			/* Rounded up: a wait under a millisecond is 1 ms, never 0
			 * (which would spin) nor dropped (which would stall). */
			uint64_t tms = (left + 999999) / 1000000;
			int tt = tms > INT32_MAX ? INT32_MAX : (int)tms;
			t = t < 0 || tt < t ? tt : t;
		}
		if (t >= 0 && (ms < 0 || t < ms))
			ms = t;
	}
	return ms;
}

static uint64_t ep_progress(const struct net_worker *w)
{
	uint64_t p = 0;
	for (unsigned i = 0; i < w->nr_qps; i++) {
		const struct net_queue_stats *s = &w->qp[i]->stats;
		p += s->rx_frames + s->tx_frames + s->tx_dropped + s->rx_dropped;
	}
	return p;
}

/* Busy-poll: epoll_wait without blocking, and the guest's TX rings, until
 * something comes or the window closes. Returns the events found. */
static int ep_spin(struct epoll_loop *l, struct net_poll_window *pw, struct epoll_event *ev, int max)
{
	uint64_t until = net_poll_window_start(pw);
	int n = 0;
	bool found = false;
	while (!found && net_poll_now_ns() < until) {
		n = epoll_wait(l->epfd, ev, max, 0);
		found = n != 0;
		for (unsigned i = 0; !found && i < l->w->nr_qps; i++) {
			struct net_queue_pair *qp = l->w->qp[i];
			found = net_qp_active(qp) && !net_qp_paused(qp) && !l->tx_throttle_at[i] &&
				qp->guest->ops->pending(qp->tx.ring);
		}
	}
	net_poll_window_end(pw, found);
	return n < 0 ? 0 : n;
}

int net_worker_run_epoll(struct net_worker *w)
{
	struct epoll_loop l;
	int rc = ep_setup(&l, w);
	if (rc < 0) {
		snprintf(w->error, sizeof(w->error), "epoll setup: %s", strerror(-rc));
		if (l.epfd >= 0)
			close(l.epfd);
		return rc;
	}
	struct net_poll_window pw;
	net_poll_window_init(&pw, w->cfg.poll_us);
	/* Set up; from here on the guest's rings drive this thread. */
	rc = net_worker_confine(w);
	if (rc < 0)
		l.stopping = true;
	uint64_t slept_ns = UINT64_MAX;
	unsigned first = 0;
	while (!l.stopping) {
		uint64_t before = ep_progress(w);
		/* Each pass starts one pair further: pairs sharing the device's
		 * rate limit take turns at the tokens a refill brings. */
		for (unsigned k = 0; k < w->nr_qps; k++) {
			unsigned i = (first + k) % w->nr_qps;
			if (!net_qp_active(w->qp[i])) {
				ep_poll_backend(&l, i, false);
				ep_tx_drop_held(&l, i);
				ep_tx_wait(&l, i, false);
				continue;
			}
			if (net_qp_paused(w->qp[i])) {
				ep_poll_backend(&l, i, false);   /* no new frame: no wake-ups for them */
				continue;
			}
			if (w->qp[i]->dp->backend_gone || net_qp_link_down(w->qp[i])) {
				/* no I/O on a dead fd; none without carrier */
				ep_poll_backend(&l, i, false);
				ep_tx_drop_held(&l, i);
				dp_tx_drop_all(w->qp[i]->dp);
				continue;
			}
			ep_tx(&l, i);
			ep_rx(&l, i);
		}
		/* Paused: every pair's I/O is done by the end of a pass (this
		 * engine's calls are synchronous); a frame it holds stays held. */
		bool idle = w->nr_qps > 0;
		for (unsigned i = 0; i < w->nr_qps && idle; i++)
			idle = net_qp_paused(w->qp[i]);
		/* Only this worker writes it: no store on every pass, only on a change. */
		if (__atomic_load_n(&w->paused_idle, __ATOMIC_RELAXED) != idle)
			__atomic_store_n(&w->paused_idle, idle, __ATOMIC_RELEASE);
		first = w->nr_qps ? (first + 1) % w->nr_qps : 0;
		net_worker_flush(w);
		bool worked = ep_progress(w) != before;
		net_poll_window_slept(&pw, slept_ns, worked);
		net_poll_window_note(&pw, worked);
		struct epoll_event ev[16];
		int n = net_poll_window_wanted(&pw) ? ep_spin(&l, &pw, ev, 16) : 0;
		slept_ns = UINT64_MAX;
		if (n == 0) {
			uint64_t t0 = net_poll_now_ns();
			n = epoll_wait(l.epfd, ev, 16, ep_timeout_ms(&l));
			slept_ns = net_poll_now_ns() - t0;
		}
		if (n < 0 && errno != EINTR) {
			snprintf(w->error, sizeof(w->error), "epoll_wait: %s", strerror(errno));
			rc = -errno;
			break;
		}
		for (int k = 0; k < n; k++)
			ep_handle(&l, &ev[k]);
	}
	for (unsigned i = 0; i < w->nr_qps; i++)
		ep_tx_drop_held(&l, i);
	net_worker_flush(w);
	close(l.epfd);
	return rc;
}
