/* SPDX-License-Identifier: Apache-2.0 */
/* CPL0 trap handling: report and end. Runs emulated under PVM, so it does
 * as little as possible: format one line, print it, exit. */
#include <stdint.h>

#include "io.h"
#include "lib.h"
#include "minivmm_abi.h"
#include "serial.h"
#include "sys.h"

/* Layout pushed by tg_trap_common (start.S) and the CPU. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

void tg_trap(struct trap_frame *f);

void tg_trap(struct trap_frame *f)
{
	char line[128];
	uint32_t code;
	int n;

	if (f->vector < 32) {
		n = snprintf(line, sizeof(line),
			     "testguest: exception %lu at rip 0x%lx (error 0x%lx)\n",
			     (unsigned long)f->vector, (unsigned long)f->rip,
			     (unsigned long)f->error);
		code = TG_EXIT_EXCEPTION;
	} else {
		n = snprintf(line, sizeof(line),
			     "testguest: unexpected interrupt %lu at rip 0x%lx\n",
			     (unsigned long)f->vector, (unsigned long)f->rip);
		code = TG_EXIT_UNEXPECTED_IRQ;
	}
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	/* No lock: the interrupted code may hold it. */
	serial_write_raw(line, (size_t)n);
	outl(MINIVMM_PORT_DEBUG_EXIT, code);
	for (;;)
		__asm__ volatile("cli; hlt");
}
