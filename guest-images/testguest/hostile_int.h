/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the net-hostile kinds (hostile*.c): the run's state, the
 * bring-up they all start from and a few helpers. hostile.c runs the
 * common steps (docs/testguest.md, "Hostile guest tests"); each kind's
 * function brings the device up its own way, misbehaves, prints its
 * `armed` line, waits or watches, and leaves the outcome in the state. */
#ifndef TESTGUEST_HOSTILE_INT_H
#define TESTGUEST_HOSTILE_INT_H

#include <stdint.h>

#include "netproto.h"
#include "vnet.h"

#define F(bit) (1ull << (bit))
#define U(x)   ((unsigned long long)(x))

#define OUTSIDE_RAM         0x7fff00000000ull   /* far beyond any --mem */
#define NEEDS_RESET_WAIT_US 2000000             /* kinds the device must refuse */

/* Features of every hostile bring-up: what the driver takes, without the
 * control queue (so queue pair 0 is all the device looks at). */
#define HOSTILE_FEATURES (F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC) | \
			  F(VIRTIO_NET_F_MTU) | F(VIRTIO_NET_F_STATUS) | \
			  F(VIRTIO_RING_F_EVENT_IDX) | F(VIRTIO_NET_F_MRG_RXBUF))
#define HOSTILE_CTRL_FEATURES (F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_CTRL_RX) | \
			       F(VIRTIO_NET_F_MQ))

struct hostile {
	const char *kind;
	unsigned kind_id;
	struct vnet net;            /* dev, features, pair[0], ctrl */
	struct np_addr self;
	uint8_t peer_ip[4];
	uint8_t peer_mac[6];
	int peer_known;
	/* Command line. */
	uint64_t iters, seed, wait_us, cycles, cycle_us;
	int keep_status;
	/* Outcome of the hostile phase, read by hostile.c. */
	uint32_t status, isr;
	unsigned violations;        /* the kind's own checks that failed */
	/* Rings and buffers of hostile_up, allocated once and reused. */
	int allocated, ctrl_allocated;
	uint16_t ping_id;
};

struct hostile_up_opts {
	uint64_t extra;             /* features wanted beyond HOSTILE_FEATURES, if offered */
	int ctrl;                   /* also CTRL_VQ, CTRL_RX, MQ (if offered): control queue set up */
	int post_rx;                /* post every ordinary RX buffer after DRIVER_OK */
	int ring_outside_ram;       /* queue 0's QueueDesc moved outside RAM before DRIVER_OK */
	int quiet;                  /* no bring-up line */
};

/* Reset the device and bring it up: features, queue pair 0 (RX descriptor
 * i <-> 2048-byte writable buffer i, TX descriptor i <-> buffer i with a
 * free stack, as vnet.c does), the control queue if asked, DRIVER_OK.
 * Rings and buffers are allocated the first time and reused after (the
 * DMA pool is never freed). Exits the test on failure. */
void hostile_up(struct hostile *h, const struct hostile_up_opts *o);

/* Poll Status until DEVICE_NEEDS_RESET or `us` passed; records status and
 * InterruptStatus in h and returns the status. */
uint32_t hostile_wait_needs_reset(struct hostile *h, uint64_t us);
static inline int hostile_needs_reset(const struct hostile *h)
{
	return (vmmio_read(&h->net.dev, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET) != 0;
}

/* Write 0 to Status and wait (2 s) until it reads 0: 0, or -1. */
int hostile_reset(struct hostile *h);

/* `testguest: hostile <kind> armed <details>`: the misbehaviour is in
 * place (the host starts its traffic on this line). */
void hostile_armed(struct hostile *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `testguest: hostile <kind>: CHECK FAILED: <what>`, counted. */
void hostile_violation(struct hostile *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Publish a queue's avail index and write QueueNotify, asked or not. */
void hostile_kick(struct virtq *q);

/* An ICMP echo request to the peer on pair 0 (peer_mac known): 1 sent,
 * 0 the TX ring is full. */
int hostile_ping_send(struct hostile *h, uint16_t seq);
/* Take RX frames on pair 0 (recycling every buffer) until the echo reply
 * with `seq` comes or `us` pass: 1 or 0. */
int hostile_ping_wait(struct hostile *h, uint16_t seq, uint64_t us);

/* The kinds. */
void hostile_mmio_garbage(struct hostile *h);
void hostile_driver_ok_twice(struct hostile *h);
void hostile_rx_heads_in_flight(struct hostile *h);
void hostile_rx_one_byte_segs(struct hostile *h);
void hostile_rx_read_only(struct hostile *h);
void hostile_rx_small(struct hostile *h);
void hostile_ctrl_garbage(struct hostile *h);
void hostile_reset_under_load(struct hostile *h);

#endif
