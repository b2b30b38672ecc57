#include <criterion/criterion.h>
#include <string.h>

#include "base/guest_mem.h"

Test(guest_mem, small_ram_is_one_region)
{
	struct guest_mem m;
	cr_assert_eq(guest_mem_init(&m, 64ull << 20, NULL), 0);
	cr_assert_eq(m.nr_regions, 1);
	cr_assert_eq(guest_mem_low_end(&m), 64ull << 20);
	guest_mem_destroy(&m);
}

Test(guest_mem, large_ram_splits_around_the_mmio_hole)
{
	struct guest_mem m;
	cr_assert_eq(guest_mem_init(&m, 4ull << 30, NULL), 0);
	cr_assert_eq(m.nr_regions, 2);
	cr_assert_eq(m.region[0].size, GUEST_MMIO_HOLE_START);
	cr_assert_eq(m.region[1].gpa, GUEST_MMIO_HOLE_END);
	cr_assert_eq(m.region[1].size, (4ull << 30) - GUEST_MMIO_HOLE_START);
	cr_assert_null(guest_mem_ptr(&m, GUEST_MMIO_HOLE_START, 1), "hole is not RAM");
	cr_assert_not_null(guest_mem_ptr(&m, GUEST_MMIO_HOLE_END, 4096));
	cr_assert_null(guest_mem_ptr(&m, GUEST_MMIO_HOLE_START - 1, 2), "straddles the hole");
	guest_mem_destroy(&m);
}

Test(guest_mem, accessor_refuses_out_of_range_and_overflow)
{
	struct guest_mem m;
	uint64_t size = 32ull << 20;
	cr_assert_eq(guest_mem_init(&m, size, NULL), 0);
	cr_assert_not_null(guest_mem_ptr(&m, 0, size));
	cr_assert_not_null(guest_mem_ptr(&m, size - 1, 1));
	cr_assert_null(guest_mem_ptr(&m, size - 1, 2));
	cr_assert_null(guest_mem_ptr(&m, size, 0));
	cr_assert_null(guest_mem_ptr(&m, ~0ull, 2), "gpa + len wraps");
	cr_assert_null(guest_mem_ptr(&m, 16, ~0ull - 8), "len wraps");
	uint32_t v = 0xdeadbeef, back = 0;
	cr_assert(guest_mem_write(&m, 0x1000, &v, sizeof(v)));
	cr_assert(guest_mem_read(&m, 0x1000, &back, sizeof(back)));
	cr_assert_eq(back, v);
	cr_assert_not(guest_mem_write(&m, size - 2, &v, sizeof(v)));
	guest_mem_destroy(&m);
}

Test(guest_mem, refuses_sizes_not_multiple_of_2m)
{
	struct guest_mem m;
	struct vmm_err e = { 0 };
	cr_assert_lt(guest_mem_init(&m, (2ull << 20) + 4096, &e), 0);
	cr_assert(strstr(e.msg, "multiple of 2 MiB"));
	cr_assert_lt(guest_mem_init(&m, 0, &e), 0);
}

Test(guest_mem, host_tail_follows_ram_and_is_not_guest_memory)
{
	struct guest_mem m;
	uint64_t size = 32ull << 20;
	cr_assert_eq(guest_mem_init_with_tail(&m, size, 5000, NULL), 0);
	cr_assert_eq(m.host_tail, m.mapping + size, "the tail is right after RAM, in the same mapping");
	cr_assert_eq(m.host_tail_size, 8192, "rounded up to pages");
	cr_assert_eq(m.mapping_size, size + 8192);
	m.host_tail[0] = 1;
	m.host_tail[m.host_tail_size - 1] = 2;
	cr_assert_null(guest_mem_ptr(&m, size, 1), "the tail has no guest-physical address");
	cr_assert_null(guest_mem_ptr(&m, size - 1, 2), "nor does a range running into it");
	for (unsigned i = 0; i < m.nr_regions; i++)
		cr_assert(m.region[i].host + m.region[i].size <= m.host_tail, "no region covers the tail");
	guest_mem_destroy(&m);
}

Test(guest_mem, no_tail_by_default)
{
	struct guest_mem m;
	cr_assert_eq(guest_mem_init(&m, 16ull << 20, NULL), 0);
	cr_assert_null(m.host_tail);
	cr_assert_eq(m.host_tail_size, 0);
	cr_assert_eq(m.mapping_size, 16ull << 20);
	guest_mem_destroy(&m);
}
