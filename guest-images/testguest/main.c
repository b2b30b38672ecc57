/* SPDX-License-Identifier: Apache-2.0 */
/* CPL3 entry of the BSP (from start.S): read the boot information, set up
 * the console and time, find the CPUs, run the selected test. */
#include "cmdline.h"
#include "delay.h"
#include "io.h"
#include "lib.h"
#include "lapic.h"
#include "minivmm_abi.h"
#include "pvh.h"
#include "serial.h"
#include "smp.h"
#include "sys.h"
#include "tests.h"

void tg_main(uint64_t start_info_paddr) __attribute__((noreturn));

const struct hvm_start_info *tg_start_info;

/* debug: one line per boot module (the initrd, minivmm's "dtb"). */
static void print_modules(const struct hvm_start_info *si)
{
	const struct hvm_modlist_entry *mods = (const void *)(uintptr_t)si->modlist_paddr;

	if (si->nr_modules > 64 || si->modlist_paddr >= 0x100000000ull ||
	    si->modlist_paddr + si->nr_modules * sizeof(*mods) > 0x100000000ull)
		return;
	for (uint32_t i = 0; i < si->nr_modules; i++) {
		char name[17] = "";
		uint64_t c = mods[i].cmdline_paddr;

		for (unsigned k = 0; c && c + k < 0x100000000ull && k < sizeof(name) - 1; k++)
			if (!(name[k] = *(const char *)(uintptr_t)(c + k)))
				break;
		tg_printf("testguest: module %u paddr 0x%llx size %llu name '%s'\n", i,
			  (unsigned long long)mods[i].paddr, (unsigned long long)mods[i].size, name);
	}
}

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
	tg_start_info = si;
	cmdline_init(si->cmdline_paddr ?
		     (const char *)(uintptr_t)si->cmdline_paddr : "");
	verbose = cmdline_find("debug", 0) >= 0;

	delay_init();
	lapic_init();
	smp_init(verbose);
	if (verbose) {
		tg_printf("testguest: cmdline '%s', tsc %llu kHz\n", cmdline_raw(),
			  (unsigned long long)(tsc_hz() / 1000));
		print_modules(si);
	}
	tests_run(cmdline_get("test", "hello"));
}
