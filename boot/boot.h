/* SPDX-License-Identifier: Apache-2.0 */
/* What every boot path produces: the CPU state to enter the guest with.
 *
 * A loader (bzimage.c, pvh.c) puts the kernel, initrd, command line and boot
 * structures into guest memory and fills a struct boot_entry; cpu_x86.c then
 * turns that into vCPU registers. Loaders never touch KVM. */
#ifndef MINIVMM_BOOT_BOOT_H
#define MINIVMM_BOOT_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/guest_mem.h"

enum boot_cpu_mode {
	/* Linux 64-bit boot protocol: long mode, identity-mapped page tables
	 * built by the VMM, flat __BOOT_CS/__BOOT_DS, RSI = zero page. */
	BOOT_MODE_LONG64,
	/* PVH: 32-bit protected mode, paging off, flat segments,
	 * EBX = hvm_start_info. */
	BOOT_MODE_PROT32,
};

struct boot_entry {
	enum boot_cpu_mode mode;
	uint64_t entry;      /* RIP / EIP to start at */
	uint64_t boot_arg;   /* RSI (LONG64) or EBX (PROT32) */
};

/* What the user asked to boot. */
struct boot_request {
	const uint8_t *kernel;    /* whole kernel file in host memory */
	size_t kernel_size;
	const char *kernel_name;  /* for error messages */
	const uint8_t *initrd;    /* NULL when there is none */
	size_t initrd_size;
	const char *cmdline;      /* final command line, already assembled */
	unsigned ncpus;           /* vCPUs the firmware tables must describe */
	unsigned ioapic_id;       /* what the IOAPIC's ID register reads */
	unsigned ioapic_version;  /* what the IOAPIC's version register reads */
	uint64_t rsdp_addr;       /* ACPI RSDP the VMM wrote, 0 for none (no
				   * ACPI yet): passed as boot_params
				   * acpi_rsdp_addr / hvm_start_info rsdp_paddr */
	const void *fdt;          /* device tree (boot/fdt.h), NULL for none: PVH
				   * guests get it as a module after the initrd,
				   * bzImage guests do not get it (docs/boot.md) */
	size_t fdt_size;          /* at most BOOT_FDT_MAX */
};

/* Fixed guest-physical layout of the structures the VMM writes below 1 MiB.
 * Kernels and PVH segments are loaded at or above BOOT_KERNEL_MIN. */
#define BOOT_GDT_ADDR        0x0500ULL   /* GDT for the LONG64 entry */
#define BOOT_PVH_INFO_ADDR   0x6000ULL   /* hvm_start_info, modlist, memmap */
#define BOOT_ZERO_PAGE_ADDR  0x7000ULL   /* struct boot_params */
#define BOOT_PML4_ADDR       0x9000ULL   /* identity page tables (LONG64) */
#define BOOT_PDPT_ADDR       0xA000ULL
#define BOOT_PD_ADDR         0xB000ULL   /* 4 pages: 4 GiB of 2 MiB pages */
#define BOOT_CMDLINE_ADDR    0x20000ULL
#define BOOT_CMDLINE_MAX     4096        /* bytes including the NUL */
#define BOOT_FDT_ADDR        0x30000ULL  /* device tree (PVH module) */
#define BOOT_FDT_MAX         0x10000     /* 64 KiB, up to 0x3FFFF */
#define BOOT_MPTABLE_ADDR    0x9FC00ULL  /* last KiB of base memory (EBDA) */
#define BOOT_EBDA_START      0x9FC00ULL
#define BOOT_BIOS_START      0xF0000ULL  /* reserved up to 1 MiB */
#define BOOT_MPTABLE_HIGH_ADDR 0xF0000ULL /* MP config table when it outgrows
					    * the EBDA (more than 37 vCPUs) */
#define BOOT_KERNEL_MIN      0x100000ULL
#define BOOT_BZIMAGE_LOAD    0x100000ULL /* protected-mode kernel of a bzImage */

/* Detect the kernel format (bzImage or ELF with a PVH note) and load it. */
int boot_load(const struct guest_mem *mem, const struct boot_request *req,
	      struct boot_entry *entry, struct vmm_err *err);

#endif
