/* SPDX-License-Identifier: Apache-2.0 */
/* Just enough Ethernet, ARP, IPv4, ICMP and UDP for the network tests:
 * classify a received frame, build replies in place or into a TX buffer,
 * Internet checksums. Addresses are kept in network byte order as bytes. */
#ifndef TESTGUEST_NETPROTO_H
#define TESTGUEST_NETPROTO_H

#include <stdint.h>

#define ETH_ALEN       6
#define ETH_HLEN       14
#define ETH_ZLEN       60       /* minimum frame without FCS */
#define ETH_FRAME_MAX  1514     /* without FCS */
#define ETH_P_IP       0x0800
#define ETH_P_ARP      0x0806
#define IP_PROTO_ICMP  1
#define IP_PROTO_UDP   17
#define IP_HLEN        20       /* what we send: no options */
#define UDP_HLEN       8
#define UDP_FRAME_HLEN (ETH_HLEN + IP_HLEN + UDP_HLEN)   /* 42 */

struct eth_hdr {
	uint8_t dst[ETH_ALEN];
	uint8_t src[ETH_ALEN];
	uint16_t type;              /* big-endian */
} __attribute__((packed));

struct arp_pkt {                /* Ethernet/IPv4 ARP */
	uint16_t htype, ptype;
	uint8_t hlen, plen;
	uint16_t op;
	uint8_t sha[ETH_ALEN];
	uint8_t spa[4];
	uint8_t tha[ETH_ALEN];
	uint8_t tpa[4];
} __attribute__((packed));

struct ip_hdr {
	uint8_t ver_ihl, tos;
	uint16_t tot_len, id, frag;
	uint8_t ttl, proto;
	uint16_t csum;
	uint8_t src[4], dst[4];
} __attribute__((packed));

struct udp_hdr {
	uint16_t sport, dport, len, csum;
} __attribute__((packed));

struct icmp_hdr {
	uint8_t type, code;
	uint16_t csum;
	uint16_t id, seq;
} __attribute__((packed));

static inline uint16_t htons(uint16_t v) { return __builtin_bswap16(v); }
static inline uint16_t ntohs(uint16_t v) { return __builtin_bswap16(v); }

struct np_addr {
	uint8_t mac[ETH_ALEN];
	uint8_t ip[4];
};

enum np_kind {
	NP_OTHER = 0,               /* not for us, or nothing we answer */
	NP_ARP_REQUEST,             /* who-has our IP */
	NP_ARP_REPLY,               /* an ARP reply (any): see np_view.arp */
	NP_ICMP_ECHO,               /* echo request to our IP */
	NP_UDP,                     /* UDP to our IP, unfragmented */
	NP_BAD,                     /* to our IP but malformed */
};

struct np_view {
	struct eth_hdr *eth;
	struct arp_pkt *arp;
	struct ip_hdr *ip;
	struct udp_hdr *udp;
	uint8_t *payload;           /* ICMP header or UDP payload */
	unsigned payload_len;
	unsigned ip_len;            /* frame bytes covered by IP (no padding) */
};

enum np_kind np_classify(uint8_t *frame, unsigned len, const struct np_addr *self,
			 struct np_view *v);

/* Parse "A.B.C.D": 0 or -1. */
int np_parse_ip(const char *s, uint8_t ip[4]);

/* One's complement sum of a buffer (plus an initial sum), and its fold. */
uint32_t np_csum_add(uint32_t sum, const void *buf, unsigned len);
uint16_t np_csum_fold(uint32_t sum);    /* ~folded: the field value */
/* Unfolded sum of the UDP/IPv4 pseudo header. */
uint32_t np_pseudo_sum(const uint8_t src[4], const uint8_t dst[4], uint16_t udp_len);

/* Build a frame into `out` (room for ETH_ZLEN at least); return its length.
 * Short frames are zero-padded to ETH_ZLEN. */
unsigned np_arp_reply(uint8_t *out, const struct np_view *req, const struct np_addr *self);
unsigned np_arp_request(uint8_t *out, const struct np_addr *self, const uint8_t tip[4]);
/* Echo reply for the request in `v` (copied to out, max ETH_FRAME_MAX). */
unsigned np_icmp_reply(uint8_t *out, const struct np_view *v);
/* The datagram in `v` sent back: MACs, IPs and ports swapped, TTL 64, IP
 * checksum recomputed; the UDP checksum stays valid as it is (swapping
 * covers the same words) and the payload is untouched. */
unsigned np_udp_echo(uint8_t *out, const struct np_view *v);
/* Headers of a UDP datagram with `payload_len` bytes (not written here);
 * UDP checksum left 0. Returns the frame length (>= ETH_ZLEN). */
unsigned np_udp_headers(uint8_t *out, const struct np_addr *self, const uint8_t dmac[6],
			const uint8_t dip[4], uint16_t sport, uint16_t dport,
			unsigned payload_len);

/* An ICMP echo request from self to dip/dmac with `payload_len` bytes of
 * pattern; returns the frame length (>= ETH_ZLEN). */
unsigned np_icmp_request(uint8_t *out, const struct np_addr *self, const uint8_t dmac[6],
			 const uint8_t dip[4], uint16_t id, uint16_t seq, unsigned payload_len);
/* Is this frame an ICMP echo reply from `src` to us with identifier `id`?
 * 1 (its sequence number in *seq) or 0. */
int np_icmp_is_reply(const uint8_t *frame, unsigned len, const struct np_addr *self,
		     const uint8_t src[4], uint16_t id, uint16_t *seq);

/* Test datagram payload (tests/tools/udp_flows.c): struct
 * minivmm_net_seq_hdr, then byte i = base(flow, seq) + 7 * i. */
void np_seq_fill(uint8_t *payload, unsigned len, uint16_t flow, uint64_t seq);
/* -1: too short or no magic; 1: header fine, pattern wrong; 0: intact.
 * *h gets the header in the first two cases. */
struct minivmm_net_seq_hdr;
int np_seq_check(const uint8_t *payload, unsigned len, struct minivmm_net_seq_hdr *h);

/* Fast copy (rep movsb). */
void np_copy(void *dst, const void *src, unsigned len);

#endif
