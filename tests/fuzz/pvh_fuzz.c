/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the PVH ELF loader (boot/pvh.c: pvh_find_entry, pvh_load;
 * boot_load in boot/boot.c picks it by the ELF magic) on fuzzed ELF32 and
 * ELF64 images into a small guest, with or without an initrd and RAM
 * above 4 GiB.
 *
 * The input is an 8-byte prefix (see fuzz_boot_setup) and the image.
 * Seeds come from the project's test guest (tests/fuzz/seeds.py).
 *
 * Checked: a failure is one line with its errno; finding the entry and
 * loading agree; after a successful load every PT_LOAD segment is in guest
 * RAM at or above 1 MiB holding its file bytes and zeros after them
 * (nothing written later clobbered it), the entry point lies in one, the
 * initrd is page-aligned in low RAM, intact and overlaps no segment, and
 * hvm_start_info, the module list and the memory map say so; the command
 * line is whole. */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "boot/e820.h"
#include "boot/pvh.h"
#include "tests/fuzz/fuzz_common.h"

static void check_error(int rc, const struct vmm_err *err)
{
	FUZZ_CHECK(rc < 0 && rc > -4096, "loader returned %d", rc);
	FUZZ_CHECK(err->code == -rc, "error code %d, returned %d", err->code, rc);
	FUZZ_CHECK(err->msg[0] && !strchr(err->msg, '\n'), "error message '%s' is not one line",
		   err->msg);
}

struct seg {
	uint64_t offset, filesz, paddr, memsz;
};

/* The PT_LOAD segments, read independently of pvh.c (the load succeeded,
 * so the headers are in the file; still checked). */
static unsigned load_segments(const uint8_t *f, size_t size, struct seg *out, unsigned max)
{
	bool is64 = f[EI_CLASS] == ELFCLASS64;
	uint64_t phoff;
	unsigned phnum, entsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	if (is64) {
		Elf64_Ehdr eh;
		memcpy(&eh, f, sizeof(eh));
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
	} else {
		Elf32_Ehdr eh;
		memcpy(&eh, f, sizeof(eh));
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
	}
	FUZZ_CHECK(phoff <= size && (uint64_t)phnum * entsize <= size - phoff,
		   "loaded an ELF whose program headers are outside the file");
	unsigned n = 0;
	for (unsigned i = 0; i < phnum; i++) {
		struct seg s;
		uint32_t type;
		const uint8_t *p = f + phoff + (uint64_t)i * entsize;
		if (is64) {
			Elf64_Phdr ph;
			memcpy(&ph, p, sizeof(ph));
			type = ph.p_type;
			s = (struct seg){ ph.p_offset, ph.p_filesz, ph.p_paddr, ph.p_memsz };
		} else {
			Elf32_Phdr ph;
			memcpy(&ph, p, sizeof(ph));
			type = ph.p_type;
			s = (struct seg){ ph.p_offset, ph.p_filesz, ph.p_paddr, ph.p_memsz };
		}
		if (type != PT_LOAD || s.memsz == 0)
			continue;
		FUZZ_CHECK(n < max, "loaded more than %u segments", max);
		out[n++] = s;
	}
	return n;
}

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return (unsigned __int128)a < (unsigned __int128)b + blen &&
	       (unsigned __int128)b < (unsigned __int128)a + alen;
}

static void check_loaded(const struct fuzz_boot *b, const struct boot_entry *e)
{
	FUZZ_CHECK(e->mode == BOOT_MODE_PROT32 && e->boot_arg == BOOT_PVH_INFO_ADDR, "entry mode %d",
		   e->mode);
	struct seg segs[PVH_MAX_SEGMENTS];
	unsigned n = load_segments(b->image, b->image_size, segs, PVH_MAX_SEGMENTS);
	FUZZ_CHECK(n > 0, "loaded an ELF without PT_LOAD segments");
	bool entry_in = false;
	for (unsigned i = 0; i < n; i++) {
		const struct seg *s = &segs[i];
		FUZZ_CHECK(s->paddr >= BOOT_KERNEL_MIN, "segment at 0x%llx below 1 MiB",
			   (unsigned long long)s->paddr);
		FUZZ_CHECK(s->filesz <= s->memsz && s->offset <= b->image_size &&
			   s->filesz <= b->image_size - s->offset, "segment %u outside the file", i);
		const uint8_t *p = guest_mem_ptr(&b->g.mem, s->paddr, s->memsz);
		FUZZ_CHECK(p, "segment %u [0x%llx, +0x%llx) not in guest RAM", i,
			   (unsigned long long)s->paddr, (unsigned long long)s->memsz);
		FUZZ_CHECK(memcmp(p, b->image + s->offset, s->filesz) == 0,
			   "segment %u at 0x%llx does not hold its file bytes (clobbered?)", i,
			   (unsigned long long)s->paddr);
		FUZZ_CHECK(fuzz_is_zero(p + s->filesz, s->memsz - s->filesz),
			   "segment %u is not zero past p_filesz", i);
		for (unsigned j = 0; j < i; j++)
			FUZZ_CHECK(!overlap(s->paddr, s->memsz, segs[j].paddr, segs[j].memsz),
				   "segments %u and %u overlap", j, i);
		entry_in |= e->entry >= s->paddr && e->entry - s->paddr < s->memsz;
	}
	FUZZ_CHECK(entry_in, "entry 0x%llx is in no segment", (unsigned long long)e->entry);

	struct hvm_start_info info;
	FUZZ_CHECK(guest_mem_read(&b->g.mem, BOOT_PVH_INFO_ADDR, &info, sizeof(info)), "start info");
	FUZZ_CHECK(info.magic == XEN_HVM_START_MAGIC && info.version == 1, "start info magic/version");
	FUZZ_CHECK(info.cmdline_paddr == BOOT_CMDLINE_ADDR && info.rsdp_paddr == b->req.rsdp_addr,
		   "start info command line / RSDP");
	fuzz_boot_check_cmdline(b, BOOT_CMDLINE_MAX - 1);

	struct e820_range map[E820_MAX_RANGES];
	int nmap = e820_build(&b->g.mem, map, E820_MAX_RANGES, NULL);
	FUZZ_CHECK(nmap > 0 && info.memmap_entries == (uint32_t)nmap && info.memmap_paddr == PVH_MEMMAP_ADDR,
		   "memory map of %u entries at 0x%llx", info.memmap_entries,
		   (unsigned long long)info.memmap_paddr);
	for (int i = 0; i < nmap; i++) {
		struct hvm_memmap_table_entry m;
		FUZZ_CHECK(guest_mem_read(&b->g.mem, PVH_MEMMAP_ADDR + (uint64_t)i * sizeof(m), &m, sizeof(m)),
			   "memmap entry %d", i);
		FUZZ_CHECK(m.addr == map[i].addr && m.size == map[i].size && m.type == map[i].type,
			   "memmap entry %d", i);
	}

	if (!b->req.initrd) {
		FUZZ_CHECK(info.nr_modules == 0, "%u modules without an initrd", info.nr_modules);
		return;
	}
	FUZZ_CHECK(info.nr_modules == 1 && info.modlist_paddr == PVH_MODLIST_ADDR, "module list");
	struct hvm_modlist_entry mod;
	FUZZ_CHECK(guest_mem_read(&b->g.mem, PVH_MODLIST_ADDR, &mod, sizeof(mod)), "module 0");
	FUZZ_CHECK(mod.size == b->req.initrd_size && mod.paddr % 4096 == 0 && mod.paddr >= BOOT_KERNEL_MIN &&
		   (unsigned __int128)mod.paddr + mod.size <= guest_mem_low_end(&b->g.mem),
		   "initrd [0x%llx, +0x%llx)", (unsigned long long)mod.paddr, (unsigned long long)mod.size);
	for (unsigned i = 0; i < n; i++)
		FUZZ_CHECK(!overlap(mod.paddr, mod.size, segs[i].paddr, segs[i].memsz),
			   "initrd at 0x%llx overlaps segment %u", (unsigned long long)mod.paddr, i);
	fuzz_boot_check_bytes(b, mod.paddr, b->initrd, mod.size, "initrd");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_boot b;
	if (!fuzz_boot_setup(&b, data, size))
		return 0;
	uint32_t entry = 0;
	struct vmm_err ferr = { 0 }, err = { 0 };
	int frc = pvh_find_entry(b.image, b.image_size, "fuzz.elf", &entry, &ferr);
	if (frc < 0)
		check_error(frc, &ferr);

	struct boot_entry e;
	int rc = b.via_boot_load ? boot_load(&b.g.mem, &b.req, &e, &err)
				 : pvh_load(&b.g.mem, &b.req, &e, &err);
	if (fuzz_tracing())
		fprintf(stderr, "%s: %d %s\n", b.via_boot_load ? "boot_load" : "pvh_load", rc,
			rc < 0 ? err.msg : "loaded");
	if (rc < 0)
		check_error(rc, &err);
	else if (e.mode == BOOT_MODE_PROT32) {
		FUZZ_CHECK(frc == 0 && entry == e.entry, "loaded entry 0x%llx, pvh_find_entry says %d / 0x%x",
			   (unsigned long long)e.entry, frc, entry);
		check_loaded(&b, &e);
	}
	fuzz_boot_free(&b);
	return 0;
}
