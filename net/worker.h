/* SPDX-License-Identifier: Apache-2.0 */
/* Queue workers: threads that run the data path of one or more queue
 * pairs, with an io_uring loop (default) or a plain epoll loop (the
 * baseline the benchmark compares against). */
#ifndef MINIVMM_NET_WORKER_H
#define MINIVMM_NET_WORKER_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "net/datapath.h"
#include "net/queue_pair.h"
#include "base/confine.h"
#include "base/error.h"
#include "base/spawn.h"

enum net_engine {
	NET_ENGINE_URING,
	NET_ENGINE_EPOLL,
};

/* poll_us = NET_POLL_AUTO: adapt the busy-poll window to how work arrives. */
#define NET_POLL_AUTO (~0u)

/* io_uring resources, each one asked for and used if the kernel has it
 * (probed when the worker starts; what it lacks is left out, with one log
 * line): fixed files for the backend and eventfds; a single issuer that
 * runs completion work only when it waits (DEFER_TASKRUN); guest RAM
 * registered as fixed buffers (pins all of it: off unless asked). */
struct net_uring_config {
	bool no_fixed_files;
	bool no_defer_taskrun;
	bool fixed_buffers;
	const struct guest_mem *mem;   /* for fixed_buffers */
};

struct net_worker_config {
	enum net_engine engine;
	unsigned poll_us;      /* busy-poll this long before blocking (0: never; NET_POLL_AUTO) */
	struct net_uring_config uring;
	int cpu;               /* pin to this host CPU, -1 for no pinning */
	/* With cpu < 0: the CPUs the VMM process was started with. Workers are
	 * created from a vCPU thread (at DRIVER_OK), which may be pinned; they
	 * must not inherit that. */
	cpu_set_t unpinned;
	char name[16];         /* thread name, e.g. "net0-q3" */
	/* The worker confines itself (CONFINE_NET_WORKER) once set up: its
	 * queues started (the backend's start hooks), its ring or epoll set
	 * made. It is started through the spawner, since its creator (a vCPU,
	 * the control or link thread) is confined. NULL: neither (unit tests). */
	const struct confine *confine;
	struct spawner *spawner;
	/* The backend the worker's queues belong to: its helper makes the
	 * worker's io_uring (net_uring_make_ring). NULL: the worker does. */
	struct net_backend *backend;
};

#define NET_WORKER_MAX_QPS 16

struct net_worker {
	struct net_worker_config cfg;
	struct net_queue_pair *qp[NET_WORKER_MAX_QPS];
	unsigned nr_qps;
	int stop_fd;            /* eventfd: leave the loop */
	bool stop_requested;    /* atomic; also ends a paced start's wait */
	pthread_t thread;
	bool started;
	int tid;                /* for /proc statistics */
	bool finished;          /* the loop has ended; final_usage is valid */
	struct net_worker_usage_final {
		uint64_t cpu_ns, voluntary_switches, involuntary_switches;
	} final_usage;
	char error[600];        /* why the loop ended early, if it did */
	unsigned left_in_flight;  /* I/O operations the engine could not drain at stop */
	unsigned nr_started;      /* queues whose backend start hook ran */
	/* Set once the start hooks have run (or one failed, or a stop came
	 * first); net_worker_wait_started() waits for it. */
	pthread_mutex_t start_lock;
	pthread_cond_t start_cond;
	bool start_done;
	int start_rc;
	/* Every pair it serves is paused and nothing of theirs is in flight:
	 * its counters stand still (atomic; net_worker_is_paused). */
	bool paused_idle;
	char uring_features[96];  /* what the io_uring engine got from the kernel, */
	bool uring_features_ready;   /* once this is set (atomic) */
};

/* Start a worker thread serving `qps`. */
int net_worker_start(struct net_worker **out, const struct net_worker_config *cfg,
		     struct net_queue_pair **qps, unsigned nr_qps, struct vmm_err *err);

/* Stop: cancel outstanding I/O (no guest memory is written afterwards),
 * join and free. NULL is fine. */
void net_worker_stop(struct net_worker *w);

/* Has the worker seen its pairs paused and let everything in flight
 * finish? The device pauses pairs, kicks them, then waits for this. */
static inline bool net_worker_is_paused(const struct net_worker *w)
{
	return __atomic_load_n(&w->paused_idle, __ATOMIC_ACQUIRE);
}

/* Wait until the worker's queues are started: their backend start hooks
 * (an AF_XDP socket bound and in the XSKMAP, say) have run on its thread.
 * What VQ_PAIRS_SET acknowledges must be queues that serve, or the host's
 * first frames find no socket. 0, or the -errno of a queue that failed to
 * start (the worker also reports that to the device, as always). */
int net_worker_wait_started(struct net_worker *w);

/* CPU time (ns) and context switches of the worker thread so far. */
struct net_worker_usage {
	uint64_t cpu_ns;
	uint64_t voluntary_switches;
	uint64_t involuntary_switches;
};
void net_worker_usage(const struct net_worker *w, struct net_worker_usage *u);

/* Can this kernel run the io_uring engine? Checks what the engine relies on
 * (IORING_ASYNC_CANCEL_ANY, Linux 5.19) so that a missing feature is one line
 * at start-up, not a worker that dies at DRIVER_OK. */
int net_uring_probe(struct vmm_err *err);

/* "taskrun=defer fixed-files=on ...": what a running io_uring worker got. */
void net_uring_describe(const struct net_worker *w, char *buf, size_t size);

/* Make a worker's ring of `ops` entries (at most NET_URING_MAX_OPS):
 * disabled (IORING_SETUP_R_DISABLED), with SINGLE_ISSUER + DEFER_TASKRUN
 * unless no_defer_taskrun or the kernel lacks them (then COOP_TASKRUN, then
 * none), and limited to the operations the engine submits (reads and
 * writes, plain and fixed, polls, timeouts, cancel; the link and
 * fixed-file flags; once enabled, no register call but unregistering its
 * fixed files and buffers). seccomp never sees what a ring does, so this
 * is what keeps a worker's ring from opening files or sockets. Run by the
 * device's helper (net/helper.h); the worker maps the ring
 * (io_uring_queue_mmap), registers its files and buffers and enables it
 * (net_uring_enable), becoming its single issuer. *fd: the ring, *p what
 * io_uring_setup said. 0 or -errno with one line in err. */
struct io_uring;
struct io_uring_params;
#define NET_URING_MAX_OPS (NET_WORKER_MAX_QPS * 128u + 64u)
int net_uring_make_ring(unsigned ops, bool no_defer_taskrun, int *fd, struct io_uring_params *p,
			struct vmm_err *err);
/* Map a ring made by net_uring_make_ring into *ring, as
 * io_uring_queue_init_params would have. 0 or -errno (fd stays open). */
int net_uring_map(int fd, struct io_uring_params *p, struct io_uring *ring);
/* The restrictions alone, on a disabled ring (net_uring_make_ring). */
int net_uring_restrict_fd(int ring_fd);
int net_uring_enable(struct io_uring *ring);

/* Engines: set up, net_worker_confine(), run until stop_fd fires. Return 0,
 * or -errno with w->error set. */
int net_worker_confine(struct net_worker *w);
int net_worker_run_uring(struct net_worker *w);
int net_worker_run_epoll(struct net_worker *w);

/* What a backend fd that polled POLLERR/POLLHUP has to say: its socket
 * error (read and cleared), or EBADFD for a tap (a detached tap is the only
 * way a tap fd polls an error). 0 if none. */
int net_worker_fd_error(int fd);

/* Publish every queue's used entries, then interrupt each device whose
 * queues asked for it, once: the end of every engine loop iteration. */
void net_worker_flush(struct net_worker *w);

#endif
