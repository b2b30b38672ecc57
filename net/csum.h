/* Internet checksums (RFC 1071) over frames the VMM hands on: finishing one
 * a sender left to the receiver (NEEDS_CSUM) for a guest that did not
 * negotiate GUEST_CSUM, and computing them for segments cut from GSO frames. */
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

#endif
