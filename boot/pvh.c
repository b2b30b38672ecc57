/* SPDX-License-Identifier: Apache-2.0 */
/* ELF loader for PVH kernels.
 *
 * The file is untrusted input: every offset and size read from it is checked
 * against the file size (or the guest RAM) before it is used, with additions
 * written so they cannot overflow. ELF64 and ELF32, little endian, x86. */
#include "boot/pvh.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "boot/cmdline.h"
#include "boot/e820.h"

#define PAGE_SIZE 0x1000ULL

_Static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info v1 is 56 bytes");
_Static_assert(sizeof(struct hvm_modlist_entry) == 32, "hvm_modlist_entry is 32 bytes");
_Static_assert(sizeof(struct hvm_memmap_table_entry) == 24, "memmap entry is 24 bytes");
_Static_assert(PVH_MODLIST_ADDR >= BOOT_PVH_INFO_ADDR + sizeof(struct hvm_start_info) &&
	       PVH_MEMMAP_ADDR >= PVH_MODLIST_ADDR + PVH_MAX_MODULES * sizeof(struct hvm_modlist_entry) &&
	       PVH_DTB_NAME_ADDR >= PVH_MEMMAP_ADDR +
		       E820_MAX_RANGES * sizeof(struct hvm_memmap_table_entry) &&
	       PVH_DTB_NAME_ADDR + sizeof(PVH_DTB_NAME) <= BOOT_PVH_INFO_ADDR + PAGE_SIZE,
	       "start info, module list, memory map and module name share one page");
_Static_assert(BOOT_FDT_ADDR >= BOOT_CMDLINE_ADDR + BOOT_CMDLINE_MAX &&
	       BOOT_FDT_ADDR + BOOT_FDT_MAX <= BOOT_EBDA_START,
	       "the device tree sits in base memory between the command line and the EBDA");

/* The ELF header fields the loader uses, for either class. */
struct elf_file {
	const uint8_t *data;
	size_t size;
	const char *name;
	bool is64;
	uint64_t phoff, shoff;
	unsigned phnum, shnum;
};

/* One program or section header, widened to 64 bits. */
struct elf_hdr {
	uint32_t type;
	uint64_t offset;
	uint64_t filesz;    /* section: sh_size */
	uint64_t paddr;
	uint64_t memsz;
	uint64_t align;
};

struct segment {
	uint64_t paddr, memsz;
	uint64_t offset, filesz;
};

/* [off, off+len) lies inside the file. */
static bool in_file(const struct elf_file *f, uint64_t off, uint64_t len)
{
	return off <= f->size && len <= f->size - off;
}

static bool ranges_overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;   /* callers checked both ends do not wrap */
}

static int elf_open(const uint8_t *data, size_t size, const char *name, struct elf_file *f,
		    struct vmm_err *err)
{
	*f = (struct elf_file){ .data = data, .size = size, .name = name };
	if (size < EI_NIDENT || memcmp(data, ELFMAG, SELFMAG) != 0)
		return vmm_err_set(err, ENOEXEC, "%s: not an ELF file", name);
	if (data[EI_CLASS] != ELFCLASS64 && data[EI_CLASS] != ELFCLASS32)
		return vmm_err_set(err, ENOEXEC, "%s: unknown ELF class %u", name, data[EI_CLASS]);
	if (data[EI_DATA] != ELFDATA2LSB)
		return vmm_err_set(err, ENOEXEC, "%s: ELF file is not little endian", name);
	f->is64 = data[EI_CLASS] == ELFCLASS64;

	uint16_t type, machine, phentsize, shentsize;
	size_t want_ph, want_sh;
	if (f->is64) {
		Elf64_Ehdr eh;
		if (size < sizeof(eh))
			return vmm_err_set(err, ENOEXEC, "%s: truncated ELF header (%zu bytes)", name, size);
		memcpy(&eh, data, sizeof(eh));
		type = eh.e_type; machine = eh.e_machine;
		f->phoff = eh.e_phoff; f->phnum = eh.e_phnum; phentsize = eh.e_phentsize;
		f->shoff = eh.e_shoff; f->shnum = eh.e_shnum; shentsize = eh.e_shentsize;
		want_ph = sizeof(Elf64_Phdr); want_sh = sizeof(Elf64_Shdr);
		if (machine != EM_X86_64)
			return vmm_err_set(err, ENOEXEC, "%s: ELF machine %u is not x86-64", name, machine);
	} else {
		Elf32_Ehdr eh;
		if (size < sizeof(eh))
			return vmm_err_set(err, ENOEXEC, "%s: truncated ELF header (%zu bytes)", name, size);
		memcpy(&eh, data, sizeof(eh));
		type = eh.e_type; machine = eh.e_machine;
		f->phoff = eh.e_phoff; f->phnum = eh.e_phnum; phentsize = eh.e_phentsize;
		f->shoff = eh.e_shoff; f->shnum = eh.e_shnum; shentsize = eh.e_shentsize;
		want_ph = sizeof(Elf32_Phdr); want_sh = sizeof(Elf32_Shdr);
		if (machine != EM_386 && machine != EM_X86_64)
			return vmm_err_set(err, ENOEXEC, "%s: ELF machine %u is not x86", name, machine);
	}
	if (type != ET_EXEC)
		return vmm_err_set(err, ENOEXEC, "%s: ELF type %u is not an executable (ET_EXEC)",
				   name, type);
	if (f->phnum == 0 || f->phnum == PN_XNUM)
		return vmm_err_set(err, ENOEXEC, "%s: ELF file has %s program headers", name,
				   f->phnum ? "too many (PN_XNUM)" : "no");
	if (phentsize != want_ph)
		return vmm_err_set(err, ENOEXEC, "%s: ELF e_phentsize %u, expected %zu",
				   name, phentsize, want_ph);
	if (!in_file(f, f->phoff, (uint64_t)f->phnum * phentsize))
		return vmm_err_set(err, ENOEXEC,
				   "%s: program headers (%u at offset 0x%llx) lie outside the %zu-byte file",
				   name, f->phnum, (unsigned long long)f->phoff, size);
	/* Section headers are optional (only used to look for notes): a file
	 * with unusable ones is treated as having none. */
	if (f->shoff == 0 || shentsize != want_sh ||
	    !in_file(f, f->shoff, (uint64_t)f->shnum * shentsize))
		f->shnum = 0;
	return 0;
}

/* Program header i; elf_open checked the table lies inside the file. */
static struct elf_hdr elf_phdr(const struct elf_file *f, unsigned i)
{
	if (f->is64) {
		Elf64_Phdr ph;
		memcpy(&ph, f->data + f->phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
		return (struct elf_hdr){ ph.p_type, ph.p_offset, ph.p_filesz, ph.p_paddr,
					 ph.p_memsz, ph.p_align };
	}
	Elf32_Phdr ph;
	memcpy(&ph, f->data + f->phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
	return (struct elf_hdr){ ph.p_type, ph.p_offset, ph.p_filesz, ph.p_paddr,
				 ph.p_memsz, ph.p_align };
}

/* Section header i; elf_open checked the table lies inside the file. */
static struct elf_hdr elf_shdr(const struct elf_file *f, unsigned i)
{
	if (f->is64) {
		Elf64_Shdr sh;
		memcpy(&sh, f->data + f->shoff + (uint64_t)i * sizeof(sh), sizeof(sh));
		return (struct elf_hdr){ .type = sh.sh_type, .offset = sh.sh_offset,
					 .filesz = sh.sh_size, .align = sh.sh_addralign };
	}
	Elf32_Shdr sh;
	memcpy(&sh, f->data + f->shoff + (uint64_t)i * sizeof(sh), sizeof(sh));
	return (struct elf_hdr){ .type = sh.sh_type, .offset = sh.sh_offset,
				 .filesz = sh.sh_size, .align = sh.sh_addralign };
}

static uint32_t read_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Walk the notes in [off, off+len) of the file looking for the PVH entry.
 * Returns 1 and sets *entry when found, 0 when not, negative on a bad note. */
static int notes_find_pvh(const struct elf_file *f, uint64_t off, uint64_t len, uint64_t align,
			  uint32_t *entry, struct vmm_err *err)
{
	if (!in_file(f, off, len))
		return vmm_err_set(err, ENOEXEC, "%s: note area at 0x%llx (+0x%llx) lies outside the file",
				   f->name, (unsigned long long)off, (unsigned long long)len);
	const uint8_t *p = f->data + off;
	uint64_t a = align == 8 ? 8 : 4;   /* GNU notes: 4, 8 only when asked for */
	uint64_t pos = 0;
	/* Invariant: pos <= len, so len - pos is the number of bytes left. */
	while (len - pos >= 12) {
		uint32_t namesz = read_le32(p + pos);
		uint32_t descsz = read_le32(p + pos + 4);
		uint32_t type = read_le32(p + pos + 8);
		pos += 12;
		uint64_t name_pad = ((uint64_t)namesz + a - 1) & ~(a - 1);
		uint64_t desc_pad = ((uint64_t)descsz + a - 1) & ~(a - 1);
		if (name_pad > len - pos || descsz > len - pos - name_pad)
			return vmm_err_set(err, ENOEXEC,
					   "%s: bad ELF note at 0x%llx: name %u + desc %u bytes run past its area",
					   f->name, (unsigned long long)(off + pos - 12), namesz, descsz);
		const uint8_t *name = p + pos;
		const uint8_t *desc = p + pos + name_pad;
		/* The last note's padding may be cut off by the area's end. */
		pos += name_pad + (desc_pad < len - pos - name_pad ? desc_pad : len - pos - name_pad);

		if (namesz != 4 || memcmp(name, "Xen", 4) != 0 || type != XEN_ELFNOTE_PHYS32_ENTRY)
			continue;
		uint64_t value;
		if (descsz == 4) {
			value = read_le32(desc);
		} else if (descsz == 8) {
			value = read_le32(desc) | (uint64_t)read_le32(desc + 4) << 32;
		} else {
			return vmm_err_set(err, ENOEXEC,
					   "%s: PVH entry note has a %u-byte descriptor, expected 4 or 8",
					   f->name, descsz);
		}
		if (value > UINT32_MAX)
			return vmm_err_set(err, ENOEXEC, "%s: PVH entry 0x%llx is above 4 GiB",
					   f->name, (unsigned long long)value);
		*entry = (uint32_t)value;
		return 1;
	}
	return 0;
}

static int elf_find_pvh(const struct elf_file *f, uint32_t *entry, struct vmm_err *err)
{
	for (unsigned i = 0; i < f->phnum; i++) {
		struct elf_hdr ph = elf_phdr(f, i);
		if (ph.type != PT_NOTE)
			continue;
		int ret = notes_find_pvh(f, ph.offset, ph.filesz, ph.align, entry, err);
		if (ret != 0)
			return ret;
	}
	for (unsigned i = 0; i < f->shnum; i++) {
		struct elf_hdr sh = elf_shdr(f, i);
		if (sh.type != SHT_NOTE)
			continue;
		int ret = notes_find_pvh(f, sh.offset, sh.filesz, sh.align, entry, err);
		if (ret != 0)
			return ret;
	}
	return vmm_err_set(err, ENOEXEC,
			   "%s: ELF kernel has no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY); build Linux with CONFIG_PVH=y",
			   f->name);
}

int pvh_find_entry(const uint8_t *elf, size_t size, const char *name, uint32_t *entry,
		   struct vmm_err *err)
{
	struct elf_file f;
	int ret = elf_open(elf, size, name, &f, err);
	if (ret < 0)
		return ret;
	ret = elf_find_pvh(&f, entry, err);
	return ret < 0 ? ret : 0;
}

/* Check every PT_LOAD segment and collect them into segs. */
static int elf_segments(const struct guest_mem *mem, const struct elf_file *f,
			struct segment *segs, unsigned *nsegs, struct vmm_err *err)
{
	unsigned n = 0;
	for (unsigned i = 0; i < f->phnum; i++) {
		struct elf_hdr ph = elf_phdr(f, i);
		if (ph.type != PT_LOAD || ph.memsz == 0)
			continue;
		if (ph.filesz > ph.memsz)
			return vmm_err_set(err, ENOEXEC,
					   "%s: segment %u has p_filesz 0x%llx larger than p_memsz 0x%llx",
					   f->name, i, (unsigned long long)ph.filesz,
					   (unsigned long long)ph.memsz);
		if (!in_file(f, ph.offset, ph.filesz))
			return vmm_err_set(err, ENOEXEC,
					   "%s: segment %u (offset 0x%llx, 0x%llx bytes) lies outside the %zu-byte file",
					   f->name, i, (unsigned long long)ph.offset,
					   (unsigned long long)ph.filesz, f->size);
		if (ph.paddr < BOOT_KERNEL_MIN)
			return vmm_err_set(err, ENOEXEC,
					   "%s: segment %u at 0x%llx is below 1 MiB, where the VMM keeps its boot structures",
					   f->name, i, (unsigned long long)ph.paddr);
		if (!guest_mem_ptr(mem, ph.paddr, ph.memsz))
			return vmm_err_set(err, ENOMEM,
					   "%s: segment %u [0x%llx, +0x%llx) is not inside guest RAM",
					   f->name, i, (unsigned long long)ph.paddr,
					   (unsigned long long)ph.memsz);
		/* guest_mem_ptr accepted it: paddr + memsz does not wrap. */
		for (unsigned j = 0; j < n; j++)
			if (ranges_overlap(ph.paddr, ph.memsz, segs[j].paddr, segs[j].memsz))
				return vmm_err_set(err, ENOEXEC,
						   "%s: segment %u at 0x%llx overlaps the one at 0x%llx",
						   f->name, i, (unsigned long long)ph.paddr,
						   (unsigned long long)segs[j].paddr);
		if (n == PVH_MAX_SEGMENTS)
			return vmm_err_set(err, ENOEXEC, "%s: more than %u PT_LOAD segments",
					   f->name, PVH_MAX_SEGMENTS);
		segs[n++] = (struct segment){ ph.paddr, ph.memsz, ph.offset, ph.filesz };
	}
	if (n == 0)
		return vmm_err_set(err, ENOEXEC, "%s: ELF file has no PT_LOAD segment", f->name);
	*nsegs = n;
	return 0;
}

/* Highest page-aligned place for size bytes in low RAM, at or above
 * BOOT_KERNEL_MIN, overlapping no segment. */
static int pvh_place_initrd(const struct guest_mem *mem, const struct segment *segs,
			    unsigned nsegs, size_t size, uint64_t *addr, struct vmm_err *err)
{
	uint64_t top = guest_mem_low_end(mem);
	/* Each pass lowers top below an overlapping segment's start, and a
	 * segment can push it down only once: at most nsegs + 1 passes. */
	for (unsigned pass = 0; pass <= nsegs; pass++) {
		if (size > top || ((top - size) & ~(PAGE_SIZE - 1)) < BOOT_KERNEL_MIN)
			break;
		uint64_t at = (top - size) & ~(PAGE_SIZE - 1);
		bool clear = true;
		for (unsigned i = 0; i < nsegs; i++) {
			if (ranges_overlap(at, size, segs[i].paddr, segs[i].memsz)) {
				top = segs[i].paddr;
				clear = false;
				break;
			}
		}
		if (clear) {
			*addr = at;
			return 0;
		}
	}
	return vmm_err_set(err, E2BIG, "initrd of %zu bytes does not fit in guest RAM below 0x%llx "
			   "next to the kernel", size, (unsigned long long)guest_mem_low_end(mem));
}

/* The device tree must fit its slot, and the slot must be RAM. Checked
 * before anything is written. */
static int pvh_check_fdt(const struct guest_mem *mem, const struct boot_request *req,
			 struct vmm_err *err)
{
	if (!req->fdt)
		return 0;
	if (req->fdt_size == 0 || req->fdt_size > BOOT_FDT_MAX)
		return vmm_err_set(err, E2BIG, "device tree of %zu bytes: the PVH slot at 0x%llx holds 1 to %d",
				   req->fdt_size, (unsigned long long)BOOT_FDT_ADDR, BOOT_FDT_MAX);
	if (!guest_mem_ptr(mem, BOOT_FDT_ADDR, req->fdt_size))
		return vmm_err_set(err, EFAULT, "device tree at 0x%llx is outside guest RAM",
				   (unsigned long long)BOOT_FDT_ADDR);
	return 0;
}

/* The initrd (module 0) and the device tree (module 1, named PVH_DTB_NAME)
 * into guest memory, and the module list into info. Linux's PVH entry
 * (arch/x86/platform/pvh/enlighten.c) takes module 0 as its initrd
 * whatever it is, so the device tree is never module 0: without an initrd
 * module 0 is empty, which Linux reads as "no initrd" (ramdisk_image and
 * ramdisk_size 0). Linux ignores every other module. */
static int pvh_write_modules(const struct guest_mem *mem, const struct boot_request *req,
			     uint64_t initrd_addr, struct hvm_start_info *info, struct vmm_err *err)
{
	struct hvm_modlist_entry mods[PVH_MAX_MODULES];
	unsigned n = 0;
	memset(mods, 0, sizeof(mods));
	if (initrd_addr) {
		if (!guest_mem_write(mem, initrd_addr, req->initrd, req->initrd_size))
			return vmm_err_set(err, EFAULT, "initrd at 0x%llx is outside guest RAM",
					   (unsigned long long)initrd_addr);
		mods[n++] = (struct hvm_modlist_entry){ .paddr = initrd_addr, .size = req->initrd_size };
	}
	if (req->fdt) {
		if (n == 0)
			n++;   /* the empty module 0 (mods[] is zeroed) */
		/* pvh_check_fdt() proved the slot is RAM and big enough. */
		if (!guest_mem_write(mem, BOOT_FDT_ADDR, req->fdt, req->fdt_size) ||
		    !guest_mem_write(mem, PVH_DTB_NAME_ADDR, PVH_DTB_NAME, sizeof(PVH_DTB_NAME)))
			return vmm_err_set(err, EFAULT, "device tree at 0x%llx is outside guest RAM",
					   (unsigned long long)BOOT_FDT_ADDR);
		mods[n++] = (struct hvm_modlist_entry){ .paddr = BOOT_FDT_ADDR, .size = req->fdt_size,
							.cmdline_paddr = PVH_DTB_NAME_ADDR };
	}
	if (n == 0)
		return 0;
	if (!guest_mem_write(mem, PVH_MODLIST_ADDR, mods, n * sizeof(mods[0])))
		return vmm_err_set(err, EFAULT, "PVH module list is outside guest RAM");
	info->nr_modules = n;
	info->modlist_paddr = PVH_MODLIST_ADDR;
	return 0;
}

int pvh_load(const struct guest_mem *mem, const struct boot_request *req,
	     struct boot_entry *entry, struct vmm_err *err)
{
	const char *name = req->kernel_name ? req->kernel_name : "kernel";
	struct elf_file f;
	int ret = elf_open(req->kernel, req->kernel_size, name, &f, err);
	if (ret < 0)
		return ret;
	uint32_t pvh_entry;
	ret = elf_find_pvh(&f, &pvh_entry, err);
	if (ret < 0)
		return ret;
	struct segment segs[PVH_MAX_SEGMENTS];
	unsigned nsegs = 0;
	ret = elf_segments(mem, &f, segs, &nsegs, err);
	if (ret < 0)
		return ret;
	bool entry_loaded = false;
	for (unsigned i = 0; i < nsegs; i++)
		if (pvh_entry >= segs[i].paddr && pvh_entry - segs[i].paddr < segs[i].memsz)
			entry_loaded = true;
	if (!entry_loaded)
		return vmm_err_set(err, ENOEXEC, "%s: PVH entry 0x%x is not inside any PT_LOAD segment",
				   name, pvh_entry);

	ret = pvh_check_fdt(mem, req, err);
	if (ret < 0)
		return ret;
	uint64_t initrd_addr = 0;
	if (req->initrd && req->initrd_size) {
		ret = pvh_place_initrd(mem, segs, nsegs, req->initrd_size, &initrd_addr, err);
		if (ret < 0)
			return ret;
	}
	struct e820_range map[E820_MAX_RANGES];
	int nmap = e820_build(mem, map, E820_MAX_RANGES, err);
	if (nmap < 0)
		return nmap;
	ret = cmdline_write(mem, BOOT_CMDLINE_ADDR, req->cmdline, BOOT_CMDLINE_MAX - 1, err);
	if (ret < 0)
		return ret;

	/* Everything checked: load. elf_segments proved each file range and
	 * each guest range valid. */
	for (unsigned i = 0; i < nsegs; i++) {
		uint8_t *dst = guest_mem_ptr(mem, segs[i].paddr, segs[i].memsz);
		memcpy(dst, f.data + segs[i].offset, segs[i].filesz);
		/* The BSS: pages nobody wrote stay unallocated until the guest
		 * touches them. */
		guest_mem_zero(mem, segs[i].paddr + segs[i].filesz, segs[i].memsz - segs[i].filesz);
	}

	struct hvm_start_info info = {
		.magic = XEN_HVM_START_MAGIC,
		.version = 1,
		.cmdline_paddr = BOOT_CMDLINE_ADDR,
		.rsdp_paddr = req->rsdp_addr,   /* 0 until the VMM writes ACPI tables */
		.memmap_paddr = PVH_MEMMAP_ADDR,
		.memmap_entries = (uint32_t)nmap,
	};
	ret = pvh_write_modules(mem, req, initrd_addr, &info, err);
	if (ret < 0)
		return ret;
	struct hvm_memmap_table_entry memmap[E820_MAX_RANGES];
	memset(memmap, 0, sizeof(memmap));
	for (int i = 0; i < nmap; i++)
		memmap[i] = (struct hvm_memmap_table_entry){ map[i].addr, map[i].size, map[i].type, 0 };
	if (!guest_mem_write(mem, PVH_MEMMAP_ADDR, memmap, (size_t)nmap * sizeof(memmap[0])) ||
	    !guest_mem_write(mem, BOOT_PVH_INFO_ADDR, &info, sizeof(info)))
		return vmm_err_set(err, EFAULT, "PVH start info at 0x%llx is outside guest RAM",
				   (unsigned long long)BOOT_PVH_INFO_ADDR);

	*entry = (struct boot_entry){
		.mode = BOOT_MODE_PROT32,
		.entry = pvh_entry,
		.boot_arg = BOOT_PVH_INFO_ADDR,
	};
	return 0;
}
