/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* KVM maps a guest 2 MiB page with a host huge page only where the guest-
 * physical and the host address agree modulo 2 MiB: both regions must start
 * 2 MiB-aligned on the host, whatever mmap happened to return. */
Test(guest_mem, regions_are_two_mib_aligned_on_the_host)
{
	uint64_t sizes[] = { 2ull << 20, 6ull << 20, 64ull << 20, 4ull << 30 };
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct guest_mem m;
		/* Shift mmap's next choice off any 2 MiB boundary. */
		void *nudge = mmap(NULL, 4096 * (i + 1), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		cr_assert_neq(nudge, MAP_FAILED);
		cr_assert_eq(guest_mem_init(&m, sizes[i], NULL), 0);
		for (unsigned r = 0; r < m.nr_regions; r++)
			cr_assert_eq((uintptr_t)m.region[r].host % (2u << 20), 0,
				     "size %llu MiB region %u at %p", (unsigned long long)(sizes[i] >> 20), r,
				     (void *)m.region[r].host);
		memset(m.region[0].host + m.region[0].size - 4096, 0xa5, 4096);   /* last page is ours */
		guest_mem_destroy(&m);
		munmap(nudge, 4096 * (i + 1));
	}
}

/* A loader clears an ELF's BSS with guest_mem_zero: pages that are zero
 * already must not be written, or the host allocates all of them. */
Test(guest_mem, zero_clears_written_bytes_and_leaves_untouched_pages_unallocated)
{
	struct guest_mem m;
	cr_assert_eq(guest_mem_init(&m, 64ull << 20, NULL), 0);
	uint8_t *base = m.region[0].host;
	base[0x10000 + 17] = 0x5a;                  /* one dirty byte, first page */
	cr_assert(guest_mem_zero(&m, 0x10000 + 5, 3 * 4096 + 100));
	cr_assert_eq(base[0x10000 + 17], 0);
	/* /proc/self/pagemap bit 56: "page exclusively mapped", i.e. a page of
	 * our own; the shared zero page a read maps is not. */
	int pm = open("/proc/self/pagemap", O_RDONLY);
	cr_assert_geq(pm, 0);
	for (int i = 1; i <= 3; i++) {
		uint64_t entry = 0;
		off_t off = (off_t)(((uintptr_t)base + 0x10000 + (uintptr_t)i * 4096) / 4096 * 8);
		cr_assert_eq(pread(pm, &entry, sizeof(entry), off), (ssize_t)sizeof(entry));
		cr_assert_eq((entry >> 56) & 1, 0, "page %d after the dirty one was allocated", i);
	}
	uint64_t first = 0;
	cr_assert_eq(pread(pm, &first, sizeof(first), (off_t)(((uintptr_t)base + 0x10000) / 4096 * 8)), 8);
	cr_assert_eq((first >> 56) & 1, 1, "the written page is ours (the check can see it)");
	close(pm);
	cr_assert(!guest_mem_zero(&m, (64ull << 20) - 10, 11), "past the end of RAM");
	guest_mem_destroy(&m);
}
