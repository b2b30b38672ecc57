/* SPDX-License-Identifier: Apache-2.0 */
#include "net/gso.h"

#include "net/csum.h"

#include <errno.h>
#include <linux/virtio_net.h>
#include <string.h>

#define ETH_HLEN_      14u
#define ETH_P_IP_      0x0800
#define ETH_P_IPV6_    0x86dd
#define ETH_P_8021Q_   0x8100
#define IPPROTO_TCP_   6
#define IPPROTO_UDP_   17
#define TCP_FIN        0x01
#define TCP_PSH        0x08
#define TCP_CWR        0x80

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }

/* Where the headers of a frame to cut are, once checked. */
struct gso_layout {
	uint32_t l3, l4, payload;   /* offsets in the Ethernet frame */
	uint32_t end;               /* bytes of the frame that belong to the packet */
	bool ipv6, tcp;
	uint16_t mss;
};

static int gso_parse_l3(const uint8_t *eth, uint32_t len, struct gso_layout *g, uint8_t want_proto)
{
	uint32_t l3 = ETH_HLEN_;
	uint16_t type = get16(eth + 12);
	if (type == ETH_P_8021Q_) {
		if (len < ETH_HLEN_ + 4)
			return -EINVAL;
		type = get16(eth + 16);
		l3 += 4;
	}
	g->l3 = l3;
	if (type == ETH_P_IP_) {
		if (len < l3 + 20 || (eth[l3] >> 4) != 4)
			return -EINVAL;
		uint32_t ihl = (eth[l3] & 0xf) * 4u;
		uint16_t frag = get16(eth + l3 + 6);
		if (ihl < 20 || len < l3 + ihl || (frag & 0x3fff) || eth[l3 + 9] != want_proto)
			return -EINVAL;   /* fragments (MF or an offset) are never GSO */
		g->ipv6 = false;
		g->l4 = l3 + ihl;
		g->end = l3 + get16(eth + l3 + 2);
	} else if (type == ETH_P_IPV6_) {
		if (len < l3 + 40 || (eth[l3] >> 4) != 6 || eth[l3 + 6] != want_proto)
			return -EINVAL;   /* extension headers: not cut here */
		g->ipv6 = true;
		g->l4 = l3 + 40;
		g->end = g->l4 + get16(eth + l3 + 4);
	} else {
		return -EINVAL;
	}
	/* The IP length must cover the headers and fit in what we got (a short
	 * Ethernet frame may carry padding after it: ignore that). */
	if (g->end > len || g->end < g->l4)
		return -EINVAL;
	return 0;
}

static int gso_parse(const uint8_t *eth, uint32_t len, const struct virtio_net_hdr_v1 *h,
		     struct gso_layout *g)
{
	uint8_t type = h->gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;
	g->tcp = type == VIRTIO_NET_HDR_GSO_TCPV4 || type == VIRTIO_NET_HDR_GSO_TCPV6;
	if (!g->tcp && type != VIRTIO_NET_HDR_GSO_UDP_L4)
		return -EINVAL;
	g->mss = h->gso_size;
	if (g->mss < GSO_MIN_SEGMENT || len < ETH_HLEN_)
		return -EINVAL;
	if (gso_parse_l3(eth, len, g, g->tcp ? IPPROTO_TCP_ : IPPROTO_UDP_) < 0)
		return -EINVAL;
	if (g->tcp && (type == VIRTIO_NET_HDR_GSO_TCPV6) != g->ipv6)
		return -EINVAL;
	uint32_t l4len = g->tcp ? 20u : 8u;
	if (g->end < g->l4 + l4len)
		return -EINVAL;
	if (g->tcp) {
		l4len = (eth[g->l4 + 12] >> 4) * 4u;
		if (l4len < 20 || g->end < g->l4 + l4len)
			return -EINVAL;
	}
	g->payload = g->l4 + l4len;
	return 0;
}

/* Fix up one segment's L3 and L4 headers in place: seg points at the
 * Ethernet frame of the segment, with `plen` payload bytes, the i-th of n
 * (starting `off` bytes into the original payload). */
static void gso_fix_segment(uint8_t *seg, const struct gso_layout *g, uint32_t plen, unsigned i,
			    unsigned n, uint32_t off)
{
	uint8_t *ip = seg + g->l3, *l4 = seg + g->l4;
	uint32_t l4len = g->payload - g->l4 + plen;
	uint32_t sum;
	if (g->ipv6) {
		put16(ip + 4, (uint16_t)l4len);
		sum = csum_add(0, ip + 8, 32);                 /* source and destination */
	} else {
		put16(ip + 2, (uint16_t)(g->payload - g->l3 + plen));
		put16(ip + 4, (uint16_t)(get16(ip + 4) + i));  /* a new ID per segment, as GSO does */
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(csum_add(0, ip, g->l4 - g->l3)));
		sum = csum_add(0, ip + 12, 8);
	}
	sum += (g->tcp ? IPPROTO_TCP_ : IPPROTO_UDP_) + l4len;
	if (g->tcp) {
		put32(l4 + 4, get32(l4 + 4) + off);
		if (i + 1 < n)
			l4[13] &= (uint8_t)~(TCP_FIN | TCP_PSH);   /* only the last one ends or pushes */
		if (i > 0)
			l4[13] &= (uint8_t)~TCP_CWR;               /* only the first one says CWR */
		put16(l4 + 16, 0);
		put16(l4 + 16, csum_fold(csum_add(sum, l4, l4len)));
	} else {
		put16(l4 + 4, (uint16_t)l4len);
		put16(l4 + 6, 0);
		uint16_t c = csum_fold(csum_add(sum, l4, l4len));
		put16(l4 + 6, c ? c : 0xffff);                 /* 0 means "no checksum" in UDP */
	}
}

int gso_segment(const uint8_t *frame, uint32_t len, unsigned skip, uint8_t *scratch,
		size_t scratch_size, gso_emit_fn emit, void *ctx)
{
	if (len < GSO_VNET_HDR_LEN)
		return -EINVAL;
	struct virtio_net_hdr_v1 h;
	memcpy(&h, frame, sizeof(h));
	const uint8_t *eth = frame + GSO_VNET_HDR_LEN;
	uint32_t elen = len - GSO_VNET_HDR_LEN;
	struct gso_layout g;
	if (gso_parse(eth, elen, &h, &g) < 0)
		return -EINVAL;
	uint32_t total = g.end - g.payload;
	unsigned n = total ? (total + g.mss - 1) / g.mss : 1;
	if (GSO_VNET_HDR_LEN + (size_t)g.payload + (total < g.mss ? total : g.mss) > scratch_size)
		return -EINVAL;
	for (unsigned i = skip; i < n; i++) {
		uint32_t off = i * (uint32_t)g.mss;
		uint32_t plen = total - off < g.mss ? total - off : g.mss;
		memset(scratch, 0, GSO_VNET_HDR_LEN);
		uint8_t *seg = scratch + GSO_VNET_HDR_LEN;
		memcpy(seg, eth, g.payload);
		memcpy(seg + g.payload, eth + g.payload + off, plen);
		gso_fix_segment(seg, &g, plen, i, n, off);
		int rc = emit(ctx, scratch, GSO_VNET_HDR_LEN + g.payload + plen);
		if (rc <= 0)
			return rc;
	}
	return (int)n;
}

bool gso_guest_takes(uint8_t gso_type, bool tso4, bool tso6, bool ecn)
{
	if ((gso_type & VIRTIO_NET_HDR_GSO_ECN) && !ecn)
		return false;
	switch (gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN) {
	case VIRTIO_NET_HDR_GSO_NONE: return true;
	case VIRTIO_NET_HDR_GSO_TCPV4: return tso4;
	case VIRTIO_NET_HDR_GSO_TCPV6: return tso6;
	default: return false;
	}
}
