/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's word when an interface appears, changes (up, down, carrier)
 * or goes: an rtnetlink socket bound to RTNLGRP_LINK, in the network
 * namespace of the thread that opens it. The link thread
 * (devices/virtio/net_link.c) waits on it for a vanished backend to come
 * back. */
#ifndef MINIVMM_NET_LINK_EVENTS_H
#define MINIVMM_NET_LINK_EVENTS_H

#include <net/if.h>
#include <stdbool.h>

#include "base/error.h"

struct link_event {
	bool gone;                  /* RTM_DELLINK; else RTM_NEWLINK (new or changed) */
	unsigned ifindex;
	unsigned flags;             /* IFF_UP, IFF_LOWER_UP ... */
	char name[IFNAMSIZ];        /* "" if the message had none */
};

struct link_events;

/* Open and bind the socket (non-blocking, close-on-exec). */
int link_events_open(struct link_events **out, struct vmm_err *err);
void link_events_close(struct link_events *le);   /* NULL is fine */

/* What to poll for readability. */
int link_events_fd(const struct link_events *le);

/* Take every event queued, calling fn for each; never waits. Returns the
 * number of events, 0 when none was queued, -ENOBUFS when the socket
 * overran and events were lost (look at the interfaces directly), or
 * another -errno. Only read(2) on the socket: a confined thread needs
 * nothing more. */
int link_events_read(struct link_events *le, void (*fn)(void *opaque, const struct link_event *ev),
		     void *opaque);

#endif
