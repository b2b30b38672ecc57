/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bootstamp: run a VMM with its console on a pipe and time every console line
 * from just before the exec, the same way for any VMM (bench/linux boot mode).
 *
 *   bootstamp [-o LOG] [-m MARK] [-s PREFIX]... [-t SECS] [-k] -- CMD [ARG...]
 *
 *   -o LOG     every line of CMD's stdout and stderr, as "<ms> <line>" (ms since
 *              just before the exec, of the read that brought the line's first
 *              byte), in the order they came
 *   -m MARK    the first line containing MARK is "the mark" (e.g. the inner
 *              init's first words); at it bootstamp samples KVM's counters for
 *              CMD's VM (debugfs /sys/kernel/debug/kvm/<pid>-<fd>/, summed over
 *              the VM's vCPUs by KVM) when they can be read
 *   -s PREFIX  lines starting with PREFIX are the VMM's own (e.g. "minivmm:",
 *              "qemu-system-x86_64:"): they are not "the first console line"
 *   -t SECS    kill CMD (SIGTERM, SIGKILL 2 s later) after SECS seconds
 *   -k         pass the console through to stdout as it comes, after stamping it
 *
 * At the end it prints one line on stdout:
 *   BOOTSTAMP status=<exit status> first_ms=<ms> mark_ms=<ms> exit_ms=<ms>
 *             [kclock0_ms=<ms>] lines=<n> bytes=<n> mark_bytes=<n> mark_lines=<n>
 *             [kvm_<stat>=<n>...] [timeout=1]
 * (first_ms: the first line not from the VMM itself; mark_bytes: console bytes
 * read before the mark line; "-" for what never happened). Status is the
 * child's exit status, 128+N for a signal. kclock0_ms, with printk.time=1 on the
 * guest's cmdline: when the guest kernel's printk clock read 0 (the smallest
 * stamp minus printk time over all "[ s.us]" lines), i.e. what the VMM, its
 * firmware and the kernel's decompressor took before it.
 *
 * Build: gcc -static -O2 -Wall -o bootstamp bootstamp.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PREFIXES 8
#define LINE_MAX_LEN 4096

/* The counters that tell where a boot's exits went (kvm debugfs names). */
static const char *const kvm_stats[] = {
	"exits", "io_exits", "mmio_exits", "halt_exits", "irq_exits", "irq_window_exits",
	"signal_exits", "hypercalls", "insn_emulation", "irq_injections", "halt_wakeup",
	"pf_taken", "pf_fixed",
};
#define NSTATS (sizeof(kvm_stats) / sizeof(kvm_stats[0]))

struct stamper {
	const char *mark;
	const char *prefixes[MAX_PREFIXES];
	unsigned nprefixes;
	FILE *log;
	bool passthrough;
	uint64_t t0;
	pid_t child;

	char line[LINE_MAX_LEN];
	size_t len;
	uint64_t line_ms_us;        /* stamp of the current line's first byte, µs */
	uint64_t line_start;        /* bytes before the current line */
	bool in_line;
	uint64_t lines, bytes;
	int64_t first_us, mark_us;  /* -1: not seen */
	int64_t kclock_zero_us;     /* when the kernel's printk clock read 0 */
	bool kclock_seen;
	uint64_t mark_bytes, mark_lines;
	long long kvm[NSTATS];
	bool kvm_ok;
};

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static long long read_number(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long long v = -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* KVM's VM-wide counters of the child's VM(s): /sys/kernel/debug/kvm/<pid>-<fd>. */
static void sample_kvm(struct stamper *s)
{
	DIR *d = opendir("/sys/kernel/debug/kvm");
	if (!d)
		return;
	char want[32];
	int n = snprintf(want, sizeof(want), "%d-", (int)s->child);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, want, (size_t)n) != 0)
			continue;
		for (unsigned i = 0; i < NSTATS; i++) {
			char path[512];
			snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%s/%s", e->d_name, kvm_stats[i]);
			long long v = read_number(path);
			if (v >= 0) {
				s->kvm[i] += v;
				s->kvm_ok = true;
			}
		}
	}
	closedir(d);
}

static bool is_vmm_line(const struct stamper *s, const char *line)
{
	for (unsigned i = 0; i < s->nprefixes; i++)
		if (strncmp(line, s->prefixes[i], strlen(s->prefixes[i])) == 0)
			return true;
	return false;
}

static void end_line(struct stamper *s)
{
	s->line[s->len] = '\0';
	/* A console line ends in "\r\n": drop the '\r'. */
	if (s->len && s->line[s->len - 1] == '\r')
		s->line[--s->len] = '\0';
	int64_t t = (int64_t)(s->line_ms_us - s->t0);
	if (s->log)
		fprintf(s->log, "%10.3f %s\n", (double)t / 1000.0, s->line);
	if (s->passthrough)
		printf("%s\n", s->line);
	if (s->first_us < 0 && s->len && !is_vmm_line(s, s->line))
		s->first_us = t;
	/* printk.time=1: "[    1.234567] text". A line goes out after it was
	 * logged, so the smallest (stamp - printk time) is the closest bound on
	 * when the kernel's clock (sched_clock) read 0. */
	unsigned long sec, usec;
	if (sscanf(s->line, "[ %lu.%lu]", &sec, &usec) == 2) {
		int64_t zero = t - (int64_t)(sec * 1000000u + usec);
		if (!s->kclock_seen || zero < s->kclock_zero_us)
			s->kclock_zero_us = zero;
		s->kclock_seen = true;
	}
	if (s->mark && s->mark_us < 0 && strstr(s->line, s->mark)) {
		s->mark_us = t;
		s->mark_bytes = s->line_start;   /* console bytes before the mark line */
		s->mark_lines = s->lines;
		sample_kvm(s);
	}
	s->lines++;
	s->len = 0;
	s->in_line = false;
}

static void take(struct stamper *s, const char *buf, size_t n, uint64_t t)
{
	for (size_t i = 0; i < n; i++) {
		if (s->len == 0 && !s->in_line) {
			s->line_ms_us = t;
			s->line_start = s->bytes;
			s->in_line = true;
		}
		if (buf[i] == '\n') {
			end_line(s);
		} else if (s->len < LINE_MAX_LEN - 1) {
			s->line[s->len++] = buf[i];
		}
		s->bytes++;
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: bootstamp [-o LOG] [-m MARK] [-s PREFIX]... [-t SECS] [-k] -- CMD [ARG...]\n");
	exit(2);
}

static void print_ms(const char *name, int64_t us)
{
	if (us < 0)
		printf(" %s=-", name);
	else
		printf(" %s=%.1f", name, (double)us / 1000.0);
}

int main(int argc, char **argv)
{
	struct stamper s = { .first_us = -1, .mark_us = -1 };
	const char *log_path = NULL;
	unsigned timeout_s = 0;
	int opt;
	while ((opt = getopt(argc, argv, "+o:m:s:t:k")) != -1) {
		switch (opt) {
		case 'o': log_path = optarg; break;
		case 'm': s.mark = optarg; break;
		case 's':
			if (s.nprefixes == MAX_PREFIXES)
				usage();
			s.prefixes[s.nprefixes++] = optarg;
			break;
		case 't': timeout_s = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'k': s.passthrough = true; break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	if (log_path && !(s.log = fopen(log_path, "w"))) {
		fprintf(stderr, "bootstamp: cannot write %s: %s\n", log_path, strerror(errno));
		return 2;
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		perror("bootstamp: pipe");
		return 2;
	}
	fflush(stdout);
	s.t0 = now_us();
	s.child = fork();
	if (s.child < 0) {
		perror("bootstamp: fork");
		return 2;
	}
	if (s.child == 0) {
		dup2(p[1], 1);
		dup2(p[1], 2);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "bootstamp: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(p[1]);

	uint64_t deadline = timeout_s ? s.t0 + (uint64_t)timeout_s * 1000000u : 0, kill_at = 0;
	bool timed_out = false;
	char buf[65536];
	for (;;) {
		int wait_ms = -1;
		uint64_t t = now_us();
		if (deadline && !timed_out) {
			if (t >= deadline) {
				timed_out = true;
				kill(s.child, SIGTERM);
				kill_at = t + 2000000u;
			} else {
				wait_ms = (int)((deadline - t) / 1000u) + 1;
			}
		}
		if (kill_at) {
			if (t >= kill_at) {
				kill(s.child, SIGKILL);
				kill_at = 0;
			} else {
				wait_ms = (int)((kill_at - t) / 1000u) + 1;
			}
		}
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		int r = poll(&pf, 1, wait_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t n = read(p[0], buf, sizeof(buf));
		t = now_us();
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;   /* EOF: the VMM (and anything it started) closed the console */
		take(&s, buf, (size_t)n, t);
	}
	if (s.in_line)
		end_line(&s);
	int st = 0;
	while (waitpid(s.child, &st, 0) < 0 && errno == EINTR)
		;
	int64_t exit_us = (int64_t)(now_us() - s.t0);
	int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (s.log)
		fclose(s.log);
	printf("BOOTSTAMP status=%d", status);
	print_ms("first_ms", s.first_us);
	print_ms("mark_ms", s.mark_us);
	print_ms("exit_ms", exit_us);
	if (s.kclock_seen)
		printf(" kclock0_ms=%.1f", (double)s.kclock_zero_us / 1000.0);
	printf(" lines=%llu bytes=%llu", (unsigned long long)s.lines, (unsigned long long)s.bytes);
	if (s.mark_us >= 0)
		printf(" mark_lines=%llu mark_bytes=%llu", (unsigned long long)s.mark_lines,
		       (unsigned long long)s.mark_bytes);
	if (s.kvm_ok)
		for (unsigned i = 0; i < NSTATS; i++)
			printf(" kvm_%s=%lld", kvm_stats[i], s.kvm[i]);
	if (timed_out)
		printf(" timeout=1");
	printf("\n");
	return 0;
}
