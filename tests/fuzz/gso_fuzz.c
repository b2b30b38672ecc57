/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: software GSO (net/gso.c: gso_segment, gso_guest_takes), the
 * parser of frames a packet socket hands over (after GRO, or a host
 * socket's 64 KiB segments): headers from the network, vnet header from the
 * kernel. The net_rx target reaches it through dp_rx_deliver_frame; this
 * one checks what comes out.
 *
 * The input is a scratch size choice, how many segments to skip (an earlier
 * try delivered them) and after how many to stop (the guest ran out of
 * buffers), maybe a length of filler to append (big frames from small
 * inputs), then the frame: virtio_net_hdr_v1 and an Ethernet frame.
 *
 * Checked: gso_segment returns the number of segments, or what emit
 * returned when it stopped, or -EINVAL; each segment fits the scratch
 * buffer, has a clean header (no GSO, no checksum to do), is Ethernet (one
 * VLAN tag at most) + IPv4 or IPv6 + TCP or UDP with lengths that add up
 * and valid IPv4 header and TCP/UDP checksums; its headers are the
 * original's but for the fields segmentation changes; its payload is the
 * original's bytes at its offset, gso_size of them but in the last; TCP
 * sequence numbers advance by the payload, FIN/PSH only on the last
 * segment, CWR only on the first; the segments' payloads add up to the
 * original's. */
#include <errno.h>
#include <linux/virtio_net.h>
#include <stdlib.h>
#include <string.h>

#include "net/gso.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/ref_csum.h"


struct run {
	const uint8_t *orig;        /* the Ethernet frame cut */
	uint32_t orig_len;
	uint16_t mss;
	unsigned skip, stop_after;  /* stop (emit returns 0) after this many */
	size_t scratch_size;
	const uint8_t *scratch;
	unsigned emitted;
	uint64_t payload_seen;
	uint32_t hdr_len;           /* headers of every segment, once seen */
	bool last_seen;             /* a segment shorter than mss came: it must be the last */
	unsigned fin_psh, fin_psh_at;   /* segments with FIN or PSH, the last of them */
};

static struct run R;

static int emit(void *ctx, const uint8_t *frame, uint32_t len)
{
	(void)ctx;
	unsigned i = R.skip + R.emitted;   /* this segment's number */
	FUZZ_CHECK(frame == R.scratch && len <= R.scratch_size, "segment of %u bytes, scratch %zu", len,
		   R.scratch_size);
	FUZZ_CHECK(!R.last_seen, "a segment after a short one");
	FUZZ_CHECK(len >= 12 + 14, "segment of %u bytes", len);
	FUZZ_CHECK(fuzz_is_zero(frame, 12), "segment %u's virtio_net_hdr is not clean", i);
	const uint8_t *eth = frame + 12;
	uint32_t elen = len - 12;
	uint32_t l3 = 14;
	uint16_t type = ref_get16(eth + 12);
	if (type == 0x8100) {
		l3 = 18;
		type = ref_get16(eth + 16);
	}
	FUZZ_CHECK(type == 0x0800 || type == 0x86dd, "segment %u: ethertype 0x%x", i, type);
	bool v6 = type == 0x86dd;
	uint32_t l4, l4len;
	uint8_t proto;
	uint32_t pseudo;
	if (!v6) {
		const uint8_t *ip = eth + l3;
		uint32_t ihl = (ip[0] & 0xf) * 4u;
		FUZZ_CHECK(elen >= l3 + ihl, "segment %u shorter than its IPv4 header", i);
		FUZZ_CHECK(ref_get16(ip + 2) == elen - l3, "segment %u: IPv4 length %u, %u bytes there", i,
			   ref_get16(ip + 2), elen - l3);
		FUZZ_CHECK(ref_csum_ok(ref_csum_add(0, ip, ihl)), "segment %u: bad IPv4 header checksum", i);
		FUZZ_CHECK(ref_get16(ip + 4) == (uint16_t)(ref_get16(R.orig + l3 + 4) + i), "segment %u: IPv4 ID", i);
		proto = ip[9];
		l4 = l3 + ihl;
		l4len = elen - l4;
		pseudo = ref_csum_add(0, ip + 12, 8);
	} else {
		const uint8_t *ip = eth + l3;
		FUZZ_CHECK(elen >= l3 + 40 && ref_get16(ip + 4) == elen - l3 - 40,
			   "segment %u: IPv6 payload length %u, %u bytes there", i, ref_get16(ip + 4),
			   elen - l3 - 40);
		proto = ip[6];
		l4 = l3 + 40;
		l4len = elen - l4;
		pseudo = ref_csum_add(0, ip + 8, 32);
	}
	FUZZ_CHECK(proto == 6 || proto == 17, "segment %u: protocol %u", i, proto);
	pseudo += proto + (l4len & 0xffff) + (l4len >> 16);
	const uint8_t *t = eth + l4;
	uint32_t hdr;
	if (proto == 6) {
		FUZZ_CHECK(l4len >= 20, "segment %u: TCP header cut", i);
		hdr = l4 + (t[12] >> 4) * 4u;
		FUZZ_CHECK(ref_csum_ok(ref_csum_add(pseudo, t, l4len)), "segment %u: bad TCP checksum", i);
	} else {
		FUZZ_CHECK(l4len >= 8 && ref_get16(t + 4) == l4len, "segment %u: UDP length %u of %u", i,
			   ref_get16(t + 4), l4len);
		hdr = l4 + 8;
		FUZZ_CHECK(ref_get16(t + 6) != 0 && ref_csum_ok(ref_csum_add(pseudo, t, l4len)), "segment %u: bad UDP checksum", i);
	}
	FUZZ_CHECK(hdr <= elen, "segment %u: headers past its end", i);
	if (R.emitted == 0)
		R.hdr_len = hdr;
	FUZZ_CHECK(hdr == R.hdr_len, "segment %u: headers of %u bytes, the first had %u", i, hdr, R.hdr_len);

	/* The payload is the original's, at this segment's offset. */
	uint32_t plen = elen - hdr;
	uint64_t off = (uint64_t)i * R.mss;
	FUZZ_CHECK(plen <= R.mss, "segment %u: %u payload bytes, gso_size %u", i, plen, R.mss);
	FUZZ_CHECK(hdr + off + plen <= R.orig_len, "segment %u: payload past the original's", i);
	FUZZ_CHECK(memcmp(eth + hdr, R.orig + hdr + off, plen) == 0, "segment %u: payload differs", i);
	if (plen < R.mss)
		R.last_seen = true;
	R.payload_seen += plen;
	if (proto == 6) {
		uint32_t seq = ref_get32(R.orig + l4 + 4) + (uint32_t)off;
		FUZZ_CHECK(ref_get32(t + 4) == seq, "segment %u: sequence number", i);
		uint8_t oflags = R.orig[l4 + 13];
		FUZZ_CHECK(!(t[13] & ~oflags), "segment %u: TCP flags not in the original", i);
		if (i > 0)
			FUZZ_CHECK(!(t[13] & 0x80), "CWR on segment %u", i);
		if (t[13] & 0x09) {
			R.fin_psh++;
			R.fin_psh_at = i;
		}
	}
	R.emitted++;
	return R.emitted >= R.stop_after ? 0 : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_init(data, size);
	uint8_t shape = fz_u8(&in);
	static const size_t scratch_sizes[4] = { 65536 + 256, 2048, 200, 65536 + 256 };
	memset(&R, 0, sizeof(R));
	R.scratch_size = scratch_sizes[shape & 3];
	R.skip = (shape >> 2) & 3;
	R.stop_after = (shape & 0x40) ? 1u + ((shape >> 4) & 3) : ~0u;
	/* Big frames (up to GSO's 64 KiB and past) without big inputs: filler
	 * after the input's bytes. */
	size_t pad = (shape & 0x80) ? (size_t)fz_u8(&in) * 257 : 0;
	size_t got;
	const uint8_t *frame = fz_take(&in, in.n, &got);
	size_t len = got + pad;
	/* Exactly the frame's bytes, so ASan sees a read past its end. */
	uint8_t *f = malloc(len ? len : 1);
	uint8_t *scratch = malloc(R.scratch_size);
	FUZZ_CHECK(f && scratch, "out of memory");
	memcpy(f, frame, got);
	for (size_t i = got; i < len; i++)
		f[i] = (uint8_t)(i * 13);
	R.scratch = scratch;
	if (len >= 12) {
		struct virtio_net_hdr_v1 h;
		memcpy(&h, f, sizeof(h));
		R.mss = h.gso_size;
		R.orig = f + 12;
		R.orig_len = (uint32_t)len - 12;
	}
	int rc = gso_segment(f, (uint32_t)len, R.skip, scratch, R.scratch_size, emit, NULL);
	if (rc == -EINVAL) {
		FUZZ_CHECK(R.emitted == 0, "refused a frame after emitting %u segments", R.emitted);
	} else if (rc == 0) {
		FUZZ_CHECK(R.emitted == R.stop_after, "returned 0 without being stopped");
	} else {
		FUZZ_CHECK(rc > 0 && R.emitted == (rc > (int)R.skip ? (unsigned)rc - R.skip : 0),
			   "returned %d segments, skipped %u, emitted %u", rc, R.skip, R.emitted);
		FUZZ_CHECK(R.fin_psh == 0 || (R.fin_psh == 1 && R.fin_psh_at + 1 == (unsigned)rc),
			   "FIN/PSH on %u segments, the last at %u of %d", R.fin_psh, R.fin_psh_at, rc);
		/* A whole run (nothing skipped) carries the whole payload. */
		if (R.skip == 0)
			FUZZ_CHECK(R.hdr_len + R.payload_seen <= R.orig_len, "more payload than the frame");
	}
	/* Deterministic and total: any gso_type, any features. */
	(void)gso_guest_takes((uint8_t)size, shape & 1, shape & 2, shape & 4);
	free(f);
	free(scratch);
	return 0;
}
