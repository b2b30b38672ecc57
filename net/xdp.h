/* SPDX-License-Identifier: Apache-2.0 */
/* The AF_XDP backend's parts (docs/xdp.md): xdp.c is the backend (creation,
 * checks, steering, the interface coming and going), xdp_queue.c one queue's
 * data path (the worker's socket, RX through the fill ring, TX with
 * completions), xdp_socket.c AF_XDP sockets and their rings, xdp_prog.c the
 * XDP program, xdp_iface.c what the interface can do (queues, RSS).
 *
 * The UMEM is the whole guest RAM mapping plus its host-only tail: a guest
 * buffer goes to the kernel as the address of a chunk around it, so frames
 * land in guest memory and leave from it with no copy in minivmm. */
#ifndef MINIVMM_NET_XDP_H
#define MINIVMM_NET_XDP_H

#include <linux/if_xdp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/machine.h"
#include "net/addr_table.h"
#include "net/backend.h"
#include "net/datapath.h"

#ifndef XDP_PACKET_HEADROOM
#define XDP_PACKET_HEADROOM 256   /* include/uapi/linux/bpf.h; the kernel leaves it before every frame */
#endif

#define XDP_RX_BOUNCE    64u    /* bounce chunks per queue for frames no guest buffer can take directly */
#define XDP_TX_BOUNCE    64u    /* and for guest frames split over segments */
#define XDP_CHUNK_MAX    4096u  /* the kernel's largest chunk (PAGE_SIZE); bounce chunks are this far apart */
#define XDP_CHUNK_MIN    2048u  /* XDP_UMEM_MIN_CHUNK_SIZE */
/* Queue starts (socket binds) pass at once up to a burst, then one per gap:
 * a guest resetting its device in a loop costs the workers at most one
 * bind (~8 ms of CPU for 256 MiB of RAM) four times a second. The burst
 * holds what a driver does at once: activate every queue, then restart
 * them for VQ_PAIRS_SET (a paced start would leave its queue deaf). */
#define XDP_START_BURST(queues)   (2u * (queues) + 1u)
#define XDP_START_GAP_NS  (250 * 1000000ull)
#define XDP_VNET_HDR     12u    /* struct virtio_net_hdr_v1 */
#define XDP_ETH_HLEN     14u
#define XDP_BOUNCE_TAG   0x80000000u   /* RX table value: a bounce chunk, not a guest slot */
/* The host tail one queue needs: its bounce chunks, one per 4 KiB page so
 * none crosses a page (zero-copy drivers refuse chunks that do). */
#define XDP_TAIL_PER_QUEUE ((uint64_t)(XDP_RX_BOUNCE + XDP_TX_BOUNCE) * XDP_CHUNK_MAX)

/* ---- rings -------------------------------------------------------------- */

/* One AF_XDP ring as mapped from the socket. We produce on fill and TX and
 * consume RX and completion; only we write our index, the kernel the other. */
struct xdp_ring {
	uint32_t *producer, *consumer, *flags;
	void *desc;
	uint32_t size, mask;
	void *map;
	size_t map_len;
};

static inline uint32_t xdp_ring_free(const struct xdp_ring *r)
{
	uint32_t cons = __atomic_load_n(r->consumer, __ATOMIC_ACQUIRE);
	return r->size - (*r->producer - cons);
}

static inline uint32_t xdp_ring_avail(const struct xdp_ring *r)
{
	return __atomic_load_n(r->producer, __ATOMIC_ACQUIRE) - *r->consumer;
}

/* Entries are written at producer + i, then published all at once. */
static inline void xdp_ring_submit(struct xdp_ring *r, uint32_t n)
{
	__atomic_store_n(r->producer, *r->producer + n, __ATOMIC_RELEASE);
}

static inline void xdp_ring_release(struct xdp_ring *r, uint32_t n)
{
	__atomic_store_n(r->consumer, *r->consumer + n, __ATOMIC_RELEASE);
}

static inline uint64_t *xdp_ring_addr(const struct xdp_ring *r, uint32_t idx)
{
	return &((uint64_t *)r->desc)[idx & r->mask];
}

static inline struct xdp_desc *xdp_ring_desc(const struct xdp_ring *r, uint32_t idx)
{
	return &((struct xdp_desc *)r->desc)[idx & r->mask];
}

/* Does the kernel want a syscall to notice what we just produced? A full
 * fence first: our producer store must be visible before we read the flag
 * the kernel sets after it last looked at the ring, or both sides could
 * miss each other. */
static inline bool xdp_ring_needs_wakeup(const struct xdp_ring *r)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(r->flags, __ATOMIC_RELAXED) & XDP_RING_NEED_WAKEUP;
}

/* ---- sockets (xdp_socket.c) ------------------------------------------------ */

struct xsk {
	int fd;
	struct xdp_ring fill, comp, rx, tx;
};

struct xsk_sizes {
	uint32_t fill, comp, rx, tx;   /* powers of two; 0: no such ring (fill/comp: not ours) */
};

struct xsk_umem_spec {
	void *area;
	uint64_t len;
	uint32_t chunk_size, headroom;
};

/* A new AF_XDP socket with the rings of `sz` made and mapped; with `umem`,
 * the UMEM is registered on it first (unaligned chunks). Returns 0 or
 * -errno with one line in err. */
int xsk_create(struct xsk *s, const struct xsk_umem_spec *umem, const struct xsk_sizes *sz,
	       struct vmm_err *err);

/* Bind to queue q of ifindex: through shared_fd's UMEM if shared_fd >= 0,
 * else with flags (XDP_COPY or XDP_ZEROCOPY, XDP_USE_NEED_WAKEUP). The queue
 * of a socket just closed stays taken until the kernel's deferred release of
 * its buffer pool has run (measured: 10-25 ms): EBUSY is retried for up to
 * XSK_BIND_WAIT_MS. Returns 0 or -errno (err says which). */
#define XSK_BIND_WAIT_MS 3000
int xsk_bind(struct xsk *s, unsigned ifindex, unsigned q, int shared_fd, uint16_t flags,
	     struct vmm_err *err);

/* Unmap the rings and close. The rings' mappings hold the socket open, so
 * both go; once the last reference is gone the kernel releases the socket
 * before close() returns (unbound, out of every map, synchronize_net():
 * copy mode writes no more into its fill ring's buffers). fd becomes -1. */
void xsk_close(struct xsk *s);

/* rx_dropped + rx_ring_full of the socket (frames the kernel dropped for
 * it), or 0 if fd cannot be read. *invalid: descriptors it refused. */
uint64_t xsk_drops(int fd, uint64_t *invalid);

/* ---- the XDP program (xdp_prog.c) --------------------------------------------- */

struct xdp_program;

struct xdp_prog {
	struct xdp_program *prog;   /* libxdp's default XSK program, loaded */
	int prog_fd, map_fd;        /* the program and its XSKMAP */
	int link_fd;                /* the BPF link holding it on the interface */
	unsigned ifindex;
	uint32_t mode;              /* XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE, when attached */
};

/* Load the program with an XSKMAP of map_entries and attach it to ifindex,
 * natively if the driver can, else in generic (skb) mode (native_only:
 * no fallback, for zero-copy). The interface must have no XDP program. */
int xdp_prog_attach(struct xdp_prog *p, unsigned ifindex, const char *ifname, unsigned map_entries,
		    bool native_only, struct vmm_err *err);

/* The program loaded by xdp_prog_attach, attached again (a new link) to
 * ifindex: an interface that came back. Nothing is loaded or looked up
 * (the link thread's seccomp list allows BPF_LINK_CREATE only). */
int xdp_prog_relink(struct xdp_prog *p, unsigned ifindex, const char *ifname, bool native_only,
		    struct vmm_err *err);

/* Detach (close the link); the program stays loaded. */
void xdp_prog_unlink(struct xdp_prog *p);

/* Frames of queue q go to socket fd. */
int xdp_prog_set_socket(const struct xdp_prog *p, unsigned q, int fd, struct vmm_err *err);

/* Detach (closing the link) and free. */
void xdp_prog_detach(struct xdp_prog *p);

/* ---- the interface (xdp_iface.c) --------------------------------------------- */

struct xdp_iface {
	unsigned ifindex;
	bool up;
	unsigned mtu;
	unsigned rx_queues, tx_queues;   /* 0: the driver would not say */
	char driver[32];
};

/* ENODEV if there is no such interface. */
int xdp_iface_query(const char *name, struct xdp_iface *info, struct vmm_err *err);

/* The RSS indirection table: which receive queue each hash bucket goes to. */
struct xdp_rss {
	bool supported;
	uint32_t size;
	uint32_t *orig;   /* as it was before we changed it */
	bool changed;
};

/* Through fd, a socket of the interface's namespace made at set-up (the
 * threads that steer may not make sockets: vmm/seccomp.c). Read the table
 * (supported false if the driver has none, e.g. veth). */
void xdp_rss_read(int fd, const char *name, struct xdp_rss *r);
/* Spread every bucket over queues[0..n). */
int xdp_rss_spread(int fd, const char *name, struct xdp_rss *r, const unsigned *queues, unsigned n);
/* Put the original table back and free it. */
void xdp_rss_restore(int fd, const char *name, struct xdp_rss *r);

/* ---- the backend and its queues ------------------------------------------------- */

/* Where the kernel puts a received frame: chunk address + data_off, at most
 * frame_len bytes (larger frames it drops). */
struct xdp_geometry {
	uint32_t chunk_size, headroom, frame_len, data_off;
};

/* xdp_geometry.c: the chunk size and headroom that make the kernel's
 * largest frame (chunk_size - headroom - XDP_PACKET_HEADROOM) exactly
 * frame_len, with chunks of min_chunk (2 or 4 KiB) to 4 KiB. -EINVAL if
 * frame_len needs more. */
int xdp_geometry_for(uint32_t frame_len, uint32_t min_chunk, struct xdp_geometry *g);

/* The fill address that makes the kernel write a frame right after the
 * 12-byte header in a guest buffer at UMEM offset buf with seg_len bytes,
 * if it can: seg_len >= 12 + frame_len, the chunk inside [0, umem_len), and
 * (zero copy) within one 4 KiB page. */
bool xdp_rx_chunk_for(const struct xdp_geometry *g, uint64_t buf, uint64_t seg_len, uint64_t umem_len,
		      bool zero_copy, uint64_t *addr);

/* Zero-copy drivers refuse a buffer that crosses into a page not
 * physically next to it, and we cannot tell which are: stay within one. */
static inline bool xdp_within_page(uint64_t addr, uint64_t len)
{
	return (addr % 4096u) + len <= 4096u;
}

struct xdp_tx_entry {
	uint16_t head;
	uint16_t bounce;        /* bounce chunk index, or UINT16_MAX */
	uint32_t readable_len;
};

struct xdp_backend;

struct xdp_queue {
	struct xdp_backend *xb;
	unsigned index;
	struct xsk sock;            /* the worker's; fd -1 while no worker serves the queue */
	/* For take_drops on the statistics thread (atomics): the socket whose
	 * counters are read, what was already reported of them, and what
	 * sockets closed since left unreported. */
	int stats_fd;
	uint64_t drops_seen, drops_carry;
	uint64_t bounce_base;       /* UMEM offset of this queue's bounce chunks */
	/* RX: every buffer on the fill ring, by chunk address: a guest chain's
	 * slot, or XDP_BOUNCE_TAG | bounce index. */
	struct addr_table rx_posted;
	struct dp_read *rx_bounce_read;   /* [XDP_RX_BOUNCE]: the chains a bounced frame goes to */
	uint16_t rx_bounce_free[XDP_RX_BOUNCE];
	unsigned nr_rx_bounce_free;
	/* TX: every frame on the TX ring or sent and not completed, by address. */
	struct addr_table tx_inflight;
	struct xdp_tx_entry *tx_entry;
	uint16_t *tx_entry_free;
	unsigned nr_tx_entry_free;
	uint16_t tx_bounce_free[XDP_TX_BOUNCE];
	unsigned nr_tx_bounce_free;
	struct guest_chain tx_pending;    /* popped, waiting for a TX slot or bounce chunk */
	bool tx_has_pending;
	unsigned tx_backoff_us;
	uint64_t next_error_check_ns;
};

struct xdp_backend {
	struct net_backend base;
	const struct machine *machine;
	unsigned device_index;
	unsigned mtu;
	bool zero_copy;
	uint8_t *umem_area;         /* guest RAM mapping + tail */
	uint64_t umem_len;
	/* Binding a queue's socket costs in proportion to the UMEM (the kernel
	 * sets up a buffer pool over all of guest RAM: ~15 ms of CPU for
	 * 256 MiB): the workers' starts are paced (net_queue_io.start_pace). */
	struct log_limit start_pace;
	uint8_t *tail;              /* our part of the tail: every queue's bounce chunks */
	struct xdp_geometry geo;
	struct xsk_sizes sizes;
	struct xdp_iface iface;
	struct xdp_prog prog;
	struct xdp_rss rss;
	int ethtool_fd;             /* an AF_INET socket for the RSS table's ioctls, made at set-up */
	bool steer_logged;
	bool ever_started;          /* atomic: a worker has run a queue */
	bool active[NET_BACKEND_MAX_QUEUES];
	struct xsk drain[NET_BACKEND_MAX_QUEUES];   /* inactive queues: frames dropped, counted */
	uint64_t drain_seen[NET_BACKEND_MAX_QUEUES];   /* their drops already reported */
	uint8_t *drain_umem;        /* the drain sockets' own UMEM: two chunks, no guest memory */
	/* Sockets sharing the guest UMEM: the kernel keeps it while one of them
	 * is bound, and a new socket joins it through any bound one. */
	pthread_mutex_t lock;
	struct xdp_queue q[NET_BACKEND_MAX_QUEUES];
};

/* xdp_queue.c: the queue's net_queue_io hooks, and its buffers. */
int xdp_queue_init(struct xdp_backend *xb, unsigned q, struct vmm_err *err);
void xdp_queue_free(struct xdp_queue *xq);
void xdp_queue_io_setup(struct xdp_backend *xb, unsigned q);
/* The backend's queue_step op: the privileged steps of xq_start and xq_stop,
 * on the helper thread (net/helper.h). */
int xdp_queue_step(struct net_backend *b, unsigned q, enum net_queue_step step, struct vmm_err *err);

/* xdp.c: a bound socket of another queue to share the UMEM through (-1:
 * none, register it); with xb->lock held. */
int xdp_backend_umem_fd(struct xdp_backend *xb, unsigned except_q);

/* xdp.c: wait (bounded) until queue q can be bound again, i.e. the kernel
 * has released the buffer pool of the socket last closed on it. */
void xdp_backend_wait_queue_free(struct xdp_backend *xb, unsigned q);

/* The UMEM offset of a host pointer into the mapping. */
static inline uint64_t xdp_umem_offset(const struct xdp_backend *xb, const void *p)
{
	return (uint64_t)((const uint8_t *)p - xb->umem_area);
}

#endif
