/* SPDX-License-Identifier: Apache-2.0 */
/* Engine-independent bookkeeping of one queue pair's data path: which guest
 * RX chains are held and for which read, how a completed read becomes used
 * buffers (num_buffers with MRG_RXBUF), TX chains, notification suppression
 * and when the guest must be interrupted. The io_uring and epoll engines
 * differ only in how they issue the reads and writes. */
#ifndef MINIVMM_NET_DATAPATH_H
#define MINIVMM_NET_DATAPATH_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/queue_pair.h"

#define DP_READ_MAX_CHAINS 64                    /* chains one read may span */
#define DP_READ_MAX_IOV    (DP_READ_MAX_CHAINS + 1)
#define DP_DISCARD_BYTES   65536                 /* tail for frames too big for the buffers */

/* One receive operation: the chains it owns and the iovecs to read into.
 * The last iovec is a shared discard tail, so a frame larger than the
 * buffers is still taken whole from the backend (and then dropped, counted)
 * instead of being truncated silently. */
struct dp_read {
	uint16_t slot[DP_READ_MAX_CHAINS];
	unsigned nr_chains;
	struct iovec iov[DP_READ_MAX_IOV];
	unsigned nr_iov;
	uint32_t capacity;                       /* bytes of guest buffers in iov */
	bool full;                               /* no more chains fit (chain or iovec limit) */
};

struct dp_queue {
	struct net_queue_pair *qp;
	const struct net_ring_ops *ops;
	uint8_t *discard;                        /* DP_DISCARD_BYTES: written, never read */

	/* RX chains popped from the guest, indexed by slot. */
	struct guest_chain *rx_chain;
	uint16_t *rx_free;                       /* slots holding unused chains */
	unsigned rx_nr_free;
	uint16_t *rx_empty;                      /* slots with no chain */
	unsigned rx_nr_empty;
	unsigned rx_reads_inflight;
	bool rx_waiting_kick;                    /* RX stopped until the guest adds buffers */

	bool tx_waiting_kick;
	/* ns the rate limiter asked the last dp_tx_pop / dp_rx_prepare to
	 * wait (it returned 0 for that), until the engine takes it. */
	uint64_t tx_throttle_wait, rx_throttle_wait;
	bool rx_dirty, tx_dirty;                 /* used entries pushed, not yet published */
	bool broken;
	/* The backend fd failed for good (the interface is gone): no I/O on it
	 * until the device reopens the backend and clears this (workers are
	 * stopped then). TX frames are dropped meanwhile, RX buffers kept. */
	bool backend_gone;
	struct dp_log_limit { uint64_t next_ns; unsigned suppressed; } log_limit;
	uint8_t *gso_scratch;                    /* DP_GSO_SCRATCH, allocated on first use */
};

#define DP_GSO_SCRATCH (DP_DISCARD_BYTES + 256)

/* The data-path state of a queue pair outlives its worker threads (the
 * device restarts workers when it reconfigures), so buffers held for the
 * guest are never lost. Created at DRIVER_OK, destroyed at reset. */
struct dp_queue *dp_queue_create(struct net_queue_pair *qp);
void dp_queue_free(struct dp_queue *q);

/* Fill *r with guest RX buffers for one read. Returns 1 when ready, 0 when
 * the guest has no buffers (RX kicks are then enabled: resume on the RX
 * kick) or waiting for more is better or the rate limiter holds RX back
 * (dp_rx_take_throttle), -1 if the ring is broken. */
int dp_rx_prepare(struct dp_queue *q, struct dp_read *r);

/* A read finished with `n` bytes (or -errno): turn it into used buffers,
 * give unused chains back to the pool. */
void dp_rx_complete(struct dp_queue *q, struct dp_read *r, ssize_t n);

/* A read of exactly one chain, kept as its slot alone by a backend that has
 * many reads in flight (AF_XDP's fill ring): rebuild it, as dp_rx_prepare
 * made it, for dp_rx_complete. */
void dp_read_restore(struct dp_queue *q, uint16_t slot, struct dp_read *r);

/* Copy one received frame (virtio_net_hdr_v1 + packet, contiguous) into
 * guest buffers: 1 delivered (or dropped and counted), 0 the guest has no
 * buffers (RX kicks enabled: call again after the RX kick), -1 broken. */
int dp_rx_deliver(struct dp_queue *q, const uint8_t *frame, uint32_t len);

/* The same for a frame that may be GSO (a packet socket's): one the guest
 * cannot take as it is gets cut into segments (net/gso.h), each delivered;
 * *segs_done counts those delivered so a call that ran out of guest buffers
 * (returned 0) resumes where it stopped. It goes back to 0 when the frame is
 * done (returned 1). */
int dp_rx_deliver_frame(struct dp_queue *q, const uint8_t *frame, uint32_t len, unsigned *segs_done);

/* Next TX chain: 1, 0 when the ring is empty (TX kicks enabled) or the rate
 * limiter holds TX back (dp_tx_take_throttle), -1 broken. */
int dp_tx_pop(struct dp_queue *q, struct guest_chain *c);

/* A TX chain was written (n bytes or -errno): return it to the guest.
 * -ECANCELED (the worker stopped with it in flight) counts it as dropped,
 * not as an error. */
void dp_tx_complete(struct dp_queue *q, const struct guest_chain *c, ssize_t n);

/* A write the backend refused for want of room: ENOBUFS (a full qdisc, or
 * with PACKET_QDISC_BYPASS a stopped device queue) or EAGAIN (a full
 * socket buffer). The frame was not sent: the engine keeps its chain,
 * takes no more frames from the guest meanwhile (the guest sees its TX
 * ring fill, not a drop) and writes it again after a wait (nothing signals
 * room in a device queue): DP_TX_FULL_RETRY_US, doubled at each refusal in
 * a row up to DP_TX_FULL_RETRY_MAX_US, so a backend that stays full costs
 * a write a millisecond, not a spin (the epoll engine's timer counts whole
 * milliseconds). */
#define DP_TX_FULL_RETRY_US     50
#define DP_TX_FULL_RETRY_MAX_US 1000
static inline bool dp_tx_backend_full(ssize_t n)
{
	return n == -ENOBUFS || n == -EAGAIN;
}

/* The next wait after one of prev_us (0: the first). */
static inline unsigned dp_tx_full_backoff(unsigned prev_us)
{
	if (!prev_us)
		return DP_TX_FULL_RETRY_US;
	return prev_us >= DP_TX_FULL_RETRY_MAX_US / 2 ? DP_TX_FULL_RETRY_MAX_US : prev_us * 2;
}

/* The same for a backend that kept only the chain's head and readable
 * length (AF_XDP: until the kernel's completion came back). */
void dp_tx_done(struct dp_queue *q, uint16_t head, uint32_t readable_len, ssize_t n);

/* Rate limiting (net/rate_limit.h, the pair's rx_limit and tx_limit).
 * dp_tx_pop and dp_rx_prepare ask the limiter before each frame or read;
 * when it says wait they return 0 without touching the guest's ring (no
 * kick is asked for), and the wait is kept for the engine, which takes it
 * here (0: none) and comes back after it (a timer): meanwhile it takes no
 * TX chain and posts no RX buffer, so the guest's frames stay in its ring
 * and the backend's in the backend. What goes through is charged as it
 * goes (popped TX frames, pushed RX frames). */
uint64_t dp_tx_take_throttle(struct dp_queue *q);
uint64_t dp_rx_take_throttle(struct dp_queue *q);
uint64_t dp_now_ns(void);

/* Called when a kick arrived on the RX / TX eventfd. */
void dp_rx_kicked(struct dp_queue *q);
void dp_tx_kicked(struct dp_queue *q);

/* Publish pushed used entries. Returns true if the guest asked to be
 * interrupted for them (the caller signals once per device per loop). */
bool dp_flush(struct dp_queue *q);

/* Give back every chain held (device reset): used with length 0. */
void dp_rx_release_all(struct dp_queue *q);

/* Does this I/O error mean the backend is gone for good (tap deleted:
 * EBADFD; packet socket without its device: ENXIO, ENODEV, ENETDOWN)? */
bool dp_backend_error_is_fatal(int err);

/* The backend failed with -err: if fatal, stop using it (backend_gone) and
 * tell the device once. Returns true if it was fatal. */
bool dp_backend_failed(struct dp_queue *q, int err);

/* While the backend is gone or the link is set down: take the guest's TX
 * frames and drop them, counted, so its ring keeps moving; the rate
 * limiter neither holds them nor is charged for them. */
void dp_tx_drop_all(struct dp_queue *q);

/* A line for the user about this queue pair, at most one per second (the
 * rest counted and mentioned in the next line that gets through). */
void dp_log(struct dp_queue *q, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
