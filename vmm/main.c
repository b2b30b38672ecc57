/* The minivmm program: parse flags, build the VM through the embedding API,
 * run it, map the outcome to an exit status. The only place that exits. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/confine.h"
#include "minivmm.h"
#include "minivmm_abi.h"
#include "vmm/cli.h"
#include "vmm/cpuid_dump.h"
#include "vmm/seccomp.h"
#include "vmm/vcpu.h"

struct signal_watch {
	struct minivmm *vm;
	sigset_t set;
	int stats;  /* --stats: 0 none, 1 table, 2 JSON */
	int done;   /* set by main when the VM has stopped */
	struct confine confine;   /* this thread's filter and capabilities */
};

/* Termination signals become a clean stop: the terminal is restored and
 * vCPU threads are joined instead of dying mid-exit. */
static void *signal_watch_main(void *arg)
{
	struct signal_watch *w = arg;
	pthread_setname_np(pthread_self(), "signals");
	struct vmm_err err = { 0 };
	if (confine_enter(&w->confine, CONFINE_SIGNALS, &err) < 0) {
		minivmm_request_stop(w->vm, MINIVMM_EXIT_HOST_ERROR, err.msg);
		return NULL;
	}
	for (;;) {
		int sig;
		if (sigwait(&w->set, &sig) != 0)
			continue;
		if (__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
			return NULL;
		if (sig == SIGUSR1) {
			minivmm_print_stats(w->vm, stderr, w->stats == 2);
			continue;
		}
		char reason[64];
		snprintf(reason, sizeof(reason), "stopped by signal %d (%s)", sig, strsignal(sig));
		minivmm_request_stop(w->vm, 128 + sig, reason);
	}
}

/* The signal thread is the command's, not the library's: its filter is
 * built here, with the VM's mode (and the VM says what that mode is). */
static int signal_watch_confinement(const struct minivmm_config *cfg, struct confine *c,
				    struct vmm_err *err)
{
	memset(c, 0, sizeof(*c));
	enum minivmm_seccomp mode = seccomp_effective_mode(cfg->seccomp);
	c->filters = mode != MINIVMM_SECCOMP_OFF;
	c->drop_caps = cfg->drop_caps != 0;   /* keep_caps: none */
	if (!c->filters)
		return 0;
	struct confine_needs needs;
	confine_needs_from_config(cfg, VCPU_KICK_SIGNAL, &needs);
	return seccomp_lists_build(c, &needs, mode, 1u << CONFINE_SIGNALS, err);
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
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
		printf("minivmm %s\n", MINIVMM_VERSION);
		return 0;
	}
	if (opts.seccomp_list) {
		seccomp_lists_print(stdout);
		return 0;
	}
	if (opts.cpuid_dump) {
		if (cpuid_dump(stdout, opts.cpuid_dump, opts.vm.ncpus, &err) < 0) {
			fprintf(stderr, "minivmm: %s\n", err.msg);
			return MINIVMM_EXIT_USAGE;
		}
		return 0;
	}
	opts.vm.start_ns = start_ns;

	/* Block termination signals before any thread exists, so that only
	 * the watcher thread receives them. */
	struct signal_watch watch = { 0 };
	sigemptyset(&watch.set);
	sigaddset(&watch.set, SIGINT);
	sigaddset(&watch.set, SIGTERM);
	sigaddset(&watch.set, SIGHUP);
	sigaddset(&watch.set, SIGUSR1);
	watch.stats = opts.stats;
	pthread_sigmask(SIG_BLOCK, &watch.set, NULL);

	char msg[512];
	struct minivmm *vm;
	if (minivmm_create(&opts.vm, &vm, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "minivmm: %s\n", msg);
		return MINIVMM_EXIT_USAGE;
	}
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
	if (signal_watch_confinement(&opts.vm, &watch.confine, &err) < 0) {
		fprintf(stderr, "minivmm: %s\n", err.msg);
		minivmm_destroy(vm);
		return MINIVMM_EXIT_HOST_ERROR;
	}
	pthread_t watcher;
	if (pthread_create(&watcher, NULL, signal_watch_main, &watch) != 0) {
		fprintf(stderr, "minivmm: cannot start the signal thread\n");
		seccomp_lists_free(&watch.confine);
		minivmm_destroy(vm);
		return MINIVMM_EXIT_HOST_ERROR;
	}

	int status = minivmm_run(vm);
	const char *reason = minivmm_stop_reason(vm);
	if (*reason)
		fprintf(stderr, "minivmm: %s%s (exit status %d)\n",
			status == MINIVMM_EXIT_GUEST_CRASH ? "guest crashed: " : "", reason, status);

	if (opts.stats)
		minivmm_print_stats(vm, stdout, opts.stats == 2);

	__atomic_store_n(&watch.done, 1, __ATOMIC_RELEASE);
	pthread_kill(watcher, SIGTERM);
	pthread_join(watcher, NULL);
	seccomp_lists_free(&watch.confine);
	minivmm_destroy(vm);
	return status;
}
