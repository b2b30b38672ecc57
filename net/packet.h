/* SPDX-License-Identifier: Apache-2.0 */
/* AF_PACKET backend: one raw packet socket per queue pair, bound to a host
 * interface, joined in one PACKET_FANOUT group; receive through a TPACKET_V3
 * ring (default) or readv per frame. */
#ifndef MINIVMM_NET_PACKET_H
#define MINIVMM_NET_PACKET_H

#include <stdbool.h>
#include <stdint.h>

#include "net/datapath.h"

/* A TPACKET_V3 receive ring of one socket. */
struct pkt_ring {
	uint8_t *map;
	size_t map_len;
	unsigned block_size, nr_blocks;
	unsigned block;              /* current block */
	unsigned frames_left;        /* frames not yet taken from it, 0: not started */
	uint8_t *frame;              /* next frame in the current block */
	unsigned gso_done;           /* segments of the current frame already delivered */
	bool header_moved;           /* the current frame's vnet header is in place */
};

/* Deliver ready frames to the guest. Returns 1 if it stopped because the
 * guest had no buffers (resume on the RX kick), 0 when no block is ready
 * (wait for the socket to become readable), -1 if the guest ring broke. */
int pkt_ring_consume(struct pkt_ring *r, struct dp_queue *dp);

/* Is the current block ready for us? */
bool pkt_ring_ready(const struct pkt_ring *r);

#endif
