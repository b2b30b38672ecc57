/* SPDX-License-Identifier: Apache-2.0 */
/* The CPL0 part of the test guest: PVH entry, the switch to long mode, the
 * AP entry after the real-mode trampoline, the CPL3 -> CPL0 syscall gate and
 * the common trap path. Everything here is straight-line code: under PVM,
 * CPL0 is emulated and thousands of times slower than CPL3. */
#include "layout.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18

/* PVH entry point note. The descriptor is 8 bytes like Linux's (QEMU reads a
 * native-size word); the entry address itself is 32-bit. */
	.section .note.pvh, "a", @note
	.balign 4
	.long 4                         /* namesz: "Xen\0" */
	.long 8                         /* descsz */
	.long XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.balign 4
	.quad tg_pvh_start32

/* Enter long mode from 32-bit protected mode (paging off): same identity
 * page tables for every CPU. Clobbers EAX, ECX, EDX. */
.macro enter_long_mode target
	movl $TG_CR4_PAE, %eax
	movl %eax, %cr4
	movl $tg_pml4, %eax
	movl %eax, %cr3
	movl $TG_MSR_EFER, %ecx
	rdmsr
	orl $TG_EFER_LME, %eax
	wrmsr
	movl $TG_CR0_LONG, %eax
	movl %eax, %cr0
	ljmpl $TG_SEL_KCODE64, $\target
.endm

/* Load the data segments with the kernel data selector. */
.macro load_kernel_data
	movl $TG_SEL_KDATA, %eax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorl %eax, %eax
	movw %ax, %fs
	movw %ax, %gs
.endm

/* Drop to CPL3: RSP is a CPL0 stack, \cpu a register holding the CPU index
 * (clobbered), RIP = \entry with RDI untouched. */
.macro iret_to_user cpu, entry
	pushq $(TG_SEL_UDATA | 3)               /* SS */
	addq $1, \cpu
	shlq $TG_USTACK_SHIFT, \cpu
	addq $tg_ustacks, \cpu
	pushq \cpu                              /* RSP: top of this CPU's stack */
	pushq $TG_RFLAGS_USER                   /* RFLAGS: IF=1 */
	pushq $(TG_SEL_UCODE64 | 3)             /* CS */
	pushq $\entry                           /* RIP */
	iretq
.endm

	.section .text.entry, "ax"
	.code32
	.globl tg_pvh_start32
tg_pvh_start32:
	/* PVH: flat 32-bit protected mode, paging off, EBX = hvm_start_info. */
	cli
	cld
	movl %ebx, %edi
	lgdtl tg_gdtr
	load_kernel_data
	enter_long_mode bsp_long64

	.code64
bsp_long64:
	load_kernel_data
	movq $(tg_kstacks + (1 << TG_KSTACK_SHIFT)), %rsp
	lidtq tg_idtr
	movw $TG_SEL_TSS0, %ax
	ltrw %ax

	/* Local APIC in xAPIC mode at its default address, globally enabled.
	 * (Leaving x2APIC needs a pass through "disabled".) */
	movl $TG_MSR_APIC_BASE, %ecx
	rdmsr
	testl $0x400, %eax
	jz 1f
	andl $~0xc00, %eax
	wrmsr
1:	andl $0xfff, %eax
	orl $0xfee00800, %eax
	wrmsr

	/* No stray ExtINT: mask the legacy PIC and the BSP's LVT0 (KVM sets it
	 * to ExtINT on vCPU 0). */
	movb $0xff, %al
	outb %al, $0x21
	outb %al, $0xa1
	movl $0xfee00350, %eax
	movl $0x00010000, (%rax)

	movl %edi, %edi                         /* RDI = hvm_start_info paddr */
	xorl %ecx, %ecx
	iret_to_user %rcx, tg_bsp_user_entry

/* APs arrive here from the trampoline in 32-bit protected mode with our GDT
 * loaded. tg_ap_boot_cpu holds the index the BSP gave this AP. */
	.code32
	.globl tg_ap_start32
tg_ap_start32:
	load_kernel_data
	enter_long_mode ap_long64

	.code64
ap_long64:
	load_kernel_data
	movl tg_ap_boot_cpu, %edi               /* RDI = CPU index */
	movq %rdi, %rax
	addq $1, %rax
	shlq $TG_KSTACK_SHIFT, %rax
	addq $tg_kstacks, %rax
	movq %rax, %rsp
	lidtq tg_idtr
	movq %rdi, %rax
	shlq $4, %rax
	addq $TG_SEL_TSS0, %rax
	ltrw %ax
	movq %rdi, %rcx
	iret_to_user %rcx, tg_ap_user_entry

/* ---- CPL3 entry points: RSP is 16-byte aligned here ---------------------- */
	.text
	.globl tg_bsp_user_entry
tg_bsp_user_entry:
	call tg_main
	ud2
	.globl tg_ap_user_entry
tg_ap_user_entry:
	call tg_ap_main
	ud2

/* ---- Syscalls: int3 with the magic in RAX[63:32], or the DPL 3 gate ----- */
	.section .text.entry, "ax"
	.globl tg_int3_entry
tg_int3_entry:
	pushq %rax
	shrq $32, %rax
	cmpl $TG_SYSCALL_MAGIC, %eax
	popq %rax                               /* flags survive the pop */
	jne 1f
	movl %eax, %eax                         /* RAX = number */
	jmp tg_syscall_entry
1:	pushq $0                                /* a real breakpoint */
	pushq $3
	jmp tg_trap_common

	.globl tg_syscall_entry
tg_syscall_entry:
	cmpq $TG_SYS_TRIPLE_FAULT, %rax
	je sys_triple_fault
	cmpq $TG_SYS_HALT, %rax
	je sys_halt
	cmpq $TG_SYS_CPUID, %rax
	je sys_cpuid
	cmpq $TG_SYS_WAIT_IRQ, %rax
	je sys_wait_irq
	movq $-1, %rax                          /* unknown: return -1 */
	iretq
sys_cpuid:
	movl %edi, %eax
	movl %esi, %ecx
	cpuid
	iretq
/* The gate cleared IF, so an interrupt after CPL3's last look at the count
 * is either counted already (compare) or pending until sti's shadow ends,
 * inside hlt: it wakes this vCPU, its handler runs, iretq restores CPL3. */
sys_wait_irq:
	cmpq tg_net_irq_count, %rdi
	jne 1f
	sti
	hlt
1:	iretq
sys_triple_fault:
	lidtq tg_empty_idtr                     /* limit 0: every vector faults */
	ud2                                     /* #UD -> #GP -> #DF -> shutdown */
sys_halt:
	cli
1:	hlt
	jmp 1b

/* ---- Common trap path: stub pushed error code (or 0) and vector ---------- */
	.globl tg_trap_common
tg_trap_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	cld
	movq %rsp, %rdi                         /* struct trap_frame * */
	call tg_trap
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp                          /* vector, error code */
	iretq

	.section .rodata
	.balign 8
tg_empty_idtr:
	.word 0
	.quad 0

	.section .bss
	.balign 4
	.globl tg_ap_boot_cpu
tg_ap_boot_cpu:
	.long 0
