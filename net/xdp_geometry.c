/* SPDX-License-Identifier: Apache-2.0 */
/* The AF_XDP chunk rules, as the kernel applies them (net/xdp/xsk_buff_pool.c,
 * xsk.c, Linux 6.18; measured on veth in copy mode):
 *
 *  - in unaligned-chunk mode any fill address a is a chunk of chunk_size
 *    bytes if a + chunk_size fits the UMEM (xp_check_unaligned; the top 16
 *    bits of a fill address are ignored);
 *  - the kernel puts the frame at a + headroom + XDP_PACKET_HEADROOM
 *    (xp_alloc: data_hard_start = a + headroom, data = + 256) and hands the
 *    chunk back as a | (headroom + 256) << 48 on the RX ring;
 *  - it writes at most frame_len = chunk_size - headroom - 256 bytes there:
 *    a larger frame is dropped before a chunk is taken (xsk_rcv_check,
 *    __xsk_rcv without XDP_USE_SG, counted in rx_dropped);
 *  - nothing else of the chunk is written in copy mode; metadata an XDP
 *    program puts in front of the frame would be, which is why the
 *    interface gets our program only (xdp_prog.c);
 *  - chunks are 2048 bytes at least and a page at most (xdp_umem_reg).
 *
 * So a guest buffer of 12 + frame_len bytes, given as the chunk at
 * buf + 12 - headroom - 256, receives the frame right after its virtio
 * header and nothing outside it. */
#include "net/xdp.h"

#include <errno.h>

int xdp_geometry_for(uint32_t frame_len, uint32_t min_chunk, struct xdp_geometry *g)
{
	uint32_t need = frame_len + XDP_PACKET_HEADROOM;
	if (frame_len == 0 || need > XDP_CHUNK_MAX || min_chunk < XDP_CHUNK_MIN || min_chunk > XDP_CHUNK_MAX)
		return -EINVAL;
	uint32_t chunk = need < min_chunk ? min_chunk : need;
	*g = (struct xdp_geometry){ .chunk_size = chunk, .frame_len = frame_len,
				    .headroom = chunk - need, .data_off = chunk - frame_len };
	return 0;
}

bool xdp_rx_chunk_for(const struct xdp_geometry *g, uint64_t buf, uint64_t seg_len, uint64_t umem_len,
		      bool zero_copy, uint64_t *addr)
{
	if (seg_len < XDP_VNET_HDR + (uint64_t)g->frame_len)
		return false;   /* the largest frame would run past the buffer */
	if (buf + XDP_VNET_HDR < g->data_off)
		return false;   /* the chunk would start before the UMEM */
	uint64_t a = buf + XDP_VNET_HDR - g->data_off;
	if (a > umem_len || g->chunk_size > umem_len - a)
		return false;
	if (zero_copy && !xdp_within_page(a, g->chunk_size))
		return false;
	*addr = a;
	return true;
}
