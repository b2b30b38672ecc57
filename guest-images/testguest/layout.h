/* SPDX-License-Identifier: Apache-2.0 */
/* Fixed layout of the test guest, shared by the assembly, the linker script
 * and the C code. Everything here is guest-internal; constants the VMM also
 * needs live in include/minivmm_abi.h.
 *
 * Some tables (IDT gates, TSS descriptors) split addresses into bit fields,
 * which the assembler can only do for absolute values. So the interrupt
 * stubs and the TSS array sit at fixed addresses chosen here, and the linker
 * script asserts that they really land there. */
#ifndef TESTGUEST_LAYOUT_H
#define TESTGUEST_LAYOUT_H

/* Image: one RX segment from 1 MiB (interrupt stubs first), one RW segment
 * from 2 MiB (TSS array first). */
#define TG_TEXT_BASE        0x100000
#define TG_VECTORS_BASE     TG_TEXT_BASE   /* 256 stubs of 16 bytes */
#define TG_VECTOR_STUB_SIZE 16
#define TG_DATA_BASE        0x200000
#define TG_TSS_BASE         TG_DATA_BASE

/* Most vCPUs the guest can run: one TSS descriptor and stacks each. */
#define TG_MAX_CPUS         64

/* 64-bit TSSes of 104 bytes (one per CPU, 128 apart), then ONE I/O
 * permission bitmap they all point at: all zero, 8 KiB (every port allowed
 * at CPL3), then the 0xff byte the CPU requires after it. A TSS's bitmap
 * may sit anywhere within 64 KiB of its base, and sharing it keeps the
 * guest image (and the VMM's resident memory) 504 KiB smaller. */
#define TG_TSS_SIZE         104
#define TG_TSS_STRIDE       128
#define TG_TSS_IOMAP_SIZE   8192
#define TG_TSS_IOMAP        (TG_MAX_CPUS * TG_TSS_STRIDE)   /* offset from TG_TSS_BASE */
#define TG_TSS_IOMAP_OFF(cpu) (TG_TSS_IOMAP - (cpu) * TG_TSS_STRIDE)
#define TG_TSS_LIMIT(cpu)   (TG_TSS_IOMAP_OFF(cpu) + TG_TSS_IOMAP_SIZE)  /* last byte: 0xff */
#define TG_TSS_AREA_SIZE    (TG_TSS_IOMAP + TG_TSS_IOMAP_SIZE + 1)

/* GDT selectors. */
#define TG_SEL_KCODE64      0x08
#define TG_SEL_KDATA        0x10
#define TG_SEL_KCODE32      0x18
#define TG_SEL_UDATA        0x20    /* DPL 3; use with RPL 3: 0x23 */
#define TG_SEL_UCODE64      0x28    /* DPL 3; use with RPL 3: 0x2b */
#define TG_SEL_TSS0         0x30    /* 16 bytes per CPU */
#define TG_GDT_ENTRIES      (6 + 2 * TG_MAX_CPUS)
#define TG_GDT_SIZE         (8 * TG_GDT_ENTRIES)

/* Stacks, per CPU. Powers of two: the CPL0 stub computes tops by shifting. */
#define TG_KSTACK_SHIFT     12      /* CPL0 stack (exceptions, syscalls) */
#define TG_USTACK_SHIFT     14      /* CPL3 stack */

/* Where the AP real-mode trampoline is copied at run time. The VMM keeps
 * 0x8000-0x8fff free; the SIPI vector is the page number. */
#define TG_TRAMPOLINE_ADDR  0x8000
#define TG_SIPI_VECTOR      (TG_TRAMPOLINE_ADDR >> 12)

/* CPL3 -> CPL0 requests. The portable way is `int3` with RAX =
 * (TG_SYSCALL_MAGIC << 32) | number: PVM raises #UD for `int n` with
 * ordinary vectors (0x30, 0x80, ...), while int3 works everywhere. An int3 without the magic stays an
 * ordinary breakpoint exception. `int $TG_SYSCALL_VECTOR` (DPL 3 gate, RAX =
 * number) does the same on VMX/SVM hosts and under QEMU. */
#define TG_SYSCALL_VECTOR   0x80
#define TG_SYSCALL_MAGIC    0x74677379  /* "tgsy" */
#define TG_SYS_TRIPLE_FAULT 0       /* load an empty IDT, then #UD */
#define TG_SYS_HALT         1       /* cli; hlt forever (park this vCPU) */
#define TG_SYS_CPUID        2       /* CPUID leaf EDI, subleaf ESI at CPL0 -> EAX..EDX */
#define TG_SYS_WAIT_IRQ     3       /* sti; hlt unless tg_net_irq_count moved from RDI */

#define TG_SPURIOUS_VECTOR  0xff    /* LAPIC spurious vector; handler: iretq */
#define TG_NET_IRQ_VECTOR   0x40    /* virtio-net interrupt (irq=1): netirq.S */
#define TG_WAKE_VECTOR      0x41    /* LAPIC timer bounding a halt (idle=halt): netirq.S */

#define TG_RFLAGS_USER      0x202   /* IF=1, reserved bit 1 */
#define TG_CR0_LONG         0x80010033  /* PG WP NE ET MP PE; CD/NW clear */
#define TG_CR4_PAE          0x20
#define TG_MSR_EFER         0xc0000080
#define TG_EFER_LME         0x100
#define TG_MSR_APIC_BASE    0x1b

#endif
