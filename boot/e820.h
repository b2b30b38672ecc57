/* SPDX-License-Identifier: Apache-2.0 */
/* The guest's physical memory map, shared by both boot paths: the bzImage
 * zero page (boot_e820_entry) and the PVH memmap (hvm_memmap_table_entry)
 * are both filled from e820_build(). Types are the E820_* values of
 * <asm/e820.h> (E820_RAM, E820_RESERVED). */
#ifndef MINIVMM_BOOT_E820_H
#define MINIVMM_BOOT_E820_H

#include <stdint.h>

#include "base/error.h"
#include "base/guest_mem.h"

/* Base RAM, EBDA, BIOS area, RAM from 1 MiB, RAM above 4 GiB. */
#define E820_MAX_RANGES 5

struct e820_range {
	uint64_t addr;
	uint64_t size;
	uint32_t type;   /* E820_RAM, E820_RESERVED */
};

/* Fill out[0..max) with the map of mem, sorted by address, and return the
 * number of ranges, or a negative errno when guest RAM does not reach past
 * 1 MiB or max is too small. */
int e820_build(const struct guest_mem *mem, struct e820_range *out, unsigned max,
	       struct vmm_err *err);

#endif
