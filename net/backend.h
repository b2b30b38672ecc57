/* Backends behind the data path: where a queue pair's frames come from and
 * go to. Both engines use a backend the same way: one fd per queue pair,
 * speaking virtio_net_hdr_v1-prefixed frames. */
#ifndef MINIVMM_NET_BACKEND_H
#define MINIVMM_NET_BACKEND_H

#include <net/if.h>
#include <stdbool.h>

#include "base/error.h"

#define NET_BACKEND_MAX_QUEUES 16

struct net_backend;

struct net_backend_ops {
	const char *kind;   /* "tap", "packet" */
	/* Open one fd per queue; ifname may be "" for "pick one". */
	int (*open)(struct net_backend *b, struct vmm_err *err);
	/* Offloads the guest takes in (TAP_OFFLOAD_* bits). */
	int (*set_offload)(struct net_backend *b, unsigned offloads, struct vmm_err *err);
	/* Steer traffic to this queue or away from it (VQ_PAIRS_SET). */
	int (*set_queue_active)(struct net_backend *b, unsigned q, bool active, struct vmm_err *err);
	void (*close)(struct net_backend *b);
	/* The interface can vanish (ip link del) and come back. present: is it
	 * there (and up, where that matters) now? reopen: close every queue's
	 * fd and open them again on it; then the caller re-applies offloads and
	 * steering. */
	bool (*present)(struct net_backend *b);
	int (*reopen)(struct net_backend *b, struct vmm_err *err);
	/* set_queue_active replaces fds (packet sockets leave and rejoin their
	 * fanout group), so workers must be stopped around it. */
	bool restart_to_steer;
};

struct pkt_ring;

struct net_backend {
	const struct net_backend_ops *ops;
	char ifname[IFNAMSIZ];
	bool created;            /* we created the interface (it goes away with us) */
	unsigned nr_queues;
	int fd[NET_BACKEND_MAX_QUEUES];
	/* What the backend can carry: the device offers no more than this. */
	bool guest_gso;          /* GSO frames towards the guest (GUEST_TSO*) */
	unsigned offloads;       /* last set_offload() */

	/* packet backend */
	unsigned mtu;            /* the guest's MTU: the interface must carry it */
	unsigned fanout;         /* PACKET_FANOUT_* type */
	int fanout_id;           /* the group the kernel gave us, -1 before the first join */
	unsigned ifindex;        /* also the tap's, to tell a new one from the one that vanished */
	bool rx_ring;            /* TPACKET_V3 ring (else readv per frame) */
	bool qdisc_bypass;
	struct pkt_ring *ring[NET_BACKEND_MAX_QUEUES];
};

extern const struct net_backend_ops tap_backend_ops;
extern const struct net_backend_ops packet_backend_ops;

/* Drops the backend counted for queue q since the last call (packet
 * sockets: PACKET_STATISTICS); 0 for backends that cannot tell. */
unsigned long long net_backend_take_drops(struct net_backend *b, unsigned q);

#endif
