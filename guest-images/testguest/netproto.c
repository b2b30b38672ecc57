/* SPDX-License-Identifier: Apache-2.0 */
#include "netproto.h"

#include "lib.h"
#include "minivmm_abi.h"

int np_parse_ip(const char *s, uint8_t ip[4])
{
	for (int i = 0; i < 4; i++) {
		unsigned v = 0, n = 0;

		while (*s >= '0' && *s <= '9' && n < 4) {
			v = v * 10 + (unsigned)(*s++ - '0');
			n++;
		}
		if (!n || v > 255 || (i < 3 ? *s++ != '.' : *s != '\0'))
			return -1;
		ip[i] = (uint8_t)v;
	}
	return 0;
}

uint32_t np_csum_add(uint32_t sum, const void *buf, unsigned len)
{
	const uint8_t *p = buf;
	uint64_t s = 0;

	/* Sum little-endian 32-bit words, fold, then swap: the one's
	 * complement sum does not care about byte order except for that swap
	 * (RFC 1071). */
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t w[2];

		__builtin_memcpy(w, p, 8);
		s += (uint64_t)w[0] + w[1];
	}
	if (len >= 4) {
		uint32_t w;

		__builtin_memcpy(&w, p, 4);
		s += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t w;

		__builtin_memcpy(&w, p, 2);
		s += w;
		p += 2;
		len -= 2;
	}
	if (len)
		s += *p;
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return sum + __builtin_bswap16((uint16_t)s);
}

uint16_t np_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((uint16_t)~sum);
}

uint32_t np_pseudo_sum(const uint8_t src[4], const uint8_t dst[4], uint16_t udp_len)
{
	uint32_t s = np_csum_add(0, src, 4);

	s = np_csum_add(s, dst, 4);
	return s + IP_PROTO_UDP + udp_len;
}

enum np_kind np_classify(uint8_t *frame, unsigned len, const struct np_addr *self,
			 struct np_view *v)
{
	unsigned ihl, tot;

	memset(v, 0, sizeof(*v));
	if (len < ETH_HLEN)
		return NP_OTHER;
	v->eth = (struct eth_hdr *)frame;
	if (v->eth->type == htons(ETH_P_ARP)) {
		struct arp_pkt *a = (struct arp_pkt *)(frame + ETH_HLEN);

		if (len < ETH_HLEN + sizeof(*a) || a->htype != htons(1) ||
		    a->ptype != htons(ETH_P_IP) || a->hlen != 6 || a->plen != 4)
			return NP_OTHER;
		v->arp = a;
		if (a->op == htons(1) && !memcmp(a->tpa, self->ip, 4))
			return NP_ARP_REQUEST;
		if (a->op == htons(2))
			return NP_ARP_REPLY;
		return NP_OTHER;
	}
	if (v->eth->type != htons(ETH_P_IP) || len < ETH_HLEN + IP_HLEN)
		return NP_OTHER;
	v->ip = (struct ip_hdr *)(frame + ETH_HLEN);
	if (memcmp(v->ip->dst, self->ip, 4))
		return NP_OTHER;
	ihl = (v->ip->ver_ihl & 0xf) * 4u;
	tot = ntohs(v->ip->tot_len);
	if ((v->ip->ver_ihl >> 4) != 4 || ihl < IP_HLEN || tot < ihl ||
	    tot > len - ETH_HLEN)
		return NP_BAD;
	if (ntohs(v->ip->frag) & 0x3fff)        /* MF or an offset: fragment */
		return NP_OTHER;
	v->ip_len = tot;
	v->payload = frame + ETH_HLEN + ihl;
	v->payload_len = tot - ihl;
	if (v->ip->proto == IP_PROTO_ICMP) {
		struct icmp_hdr *ic = (struct icmp_hdr *)v->payload;

		if (v->payload_len < sizeof(*ic))
			return NP_BAD;
		return ic->type == 8 && ic->code == 0 ? NP_ICMP_ECHO : NP_OTHER;
	}
	if (v->ip->proto == IP_PROTO_UDP) {
		unsigned ulen;

		if (v->payload_len < UDP_HLEN)
			return NP_BAD;
		v->udp = (struct udp_hdr *)v->payload;
		ulen = ntohs(v->udp->len);
		if (ulen < UDP_HLEN || ulen > v->payload_len)
			return NP_BAD;
		v->payload += UDP_HLEN;
		v->payload_len = ulen - UDP_HLEN;
		return NP_UDP;
	}
	return NP_OTHER;
}

static unsigned pad(uint8_t *out, unsigned len)
{
	if (len < ETH_ZLEN) {
		memset(out + len, 0, ETH_ZLEN - len);
		len = ETH_ZLEN;
	}
	return len;
}

static void arp_fill(uint8_t *out, const uint8_t dmac[6], const struct np_addr *self,
		     uint16_t op, const uint8_t tha[6], const uint8_t tpa[4])
{
	struct eth_hdr *e = (struct eth_hdr *)out;
	struct arp_pkt *a = (struct arp_pkt *)(out + ETH_HLEN);

	memcpy(e->dst, dmac, ETH_ALEN);
	memcpy(e->src, self->mac, ETH_ALEN);
	e->type = htons(ETH_P_ARP);
	a->htype = htons(1);
	a->ptype = htons(ETH_P_IP);
	a->hlen = 6;
	a->plen = 4;
	a->op = htons(op);
	memcpy(a->sha, self->mac, ETH_ALEN);
	memcpy(a->spa, self->ip, 4);
	memcpy(a->tha, tha, ETH_ALEN);
	memcpy(a->tpa, tpa, 4);
}

unsigned np_arp_reply(uint8_t *out, const struct np_view *req, const struct np_addr *self)
{
	uint8_t sha[ETH_ALEN], spa[4];

	/* out may alias req: copy what we need first. */
	memcpy(sha, req->arp->sha, ETH_ALEN);
	memcpy(spa, req->arp->spa, 4);
	arp_fill(out, sha, self, 2, sha, spa);
	return pad(out, ETH_HLEN + sizeof(struct arp_pkt));
}

unsigned np_arp_request(uint8_t *out, const struct np_addr *self, const uint8_t tip[4])
{
	static const uint8_t bcast[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[ETH_ALEN];

	arp_fill(out, bcast, self, 1, zero, tip);
	return pad(out, ETH_HLEN + sizeof(struct arp_pkt));
}

/* Swap MACs and IPs of the frame at `out` (a copy of the request). */
static void swap_l2_l3(uint8_t *out)
{
	struct eth_hdr *e = (struct eth_hdr *)out;
	struct ip_hdr *ip = (struct ip_hdr *)(out + ETH_HLEN);
	uint8_t t[ETH_ALEN];
	unsigned ihl = (ip->ver_ihl & 0xf) * 4u;

	memcpy(t, e->dst, ETH_ALEN);
	memcpy(e->dst, e->src, ETH_ALEN);
	memcpy(e->src, t, ETH_ALEN);
	memcpy(t, ip->dst, 4);
	memcpy(ip->dst, ip->src, 4);
	memcpy(ip->src, t, 4);
	ip->ttl = 64;
	ip->csum = 0;
	ip->csum = np_csum_fold(np_csum_add(0, ip, ihl));
}

unsigned np_icmp_reply(uint8_t *out, const struct np_view *v)
{
	unsigned len = ETH_HLEN + v->ip_len;
	unsigned off = (unsigned)(v->payload - (uint8_t *)v->eth);
	struct icmp_hdr *ic;

	if (len > ETH_FRAME_MAX)
		return 0;
	if (out != (uint8_t *)v->eth)
		np_copy(out, v->eth, len);
	swap_l2_l3(out);
	ic = (struct icmp_hdr *)(out + off);
	ic->type = 0;
	ic->csum = 0;
	ic->csum = np_csum_fold(np_csum_add(0, ic, v->payload_len));
	return pad(out, len);
}

unsigned np_udp_echo(uint8_t *out, const struct np_view *v)
{
	unsigned len = ETH_HLEN + v->ip_len;
	unsigned off = (unsigned)((uint8_t *)v->udp - (uint8_t *)v->eth);
	struct udp_hdr *u;
	uint16_t t;

	if (out != (uint8_t *)v->eth)
		np_copy(out, v->eth, len);
	swap_l2_l3(out);
	u = (struct udp_hdr *)(out + off);
	t = u->sport;
	u->sport = u->dport;
	u->dport = t;
	return pad(out, len);
}

unsigned np_udp_headers(uint8_t *out, const struct np_addr *self, const uint8_t dmac[6],
			const uint8_t dip[4], uint16_t sport, uint16_t dport,
			unsigned payload_len)
{
	struct eth_hdr *e = (struct eth_hdr *)out;
	struct ip_hdr *ip = (struct ip_hdr *)(out + ETH_HLEN);
	struct udp_hdr *u = (struct udp_hdr *)(out + ETH_HLEN + IP_HLEN);

	memcpy(e->dst, dmac, ETH_ALEN);
	memcpy(e->src, self->mac, ETH_ALEN);
	e->type = htons(ETH_P_IP);
	ip->ver_ihl = 0x45;
	ip->tos = 0;
	ip->tot_len = htons((uint16_t)(IP_HLEN + UDP_HLEN + payload_len));
	ip->id = 0;
	ip->frag = htons(0x4000);               /* DF */
	ip->ttl = 64;
	ip->proto = IP_PROTO_UDP;
	memcpy(ip->src, self->ip, 4);
	memcpy(ip->dst, dip, 4);
	ip->csum = 0;
	ip->csum = np_csum_fold(np_csum_add(0, ip, IP_HLEN));
	u->sport = htons(sport);
	u->dport = htons(dport);
	u->len = htons((uint16_t)(UDP_HLEN + payload_len));
	u->csum = 0;
	return UDP_FRAME_HLEN + payload_len < ETH_ZLEN ? ETH_ZLEN
						       : UDP_FRAME_HLEN + payload_len;
}

unsigned np_icmp_request(uint8_t *out, const struct np_addr *self, const uint8_t dmac[6],
			 const uint8_t dip[4], uint16_t id, uint16_t seq, unsigned payload_len)
{
	struct eth_hdr *e = (struct eth_hdr *)out;
	struct ip_hdr *ip = (struct ip_hdr *)(out + ETH_HLEN);
	struct icmp_hdr *ic = (struct icmp_hdr *)(out + ETH_HLEN + IP_HLEN);
	uint8_t *pl = (uint8_t *)(ic + 1);
	unsigned icmp_len = (unsigned)sizeof(*ic) + payload_len;

	memcpy(e->dst, dmac, ETH_ALEN);
	memcpy(e->src, self->mac, ETH_ALEN);
	e->type = htons(ETH_P_IP);
	ip->ver_ihl = 0x45;
	ip->tos = 0;
	ip->tot_len = htons((uint16_t)(IP_HLEN + icmp_len));
	ip->id = htons(seq);
	ip->frag = htons(0x4000);               /* DF */
	ip->ttl = 64;
	ip->proto = IP_PROTO_ICMP;
	memcpy(ip->src, self->ip, 4);
	memcpy(ip->dst, dip, 4);
	ip->csum = 0;
	ip->csum = np_csum_fold(np_csum_add(0, ip, IP_HLEN));
	ic->type = 8;
	ic->code = 0;
	ic->id = htons(id);
	ic->seq = htons(seq);
	for (unsigned i = 0; i < payload_len; i++)
		pl[i] = (uint8_t)(i + seq);
	ic->csum = 0;
	ic->csum = np_csum_fold(np_csum_add(0, ic, icmp_len));
	return pad(out, ETH_HLEN + IP_HLEN + icmp_len);
}

int np_icmp_is_reply(const uint8_t *frame, unsigned len, const struct np_addr *self,
		     const uint8_t src[4], uint16_t id, uint16_t *seq)
{
	const struct eth_hdr *e = (const struct eth_hdr *)frame;
	const struct ip_hdr *ip = (const struct ip_hdr *)(frame + ETH_HLEN);
	const struct icmp_hdr *ic;
	unsigned ihl;

	if (len < ETH_HLEN + IP_HLEN + sizeof(*ic) || e->type != htons(ETH_P_IP) ||
	    (ip->ver_ihl >> 4) != 4 || ip->proto != IP_PROTO_ICMP ||
	    memcmp(ip->src, src, 4) || memcmp(ip->dst, self->ip, 4))
		return 0;
	ihl = (ip->ver_ihl & 0xf) * 4u;
	if (ihl < IP_HLEN || len < ETH_HLEN + ihl + sizeof(*ic))
		return 0;
	ic = (const struct icmp_hdr *)(frame + ETH_HLEN + ihl);
	if (ic->type != 0 || ic->code != 0 || ntohs(ic->id) != id)
		return 0;
	*seq = ntohs(ic->seq);
	return 1;
}

/* Pattern byte i (i >= 16) of a test datagram is pattern_base + 7 * i, as
 * in tests/tools/udp_flows.c. Eight bytes at a time, without carries
 * between bytes. */
static uint8_t pattern_base(uint16_t flow, uint64_t seq)
{
	return (uint8_t)(seq * 0x9d + (seq >> 8) * 0x3b + (seq >> 16) * 0x17 + flow * 0x55u);
}

static uint64_t bytes_add(uint64_t t, uint64_t b)
{
	const uint64_t h = 0x8080808080808080ull;

	return ((t & ~h) + (b & ~h)) ^ ((t ^ b) & h);
}

static uint64_t pattern_word(unsigned i)
{
	uint64_t w = 0;

	for (unsigned k = 0; k < 8; k++)
		w |= (uint64_t)(uint8_t)((i + k) * 7) << (8 * k);
	return w;
}

void np_seq_fill(uint8_t *payload, unsigned len, uint16_t flow, uint64_t seq)
{
	struct minivmm_net_seq_hdr h = { .magic = MINIVMM_NET_SEQ_MAGIC, .flow = flow,
					  .seq = seq };
	uint64_t b = 0x0101010101010101ull * pattern_base(flow, seq);
	unsigned i = sizeof(h);

	__builtin_memcpy(payload, &h, sizeof(h));
	/* 7 * (i + 8) - 7 * i = 56 per byte and word: step the pattern. */
	for (uint64_t t = pattern_word(i); i + 8 <= len; i += 8) {
		uint64_t w = bytes_add(t, b);

		__builtin_memcpy(payload + i, &w, 8);
		t = bytes_add(t, 0x3838383838383838ull);
	}
	for (; i < len; i++)
		payload[i] = (uint8_t)(pattern_base(flow, seq) + i * 7);
}

int np_seq_check(const uint8_t *payload, unsigned len, struct minivmm_net_seq_hdr *h)
{
	uint64_t b;
	unsigned i = sizeof(*h);

	if (len < sizeof(*h))
		return -1;
	__builtin_memcpy(h, payload, sizeof(*h));
	if (h->magic != MINIVMM_NET_SEQ_MAGIC)
		return -1;
	b = 0x0101010101010101ull * pattern_base(h->flow, h->seq);
	for (uint64_t t = pattern_word(i); i + 8 <= len; i += 8) {
		uint64_t w;

		__builtin_memcpy(&w, payload + i, 8);
		if (w != bytes_add(t, b))
			return 1;
		t = bytes_add(t, 0x3838383838383838ull);
	}
	for (; i < len; i++)
		if (payload[i] != (uint8_t)(pattern_base(h->flow, h->seq) + i * 7))
			return 1;
	return 0;
}

void np_copy(void *dst, const void *src, unsigned len)
{
	size_t n = len;

	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}
