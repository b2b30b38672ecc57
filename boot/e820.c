/* SPDX-License-Identifier: Apache-2.0 */
/* Guest memory map: what RAM the guest may use and what it must leave alone.
 *
 *   [0, 0x9FC00)            RAM (base memory)
 *   [0x9FC00, 0xA0000)      reserved: EBDA, holds the MP table
 *   [0xA0000, 0xF0000)      not listed (legacy VGA/option ROM hole, no RAM)
 *   [0xF0000, 0x100000)     reserved: BIOS area
 *   [1 MiB, low end)        RAM, up to the MMIO hole at most
 *   [4 GiB, ...)            RAM beyond the hole, when the guest has that much */
#include "boot/e820.h"

#include <asm/e820.h>
#include <errno.h>

#include "boot/boot.h"

int e820_build(const struct guest_mem *mem, struct e820_range *out, unsigned max,
	       struct vmm_err *err)
{
	uint64_t low_end = guest_mem_low_end(mem);
	if (low_end <= BOOT_KERNEL_MIN)
		return vmm_err_set(err, EINVAL, "guest RAM (%llu KiB) does not reach past 1 MiB",
				   (unsigned long long)(low_end >> 10));

	struct e820_range map[E820_MAX_RANGES];
	unsigned n = 0;
	map[n++] = (struct e820_range){ 0, BOOT_EBDA_START, E820_RAM };
	map[n++] = (struct e820_range){ BOOT_EBDA_START, 0xA0000 - BOOT_EBDA_START, E820_RESERVED };
	map[n++] = (struct e820_range){ BOOT_BIOS_START, BOOT_KERNEL_MIN - BOOT_BIOS_START,
					E820_RESERVED };
	map[n++] = (struct e820_range){ BOOT_KERNEL_MIN, low_end - BOOT_KERNEL_MIN, E820_RAM };
	_Static_assert(E820_MAX_RANGES == 3 + GUEST_MEM_MAX_REGIONS, "one range per region + 3");
	for (unsigned i = 1; i < mem->nr_regions && i < GUEST_MEM_MAX_REGIONS; i++)
		map[n++] = (struct e820_range){ mem->region[i].gpa, mem->region[i].size, E820_RAM };

	if (n > max)
		return vmm_err_set(err, ENOSPC, "memory map has %u ranges, room for %u", n, max);
	for (unsigned i = 0; i < n; i++)
		out[i] = map[i];
	return (int)n;
}
