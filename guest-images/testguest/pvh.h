/* SPDX-License-Identifier: Apache-2.0 */
/* Xen PVH boot ABI (xen/include/public/arch-x86/hvm/start_info.h): what the
 * VMM hands the guest in EBX at the 32-bit entry. */
#ifndef TESTGUEST_PVH_H
#define TESTGUEST_PVH_H

#include <stdint.h>

#define HVM_START_MAGIC 0x336ec578

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;     /* NUL-terminated ASCII, 0 if none */
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;      /* version >= 1 */
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;     /* NUL-terminated, 0 if none; minivmm names its DTB "dtb" */
	uint64_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

/* The start info the VMM passed (main.c), for code that reads the modules. */
extern const struct hvm_start_info *tg_start_info;

#endif
