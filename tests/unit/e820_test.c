/* SPDX-License-Identifier: Apache-2.0 */
/* e820_build: the memory map both boot paths hand to the guest. */
#include <asm/e820.h>
#include <criterion/criterion.h>
#include <errno.h>

#include "boot/boot.h"
#include "boot/e820.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

static void expect_range(const struct e820_range *r, uint64_t addr, uint64_t size, uint32_t type)
{
	cr_expect_eq(r->addr, addr, "range addr 0x%llx, want 0x%llx",
		     (unsigned long long)r->addr, (unsigned long long)addr);
	cr_expect_eq(r->size, size, "range at 0x%llx size 0x%llx, want 0x%llx",
		     (unsigned long long)addr, (unsigned long long)r->size, (unsigned long long)size);
	cr_expect_eq(r->type, type, "range at 0x%llx type %u, want %u",
		     (unsigned long long)addr, r->type, type);
}

Test(e820, small_ram_has_base_ebda_bios_and_high_ram)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 64 * MiB, &err), 0, "%s", err.msg);
	struct e820_range map[E820_MAX_RANGES];
	int n = e820_build(&mem, map, E820_MAX_RANGES, &err);
	cr_assert_eq(n, 4, "got %d ranges: %s", n, err.msg);
	expect_range(&map[0], 0, 0x9FC00, E820_RAM);
	expect_range(&map[1], 0x9FC00, 0x400, E820_RESERVED);
	expect_range(&map[2], 0xF0000, 0x10000, E820_RESERVED);
	expect_range(&map[3], MiB, 63 * MiB, E820_RAM);
	guest_mem_destroy(&mem);
}

Test(e820, ram_across_the_mmio_hole_continues_at_4_gib)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 4 * GiB, &err), 0, "%s", err.msg);
	struct e820_range map[E820_MAX_RANGES];
	int n = e820_build(&mem, map, E820_MAX_RANGES, &err);
	cr_assert_eq(n, 5, "got %d ranges: %s", n, err.msg);
	expect_range(&map[3], MiB, GUEST_MMIO_HOLE_START - MiB, E820_RAM);
	expect_range(&map[4], GUEST_MMIO_HOLE_END, 4 * GiB - GUEST_MMIO_HOLE_START, E820_RAM);

	uint64_t ram = 0;
	for (int i = 0; i < n; i++) {
		if (map[i].type == E820_RAM)
			ram += map[i].size;
		if (i > 0)
			cr_expect_geq(map[i].addr, map[i - 1].addr + map[i - 1].size,
				      "ranges sorted and disjoint");
	}
	cr_expect_eq(ram, 4 * GiB - (MiB - 0x9FC00), "all RAM but the EBDA and the hole below 1 MiB");
	guest_mem_destroy(&mem);
}

Test(e820, ram_ending_exactly_at_the_hole_has_no_high_range)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, GUEST_MMIO_HOLE_START, &err), 0, "%s", err.msg);
	struct e820_range map[E820_MAX_RANGES];
	cr_assert_eq(e820_build(&mem, map, E820_MAX_RANGES, &err), 4, "%s", err.msg);
	guest_mem_destroy(&mem);
}

Test(e820, rejects_a_table_too_small_for_the_map)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 64 * MiB, &err), 0, "%s", err.msg);
	struct e820_range map[3];
	cr_expect_eq(e820_build(&mem, map, 3, &err), -ENOSPC);
	cr_expect_str_eq(err.msg, "memory map has 4 ranges, room for 3");
	guest_mem_destroy(&mem);
}
