/* SPDX-License-Identifier: Apache-2.0 */
/* ELF kernels started through the Xen PVH boot ABI (also how Linux boots
 * with CONFIG_PVH=y, and how the project's test guest boots).
 *
 * The PT_LOAD segments go to their physical addresses (p_paddr), the entry
 * point comes from a "Xen" ELF note of type XEN_ELFNOTE_PHYS32_ENTRY, and
 * the vCPU starts there in 32-bit protected mode, paging off, with EBX
 * pointing at a struct hvm_start_info at BOOT_PVH_INFO_ADDR. */
#ifndef MINIVMM_BOOT_PVH_H
#define MINIVMM_BOOT_PVH_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "base/error.h"
#include "base/guest_mem.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define XEN_HVM_START_MAGIC      0x336ec578

/* Xen public ABI, xen/include/public/arch-x86/hvm/start_info.h, version 1. */
struct hvm_start_info {
	uint32_t magic;            /* XEN_HVM_START_MAGIC */
	uint32_t version;          /* 1: memmap fields present */
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;    /* struct hvm_modlist_entry[nr_modules] */
	uint64_t cmdline_paddr;    /* NUL-terminated */
	uint64_t rsdp_paddr;       /* ACPI RSDP, 0 for none */
	uint64_t memmap_paddr;     /* struct hvm_memmap_table_entry[memmap_entries] */
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;    /* 0: no command line for this module */
	uint64_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;             /* E820_* values */
	uint32_t reserved;
};

/* Layout inside the page at BOOT_PVH_INFO_ADDR. */
#define PVH_MODLIST_ADDR  (BOOT_PVH_INFO_ADDR + 0x40)   /* PVH_MAX_MODULES entries */
#define PVH_MEMMAP_ADDR   (BOOT_PVH_INFO_ADDR + 0x80)
#define PVH_DTB_NAME_ADDR (BOOT_PVH_INFO_ADDR + 0x100)  /* the DTB module's cmdline */

/* Modules: 0 is the initrd (Linux's PVH entry takes module 0 as its initrd,
 * always), 1 the device tree, whose module cmdline is PVH_DTB_NAME. With a
 * device tree but no initrd, module 0 is empty (paddr 0, size 0): Linux
 * then sees ramdisk_image = ramdisk_size = 0, i.e. no initrd. */
#define PVH_MAX_MODULES   2
#define PVH_DTB_NAME      "dtb"

#define PVH_MAX_SEGMENTS  32   /* PT_LOAD segments accepted */

/* The PVH entry point of an ELF image, without loading anything: checks the
 * ELF header and program headers and walks the notes (PT_NOTE, then SHT_NOTE).
 * name prefixes every error message. */
int pvh_find_entry(const uint8_t *elf, size_t size, const char *name, uint32_t *entry,
		   struct vmm_err *err);

/* Load req->kernel (an x86 ELF with a PVH note), the initrd as module 0, the
 * device tree at BOOT_FDT_ADDR as module 1 and the command line, write the
 * hvm_start_info, and fill entry for
 * BOOT_MODE_PROT32. Nothing is written to guest memory unless every segment
 * checks out. Does not write the MP table (boot_load does). */
int pvh_load(const struct guest_mem *mem, const struct boot_request *req,
	     struct boot_entry *entry, struct vmm_err *err);

#endif
