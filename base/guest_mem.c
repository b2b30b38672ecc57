/* SPDX-License-Identifier: Apache-2.0 */
/* Guest RAM: one anonymous mapping, split around the MMIO hole below 4 GiB,
 * optionally followed by host-only memory (the tail). */
#include "base/guest_mem.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define TWO_MIB (2ULL << 20)
#define SMALL_PAGES_BELOW (32ULL << 20)

/* An anonymous mapping of size bytes whose start is a multiple of 2 MiB.
 * mmap only promises page alignment; KVM can back a guest 2 MiB page with a
 * host huge page (and THP can build one) only where guest-physical and host
 * addresses agree modulo 2 MiB, so map 2 MiB more and trim both ends.
 * MAP_NORESERVE: the guest touches what it uses; an idle 256 MiB guest must
 * not cost 256 MiB of host memory. */
static void *map_two_mib_aligned(uint64_t size)
{
	size_t span = (size_t)size + TWO_MIB;
	uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return MAP_FAILED;
	uint8_t *start = (uint8_t *)(((uintptr_t)raw + TWO_MIB - 1) & ~(uintptr_t)(TWO_MIB - 1));
	size_t head = (size_t)(start - raw);
	size_t tail = span - head - (size_t)size;
	if (head)
		munmap(raw, head);
	if (tail)
		munmap(start + size, tail);
	return start;
}

#define TAIL_ALIGN 4096ULL
#define TAIL_MAX   (1ULL << 30)

int guest_mem_init(struct guest_mem *mem, uint64_t ram_size, struct vmm_err *err)
{
	return guest_mem_init_with_tail(mem, ram_size, 0, err);
}

int guest_mem_init_with_tail(struct guest_mem *mem, uint64_t ram_size, uint64_t tail_size,
			     struct vmm_err *err)
{
	memset(mem, 0, sizeof(*mem));
	if (ram_size == 0 || ram_size % TWO_MIB)
		return vmm_err_set(err, EINVAL, "guest memory size must be a non-zero multiple of 2 MiB");
	if (tail_size > TAIL_MAX)
		return vmm_err_set(err, EINVAL, "host-only memory after guest RAM: %llu MiB is too much",
				   (unsigned long long)(tail_size >> 20));
	tail_size = (tail_size + TAIL_ALIGN - 1) & ~(TAIL_ALIGN - 1);

	void *map = map_two_mib_aligned(ram_size + tail_size);
	if (map == MAP_FAILED)
		return vmm_err_sys(err, errno, "cannot map %llu MiB of guest memory",
				   (unsigned long long)(ram_size >> 20));
	/* Transparent huge pages cut EPT/NPT walk costs; failure is harmless.
	 * The first 32 MiB (boot structures, a unikernel or the test guest and
	 * its buffers, a Linux kernel's image) stay in small pages: a tiny
	 * guest then costs what it touches, not whole 2 MiB pages (the test
	 * guest's buffers crossing 4 MiB cost a 2 MiB page for 100 KiB). */
	if (ram_size > SMALL_PAGES_BELOW)
		(void)madvise((uint8_t *)map + SMALL_PAGES_BELOW, ram_size - SMALL_PAGES_BELOW,
			      MADV_HUGEPAGE);

	mem->mapping = map;
	mem->ram_size = ram_size;
	mem->mapping_size = ram_size + tail_size;
	mem->host_tail = tail_size ? (uint8_t *)map + ram_size : NULL;
	mem->host_tail_size = tail_size;
	uint64_t low = ram_size < GUEST_MMIO_HOLE_START ? ram_size : GUEST_MMIO_HOLE_START;
	mem->region[0] = (struct guest_mem_region){ .gpa = 0, .size = low, .host = map };
	mem->nr_regions = 1;
	if (ram_size > low) {
		mem->region[1] = (struct guest_mem_region){
			.gpa = GUEST_MMIO_HOLE_END, .size = ram_size - low, .host = (uint8_t *)map + low };
		mem->nr_regions = 2;
	}
	return 0;
}

void guest_mem_destroy(struct guest_mem *mem)
{
	if (mem->mapping)
		munmap(mem->mapping, mem->mapping_size);
	memset(mem, 0, sizeof(*mem));
}

bool guest_mem_write(const struct guest_mem *mem, uint64_t gpa, const void *src, size_t len)
{
	void *dst = guest_mem_ptr(mem, gpa, len);
	if (!dst)
		return false;
	memcpy(dst, src, len);
	return true;
}

bool guest_mem_read(const struct guest_mem *mem, uint64_t gpa, void *dst, size_t len)
{
	const void *src = guest_mem_ptr(mem, gpa, len);
	if (!src)
		return false;
	memcpy(dst, src, len);
	return true;
}

/* Is the page-sized (or shorter) block at p all zero? */
static bool block_is_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Has the page holding p never been touched? mincore() says so without
 * faulting it in (a read would map the zero page, a write allocate one);
 * an untouched anonymous page reads as zero. */
static bool page_untouched(const uint8_t *p)
{
	unsigned char resident = 1;
	void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);
	return mincore(page, 4096, &resident) == 0 && !(resident & 1);
}

bool guest_mem_zero(const struct guest_mem *mem, uint64_t gpa, uint64_t len)
{
	uint8_t *p = guest_mem_ptr(mem, gpa, len);
	if (!p)
		return false;
	while (len) {
		size_t block = 4096 - ((uintptr_t)p & 4095);
		if (block > len)
			block = (size_t)len;
		if (!page_untouched(p) && !block_is_zero(p, block))
			memset(p, 0, block);
		p += block;
		len -= block;
	}
	return true;
}
