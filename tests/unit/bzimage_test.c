/* SPDX-License-Identifier: Apache-2.0 */
/* bzImage loader: setup header validation, zero page, initrd placement,
 * and boot_load's format detection. Images are built here, byte by byte. */
#include <asm/bootparam.h>
#include <asm/e820.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "boot/bzimage.h"
#include "boot/mptable.h"

#define MiB (1ULL << 20)
#define SETUP_SECTS   4
#define KERNEL_BYTES  (64 * 1024)
#define IMAGE_BYTES   ((SETUP_SECTS + 1) * 512 + KERNEL_BYTES)

struct image {
	uint8_t bytes[IMAGE_BYTES];
	size_t size;
};

static struct setup_header *hdr_of(struct image *img)
{
	return (struct setup_header *)(img->bytes + 0x1f1);
}

/* A well-formed 2.15 bzImage: relocatable, 64-bit, kernel bytes 0..255
 * repeating, init_size 4 MiB from pref_address 16 MiB. */
static void make_image(struct image *img)
{
	memset(img, 0, sizeof(*img));
	img->size = IMAGE_BYTES;
	struct setup_header h = {
		.setup_sects = SETUP_SECTS,
		.syssize = KERNEL_BYTES / 16,
		.boot_flag = 0xAA55,
		.header = 0x53726448,   /* "HdrS" */
		.version = 0x020f,
		.loadflags = LOADED_HIGH,
		.initrd_addr_max = 0x37ffffff,
		.kernel_alignment = 0x200000,
		.relocatable_kernel = 1,
		.xloadflags = XLF_KERNEL_64 | XLF_CAN_BE_LOADED_ABOVE_4G,
		.cmdline_size = 255,
		.pref_address = 16 * MiB,
		.init_size = 4 * MiB,
	};
	memcpy(img->bytes + 0x1f1, &h, sizeof(h));
	img->bytes[0x200] = 0xeb;                       /* jmp short */
	img->bytes[0x201] = 0x26c - 0x202;              /* header ends at 0x26c */
	for (size_t i = 0; i < KERNEL_BYTES; i++)
		img->bytes[(SETUP_SECTS + 1) * 512 + i] = (uint8_t)i;
}

static int parse(struct image *img, struct vmm_err *err)
{
	struct bzimage_info info;
	return bzimage_parse(img->bytes, img->size, "bz", &info, err);
}

static void expect_rejected(struct image *img, const char *msg)
{
	struct vmm_err err = { 0 };
	cr_expect_eq(parse(img, &err), -ENOEXEC, "accepted, wanted: %s", msg);
	cr_expect_str_eq(err.msg, msg);
}

Test(bzimage, parses_a_good_image)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	struct bzimage_info info;
	struct vmm_err err = { 0 };
	cr_assert_eq(bzimage_parse(img->bytes, img->size, "bz", &info, &err), 0, "%s", err.msg);
	cr_expect_eq(info.version, 0x020f);
	cr_expect_eq(info.setup_size, 5 * 512);
	cr_expect_eq(info.kernel_size, KERNEL_BYTES);
	cr_expect_eq(info.header_end, 0x26c);
	cr_expect_eq(info.cmdline_size, 255);
	cr_expect_eq(info.initrd_addr_max, 0x37ffffff);
	cr_expect_eq(bzimage_kernel_end(&info, BOOT_BZIMAGE_LOAD), 20 * MiB,
		     "decompresses at pref_address, needs init_size from there");
	free(img);
}

Test(bzimage, setup_sects_zero_means_four)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->setup_sects = 0;
	struct bzimage_info info;
	struct vmm_err err = { 0 };
	cr_assert_eq(bzimage_parse(img->bytes, img->size, "bz", &info, &err), 0, "%s", err.msg);
	cr_expect_eq(info.setup_size, 5 * 512);
	free(img);
}

Test(bzimage, rejects_file_too_small_for_setup_header)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	img->size = 0x263;
	expect_rejected(img, "bz: 611 bytes is too small for a bzImage setup header (need 0x264)");
	free(img);
}

Test(bzimage, rejects_missing_boot_flag)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->boot_flag = 0x1234;
	expect_rejected(img, "bz: boot flag at 0x1fe is 0x1234, not 0xAA55");
	free(img);
}

Test(bzimage, rejects_missing_hdrs_magic)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	img->bytes[0x202] = 'X';
	expect_rejected(img, "bz: no \"HdrS\" setup header magic at 0x202");
	free(img);
}

Test(bzimage, rejects_protocol_below_2_12)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->version = 0x020b;
	expect_rejected(img, "bz: boot protocol 2.11 is too old, the 64-bit entry needs 2.12");
	free(img);
}

Test(bzimage, rejects_kernel_without_64_bit_entry)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->xloadflags = XLF_CAN_BE_LOADED_ABOVE_4G;
	expect_rejected(img, "bz: kernel has no 64-bit entry point (XLF_KERNEL_64 not set)");
	free(img);
}

Test(bzimage, rejects_kernel_not_loaded_high)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->loadflags = 0;
	expect_rejected(img, "bz: kernel is not loaded high (LOADED_HIGH clear): zImage not supported");
	free(img);
}

Test(bzimage, rejects_truncated_image)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	img->size -= 1;
	expect_rejected(img, "bz: truncated: setup_sects 4 and syssize 4096 need 68096 bytes, file has 68095");
	free(img);
}

Test(bzimage, rejects_syssize_past_end_of_file)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->syssize = 0xffffffff;
	expect_rejected(img, "bz: truncated: setup_sects 4 and syssize 4294967295 need 68719479280 bytes, file has 68096");
	free(img);
}

Test(bzimage, rejects_setup_sects_past_end_of_file)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->setup_sects = 200;
	expect_rejected(img, "bz: truncated: setup_sects 200 and syssize 4096 need 168448 bytes, file has 68096");
	free(img);
}

Test(bzimage, rejects_zero_syssize)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->syssize = 0;
	expect_rejected(img, "bz: syssize is 0: no protected-mode kernel");
	free(img);
}

Test(bzimage, rejects_header_shorter_than_protocol_2_12)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	img->bytes[0x201] = 0x40;
	expect_rejected(img, "bz: setup header length (end 0x242) does not fit protocol 2.12 and 4 setup sectors");
	free(img);
}

Test(bzimage, rejects_zero_init_size)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->init_size = 0;
	expect_rejected(img, "bz: init_size is 0");
	free(img);
}

Test(bzimage, rejects_kernel_alignment_not_power_of_two)
{
	struct image *img = malloc(sizeof(*img));
	make_image(img);
	hdr_of(img)->kernel_alignment = 0x300000;
	expect_rejected(img, "bz: kernel_alignment 0x300000 is not a power of two");
	free(img);
}

/* --- loading --- */

struct loaded {
	struct guest_mem mem;
	struct image *img;
	struct boot_request req;
	struct boot_entry entry;
	struct vmm_err err;
};

static void setup_load(struct loaded *l, uint64_t ram)
{
	memset(l, 0, sizeof(*l));
	cr_assert_eq(guest_mem_init(&l->mem, ram, &l->err), 0, "%s", l->err.msg);
	l->img = malloc(sizeof(*l->img));
	make_image(l->img);
	l->req = (struct boot_request){
		.kernel = l->img->bytes, .kernel_size = l->img->size, .kernel_name = "bz",
		.cmdline = "console=ttyS0", .ncpus = 2,
	};
}

static void teardown_load(struct loaded *l)
{
	free(l->img);
	guest_mem_destroy(&l->mem);
}

static struct boot_params *zero_page(struct loaded *l)
{
	return guest_mem_ptr(&l->mem, BOOT_ZERO_PAGE_ADDR, sizeof(struct boot_params));
}

Test(bzimage, load_fills_zero_page_and_entry)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	cr_assert_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), 0, "%s", l.err.msg);
	cr_expect_eq(l.entry.mode, BOOT_MODE_LONG64);
	cr_expect_eq(l.entry.entry, 0x100200);
	cr_expect_eq(l.entry.boot_arg, BOOT_ZERO_PAGE_ADDR);

	const uint8_t *k = guest_mem_ptr(&l.mem, BOOT_BZIMAGE_LOAD, KERNEL_BYTES);
	cr_expect_eq(memcmp(k, l.img->bytes + 5 * 512, KERNEL_BYTES), 0, "kernel at 1 MiB");

	struct boot_params *zp = zero_page(&l);
	cr_expect_eq(zp->hdr.header, 0x53726448, "setup header copied");
	cr_expect_eq(zp->hdr.version, 0x020f);
	cr_expect_eq(zp->hdr.init_size, 4 * MiB);
	cr_expect_eq(zp->hdr.type_of_loader, 0xff);
	cr_expect_eq(zp->hdr.loadflags, LOADED_HIGH | CAN_USE_HEAP);
	cr_expect_neq(zp->hdr.heap_end_ptr, 0);
	cr_expect_eq(zp->hdr.cmd_line_ptr, BOOT_CMDLINE_ADDR);
	cr_expect_eq(zp->ext_cmd_line_ptr, 0);
	cr_expect_str_eq((char *)guest_mem_ptr(&l.mem, zp->hdr.cmd_line_ptr, 14), "console=ttyS0");
	cr_expect_eq(zp->hdr.ramdisk_image, 0, "no initrd");
	cr_expect_eq(zp->hdr.ramdisk_size, 0);
	cr_expect_eq(zp->sentinel, 0);
	cr_expect_eq(zp->acpi_rsdp_addr, 0);

	cr_assert_eq(zp->e820_entries, 4);
	cr_expect_eq(zp->e820_table[0].addr, 0);
	cr_expect_eq(zp->e820_table[0].size, 0x9FC00);
	cr_expect_eq(zp->e820_table[0].type, E820_RAM);
	cr_expect_eq(zp->e820_table[1].type, E820_RESERVED);
	cr_expect_eq(zp->e820_table[2].addr, 0xF0000);
	cr_expect_eq(zp->e820_table[3].addr, MiB);
	cr_expect_eq(zp->e820_table[3].size, 63 * MiB);
	cr_expect_eq(zp->e820_table[3].type, E820_RAM);
	teardown_load(&l);
}

/* bzImage guests get no device tree (docs/boot.md): no SETUP_DTB, nothing
 * written to the PVH slot. */
Test(bzimage, ignores_the_device_tree)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	static const uint8_t dtb[64] = { 0xd0, 0x0d, 0xfe, 0xed };
	l.req.fdt = dtb;
	l.req.fdt_size = sizeof(dtb);
	cr_assert_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), 0, "%s", l.err.msg);
	cr_expect_eq(zero_page(&l)->hdr.setup_data, 0, "no setup_data chain");
	const uint8_t *slot = guest_mem_ptr(&l.mem, BOOT_FDT_ADDR, sizeof(dtb));
	for (unsigned i = 0; i < sizeof(dtb); i++)
		cr_assert_eq(slot[i], 0, "byte %u of the PVH slot untouched", i);
	teardown_load(&l);
}

/* Found by the bzimage fuzzer: the setup header is copied from the file,
 * loader-written fields included, so stale bytes there announced an initrd
 * (or setup_data) that was never loaded. */
Test(bzimage, ramdisk_and_setup_data_fields_of_the_file_do_not_reach_the_kernel)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	hdr_of(l.img)->ramdisk_image = 0x1000000;
	hdr_of(l.img)->ramdisk_size = 0x12345;
	hdr_of(l.img)->setup_data = 0x7777000;
	cr_assert_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), 0, "%s", l.err.msg);
	struct boot_params *zp = zero_page(&l);
	cr_expect_eq(zp->hdr.ramdisk_image, 0, "no initrd given, none announced");
	cr_expect_eq(zp->hdr.ramdisk_size, 0);
	cr_expect_eq(zp->hdr.setup_data, 0, "no setup_data list");
	teardown_load(&l);
}

Test(bzimage, initrd_goes_high_below_initrd_addr_max_and_page_aligned)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	hdr_of(l.img)->initrd_addr_max = 48 * MiB - 1;
	static uint8_t initrd[10000];
	for (size_t i = 0; i < sizeof(initrd); i++)
		initrd[i] = (uint8_t)(i * 7);
	l.req.initrd = initrd;
	l.req.initrd_size = sizeof(initrd);
	cr_assert_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), 0, "%s", l.err.msg);

	struct boot_params *zp = zero_page(&l);
	uint64_t addr = zp->hdr.ramdisk_image | (uint64_t)zp->ext_ramdisk_image << 32;
	cr_expect_eq(addr % 4096, 0, "page aligned: 0x%llx", (unsigned long long)addr);
	cr_expect_leq(addr + sizeof(initrd) - 1, 48 * MiB - 1, "under initrd_addr_max");
	cr_expect_gt(addr + sizeof(initrd) + 4096, 48 * MiB, "as high as possible");
	cr_expect_geq(addr, 20 * MiB, "above the kernel's init_size region");
	cr_expect_eq(zp->hdr.ramdisk_size, sizeof(initrd));
	cr_expect_eq(zp->ext_ramdisk_size, 0);
	cr_expect_eq(memcmp(guest_mem_ptr(&l.mem, addr, sizeof(initrd)), initrd, sizeof(initrd)), 0);
	teardown_load(&l);
}

Test(bzimage, initrd_ends_at_top_of_ram_when_initrd_addr_max_is_higher)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	static uint8_t initrd[8192];
	l.req.initrd = initrd;
	l.req.initrd_size = sizeof(initrd);
	cr_assert_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), 0, "%s", l.err.msg);
	cr_expect_eq(zero_page(&l)->hdr.ramdisk_image, 64 * MiB - 8192);
	teardown_load(&l);
}

Test(bzimage, rejects_initrd_too_large)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	/* 44 MiB + 1 page does not fit between 20 MiB and 64 MiB. */
	size_t size = 44 * MiB + 1;
	uint8_t *initrd = calloc(1, size);
	l.req.initrd = initrd;
	l.req.initrd_size = size;
	cr_expect_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), -E2BIG);
	cr_expect_str_eq(l.err.msg,
			 "initrd of 46137345 bytes does not fit between the kernel's end 0x1400000 and 0x4000000");
	free(initrd);
	teardown_load(&l);
}

Test(bzimage, rejects_init_size_beyond_guest_ram)
{
	struct loaded l;
	setup_load(&l, 16 * MiB);
	cr_expect_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), -ENOMEM);
	cr_expect_str_eq(l.err.msg,
			 "bz: kernel needs RAM up to 0x1400000 (init_size 0x400000) but RAM below the MMIO hole ends at 0x1000000");
	teardown_load(&l);
}

/* Found by the bzimage fuzzer: pref_address + init_size wrapped around, so
 * a kernel claiming memory past 2^64 passed the "fits in RAM" check. */
Test(bzimage, rejects_pref_address_plus_init_size_past_the_address_space)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	hdr_of(l.img)->pref_address = 0xffffffffffffff00ull;
	hdr_of(l.img)->init_size = 0x200100;
	cr_expect_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), -ENOEXEC);
	cr_expect_str_eq(l.err.msg, "bz: pref_address 0xffffffffffffff00 + init_size 0x200100 runs "
				    "past the end of the address space");
	hdr_of(l.img)->relocatable_kernel = 0;
	cr_expect_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), -ENOEXEC, "not relocatable either");
	teardown_load(&l);
}

Test(bzimage, rejects_cmdline_longer_than_cmdline_size)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	hdr_of(l.img)->cmdline_size = 5;
	cr_expect_eq(bzimage_load(&l.mem, &l.req, &l.entry, &l.err), -E2BIG);
	cr_expect_str_eq(l.err.msg, "kernel command line is 13 bytes, the kernel accepts at most 5");
	teardown_load(&l);
}

Test(boot, load_detects_bzimage_and_writes_mp_table)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	cr_assert_eq(boot_load(&l.mem, &l.req, &l.entry, &l.err), 0, "%s", l.err.msg);
	cr_expect_eq(l.entry.mode, BOOT_MODE_LONG64);
	cr_expect_eq(memcmp(guest_mem_ptr(&l.mem, BOOT_MPTABLE_ADDR, 4), "_MP_", 4), 0);
	teardown_load(&l);
}

Test(boot, load_rejects_unknown_format)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	memset(l.img->bytes, 0x90, l.img->size);
	cr_expect_eq(boot_load(&l.mem, &l.req, &l.entry, &l.err), -ENOEXEC);
	cr_expect_str_eq(l.err.msg, "bz: not a bzImage or ELF kernel");
	l.req.kernel_size = 3;
	cr_expect_eq(boot_load(&l.mem, &l.req, &l.entry, &l.err), -ENOEXEC);
	teardown_load(&l);
}

Test(boot, load_rejects_too_many_cpus)
{
	struct loaded l;
	setup_load(&l, 64 * MiB);
	l.req.ncpus = 100;
	cr_expect_eq(boot_load(&l.mem, &l.req, &l.entry, &l.err), -EINVAL);
	teardown_load(&l);
}

/* The distribution kernel installed on this machine: `make unit-test`
 * installs linux-image-amd64 first (scripts/install-deps.sh unit), so a
 * missing one is a broken set-up, reported as a failure. */
Test(bzimage, debian_vmlinuz_passes_validation_and_loads)
{
	glob_t g;
	cr_assert_eq(glob("/boot/vmlinuz-*", 0, NULL, &g), 0,
		     "no /boot/vmlinuz-*: this test needs Debian's linux-image-amd64 "
		     "(scripts/install-deps.sh unit installs it; make unit-test runs that)");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "rb");
		cr_assert_not_null(f, "cannot open %s", g.gl_pathv[i]);
		fseek(f, 0, SEEK_END);
		long size = ftell(f);
		rewind(f);
		uint8_t *buf = malloc((size_t)size);
		cr_assert_eq(fread(buf, 1, (size_t)size, f), (size_t)size);
		fclose(f);

		struct vmm_err err = { 0 };
		struct bzimage_info info;
		cr_expect_eq(bzimage_parse(buf, (size_t)size, g.gl_pathv[i], &info, &err), 0, "%s",
			     err.msg);

		struct guest_mem mem;
		cr_assert_eq(guest_mem_init(&mem, 256 * MiB, &err), 0, "%s", err.msg);
		struct boot_request req = { .kernel = buf, .kernel_size = (size_t)size,
					    .kernel_name = g.gl_pathv[i],
					    .cmdline = "console=ttyS0", .ncpus = 1 };
		struct boot_entry entry;
		cr_expect_eq(boot_load(&mem, &req, &entry, &err), 0, "%s", err.msg);
		cr_expect_eq(entry.mode, BOOT_MODE_LONG64);
		guest_mem_destroy(&mem);
		free(buf);
	}
	globfree(&g);
}
