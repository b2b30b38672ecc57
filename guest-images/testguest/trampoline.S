/* SPDX-License-Identifier: Apache-2.0 */
/* AP real-mode trampoline. This blob is copied to TG_TRAMPOLINE_ADDR at run
 * time (smp.c) and entered by a SIPI with vector TG_SIPI_VECTOR, i.e. at
 * CS:IP = (TG_TRAMPOLINE_ADDR >> 4):0. It loads the guest's GDT, enables
 * protected mode and jumps to tg_ap_start32, which continues to long mode.
 * It must be position-independent except through TG_TRAMPOLINE_ADDR. */
#include "layout.h"

#define TRAMP(sym) (TG_TRAMPOLINE_ADDR + ((sym) - tg_trampoline_start))

	.section .rodata.trampoline, "a"
	.code16
	.globl tg_trampoline_start, tg_trampoline_end
tg_trampoline_start:
	cli
	cld
	xorw %ax, %ax
	movw %ax, %ds
	lgdtl TRAMP(tramp_gdtr)
	movl %cr0, %eax
	andl $~0x60000000, %eax                 /* caches on: clear CD, NW */
	orl $1, %eax                            /* PE */
	movl %eax, %cr0
	ljmpl $TG_SEL_KCODE32, $tg_ap_start32

	.balign 8
tramp_gdtr:
	.word TG_GDT_SIZE - 1
	.long tg_gdt
tg_trampoline_end:
	.code64
