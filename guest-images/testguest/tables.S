/* SPDX-License-Identifier: Apache-2.0 */
/* Static CPU tables, built entirely by the assembler so the CPL0 stub never
 * loops: interrupt stubs, IDT, GDT with one TSS descriptor per CPU, the TSS
 * array with I/O bitmaps, identity page tables for 4 GiB, and the stacks. */
#include "layout.h"

/* ---- Interrupt stubs: 256 x 16 bytes at TG_VECTORS_BASE ---------------- */
	.section .vectors, "ax"
	.code64
	.globl tg_vectors
tg_vectors:
	.set vec, 0
	.rept 256
	.balign TG_VECTOR_STUB_SIZE
	.if vec == TG_SPURIOUS_VECTOR
	iretq                           /* spurious: no EOI, nothing to do */
	.elseif vec == TG_SYSCALL_VECTOR
	jmp tg_syscall_entry
	.elseif vec == TG_NET_IRQ_VECTOR
	jmp tg_net_irq_entry            /* netirq.S */
	.elseif vec == TG_WAKE_VECTOR
	jmp tg_wake_entry               /* netirq.S */
	.elseif vec == 3
	jmp tg_int3_entry               /* breakpoint or magic syscall */
	.else
	/* Exceptions with an error code: 8, 10-14, 17, 21, 29, 30. */
	.if (vec == 8) || ((vec >= 10) && (vec <= 14)) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
	.else
	pushq $0
	.endif
	pushq $vec
	jmp tg_trap_common
	.endif
	.set vec, vec + 1
	.endr
	.balign TG_VECTOR_STUB_SIZE
	.globl tg_vectors_end
tg_vectors_end:

/* ---- IDT: 256 interrupt gates to the stubs ----------------------------- */
	.section .data.tables, "aw"
	.balign 16
	.globl tg_idt
tg_idt:
	.set vec, 0
	.rept 256
	.set off, TG_VECTORS_BASE + vec * TG_VECTOR_STUB_SIZE
	/* DPL 3 for int3, into and the syscall gate; DPL 0 for the rest. */
	.if (vec == 3) || (vec == 4) || (vec == TG_SYSCALL_VECTOR)
	.set attr, 0xee00               /* P, DPL 3, 64-bit interrupt gate */
	.else
	.set attr, 0x8e00               /* P, DPL 0, 64-bit interrupt gate */
	.endif
	.long (off & 0xffff) | (TG_SEL_KCODE64 << 16)
	.long attr | (off & 0xffff0000)
	.long 0                         /* offset 63:32 (below 4 GiB) */
	.long 0
	.set vec, vec + 1
	.endr
tg_idt_end:

	.balign 8
	.globl tg_idtr
tg_idtr:
	.word tg_idt_end - tg_idt - 1
	.quad tg_idt

/* ---- GDT ---------------------------------------------------------------- */
	.balign 16
	.globl tg_gdt
tg_gdt:
	.quad 0                         /* null */
	.quad 0x00af9a000000ffff        /* 0x08 kernel code, 64-bit */
	.quad 0x00cf92000000ffff        /* 0x10 kernel data */
	.quad 0x00cf9a000000ffff        /* 0x18 kernel code, 32-bit (AP trampoline) */
	.quad 0x00cff2000000ffff        /* 0x20 user data, DPL 3 */
	.quad 0x00affa000000ffff        /* 0x28 user code, 64-bit, DPL 3 */
	/* 0x30: one 16-byte available 64-bit TSS descriptor per CPU. ltr marks
	 * a descriptor busy, so CPUs cannot share one. */
	.set cpu, 0
	.rept TG_MAX_CPUS
	.set base, TG_TSS_BASE + cpu * TG_TSS_STRIDE
	.set limit, TG_TSS_LIMIT(cpu)
	.quad (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89 << 40) | (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56)
	.quad 0                         /* base 63:32 */
	.set cpu, cpu + 1
	.endr
tg_gdt_end:
	.if (tg_gdt_end - tg_gdt) != TG_GDT_SIZE
	.error "GDT size does not match TG_GDT_SIZE"
	.endif

	.balign 8
	.globl tg_gdtr
tg_gdtr:
	.word TG_GDT_SIZE - 1
	.quad tg_gdt

/* ---- TSS array at TG_TSS_BASE ------------------------------------------ */
	.section .tss, "aw"
	.globl tg_tss
tg_tss:
	.set cpu, 0
	.rept TG_MAX_CPUS
	.long 0                                 /* reserved */
	.quad tg_kstacks + ((cpu + 1) << TG_KSTACK_SHIFT)  /* RSP0 */
	.quad 0, 0                              /* RSP1, RSP2 */
	.quad 0                                 /* reserved */
	.quad 0, 0, 0, 0, 0, 0, 0               /* IST1-7 */
	.quad 0                                 /* reserved */
	.word 0                                 /* reserved */
	.word TG_TSS_IOMAP_OFF(cpu)             /* the shared I/O map below */
	.fill TG_TSS_STRIDE - TG_TSS_SIZE, 1, 0
	.set cpu, cpu + 1
	.endr
	/* The one I/O permission bitmap: every port allowed. */
	.fill TG_TSS_IOMAP_SIZE, 1, 0
	.byte 0xff                              /* required terminator */

/* ---- Identity page tables: 4 GiB in 2 MiB pages, U/S set everywhere ---- */
	.section .data.pagetables, "aw"
	.balign 4096
	.globl tg_pml4
tg_pml4:
	.quad tg_pdpt + 0x7                     /* P RW U */
	.fill 511, 8, 0
tg_pdpt:
	.quad tg_pd + 0x0000 + 0x7
	.quad tg_pd + 0x1000 + 0x7
	.quad tg_pd + 0x2000 + 0x7
	.quad tg_pd + 0x3000 + 0x7
	.fill 508, 8, 0
tg_pd:
	.set addr, 0
	.rept 2048
	/* P RW U PS; the top GiB (LAPIC, IOAPIC, MMIO windows) also PCD PWT. */
	.if addr >= 0xc0000000
	.quad addr | 0x9f
	.else
	.quad addr | 0x87
	.endif
	.set addr, addr + 0x200000
	.endr

/* ---- Stacks -------------------------------------------------------------- */
	.section .bss.stacks, "aw", @nobits
	.balign 4096
	.globl tg_kstacks, tg_ustacks
tg_kstacks:
	.skip TG_MAX_CPUS << TG_KSTACK_SHIFT
tg_ustacks:
	.skip TG_MAX_CPUS << TG_USTACK_SHIFT
