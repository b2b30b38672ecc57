/* SPDX-License-Identifier: Apache-2.0 */
/* Backends behind the data path: where a queue pair's frames come from and
 * go to, speaking virtio_net_hdr_v1-prefixed frames.
 *
 * The VM creates the backend from its configuration (net_backend_create)
 * and hands it to the virtio-net device, which never knows which kind it
 * has. Each queue of a backend is a struct net_queue_io, which is all an
 * engine (io_uring, epoll) sees of it:
 *   - fd-style queues (a tap queue, a packet socket read with rx=recv): the
 *     engine reads and writes `fd` itself, batched as it likes;
 *   - ring-style queues (a TPACKET_V3 receive ring, an AF_XDP socket) work
 *     shared-memory rings: they supply rx() and/or tx(), and `fd` is what to
 *     wait on for readiness.
 * So the engines contain no "if packet" or "if xdp": only "does this queue
 * move its own frames". */
#ifndef MINIVMM_NET_BACKEND_H
#define MINIVMM_NET_BACKEND_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/guest_mem.h"
#include "base/log_limit.h"
#include "base/machine.h"
#include "net/host_link.h"

#define NET_BACKEND_MAX_QUEUES 16

struct dp_queue;

enum net_backend_kind {
	NET_BACKEND_TAP,
	NET_BACKEND_PACKET,
	NET_BACKEND_XDP,
};

/* What the VM asks for (from --net or the embedding API). */
struct net_backend_config {
	enum net_backend_kind kind;
	unsigned index;            /* the device's: net<index> in log lines */
	const struct machine *machine;   /* for a backend's own log lines (may be NULL) */
	char ifname[IFNAMSIZ];     /* tap name ("" creates one) or host interface */
	unsigned queues;
	unsigned mtu;              /* the guest's: the interface must carry it */
	/* tap: its host side (ip=, bridge=), undone when the backend goes */
	struct host_link_setup host;
	/* packet */
	unsigned fanout;           /* PACKET_FANOUT_* type */
	bool rx_ring;              /* TPACKET_V3 ring (else readv per frame) */
	bool qdisc_bypass;
	unsigned queue_size;       /* virtqueue size offered: the most chains a guest ring holds */
	/* xdp */
	bool xdp_zero_copy;        /* ask for zero-copy binding (else copy mode) */
	const struct guest_mem *mem;   /* AF_XDP: the UMEM is guest RAM */
	/* Host-only memory in the same mapping as guest RAM (base/guest_mem.h's
	 * tail), net_backend_host_tail_bytes() of it, for the backend's own
	 * buffers inside the UMEM. */
	uint8_t *host_tail;
	uint64_t host_tail_size;
};

/* One queue of a backend, as an engine sees it. Changed only while the
 * queue's worker is stopped (open, reopen, steering). */
struct net_queue_io {
	int fd;                    /* -1: none (an inactive packet queue, a gone backend) */
	/* Ring-style queues. rx: deliver what is ready to the guest; 1 stopped
	 * for lack of guest buffers (resume on the RX kick), 0 nothing ready
	 * (wait for fd to be readable), -1 the guest's ring broke. tx: send the
	 * guest's frames; 0 drained (TX kicks enabled), 1 stopped with frames
	 * left (e.g. the backend's ring is full: wait for fd to be writable or
	 * come back soon), -1 broken. NULL: the engine uses readv/writev on fd. */
	int (*rx)(struct net_queue_io *io, struct dp_queue *dp);
	int (*tx)(struct net_queue_io *io, struct dp_queue *dp);
	/* Called on the worker thread when it starts serving the queue (before
	 * fd is used: start may create it) and when it stops (after the
	 * engine's own I/O is drained; with not_fixed the engine then holds no
	 * reference to fd, so closing it really releases it). stop must leave nothing with the kernel that
	 * could still touch guest memory (e.g. an AF_XDP fill ring: close the
	 * socket) and give back, through dp, every guest buffer it holds.
	 * Either may be NULL. */
	int (*start)(struct net_queue_io *io, struct dp_queue *dp, struct vmm_err *err);
	void (*stop)(struct net_queue_io *io, struct dp_queue *dp);
	/* A start that costs in proportion to the guest's RAM (an AF_XDP bind
	 * over a UMEM of all of it) is paced by the backend's limiter: a guest
	 * that resets and activates its device in a loop gets a burst of starts
	 * at once, then its workers wait their turn before start, and a reset
	 * that comes first stops them before they cost anything. Only queues
	 * in use wait (net_qp_active). NULL: start at once. */
	struct log_limit *start_pace;
	void *priv;                /* the backend's state for this queue */
	/* The engine must keep no reference to fd beyond its operations in
	 * flight: the io_uring engine does not register it as a fixed file.
	 * A worker unregisters its fixed files as it stops, but a kernel may
	 * refuse, and a ring that keeps them drops them only when torn down,
	 * later, from a kernel work item: an AF_XDP socket closed by stop
	 * would outlive close() with guest buffers on its fill ring. */
	bool not_fixed;
	/* A ring that may miss a wake-up (TPACKET_V3 signals readability before
	 * the block is marked ours): after a wake-up with nothing ready, look
	 * again this many times, rx_recheck_us apart; bound every wait for
	 * readability by rx_poll_limit_us (0: unbounded). */
	unsigned rx_rechecks;
	unsigned rx_recheck_us;
	unsigned rx_poll_limit_us;
	/* tx() returned 1 with room left in the backend's ring, for work only
	 * the kernel finishes and signals to no one (AF_XDP completions, which
	 * come when the host has consumed a frame): call tx() again after this
	 * many microseconds instead of waiting for fd to be writable, which it
	 * already is. 0: wait for writability. Read after every tx() call. */
	unsigned tx_retry_us;
};

struct net_backend;
struct net_helper;

/* The privileged steps of a queue's start and stop (an AF_XDP socket made
 * and bound, then put in the XSKMAP; a zero-copy queue probed until the
 * kernel has let it go), which the queue's start and stop hooks ask the
 * backend's helper for (net/helper.h) instead of making them on the worker. */
enum net_queue_step {
	NET_QUEUE_OPEN,
	NET_QUEUE_ATTACH,
	NET_QUEUE_WAIT_FREE,
	NET_QUEUE_STEPS
};

/* set_queue_active, present, reopen and queue_step run on the backend's
 * helper thread (net/helper.h), called through net_backend_*(): the thread
 * that asks holds no capability and may make no socket. */
struct net_backend_ops {
	const char *kind;   /* "tap", "packet", "xdp" */
	/* Offloads the guest takes in (TAP_OFFLOAD_* bits of net/tap.h). */
	int (*set_offload)(struct net_backend *b, unsigned offloads, struct vmm_err *err);
	/* Steer traffic to this queue or away from it (VQ_PAIRS_SET). */
	int (*set_queue_active)(struct net_backend *b, unsigned q, bool active, struct vmm_err *err);
	/* The interface can vanish (ip link del) and come back. present: is it
	 * there (and up, where that matters) now? reopen: close every queue and
	 * open them again on it; the caller re-applies offloads and steering.
	 * reopen returns -EAGAIN when the interface turned out not to be back
	 * after all (present saw one being deleted): try again later, quietly. */
	bool (*present)(struct net_backend *b);
	int (*reopen)(struct net_backend *b, struct vmm_err *err);
	/* A privileged step of queue q's start or stop hook; NULL: none. */
	int (*queue_step)(struct net_backend *b, unsigned q, enum net_queue_step step, struct vmm_err *err);
	/* Frames the backend dropped on queue q since the last call (packet
	 * sockets: PACKET_STATISTICS); NULL if it cannot tell. */
	unsigned long long (*take_drops)(struct net_backend *b, unsigned q);
	void (*destroy)(struct net_backend *b);
	/* set_queue_active replaces fds (packet sockets leave and rejoin their
	 * fanout group), so workers must be stopped around it. */
	bool restart_to_steer;
};

/* Common to every backend; each embeds it first in its own struct. */
struct net_backend {
	const struct net_backend_ops *ops;
	char ifname[IFNAMSIZ];
	bool created;            /* we created the interface (it goes away with us) */
	unsigned nr_queues;
	/* What the backend can carry: the device offers no more than this. */
	bool guest_gso;          /* GSO frames towards the guest (GUEST_TSO*) */
	/* Partial checksums both ways (CSUM, GUEST_CSUM) and with them TSO:
	 * AF_XDP frames carry no checksum or GSO metadata, so the xdp backend
	 * leaves this false and the guest is offered none of them. */
	bool csum_offload;
	unsigned offloads;       /* last set_offload() */
	char detail[160];        /* more for the device's start-up line ("" for none) */
	struct net_helper *helper;   /* runs the privileged ops (net/helper.h); NULL: the caller does */
	struct net_queue_io io[NET_BACKEND_MAX_QUEUES];
};

/* Create and open the backend a configuration asks for. */
int net_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err);

/* Close and free it (NULL is fine). */
void net_backend_destroy(struct net_backend *b);

/* Host-only memory the backend needs inside the guest RAM mapping
 * (guest_mem's tail), known before guest memory is made: 0 for all but xdp. */
uint64_t net_backend_host_tail_bytes(const struct net_backend_config *cfg);

/* Drops counted by the backend for queue q since the last call; 0 for
 * backends that cannot tell. */
unsigned long long net_backend_take_drops(struct net_backend *b, unsigned q);

/* The host interface exists and is up (the packet and xdp backends' present
 * op: a socket can be bound to it again). */
bool net_iface_is_up(const char *ifname);

/* The packet and xdp backends bind a guest to an existing interface NAME:
 * refused (EINVAL, one line naming why; WHAT starts it, e.g. "packet
 * backend") when it is a loopback interface (the guest would see every
 * loopback frame of the namespace and could inject onto it; with xdp it
 * would take them from the host) or does not carry Ethernet frames (a tun,
 * wireguard, sit: the guest's virtio-net speaks Ethernet). FD: any socket to
 * ask the interface's flags and link type with. */
int net_iface_check_bindable(int fd, const char *what, const char *name, struct vmm_err *err);

/* The kinds, for net_backend_create (tap.c, packet.c, xdp.c). */
int tap_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err);
int packet_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
			  struct vmm_err *err);
int xdp_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err);
uint64_t xdp_backend_host_tail_bytes(const struct net_backend_config *cfg);

#endif
