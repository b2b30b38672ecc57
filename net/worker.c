/* SPDX-License-Identifier: Apache-2.0 */
/* Worker threads: creation, naming, pinning, stopping, usage figures. */
#include "net/worker.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define START_PACE_SLICE_NS  (5 * 1000000ull)

/* Wait for a paced start's turn, in short sleeps so that a stop ends the
 * wait (the device's reset joins this thread). False: stop came first. */
static bool net_worker_wait_turn(struct net_worker *w, struct log_limit *pace)
{
	uint64_t left = log_limit_pace(pace, log_limit_now_ns());
	while (left > 0) {
		if (__atomic_load_n(&w->stop_requested, __ATOMIC_ACQUIRE)) {
			log_limit_unpace(pace);   /* the starts queued behind move up */
			return false;
		}
		uint64_t slice = left < START_PACE_SLICE_NS ? left : START_PACE_SLICE_NS;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)slice };
		nanosleep(&ts, NULL);
		left -= slice;
	}
	return !__atomic_load_n(&w->stop_requested, __ATOMIC_ACQUIRE);
}

/* The backend's per-queue start/stop hooks, on this thread, around the loop. */
static int net_worker_start_queues(struct net_worker *w)
{
	for (unsigned i = 0; i < w->nr_qps; i++) {
		struct net_queue_io *io = w->qp[i]->io;
		struct vmm_err err = { 0 };
		/* Only a queue in use binds (an inactive one keeps the backend's
		 * drain socket): only it waits for a turn. */
		if (io->start_pace && net_qp_active(w->qp[i]) && !net_worker_wait_turn(w, io->start_pace)) {
			w->nr_started = i;
			return 1;   /* stopped before it started: not an error */
		}
		if (io->start && io->start(io, w->qp[i]->dp, &err) < 0) {
			snprintf(w->error, sizeof(w->error), "queue pair %u: %s", w->qp[i]->index, err.msg);
			w->nr_started = i;
			return -err.code;
		}
	}
	w->nr_started = w->nr_qps;
	return 0;
}

static void net_worker_stop_queues(struct net_worker *w)
{
	for (unsigned i = 0; i < w->nr_started; i++) {
		struct net_queue_io *io = w->qp[i]->io;
		if (io->stop)
			io->stop(io, w->qp[i]->dp);
	}
	net_worker_flush(w);   /* buffers the backend gave back go to the guest */
}

/* Errors no guest can cause: the host is out of something or refuses. */
static bool net_worker_host_error(int rc)
{
	switch (-rc) {
	case EMFILE: case ENFILE: case ENOMEM: case ENOBUFS: case EPERM: case EACCES: case ENOSYS:
		return true;
	default:
		return false;
	}
}

/* A loop that ended on its own, or left I/O in flight, leaves its queue pairs
 * dead: the device is told (it logs and reports NEEDS_RESET to the guest),
 * or, when the host failed it, the VM stops with the host-error status. */
static void net_worker_report_end(struct net_worker *w, int rc)
{
	char why[700];
	if (rc < 0)
		snprintf(why, sizeof(why), "queue worker %s stopped: %s", w->cfg.name,
			 w->error[0] ? w->error : strerror(-rc));
	else if (w->left_in_flight)
		snprintf(why, sizeof(why), "queue worker %s stopped with %u I/O operations in flight (%s)",
			 w->cfg.name, w->left_in_flight, w->error[0] ? w->error : "not drained");
	else
		return;
	const struct net_guest *g = w->qp[0]->guest;
	if (rc < 0 && net_worker_host_error(rc) && g->host_fail)
		g->host_fail(g->opaque, why);
	else
		g->fail(g->opaque, why);
}

/* Tell net_worker_wait_started() the start hooks are done: before the loop,
 * and before a failure is reported (the waiter may hold the device lock
 * that reporting takes). */
static void net_worker_started(struct net_worker *w, int rc)
{
	pthread_mutex_lock(&w->start_lock);
	w->start_done = true;
	w->start_rc = rc;
	pthread_cond_broadcast(&w->start_cond);
	pthread_mutex_unlock(&w->start_lock);
}

int net_worker_wait_started(struct net_worker *w)
{
	pthread_mutex_lock(&w->start_lock);
	while (!w->start_done)
		pthread_cond_wait(&w->start_cond, &w->start_lock);
	int rc = w->start_rc;
	pthread_mutex_unlock(&w->start_lock);
	return rc;
}

static void *net_worker_main(void *arg)
{
	struct net_worker *w = arg;
	pthread_setname_np(pthread_self(), w->cfg.name);
	__atomic_store_n(&w->tid, (int)gettid(), __ATOMIC_RELEASE);
	int rc = net_worker_start_queues(w);
	net_worker_started(w, rc < 0 ? rc : 0);
	if (rc > 0)
		rc = 0;   /* stopped while a paced start waited: no loop to run */
	else if (rc == 0)
		rc = w->cfg.engine == NET_ENGINE_EPOLL ? net_worker_run_epoll(w) : net_worker_run_uring(w);
	net_worker_stop_queues(w);
	net_worker_report_end(w, rc);
	/* Keep the thread's totals: /proc forgets it once it is joined. */
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		w->final_usage.cpu_ns = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
					(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
		w->final_usage.voluntary_switches = (uint64_t)ru.ru_nvcsw;
		w->final_usage.involuntary_switches = (uint64_t)ru.ru_nivcsw;
	}
	__atomic_store_n(&w->finished, true, __ATOMIC_RELEASE);
	return NULL;
}

int net_worker_confine(struct net_worker *w)
{
	struct vmm_err err = { 0 };
	int rc = confine_enter(w->cfg.confine, CONFINE_NET_WORKER, &err);
	if (rc < 0)
		snprintf(w->error, sizeof(w->error), "%.*s", (int)sizeof(w->error) - 1, err.msg);
	return rc;
}

static int net_worker_pin(struct net_worker *w, pthread_attr_t *attr, struct vmm_err *err)
{
	if (w->cfg.cpu < 0) {
		int rc = pthread_attr_setaffinity_np(attr, sizeof(w->cfg.unpinned), &w->cfg.unpinned);
		return rc ? vmm_err_sys(err, rc, "cannot set the CPUs of %s", w->cfg.name) : 0;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(w->cfg.cpu, &set);
	int rc = pthread_attr_setaffinity_np(attr, sizeof(set), &set);
	if (rc)
		return vmm_err_sys(err, rc, "cannot pin %s to CPU %d", w->cfg.name, w->cfg.cpu);
	return 0;
}

int net_worker_start(struct net_worker **out, const struct net_worker_config *cfg,
		     struct net_queue_pair **qps, unsigned nr_qps, struct vmm_err *err)
{
	*out = NULL;
	if (nr_qps == 0 || nr_qps > NET_WORKER_MAX_QPS)
		return vmm_err_set(err, EINVAL, "a worker serves 1 to %d queue pairs", NET_WORKER_MAX_QPS);
	struct net_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return vmm_err_set(err, ENOMEM, "out of memory for a queue worker");
	w->cfg = *cfg;
	w->nr_qps = nr_qps;
	pthread_mutex_init(&w->start_lock, NULL);
	pthread_cond_init(&w->start_cond, NULL);
	w->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w->stop_fd < 0) {
		net_worker_stop(w);
		return vmm_err_set(err, ENOMEM, "cannot set up queue worker %s", cfg->name);
	}
	for (unsigned i = 0; i < nr_qps; i++)
		w->qp[i] = qps[i];
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	/* Workers need little stack; keep the VMM's footprint small. */
	pthread_attr_setstacksize(&attr, 256 * 1024);
	int rc = net_worker_pin(w, &attr, err);
	if (rc == 0) {
		rc = spawner_create_thread(cfg->spawner, &w->thread, &attr, net_worker_main, w);
		if (rc)
			rc = vmm_err_sys(err, rc, "cannot start queue worker %s", cfg->name);
	}
	pthread_attr_destroy(&attr);
	if (rc) {
		net_worker_stop(w);
		return rc;
	}
	w->started = true;
	*out = w;
	return 0;
}

void net_worker_stop(struct net_worker *w)
{
	if (!w)
		return;
	if (w->started) {
		uint64_t one = 1;
		__atomic_store_n(&w->stop_requested, true, __ATOMIC_RELEASE);
		if (write(w->stop_fd, &one, sizeof(one)) < 0) {
			/* eventfd writes fail only on overflow: already signalled */
		}
		pthread_join(w->thread, NULL);
	}
	if (w->stop_fd >= 0)
		close(w->stop_fd);
	pthread_cond_destroy(&w->start_cond);
	pthread_mutex_destroy(&w->start_lock);
	free(w);
}

static void net_worker_signal(struct net_worker *w, const bool *want)
{
	const struct net_guest *done[NET_WORKER_MAX_QPS];
	unsigned nr_done = 0;
	for (unsigned i = 0; i < w->nr_qps; i++) {
		if (!want[i])
			continue;
		NET_STAT_ADD(w->qp[i], irqs, 1);
		const struct net_guest *g = w->qp[i]->guest;
		bool seen = false;
		for (unsigned j = 0; j < nr_done; j++)
			seen |= done[j] == g;
		if (seen)
			continue;   /* one interrupt line per device: signal it once */
		done[nr_done++] = g;
		g->signal(g->opaque);
	}
}

void net_worker_flush(struct net_worker *w)
{
	bool want[NET_WORKER_MAX_QPS] = { false };
	bool any = false;
	for (unsigned i = 0; i < w->nr_qps; i++) {
		want[i] = w->qp[i]->dp && dp_flush(w->qp[i]->dp);
		any |= want[i];
	}
	if (any)
		net_worker_signal(w, want);
}

int net_worker_fd_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0)
		return err;
	return errno == ENOTSOCK ? EBADFD : errno;
}

static uint64_t read_status_field(int tid, const char *field)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	uint64_t v = 0;
	size_t flen = strlen(field);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, flen) == 0 && line[flen] == ':') {
			v = strtoull(line + flen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

void net_worker_usage(const struct net_worker *w, struct net_worker_usage *u)
{
	memset(u, 0, sizeof(*u));
	int tid = __atomic_load_n(&w->tid, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE)) {
		u->cpu_ns = w->final_usage.cpu_ns;
		u->voluntary_switches = w->final_usage.voluntary_switches;
		u->involuntary_switches = w->final_usage.involuntary_switches;
		return;
	}
	if (!w->started || tid == 0)
		return;
	clockid_t clk;
	struct timespec ts;
	if (pthread_getcpuclockid(w->thread, &clk) == 0 && clock_gettime(clk, &ts) == 0)
		u->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	u->voluntary_switches = read_status_field(tid, "voluntary_ctxt_switches");
	u->involuntary_switches = read_status_field(tid, "nonvoluntary_ctxt_switches");
}
