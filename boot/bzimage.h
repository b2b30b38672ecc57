/* SPDX-License-Identifier: Apache-2.0 */
/* Linux bzImage, started through the 64-bit boot protocol
 * (Documentation/arch/x86/boot.rst): the protected-mode kernel goes to
 * BOOT_BZIMAGE_LOAD, the zero page (struct boot_params) to
 * BOOT_ZERO_PAGE_ADDR, and the vCPU enters at load address + 0x200 in long
 * mode with RSI pointing at the zero page. The real-mode setup code is never
 * run. */
#ifndef MINIVMM_BOOT_BZIMAGE_H
#define MINIVMM_BOOT_BZIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "base/error.h"
#include "base/guest_mem.h"

#define BZIMAGE_MIN_PROTOCOL 0x020c   /* 2.12: xloadflags, XLF_KERNEL_64 */
#define BZIMAGE_HEADER_MIN   0x264    /* file offset just past init_size */
#define BZIMAGE_ENTRY64      0x200    /* 64-bit entry: load address + 0x200 */

/* What the setup header says, validated by bzimage_parse(). */
struct bzimage_info {
	uint16_t version;          /* boot protocol, 0x020c or newer */
	uint8_t loadflags;
	uint16_t xloadflags;
	uint32_t setup_size;       /* (setup_sects + 1) * 512, setup_sects 0 = 4 */
	uint32_t header_end;       /* 0x202 + byte at 0x201: end of the header */
	uint64_t kernel_size;      /* protected-mode kernel, syssize * 16 bytes */
	uint32_t init_size;        /* memory the kernel needs from its run address */
	uint32_t initrd_addr_max;  /* highest byte the initrd may occupy */
	uint32_t cmdline_size;     /* longest command line, without the NUL */
	uint32_t kernel_alignment;
	uint8_t relocatable;
	uint64_t pref_address;
};

/* Check that image is a bzImage this loader can start and describe it.
 * name prefixes every error message. */
int bzimage_parse(const uint8_t *image, size_t size, const char *name,
		  struct bzimage_info *info, struct vmm_err *err);

/* Guest-physical end of the memory the kernel claims before it has read the
 * e820 map: it decompresses to max(load address aligned up to
 * kernel_alignment, pref_address) when relocatable, pref_address otherwise,
 * and needs init_size bytes from there. The initrd goes above this. */
uint64_t bzimage_kernel_end(const struct bzimage_info *info, uint64_t load_addr);
/* (UINT64_MAX when that end does not fit in 64 bits: pref_address is
 * whatever the file says.) */

/* Load req->kernel (a bzImage), the initrd and command line, and write the
 * zero page; fill entry for BOOT_MODE_LONG64. Does not write the MP table
 * (boot_load does). */
int bzimage_load(const struct guest_mem *mem, const struct boot_request *req,
		 struct boot_entry *entry, struct vmm_err *err);

#endif
