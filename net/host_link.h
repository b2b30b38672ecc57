/* SPDX-License-Identifier: Apache-2.0 */
/* The host side of an interface, over rtnetlink (libmnl): look one up,
 * bring it up or down, give it an address or take it away, make it a port
 * of a bridge or not. What --net tap=NAME,ip=ADDR/PREFIX,bridge=BR asks of
 * a tap (net/tap.c), and the undo of exactly what was done, at exit.
 *
 * Everything happens in the network namespace of the thread that called
 * host_link_open(). The requests need CAP_NET_ADMIN in the thread that
 * sends them (the kernel checks the sender, not only the socket's opener). */
#ifndef MINIVMM_NET_HOST_LINK_H
#define MINIVMM_NET_HOST_LINK_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "net/host_addr.h"

/* An rtnetlink socket. */
struct host_link;

int host_link_open(struct host_link **out, struct vmm_err *err);
void host_link_close(struct host_link *h);   /* NULL is fine */

struct host_link_info {
	unsigned ifindex;
	unsigned flags;             /* IFF_UP, IFF_LOWER_UP ... */
	unsigned master;            /* the bridge (or bond) it is a port of; 0: none */
	char kind[16];              /* IFLA_INFO_KIND: "bridge", "tun", "veth"; "" none */
};

/* The interface called name: -ENODEV (one line saying so) when there is none. */
int host_link_get(struct host_link *h, const char *name, struct host_link_info *info,
		  struct vmm_err *err);

/* Administrative state (IFF_UP) of interface ifindex. */
int host_link_set_up(struct host_link *h, unsigned ifindex, bool up, struct vmm_err *err);

/* Make ifindex a port of master (a bridge), or of none (master 0). */
int host_link_set_master(struct host_link *h, unsigned ifindex, unsigned master,
			 struct vmm_err *err);

/* Add an address: -EEXIST when the interface has it already (then it is
 * not ours to take away). */
int host_link_add_addr(struct host_link *h, unsigned ifindex, const struct host_addr *a,
		       struct vmm_err *err);
int host_link_del_addr(struct host_link *h, unsigned ifindex, const struct host_addr *a,
		       struct vmm_err *err);

/* Does ifindex have address a with a's prefix? 1, 0 or -errno. */
int host_link_has_addr(struct host_link *h, unsigned ifindex, const struct host_addr *a,
		       struct vmm_err *err);

/* ---- a set-up and its undo ------------------------------------------------ */

/* What to do to an interface: an address, or a bridge to join (and in
 * either case the interface goes up). */
struct host_link_setup {
	bool has_addr;
	struct host_addr addr;
	char bridge[IFNAMSIZ];      /* "" none */
};

/* What host_link_apply() did, so that host_link_revert() undoes that and
 * nothing else: an address that was already there stays, a link that was
 * already up stays up, a port that was already on the bridge stays on it. */
struct host_link_undo {
	unsigned ifindex;           /* 0: nothing to undo */
	char ifname[IFNAMSIZ];
	bool addr_added;
	struct host_addr addr;
	bool master_set;
	bool brought_up;
};

/* The bridge s->bridge exists and is a bridge: checked before anything is
 * created, so that a wrong name leaves nothing behind. One line naming it
 * otherwise ("there is no interface br9 ...", "v0 is not a bridge (it is a veth)"). */
int host_link_check_bridge(struct host_link *h, const struct host_link_setup *s, struct vmm_err *err);

/* Apply s to the interface ifname: join the bridge, add the address,
 * bring it up, recording each step in *u as it succeeds. On failure what
 * was done is undone before returning, and err says what failed without
 * naming the interface ("cannot add address 10.0.0.1/24: ..."): the caller
 * does. A port of another bridge is refused (moving it would take it from
 * the operator's bridge). */
int host_link_apply(struct host_link *h, const char *ifname, const struct host_link_setup *s,
		    struct host_link_undo *u, struct vmm_err *err);

/* Undo what *u records (the address, the bridge port, then the link state)
 * and clear it. Goes on past a step that fails; returns 0 or the first
 * failure, as what stays and why, for the caller to put after the
 * interface's name ("stays up: ...", "keeps address 10.0.0.1/24: ...").
 * An interface that is gone, or that is another one by now (its name on a
 * new index), has nothing left to undo. */
int host_link_revert(struct host_link *h, struct host_link_undo *u, struct vmm_err *err);

#endif
