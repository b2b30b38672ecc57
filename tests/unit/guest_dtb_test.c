/* SPDX-License-Identifier: Apache-2.0 */
/* The test guest's device-tree reader (guest-images/testguest/dtb.c),
 * compiled into the host tests: it must list the virtio-mmio devices of
 * every DTB the VMM builds (boot/fdt.c), read a DTB laid out differently
 * (dtc's output, other cell sizes), and refuse, without reading outside the
 * blob, every truncation and corruption of one (run under ASan by
 * `make san-test`). */
#include <criterion/criterion.h>
#include <libfdt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "boot/boot.h"
#include "boot/fdt.h"
#include "minivmm_abi.h"

/* The guest's reader itself: its own includes resolve next to it. */
#include "guest-images/testguest/dtb.c"

#define MAXDEV 32

static void *vmm_dtb(unsigned nvirtio, int *len)
{
	struct fdt_machine m = {
		.model = "minivmm", .compatible = "minivmm,x86-64",
		.mem = { { 0, 256 << 20 } }, .nr_mem = 1,
		.reserved = { { BOOT_EBDA_START, BOOT_KERNEL_MIN - BOOT_EBDA_START } }, .nr_reserved = 1,
		.ncpus = 2, .cpu_id = { 0, 1 },
		.intc = { .kind = FDT_INTC_X86_APIC, .nr_lines = 24,
			  .ioapic = { MINIVMM_IOAPIC_BASE, 0x1000 }, .lapic = { MINIVMM_LAPIC_BASE, 0x1000 } },
		.uart = { .space = FDT_UART_IO, .base = 0x3f8, .size = 8, .clock_hz = 1843200,
			  .irq = { 4, FDT_IRQ_EDGE_RISING } },
		.nr_virtio_mmio = nvirtio, .bootargs = "console=ttyS0",
	};
	for (unsigned k = 0; k < nvirtio; k++)
		m.virtio_mmio[k] = (struct fdt_virtio_mmio){
			.base = MINIVMM_MMIO_BASE + k * MINIVMM_MMIO_WINDOW, .size = MINIVMM_MMIO_WINDOW,
			.irq = { MINIVMM_VIRTIO_IRQ_BASE + k, FDT_IRQ_EDGE_RISING } };
	void *blob = malloc(BOOT_FDT_MAX);
	struct vmm_err err = { 0 };
	*len = fdt_build(&m, blob, BOOT_FDT_MAX, &err);
	cr_assert_gt(*len, 0, "%s", err.msg);
	return blob;
}

/* A copy of exactly len bytes in its own allocation, so ASan catches any
 * read past the end. */
static uint8_t *exact_copy(const void *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);
	memcpy(p, src, len);
	return p;
}

Test(guest_dtb, lists_every_device_of_the_vmm_tree)
{
	for (unsigned n = 0; n <= 8; n++) {
		int len;
		void *blob = vmm_dtb(n, &len);
		uint8_t *b = exact_copy(blob, (size_t)len);
		struct dtb_mmio_dev d[MAXDEV];
		const char *why = "";
		cr_assert_eq(dtb_virtio_mmio(b, (uint64_t)len, d, MAXDEV, &why), (int)n, "%u devices: %s", n, why);
		for (unsigned k = 0; k < n; k++) {
			cr_expect_eq(d[k].base, MINIVMM_MMIO_BASE + k * MINIVMM_MMIO_WINDOW);
			cr_expect_eq(d[k].size, MINIVMM_MMIO_WINDOW);
			cr_expect_eq(d[k].irq, MINIVMM_VIRTIO_IRQ_BASE + k);
		}
		free(b);
		free(blob);
	}
}

Test(guest_dtb, refuses_more_devices_than_it_keeps)
{
	int len;
	void *blob = vmm_dtb(3, &len);
	struct dtb_mmio_dev d[2];
	const char *why = "";
	cr_expect_eq(dtb_virtio_mmio(blob, (uint64_t)len, d, 2, &why), -1);
	cr_expect_str_eq(why, "more virtio-mmio devices than the guest keeps");
	free(blob);
}

/* A tree with NOPs, a device under a bus with 1-cell addresses and sizes,
 * a multi-string compatible, props after the name in another order. */
Test(guest_dtb, reads_other_layouts)
{
	uint8_t buf[4096];
	cr_assert_eq(fdt_create_empty_tree(buf, sizeof(buf)), 0);
	int bus = fdt_add_subnode(buf, 0, "soc");
	cr_assert_geq(bus, 0);
	cr_assert_eq(fdt_setprop_u32(buf, bus, "#address-cells", 1), 0);
	cr_assert_eq(fdt_setprop_u32(buf, bus, "#size-cells", 1), 0);
	int dev = fdt_add_subnode(buf, bus, "virtio@a000");
	cr_assert_geq(dev, 0);
	fdt32_t irq[2] = { cpu_to_fdt32(9), cpu_to_fdt32(3) };
	cr_assert_eq(fdt_setprop(buf, dev, "interrupts", irq, sizeof(irq)), 0);
	fdt32_t reg[2] = { cpu_to_fdt32(0xa000), cpu_to_fdt32(0x200) };
	cr_assert_eq(fdt_setprop(buf, dev, "reg", reg, sizeof(reg)), 0);
	static const char compat[] = "vendor,thing\0virtio,mmio";
	cr_assert_eq(fdt_setprop(buf, dev, "compatible", compat, sizeof(compat)), 0);
	/* Not devices: "virtio,mmio" only as the start of longer strings, or
	 * as a string that is not NUL-terminated inside the property. */
	int other = fdt_add_subnode(buf, 0, "fake@1");
	static const char near[] = "virtio,mmiox\0virtio,mmio-not";
	cr_assert_eq(fdt_setprop(buf, other, "compatible", near, sizeof(near)), 0);
	cr_assert_eq(fdt_setprop(buf, other, "reg", reg, sizeof(reg)), 0);
	int unterminated = fdt_add_subnode(buf, 0, "fake@2");
	cr_assert_eq(fdt_setprop(buf, unterminated, "compatible", "virtio,mmio", 11), 0);
	/* NOP tokens where a property was. */
	cr_assert_eq(fdt_setprop_u32(buf, bus, "junk", 7), 0);
	cr_assert_eq(fdt_nop_property(buf, bus, "junk"), 0);
	cr_assert_eq(fdt_pack(buf), 0);

	struct dtb_mmio_dev d[MAXDEV];
	const char *why = "";
	cr_assert_eq(dtb_virtio_mmio(buf, fdt_totalsize(buf), d, MAXDEV, &why), 1, "%s", why);
	cr_expect_eq(d[0].base, 0xa000);
	cr_expect_eq(d[0].size, 0x200);
	cr_expect_eq(d[0].irq, 9);
}

static void expect_bad(const uint8_t *blob, uint64_t len, const char *want)
{
	uint8_t *b = exact_copy(blob, (size_t)len);
	struct dtb_mmio_dev d[MAXDEV];
	const char *why = "";
	cr_expect_eq(dtb_virtio_mmio(b, len, d, MAXDEV, &why), -1, "wanted: %s", want);
	cr_expect_str_eq(why, want);
	free(b);
}

static void put_be32(void *blob, size_t off, uint32_t v)
{
	fdt32_t x = cpu_to_fdt32(v);
	memcpy((uint8_t *)blob + off, &x, 4);
}

Test(guest_dtb, refuses_bad_headers)
{
	int len;
	uint8_t *blob = vmm_dtb(1, &len);
	expect_bad(blob, 39, "shorter than a DTB header");
	uint8_t *c = exact_copy(blob, (size_t)len);
	c[0] ^= 1;
	expect_bad(c, (uint64_t)len, "no DTB magic");
	memcpy(c, blob, (size_t)len);
	expect_bad(c, (uint64_t)len - 1, "totalsize beyond the module");
	put_be32(c, 20, 16);   /* version */
	expect_bad(c, (uint64_t)len, "DTB version not compatible with 17");
	memcpy(c, blob, (size_t)len);
	put_be32(c, 36, (uint32_t)len);   /* size_dt_struct */
	expect_bad(c, (uint64_t)len, "structure or strings block outside the blob");
	memcpy(c, blob, (size_t)len);
	put_be32(c, 12, 0xfffffff0u);   /* off_dt_strings */
	expect_bad(c, (uint64_t)len, "structure or strings block outside the blob");
	memcpy(c, blob, (size_t)len);
	put_be32(c, 8, fdt_off_dt_struct(blob) + 2);   /* misaligned */
	expect_bad(c, (uint64_t)len, "structure or strings block outside the blob");
	free(c);
	free(blob);
}

Test(guest_dtb, refuses_a_device_without_reg_or_interrupts)
{
	int len;
	void *blob = vmm_dtb(1, &len);
	uint8_t *c = malloc((size_t)len);
	memcpy(c, blob, (size_t)len);
	int off = fdt_path_offset(c, "/virtio_mmio@d0000000");
	cr_assert_geq(off, 0);
	cr_assert_eq(fdt_nop_property(c, off, "interrupts"), 0);
	expect_bad(c, (uint64_t)len, "virtio-mmio node without interrupts");
	memcpy(c, blob, (size_t)len);
	cr_assert_eq(fdt_nop_property(c, off, "reg"), 0);
	expect_bad(c, (uint64_t)len, "virtio-mmio node without a reg entry");
	free(c);
	free(blob);
}

/* Every truncation of the structure block (header patched to the shorter
 * size, so only the walk's own bounds protect it), and every single-byte
 * corruption of the whole blob: never a read outside, always -1 or a count
 * of at most the real one. */
Test(guest_dtb, survives_every_truncation_and_byte_flip)
{
	int len;
	uint8_t *blob = vmm_dtb(4, &len);
	uint32_t off_struct = fdt_off_dt_struct(blob), size_struct = fdt_size_dt_struct(blob);
	for (uint32_t cut = 0; cut < size_struct; cut += 4) {
		uint8_t *c = exact_copy(blob, (size_t)len);
		put_be32(c, 36, cut);
		struct dtb_mmio_dev d[MAXDEV];
		const char *why = "";
		int n = dtb_virtio_mmio(c, (uint64_t)len, d, MAXDEV, &why);
		cr_expect_eq(n, -1, "struct block cut to %u bytes accepted (%d devices)", cut, n);
		free(c);
	}
	(void)off_struct;
	for (int i = 0; i < len; i++) {
		for (unsigned v = 0; v < 3; v++) {
			uint8_t *c = exact_copy(blob, (size_t)len);
			c[i] = v == 0 ? 0xff : v == 1 ? 0 : (uint8_t)(c[i] ^ 0x80);
			struct dtb_mmio_dev d[MAXDEV];
			const char *why = "";
			int n = dtb_virtio_mmio(c, (uint64_t)len, d, MAXDEV, &why);
			cr_expect(n == -1 || (n >= 0 && n <= MAXDEV), "byte %d: result %d", i, n);
			free(c);
		}
	}
	free(blob);
}

/* The module lookup reads guest-physical addresses below 4 GiB; MAP_32BIT
 * gives the test such addresses. */
Test(guest_dtb, finds_the_module_named_dtb)
{
	uint8_t *low = mmap(NULL, 0x4000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	cr_assert_neq(low, MAP_FAILED);
	struct hvm_modlist_entry *mods = (void *)low;
	char *names = (char *)low + 0x100;
	strcpy(names, "initrd");
	strcpy(names + 16, "dtb");
	strcpy(names + 32, "dtbx");
	mods[0] = (struct hvm_modlist_entry){ .paddr = (uintptr_t)low + 0x1000, .size = 10,
					      .cmdline_paddr = (uintptr_t)names };
	mods[1] = (struct hvm_modlist_entry){ .paddr = (uintptr_t)low + 0x2000, .size = 0x800,
					      .cmdline_paddr = (uintptr_t)names + 16 };
	struct hvm_start_info si = { .magic = HVM_START_MAGIC, .nr_modules = 2,
				     .modlist_paddr = (uintptr_t)mods };
	const uint8_t *blob;
	uint64_t size;
	cr_assert_eq(dtb_find_module(&si, &blob, &size), 1);
	cr_expect_eq(blob, low + 0x2000);
	cr_expect_eq(size, 0x800);

	mods[1].cmdline_paddr = (uintptr_t)names + 32;   /* "dtbx" is not "dtb" */
	cr_expect_eq(dtb_find_module(&si, &blob, &size), 0);
	mods[1].cmdline_paddr = 0;
	cr_expect_eq(dtb_find_module(&si, &blob, &size), 0, "unnamed modules are not the DTB");
	mods[1].cmdline_paddr = (uintptr_t)names + 16;
	mods[1].size = 0;
	cr_expect_eq(dtb_find_module(&si, &blob, &size), 0, "an empty DTB module");
	mods[1].size = 0x800;
	mods[1].paddr = 0xfffffc00ull;   /* + 0x800 ends past 4 GiB */
	cr_expect_eq(dtb_find_module(&si, &blob, &size), 0, "a DTB crossing 4 GiB");
	mods[1].paddr = (uintptr_t)low + 0x2000;
	si.nr_modules = 0;
	cr_expect_eq(dtb_find_module(&si, &blob, &size), 0);
	si.nr_modules = 1000;
	cr_expect_eq(dtb_find_module(&si, &blob, &size), 0, "an absurd module count");
	si.nr_modules = 2;
	si.modlist_paddr = 0xffffffe0ull;
	cr_expect_eq(dtb_find_module(&si, &blob, &size), 0, "a module list crossing 4 GiB");
	munmap(low, 0x4000);
}
