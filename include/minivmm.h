/* SPDX-License-Identifier: Apache-2.0 */
/* minivmm embedding API (libminivmm).
 *
 * A program fills a struct minivmm_config, creates a VM and runs it, either
 * on its own thread (minivmm_run) or on one the library starts
 * (minivmm_start / minivmm_stop / minivmm_wait). Nothing here is global:
 * several VMs may live in one process, each with its own devices and taps.
 * The minivmm command is a thin main() over this API. docs/embedding.md
 * walks through it; the exit statuses are in minivmm_abi.h.
 *
 * Link with `pkg-config --cflags --libs minivmm` (shared) or
 * `pkg-config --static --cflags --libs minivmm` (static). Both libraries
 * export only minivmm_* symbols.
 *
 * Errors: functions that can fail return a negative errno and, where there
 * is an errbuf, one line saying what is wrong. The library never prints
 * (lines go to cfg->log), never exits and never aborts on bad input.
 * Every pointer argument is checked: a NULL one that is needed returns
 * -EINVAL (minivmm_run too), with "<function>: <argument> is NULL" in
 * errbuf; functions that return nothing do nothing, minivmm_net_count
 * returns 0 and minivmm_stop_reason "". errbuf itself may be NULL.
 *
 * Threads the library creates (all named, see `top -H`):
 *   vcpu<i>            one per vCPU, running KVM_RUN
 *   serial             feeds serial_in_fd to the guest, writes out buffered console output
 *   net<k>-q<i>        data-path workers, one per queue pair (or net<k>-w<j>,
 *                      threads=M shared ones), started when the guest's
 *                      driver is up
 *   net<k>-ctrl        the virtio-net control queue
 *   net<k>-link        reopens a backend whose interface vanished
 *   spawner            starts the threads above for confined threads
 *   minivmm            the thread minivmm_start() runs the VM on
 * Each installs the seccomp filter of its kind once set up (cfg->seccomp).
 * Every one of them blocks all asynchronous signals except the vCPU kick
 * signal (vCPU threads only), so the program's signals reach its own
 * threads, and a console write to a closed pipe returns EPIPE instead of
 * raising SIGPIPE.
 *
 * The vCPU kick signal: to make a vCPU thread leave KVM_RUN (when the VM
 * stops) the library sends that thread cfg->kick_signal (SIGRTMIN+1 unless
 * set) with pthread_kill(). minivmm_create() installs an empty handler for
 * it, process-wide, without SA_RESTART, and fails if the signal already has
 * a handler of the program's; the handler stays after the last VM is
 * destroyed (it does nothing). While any VM exists the program must not
 * install a handler for that signal or set it to SIG_IGN, must not send it
 * to the process or to the library's threads, and must not use it for
 * anything else. Blocking it in the program's own threads is harmless.
 * Several VMs may share the signal. */
#ifndef MINIVMM_H
#define MINIVMM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "minivmm_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MINIVMM_API __attribute__((visibility("default")))
#else
#define MINIVMM_API
#endif

/* The library's interface version. The major number is the shared
 * library's soname (libminivmm.so.4): it changes whenever a struct below
 * changes layout or a function changes meaning. Statistics structs grow
 * without a new major (they carry their size). The minor number counts
 * additions within a major. */
#define MINIVMM_API_VERSION_MAJOR 4
#define MINIVMM_API_VERSION_MINOR 0

/* "4.0 (<release of the build>)": "4.0 (0.3.0+git8d0ca88)" */
MINIVMM_API const char *minivmm_version(void);

enum minivmm_serial_mode {
	MINIVMM_SERIAL_STDIO,   /* guest console on serial_out_fd, input from serial_in_fd */
	MINIVMM_SERIAL_NONE,    /* discard output, no input */
	MINIVMM_SERIAL_FILE,    /* output appended to serial_path, no input */
};

enum minivmm_net_backend {
	MINIVMM_NET_TAP,      /* a tap device, one fd (IFF_MULTI_QUEUE queue) per queue pair */
	MINIVMM_NET_PACKET,   /* AF_PACKET sockets bound to a host interface */
	MINIVMM_NET_XDP,      /* AF_XDP sockets on a host interface's queues; UMEM = guest RAM */
};

enum minivmm_net_engine {
	MINIVMM_ENGINE_URING, /* io_uring loop (default) */
	MINIVMM_ENGINE_EPOLL, /* epoll + readv/writev: the baseline */
};

/* Who models the interrupt controllers (docs/architecture.md, "Interrupt
 * controllers"). */
enum minivmm_irqchip {
	MINIVMM_IRQCHIP_KERNEL, /* KVM's PIC, IOAPIC, LAPICs and PIT */
	MINIVMM_IRQCHIP_SPLIT,  /* KVM's LAPICs, minivmm's IOAPIC and counting PIT; no PIC
				 * (minivmm_config_init's default) */
};

/* System-call filters on the VMM's threads (docs/security.md). */
enum minivmm_seccomp {
	MINIVMM_SECCOMP_ON,   /* default: a thread making a call its list lacks kills the process */
	MINIVMM_SECCOMP_OFF,  /* no filters (one line says so) */
	MINIVMM_SECCOMP_LOG,  /* such calls are logged by the kernel (audit, dmesg) and allowed */
};

#define MINIVMM_MAX_NETS 8
#define MINIVMM_POLL_AUTO    0xffffffffu   /* poll_us: adapt to the load */
#define MINIVMM_THREADS_AUTO 0xffffffffu   /* threads: fit the host's free cores */
#define MINIVMM_MAX_QUEUE_PAIRS 16
#define MINIVMM_MAX_CPUS 64
#define MINIVMM_MIN_MEM (16ull << 20)         /* and a multiple of MINIVMM_MEM_ALIGN */
#define MINIVMM_MEM_ALIGN (2ull << 20)
#define MINIVMM_DEFAULT_MEM (256ull << 20)
#define MINIVMM_DEFAULT_CMDLINE "console=ttyS0 reboot=k panic=-1"
#define MINIVMM_NET_MTU_MIN 68
#define MINIVMM_NET_MTU_MAX 65535
#define MINIVMM_NET_QUEUE_SIZE_MAX 1024       /* and a power of two, at least 2 */
#define MINIVMM_NET_POLL_US_MAX 1000000
#define MINIVMM_TIMEOUT_MAX_SECS 31536000     /* timeout_secs: 365 days */

/* One virtio-net device. The ranges below are what minivmm_config_validate()
 * enforces; its messages name the --net key of each field. */
/* A token bucket, as Firecracker's and Cloud Hypervisor's rate limiters
 * are configured: `size` tokens when full (bytes, or frames), refilled from
 * empty to full in `refill_time_ms`, plus `one_time_burst` extra tokens at
 * the start that are never refilled. size 0 or refill_time_ms 0: no limit.
 * A frame goes while the bucket has any token left, and what it takes
 * beyond them is paid back before the next one goes: the rate holds over
 * time, and a bucket smaller than one frame slows a queue, never stops it. */
struct minivmm_token_bucket {
	uint64_t size;
	uint64_t one_time_burst;
	uint64_t refill_time_ms;
};

/* One direction of a device: its bytes and its frames. A throttled queue
 * is not served until the buckets allow it: the guest's TX frames wait in
 * its ring (back-pressure, no drop), the host's RX frames in the backend.
 * Every queue pair of the device shares the budget. */
struct minivmm_rate_limit {
	struct minivmm_token_bucket bandwidth;   /* bytes (of frames, without the virtio header) */
	struct minivmm_token_bucket ops;         /* frames */
};

struct minivmm_net_config {
	enum minivmm_net_backend backend;
	char ifname[16];          /* tap name ("" creates one) or host interface; NUL-terminated */
	unsigned queues;          /* queue pairs, 1..MINIVMM_MAX_QUEUE_PAIRS */
	unsigned threads;         /* worker threads, 1..queues; 0 = one per queue pair; MINIVMM_THREADS_AUTO (default) */
	int cpus[MINIVMM_MAX_QUEUE_PAIRS];   /* worker i runs on cpus[i] */
	unsigned nr_cpus;         /* 0 = workers not pinned; else >= the number of workers */
	unsigned char mac[6];
	int mac_set;              /* else a stable MAC is derived from the interface name */
	unsigned mtu;             /* advertised to the guest (VIRTIO_NET_F_MTU), 68..65535 */
	unsigned queue_size;      /* virtqueue size offered, power of two 2..1024 */
	enum minivmm_net_engine engine;
	unsigned poll_us;         /* busy-poll before blocking, 0..1000000 microseconds; MINIVMM_POLL_AUTO */
	/* io_uring engine: what to ask the kernel for (each falls back if absent) */
	int uring_fixed_files;    /* backend and eventfds registered (default 1) */
	int uring_fixed_buffers;  /* guest RAM registered: pins all of it (default 0) */
	int uring_defer_taskrun;  /* SINGLE_ISSUER + DEFER_TASKRUN (default 1) */
	/* packet backend only */
	unsigned fanout;          /* PACKET_FANOUT_HASH (0), _LB (1), _CPU (2), _QM (5) */
	int rx_recv;              /* 0: TPACKET_V3 ring (default); 1: readv per frame */
	int qdisc_bypass;         /* PACKET_QDISC_BYPASS on transmit (default 1) */
	/* xdp backend only */
	int xdp_zero_copy;        /* bind in zero-copy mode (needs driver support); 0: copy mode */
	/* tap backend only: the tap's host side, one or the other (a bridge
	 * port takes no address of its own). Either brings the tap up. What
	 * minivmm changed on a tap it did not create is undone at exit. */
	char ip[64];              /* "ADDR/PREFIX", IPv4 or IPv6, given to the tap; "" none */
	char bridge[16];          /* an existing bridge the tap joins; "" none; NUL-terminated */
	/* Rate limits, host to guest (rx) and guest to host (tx); all zero
	 * (the default): none. Changed live with minivmm_net_set_rate_limit(). */
	struct minivmm_rate_limit rx_limit, tx_limit;
};

struct minivmm_config {
	const char *kernel_path;     /* bzImage or PVH ELF (required) */
	const char *initrd_path;     /* NULL for none */
	const char *cmdline;         /* kernel command line; NULL for the default */
	unsigned ncpus;              /* vCPUs, 1..MINIVMM_MAX_CPUS */
	uint64_t mem_size;           /* bytes of guest RAM, >= MINIVMM_MIN_MEM, multiple of 2 MiB */
	/* mem_size may exceed the host's memory (MemTotal, or the memory
	 * cgroup's limit if lower): guest RAM is mapped MAP_NORESERVE and
	 * only costs what the guest touches. Default 0: refused. */
	int mem_overcommit;

	enum minivmm_serial_mode serial;
	const char *serial_path;     /* MINIVMM_SERIAL_FILE: a file, or a FIFO that already has a reader */
	int serial_in_fd;            /* MINIVMM_SERIAL_STDIO (default 0, -1 for none) */
	int serial_out_fd;           /* MINIVMM_SERIAL_STDIO (default 1, -1 for none) */

	struct minivmm_net_config net[MINIVMM_MAX_NETS];
	unsigned nr_nets;

	/* ACPI tables (RSDP, XSDT, FADT, MADT, DSDT with every virtio-mmio
	 * device) for kernels that find devices only through ACPI; 0 leaves
	 * the MP table and the cmdline entries alone. Default 1. */
	int acpi;

	/* vCPU i runs on vcpu_cpus[i] when nr_vcpu_cpus > 0 (then >= ncpus). */
	int vcpu_cpus[MINIVMM_MAX_CPUS];
	unsigned nr_vcpu_cpus;

	/* Where informational lines go (boot time, warnings, a console
	 * output that failed). NULL: stderr, as "minivmm: <line>". Called
	 * from any of the library's threads, possibly from two at once. */
	void (*log)(void *opaque, const char *line);
	void *log_opaque;

	/* Called once when the VM has stopped (every vCPU has left KVM_RUN),
	 * with the exit status and the stop reason (see minivmm_stop_reason),
	 * on the thread that ran the VM: the caller of minivmm_run(), or the
	 * library's "minivmm" thread after minivmm_start(). It may read
	 * statistics; it must not call minivmm_wait() or minivmm_destroy() on
	 * this VM. NULL: no call. */
	void (*on_stop)(void *opaque, int status, const char *reason);
	void *on_stop_opaque;

	/* The vCPU kick signal (see the top of this file). 0 or unset by
	 * minivmm_config_init(): SIGRTMIN+1. Else SIGUSR1, SIGUSR2 or a
	 * real-time signal. */
	int kick_signal;

	/* Confinement (docs/security.md). seccomp: every thread the library
	 * starts installs the filter of its kind once set up, before it runs
	 * anything the guest drives; so does its "minivmm" run thread after
	 * minivmm_start(). The program's own threads are left alone, the
	 * caller of minivmm_run() included. The log callback (and on_stop after
	 * minivmm_start) runs on confined threads and may only make the calls
	 * those allow (write, futex, memory). Default (0) MINIVMM_SECCOMP_ON.
	 * drop_caps: each thread then keeps only the capabilities its kind
	 * needs (none, but CAP_NET_ADMIN/CAP_NET_RAW where a backend is
	 * reopened). Default 0. */
	enum minivmm_seccomp seccomp;
	int drop_caps;

	/* CLOCK_MONOTONIC ns at which "the VMM started", for the boot timer;
	 * 0 means when minivmm_create() was called. */
	uint64_t start_ns;

	/* Log one line per start-up phase (KVM opened, memory mapped, devices,
	 * kernel loaded, vCPUs created and started), and at the end (stop
	 * requested, vCPUs stopped, torn down), each with the milliseconds
	 * since start_ns: where a boot's time goes. Default 0. */
	int boot_trace;

	/* MINIVMM_IRQCHIP_SPLIT (minivmm_config_init's default) starts and
	 * stops ~20 ms faster than MINIVMM_IRQCHIP_KERNEL, but a guest then has
	 * no 8259 and a PIT that counts (for calibration) without raising IRQ0:
	 * it must take its ticks from the LAPIC (the TSC-deadline timer), as
	 * Linux does under KVM. KERNEL gives it KVM's 8259s and ticking PIT. */
	enum minivmm_irqchip irqchip;

	/* Stop a guest that still runs timeout_secs seconds after its vCPUs
	 * started, with MINIVMM_EXIT_TIMEOUT and the reason "guest still
	 * running after N s (--timeout)". 1..MINIVMM_TIMEOUT_MAX_SECS;
	 * default 0: no limit. */
	unsigned timeout_secs;
};

struct minivmm;

/* Fill cfg with defaults: 1 vCPU, 256 MiB, serial on stdio, no network,
 * ACPI on, kick signal SIGRTMIN+1. */
MINIVMM_API void minivmm_config_init(struct minivmm_config *cfg);

/* Defaults for one network device: tap, 1 queue pair, io_uring, MTU 1500,
 * queue size 256. */
MINIVMM_API void minivmm_net_config_init(struct minivmm_net_config *net);

/* Check every field of cfg: the ranges above, pinning lists against the
 * CPUs this process may run on, one tap name per device. Returns 0, or
 * -EINVAL with one line in errbuf naming the minivmm command-line option
 * that corresponds to the field (the CLI prints exactly this line).
 * minivmm_create() calls it first; host limits (memory, address bits) are
 * checked by minivmm_create() itself. */
MINIVMM_API int minivmm_config_validate(const struct minivmm_config *cfg, char *errbuf,
					size_t errlen);

/* Build the VM (validated config, KVM, memory, devices, kernel loaded) but
 * do not run it. cfg is copied; the strings it points to must stay valid
 * until minivmm_destroy(). On failure returns a negative errno and writes
 * one line into errbuf. */
MINIVMM_API int minivmm_create(const struct minivmm_config *cfg, struct minivmm **vm,
			       char *errbuf, size_t errlen);

/* Run on the calling thread until the guest stops or a stop is requested.
 * Returns the exit status (minivmm_abi.h). Once per VM, and not together
 * with minivmm_start(): a second call returns MINIVMM_EXIT_HOST_ERROR. */
MINIVMM_API int minivmm_run(struct minivmm *vm);

/* Run on a thread of the library's and return at once. 0, or -EBUSY if the
 * VM already ran or runs, or -errno if the thread could not start (one line
 * in errbuf). */
MINIVMM_API int minivmm_start(struct minivmm *vm, char *errbuf, size_t errlen);

/* Ask the VM to stop, with status MINIVMM_EXIT_OK and the reason
 * "stopped by minivmm_stop()". Returns at once; minivmm_wait() waits.
 * Safe from any thread, from the callbacks and from a signal handler
 * (async-signal-safe); idempotent: the first stop request of any kind
 * wins, later ones do nothing. A stop before the VM runs makes it stop as
 * soon as it starts. */
MINIVMM_API void minivmm_stop(struct minivmm *vm);

/* The same with a status and reason of the caller's (e.g. 128 + signal).
 * Equally safe; reason is copied (at most 2047 bytes). */
MINIVMM_API void minivmm_request_stop(struct minivmm *vm, int status, const char *reason);

/* Wait until a VM started with minivmm_start() has stopped and its vCPU
 * threads are joined; returns its exit status. Any number of calls, from
 * any thread except the "minivmm" thread itself (the on_stop callback):
 * -EDEADLK there. After minivmm_run() returned: that status. -EINVAL if
 * the VM never ran. */
MINIVMM_API int minivmm_wait(struct minivmm *vm);

/* Why the VM stopped (may span several lines, e.g. registers of a crashed
 * vCPU); "" while it has not been asked to stop. */
MINIVMM_API const char *minivmm_stop_reason(const struct minivmm *vm);

/* Stop the VM if it still runs, wait for it, free everything. After
 * minivmm_run() returned or minivmm_start() (waited for or not), or
 * instead of running it. NULL is fine. Not concurrently with another call
 * on the same VM. */
MINIVMM_API void minivmm_destroy(struct minivmm *vm);

/* ---- statistics ---------------------------------------------------------
 *
 * minivmm_net_stats() fills caller-provided structs for one network device:
 * the device, each queue pair, each worker thread. Every struct may grow
 * at its end in later versions: minivmm_net_stats_init() records the sizes
 * the caller was compiled with, and the library writes no more than that
 * (and zero-fills what it does not know). Counters are totals since the VM
 * was created; read them as often as you like, from any thread, while the
 * VM runs or after it stopped (until minivmm_destroy). */

#define MINIVMM_STATS_VERSION 2

struct minivmm_queue_stats {          /* one queue pair */
	unsigned queue;               /* pair index: rx queue 2i, tx queue 2i+1 */
	int active;                   /* carries traffic (VQ_PAIRS_SET) */
	char worker[16];              /* the worker thread serving it; "" before the driver is up */
	uint64_t rx_frames, rx_bytes; /* host -> guest */
	uint64_t tx_frames, tx_bytes; /* guest -> host */
	uint64_t rx_kicks, tx_kicks;  /* guest notifications */
	uint64_t irqs;                /* interrupts requested for this pair */
	uint64_t rx_no_buffer;        /* times RX stopped for lack of guest buffers */
	uint64_t rx_dropped;          /* frames larger than the buffers they were read into */
	uint64_t rx_filtered;         /* frames the guest's RX filter did not want */
	uint64_t backend_drops;       /* counted by the backend (packet socket) */
	uint64_t rx_errors, tx_errors;
	uint64_t tx_dropped;          /* guest frames dropped: the backend was gone, or stopped with them in flight */
	uint64_t rx_gso_cut;          /* GSO frames cut into segments for a guest without TSO */
	uint64_t rx_bounced;          /* xdp: frames received into a bounce chunk and copied to the guest */
	uint64_t tx_bounced;          /* xdp: guest frames copied into a bounce chunk to be sent */
};

struct minivmm_worker_stats {         /* one data-path worker thread */
	char name[16];                /* "net0-q1", "net0-w0" */
	int cpu;                      /* pinned to this host CPU, -1: not pinned */
	unsigned queues;              /* queue pairs it serves */
	uint64_t cpu_ns;              /* CPU time so far */
	uint64_t voluntary_switches, involuntary_switches;
	char io_uring[96];            /* what its io_uring got: "taskrun=defer fixed-files=on ..."; "" for epoll */
};

struct minivmm_net_stats {
	/* Set by minivmm_net_stats_init(): */
	uint32_t size;                /* sizeof(struct minivmm_net_stats) of the caller */
	uint32_t queue_size;          /* sizeof(struct minivmm_queue_stats) of the caller */
	uint32_t worker_size;         /* sizeof(struct minivmm_worker_stats) of the caller */
	uint32_t version;             /* set by the library: MINIVMM_STATS_VERSION it filled */
	struct minivmm_queue_stats *queues;   /* caller's array, max_queues entries (may be NULL) */
	unsigned max_queues;
	struct minivmm_worker_stats *workers; /* caller's array, max_workers entries (may be NULL) */
	unsigned max_workers;
	/* Filled by the library: */
	unsigned index;               /* device k: "net<k>" */
	char name[16];                /* "net0" */
	char backend[16];             /* "tap" or "packet" */
	char ifname[16];              /* the tap or host interface */
	char engine[16];              /* "uring" or "epoll" */
	unsigned queue_pairs;         /* pairs the device offers */
	unsigned active_pairs;        /* pairs carrying traffic */
	unsigned nr_workers;          /* worker threads now (0 before the driver is up) */
	int link_up;                  /* the guest sees carrier (config status LINK_UP): the backend's
				       * interface is there and the link is not set down */
	unsigned nr_queues;           /* entries written to queues[] */
	unsigned nr_worker_entries;   /* entries written to workers[] */
	uint64_t ctrl_commands, ctrl_errors;  /* control-queue commands, refused ones */
	/* Since version 2: the rate limiters. *_throttled: times a queue had
	 * to wait for the buckets; *_throttled_ns: time some queue of the
	 * device waited. */
	uint64_t rx_throttled, rx_throttled_ns, tx_throttled, tx_throttled_ns;
	int link_set_down;            /* the link is set down (minivmm_net_set_link) */
};

static inline void minivmm_net_stats_init(struct minivmm_net_stats *s,
					  struct minivmm_queue_stats *queues, unsigned max_queues,
					  struct minivmm_worker_stats *workers, unsigned max_workers)
{
	memset(s, 0, sizeof(*s));
	s->size = (uint32_t)sizeof(*s);
	s->queue_size = (uint32_t)sizeof(struct minivmm_queue_stats);
	s->worker_size = (uint32_t)sizeof(struct minivmm_worker_stats);
	s->queues = queues;
	s->max_queues = max_queues;
	s->workers = workers;
	s->max_workers = max_workers;
}

/* Pause a running VM: every vCPU out of KVM_RUN and held, every queue
 * worker idle once what was in flight has finished (no frame moves either
 * way), the counters standing still. minivmm_resume() goes on where it
 * stopped: no frame lost or sent twice. Stopping a paused VM works as
 * ever. 0, or -EALREADY (paused already / not paused), -ESHUTDOWN (not
 * running), -ETIMEDOUT (it did not stand still within 2 s: it runs on),
 * each with a line in errbuf. Any thread but the VM's own. */
MINIVMM_API int minivmm_pause(struct minivmm *vm, char *errbuf, size_t errlen);
MINIVMM_API int minivmm_resume(struct minivmm *vm, char *errbuf, size_t errlen);
MINIVMM_API int minivmm_is_paused(const struct minivmm *vm);

/* Change device `index`'s rate limits live: rx and/or tx (NULL: that
 * direction as it is). Each bucket starts full with its new size and
 * one-time burst; a queue waiting for the old buckets is served by the new
 * ones within a millisecond. 0, or -EINVAL (bad index or values, with a
 * line in errbuf). Any thread. */
MINIVMM_API int minivmm_net_set_rate_limit(struct minivmm *vm, unsigned index,
					   const struct minivmm_rate_limit *rx,
					   const struct minivmm_rate_limit *tx, char *errbuf, size_t errlen);
/* Set device `index`'s link down or up, as a cable pulled or put back:
 * down, the guest sees no carrier (config status LINK_UP cleared, a
 * configuration interrupt), what it sends is dropped and no new read is made
 * for it from the backend; up, traffic goes on (frames that reached the
 * backend meanwhile are delivered as far as its queue kept them). A link
 * whose backend is gone stays down until both say up. 0, -EALREADY (it is
 * so already), or -EINVAL (no such device), with a line in errbuf. Any
 * thread. */
MINIVMM_API int minivmm_net_set_link(struct minivmm *vm, unsigned index, int up, char *errbuf, size_t errlen);
/* The limits in force (NULL: not wanted). 0 or -EINVAL. */
MINIVMM_API int minivmm_net_get_rate_limit(struct minivmm *vm, unsigned index, struct minivmm_rate_limit *rx,
					   struct minivmm_rate_limit *tx);

/* Network devices of the VM (= cfg->nr_nets). */
MINIVMM_API unsigned minivmm_net_count(const struct minivmm *vm);

/* Fill *s (prepared by minivmm_net_stats_init) for device `index`. Returns
 * 0, or -EINVAL for an index out of range or a struct older than the first
 * version (size too small). */
MINIVMM_API int minivmm_net_stats(struct minivmm *vm, unsigned index, struct minivmm_net_stats *s);

/* Print the statistics, as minivmm --stats does: a table (a line on the
 * VM, then every network device's queues and workers), or one JSON line
 * {"net":[...],"timestamp":...,"vm":{...},...} (json != 0; every key is
 * described in the project's docs/stats.md). Prints nothing if out of
 * memory; minivmm_write_stats() says so. */
MINIVMM_API void minivmm_print_stats(struct minivmm *vm, FILE *out, int json);

/* The same statistics written to fd, in one write(2) (more only if the
 * kernel takes part of it): with O_APPEND, a file gets whole lines even
 * from several threads or processes. Returns 0, or a negative errno with
 * one line in errbuf (the write failed, or out of memory). Since 2.1. */
MINIVMM_API int minivmm_write_stats(struct minivmm *vm, int fd, int json, char *errbuf,
				    size_t errlen);

/* Write the VM's flattened device tree (the DTB a PVH guest receives as a
 * boot module; docs/boot.md) to the file at path, replacing it. Returns 0,
 * or a negative errno with one line in errbuf. */
MINIVMM_API int minivmm_write_dtb(const struct minivmm *vm, const char *path, char *errbuf,
				  size_t errlen);

/* What a guest's CPU looks like on this host, without running a guest
 * (minivmm --cpuid-dump; docs/cpu.md). Opens /dev/kvm and creates a VM and
 * vCPU 0 of ncpus (0: 1) as a run would. */
enum minivmm_cpuid_dump_what {
	MINIVMM_CPUID_DUMP_GUEST = 1,      /* the CPUID vCPU 0 gets, what differs from KVM's and why, the boot MSRs */
	MINIVMM_CPUID_DUMP_SUPPORTED = 2,  /* KVM_GET_SUPPORTED_CPUID as it is */
};
MINIVMM_API int minivmm_cpuid_dump(FILE *out, enum minivmm_cpuid_dump_what what, unsigned ncpus,
				   char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
