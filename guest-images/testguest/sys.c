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
