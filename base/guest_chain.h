/* SPDX-License-Identifier: Apache-2.0 */
/* A guest buffer chain as host iovecs: what a virtqueue hands to the data
 * path. Shared by devices/ (which fills it from descriptors) and net/ (which
 * reads and writes through it) so neither needs the other's headers. */
#ifndef MINIVMM_BASE_GUEST_CHAIN_H
#define MINIVMM_BASE_GUEST_CHAIN_H

#include <stdint.h>
#include <sys/uio.h>

/* Longest chain accepted. Linux's virtio-net uses at most MAX_SKB_FRAGS + 2
 * (19) segments; anything past this is treated as a malformed ring. */
#define GUEST_CHAIN_MAX_SEGS 64

struct guest_chain {
	uint16_t head;          /* descriptor index to return in the used ring */
	uint16_t nr_readable;   /* iov[0 .. nr_readable) are device-readable */
	uint16_t nr_writable;   /* then nr_writable device-writable segments */
	uint32_t readable_len;
	uint32_t writable_len;
	struct iovec iov[GUEST_CHAIN_MAX_SEGS];
};

static inline struct iovec *guest_chain_writable(struct guest_chain *c)
{
	return &c->iov[c->nr_readable];
}

#endif
