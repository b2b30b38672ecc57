/* SPDX-License-Identifier: Apache-2.0 */
/* The embedding API's promises, checked from a program that links the
 * installed library (tests/integration/test_embed.sh): validation in
 * minivmm_create, start/stop/wait and their corner cases, stop from another
 * thread and from a signal handler, the on_stop callback, the kick signal,
 * the signal mask of the library's threads.
 *
 *   api_check KERNEL      (the test guest) prints one line per check */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <minivmm.h>

static int checks, failures;
static const char *kernel;

#define CHECK(cond, ...) do { \
	checks++; \
	if (cond) { \
		printf("api_check: ok: "); \
	} else { \
		failures++; \
		printf("api_check: FAIL (line %d): ", __LINE__); \
	} \
	printf(__VA_ARGS__); \
	printf("\n"); \
	fflush(stdout); \
} while (0)

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void quiet_log(void *opaque, const char *line) { (void)opaque; (void)line; }

/* A guest that runs until stopped: serial-echo waits for a line forever. */
static void waiting_guest(struct minivmm_config *cfg, const char *cmdline)
{
	minivmm_config_init(cfg);
	cfg->kernel_path = kernel;
	cfg->cmdline = cmdline ? cmdline : "test=serial-echo";
	cfg->mem_size = 32ull << 20;
	cfg->serial = MINIVMM_SERIAL_NONE;
	cfg->log = quiet_log;
}

static struct minivmm *create(const struct minivmm_config *cfg)
{
	char err[256];
	struct minivmm *vm = NULL;
	if (minivmm_create(cfg, &vm, err, sizeof(err)) < 0) {
		printf("api_check: create failed: %s\n", err);
		return NULL;
	}
	return vm;
}

static void check_validation(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	minivmm_net_config_init(&cfg.net[0]);
	cfg.net[0].queues = 17;
	cfg.nr_nets = 1;
	char v[256] = "", c[256] = "";
	int rv = minivmm_config_validate(&cfg, v, sizeof(v));
	struct minivmm *vm = NULL;
	int rc = minivmm_create(&cfg, &vm, c, sizeof(c));
	CHECK(rv == -EINVAL && rc == -EINVAL && vm == NULL && strcmp(v, c) == 0 &&
	      strcmp(c, "--net queues: '17' is not a number from 1 to 16") == 0,
	      "queues=17 refused by validate and create alike: '%s'", c);
	cfg.net[0].queues = 1;
	cfg.net[0].mtu = 1;
	rc = minivmm_create(&cfg, &vm, c, sizeof(c));
	CHECK(rc == -EINVAL && strcmp(c, "--net mtu: '1' is not a number from 68 to 65535") == 0,
	      "mtu=1 refused by create: '%s'", c);
}

static void *stop_later(void *arg)
{
	usleep(200 * 1000);
	minivmm_stop(arg);
	return NULL;
}

static void check_start_stop_wait(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	char err[256];
	CHECK(strcmp(minivmm_stop_reason(vm), "") == 0, "no stop reason before a stop");
	CHECK(minivmm_wait(vm) == -EINVAL, "wait before start: -EINVAL");
	CHECK(minivmm_start(vm, err, sizeof(err)) == 0, "start");
	CHECK(minivmm_start(vm, err, sizeof(err)) == -EBUSY, "a second start: -EBUSY (%s)", err);
	CHECK(minivmm_run(vm) == MINIVMM_EXIT_HOST_ERROR, "run after start: MINIVMM_EXIT_HOST_ERROR");
	pthread_t t;
	pthread_create(&t, NULL, stop_later, vm);
	double t0 = now_s();
	int status = minivmm_wait(vm);
	pthread_join(t, NULL);
	CHECK(status == MINIVMM_EXIT_OK && now_s() - t0 < 10, "stopped from another thread: status %d", status);
	minivmm_stop(vm);
	minivmm_request_stop(vm, 99, "too late");
	CHECK(minivmm_wait(vm) == MINIVMM_EXIT_OK, "wait again, after more stops: still 0");
	CHECK(strcmp(minivmm_stop_reason(vm), "stopped by minivmm_stop()") == 0,
	      "the first stop's reason wins: '%s'", minivmm_stop_reason(vm));
	minivmm_destroy(vm);
}

static void check_stop_before_start(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	char err[256];
	minivmm_stop(vm);
	double t0 = now_s();
	int rc = minivmm_start(vm, err, sizeof(err));
	int status = minivmm_wait(vm);
	CHECK(rc == 0 && status == 0 && now_s() - t0 < 5, "stop before start: ends at once, status %d", status);
	minivmm_destroy(vm);
}

struct stop_seen {
	struct minivmm *vm;
	int status;
	int wait_rc;
	char reason[128];
	int calls;
};

static void on_stop_record(void *opaque, int status, const char *reason)
{
	struct stop_seen *s = opaque;
	s->calls++;
	s->status = status;
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
	s->wait_rc = minivmm_wait(s->vm);   /* must refuse, not deadlock */
}

static void check_on_stop_and_request_stop(void)
{
	struct minivmm_config cfg;
	struct stop_seen seen = { 0 };
	waiting_guest(&cfg, NULL);
	cfg.on_stop = on_stop_record;
	cfg.on_stop_opaque = &seen;
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	seen.vm = vm;
	char err[256];
	minivmm_start(vm, err, sizeof(err));
	usleep(100 * 1000);
	minivmm_request_stop(vm, 42, "custom reason");
	int status = minivmm_wait(vm);
	CHECK(status == 42 && seen.calls == 1 && seen.status == 42 &&
	      strcmp(seen.reason, "custom reason") == 0,
	      "request_stop(42): wait %d, on_stop called %d time(s) with %d '%s'", status, seen.calls,
	      seen.status, seen.reason);
	CHECK(seen.wait_rc == -EDEADLK, "minivmm_wait from on_stop: -EDEADLK (%d)", seen.wait_rc);
	minivmm_destroy(vm);
}

static void check_guest_exit_status(void)
{
	struct minivmm_config cfg;
	struct stop_seen seen = { 0 };
	waiting_guest(&cfg, "test=exit code=7");
	cfg.on_stop = on_stop_record;
	cfg.on_stop_opaque = &seen;
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	seen.vm = vm;
	char err[256];
	minivmm_start(vm, err, sizeof(err));
	int status = minivmm_wait(vm);
	CHECK(status == 15 && seen.status == 15, "debug-exit 7: status %d (on_stop %d)", status, seen.status);
	minivmm_destroy(vm);

	waiting_guest(&cfg, "test=exit code=100");
	vm = create(&cfg);
	if (!vm)
		return;
	status = minivmm_run(vm);
	CHECK(status == MINIVMM_EXIT_DEBUG_RANGE && minivmm_wait(vm) == status,
	      "debug-exit 100 through minivmm_run: status %d, then wait says the same", status);
	minivmm_destroy(vm);
}

static void check_destroy_while_running(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	char err[256];
	minivmm_start(vm, err, sizeof(err));
	usleep(100 * 1000);
	double t0 = now_s();
	minivmm_destroy(vm);
	CHECK(now_s() - t0 < 10, "destroy of a running VM stops and frees it (%.2f s)", now_s() - t0);
}

static void *run_on_thread(void *arg)
{
	static int status;
	status = minivmm_run(arg);
	return &status;
}

static void check_run_on_own_thread(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	pthread_t t;
	pthread_create(&t, NULL, run_on_thread, vm);
	usleep(200 * 1000);
	minivmm_stop(vm);
	void *ret;
	pthread_join(t, &ret);
	CHECK(*(int *)ret == 0 && minivmm_wait(vm) == 0, "minivmm_run on the program's thread, stopped from another");
	minivmm_destroy(vm);
}

static struct minivmm *alarm_vm;

static void stop_from_handler(int sig)
{
	(void)sig;
	minivmm_stop(alarm_vm);   /* async-signal-safe */
}

static void check_stop_from_signal_handler(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	alarm_vm = vm;
	struct sigaction sa = { .sa_handler = stop_from_handler };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	char err[256];
	minivmm_start(vm, err, sizeof(err));
	alarm(1);
	int status = minivmm_wait(vm);
	CHECK(status == 0 && strcmp(minivmm_stop_reason(vm), "stopped by minivmm_stop()") == 0,
	      "minivmm_stop from a SIGALRM handler: status %d", status);
	signal(SIGALRM, SIG_DFL);
	minivmm_destroy(vm);
}

static void program_handler(int sig) { (void)sig; }

static void check_kick_signal(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	CHECK(cfg.kick_signal == SIGRTMIN + 1, "default kick signal SIGRTMIN+1");
	/* A signal the program handles itself is refused, and left alone. */
	struct sigaction mine = { .sa_handler = program_handler }, after;
	sigemptyset(&mine.sa_mask);
	sigaction(SIGRTMIN + 3, &mine, NULL);
	cfg.kick_signal = SIGRTMIN + 3;
	char err[256];
	struct minivmm *vm = NULL;
	int rc = minivmm_create(&cfg, &vm, err, sizeof(err));
	sigaction(SIGRTMIN + 3, NULL, &after);
	CHECK(rc == -EBUSY && strstr(err, "already has a handler") && after.sa_handler == program_handler,
	      "a kick signal the program handles is refused: '%s'", err);
	cfg.kick_signal = SIGINT;
	rc = minivmm_create(&cfg, &vm, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "kick_signal SIGINT"), "SIGINT as kick signal refused: '%s'", err);
	/* Another free signal works: the VM stops through it. */
	cfg.kick_signal = SIGUSR2;
	vm = create(&cfg);
	if (!vm)
		return;
	minivmm_start(vm, err, sizeof(err));
	usleep(100 * 1000);
	minivmm_stop(vm);
	CHECK(minivmm_wait(vm) == 0, "kick signal SIGUSR2: stopped");
	minivmm_destroy(vm);
}

/* /proc/self/task/<tid>/status of the first thread named `name`. */
static int thread_blocks(const char *name, int sig)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int found = -1;
	while (d && (e = readdir(d))) {
		char path[300], comm[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		if (strcmp(comm, name) != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		char line[128];
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long mask;
			if (sscanf(line, "SigBlk: %llx", &mask) == 1)
				found = (int)((mask >> (sig - 1)) & 1);
		}
		if (f)
			fclose(f);
		break;
	}
	if (d)
		closedir(d);
	return found;
}

static void check_thread_signal_masks(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	char err[256];
	minivmm_start(vm, err, sizeof(err));
	usleep(200 * 1000);
	int vcpu_int = thread_blocks("vcpu0", SIGINT), vcpu_pipe = thread_blocks("vcpu0", SIGPIPE);
	int vcpu_kick = thread_blocks("vcpu0", SIGRTMIN + 1), run_int = thread_blocks("minivmm", SIGINT);
	CHECK(vcpu_int == 1 && vcpu_pipe == 1 && vcpu_kick == 0 && run_int == 1,
	      "library threads block SIGINT and SIGPIPE, vCPUs take the kick (%d %d %d %d)", vcpu_int,
	      vcpu_pipe, vcpu_kick, run_int);
	minivmm_stop(vm);
	minivmm_wait(vm);
	minivmm_destroy(vm);
}

static void check_stats_arguments(void)
{
	struct minivmm_config cfg;
	waiting_guest(&cfg, NULL);
	struct minivmm *vm = create(&cfg);
	if (!vm)
		return;
	struct minivmm_net_stats s;
	minivmm_net_stats_init(&s, NULL, 0, NULL, 0);
	CHECK(minivmm_net_count(vm) == 0 && minivmm_net_stats(vm, 0, &s) == -EINVAL,
	      "no network device: count 0, stats -EINVAL");

	/* minivmm_write_stats: one JSON line per call, appended. */
	FILE *f = tmpfile();
	char err[256] = "", line[2048];
	int rc1 = f ? minivmm_write_stats(vm, fileno(f), 1, err, sizeof(err)) : -1;
	int rc2 = f ? minivmm_write_stats(vm, fileno(f), 1, err, sizeof(err)) : -1;
	int lines = 0, good = 0;
	if (f) {
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			lines++;
			good += strncmp(line, "{\"net\":[],", 10) == 0 &&
				strstr(line, "\"vm\":{\"state\":\"created\"") != NULL &&
				line[strlen(line) - 1] == '\n';
		}
		fclose(f);
	}
	CHECK(rc1 == 0 && rc2 == 0 && lines == 2 && good == 2,
	      "minivmm_write_stats: two calls, two JSON lines of a created VM (%d %d, %d lines, %d good) %s",
	      rc1, rc2, lines, good, err);
	err[0] = '\0';
	int rc = minivmm_write_stats(vm, -1, 1, err, sizeof(err));
	CHECK(rc == -EBADF && err[0] != '\0', "minivmm_write_stats to a bad fd: %d, '%s'", rc, err);
	minivmm_destroy(vm);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: api_check KERNEL\n");
		return 2;
	}
	kernel = argv[1];
	check_validation();
	check_start_stop_wait();
	check_stop_before_start();
	check_on_stop_and_request_stop();
	check_guest_exit_status();
	check_destroy_while_running();
	check_run_on_own_thread();
	check_stop_from_signal_handler();
	check_kick_signal();
	check_thread_signal_masks();
	check_stats_arguments();
	printf("api_check: %d of %d checks passed\n", checks - failures, checks);
	return failures ? 1 : 0;
}
