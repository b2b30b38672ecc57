/* SPDX-License-Identifier: Apache-2.0 */
/* Process-wide duties of the minivmm program (see process.h). */
#include "vmm/process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
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
