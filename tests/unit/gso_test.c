/* SPDX-License-Identifier: Apache-2.0 */
/* Software GSO: each test builds a GSO frame as a packet socket hands it over
 * (virtio_net_hdr_v1 + Ethernet + IP + TCP/UDP + a long payload) and checks
 * every segment: lengths, IDs, sequence numbers, flags, payload and checksums
 * (verified independently by summing the headers back to 0xffff). */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/virtio_net.h>
#include <stdlib.h>
#include <string.h>

#include "net/gso.h"
#include "tests/ref_csum.h"

#define MAX_SEGS 128

struct seg {
	uint8_t *buf;
	uint32_t len;
};

struct capture {
	struct seg seg[MAX_SEGS];
	unsigned n;
	int stop_after;   /* emit returns 0 after this many (0: never) */
};

static int capture_emit(void *ctx, const uint8_t *frame, uint32_t len)
{
	struct capture *c = ctx;
	cr_assert_lt(c->n, MAX_SEGS);
	c->seg[c->n].buf = malloc(len);
	memcpy(c->seg[c->n].buf, frame, len);
	c->seg[c->n].len = len;
	c->n++;
	return c->stop_after && (int)c->n >= c->stop_after ? 0 : 1;
}

static void capture_free(struct capture *c)
{
	for (unsigned i = 0; i < c->n; i++)
		free(c->seg[i].buf);
}


enum l4 { TCP, UDP };

/* A GSO frame: Ethernet (+ VLAN), IPv4 or IPv6, TCP or UDP, payload bytes
 * p[i] = i * 7 + 3. Returns its length (vnet header included). */
static uint32_t build(uint8_t *f, bool v6, enum l4 l4, bool vlan, uint32_t payload, uint16_t mss,
		      uint8_t tcp_flags)
{
	memset(f, 0, 70000);
	struct virtio_net_hdr_v1 *h = (struct virtio_net_hdr_v1 *)f;
	h->gso_type = l4 == UDP ? VIRTIO_NET_HDR_GSO_UDP_L4 : v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	h->gso_size = mss;
	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	uint8_t *e = f + 12;
	memset(e, 0x11, 6);
	memset(e + 6, 0x22, 6);
	uint32_t l3 = 14;
	if (vlan) {
		ref_put16(e + 12, 0x8100);
		ref_put16(e + 14, 42);
		l3 = 18;
	}
	ref_put16(e + l3 - 2, v6 ? 0x86dd : 0x0800);
	uint8_t *ip = e + l3;
	uint32_t l4len = (l4 == TCP ? 20 : 8) + payload;
	uint32_t l4off;
	if (v6) {
		ip[0] = 0x60;
		ref_put16(ip + 4, (uint16_t)l4len);
		ip[6] = l4 == TCP ? 6 : 17;
		ip[7] = 64;
		for (int i = 0; i < 32; i++)
			ip[8 + i] = (uint8_t)(i + 1);
		l4off = l3 + 40;
	} else {
		ip[0] = 0x45;
		ref_put16(ip + 2, (uint16_t)(20 + l4len));
		ref_put16(ip + 4, 1000);   /* ID */
		ref_put16(ip + 6, 0x4000); /* DF */
		ip[8] = 64;
		ip[9] = l4 == TCP ? 6 : 17;
		memcpy(ip + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
		l4off = l3 + 20;
	}
	uint8_t *t = e + l4off;
	ref_put16(t, 5001);
	ref_put16(t + 2, 6001);
	uint32_t hdr;
	if (l4 == TCP) {
		t[4] = 0x12; t[5] = 0x34; t[6] = 0x56; t[7] = 0x78;   /* seq */
		t[12] = 5 << 4;
		t[13] = tcp_flags;
		ref_put16(t + 14, 65535);
		hdr = l4off + 20;
	} else {
		ref_put16(t + 4, (uint16_t)l4len);
		hdr = l4off + 8;
	}
	for (uint32_t i = 0; i < payload; i++)
		e[hdr + i] = (uint8_t)(i * 7 + 3);
	h->hdr_len = (uint16_t)hdr;
	return 12 + hdr + payload;
}

/* Check one segment of a frame built by build(). */
static void check_seg(const struct seg *s, bool v6, enum l4 l4, bool vlan, unsigned i, unsigned n,
		      uint32_t payload, uint16_t mss, uint8_t tcp_flags)
{
	const struct virtio_net_hdr_v1 *h = (const void *)s->buf;
	cr_assert_eq(h->gso_type, VIRTIO_NET_HDR_GSO_NONE, "segment %u is not GSO", i);
	cr_assert_eq(h->flags, 0, "segment %u needs no checksum work", i);
	const uint8_t *e = s->buf + 12;
	uint32_t l3 = vlan ? 18 : 14;
	uint32_t off = i * mss, plen = payload - off < mss ? payload - off : mss;
	uint32_t l4off = l3 + (v6 ? 40 : 20);
	uint32_t l4hdr = l4 == TCP ? 20 : 8;
	cr_assert_eq(s->len, 12 + l4off + l4hdr + plen, "segment %u length", i);
	const uint8_t *ip = e + l3, *t = e + l4off;
	uint32_t ps;
	if (v6) {
		cr_assert_eq(ref_get16(ip + 4), l4hdr + plen);
		ps = ref_csum_add(0, ip + 8, 32);
	} else {
		cr_assert_eq(ref_get16(ip + 2), 20 + l4hdr + plen, "segment %u IP length", i);
		cr_assert_eq(ref_get16(ip + 4), 1000 + i, "segment %u IP ID", i);
		cr_assert_eq(ref_csum_fold(ref_csum_add(0, ip, 20)), 0xffff, "segment %u IP header checksum", i);
		ps = ref_csum_add(0, ip + 12, 8);
	}
	ps += (l4 == TCP ? 6u : 17u) + l4hdr + plen;
	cr_assert_eq(ref_csum_fold(ref_csum_add(ps, t, l4hdr + plen)), 0xffff, "segment %u %s checksum", i,
		     l4 == TCP ? "TCP" : "UDP");
	if (l4 == TCP) {
		cr_assert_eq(ref_get32(t + 4), 0x12345678u + off, "segment %u sequence number", i);
		uint8_t want = tcp_flags;
		if (i + 1 < n)
			want &= (uint8_t)~0x09;   /* FIN, PSH only on the last */
		if (i > 0)
			want &= (uint8_t)~0x80;   /* CWR only on the first */
		cr_assert_eq(t[13], want, "segment %u TCP flags 0x%x, want 0x%x", i, t[13], want);
	} else {
		cr_assert_eq(ref_get16(t + 4), 8 + plen, "segment %u UDP length", i);
	}
	for (uint32_t k = 0; k < plen; k++)
		cr_assert_eq(e[l4off + l4hdr + k], (uint8_t)((off + k) * 7 + 3), "segment %u byte %u", i, k);
}

static void run_case(bool v6, enum l4 l4, bool vlan, uint32_t payload, uint16_t mss, uint8_t flags)
{
	uint8_t *f = malloc(70000), *scratch = malloc(70000);
	uint32_t len = build(f, v6, l4, vlan, payload, mss, flags);
	struct capture c = { .n = 0 };
	unsigned n = (payload + mss - 1) / mss;
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, capture_emit, &c), (int)n);
	cr_assert_eq(c.n, n);
	for (unsigned i = 0; i < n; i++)
		check_seg(&c.seg[i], v6, l4, vlan, i, n, payload, mss, flags);
	capture_free(&c);
	free(f);
	free(scratch);
}

Test(gso, tcpv4_is_cut_into_mss_segments_with_their_own_ids_sequence_and_checksums)
{
	run_case(false, TCP, false, 4000, 1448, 0x18);   /* PSH|ACK: 1448, 1448, 1104 */
}

Test(gso, tcpv4_fin_and_psh_stay_on_the_last_segment_cwr_on_the_first)
{
	run_case(false, TCP, false, 3000, 1000, 0x80 | 0x10 | 0x08 | 0x01);
}

Test(gso, tcpv6_is_cut_too)
{
	run_case(true, TCP, false, 64000, 1440, 0x10);
}

Test(gso, udp_l4_is_cut_into_datagrams_of_gso_size)
{
	run_case(false, UDP, false, 8000, 1000, 0);
	run_case(true, UDP, false, 2501, 1000, 0);
}

Test(gso, a_vlan_tagged_frame_keeps_its_tag_in_every_segment)
{
	run_case(false, TCP, true, 5000, 1460, 0x10);
}

Test(gso, odd_payload_lengths_are_summed_right)
{
	run_case(false, TCP, false, 1001, 100, 0x10);
	run_case(false, UDP, false, 3, 8, 0);
}

Test(gso, skip_resumes_after_the_segments_already_delivered)
{
	uint8_t *f = malloc(70000), *scratch = malloc(70000);
	uint32_t len = build(f, false, TCP, false, 5000, 1000, 0x10);
	struct capture c = { .stop_after = 2 };
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, capture_emit, &c), 0, "stopped by emit");
	cr_assert_eq(c.n, 2u);
	capture_free(&c);
	struct capture rest = { .n = 0 };
	cr_assert_eq(gso_segment(f, len, 2, scratch, 70000, capture_emit, &rest), 5);
	cr_assert_eq(rest.n, 3u, "segments 2, 3 and 4");
	for (unsigned i = 0; i < 3; i++)
		check_seg(&rest.seg[i], false, TCP, false, i + 2, 5, 5000, 1000, 0x10);
	capture_free(&rest);
	free(f);
	free(scratch);
}

static int must_not_emit(void *ctx, const uint8_t *frame, uint32_t len)
{
	(void)ctx; (void)frame; (void)len;
	cr_assert_fail("a malformed frame must not be cut");
	return 0;
}

Test(gso, malformed_or_unsupported_frames_are_refused)
{
	uint8_t *f = malloc(70000), *scratch = malloc(70000);
	uint32_t len = build(f, false, TCP, false, 3000, 1000, 0x10);
	struct virtio_net_hdr_v1 *h = (void *)f;
	uint8_t *e = f + 12;

	cr_assert_eq(gso_segment(f, 11, 0, scratch, 70000, must_not_emit, NULL), -EINVAL, "no header");
	cr_assert_eq(gso_segment(f, 40, 0, scratch, 70000, must_not_emit, NULL), -EINVAL, "truncated");
	h->gso_size = 0;
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, must_not_emit, NULL), -EINVAL, "mss 0");
	h->gso_size = 1000;
	h->gso_type = VIRTIO_NET_HDR_GSO_UDP;   /* UFO: IP fragmentation, not cut here */
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, must_not_emit, NULL), -EINVAL, "UFO");
	h->gso_type = VIRTIO_NET_HDR_GSO_TCPV6;
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, must_not_emit, NULL), -EINVAL,
		     "TCPV6 over IPv4");
	h->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	ref_put16(e + 14 + 2, 60000);   /* IP length beyond the frame */
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, must_not_emit, NULL), -EINVAL, "IP length");
	ref_put16(e + 14 + 2, (uint16_t)(len - 12 - 14));
	ref_put16(e + 14 + 6, 0x2000);   /* more fragments */
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, must_not_emit, NULL), -EINVAL, "fragment");
	ref_put16(e + 14 + 6, 0x4000);
	e[14 + 20 + 12] = 2 << 4;  /* TCP header of 8 bytes */
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, must_not_emit, NULL), -EINVAL, "TCP doff");
	e[14 + 20 + 12] = 5 << 4;
	cr_assert_eq(gso_segment(f, len, 0, scratch, 100, must_not_emit, NULL), -EINVAL, "scratch too small");
	ref_put16(e + 12, 0x0806);       /* ARP */
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, must_not_emit, NULL), -EINVAL, "not IP");

	len = build(f, true, TCP, false, 3000, 1000, 0x10);
	e[14 + 6] = 0;             /* hop-by-hop options header */
	cr_assert_eq(gso_segment(f, len, 0, scratch, 70000, must_not_emit, NULL), -EINVAL,
		     "IPv6 extension header");
	free(f);
	free(scratch);
}

Test(gso, a_guest_takes_what_it_negotiated)
{
	cr_assert(gso_guest_takes(VIRTIO_NET_HDR_GSO_NONE, false, false, false));
	cr_assert(gso_guest_takes(VIRTIO_NET_HDR_GSO_TCPV4, true, false, false));
	cr_assert_not(gso_guest_takes(VIRTIO_NET_HDR_GSO_TCPV6, true, false, false));
	cr_assert_not(gso_guest_takes(VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN, true, true, false));
	cr_assert(gso_guest_takes(VIRTIO_NET_HDR_GSO_TCPV6 | VIRTIO_NET_HDR_GSO_ECN, true, true, true));
	cr_assert_not(gso_guest_takes(VIRTIO_NET_HDR_GSO_UDP_L4, true, true, true));
}
