/* SPDX-License-Identifier: Apache-2.0 */
#include "sys.h"

#include "delay.h"
#include "io.h"
#include "layout.h"
#include "minivmm_abi.h"

static long tg_syscall(long nr)
{
	long ret;

	/* int3, not int $TG_SYSCALL_VECTOR: see layout.h (PVM). */
	__asm__ volatile("int3" : "=a"(ret)
			 : "a"(((uint64_t)TG_SYSCALL_MAGIC << 32) | (uint64_t)nr)
			 : "memory");
	return ret;
}

void tg_cpuid_cpl0(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c,
		   uint32_t *d)
{
	uint64_t rax = ((uint64_t)TG_SYSCALL_MAGIC << 32) | TG_SYS_CPUID;
	uint64_t rbx, rcx, rdx;

	__asm__ volatile("int3" : "+a"(rax), "=b"(rbx), "=c"(rcx), "=d"(rdx)
			 : "D"((uint64_t)leaf), "S"((uint64_t)sub) : "memory");
	*a = (uint32_t)rax;
	*b = (uint32_t)rbx;
	*c = (uint32_t)rcx;
	*d = (uint32_t)rdx;
}

void tg_wait_irq(uint64_t seen)
{
	uint64_t rax = ((uint64_t)TG_SYSCALL_MAGIC << 32) | TG_SYS_WAIT_IRQ;

	__asm__ volatile("int3" : "+a"(rax) : "D"(seen) : "memory");
}

void tg_halt(void)
{
	for (;;)
		tg_syscall(TG_SYS_HALT);
}

void tg_exit(uint32_t code)
{
	outl(MINIVMM_PORT_DEBUG_EXIT, code);
	tg_halt();
}

void tg_reset(void)
{
	/* Wait (bounded) for the controller's input buffer to drain. */
	for (unsigned i = 0; i < 1000; i++)
		if (!(inb(MINIVMM_PORT_I8042_CMD) & 0x02))
			break;
	outb(MINIVMM_PORT_I8042_CMD, 0xfe);
	delay_us(1000000);
	tg_exit(TG_EXIT_NO_RESET);
}

void tg_triple_fault(void)
{
	tg_syscall(TG_SYS_TRIPLE_FAULT);
}
