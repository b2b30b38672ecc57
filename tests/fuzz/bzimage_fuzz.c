/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the bzImage loader (boot/bzimage.c: bzimage_parse,
 * bzimage_load; boot_load in boot/boot.c picks it by the "HdrS" magic) on
 * fuzzed images into a small guest (1.06 to 8 MiB of low RAM, maybe 2 MiB
 * above 4 GiB), with or without an initrd, with command lines up to and
 * past the longest.
 *
 * The input is an 8-byte prefix (see fuzz_boot_setup) and the image.
 * Seeds are a real Debian bzImage's header (tests/fuzz/seeds.py).
 *
 * Checked: a failure is one line with its errno; parse and load agree;
 * after a successful load the protected-mode kernel is at 1 MiB byte for
 * byte (nothing clobbered it), the memory the kernel claims (its run
 * address + init_size) and the initrd lie in low RAM without overlapping,
 * the initrd is page-aligned, below initrd_addr_max and intact, the zero
 * page points at the command line, which is whole and within the kernel's
 * cmdline_size, and carries the e820 map. */
#include <asm/bootparam.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "boot/bzimage.h"
#include "boot/e820.h"
#include "tests/fuzz/fuzz_common.h"

static void check_error(int rc, const struct vmm_err *err)
{
	FUZZ_CHECK(rc < 0 && rc > -4096, "loader returned %d", rc);
	FUZZ_CHECK(err->code == -rc, "error code %d, returned %d", err->code, rc);
	FUZZ_CHECK(err->msg[0] && !strchr(err->msg, '\n'), "error message '%s' is not one line",
		   err->msg);
}

/* Where the kernel runs and how far it reaches, without wrapping. */
static unsigned __int128 claimed_end(const struct bzimage_info *info)
{
	unsigned __int128 run = info->pref_address;
	if (info->relocatable) {
		unsigned __int128 a = info->kernel_alignment;
		unsigned __int128 aligned = (BOOT_BZIMAGE_LOAD + a - 1) / a * a;
		run = aligned > run ? aligned : run;
	}
	unsigned __int128 end = run + info->init_size;
	unsigned __int128 image_end = (unsigned __int128)BOOT_BZIMAGE_LOAD + info->kernel_size;
	return end > image_end ? end : image_end;
}

static void check_loaded(const struct fuzz_boot *b, const struct bzimage_info *info,
			 const struct boot_entry *e)
{
	FUZZ_CHECK(e->mode == BOOT_MODE_LONG64 && e->entry == BOOT_BZIMAGE_LOAD + BZIMAGE_ENTRY64 &&
		   e->boot_arg == BOOT_ZERO_PAGE_ADDR, "entry 0x%llx mode %d",
		   (unsigned long long)e->entry, e->mode);
	uint64_t low_end = guest_mem_low_end(&b->g.mem);
	FUZZ_CHECK(claimed_end(info) <= low_end,
		   "loaded a kernel that claims memory past the end of low RAM (0x%llx): "
		   "pref_address 0x%llx, init_size 0x%x, alignment 0x%x", (unsigned long long)low_end,
		   (unsigned long long)info->pref_address, info->init_size, info->kernel_alignment);
	fuzz_boot_check_bytes(b, BOOT_BZIMAGE_LOAD, b->image + info->setup_size, info->kernel_size,
			      "protected-mode kernel");

	struct boot_params zp;
	FUZZ_CHECK(guest_mem_read(&b->g.mem, BOOT_ZERO_PAGE_ADDR, &zp, sizeof(zp)), "zero page");
	FUZZ_CHECK(zp.hdr.cmd_line_ptr == BOOT_CMDLINE_ADDR && zp.ext_cmd_line_ptr == 0,
		   "cmd_line_ptr 0x%x", zp.hdr.cmd_line_ptr);
	FUZZ_CHECK(zp.hdr.type_of_loader == 0xff && (zp.hdr.loadflags & LOADED_HIGH),
		   "loader id 0x%x, loadflags 0x%x", zp.hdr.type_of_loader, zp.hdr.loadflags);
	FUZZ_CHECK(zp.acpi_rsdp_addr == b->req.rsdp_addr, "RSDP 0x%llx",
		   (unsigned long long)zp.acpi_rsdp_addr);
	FUZZ_CHECK(zp.hdr.setup_data == 0, "a setup_data list from the file's bytes");
	size_t max_cmdline = info->cmdline_size < BOOT_CMDLINE_MAX - 1 ? info->cmdline_size
								       : BOOT_CMDLINE_MAX - 1;
	fuzz_boot_check_cmdline(b, max_cmdline);

	struct e820_range map[E820_MAX_RANGES];
	int n = e820_build(&b->g.mem, map, E820_MAX_RANGES, NULL);
	FUZZ_CHECK(n > 0 && zp.e820_entries == n, "%u e820 entries, the map has %d", zp.e820_entries, n);
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(zp.e820_table[i].addr == map[i].addr && zp.e820_table[i].size == map[i].size &&
			   zp.e820_table[i].type == map[i].type, "e820 entry %d", i);

	if (!b->req.initrd) {
		FUZZ_CHECK(zp.hdr.ramdisk_image == 0 && zp.hdr.ramdisk_size == 0, "an initrd from nowhere");
		return;
	}
	uint64_t at = zp.hdr.ramdisk_image | (uint64_t)zp.ext_ramdisk_image << 32;
	uint64_t len = zp.hdr.ramdisk_size | (uint64_t)zp.ext_ramdisk_size << 32;
	FUZZ_CHECK(len == b->req.initrd_size, "initrd size %llu, gave %zu", (unsigned long long)len,
		   b->req.initrd_size);
	FUZZ_CHECK(at % 4096 == 0, "initrd at 0x%llx is not page-aligned", (unsigned long long)at);
	FUZZ_CHECK(at >= claimed_end(info), "initrd at 0x%llx inside the kernel's memory",
		   (unsigned long long)at);
	FUZZ_CHECK((unsigned __int128)at + len <= low_end &&
		   (unsigned __int128)at + len <= (unsigned __int128)info->initrd_addr_max + 1,
		   "initrd [0x%llx, +0x%llx) past low RAM or initrd_addr_max 0x%x",
		   (unsigned long long)at, (unsigned long long)len, info->initrd_addr_max);
	fuzz_boot_check_bytes(b, at, b->initrd, len, "initrd");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_boot b;
	if (!fuzz_boot_setup(&b, data, size))
		return 0;
	struct bzimage_info info;
	struct vmm_err perr = { 0 }, err = { 0 };
	int prc = bzimage_parse(b.image, b.image_size, "fuzz.img", &info, &perr);
	if (prc < 0)
		check_error(prc, &perr);

	struct boot_entry e;
	int rc = b.via_boot_load ? boot_load(&b.g.mem, &b.req, &e, &err)
				 : bzimage_load(&b.g.mem, &b.req, &e, &err);
	if (fuzz_tracing())
		fprintf(stderr, "%s: %d %s\n", b.via_boot_load ? "boot_load" : "bzimage_load", rc,
			rc < 0 ? err.msg : "loaded");
	if (rc < 0)
		check_error(rc, &err);
	else if (e.mode == BOOT_MODE_LONG64) {
		FUZZ_CHECK(prc == 0, "loaded an image bzimage_parse refuses (%s)", perr.msg);
		check_loaded(&b, &info, &e);
	}
	fuzz_boot_free(&b);
	return 0;
}
