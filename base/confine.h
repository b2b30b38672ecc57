/* SPDX-License-Identifier: Apache-2.0 */
/* How a thread of the VMM confines itself once it is set up: a seccomp
 * filter made for its kind of thread, and the capabilities it keeps.
 *
 * This is the mechanism only: what each kind of thread may do is decided in
 * vmm/seccomp.c (the allow-lists) and vmm/caps.c (the capabilities), which
 * fill a struct confine when the VM is built. Devices and workers get a
 * pointer to it from their creator and call confine_enter() from the thread
 * itself, after their set-up and before they touch anything the guest
 * drives. Both seccomp filters and capabilities belong to one thread: a
 * thread started later inherits its creator's and can only narrow them
 * (docs/security.md, "Stacking"). */
#ifndef MINIVMM_BASE_CONFINE_H
#define MINIVMM_BASE_CONFINE_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

/* The kinds of thread, each with its own allow-list. */
enum confine_role {
	CONFINE_MAIN,        /* runs the VM (minivmm_run) and tears it down */
	CONFINE_SIGNALS,     /* the minivmm command's signal watcher */
	CONFINE_VCPU,        /* vcpu<i>: KVM_RUN and the devices' register emulation */
	CONFINE_SERIAL,      /* serial: host input to the UART, deferred console output */
	CONFINE_SPAWNER,     /* spawner: starts threads for confined threads (base/spawn.h) */
	CONFINE_NET_WORKER,  /* net<k>-q<i>, net<k>-w<j>: the data path */
	CONFINE_NET_CTRL,    /* net<k>-ctrl: the control queue */
	CONFINE_NET_LINK,    /* net<k>-link: watches a backend's interface go and come back */
	CONFINE_NET_HELPER,  /* net<k>-helper: the backend's privileged steps (net/helper.h) */
	CONFINE_API,         /* api: the API socket's HTTP server (vmm/api.h) */
	CONFINE_ROLES
};

struct confine {
	bool filters;                               /* install seccomp filters */
	bool drop_caps;                             /* reduce capabilities to keep_caps */
	struct sock_fprog prog[CONFINE_ROLES];      /* a classic BPF program per role */
	uint64_t keep_caps[CONFINE_ROLES];          /* bit (1 << CAP_x) per capability kept */
};

/* Confine the calling thread as `role`: with drop_caps, keep only
 * keep_caps[role] (permitted, effective; inheritable, ambient and the
 * bounding set emptied of the rest); with filters, set no_new_privs and
 * install prog[role]. NULL or nothing enabled: returns 0 and does nothing
 * (unit tests, fakes). Returns 0 or -errno with one line in err. */
int confine_enter(const struct confine *c, enum confine_role role, struct vmm_err *err);

/* "vcpu", "net-worker", ... (as in docs/security.md) */
const char *confine_role_name(enum confine_role role);

#endif
