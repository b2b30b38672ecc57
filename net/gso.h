/* SPDX-License-Identifier: Apache-2.0 */
/* Software segmentation of GSO frames, for a guest that cannot take them.
 *
 * A packet socket hands us frames after GRO, and a veth or bridge passes a
 * host TCP socket's 64 KiB segments on unsegmented: such a frame comes with a
 * virtio_net_hdr saying how to cut it (gso_type, gso_size, hdr_len). A guest
 * that negotiated GUEST_TSO4/6 takes it as it is; for any other, this cuts it
 * into ordinary frames of gso_size payload bytes each, with their own IP
 * lengths, IDs, TCP sequence numbers and flags, and full checksums, the way
 * the kernel's own GSO would have on the wire. */
#ifndef MINIVMM_NET_GSO_H
#define MINIVMM_NET_GSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5   /* UDP segmentation (USO), Linux 6.2+ headers */
#endif

#define GSO_VNET_HDR_LEN 12u          /* struct virtio_net_hdr_v1 */
#define GSO_MIN_SEGMENT  8u           /* gso_size below this is refused */

/* One segment: a 12-byte virtio_net_hdr_v1 (no GSO, no checksum to do)
 * followed by a whole Ethernet frame. Return > 0 to go on, <= 0 to stop
 * (gso_segment then returns that value). */
typedef int (*gso_emit_fn)(void *ctx, const uint8_t *frame, uint32_t len);

/* Cut `frame` (virtio_net_hdr_v1 + Ethernet frame, len bytes) into segments,
 * skipping the first `skip` (already delivered on an earlier try), building
 * each in `scratch` (at least GSO_VNET_HDR_LEN + headers + gso_size bytes).
 * Returns the number of segments the frame has, a value <= 0 that emit
 * returned (stopped early), or -EINVAL for a frame this cannot cut (not
 * TCPv4/TCPv6/UDP over Ethernet/one VLAN tag, IPv6 extension headers, IPv4
 * options over 40 bytes or fragments, lengths that do not add up). */
int gso_segment(const uint8_t *frame, uint32_t len, unsigned skip, uint8_t *scratch,
		size_t scratch_size, gso_emit_fn emit, void *ctx);

/* Does a guest that negotiated these GUEST_* features take a frame of this
 * gso_type as it is? (No guest takes UDP_L4 here: GUEST_USO is not offered.) */
bool gso_guest_takes(uint8_t gso_type, bool tso4, bool tso6, bool ecn);

#endif
