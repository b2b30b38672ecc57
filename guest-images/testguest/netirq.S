/* SPDX-License-Identifier: Apache-2.0 */
/* CPL0 handlers of the virtio-net interrupt (vector TG_NET_IRQ_VECTOR,
 * test option irq=1) and of the timer that bounds an idle=halt sleep.
 * Emulated under PVM, so each is a handful of instructions. The net one:
 * read InterruptStatus, write the same bits to InterruptACK (again while
 * new bits show up, at most 4 rounds, so a level line the VMM raises from
 * the status cannot stay high and swallow the next edge), count, LAPIC EOI,
 * iretq. The CPL3 loop watches tg_net_irq_count. */
#include "layout.h"

#define VIRTIO_MMIO_INTERRUPT_STATUS 0x060
#define VIRTIO_MMIO_INTERRUPT_ACK    0x064
#define LAPIC_EOI_ADDR               0xfee000b0

	.text
	.code64
	.globl tg_net_irq_entry
tg_net_irq_entry:
	pushq %rax
	pushq %rcx
	pushq %rdx
	movq tg_net_irq_mmio, %rdx              /* device window, 0: none */
	testq %rdx, %rdx
	jz 2f
	movl $4, %ecx
1:	movl VIRTIO_MMIO_INTERRUPT_STATUS(%rdx), %eax
	testl %eax, %eax
	jz 2f
	movl %eax, VIRTIO_MMIO_INTERRUPT_ACK(%rdx)
	orl %eax, tg_net_irq_status
	decl %ecx
	jnz 1b
2:	incq tg_net_irq_count
	movl $LAPIC_EOI_ADDR, %eax
	movl $0, (%rax)
	popq %rdx
	popq %rcx
	popq %rax
	iretq

/* CPL0 handler of the LAPIC timer that bounds an idle=halt sleep (vector
 * TG_WAKE_VECTOR): it only has to end the hlt, so EOI and return. */
	.globl tg_wake_entry
tg_wake_entry:
	pushq %rax
	movl $LAPIC_EOI_ADDR, %eax
	movl $0, (%rax)
	popq %rax
	iretq

	.data
	.balign 8
	.globl tg_net_irq_mmio, tg_net_irq_count, tg_net_irq_status
tg_net_irq_mmio:
	.quad 0
tg_net_irq_count:
	.quad 0
tg_net_irq_status:
	.long 0
	.long 0
