/* SPDX-License-Identifier: Apache-2.0 */
/* udp_flows: the host side of the test-datagram format (sequence header plus
 * a deterministic pattern), UDP socket helpers and per-flow bookkeeping for
 * netpeer. No global state; every function reports errors as -errno. */
#ifndef NETPEER_UDP_FLOWS_H
#define NETPEER_UDP_FLOWS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "minivmm_abi.h"

/* Ethernet (14) + IPv4 without options (20) + UDP (8). */
#define UDPF_FRAME_OVERHEAD 42u
#define UDPF_FRAME_MIN      60u
#define UDPF_FRAME_MAX      1514u
#define UDPF_PAYLOAD_MAX    (UDPF_FRAME_MAX - UDPF_FRAME_OVERHEAD)
#define UDPF_HDR_LEN        16u
#define UDPF_STOP_LEN       (sizeof(MINIVMM_NET_STOP_MAGIC) - 1)
/* Flow index of echo-check's readiness probes (never a real flow). */
#define UDPF_PROBE_FLOW     0xffffu
/* Largest sequence number count will track (bounds the bitmap). */
#define UDPF_SEQ_LIMIT      (1ull << 32)

struct udpf_hdr {
	uint32_t magic;
	uint16_t flow;
	uint64_t seq;
};

_Static_assert(sizeof(struct minivmm_net_seq_hdr) == UDPF_HDR_LEN,
	       "sequence header layout");

/* Datagram format. */
void udpf_fill(uint8_t *payload, size_t len, uint16_t flow, uint64_t seq);
/* 0 if payload is exactly what udpf_fill(flow, seq) wrote for len bytes. */
int udpf_check(const uint8_t *payload, size_t len, uint16_t flow, uint64_t seq);
/* true if payload starts with a valid header (stored in *h). */
bool udpf_parse(const uint8_t *payload, size_t len, struct udpf_hdr *h);
bool udpf_is_stop(const uint8_t *payload, size_t len);

/* Sockets. */
int udpf_parse_ipv4(const char *text, struct sockaddr_in *sa);
/* UDP socket bound to port (0: ephemeral), optionally connected to dst;
 * rcvbuf > 0 asks for that receive buffer (forced when root). Returns fd. */
int udpf_socket(uint16_t port, const struct sockaddr_in *dst, int rcvbuf, bool nonblock);
uint16_t udpf_local_port(int fd);
/* Send the stop datagram `repeat` times, 50 ms apart, each from its own
 * source port (so the copies spread over a multiqueue device); an error only if no
 * copy went out. */
int udpf_send_stop(const struct sockaddr_in *dst, unsigned repeat);

/* Time. */
uint64_t udpf_now_ns(void);
void udpf_sleep_until_ns(uint64_t t);

/* Per-flow receive bookkeeping for `count`: every sequence number seen,
 * so gaps, duplicates and reordering are exact. */
struct udpf_flow {
	uint64_t received;    /* distinct sequence numbers */
	uint64_t duplicates;
	uint64_t reordered;   /* arrived after a higher seq of the same flow */
	uint64_t corrupt;     /* header fine, pattern wrong (not recorded); kept by the caller */
	uint64_t max_seq;
	bool seen;
	uint8_t *bitmap;
	uint64_t bitmap_bits;
};

/* 1: new, 0: duplicate, -ENOMEM / -ERANGE on failure. */
int udpf_flow_record(struct udpf_flow *f, uint64_t seq);
uint64_t udpf_flow_gaps(const struct udpf_flow *f);
void udpf_flow_free(struct udpf_flow *f);

#endif
