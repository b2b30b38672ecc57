/* SPDX-License-Identifier: Apache-2.0 */
/* Process-wide duties of the minivmm program (see process.h). */
#include "vmm/process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <termios.h>
#include <unistd.h>

int process_reserve_stdio(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* open() returns the lowest free descriptor: this one. */
		int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n < 0)
			return -errno;
		if (n != fd) {   /* cannot happen, but never leave fd closed */
			int d = dup2(n, fd);
			int e = errno;
			close(n);
			if (d < 0)
				return -e;
		}
	}
	return 0;
}

/* The descriptor a path names through /dev/fd or /proc/self/fd, or -1. */
static int fd_named_by(const char *path)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/" };
	for (unsigned i = 0; path && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		size_t len = strlen(dirs[i]);
		if (strncmp(path, dirs[i], len) != 0)
			continue;
		char *end;
		errno = 0;
		long fd = strtol(path + len, &end, 10);
		if (end != path + len && *end == '\0' && errno == 0 && fd >= 0 && fd <= INT_MAX)
			return (int)fd;
	}
	return -1;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int process_close_inherited_fds(const char *const *paths, unsigned n)
{
	int keep[n + 1];
	unsigned nk = 0;
	for (unsigned i = 0; i < n; i++) {
		int fd = fd_named_by(paths[i]);
		if (fd > 2)
			keep[nk++] = fd;
	}
	qsort(keep, nk, sizeof(int), cmp_int);
	keep[nk] = INT_MAX;   /* sentinel: the last range runs to the end */
	unsigned lo = 3;
	for (unsigned i = 0; i <= nk; i++) {
		unsigned hi = i < nk ? (unsigned)keep[i] - 1 : ~0u;
		if (lo <= hi && close_range(lo, hi, 0) < 0)
			return -errno;
		if (i < nk)
			lo = (unsigned)keep[i] + 1;
	}
	return 0;
}

void process_raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

void process_ignore_sigpipe(void)
{
	signal(SIGPIPE, SIG_IGN);
}

/* What the crash handler needs. A signal handler can reach nothing else,
 * so this is the program's one piece of static state; it is written once,
 * before any handler is installed, and only read afterwards. */
static struct {
	int fd;
	struct termios modes;
} saved_terminal = { .fd = -1 };

static void restore_terminal_and_die(int sig)
{
	/* Async-signal-safe only: tcsetattr, raise. SA_RESETHAND put the
	 * default action back on entry (and implies SA_NODEFER), so the
	 * raise takes it at once; a fault would also repeat by itself. It
	 * runs on whichever thread crashed, under that thread's seccomp
	 * filter: every list allows TCSETS and tgkill of a fatal signal
	 * (vmm/seccomp.c), and nothing more is asked here. */
	if (saved_terminal.fd >= 0)
		tcsetattr(saved_terminal.fd, TCSANOW, &saved_terminal.modes);
	raise(sig);
}

void process_guard_terminal(int fd)
{
	if (!isatty(fd) || tcgetattr(fd, &saved_terminal.modes) < 0)
		return;
	saved_terminal.fd = fd;
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE };
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = restore_terminal_and_die;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESETHAND;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
}
