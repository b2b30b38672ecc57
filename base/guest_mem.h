/* SPDX-License-Identifier: Apache-2.0 */
/* Guest physical memory: the one place where a guest-physical address becomes
 * a host pointer.
 *
 * Guest memory is hostile: every access to it (descriptors, rings, boot
 * structures) goes through guest_mem_ptr(), which refuses anything that is not
 * entirely inside one RAM region or whose length overflows. No other code does
 * arithmetic on guest addresses to form host pointers. */
#ifndef MINIVMM_BASE_GUEST_MEM_H
#define MINIVMM_BASE_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Devices live in a hole below 4 GiB; RAM beyond the hole continues at 4 GiB. */
#define GUEST_MMIO_HOLE_START 0xC0000000ULL
#define GUEST_MMIO_HOLE_END   0x100000000ULL

#define GUEST_MEM_MAX_REGIONS 2

struct guest_mem_region {
	uint64_t gpa;    /* guest-physical start */
	uint64_t size;   /* bytes */
	uint8_t *host;   /* host mapping of the region */
};

struct guest_mem {
	struct guest_mem_region region[GUEST_MEM_MAX_REGIONS];
	unsigned nr_regions;
	uint64_t ram_size;   /* total RAM bytes over all regions */
	uint8_t *mapping;    /* the single host mmap behind every region */
	/* Host-only memory right after guest RAM in the same mapping: in no
	 * KVM memory slot and never returned by guest_mem_ptr(), so the guest
	 * cannot see or touch it. It exists for a backend that registers the
	 * whole mapping with the kernel in one piece and needs buffers of its
	 * own inside it (the AF_XDP UMEM's bounce area). */
	uint8_t *host_tail;
	uint64_t host_tail_size;
	uint64_t mapping_size;   /* ram_size + host_tail_size */
};

/* Map ram_size bytes of anonymous memory and split it around the MMIO hole.
 * ram_size must be a non-zero multiple of 2 MiB. */
int guest_mem_init(struct guest_mem *mem, uint64_t ram_size, struct vmm_err *err);

/* The same with tail_size bytes (rounded up to a page) of host-only memory
 * after the RAM (tail_size 0: none, as guest_mem_init). */
int guest_mem_init_with_tail(struct guest_mem *mem, uint64_t ram_size, uint64_t tail_size,
			     struct vmm_err *err);
void guest_mem_destroy(struct guest_mem *mem);

/* Host pointer for [gpa, gpa+len) or NULL if any byte of it is not RAM or if
 * gpa+len overflows. len 0 is treated as 1 (the address itself must be RAM). */
static inline void *guest_mem_ptr(const struct guest_mem *mem, uint64_t gpa, uint64_t len)
{
	uint64_t want = len ? len : 1;
	for (unsigned i = 0; i < mem->nr_regions; i++) {
		const struct guest_mem_region *r = &mem->region[i];
		/* Written to avoid overflow: gpa >= r->gpa, then compare sizes. */
		if (gpa >= r->gpa && gpa - r->gpa < r->size && want <= r->size - (gpa - r->gpa))
			return r->host + (gpa - r->gpa);
	}
	return NULL;
}

/* Make [gpa, gpa+len) read as zero, writing only where it does not
 * already: guest RAM a guest never wrote is the host's shared zero page,
 * and zeroing it (a loader clearing an ELF's BSS) would make the host
 * allocate every page of it whether the guest uses them or not. False if
 * the range is not RAM. */
bool guest_mem_zero(const struct guest_mem *mem, uint64_t gpa, uint64_t len);

/* Highest guest-physical address + 1 of RAM below the MMIO hole. */
static inline uint64_t guest_mem_low_end(const struct guest_mem *mem)
{
	return mem->nr_regions ? mem->region[0].gpa + mem->region[0].size : 0;
}

/* Copy into / out of guest memory; false if the range is not RAM. */
bool guest_mem_write(const struct guest_mem *mem, uint64_t gpa, const void *src, size_t len);
bool guest_mem_read(const struct guest_mem *mem, uint64_t gpa, void *dst, size_t len);

#endif
