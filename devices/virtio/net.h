/* SPDX-License-Identifier: Apache-2.0 */
/* virtio-net device: features, config space, control queue, and the queue
 * pairs it hands to net/ workers on DRIVER_OK. */
#ifndef MINIVMM_DEVICES_VIRTIO_NET_H
#define MINIVMM_DEVICES_VIRTIO_NET_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "devices/virtio/mmio.h"
#include "devices/virtio/queue.h"
#include "minivmm.h"
#include "net/backend.h"
#include "net/link_events.h"
#include "net/queue_pair.h"
#include "net/rate_limit.h"
#include "net/worker.h"
#include "base/log_limit.h"
#include "base/machine.h"

#define VNET_MAX_PAIRS MINIVMM_MAX_QUEUE_PAIRS
#define VNET_MAX_QUEUES (2 * VNET_MAX_PAIRS + 1)
#define VNET_MAC_TABLE_MAX 64

/* RX filtering state from the control queue. Changed by the control thread,
 * read by workers for every frame: guarded by a sequence counter. */
struct vnet_rx_filter {
	unsigned seq;
	bool promisc, allmulti, alluni, nomulti, nouni, nobcast;
	uint8_t mac[6];
	unsigned nr_uc, nr_mc;
	uint8_t uc[VNET_MAC_TABLE_MAX][6], mc[VNET_MAC_TABLE_MAX][6];
};

struct virtio_net {
	unsigned index;                    /* net0, net1, ... */
	struct minivmm_net_config cfg;
	const struct guest_mem *mem;
	const struct machine *ev;
	struct virtio_mmio *transport;
	struct net_backend *backend;       /* chosen and opened by the VM; ours to destroy */

	pthread_mutex_t lock;              /* activation, pairs, offloads */
	struct log_limit log_limit;        /* every line a guest can cause */
	uint64_t features;                 /* acked, valid while activated */
	/* The GUEST_* offloads in force: the acked ones at DRIVER_OK, then what
	 * GUEST_OFFLOADS_SET asked for. A reopened backend gets these. */
	uint64_t guest_offloads;
	bool activated;
	bool destroying;          /* virtio_net_destroy: the last reset steers nothing */
	unsigned nr_pairs;                 /* = cfg.queues */
	unsigned active_pairs;
	unsigned usable_pairs;             /* pairs set up at DRIVER_OK (1 without MQ) */
	unsigned auto_workers;             /* threads=auto: at most this many workers */
	cpu_set_t unpinned;                /* the process's CPUs when the device was made */
	uint8_t mac[6];
	uint16_t mtu;

	struct virtq vq[VNET_MAX_QUEUES];
	struct net_queue_pair qp[VNET_MAX_PAIRS];
	struct net_guest guest;
	struct net_worker *worker[VNET_MAX_PAIRS];
	unsigned nr_workers;

	struct vnet_rx_filter filter;

	/* The backend's link (net_link.c): down while its interface is gone. */
	bool link_up;                      /* under lock: the interface is there */
	bool link_set_down;                /* under lock: the operator set it down */
	int link_lost_err;                 /* -errno of the last loss (atomic) */
	int link_wake_fd, link_stop_fd;
	struct link_events *link_events;   /* RTNLGRP_LINK, read by the link thread */
	pthread_t link_thread;
	bool link_running;

	/* Rate limits of each direction, shared by every pair (qp->rx_limit). */
	struct rate_limit rx_limit, tx_limit;

	/* Control queue, served by its own thread off the data path. */
	pthread_t ctrl_thread;
	bool ctrl_running;
	int ctrl_stop_fd;
	uint64_t ctrl_commands, ctrl_errors;
};

/* The device over `backend` (which it owns from now on, even on failure). */
int virtio_net_create(struct virtio_net **out, unsigned index, const struct minivmm_net_config *cfg,
		      struct net_backend *backend, const struct machine *ev,
		      const struct guest_mem *mem, uint64_t mmio_base, unsigned gsi,
		      unsigned auto_workers, struct vmm_err *err);
void virtio_net_destroy(struct virtio_net *n);

/* Pause (or resume) every pair: no new frame either way, what is in flight
 * finishes. Pausing waits up to wait_ms for every worker to stand still:
 * 0, or -ETIMEDOUT (the pairs stay paused; the caller resumes them). */
int virtio_net_pause(struct virtio_net *n, bool pause, unsigned wait_ms);

/* Set the link down or up (minivmm_net_set_link): 0, or -EALREADY. */
int virtio_net_set_link(struct virtio_net *n, bool up);

/* Rate limits, live (minivmm_net_set_rate_limit); NULL: as they are. */
void virtio_net_set_rate_limit(struct virtio_net *n, const struct minivmm_rate_limit *rx,
			       const struct minivmm_rate_limit *tx);
void virtio_net_get_rate_limit(struct virtio_net *n, struct minivmm_rate_limit *rx, struct minivmm_rate_limit *tx);

/* Queue index layout (spec 5.1.2): rx0, tx0, rx1, tx1, ..., ctrl. */
static inline unsigned vnet_rx_queue(unsigned pair) { return 2 * pair; }
static inline unsigned vnet_tx_queue(unsigned pair) { return 2 * pair + 1; }
static inline unsigned vnet_ctrl_queue(unsigned nr_pairs) { return 2 * nr_pairs; }

/* Which worker serves queue pair `pair` when `threads` workers share
 * `pairs` pairs (threads = 0: one per pair). Pairs are dealt out in order,
 * so worker w serves a contiguous, balanced range. */
unsigned vnet_worker_of_pair(unsigned pair, unsigned pairs, unsigned threads);

/* VQ_PAIRS_SET: activate pairs [0, k), detach the rest from the backend.
 * Returns 0 or -EINVAL for k out of range. */
int vnet_set_active_pairs(struct virtio_net *n, unsigned k);

/* Statistics, in the embedding API's structs (at their full size): the
 * device into *d, pair p into q[p], worker i into w[i]. */
void virtio_net_stats(struct virtio_net *n, struct minivmm_net_stats *d,
		      struct minivmm_queue_stats q[VNET_MAX_PAIRS],
		      struct minivmm_worker_stats w[VNET_MAX_PAIRS]);

/* Log a line a guest can cause, "netK: " prefixed, through the device's
 * rate limit (net.c; any thread). */
void vnet_say(struct virtio_net *n, const char *line);

/* The RX offloads in these GUEST_* feature bits, to every pair's workers
 * (GUEST_OFFLOADS_SET, with n->lock held). */
void vnet_publish_rx_offloads(struct virtio_net *n, uint64_t features);

/* The control-queue thread (net_ctrl.c). */
int vnet_ctrl_start(struct virtio_net *n, struct vmm_err *err);
void vnet_ctrl_stop(struct virtio_net *n);

/* Queue workers of an activated device, with n->lock held (net.c). */
int vnet_start_workers(struct virtio_net *n, unsigned usable_pairs, struct vmm_err *err);
void vnet_stop_workers(struct virtio_net *n);

/* The link thread (net_link.c): started with the device, told by workers
 * when the backend is gone (net_guest.backend_lost). */
int vnet_link_start(struct virtio_net *n, struct vmm_err *err);
void vnet_link_stop(struct virtio_net *n);
void vnet_backend_lost(void *opaque, unsigned qp, int err);

/* One control command, as the control thread serves it: gather the chain's
 * readable part (class, command, data), apply it to n, write the ack
 * (VIRTIO_NET_OK or VIRTIO_NET_ERR) into the chain's first writable byte.
 * Returns the used length to push: 1 with the ack written, 0 when the chain
 * has nothing writable. Touches nothing but n, its backend and the chain. */
uint32_t vnet_ctrl_handle(struct virtio_net *n, const struct guest_chain *c);

/* RX filter decision for a frame's destination MAC (net_ctrl.c). */
bool vnet_filter_accepts(struct vnet_rx_filter *f, const uint8_t *dst);

#endif
