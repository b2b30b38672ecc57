/* SPDX-License-Identifier: Apache-2.0 */
/* Process-wide duties of the minivmm program (not of the library, which
 * must not touch process state an embedding program owns): the standard
 * descriptors, SIGPIPE, and the terminal on a fatal crash. */
#ifndef MINIVMM_VMM_PROCESS_H
#define MINIVMM_VMM_PROCESS_H

/* Make sure descriptors 0, 1 and 2 are open, to /dev/null if they were
 * closed, so that no file the VMM opens later (/dev/kvm, a tap) lands on
 * one of them and receives console bytes. Call first thing in main().
 * Returns 0 or -errno. */
int process_reserve_stdio(void);

/* A reader of stdout that goes away must not kill the VMM: the write
 * fails with EPIPE and the serial device logs it once. */
void process_ignore_sigpipe(void);

/* Close every descriptor above 2 this process inherited (a launcher's
 * leaked pipe or socket would otherwise stay open for the whole run, within
 * reach of every thread), except those a path names: /dev/fd/N or
 * /proc/self/fd/N, as a shell's process substitution passes them (e.g.
 * --serial file:>(tee log)). n paths, NULL entries skipped. Call once
 * options are parsed and before anything else is opened. Returns 0 or
 * -errno. */
int process_close_inherited_fds(const char *const *paths, unsigned n);

/* Raise the soft limit on open files to the hard one: a VM with many
 * queue pairs needs more than a shell's usual 1024 soft limit may leave
 * (minivmm polls, never select()s, so high descriptors are fine). */
void process_raise_fd_limit(void);

/* If fd is a terminal, remember its modes and restore them from a handler
 * of SIGSEGV, SIGBUS, SIGABRT, SIGILL and SIGFPE before the default action
 * (core dump) runs, so a crash does not leave the shell raw. */
void process_guard_terminal(int fd);

#endif
