/* Finishing the TCP and UDP checksums the host stack left to "hardware".
 *
 * A frame from a host socket through a veth (or a bridge) is CHECKSUM_PARTIAL:
 * its TCP or UDP checksum field holds only the folded pseudo-header sum, and
 * whatever reads the frame is told so in metadata (a tap's or packet
 * socket's virtio_net_hdr: NEEDS_CSUM). AF_XDP carries no such metadata:
 * measured (Linux 6.18, veth, copy mode, native and generic XDP), the frame
 * reaches the socket with the partial value in the field, and a guest that
 * checks checksums drops it. The partial value is recognisable, though: the
 * field equals the folded pseudo-header sum of the packet's own addresses,
 * protocol and length. A frame whose checksum does not verify and whose
 * field is exactly that value is completed here; every other frame is left
 * as it is (a valid one is never touched; a bad one stays bad, for the guest
 * to drop). */
#ifndef MINIVMM_NET_CSUM_H
#define MINIVMM_NET_CSUM_H

#include <stdbool.h>
#include <stdint.h>

/* frame: an Ethernet frame (at most one VLAN tag), len bytes. Returns true
 * if it was an IPv4 or IPv6 (no extension headers) TCP or UDP packet, not a
 * fragment, with a partial checksum, now complete. */
bool csum_complete_partial(uint8_t *frame, uint32_t len);

#endif
