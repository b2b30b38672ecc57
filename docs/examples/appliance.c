/* SPDX-License-Identifier: Apache-2.0 */
/* appliance: a program that embeds minivmm (docs/embedding.md).
 *
 * It boots a guest with one virtio-net device of two queue pairs on a tap,
 * reads the device's statistics while the guest runs, and stops the guest
 * cleanly on SIGINT or SIGTERM, once FRAMES frames have reached it (0: no
 * limit), or after SECONDS (default 60).
 *
 *   appliance KERNEL TAP [FRAMES [SECONDS]]
 *
 * With the project's test guest (KERNEL = build/testguest/testguest.elf)
 * the guest is an echo server at 10.0.0.2 on both queues: give TAP the
 * address 10.0.0.1/24 and send it UDP (tests/tools/netpeer echo-check).
 *
 * Build against the installed library:
 *   cc -o appliance appliance.c $(pkg-config --cflags --libs minivmm)
 *   cc -o appliance appliance.c $(pkg-config --cflags minivmm) \
 *      -Wl,-Bstatic $(pkg-config --libs-only-L minivmm) -lminivmm -Wl,-Bdynamic \
 *      $(pkg-config --static --libs-only-l minivmm | sed 's/-lminivmm//')
 *                                               (libminivmm linked statically)
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <minivmm.h>

/* minivmm_stop() is async-signal-safe, so a signal handler may call it;
 * the handler can only find the VM through a global. */
static struct minivmm *the_vm;
static volatile sig_atomic_t got_signal;

static void stop_on_signal(int sig)
{
	got_signal = sig;
	if (the_vm)
		minivmm_stop(the_vm);
}

static void log_line(void *opaque, const char *line)
{
	(void)opaque;
	printf("appliance: minivmm says: %s\n", line);
	fflush(stdout);
}

static void vm_stopped(void *opaque, int status, const char *reason)
{
	int *stopped = opaque;
	printf("appliance: the VM stopped: status %d (%s)\n", status, reason);
	fflush(stdout);
	__atomic_store_n(stopped, 1, __ATOMIC_RELEASE);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Statistics of device 0 into caller-provided structs. */
struct net0 {
	struct minivmm_net_stats dev;
	struct minivmm_queue_stats queue[MINIVMM_MAX_QUEUE_PAIRS];
	struct minivmm_worker_stats worker[MINIVMM_MAX_QUEUE_PAIRS];
};

static int read_stats(struct minivmm *vm, struct net0 *n, uint64_t *rx, uint64_t *tx)
{
	minivmm_net_stats_init(&n->dev, n->queue, MINIVMM_MAX_QUEUE_PAIRS, n->worker,
			       MINIVMM_MAX_QUEUE_PAIRS);
	int rc = minivmm_net_stats(vm, 0, &n->dev);
	if (rc)
		return rc;
	*rx = *tx = 0;
	for (unsigned q = 0; q < n->dev.nr_queues; q++) {
		*rx += n->queue[q].rx_frames;
		*tx += n->queue[q].tx_frames;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: appliance KERNEL TAP [FRAMES [SECONDS]]\n");
		return 2;
	}
	uint64_t want = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;
	double limit = argc > 4 ? atof(argv[4]) : 60;
	int stopped = 0;

	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	cfg.kernel_path = argv[1];
	cfg.cmdline = "test=net-echo queues=2 secs=300";
	cfg.ncpus = 2;                      /* one vCPU per queue the guest polls */
	cfg.mem_size = 64ull << 20;
	cfg.serial_in_fd = -1;              /* console out to our stdout, no input */
	cfg.serial_out_fd = 1;
	cfg.log = log_line;
	cfg.on_stop = vm_stopped;
	cfg.on_stop_opaque = &stopped;
	minivmm_net_config_init(&cfg.net[0]);
	snprintf(cfg.net[0].ifname, sizeof(cfg.net[0].ifname), "%s", argv[2]);
	cfg.net[0].queues = 2;
	cfg.net[0].threads = 0;          /* one worker per queue pair (default: fit the free cores) */
	cfg.nr_nets = 1;

	char err[512];
	struct minivmm *vm;
	if (minivmm_create(&cfg, &vm, err, sizeof(err)) < 0) {
		fprintf(stderr, "appliance: %s\n", err);
		return 1;
	}
	printf("appliance: libminivmm %s, VM created\n", minivmm_version());
	the_vm = vm;
	struct sigaction sa = { .sa_handler = stop_on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (minivmm_start(vm, err, sizeof(err)) < 0) {
		fprintf(stderr, "appliance: %s\n", err);
		minivmm_destroy(vm);
		return 1;
	}
	printf("appliance: running; stopping on SIGINT or SIGTERM, after %" PRIu64 " frames or %.0f s\n",
	       want, limit);
	fflush(stdout);

	/* Watch the counters while the guest runs, from this thread. */
	struct net0 n;
	uint64_t rx = 0, tx = 0, printed = UINT64_MAX;
	double start = now_s();
	const char *why = "time limit";
	while (now_s() - start < limit) {
		if (__atomic_load_n(&stopped, __ATOMIC_ACQUIRE)) {
			why = got_signal ? "signal" : "the guest stopped";
			break;
		}
		if (read_stats(vm, &n, &rx, &tx) == 0 && rx != printed) {
			printf("appliance: stats: %s %s %s, %u/%u pairs active, %u workers, rx %" PRIu64
			       " tx %" PRIu64 " frames\n", n.dev.name, n.dev.backend, n.dev.ifname,
			       n.dev.active_pairs, n.dev.queue_pairs, n.dev.nr_workers, rx, tx);
			fflush(stdout);
			printed = rx;
		}
		if (want && rx >= want) {
			why = "frame count";
			break;
		}
		usleep(100 * 1000);
	}

	minivmm_stop(vm);                   /* idempotent: fine if it stopped already */
	int status = minivmm_wait(vm);
	read_stats(vm, &n, &rx, &tx);
	for (unsigned q = 0; q < n.dev.nr_queues; q++)
		printf("appliance: q%u rx %" PRIu64 " tx %" PRIu64 " worker %s\n", n.queue[q].queue,
		       n.queue[q].rx_frames, n.queue[q].tx_frames,
		       n.queue[q].worker[0] ? n.queue[q].worker : "-");
	for (unsigned w = 0; w < n.dev.nr_worker_entries; w++)
		printf("appliance: worker %s cpu %.3f s, %" PRIu64 " context switches\n",
		       n.worker[w].name, (double)n.worker[w].cpu_ns / 1e9,
		       n.worker[w].voluntary_switches + n.worker[w].involuntary_switches);
	printf("appliance: stopped (%s) after %" PRIu64 " frames: exit status %d (%s)\n", why, rx,
	       status, minivmm_stop_reason(vm));
	the_vm = NULL;
	minivmm_destroy(vm);
	return status == MINIVMM_EXIT_OK ? 0 : 1;
}
