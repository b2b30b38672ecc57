/* SPDX-License-Identifier: Apache-2.0 */
/* Polling virtio-net driver over virtio-mmio v2 (virtio 1.x, section 5.1).
 *
 * Queue pair i is rx = 2i, tx = 2i+1; the control queue (if any) is
 * 2 * max_virtqueue_pairs with VIRTIO_NET_F_MQ, else 2. Each pair is driven
 * by one vCPU without locks; the control queue only by the BSP before the
 * pairs start. Buffers are fixed: RX descriptor i always points to RX
 * buffer i, TX descriptor i to TX buffer i, each VNET_BUF_SIZE bytes with
 * the 12-byte struct virtio_net_hdr_v1 at the start. */
#ifndef TESTGUEST_VNET_H
#define TESTGUEST_VNET_H

#include <stdint.h>

#include <linux/virtio_net.h>

#include "virtio_mmio.h"
#include "virtq.h"

#define VNET_MAX_PAIRS  8       /* ~1 MiB of buffers each (DMA_POOL_LIMIT) */
#define VNET_QUEUE_SIZE 256
#define VNET_BUF_SIZE   2048
#define VNET_HDR_LEN    ((unsigned)sizeof(struct virtio_net_hdr_v1))   /* 12 */

/* Failure exit codes of the network tests (docs/testguest.md). */
#define TG_EXIT_NET_NO_DEVICE   0x20    /* no virtio-net window on the cmdline -> 65 */
#define TG_EXIT_NET_DEVICE      0x21    /* legacy (v1) device, no VERSION_1, bad word -> 67 */
#define TG_EXIT_NET_SETUP       0x22    /* FEATURES_OK refused, queue setup, MQ limits -> 69 */
#define TG_EXIT_NET_CTRL        0x23    /* control queue did not answer -> 71 */
#define TG_EXIT_NET_ARP         0x24    /* net-gen: the peer did not answer ARP -> 73 */
#define TG_EXIT_NET_STALL       0x25    /* the device stopped consuming TX -> 75 */
#define TG_EXIT_NET_CPUS        0x26    /* a queue's vCPU did not come up / finish -> 77 */
#define TG_EXIT_NET_GUARD       0x27    /* rxbuf=N: a byte around an RX buffer changed -> 79 */

/* rxbuf=N: each RX buffer is N bytes with VNET_GUARD bytes of a known
 * pattern before and after it (in its slot of rx_stride bytes), checked
 * after every frame and at the end: the device must never write outside
 * the buffers the guest posted. */
#define VNET_GUARD      1024
#define VNET_RXBUF_MIN  16

struct vnet_rx {
	struct virtio_net_hdr_v1 *hdr;
	uint8_t *frame;
	unsigned len;               /* frame bytes (without the header) */
	uint16_t id;                /* buffer to hand back with vnet_rx_recycle */
};

struct vnet_pair {
	unsigned index;
	struct virtq rx, tx;
	uint8_t *rxbuf, *txbuf;
	/* 0 (a pair set up outside vnet.c): VNET_BUF_SIZE, 0, VNET_BUF_SIZE */
	uint32_t rx_stride;         /* bytes from one RX buffer's slot to the next */
	uint32_t rx_off;            /* where the buffer starts in its slot */
	uint32_t rx_len;            /* its length (VNET_BUF_SIZE, or rxbuf=N) */
	/* rxbuf=N: guards checked on every used buffer, the first broken one */
	uint64_t guard_checks, guard_broken;
	long guard_off;
	uint16_t guard_id;
	uint8_t guard_got, guard_want;
	int mrg;                    /* VIRTIO_NET_F_MRG_RXBUF: num_buffers valid */
	uint64_t rx_errors;         /* bad used entries, merged frames (dropped) */
	uint64_t tx_frames;         /* frames queued with vnet_tx_put */
};

struct vnet {
	struct vmmio_dev dev;
	uint64_t offered, features;
	uint8_t mac[6];
	uint16_t max_pairs;         /* from config space with MQ, else 1 */
	uint16_t mtu;               /* from config with MTU, else 1500 */
	uint16_t link_status;       /* config status with STATUS, else 1 (up) */
	unsigned config_irqs;       /* config interrupts since the last link change */
	unsigned npairs;            /* pairs set up */
	unsigned rxbuf;             /* rxbuf=N, 0: VNET_BUF_SIZE without guards */
	int has_ctrl;
	struct virtq ctrl;
	struct vnet_pair pair[VNET_MAX_PAIRS];
};

static inline int vnet_has(const struct vnet *n, unsigned bit)
{
	return (n->features >> bit) & 1;
}

/* Find the device, negotiate (offload: also CSUM and GUEST_CSUM), set up
 * `npairs` queue pairs and the control queue, DRIVER_OK. No RX buffers are
 * posted yet. Returns 0 or a TG_EXIT_NET_* code (a line is printed). */
int vnet_init(struct vnet *n, unsigned npairs, int offload, int verbose);
/* VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET: 0 (OK), 1 (ERR) or -1 (no answer). */
int vnet_ctrl_mq(struct vnet *n, unsigned pairs);

/* With VIRTIO_NET_F_STATUS: read the link status (and InterruptStatus,
 * acknowledging a configuration-change bit) and print
 * `testguest: link down|up status 0x<s> config-irq 0|1 gen <g>` when it
 * differs from the last one seen (n->link_status). config-irq says whether
 * the device raised a configuration-change interrupt since the last call
 * (`irq_seen` adds bits an interrupt handler acknowledged). 1 if changed. */
int vnet_link_poll(struct vnet *n, const volatile uint32_t *irq_status);

/* Post every RX buffer of the pair, publish, kick if asked. */
void vnet_rx_post_all(struct vnet_pair *p);
/* Next received frame, 1; or 0 if none. Frames it drops (a bad length, a
 * merged frame) have their buffers published back before it returns. */
int vnet_rx_next(struct vnet_pair *p, struct vnet_rx *out);
/* Give the buffer back (published with vnet_rx_flush). */
static inline void vnet_rx_recycle(struct vnet_pair *p, uint16_t id)
{
	virtq_push(&p->rx, id);
}
static inline int vnet_rx_flush(struct vnet_pair *p)
{
	return virtq_flush(&p->rx);
}

/* rxbuf=N: are the guard bytes around RX buffer id intact? 0 if so, else
 * 1 with the first changed byte's offset from the buffer's start (negative:
 * before it) in *off, its value in *got and the pattern's in *want. */
int vnet_rx_guard_broken(const struct vnet_pair *p, uint16_t id, long *off, uint8_t *got,
			 uint8_t *want);
/* rxbuf=N: check RX buffer id (the device handed it back), counting in p. */
void vnet_rx_guard_check(struct vnet_pair *p, uint16_t id);

/* Reclaim transmitted buffers; returns how many. */
unsigned vnet_tx_reclaim(struct vnet_pair *p);
/* A free TX buffer (its header at the start, frame at +VNET_HDR_LEN) and
 * its id, reclaiming first if needed; NULL if the ring is full. */
uint8_t *vnet_tx_get(struct vnet_pair *p, uint16_t *id);
/* A free TX buffer with a zeroed header; the frame goes at the returned
 * pointer. With the ring full, publish what is pending and wait up to
 * wait_us for the device rather than drop; NULL if it gave none back. */
uint8_t *vnet_tx_begin(struct vnet_pair *p, uint16_t *id, uint64_t wait_us);
/* Queue buffer `id` holding a frame of `len` bytes (header already set). */
static inline void vnet_tx_put(struct vnet_pair *p, uint16_t id, unsigned len)
{
	p->tx.desc[id].len = VNET_HDR_LEN + len;
	virtq_push(&p->tx, id);
	p->tx_frames++;
}
static inline int vnet_tx_flush(struct vnet_pair *p)
{
	return virtq_flush(&p->tx);
}
static inline unsigned vnet_tx_inflight(const struct vnet_pair *p)
{
	return p->tx.num - p->tx.nfree;
}
static inline uint8_t *vnet_tx_buf(struct vnet_pair *p, uint16_t id)
{
	return p->txbuf + (uint32_t)id * VNET_BUF_SIZE;
}

#endif
