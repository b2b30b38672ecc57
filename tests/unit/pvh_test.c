/* SPDX-License-Identifier: Apache-2.0 */
/* PVH ELF loader: header and segment checks, note parsing, hvm_start_info.
 * Test ELF files are built here: header, up to 4 program headers, a note
 * area at NOTE_OFF and segment bytes at DATA_OFF. */
#include <asm/e820.h>
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "boot/boot.h"
#include "boot/pvh.h"

#define MiB (1ULL << 20)
#define NOTE_OFF  0x200
#define DATA_OFF  0x1000
#define ELF_BYTES 0x3000
#define ENTRY     0x100010

struct elf {
	uint8_t bytes[ELF_BYTES];
	size_t size;
	unsigned phnum;
};

static Elf64_Ehdr *ehdr(struct elf *e)
{
	return (Elf64_Ehdr *)e->bytes;
}

static Elf64_Phdr *phdr(struct elf *e, unsigned i)
{
	return (Elf64_Phdr *)(e->bytes + sizeof(Elf64_Ehdr) + i * sizeof(Elf64_Phdr));
}

static void add_phdr(struct elf *e, Elf64_Phdr ph)
{
	*phdr(e, e->phnum++) = ph;
	ehdr(e)->e_phnum = (uint16_t)e->phnum;
}

/* Write one note at off; returns its size including padding. */
static size_t put_note(struct elf *e, size_t off, const char *name, uint32_t type,
		       const void *desc, uint32_t descsz)
{
	uint32_t namesz = (uint32_t)strlen(name) + 1;
	uint32_t words[3] = { namesz, descsz, type };
	memcpy(e->bytes + off, words, 12);
	memcpy(e->bytes + off + 12, name, namesz);
	size_t name_pad = (namesz + 3) & ~3u;
	memcpy(e->bytes + off + 12 + name_pad, desc, descsz);
	return 12 + name_pad + ((descsz + 3) & ~3u);
}

/* Good PVH kernel: one PT_LOAD of 0x100 file bytes and 0x2000 memory at
 * 1 MiB, a PT_NOTE with a GNU note then the Xen PHYS32_ENTRY note. */
static void make_elf(struct elf *e)
{
	memset(e, 0, sizeof(*e));
	e->size = ELF_BYTES;
	Elf64_Ehdr *h = ehdr(e);
	memcpy(h->e_ident, ELFMAG, SELFMAG);
	h->e_ident[EI_CLASS] = ELFCLASS64;
	h->e_ident[EI_DATA] = ELFDATA2LSB;
	h->e_ident[EI_VERSION] = EV_CURRENT;
	h->e_type = ET_EXEC;
	h->e_machine = EM_X86_64;
	h->e_version = EV_CURRENT;
	h->e_entry = 0xffffffff81000000ULL;
	h->e_phoff = sizeof(Elf64_Ehdr);
	h->e_ehsize = sizeof(Elf64_Ehdr);
	h->e_phentsize = sizeof(Elf64_Phdr);

	add_phdr(e, (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = DATA_OFF, .p_paddr = MiB,
				  .p_vaddr = 0xffffffff81000000ULL, .p_filesz = 0x100,
				  .p_memsz = 0x2000, .p_align = 0x1000 });
	uint8_t gnu_id[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	size_t len = put_note(e, NOTE_OFF, "GNU", NT_GNU_BUILD_ID, gnu_id, sizeof(gnu_id));
	uint32_t entry = ENTRY;
	len += put_note(e, NOTE_OFF + len, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 4);
	add_phdr(e, (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = NOTE_OFF, .p_filesz = len,
				  .p_align = 4 });
	for (unsigned i = 0; i < 0x100; i++)
		e->bytes[DATA_OFF + i] = (uint8_t)(i + 1);
}

struct fixture {
	struct guest_mem mem;
	struct elf *e;
	struct boot_request req;
	struct boot_entry entry;
	struct vmm_err err;
};

static void setup(struct fixture *fx)
{
	memset(fx, 0, sizeof(*fx));
	cr_assert_eq(guest_mem_init(&fx->mem, 64 * MiB, &fx->err), 0, "%s", fx->err.msg);
	fx->e = malloc(sizeof(*fx->e));
	make_elf(fx->e);
	fx->req = (struct boot_request){ .kernel = fx->e->bytes, .kernel_size = fx->e->size,
					 .kernel_name = "elf", .cmdline = "test=hello", .ncpus = 1 };
}

static void teardown(struct fixture *fx)
{
	free(fx->e);
	guest_mem_destroy(&fx->mem);
}

static void expect_load_fails(struct fixture *fx, int code, const char *msg)
{
	fx->req.kernel_size = fx->e->size;
	cr_expect_eq(pvh_load(&fx->mem, &fx->req, &fx->entry, &fx->err), -code,
		     "wanted failure: %s", msg);
	cr_expect_str_eq(fx->err.msg, msg);
}

Test(pvh, loads_segments_and_writes_start_info)
{
	struct fixture fx;
	setup(&fx);
	/* Dirty the bss area: the loader must zero it. */
	memset(guest_mem_ptr(&fx.mem, MiB, 0x2000), 0xee, 0x2000);
	cr_assert_eq(pvh_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0, "%s", fx.err.msg);
	cr_expect_eq(fx.entry.mode, BOOT_MODE_PROT32);
	cr_expect_eq(fx.entry.entry, ENTRY);
	cr_expect_eq(fx.entry.boot_arg, BOOT_PVH_INFO_ADDR);

	const uint8_t *seg = guest_mem_ptr(&fx.mem, MiB, 0x2000);
	cr_expect_eq(memcmp(seg, fx.e->bytes + DATA_OFF, 0x100), 0, "file bytes copied");
	for (unsigned i = 0x100; i < 0x2000; i++)
		cr_assert_eq(seg[i], 0, "byte 0x%x past p_filesz zeroed", i);

	struct hvm_start_info si;
	cr_assert(guest_mem_read(&fx.mem, BOOT_PVH_INFO_ADDR, &si, sizeof(si)));
	cr_expect_eq(si.magic, 0x336ec578);
	cr_expect_eq(si.version, 1);
	cr_expect_eq(si.nr_modules, 0);
	cr_expect_eq(si.modlist_paddr, 0);
	cr_expect_eq(si.rsdp_paddr, 0);
	cr_expect_eq(si.cmdline_paddr, BOOT_CMDLINE_ADDR);
	cr_expect_str_eq((char *)guest_mem_ptr(&fx.mem, si.cmdline_paddr, 11), "test=hello");
	cr_assert_eq(si.memmap_entries, 4);
	struct hvm_memmap_table_entry mm[4];
	cr_assert(guest_mem_read(&fx.mem, si.memmap_paddr, mm, sizeof(mm)));
	cr_expect_eq(mm[0].addr, 0);
	cr_expect_eq(mm[0].type, E820_RAM);
	cr_expect_eq(mm[1].addr, 0x9FC00);
	cr_expect_eq(mm[1].type, E820_RESERVED);
	cr_expect_eq(mm[3].addr, MiB);
	cr_expect_eq(mm[3].size, 63 * MiB);
	cr_expect_eq(mm[3].type, E820_RAM);
	cr_expect_eq(mm[3].reserved, 0);
	teardown(&fx);
}

Test(pvh, initrd_is_module_0_high_in_ram)
{
	struct fixture fx;
	setup(&fx);
	static uint8_t initrd[5000];
	memset(initrd, 0x5a, sizeof(initrd));
	fx.req.initrd = initrd;
	fx.req.initrd_size = sizeof(initrd);
	cr_assert_eq(pvh_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0, "%s", fx.err.msg);
	struct hvm_start_info si;
	cr_assert(guest_mem_read(&fx.mem, BOOT_PVH_INFO_ADDR, &si, sizeof(si)));
	cr_assert_eq(si.nr_modules, 1);
	struct hvm_modlist_entry mod;
	cr_assert(guest_mem_read(&fx.mem, si.modlist_paddr, &mod, sizeof(mod)));
	cr_expect_eq(mod.size, sizeof(initrd));
	cr_expect_eq(mod.paddr, 64 * MiB - 0x2000, "page aligned at the top of RAM");
	cr_expect_eq(mod.cmdline_paddr, 0);
	cr_expect_eq(memcmp(guest_mem_ptr(&fx.mem, mod.paddr, sizeof(initrd)), initrd,
			    sizeof(initrd)), 0);
	teardown(&fx);
}

Test(pvh, initrd_skips_below_a_segment_at_the_top_of_ram)
{
	struct fixture fx;
	setup(&fx);
	/* A second segment occupying the last 2 MiB of RAM. */
	add_phdr(fx.e, (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = DATA_OFF, .p_paddr = 62 * MiB,
				     .p_filesz = 0, .p_memsz = 2 * MiB });
	static uint8_t initrd[4096];
	fx.req.initrd = initrd;
	fx.req.initrd_size = sizeof(initrd);
	cr_assert_eq(pvh_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0, "%s", fx.err.msg);
	struct hvm_modlist_entry mod;
	cr_assert(guest_mem_read(&fx.mem, PVH_MODLIST_ADDR, &mod, sizeof(mod)));
	cr_expect_eq(mod.paddr, 62 * MiB - 4096);
	teardown(&fx);
}

Test(pvh, rejects_initrd_larger_than_free_ram)
{
	struct fixture fx;
	setup(&fx);
	fx.req.initrd = fx.e->bytes;   /* contents never read */
	fx.req.initrd_size = 63 * MiB;
	expect_load_fails(&fx, E2BIG,
			  "initrd of 66060288 bytes does not fit in guest RAM below 0x4000000 next to the kernel");
	teardown(&fx);
}

Test(pvh, accepts_8_byte_entry_descriptor)
{
	struct fixture fx;
	setup(&fx);
	uint64_t entry = ENTRY + 4;
	size_t len = put_note(fx.e, NOTE_OFF, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, &entry, 8);
	phdr(fx.e, 1)->p_filesz = len;
	cr_assert_eq(pvh_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0, "%s", fx.err.msg);
	cr_expect_eq(fx.entry.entry, ENTRY + 4);
	teardown(&fx);
}

Test(pvh, finds_note_in_sht_note_section_without_pt_note)
{
	struct fixture fx;
	setup(&fx);
	phdr(fx.e, 1)->p_type = PT_NULL;
	/* Section headers at 0x2000: a null section and one SHT_NOTE. */
	Elf64_Shdr sh[2] = { { 0 }, { .sh_type = SHT_NOTE, .sh_offset = NOTE_OFF,
				      .sh_size = phdr(fx.e, 1)->p_filesz, .sh_addralign = 4 } };
	memcpy(fx.e->bytes + 0x2000, sh, sizeof(sh));
	ehdr(fx.e)->e_shoff = 0x2000;
	ehdr(fx.e)->e_shnum = 2;
	ehdr(fx.e)->e_shentsize = sizeof(Elf64_Shdr);
	uint32_t entry;
	cr_assert_eq(pvh_find_entry(fx.e->bytes, fx.e->size, "elf", &entry, &fx.err), 0, "%s",
		     fx.err.msg);
	cr_expect_eq(entry, ENTRY);
	teardown(&fx);
}

Test(pvh, loads_elf32)
{
	struct fixture fx;
	setup(&fx);
	memset(fx.e->bytes, 0, NOTE_OFF);
	Elf32_Ehdr h = { .e_type = ET_EXEC, .e_machine = EM_386, .e_version = EV_CURRENT,
			 .e_phoff = sizeof(Elf32_Ehdr), .e_ehsize = sizeof(Elf32_Ehdr),
			 .e_phentsize = sizeof(Elf32_Phdr), .e_phnum = 2 };
	memcpy(h.e_ident, ELFMAG, SELFMAG);
	h.e_ident[EI_CLASS] = ELFCLASS32;
	h.e_ident[EI_DATA] = ELFDATA2LSB;
	Elf32_Phdr ph[2] = {
		{ .p_type = PT_LOAD, .p_offset = DATA_OFF, .p_paddr = MiB, .p_filesz = 0x100,
		  .p_memsz = 0x1000 },
		{ .p_type = PT_NOTE, .p_offset = NOTE_OFF, .p_filesz = 0x40, .p_align = 4 },
	};
	memcpy(fx.e->bytes, &h, sizeof(h));
	memcpy(fx.e->bytes + sizeof(h), ph, sizeof(ph));
	cr_assert_eq(pvh_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0, "%s", fx.err.msg);
	cr_expect_eq(fx.entry.entry, ENTRY);
	teardown(&fx);
}

Test(pvh, rejects_truncated_header)
{
	struct fixture fx;
	setup(&fx);
	fx.e->size = 40;
	expect_load_fails(&fx, ENOEXEC, "elf: truncated ELF header (40 bytes)");
	teardown(&fx);
}

Test(pvh, rejects_non_elf)
{
	struct fixture fx;
	setup(&fx);
	fx.e->bytes[1] = 'X';
	expect_load_fails(&fx, ENOEXEC, "elf: not an ELF file");
	teardown(&fx);
}

Test(pvh, rejects_wrong_machine)
{
	struct fixture fx;
	setup(&fx);
	ehdr(fx.e)->e_machine = EM_AARCH64;
	expect_load_fails(&fx, ENOEXEC, "elf: ELF machine 183 is not x86-64");
	teardown(&fx);
}

Test(pvh, rejects_program_headers_outside_file)
{
	struct fixture fx;
	setup(&fx);
	ehdr(fx.e)->e_phoff = ELF_BYTES - sizeof(Elf64_Phdr);
	expect_load_fails(&fx, ENOEXEC,
			  "elf: program headers (2 at offset 0x2fc8) lie outside the 12288-byte file");
	ehdr(fx.e)->e_phoff = UINT64_MAX - 8;
	expect_load_fails(&fx, ENOEXEC,
			  "elf: program headers (2 at offset 0xfffffffffffffff7) lie outside the 12288-byte file");
	teardown(&fx);
}

Test(pvh, rejects_segment_data_outside_file)
{
	struct fixture fx;
	setup(&fx);
	phdr(fx.e, 0)->p_offset = ELF_BYTES - 0x80;
	expect_load_fails(&fx, ENOEXEC,
			  "elf: segment 0 (offset 0x2f80, 0x100 bytes) lies outside the 12288-byte file");
	teardown(&fx);
}

Test(pvh, rejects_segment_outside_ram)
{
	struct fixture fx;
	setup(&fx);
	phdr(fx.e, 0)->p_paddr = 64 * MiB - 0x1000;
	expect_load_fails(&fx, ENOMEM, "elf: segment 0 [0x3fff000, +0x2000) is not inside guest RAM");
	phdr(fx.e, 0)->p_paddr = UINT64_MAX - 0xfff;
	expect_load_fails(&fx, ENOMEM,
			  "elf: segment 0 [0xfffffffffffff000, +0x2000) is not inside guest RAM");
	teardown(&fx);
}

Test(pvh, rejects_overlapping_segments)
{
	struct fixture fx;
	setup(&fx);
	add_phdr(fx.e, (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = DATA_OFF,
				     .p_paddr = MiB + 0x1fff, .p_filesz = 0x10, .p_memsz = 0x10 });
	expect_load_fails(&fx, ENOEXEC, "elf: segment 2 at 0x101fff overlaps the one at 0x100000");
	teardown(&fx);
}

Test(pvh, rejects_segment_below_1_mib)
{
	struct fixture fx;
	setup(&fx);
	phdr(fx.e, 0)->p_paddr = 0xff000;
	expect_load_fails(&fx, ENOEXEC,
			  "elf: segment 0 at 0xff000 is below 1 MiB, where the VMM keeps its boot structures");
	teardown(&fx);
}

Test(pvh, rejects_filesz_larger_than_memsz)
{
	struct fixture fx;
	setup(&fx);
	phdr(fx.e, 0)->p_filesz = 0x2001;
	expect_load_fails(&fx, ENOEXEC,
			  "elf: segment 0 has p_filesz 0x2001 larger than p_memsz 0x2000");
	teardown(&fx);
}

Test(pvh, rejects_elf_without_pvh_note)
{
	struct fixture fx;
	setup(&fx);
	phdr(fx.e, 1)->p_filesz = 12 + 4 + 8;   /* only the GNU note */
	expect_load_fails(&fx, ENOEXEC,
			  "elf: ELF kernel has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY); build Linux with CONFIG_PVH=y");
	teardown(&fx);
}

Test(pvh, rejects_bad_pvh_note_size)
{
	struct fixture fx;
	setup(&fx);
	uint8_t desc[6] = { 0 };
	size_t len = put_note(fx.e, NOTE_OFF, "Xen", XEN_ELFNOTE_PHYS32_ENTRY, desc, 6);
	phdr(fx.e, 1)->p_filesz = len;
	expect_load_fails(&fx, ENOEXEC, "elf: PVH entry note has a 6-byte descriptor, expected 4 or 8");
	teardown(&fx);
}

Test(pvh, rejects_note_running_past_its_area)
{
	struct fixture fx;
	setup(&fx);
	uint32_t huge = 0xfffffff0;
	memcpy(fx.e->bytes + NOTE_OFF + 4, &huge, 4);   /* GNU note's descsz */
	expect_load_fails(&fx, ENOEXEC,
			  "elf: bad ELF note at 0x200: name 4 + desc 4294967280 bytes run past its area");
	teardown(&fx);
}

Test(pvh, rejects_note_area_outside_file)
{
	struct fixture fx;
	setup(&fx);
	phdr(fx.e, 1)->p_filesz = ELF_BYTES;
	expect_load_fails(&fx, ENOEXEC,
			  "elf: note area at 0x200 (+0x3000) lies outside the file");
	teardown(&fx);
}

Test(pvh, rejects_entry_outside_loaded_segments)
{
	struct fixture fx;
	setup(&fx);
	uint32_t entry = 0x200000;
	memcpy(fx.e->bytes + NOTE_OFF + 24 + 16, &entry, 4);   /* Xen note's descriptor */
	expect_load_fails(&fx, ENOEXEC, "elf: PVH entry 0x200000 is not inside any PT_LOAD segment");
	teardown(&fx);
}

Test(pvh, failed_load_leaves_guest_memory_untouched)
{
	struct fixture fx;
	setup(&fx);
	add_phdr(fx.e, (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = DATA_OFF, .p_paddr = 0x50000,
				     .p_filesz = 0x10, .p_memsz = 0x10 });
	cr_expect_lt(pvh_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0);
	const uint8_t *seg = guest_mem_ptr(&fx.mem, MiB, 0x100);
	for (unsigned i = 0; i < 0x100; i++)
		cr_assert_eq(seg[i], 0, "segment 0 not loaded");
	teardown(&fx);
}

/* ---- the device tree module ---- */

static uint8_t fake_dtb[3000];

static void give_fdt(struct fixture *fx)
{
	for (unsigned i = 0; i < sizeof(fake_dtb); i++)
		fake_dtb[i] = (uint8_t)(i * 7 + 1);
	fx->req.fdt = fake_dtb;
	fx->req.fdt_size = sizeof(fake_dtb);
}

static void read_modules(struct fixture *fx, struct hvm_start_info *si, struct hvm_modlist_entry *mods,
			 unsigned want)
{
	cr_assert(guest_mem_read(&fx->mem, BOOT_PVH_INFO_ADDR, si, sizeof(*si)));
	cr_assert_eq(si->nr_modules, want);
	cr_assert_eq(si->modlist_paddr, PVH_MODLIST_ADDR);
	cr_assert(guest_mem_read(&fx->mem, si->modlist_paddr, mods, want * sizeof(mods[0])));
}

static void expect_dtb_module(struct fixture *fx, const struct hvm_modlist_entry *mod)
{
	cr_expect_eq(mod->paddr, BOOT_FDT_ADDR);
	cr_expect_eq(mod->size, sizeof(fake_dtb));
	cr_assert_neq(mod->cmdline_paddr, 0, "the DTB module is named");
	cr_expect_str_eq((const char *)guest_mem_ptr(&fx->mem, mod->cmdline_paddr, 4), "dtb");
	cr_expect_eq(mod->reserved, 0);
	cr_expect_eq(memcmp(guest_mem_ptr(&fx->mem, mod->paddr, sizeof(fake_dtb)), fake_dtb,
			    sizeof(fake_dtb)), 0, "DTB bytes copied");
}

Test(pvh, dtb_is_module_1_after_the_initrd)
{
	struct fixture fx;
	setup(&fx);
	static uint8_t initrd[5000];
	fx.req.initrd = initrd;
	fx.req.initrd_size = sizeof(initrd);
	give_fdt(&fx);
	cr_assert_eq(pvh_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0, "%s", fx.err.msg);
	struct hvm_start_info si;
	struct hvm_modlist_entry mods[2];
	read_modules(&fx, &si, mods, 2);
	/* Module 0 stays the initrd: Linux takes it as such. */
	cr_expect_eq(mods[0].paddr, 64 * MiB - 0x2000);
	cr_expect_eq(mods[0].size, sizeof(initrd));
	cr_expect_eq(mods[0].cmdline_paddr, 0);
	expect_dtb_module(&fx, &mods[1]);
	teardown(&fx);
}

Test(pvh, dtb_without_initrd_follows_an_empty_module_0)
{
	struct fixture fx;
	setup(&fx);
	give_fdt(&fx);
	cr_assert_eq(pvh_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0, "%s", fx.err.msg);
	struct hvm_start_info si;
	struct hvm_modlist_entry mods[2];
	read_modules(&fx, &si, mods, 2);
	/* Linux reads paddr 0 / size 0 as "no initrd". */
	cr_expect_eq(mods[0].paddr, 0);
	cr_expect_eq(mods[0].size, 0);
	cr_expect_eq(mods[0].cmdline_paddr, 0);
	cr_expect_eq(mods[0].reserved, 0);
	expect_dtb_module(&fx, &mods[1]);
	/* The module list, memory map and module name do not overlap. */
	cr_expect_geq(si.memmap_paddr, PVH_MODLIST_ADDR + 2 * sizeof(mods[0]));
	cr_expect_geq(mods[1].cmdline_paddr, si.memmap_paddr + si.memmap_entries *
		      sizeof(struct hvm_memmap_table_entry));
	teardown(&fx);
}

Test(pvh, refuses_a_dtb_larger_than_its_slot_before_loading)
{
	struct fixture fx;
	setup(&fx);
	static uint8_t big[BOOT_FDT_MAX + 1];
	fx.req.fdt = big;
	fx.req.fdt_size = sizeof(big);
	expect_load_fails(&fx, E2BIG, "device tree of 65537 bytes: the PVH slot at 0x30000 holds 1 to 65536");
	const uint8_t *seg = guest_mem_ptr(&fx.mem, MiB, 0x100);
	for (unsigned i = 0; i < 0x100; i++)
		cr_assert_eq(seg[i], 0, "segment not loaded");
	struct hvm_start_info si;
	cr_assert(guest_mem_read(&fx.mem, BOOT_PVH_INFO_ADDR, &si, sizeof(si)));
	cr_expect_eq(si.magic, 0, "no start info written");
	teardown(&fx);
}

Test(boot, load_detects_pvh_elf)
{
	struct fixture fx;
	setup(&fx);
	fx.req.ncpus = 4;
	cr_assert_eq(boot_load(&fx.mem, &fx.req, &fx.entry, &fx.err), 0, "%s", fx.err.msg);
	cr_expect_eq(fx.entry.mode, BOOT_MODE_PROT32);
	cr_expect_eq(memcmp(guest_mem_ptr(&fx.mem, BOOT_MPTABLE_ADDR, 4), "_MP_", 4), 0);
	teardown(&fx);
}
