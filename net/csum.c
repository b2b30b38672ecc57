/* SPDX-License-Identifier: Apache-2.0 */
/* Internet checksums over flat and scattered frames, and partial ones
 * recognised without metadata. */
#include "net/csum.h"

uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

bool csum_finish(uint8_t *frame, uint32_t len, uint16_t csum_start, uint16_t csum_offset)
{
	if ((uint32_t)csum_start + csum_offset + 2 > len)
		return false;
	/* The field already holds the pseudo-header sum; add the rest. */
	uint16_t c = csum_fold(csum_add(0, frame + csum_start, len - csum_start));
	frame[csum_start + csum_offset] = (uint8_t)(c >> 8);
	frame[csum_start + csum_offset + 1] = (uint8_t)c;
	return true;
}

/* A position in a frame scattered over iovecs. */
struct iov_cursor {
	const struct iovec *iov;
	unsigned nr, i;
	size_t off;      /* in iov[i] */
};

/* Move the cursor forward by n bytes; false if the iovecs end first. */
static bool cursor_skip(struct iov_cursor *c, size_t n)
{
	while (c->i < c->nr) {
		size_t room = c->iov[c->i].iov_len - c->off;
		if (n < room) {
			c->off += n;
			return true;
		}
		n -= room;
		c->i++;
		c->off = 0;
	}
	return n == 0;
}

static uint8_t *cursor_byte(const struct iov_cursor *c)
{
	return (uint8_t *)c->iov[c->i].iov_base + c->off;
}

bool csum_finish_iov(const struct iovec *iov, unsigned nr, size_t skip, uint32_t len,
		     uint16_t csum_start, uint16_t csum_offset)
{
	if ((uint32_t)csum_start + csum_offset + 2 > len)
		return false;
	struct iov_cursor c = { .iov = iov, .nr = nr };
	if (!cursor_skip(&c, skip + csum_start))
		return false;
	/* Sum byte by byte, keeping track of which half of a 16-bit word each
	 * byte is: segment lengths need not be even. Remember where the two
	 * bytes of the field are, they may straddle a segment boundary. */
	uint32_t sum = 0;
	uint8_t *field[2] = { NULL, NULL };
	for (uint32_t pos = 0, left = len - csum_start; left; pos++, left--) {
		if (c.i >= c.nr)
			return false;
		uint8_t *b = cursor_byte(&c);
		if (pos == csum_offset || pos == (uint32_t)csum_offset + 1)
			field[pos - csum_offset] = b;
		sum += (pos & 1) ? *b : (uint32_t)*b << 8;
		if (!cursor_skip(&c, 1))
			return false;
	}
	uint16_t v = csum_fold(sum);
	*field[0] = (uint8_t)(v >> 8);
	*field[1] = (uint8_t)v;
	return true;
}

/* ---- partial checksums that came without NEEDS_CSUM (AF_XDP) ---------- */

#define ETH_HLEN_      14u
#define VLAN_HLEN_     4u
#define IPPROTO_TCP_   6u
#define IPPROTO_UDP_   17u

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* Folded to 16 bits, not complemented: 0x0001..0xffff for a non-zero sum. */
static uint16_t fold(uint32_t sum)
{
	return (uint16_t)~csum_fold(sum);
}

struct l4 {
	uint8_t *hdr;          /* TCP or UDP header */
	uint32_t len;          /* header + payload, from the IP header */
	uint8_t proto;
	uint32_t pseudo;       /* addresses + protocol + length, unfolded */
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
	l->pseudo = csum_add(0, ip + 12, 8) + l->proto + l->len;
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
	l->pseudo = csum_add(0, ip + 8, 32) + l->proto + l->len;
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
	/* Compared first because it is cheap: only a field that holds the
	 * pseudo-header sum can be a partial checksum, so every other frame
	 * (valid, or wrong and left for the guest to drop) is passed over
	 * without summing its payload. */
	if (have != fold(l.pseudo))
		return false;
	uint32_t full = csum_add(l.pseudo, l.hdr, l.len);
	if (fold(full) == 0xffff)
		return false;   /* valid as it is: the field happens to equal the pseudo sum */
	/* The field holds the pseudo-header sum, so the sum over the packet as
	 * it is already counts the pseudo header once: its complement is the
	 * checksum. */
	uint16_t c = csum_fold(csum_add(0, l.hdr, l.len));
	if (l.proto == IPPROTO_UDP_ && c == 0)
		c = 0xffff;   /* UDP: 0 would mean "no checksum" */
	l.hdr[field] = (uint8_t)(c >> 8);
	l.hdr[field + 1] = (uint8_t)c;
	return true;
}
