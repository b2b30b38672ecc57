/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "net/csum.h"
#include "tests/ref_csum.h"

/* A UDP/IPv4 frame as a sender with checksum offload leaves it: the UDP
 * checksum field holds the pseudo-header sum (NEEDS_CSUM, csum_start at
 * the UDP header, csum_offset 6). Returns the frame's length. */
static uint32_t partial_udp_frame(uint8_t *f, unsigned payload)
{
	memset(f, 0, 14 + 20 + 8 + payload);
	f[12] = 0x08;                                   /* IPv4 */
	uint8_t *ip = f + 14, *udp = ip + 20;
	ip[0] = 0x45; ip[8] = 64; ip[9] = 17;
	uint16_t iplen = (uint16_t)(20 + 8 + payload), udplen = (uint16_t)(8 + payload);
	ip[2] = (uint8_t)(iplen >> 8); ip[3] = (uint8_t)iplen;
	memcpy(ip + 12, (uint8_t[]){ 10, 0, 0, 1, 10, 0, 0, 2 }, 8);
	udp[0] = 0x13; udp[1] = 0x89; udp[2] = 0x13; udp[3] = 0x8a;
	udp[4] = (uint8_t)(udplen >> 8); udp[5] = (uint8_t)udplen;
	for (unsigned i = 0; i < payload; i++)
		udp[8 + i] = (uint8_t)(i * 31 + 7);
	uint32_t pseudo = csum_add(0, ip + 12, 8) + 17 + udplen;
	while (pseudo >> 16)
		pseudo = (pseudo & 0xffff) + (pseudo >> 16);
	udp[6] = (uint8_t)(pseudo >> 8); udp[7] = (uint8_t)pseudo;
	return 14u + 20 + 8 + payload;
}

/* A receiver's check: the pseudo-header plus the whole UDP datagram sum to 0xffff. */
static bool udp_checksum_ok(const uint8_t *f)
{
	const uint8_t *ip = f + 14, *udp = ip + 20;
	uint16_t udplen = (uint16_t)(udp[4] << 8 | udp[5]);
	uint32_t sum = csum_add(0, ip + 12, 8) + 17 + udplen;
	sum = csum_add(sum, udp, udplen);
	return csum_fold(sum) == 0;
}

Test(csum, finish_completes_a_partial_udp_checksum)
{
	uint8_t f[256];
	uint32_t len = partial_udp_frame(f, 37);
	cr_assert(!udp_checksum_ok(f), "a partial checksum does not verify");
	cr_assert(csum_finish(f, len, 34, 6));
	cr_assert(udp_checksum_ok(f));
}

Test(csum, finish_refuses_a_field_outside_the_frame)
{
	uint8_t f[64] = { 0 }, copy[64];
	memcpy(copy, f, sizeof(f));
	cr_assert(!csum_finish(f, 60, 58, 1));
	cr_assert(!csum_finish(f, 60, 0xffff, 0xffff));
	cr_assert_eq(memcmp(f, copy, sizeof(f)), 0, "nothing written");
}

/* Every way of cutting the frame into three segments (odd lengths and the
 * field straddling a boundary included) gives the flat result. */
Test(csum, finish_iov_matches_finish_for_every_split)
{
	uint8_t flat[128];
	uint32_t len = partial_udp_frame(flat, 23);
	uint8_t want[128];
	memcpy(want, flat, len);
	cr_assert(csum_finish(want, len, 34, 6));
	enum { SKIP = 12 };
	for (uint32_t a = 1; a < SKIP + len - 1; a++)
		for (uint32_t b = a + 1; b < SKIP + len; b += 3) {
			uint8_t buf[SKIP + 128];
			memset(buf, 0xee, SKIP);
			memcpy(buf + SKIP, flat, len);
			struct iovec iov[3] = { { buf, a }, { buf + a, b - a }, { buf + b, SKIP + len - b } };
			cr_assert(csum_finish_iov(iov, 3, SKIP, len, 34, 6), "split %u/%u", a, b);
			cr_assert_eq(memcmp(buf + SKIP, want, len), 0, "split %u/%u", a, b);
		}
}

Test(csum, finish_iov_refuses_iovecs_shorter_than_the_frame)
{
	uint8_t flat[128];
	uint32_t len = partial_udp_frame(flat, 23);
	struct iovec iov[1] = { { flat, len - 1 } };
	cr_assert(!csum_finish_iov(iov, 1, 0, len, 34, 6));
}

/* ---- csum_complete_partial --------------------------------------------- */


/* An Ethernet + IPv4 + UDP/TCP frame with `payload` bytes; the checksum
 * field holds the full checksum (partial = false) or what a
 * CHECKSUM_PARTIAL skb carries (the folded pseudo-header sum). */
static unsigned build4(uint8_t *f, uint8_t proto, unsigned payload, bool partial, bool vlan)
{
	unsigned off = 12;
	memset(f, 0, 2048);
	memcpy(f, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	if (vlan) {
		ref_put16(f + 12, 0x8100);
		ref_put16(f + 14, 7);
		off += 4;
	}
	ref_put16(f + off, 0x0800);
	uint8_t *ip = f + off + 2;
	unsigned l4h = proto == 6 ? 20 : 8, l4len = l4h + payload;
	ip[0] = 0x45;
	ref_put16(ip + 2, (uint16_t)(20 + l4len));
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, "\x0a\x09\x00\x02\x0a\x09\x00\x01", 8);
	ref_put16(ip + 10, (uint16_t)~ref_csum_fold(ref_csum_add(0, ip, 20)));
	uint8_t *l4 = ip + 20;
	ref_put16(l4, 20000);
	ref_put16(l4 + 2, 9000);
	if (proto == 17)
		ref_put16(l4 + 4, (uint16_t)l4len);
	else
		l4[12] = 5 << 4;
	for (unsigned i = 0; i < payload; i++)
		l4[l4h + i] = (uint8_t)(i * 13 + 5);
	uint32_t pseudo = ref_csum_add(0, ip + 12, 8) + proto + l4len;
	unsigned field = proto == 6 ? 16 : 6;
	if (partial) {
		ref_put16(l4 + field, ref_csum_fold(pseudo));
	} else {
		uint16_t c = (uint16_t)~ref_csum_fold(ref_csum_add(pseudo, l4, l4len));
		ref_put16(l4 + field, c ? c : 0xffff);
	}
	return off + 2 + 20 + l4len;
}

static bool l4_valid(const uint8_t *f, bool vlan)
{
	const uint8_t *ip = f + 14 + (vlan ? 4 : 0);
	unsigned l4len = ref_get16(ip + 2) - 20u;
	uint32_t pseudo = ref_csum_add(0, ip + 12, 8) + ip[9] + l4len;
	return ref_csum_fold(ref_csum_add(pseudo, ip + 20, l4len)) == 0xffff;
}

Test(csum, partial_udp_and_tcp_over_ipv4_are_completed)
{
	uint8_t f[2048];
	for (unsigned proto = 6; proto <= 17; proto += 11) {
		for (unsigned payload = 0; payload < 1400; payload += 97) {
			unsigned len = build4(f, (uint8_t)proto, payload, true, false);
			cr_assert_not(l4_valid(f, false), "the partial frame does not verify yet");
			cr_assert(csum_complete_partial(f, len), "proto %u payload %u", proto, payload);
			cr_assert(l4_valid(f, false), "proto %u payload %u completed", proto, payload);
			cr_assert_not(csum_complete_partial(f, len), "a complete frame is left alone");
		}
	}
}

Test(csum, valid_frames_are_never_touched)
{
	uint8_t f[2048], copy[2048];
	for (unsigned payload = 1; payload < 1400; payload += 31) {
		unsigned len = build4(f, 17, payload, false, payload & 1);
		memcpy(copy, f, sizeof(f));
		cr_assert_not(csum_complete_partial(f, len));
		cr_assert_eq(memcmp(f, copy, len), 0);
	}
}

/* A valid checksum can hold the same value a partial one does (the folded
 * pseudo-header sum): such a frame is recognised by its full sum and left
 * alone, although the cheap first comparison lets it through. */
Test(csum, a_valid_checksum_equal_to_the_pseudo_sum_is_left_alone)
{
	uint8_t f[2048], copy[2048];
	unsigned len = build4(f, 17, 100, true, false);
	uint8_t *payload = f + 14 + 20 + 8;
	for (uint32_t w = 0; w <= 0xffff && !l4_valid(f, false); w++)
		ref_put16(payload, (uint16_t)w);
	cr_assert(l4_valid(f, false), "one payload word makes the pseudo sum the valid checksum");
	memcpy(copy, f, len);
	cr_assert_not(csum_complete_partial(f, len));
	cr_assert_eq(memcmp(f, copy, len), 0);
}

Test(csum, bad_checksums_that_are_not_partial_stay_bad)
{
	uint8_t f[2048];
	unsigned len = build4(f, 6, 300, false, false);
	f[14 + 20 + 20 + 7] ^= 0x40;   /* corrupt a payload byte */
	cr_assert_not(csum_complete_partial(f, len));
	cr_assert_not(l4_valid(f, false));
}

Test(csum, vlan_tagged_frames_are_parsed)
{
	uint8_t f[2048];
	unsigned len = build4(f, 17, 100, true, true);
	cr_assert(csum_complete_partial(f, len));
	cr_assert(l4_valid(f, true));
}

Test(csum, fragments_truncated_frames_and_udp_without_checksum_are_left_alone)
{
	uint8_t f[2048];
	unsigned len = build4(f, 17, 100, true, false);
	cr_assert_not(csum_complete_partial(f, len - 1), "IP length beyond the frame");
	f[14 + 6] = 0x20;   /* MF */
	cr_assert_not(csum_complete_partial(f, len));
	f[14 + 6] = 0;
	ref_put16(f + 14 + 20 + 6, 0);
	cr_assert_not(csum_complete_partial(f, len), "UDP over IPv4 with checksum 0: none");
	cr_assert_not(csum_complete_partial(f, 13));
}

Test(csum, partial_udp_over_ipv6_is_completed)
{
	uint8_t f[2048];
	memset(f, 0, sizeof(f));
	ref_put16(f + 12, 0x86dd);
	uint8_t *ip = f + 14;
	unsigned l4len = 8 + 200;
	ip[0] = 0x60;
	ref_put16(ip + 4, (uint16_t)l4len);
	ip[6] = 17;
	ip[7] = 64;
	for (unsigned i = 0; i < 32; i++)
		ip[8 + i] = (uint8_t)(0xfd + i);
	uint8_t *u = ip + 40;
	ref_put16(u, 1);
	ref_put16(u + 2, 2);
	ref_put16(u + 4, (uint16_t)l4len);
	for (unsigned i = 0; i < 200; i++)
		u[8 + i] = (uint8_t)i;
	uint32_t pseudo = ref_csum_add(0, ip + 8, 32) + 17 + l4len;
	ref_put16(u + 6, ref_csum_fold(pseudo));
	cr_assert(csum_complete_partial(f, 14 + 40 + l4len));
	cr_assert_eq(ref_csum_fold(ref_csum_add(pseudo, u, l4len)), 0xffff);
}
