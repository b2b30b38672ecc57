/* SPDX-License-Identifier: Apache-2.0 */
/* The AF_XDP backend's chunk rules (net/xdp_geometry.c): the kernel may
 * write a frame only where the guest's buffer is. */
#include <criterion/criterion.h>

#include "net/xdp.h"

Test(xdp, geometry_makes_the_largest_frame_exactly_the_mtus)
{
	for (uint32_t mtu = 68; mtu + 18 + XDP_PACKET_HEADROOM <= XDP_CHUNK_MAX; mtu++) {
		struct xdp_geometry g;
		uint32_t frame = mtu + 18;
		cr_assert_eq(xdp_geometry_for(frame, XDP_CHUNK_MIN, &g), 0, "MTU %u", mtu);
		cr_assert_geq(g.chunk_size, XDP_CHUNK_MIN);
		cr_assert_leq(g.chunk_size, XDP_CHUNK_MAX);
		/* The kernel's frame_len, as xp_create_and_assign_umem computes it. */
		cr_assert_eq(g.chunk_size - g.headroom - XDP_PACKET_HEADROOM, frame, "MTU %u", mtu);
		/* Where xp_alloc puts data: chunk + headroom + XDP_PACKET_HEADROOM. */
		cr_assert_eq(g.data_off, g.headroom + XDP_PACKET_HEADROOM);
		/* xdp_umem_reg: headroom < chunk_size - XDP_PACKET_HEADROOM. */
		cr_assert_lt(g.headroom, g.chunk_size - XDP_PACKET_HEADROOM);
	}
	struct xdp_geometry g;
	cr_assert_eq(xdp_geometry_for(1518, XDP_CHUNK_MIN, &g), 0);
	cr_assert_eq(g.chunk_size, 2048);
	cr_assert_eq(g.headroom, 274);
	cr_assert_eq(g.data_off, 530, "the offset the kernel reports on the RX ring (measured: 530)");
	cr_assert_lt(xdp_geometry_for(3822 + 18 + 1, XDP_CHUNK_MIN, &g), 0, "a frame the largest chunk cannot hold");
	cr_assert_eq(xdp_geometry_for(3822 + 18, XDP_CHUNK_MIN, &g), 0);
	cr_assert_eq(g.chunk_size, XDP_CHUNK_MAX);
	/* Copy mode's page-sized chunks: the same frame, more headroom. */
	cr_assert_eq(xdp_geometry_for(1518, XDP_CHUNK_MAX, &g), 0);
	cr_assert_eq(g.chunk_size, 4096);
	cr_assert_eq(g.chunk_size - g.headroom - XDP_PACKET_HEADROOM, 1518);
	cr_assert_eq(g.data_off, 4096 - 1518);
	cr_assert_lt(xdp_geometry_for(1518, 1024, &g), 0, "chunks below the kernel's minimum");
}

/* For every buffer placement and length near the limits: a buffer given to
 * the kernel gets the frame right after its header and nothing outside it;
 * one that cannot hold the largest frame, or whose chunk would leave the
 * UMEM, is refused (it bounces). */
Test(xdp, a_posted_buffer_can_take_only_its_own_bytes)
{
	const uint64_t umem = 64 * 1024;
	const uint32_t frames[] = { 86, 1518, 2000, 3840 };
	const uint64_t lens[] = { 12, 1529, 1530, 1531, 2048, 4096 };
	for (unsigned f = 0; f < 2 * sizeof(frames) / sizeof(frames[0]); f++) {
		struct xdp_geometry g;
		uint32_t min_chunk = f % 2 ? XDP_CHUNK_MAX : XDP_CHUNK_MIN;
		cr_assert_eq(xdp_geometry_for(frames[f / 2], min_chunk, &g), 0);
		for (unsigned zc = 0; zc < 2; zc++) {
			for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				uint64_t len = lens[l];
				for (uint64_t buf = 0; buf + len <= umem; buf += (buf < 8192 || buf > umem - 8192) ? 1 : 61) {
					uint64_t a;
					bool ok = xdp_rx_chunk_for(&g, buf, len, umem, zc, &a);
					bool fits = len >= 12 + (uint64_t)g.frame_len;
					if (!fits) {
						cr_assert_not(ok, "frame %u: a %llu-byte buffer taken", g.frame_len,
							      (unsigned long long)len);
						continue;
					}
					if (!ok) {
						/* Refused only for a reason. */
						cr_assert(buf + 12 < g.data_off || (zc && !xdp_within_page(buf + 12 - g.data_off, g.chunk_size)),
							  "frame %u buf %llu len %llu zc %u refused", g.frame_len,
							  (unsigned long long)buf, (unsigned long long)len, zc);
						continue;
					}
					/* The kernel writes [a + data_off, + frame_len). */
					uint64_t first = a + g.data_off, end = first + g.frame_len;
					cr_assert_eq(first, buf + 12, "the frame starts right after the header");
					cr_assert_leq(end, buf + len, "the largest frame stays inside the buffer");
					cr_assert_leq(a + g.chunk_size, umem, "the chunk is inside the UMEM");
					if (zc)
						cr_assert(xdp_within_page(a, g.chunk_size));
				}
			}
		}
	}
}

Test(xdp, a_chunk_never_reaches_past_the_umem)
{
	struct xdp_geometry g;
	cr_assert_eq(xdp_geometry_for(1518, XDP_CHUNK_MIN, &g), 0);
	uint64_t a;
	/* A buffer in the last bytes of a UMEM smaller than its chunk's tail. */
	cr_assert_not(xdp_rx_chunk_for(&g, 4096 - 1530, 1530, 4096 - 1, false, &a));
	cr_assert(xdp_rx_chunk_for(&g, 4096 - 1530, 1530, 4096, false, &a));
	cr_assert_not(xdp_rx_chunk_for(&g, 100, 2000, 1ull << 20, false, &a), "chunk before the UMEM's start");
	cr_assert(xdp_rx_chunk_for(&g, 518, 2000, 1ull << 20, false, &a));
	cr_assert_eq(a, 0);
}
