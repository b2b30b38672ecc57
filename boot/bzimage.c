/* SPDX-License-Identifier: Apache-2.0 */
/* Linux bzImage loader for the 64-bit boot protocol.
 *
 * File layout: boot sector + setup_sects sectors of real-mode setup (with the
 * setup header at 0x1f1), then syssize * 16 bytes of protected-mode kernel.
 * Only the protected-mode part is loaded; the header is copied into the zero
 * page, which tells the kernel about its command line, initrd and memory. */
#include "boot/bzimage.h"

#include <asm/bootparam.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "boot/cmdline.h"
#include "boot/e820.h"

#define SETUP_HEADER_OFF   0x1f1   /* struct setup_header in the file and zero page */
#define BOOT_FLAG          0xAA55
#define HDRS_MAGIC         0x53726448   /* "HdrS" little endian */
#define LOADER_UNDEFINED   0xff    /* type_of_loader: no registered id */
#define SETUP_HEAP_END     0xfe00  /* heap_end_ptr: 64 KiB setup segment - 0x200 */
#define INITRD_ALIGN       0x1000ULL

_Static_assert(sizeof(struct boot_params) == 4096, "the zero page is one page");
_Static_assert(offsetof(struct boot_params, hdr) == SETUP_HEADER_OFF, "setup header at 0x1f1");
_Static_assert(offsetof(struct boot_params, e820_table) == 0x2d0, "e820 table at 0x2d0");

int bzimage_parse(const uint8_t *image, size_t size, const char *name,
		  struct bzimage_info *info, struct vmm_err *err)
{
	if (size < BZIMAGE_HEADER_MIN)
		return vmm_err_set(err, ENOEXEC,
				   "%s: %zu bytes is too small for a bzImage setup header (need 0x%x)",
				   name, size, BZIMAGE_HEADER_MIN);
	/* size >= 0x264: every field read below lies inside the file; fields
	 * past the end of the file (newer than 2.12) stay zero. */
	struct setup_header hdr;
	memset(&hdr, 0, sizeof(hdr));
	size_t avail = size - SETUP_HEADER_OFF;
	memcpy(&hdr, image + SETUP_HEADER_OFF, avail < sizeof(hdr) ? avail : sizeof(hdr));

	if (hdr.boot_flag != BOOT_FLAG)
		return vmm_err_set(err, ENOEXEC, "%s: boot flag at 0x1fe is 0x%04x, not 0xAA55",
				   name, hdr.boot_flag);
	if (hdr.header != HDRS_MAGIC)
		return vmm_err_set(err, ENOEXEC, "%s: no \"HdrS\" setup header magic at 0x202", name);
	if (hdr.version < BZIMAGE_MIN_PROTOCOL)
		return vmm_err_set(err, ENOEXEC,
				   "%s: boot protocol %u.%02u is too old, the 64-bit entry needs 2.12",
				   name, hdr.version >> 8, hdr.version & 0xff);
	if (!(hdr.xloadflags & XLF_KERNEL_64))
		return vmm_err_set(err, ENOEXEC,
				   "%s: kernel has no 64-bit entry point (XLF_KERNEL_64 not set)", name);
	if (!(hdr.loadflags & LOADED_HIGH))
		return vmm_err_set(err, ENOEXEC,
				   "%s: kernel is not loaded high (LOADED_HIGH clear): zImage not supported",
				   name);

	unsigned sects = hdr.setup_sects ? hdr.setup_sects : 4;
	uint32_t setup_size = (sects + 1) * 512;
	uint64_t kernel_size = (uint64_t)hdr.syssize * 16;
	uint32_t header_end = 0x202 + image[0x201];
	if (kernel_size == 0)
		return vmm_err_set(err, ENOEXEC, "%s: syssize is 0: no protected-mode kernel", name);
	if (setup_size + kernel_size > size)
		return vmm_err_set(err, ENOEXEC,
				   "%s: truncated: setup_sects %u and syssize %u need %llu bytes, file has %zu",
				   name, hdr.setup_sects, hdr.syssize,
				   (unsigned long long)(setup_size + kernel_size), size);
	if (header_end < BZIMAGE_HEADER_MIN || header_end > setup_size)
		return vmm_err_set(err, ENOEXEC,
				   "%s: setup header length (end 0x%x) does not fit protocol 2.12 and %u setup sectors",
				   name, header_end, sects);
	if (hdr.init_size == 0)
		return vmm_err_set(err, ENOEXEC, "%s: init_size is 0", name);
	uint32_t align = hdr.kernel_alignment;
	if (hdr.relocatable_kernel && (align == 0 || (align & (align - 1))))
		return vmm_err_set(err, ENOEXEC, "%s: kernel_alignment 0x%x is not a power of two",
				   name, align);

	*info = (struct bzimage_info){
		.version = hdr.version,
		.loadflags = hdr.loadflags,
		.xloadflags = hdr.xloadflags,
		.setup_size = setup_size,
		.header_end = header_end,
		.kernel_size = kernel_size,
		.init_size = hdr.init_size,
		.initrd_addr_max = hdr.initrd_addr_max,
		.cmdline_size = hdr.cmdline_size,
		.kernel_alignment = align,
		.relocatable = hdr.relocatable_kernel,
		.pref_address = hdr.pref_address,
	};
	return 0;
}

uint64_t bzimage_kernel_end(const struct bzimage_info *info, uint64_t load_addr)
{
	uint64_t run = info->pref_address;
	if (info->relocatable) {
		uint64_t mask = (uint64_t)info->kernel_alignment - 1;
		uint64_t aligned = (load_addr + mask) & ~mask;
		if (aligned > run)
			run = aligned;
	}
	/* pref_address is the file's 64-bit word: the sum may not fit. */
	uint64_t end;
	if (__builtin_add_overflow(run, info->init_size, &end))
		return UINT64_MAX;
	uint64_t image_end = load_addr + info->kernel_size;
	return end > image_end ? end : image_end;
}

/* Place the initrd page-aligned as high as possible below both
 * initrd_addr_max and the end of low RAM, above the kernel's memory. */
static int place_initrd(const struct guest_mem *mem, const struct bzimage_info *info,
			uint64_t kernel_end, size_t size, uint64_t *addr, struct vmm_err *err)
{
	uint64_t top = (uint64_t)info->initrd_addr_max + 1;
	if (top > guest_mem_low_end(mem))
		top = guest_mem_low_end(mem);
	if (size > top || ((top - size) & ~(INITRD_ALIGN - 1)) < kernel_end)
		return vmm_err_set(err, E2BIG,
				   "initrd of %zu bytes does not fit between the kernel's end 0x%llx and 0x%llx",
				   size, (unsigned long long)kernel_end, (unsigned long long)top);
	*addr = (top - size) & ~(INITRD_ALIGN - 1);
	return 0;
}

int bzimage_load(const struct guest_mem *mem, const struct boot_request *req,
		 struct boot_entry *entry, struct vmm_err *err)
{
	const char *name = req->kernel_name ? req->kernel_name : "kernel";
	struct bzimage_info info;
	int ret = bzimage_parse(req->kernel, req->kernel_size, name, &info, err);
	if (ret < 0)
		return ret;

	uint64_t low_end = guest_mem_low_end(mem);
	uint64_t kernel_end = bzimage_kernel_end(&info, BOOT_BZIMAGE_LOAD);
	if (kernel_end == UINT64_MAX)
		return vmm_err_set(err, ENOEXEC,
				   "%s: pref_address 0x%llx + init_size 0x%x runs past the end of the address space",
				   name, (unsigned long long)info.pref_address, info.init_size);
	if (kernel_end > low_end)
		return vmm_err_set(err, ENOMEM,
				   "%s: kernel needs RAM up to 0x%llx (init_size 0x%x) but RAM below the MMIO hole ends at 0x%llx",
				   name, (unsigned long long)kernel_end, info.init_size,
				   (unsigned long long)low_end);

	/* bzimage_parse checked setup_size + kernel_size <= the file size. */
	if (!guest_mem_write(mem, BOOT_BZIMAGE_LOAD, req->kernel + info.setup_size, info.kernel_size))
		return vmm_err_set(err, EFAULT, "%s: kernel does not fit in guest RAM at 0x%llx",
				   name, (unsigned long long)BOOT_BZIMAGE_LOAD);

	struct boot_params zp;
	memset(&zp, 0, sizeof(zp));
	/* The header as the kernel defines it: 0x1f1 up to 0x202 + byte 0x201;
	 * parse checked header_end <= setup_size <= file size. */
	size_t hdr_len = info.header_end - SETUP_HEADER_OFF;
	if (hdr_len > offsetof(struct boot_params, _pad7) + sizeof(zp._pad7) - SETUP_HEADER_OFF)
		hdr_len = offsetof(struct boot_params, _pad7) + sizeof(zp._pad7) - SETUP_HEADER_OFF;
	memcpy((uint8_t *)&zp + SETUP_HEADER_OFF, req->kernel + SETUP_HEADER_OFF, hdr_len);

	/* Fields the boot loader writes come from the file too: clear the ones
	 * we may not set below, or the kernel would look for an initrd or a
	 * setup_data list the file's bytes make up. */
	zp.hdr.ramdisk_image = 0;
	zp.hdr.ramdisk_size = 0;
	zp.hdr.setup_data = 0;
	zp.hdr.type_of_loader = LOADER_UNDEFINED;
	zp.hdr.loadflags |= CAN_USE_HEAP;   /* LOADED_HIGH stays set */
	zp.hdr.heap_end_ptr = SETUP_HEAP_END;
	zp.hdr.cmd_line_ptr = (uint32_t)BOOT_CMDLINE_ADDR;
	zp.ext_cmd_line_ptr = (uint32_t)(BOOT_CMDLINE_ADDR >> 32);
	zp.acpi_rsdp_addr = req->rsdp_addr;   /* 0 until the VMM writes ACPI tables */

	ret = cmdline_write(mem, BOOT_CMDLINE_ADDR, req->cmdline, info.cmdline_size, err);
	if (ret < 0)
		return ret;

	if (req->initrd && req->initrd_size) {
		uint64_t addr = 0;
		ret = place_initrd(mem, &info, kernel_end, req->initrd_size, &addr, err);
		if (ret < 0)
			return ret;
		if (!guest_mem_write(mem, addr, req->initrd, req->initrd_size))
			return vmm_err_set(err, EFAULT, "initrd at 0x%llx is outside guest RAM",
					   (unsigned long long)addr);
		zp.hdr.ramdisk_image = (uint32_t)addr;
		zp.hdr.ramdisk_size = (uint32_t)req->initrd_size;
		zp.ext_ramdisk_image = (uint32_t)(addr >> 32);
		zp.ext_ramdisk_size = (uint32_t)((uint64_t)req->initrd_size >> 32);
	}

	struct e820_range map[E820_MAX_RANGES];
	int n = e820_build(mem, map, E820_MAX_RANGES, err);
	if (n < 0)
		return n;
	_Static_assert(E820_MAX_RANGES <= E820_MAX_ENTRIES_ZEROPAGE, "e820 fits the zero page");
	for (int i = 0; i < n; i++) {
		zp.e820_table[i].addr = map[i].addr;
		zp.e820_table[i].size = map[i].size;
		zp.e820_table[i].type = map[i].type;
	}
	zp.e820_entries = (uint8_t)n;

	if (!guest_mem_write(mem, BOOT_ZERO_PAGE_ADDR, &zp, sizeof(zp)))
		return vmm_err_set(err, EFAULT, "zero page at 0x%llx is outside guest RAM",
				   (unsigned long long)BOOT_ZERO_PAGE_ADDR);

	*entry = (struct boot_entry){
		.mode = BOOT_MODE_LONG64,
		.entry = BOOT_BZIMAGE_LOAD + BZIMAGE_ENTRY64,
		.boot_arg = BOOT_ZERO_PAGE_ADDR,
	};
	return 0;
}
