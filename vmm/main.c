/* SPDX-License-Identifier: Apache-2.0 */
/* The minivmm program: parse flags, build the VM through the embedding API,
 * run it, map the outcome to an exit status. The only place that exits. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/confine.h"
#include "minivmm.h"
#include "minivmm_abi.h"
#include "vmm/api.h"
#include "vmm/api_vm.h"
#include "vmm/cli.h"
#include "vmm/process.h"
#include "vmm/seccomp.h"

struct signal_watch {
	struct minivmm *vm;
	sigset_t set;
	int stats;  /* --stats: 0 none, 1 table, 2 JSON */
	int stats_fd;              /* --stats-file, -1: none */
	const char *stats_path;
	uint64_t interval_ns;      /* --stats-interval, 0: no periodic line */
	bool stats_file_failing;   /* a write failed: said once, until one succeeds */
	int done;   /* set by main when the VM has stopped */
	const struct confine *confine;   /* the program's threads' filters and capabilities */
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- statistics: --stats to stderr, --stats-file ------------------------ */

/* O_APPEND: each line lands whole at the end, whoever else appends. A new
 * file is made 0600: the lines name the host's interfaces and, after a
 * crash, hold the guest's registers; an operator who wants them shared
 * makes the file first (its mode is kept) or reads it as root. O_NONBLOCK:
 * a FIFO without a reader is refused at once instead of waited for, and a
 * full one loses a line (said) instead of stalling the signal thread; a
 * regular file ignores it. Whether this run made the file is recorded, so
 * a run that never starts can remove it. */
static int stats_file_open(const char *path, bool *created, struct vmm_err *err)
{
	int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	int fd = open(path, flags | O_CREAT | O_EXCL, 0600);
	*created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path, flags);
	if (fd >= 0)
		return fd;
	if (errno == ENXIO)
		return vmm_err_set(err, ENXIO, "--stats-file '%s': a FIFO without a reader", path);
	return vmm_err_sys(err, errno, "--stats-file '%s': cannot open", path);
}

/* A run that never started leaves behind no file it made. */
static void stats_file_discard(int fd, const char *path, bool created)
{
	if (fd < 0)
		return;
	close(fd);
	if (created)
		unlink(path);
}

/* One line to --stats-file. A failure (a full disk, a FIFO nobody reads)
 * is said once, and again only after a line got through. */
static void stats_file_line(struct signal_watch *w)
{
	char msg[512];
	if (minivmm_write_stats(w->vm, w->stats_fd, 1, msg, sizeof(msg)) == 0) {
		w->stats_file_failing = false;
	} else if (!w->stats_file_failing) {
		struct vmm_err err = { 0 };
		vmm_err_set(&err, EIO, "--stats-file '%s': %s (said once until a line is written)",
			    w->stats_path, msg);
		fprintf(stderr, "minivmm: %s\n", err.msg);
		w->stats_file_failing = true;
	}
}

/* SIGUSR1: stderr in --stats's form (the table when neither --stats nor
 * --stats-file is given), and a line to --stats-file. */
static void stats_on_request(struct signal_watch *w)
{
	if (w->stats || w->stats_fd < 0)
		minivmm_write_stats(w->vm, STDERR_FILENO, w->stats == 2, NULL, 0);
	if (w->stats_fd >= 0)
		stats_file_line(w);
}

/* Termination signals become a clean stop: the terminal is restored and
 * vCPU threads are joined instead of dying mid-exit. SIGUSR1 writes the
 * statistics; so does every --stats-interval, this thread's wait timing
 * out (one thread, one filter: the lines need nothing the wait did not). */
static void *signal_watch_main(void *arg)
{
	struct signal_watch *w = arg;
	pthread_setname_np(pthread_self(), "signals");
	struct vmm_err err = { 0 };
	if (confine_enter(w->confine, CONFINE_SIGNALS, &err) < 0) {
		minivmm_request_stop(w->vm, MINIVMM_EXIT_HOST_ERROR, err.msg);
		return NULL;
	}
	bool periodic = w->interval_ns && w->stats_fd >= 0;
	uint64_t next = monotonic_ns() + w->interval_ns;   /* the next periodic line */
	for (;;) {
		struct timespec wait = { 0 };
		if (periodic) {
			uint64_t now = monotonic_ns();
			uint64_t left = next > now ? next - now : 0;
			wait.tv_sec = (time_t)(left / 1000000000u);
			wait.tv_nsec = (long)(left % 1000000000u);
		}
		int sig = sigtimedwait(&w->set, NULL, periodic ? &wait : NULL);
		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
			return NULL;
		if (sig < 0) {
			if (errno != EAGAIN)
				continue;   /* EINTR */
			stats_file_line(w);
			/* On the interval's grid; a line late by more than an
			 * interval (a stopped process) is not made up for. */
			uint64_t now = monotonic_ns();
			do
				next += w->interval_ns;
			while (next <= now);
			continue;
		}
		if (sig == SIGUSR1) {
			stats_on_request(w);
			continue;
		}
		char reason[64];
		snprintf(reason, sizeof(reason), "stopped by signal %d (%s)", sig, strsignal(sig));
		minivmm_request_stop(w->vm, MINIVMM_EXIT_SIGNAL_BASE + sig, reason);
	}
}

/* The library confines the threads it starts; this thread and the signal
 * thread are the program's, so their filters are built here (vmm/seccomp.c
 * and base/confine.c are linked into the program too) with the VM's mode;
 * the VM says what that mode is. */
static int program_confinement(const struct minivmm_config *cfg, int api_dir_fd, struct confine *c,
			       struct vmm_err *err)
{
	memset(c, 0, sizeof(*c));
	enum minivmm_seccomp mode = seccomp_effective_mode(cfg->seccomp);
	struct confine_needs needs;
	confine_needs_from_config(cfg, cfg->kick_signal, &needs);
	needs.api_dir_fd = api_dir_fd;
	c->filters = mode != MINIVMM_SECCOMP_OFF;
	c->drop_caps = cfg->drop_caps != 0;
	/* The signal thread keeps nothing; this one keeps CAP_NET_ADMIN only
	 * to undo ip=/bridge= on an operator's tap when it tears the VM down
	 * (rtnetlink checks the sender's capability, not only the socket's). */
	if (needs.tap_host)
		c->keep_caps[CONFINE_MAIN] = 1ull << CAP_NET_ADMIN;
	if (!c->filters)
		return 0;
	return seccomp_lists_build(c, &needs, mode,
				   (1u << CONFINE_MAIN) | (1u << CONFINE_SIGNALS) | (1u << CONFINE_API), err);
}

/* What the process can return: a status outside 0..255 would be cut to
 * its low byte by exit() and mean something else. */
static int process_status(int status)
{
	return status >= 0 && status <= 255 ? status : MINIVMM_EXIT_HOST_ERROR;
}

int main(int argc, char **argv)
{
	/* Before anything opens a file: see process_reserve_stdio(). */
	if (process_reserve_stdio() < 0)
		return MINIVMM_EXIT_HOST_ERROR;
	process_ignore_sigpipe();
	uint64_t start_ns = monotonic_ns();
	struct cli_options opts;
	struct vmm_err err = { 0 };
	if (cli_parse(argc, argv, &opts, &err)) {
		fprintf(stderr, "minivmm: %s (see minivmm --help)\n", err.msg);
		return MINIVMM_EXIT_USAGE;
	}
	if (opts.help) {
		fputs(cli_usage, stdout);
		return 0;
	}
	if (opts.version) {
		printf("minivmm %s\nlibminivmm API %d.%d\nAF_XDP backend: %s\n"
		       "host networking (ip=, bridge=, link events): %s\nAPI socket (--api-socket): %s\n",
		       MINIVMM_VERSION, MINIVMM_API_VERSION_MAJOR, MINIVMM_API_VERSION_MINOR,
		       MINIVMM_XDP ? "yes" : "no (built with XDP=0)",
		       MINIVMM_HOSTNET ? "yes" : "no (built with HOSTNET=0)",
		       MINIVMM_API_SOCKET ? "yes" : "no (built with API_SOCKET=0)");
		return 0;
	}
	if (opts.seccomp_list) {
		seccomp_lists_print(stdout);
		return 0;
	}
	if (opts.cpuid_dump) {
		char msg[512];
		if (minivmm_cpuid_dump(stdout, opts.cpuid_dump, opts.vm.ncpus, msg, sizeof(msg)) < 0) {
			fprintf(stderr, "minivmm: %s\n", msg);
			return MINIVMM_EXIT_USAGE;
		}
		return 0;
	}
	opts.vm.start_ns = start_ns;
	/* Nothing a launcher left open stays within the threads' reach. */
	const char *named[] = { opts.vm.kernel_path, opts.vm.initrd_path, opts.vm.serial_path,
				opts.stats_file };
	int closed = process_close_inherited_fds(named, sizeof(named) / sizeof(named[0]));
	if (closed < 0) {
		fprintf(stderr, "minivmm: cannot close the file descriptors inherited: %s\n", strerror(-closed));
		return MINIVMM_EXIT_HOST_ERROR;
	}
	process_raise_fd_limit();
	if (opts.vm.serial == MINIVMM_SERIAL_STDIO)
		process_guard_terminal(opts.vm.serial_in_fd);

	/* Block termination signals before any thread exists, so that only
	 * the watcher thread receives them. */
	struct signal_watch watch = { 0 };
	sigemptyset(&watch.set);
	sigaddset(&watch.set, SIGINT);
	sigaddset(&watch.set, SIGTERM);
	sigaddset(&watch.set, SIGQUIT);
	sigaddset(&watch.set, SIGUSR1);
	/* nohup: a SIGHUP ignored when we start stays ignored (sigwait would
	 * take a blocked one even so). */
	struct sigaction hup;
	if (sigaction(SIGHUP, NULL, &hup) < 0 || hup.sa_handler != SIG_IGN)
		sigaddset(&watch.set, SIGHUP);
	watch.stats = opts.stats;
	watch.stats_fd = -1;
	watch.stats_path = opts.stats_file;
	watch.interval_ns = (uint64_t)opts.stats_interval * 1000000000u;
	pthread_sigmask(SIG_BLOCK, &watch.set, NULL);

	char msg[512];
	struct minivmm *vm;
	if (minivmm_create(&opts.vm, &vm, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "minivmm: %s\n", msg);
		return MINIVMM_EXIT_USAGE;
	}
	if (opts.keep_caps)
		fprintf(stderr, "minivmm: --keep-caps: every thread keeps the capabilities minivmm started with (for debugging)\n");
	if (opts.dump_dtb) {
		/* The VM is fully built (so every option was checked), never run. */
		int rc = minivmm_write_dtb(vm, opts.dump_dtb, msg, sizeof(msg));
		minivmm_destroy(vm);
		if (rc < 0) {
			fprintf(stderr, "minivmm: --dump-dtb: %s\n", msg);
			return MINIVMM_EXIT_USAGE;
		}
		return 0;
	}
	watch.vm = vm;
	/* Opened once the VM is built, so bad input elsewhere leaves no file. */
	bool stats_created = false;
	if (opts.stats_file) {
		watch.stats_fd = stats_file_open(opts.stats_file, &stats_created, &err);
		if (watch.stats_fd < 0) {
			fprintf(stderr, "minivmm: %s\n", err.msg);
			minivmm_destroy(vm);
			return MINIVMM_EXIT_USAGE;
		}
	}
	/* The API socket: the last of the checks a start can fail. */
	struct api_server *api = NULL;
	struct api_ops api_ops = api_vm_ops(vm);
	if (opts.api_socket && api_server_open(&api, opts.api_socket, opts.api_gid, &api_ops, &err) < 0) {
		fprintf(stderr, "minivmm: %s\n", err.msg);
		stats_file_discard(watch.stats_fd, opts.stats_file, stats_created);
		minivmm_destroy(vm);
		return MINIVMM_EXIT_USAGE;
	}
	struct confine confine;
	if (program_confinement(&opts.vm, api_server_dir_fd(api), &confine, &err) < 0 ||
	    (api && api_server_run(api, &confine, &err) < 0)) {
		fprintf(stderr, "minivmm: %s\n", err.msg);
		api_server_stop(api);
		stats_file_discard(watch.stats_fd, opts.stats_file, stats_created);
		seccomp_lists_free(&confine);
		minivmm_destroy(vm);
		return MINIVMM_EXIT_HOST_ERROR;
	}
	watch.confine = &confine;
	pthread_t watcher;
	if (pthread_create(&watcher, NULL, signal_watch_main, &watch) != 0) {
		fprintf(stderr, "minivmm: cannot start the signal thread\n");
		api_server_stop(api);
		stats_file_discard(watch.stats_fd, opts.stats_file, stats_created);
		seccomp_lists_free(&confine);
		minivmm_destroy(vm);
		return MINIVMM_EXIT_HOST_ERROR;
	}

	/* The VM runs on the library's thread, which confines itself; this
	 * one, having started every thread it will, confines itself too: from
	 * here on it waits, prints and tears down. */
	int status;
	if (minivmm_start(vm, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "minivmm: %s\n", msg);
		status = MINIVMM_EXIT_HOST_ERROR;
	} else {
		if (confine_enter(&confine, CONFINE_MAIN, &err) < 0)
			minivmm_request_stop(vm, MINIVMM_EXIT_HOST_ERROR, err.msg);
		status = minivmm_wait(vm);
		status = process_status(status < 0 ? MINIVMM_EXIT_HOST_ERROR : status);
	}
	const char *reason = minivmm_stop_reason(vm);
	if (*reason)
		fprintf(stderr, "minivmm: %s%s (exit status %d)\n",
			status == MINIVMM_EXIT_GUEST_CRASH ? "guest crashed: " : "", reason, status);

	__atomic_store_n(&watch.done, 1, __ATOMIC_RELEASE);
	pthread_kill(watcher, SIGTERM);
	pthread_join(watcher, NULL);
	api_server_stop(api);   /* before the VM its endpoints reach goes */

	/* The last statistics, once no other line can follow: stdout is the
	 * guest's console, so --stats goes to stderr. */
	if (opts.stats)
		minivmm_write_stats(vm, STDERR_FILENO, opts.stats == 2, NULL, 0);
	if (watch.stats_fd >= 0) {
		stats_file_line(&watch);
		close(watch.stats_fd);
	}
	minivmm_destroy(vm);
	seccomp_lists_free(&confine);
	return status;
}
