/* CPL3 entry of the BSP (from start.S): read the boot information, set up
 * the console and time, find the CPUs, run the selected test. */
#include "cmdline.h"
#include "delay.h"
#include "io.h"
#include "lapic.h"
#include "minivmm_abi.h"
#include "pvh.h"
#include "serial.h"
#include "smp.h"
#include "sys.h"
#include "tests.h"

void tg_main(uint64_t start_info_paddr) __attribute__((noreturn));

void tg_main(uint64_t start_info_paddr)
{
	const struct hvm_start_info *si = (const void *)(uintptr_t)start_info_paddr;
	int verbose;

	/* First thing at CPL3: "I am up" for the VMM's boot timer. */
	outb(MINIVMM_PORT_BOOT_TIMER, MINIVMM_BOOT_TIMER_UP);
	serial_init();

	if (!si || start_info_paddr >= 0x100000000ull || si->magic != HVM_START_MAGIC) {
		tg_printf("testguest: bad hvm_start_info at 0x%llx\n",
			  (unsigned long long)start_info_paddr);
		tg_exit(TG_EXIT_BAD_START_INFO);
	}
	cmdline_init(si->cmdline_paddr ?
		     (const char *)(uintptr_t)si->cmdline_paddr : "");
	verbose = cmdline_find("debug", 0) >= 0;

	delay_init();
	lapic_init();
	smp_init(verbose);
	if (verbose)
		tg_printf("testguest: cmdline '%s', tsc %llu kHz\n", cmdline_raw(),
			  (unsigned long long)(tsc_hz() / 1000));
	tests_run(cmdline_get("test", "hello"));
}
