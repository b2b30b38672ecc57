/* SPDX-License-Identifier: Apache-2.0 */
/* Internet checksums (RFC 1071) over frames the VMM hands on: finishing one
 * a sender left to the receiver (NEEDS_CSUM) for a guest that did not
 * negotiate GUEST_CSUM, computing them for segments cut from GSO frames, and
 * recognising a partial one that came without NEEDS_CSUM (AF_XDP). */
#ifndef MINIVMM_NET_CSUM_H
#define MINIVMM_NET_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* Ones' complement sum of len bytes (big-endian 16-bit words) added to sum;
 * an odd last byte counts as its word's high half. */
uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len);

/* Fold a sum to 16 bits and complement it: the checksum field's value. */
uint16_t csum_fold(uint32_t sum);

/* Finish a partial checksum: the 16-bit field at csum_start + csum_offset
 * holds the pseudo-header sum; replace it by the checksum of everything from
 * csum_start to the end. frame starts at the Ethernet header. False (and
 * nothing written) if the field lies outside the frame. */
bool csum_finish(uint8_t *frame, uint32_t len, uint16_t csum_start, uint16_t csum_offset);

/* The same over a frame scattered in iovecs: the frame is the len bytes
 * that start skip bytes into iov[0..nr) (skip: the vnet header before it).
 * Segments may have any lengths, odd ones included. */
bool csum_finish_iov(const struct iovec *iov, unsigned nr, size_t skip, uint32_t len,
		     uint16_t csum_start, uint16_t csum_offset);

/* A frame from a host socket through a veth (or a bridge) is CHECKSUM_PARTIAL:
 * its TCP or UDP checksum field holds only the folded pseudo-header sum, and
 * whatever reads the frame is told so in metadata (a tap's or packet
 * socket's virtio_net_hdr: NEEDS_CSUM). AF_XDP carries no such metadata:
 * measured (Linux 6.18, veth, copy mode, native and generic XDP), the frame
 * reaches the socket with the partial value in the field, and a guest that
 * checks checksums drops it. The partial value is recognisable, though: the
 * field equals the folded pseudo-header sum of the packet's own addresses,
 * protocol and length. A frame whose checksum does not verify and whose
 * field is exactly that value is completed; every other frame is left as it
 * is (a valid one is never touched; a bad one stays bad, for the guest to
 * drop).
 *
 * frame: an Ethernet frame (at most one VLAN tag), len bytes. Returns true
 * if it was an IPv4 or IPv6 (no extension headers) TCP or UDP packet, not a
 * fragment, with a partial checksum, now complete. */
bool csum_complete_partial(uint8_t *frame, uint32_t len);

#endif
