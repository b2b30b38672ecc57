/* SPDX-License-Identifier: Apache-2.0 */
/* The seccomp allow-lists: one per kind of thread (base/confine.h), built
 * with libseccomp into the programs each thread installs on itself.
 *
 * The lists are one table of rules (vmm/seccomp.c): a system call, the
 * kinds of thread that may make it, the argument values allowed (ioctl
 * requests, socket families, setsockopt levels and options...), the
 * configurations that need it (a tap device, a packet device with several
 * queues, the io_uring engine...) and why. docs/security.md prints the table
 * (minivmm --seccomp-list). */
#ifndef MINIVMM_VMM_SECCOMP_H
#define MINIVMM_VMM_SECCOMP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/confine.h"
#include "base/error.h"
#include "minivmm.h"

/* What the VM's configuration makes its threads do. */
struct confine_needs {
	bool net;              /* any network device: workers, control, link threads */
	bool tap;              /* a tap device */
	bool tap_host;         /* ... with ip= or bridge=: undone at teardown, on main (net/tap.c) */
	bool packet;           /* a packet-socket device */
	bool packet_mq;        /* ... with several queue pairs: VQ_PAIRS_SET reopens sockets */
	bool packet_recv;      /* ... with rx=recv (a larger receive buffer: CAP_NET_ADMIN) */
	bool xdp;              /* an AF_XDP device: workers make their queue's socket */
	bool xdp_mq;           /* ... with several queue pairs: drain sockets, RSS, as queues are steered */
	bool xdp_zero_copy;    /* ... in zero-copy mode: a stopping worker probes its queue is free */
	bool uring;            /* the io_uring engine */
	bool epoll;            /* the epoll engine */
	bool drop_caps;        /* threads started by the spawner drop capabilities themselves */
	bool split_irqchip;    /* minivmm's IOAPIC: vCPUs set KVM's MSI routes */
	int terminal_fd;       /* the console's input (--serial stdio), restored at exit; -1 none */
	int api_dir_fd;        /* --api-socket: its directory, where main removes it at exit; -1 none */
	int kick_signal;       /* the signal that kicks a vCPU out of KVM_RUN */
	pid_t pid;             /* the VMM's: tgkill only within it */
};

void confine_needs_from_config(const struct minivmm_config *cfg, int kick_signal,
			       struct confine_needs *n);

/* Build the program of every role in `roles` (bit 1 << role) into c->prog,
 * with `mode` MINIVMM_SECCOMP_ON (a forbidden call kills the process) or
 * MINIVMM_SECCOMP_LOG (it is logged and allowed). Returns 0 or -errno with
 * one line in err; on failure nothing is left allocated. */
int seccomp_lists_build(struct confine *c, const struct confine_needs *n, enum minivmm_seccomp mode,
		  unsigned roles, struct vmm_err *err);
#define SECCOMP_ALL_ROLES ((1u << CONFINE_ROLES) - 1)

/* The mode a VM really gets: MINIVMM_SECCOMP_OFF in a sanitizer build,
 * whose runtime makes system calls of its own at exit and in its reports
 * (LeakSanitizer stops the world with ptrace from a clone; reports start a
 * symbolizer), which filters would kill just when it has something to say.
 * Else `asked`. */
enum minivmm_seccomp seccomp_effective_mode(enum minivmm_seccomp asked);

/* Free what seccomp_lists_build() made. */
void seccomp_lists_free(struct confine *c);

/* The system calls `role` may make under n (some only with certain
 * arguments): their numbers into nrs (up to max), sorted; returns how many
 * there are (which may exceed max). */
unsigned seccomp_lists_count(enum confine_role role, const struct confine_needs *n, int *nrs,
			       unsigned max);

/* The whole table as Markdown, one section per role (docs/security.md and
 * minivmm --seccomp-list). */
void seccomp_lists_print(FILE *out);

#endif
