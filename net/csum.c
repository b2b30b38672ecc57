#include "net/csum.h"

#include <stddef.h>

#define ETH_HLEN_      14u
#define VLAN_HLEN_     4u
#define IPPROTO_TCP_   6u
#define IPPROTO_UDP_   17u

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* Big-endian 16-bit words of p, summed (not folded). */
static uint64_t sum_bytes(uint64_t sum, const uint8_t *p, uint32_t len)
{
	uint32_t i = 0;
	for (; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* Ones'-complement fold to 16 bits: 0x0001..0xffff for any non-zero sum. */
static uint16_t fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

struct l4 {
	uint8_t *hdr;          /* TCP or UDP header */
	uint32_t len;          /* header + payload, from the IP header */
	uint8_t proto;
	uint64_t pseudo;       /* addresses + protocol + length, unfolded */
};

/* IPv4 without fragments: the TCP/UDP packet and its pseudo-header sum. */
static bool parse_ipv4(uint8_t *ip, uint32_t room, struct l4 *l)
{
	if (room < 20 || (ip[0] >> 4) != 4)
		return false;
	uint32_t ihl = (ip[0] & 15u) * 4u, total = get16(ip + 2);
	if (ihl < 20 || total < ihl || total > room)
		return false;
	if (get16(ip + 6) & 0x3fff)
		return false;   /* a fragment (MF or an offset): no whole L4 packet here */
	l->proto = ip[9];
	l->hdr = ip + ihl;
	l->len = total - ihl;
	l->pseudo = sum_bytes(0, ip + 12, 8) + l->proto + l->len;
	return true;
}

/* IPv6 with TCP/UDP right after the fixed header. */
static bool parse_ipv6(uint8_t *ip, uint32_t room, struct l4 *l)
{
	if (room < 40 || (ip[0] >> 4) != 6)
		return false;
	uint32_t plen = get16(ip + 4);
	if (plen > room - 40)
		return false;
	l->proto = ip[6];
	l->hdr = ip + 40;
	l->len = plen;
	l->pseudo = sum_bytes(0, ip + 8, 32) + l->proto + l->len;
	return true;
}

static bool parse(uint8_t *frame, uint32_t len, struct l4 *l)
{
	if (len < ETH_HLEN_)
		return false;
	uint32_t off = 12;
	uint16_t type = get16(frame + off);
	if (type == 0x8100 || type == 0x88a8) {
		if (len < ETH_HLEN_ + VLAN_HLEN_)
			return false;
		off += VLAN_HLEN_;
		type = get16(frame + off);
	}
	off += 2;
	if (type == 0x0800)
		return parse_ipv4(frame + off, len - off, l);
	if (type == 0x86dd)
		return parse_ipv6(frame + off, len - off, l);
	return false;
}

bool csum_complete_partial(uint8_t *frame, uint32_t len)
{
	struct l4 l;
	if (!parse(frame, len, &l))
		return false;
	uint32_t field;
	if (l.proto == IPPROTO_TCP_ && l.len >= 20)
		field = 16;
	else if (l.proto == IPPROTO_UDP_ && l.len >= 8)
		field = 6;
	else
		return false;
	uint16_t have = get16(l.hdr + field);
	if (l.proto == IPPROTO_UDP_ && have == 0)
		return false;   /* UDP over IPv4 without a checksum (IPv6 requires one) */
	uint64_t full = sum_bytes(l.pseudo, l.hdr, l.len);
	if (fold(full) == 0xffff)
		return false;   /* valid as it is */
	if (have != fold(l.pseudo))
		return false;   /* wrong, but not a partial one: left for the guest to drop */
	/* The field holds the pseudo-header sum, so the sum over the packet as
	 * it is already counts the pseudo header once: its complement is the
	 * checksum. */
	uint16_t c = (uint16_t)~fold(sum_bytes(0, l.hdr, l.len));
	if (l.proto == IPPROTO_UDP_ && c == 0)
		c = 0xffff;   /* UDP: 0 would mean "no checksum" */
	l.hdr[field] = (uint8_t)(c >> 8);
	l.hdr[field + 1] = (uint8_t)c;
	return true;
}
