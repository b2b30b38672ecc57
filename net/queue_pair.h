/* SPDX-License-Identifier: Apache-2.0 */
/* The data path's view of one virtio-net queue pair.
 *
 * A worker in net/ moves frames between a backend file descriptor (a tap
 * queue, a packet socket) and the guest's rings. It sees rings only through
 * struct net_ring_ops, filled in by the device, so net/ never includes
 * devices/ (the same data path could serve an out-of-process backend). */
#ifndef MINIVMM_NET_QUEUE_PAIR_H
#define MINIVMM_NET_QUEUE_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/guest_chain.h"
#include "net/backend.h"

/* How the data path works a guest ring (a virtqueue, device side). */
struct net_ring_ops {
	int (*pop)(void *ring, struct guest_chain *chain);        /* 1, 0 empty, -1 broken */
	void (*push)(void *ring, uint16_t head, uint32_t len);
	void (*publish)(void *ring);
	bool (*should_signal)(void *ring);
	void (*disable_kicks)(void *ring);
	bool (*enable_kicks)(void *ring);                          /* true: work arrived */
	uint16_t (*pending)(void *ring);                           /* chains not yet popped */
	const char *(*error)(void *ring);                          /* why it is broken */
};

struct dp_queue;

struct net_ring {
	void *ring;
	int kick_fd;     /* eventfd the guest's notifications arrive on */
};

/* Per-device services shared by all its queue pairs. */
struct net_guest {
	const struct net_ring_ops *ops;
	void *opaque;
	void (*signal)(void *opaque);                 /* interrupt the guest (used buffers) */
	void (*fail)(void *opaque, const char *why);  /* ring broken: device needs reset */
	/* The host could not serve the device (out of file descriptors or
	 * memory, io_uring refused): not the guest's doing, the VM stops with
	 * the host-error status. NULL: reported as fail. */
	void (*host_fail)(void *opaque, const char *why);
	/* RX filter (promiscuous mode, MAC tables): deliver a frame for dst? */
	bool (*rx_accept)(void *opaque, const uint8_t *dst_mac);
	/* The backend behind queue pair `qp` is gone (-errno: the interface was
	 * deleted, its socket lost its device): the worker has stopped using its
	 * fd. Called once per loss, from the worker thread. */
	void (*backend_lost)(void *opaque, unsigned qp, int err);
	/* One line for the user (rate-limited by the caller). */
	void (*log)(void *opaque, const char *line);
};

/* Counters. Written only by the worker serving the pair (plain stores of
 * aligned 64-bit values), read by anyone: a reader sees each counter whole. */
struct net_queue_stats {
	uint64_t rx_frames, rx_bytes;
	uint64_t tx_frames, tx_bytes;
	uint64_t rx_kicks, tx_kicks;
	uint64_t irqs;             /* interrupts requested for this pair */
	uint64_t rx_no_buffer;     /* times RX stopped for lack of guest buffers */
	uint64_t rx_dropped;       /* frames larger than the buffers they were read into */
	uint64_t rx_filtered;      /* frames the guest's RX filter did not want */
	uint64_t rx_gso_cut;       /* GSO frames cut into segments for a guest without TSO */
	uint64_t rx_bounced;       /* xdp: frames the kernel put in a bounce chunk, copied to the guest */
	uint64_t tx_bounced;       /* xdp: guest frames copied into a bounce chunk (split over segments) */
	uint64_t tx_errors, rx_errors;
	uint64_t tx_dropped;       /* guest frames dropped: the backend was gone, or stopped with them in flight */
	uint64_t backend_drops;    /* counted by the backend (packet socket) */
};

/* What an RX frame may carry for the guest (GUEST_CSUM, GUEST_TSO4/6,
 * GUEST_ECN). Negotiated at DRIVER_OK, then changed by the guest's
 * GUEST_OFFLOADS_SET while the workers run: one word, so a worker never
 * sees half a change. */
enum {
	NET_RX_CSUM = 1u << 0,     /* NEEDS_CSUM frames */
	NET_RX_TSO4 = 1u << 1,
	NET_RX_TSO6 = 1u << 2,
	NET_RX_ECN  = 1u << 3,
	NET_RX_GSO  = NET_RX_TSO4 | NET_RX_TSO6,
};

struct rate_limit;

struct net_queue_pair {
	unsigned index;
	struct net_ring rx, tx;
	const struct net_guest *guest;
	struct net_queue_io *io;   /* the backend's queue (fd, or its own rx/tx) */
	uint32_t vnet_hdr_len;     /* 12: struct virtio_net_hdr_v1, both directions */
	uint32_t rx_frame_max;     /* header + largest frame the backend may deliver */
	bool mrg_rxbuf;            /* a frame may span several RX chains */
	unsigned rx_offloads;      /* NET_RX_* the guest takes; atomic (net_qp_rx_offloads) */
	struct dp_queue *dp;       /* data-path state, kept across worker restarts */
	uint16_t rx_ring_size;     /* chains the guest can post at most */
	bool active;               /* carries traffic (VQ_PAIRS_SET); atomic */
	/* The VM is paused (minivmm_pause): its worker takes no new frame
	 * either way and lets what is in flight finish; atomic. */
	bool paused;
	/* The operator set the device's link down (minivmm_net_set_link): its
	 * worker drops what the guest sends and reads nothing from the
	 * backend, as a NIC without carrier; atomic. */
	bool link_down;
	/* The device's rate limiters (net/rate_limit.h), shared by its pairs;
	 * NULL: that direction is not limited. Set before workers start. */
	struct rate_limit *rx_limit, *tx_limit;
	struct net_queue_stats stats;
};

/* Bump a counter owned by the calling worker. */
#define NET_STAT_ADD(qp, field, n) \
	__atomic_store_n(&(qp)->stats.field, (qp)->stats.field + (n), __ATOMIC_RELAXED)

static inline unsigned net_qp_rx_offloads(const struct net_queue_pair *qp)
{
	return __atomic_load_n(&qp->rx_offloads, __ATOMIC_RELAXED);
}

static inline void net_qp_set_rx_offloads(struct net_queue_pair *qp, unsigned offloads)
{
	__atomic_store_n(&qp->rx_offloads, offloads, __ATOMIC_RELAXED);
}

static inline bool net_qp_paused(const struct net_queue_pair *qp)
{
	return __atomic_load_n(&qp->paused, __ATOMIC_ACQUIRE);
}

static inline bool net_qp_link_down(const struct net_queue_pair *qp)
{
	return __atomic_load_n(&qp->link_down, __ATOMIC_ACQUIRE);
}

static inline bool net_qp_active(const struct net_queue_pair *qp)
{
	return __atomic_load_n(&qp->active, __ATOMIC_ACQUIRE);
}

#endif
