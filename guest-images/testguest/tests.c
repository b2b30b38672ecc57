/* SPDX-License-Identifier: Apache-2.0 */
#include "tests.h"

#include <misc/pvpanic.h>

#include "cmdline.h"
#include "delay.h"
#include "hostile.h"
#include "io.h"
#include "ioapic.h"
#include "lib.h"
#include "minivmm_abi.h"
#include "mptable.h"
#include "nettests.h"
#include "serial.h"
#include "smp.h"
#include "sys.h"

#define AP_TIMEOUT_US   2000000     /* per AP, generous for emulated CPL0 */
#define ALL_UP_US       5000000

static void test_hello(void)
{
	unsigned up = smp_start_aps(NULL, AP_TIMEOUT_US);

	if (up < smp_cpu_count())
		tg_printf("testguest: only %u of %u vCPUs came up\n", up,
			  smp_cpu_count());
	tg_printf("testguest: hello from minivmm test guest, %u vCPUs\n",
		  smp_cpu_count());
	tg_reset();
}

/* The IOAPIC's ID register must read what the MP table names it (a
 * 32-bit Linux booted from the table rewrites a register that differs). */
static void check_ioapic_id(void)
{
	static struct mp_cpus mp;
	unsigned reg = ioapic_id();

	if (mptable_find_cpus(&mp) != 0 || mp.ioapic_id < 0) {
		tg_printf("testguest: no IOAPIC entry in the MP table\n");
		tg_exit(TG_EXIT_IOAPIC_ID);
	}
	if ((unsigned)mp.ioapic_id != reg) {
		tg_printf("testguest: IOAPIC ID register reads %u, the MP table says %d\n",
			  reg, mp.ioapic_id);
		tg_exit(TG_EXIT_IOAPIC_ID);
	}
	tg_printf("testguest: IOAPIC ID %u in its register and the MP table\n", reg);
}

static void test_smp(void)
{
	unsigned n = smp_cpu_count();

	smp_start_aps(NULL, AP_TIMEOUT_US);
	if (smp_wait_all_up(ALL_UP_US)) {
		tg_printf("testguest: only %u of %u vCPUs up\n", smp_count_up(), n);
		tg_exit(TG_EXIT_SMP_TIMEOUT);
	}
	tg_printf("testguest: all %u vCPUs up\n", n);
	if (smp_check_cpuid_apic_ids())
		tg_exit(TG_EXIT_CPUID_APIC);
	tg_printf("testguest: CPUID APIC IDs match the LAPIC on all %u vCPUs\n", n);
	check_ioapic_id();
	tg_reset();
}

/* partial=1: last words without a newline, which the VMM's console buffer
 * must still write out when the guest exits or crashes (test_boot.sh).
 * lines=N first prints N numbered lines: enough of them (a few hundred
 * bytes) and the VMM has KVM queue the transmits in its coalesced ring, so
 * the last words follow queued bytes. */
static void tg_print_last_words(void)
{
	uint64_t partial, lines;
	if (cmdline_get_u64("lines", 0, &lines) == 0)
		for (uint64_t i = 1; i <= lines; i++)
			tg_printf("testguest: line %llu of %llu\n", (unsigned long long)i,
				  (unsigned long long)lines);
	if (cmdline_get_u64("partial", 0, &partial) == 0 && partial)
		tg_printf("testguest: last bytes, no newline");
}

/* spin-ms=N: N ms of pause loops at CPL3, no exit at all, so whatever the
 * guest printed last stays in KVM's queue unless the VMM drains it itself
 * (test_boot.sh times when it arrives). */
static void tg_spin_without_exits(void)
{
	uint64_t ms;
	if (cmdline_get_u64("spin-ms", 0, &ms) == 0 && ms) {
		delay_us(ms * 1000);
		tg_printf("\ntestguest: spun %llu ms\n", (unsigned long long)ms);
	}
}

static void test_exit(void)
{
	uint64_t code;

	if (cmdline_get_u64("code", 0, &code) != 0) {
		tg_printf("testguest: test=exit needs code=N\n");
		tg_exit(TG_EXIT_BAD_CMDLINE);
	}
	tg_printf("testguest: exiting with code %llu\n", (unsigned long long)code);
	tg_print_last_words();
	tg_spin_without_exits();
	tg_exit((uint32_t)code);
}

static void test_serial_echo(void)
{
	char line[128];
	unsigned n = 0;

	tg_printf("testguest: ready for input\n");
	for (;;) {
		char c = serial_getc();

		if (c == '\n' || c == '\r')
			break;
		if (n < sizeof(line) - 1)
			line[n++] = c;
	}
	line[n] = '\0';
	tg_printf("testguest: got '%s'\n", line);
	tg_reset();
}

static void test_triple_fault(void)
{
	tg_printf("testguest: triple fault on purpose\n");
	tg_print_last_words();
	tg_triple_fault();
	tg_exit(TG_EXIT_NO_TRIPLE_FAULT);
}

static void test_fault(void)
{
	tg_printf("testguest: ud2 at CPL3 on purpose\n");
	__asm__ volatile("ud2");
	tg_exit(TG_EXIT_RETURNED);
}

/* The pvpanic device, as a panicking Linux uses it: read the events it
 * handles, write one (event=N, default PVPANIC_PANICKED) to the ISA port or
 * (via=mmio) the MMIO register, then reset as panic=N does. The VMM must
 * keep the panic's status: the first stop wins. */
static void test_panic(void)
{
	int mmio = !strcmp(cmdline_get("via", "port"), "mmio");
	uint64_t event;

	if (cmdline_get_u64("event", PVPANIC_PANICKED, &event) < 0 || event > 0xff) {
		tg_printf("testguest: test=panic: event=N takes 0 to 255\n");
		tg_exit(TG_EXIT_BAD_CMDLINE);
	}
	uint8_t events = mmio ? mmio_read8(MINIVMM_PVPANIC_MMIO_BASE) : inb(MINIVMM_PORT_PVPANIC);

	tg_printf("testguest: pvpanic via %s offers 0x%x, writing 0x%x\n", mmio ? "mmio" : "port",
		  events, (unsigned)event);
	tg_print_last_words();
	if (mmio)
		mmio_write8(MINIVMM_PVPANIC_MMIO_BASE, (uint8_t)event);
	else
		outb(MINIVMM_PORT_PVPANIC, (uint8_t)event);
	tg_reset();
}

/* Never ends by itself: for the VMM's --timeout. */
static void test_spin(void)
{
	tg_printf("testguest: spinning until the VMM stops me\n");
	for (;;)
		cpu_pause();
}

static uint64_t median3(uint64_t (*measure)(void))
{
	uint64_t a = measure(), b = measure(), c = measure(), t;

	if (a > b) { t = a; a = b; b = t; }
	if (b > c) { t = b; b = c; c = t; }
	return a > b ? a : b;
}

/* The PIT counts in real time: the TSC rate measured against channel 0
 * and channel 2, beside the one CPUID states (test_boot.sh compares them).
 * Channel 0's is the median of three 10 ms runs: a host that preempts the
 * vCPU between the count's start and its first TSC read, or between its
 * end and the last, skews one run (channel 2's runs bracket those edges). */
static void test_pit(void)
{
	uint64_t cpuid = tsc_cpuid_hz(), ch0 = median3(pit_measure), ch2 = pit_measure_ch2();

	tg_printf("testguest: tsc khz cpuid %llu pit-ch0 %llu pit-ch2 %llu\n",
		  (unsigned long long)(cpuid / 1000), (unsigned long long)(ch0 / 1000),
		  (unsigned long long)(ch2 / 1000));
	tg_reset();
}

static const struct tg_test tests[] = {
	{ "hello", test_hello, "start all vCPUs, greet, reset" },
	{ "smp", test_smp, "start all vCPUs, wait for all, reset" },
	{ "exit", test_exit, "debug-exit with code=N" },
	{ "serial-echo", test_serial_echo, "read a line from COM1, echo it, reset" },
	{ "triple-fault", test_triple_fault, "empty IDT + #UD: shutdown" },
	{ "fault", test_fault, "ud2 at CPL3: exception report" },
	{ "pit", test_pit, "TSC rate against PIT channels 0 and 2, and from CPUID" },
	{ "panic", test_panic, "pvpanic: write event=N via=port|mmio, then reset" },
	{ "spin", test_spin, "spin at CPL3 forever" },
	{ "net-echo", test_net_echo, "virtio-net: echo UDP, answer ARP/ping" },
	{ "net-gen", test_net_gen, "virtio-net: send numbered UDP datagrams" },
	{ "net-sink", test_net_sink, "virtio-net: count numbered UDP datagrams" },
	{ "net-duplex", test_net_duplex, "virtio-net: net-gen and net-sink at once on every queue" },
	{ "net-up", test_net_up, "virtio-net: bring every queue up, one frame each, reset" },
	{ "net-hostile", test_net_hostile, "virtio-net: break the rules (kind=K), expect NEEDS_RESET, recover" },
};

void tests_run(const char *name)
{
	for (unsigned i = 0; i < ARRAY_SIZE(tests); i++) {
		if (!strcmp(tests[i].name, name)) {
			tests[i].run();
			tg_exit(TG_EXIT_RETURNED);
		}
	}
	tg_printf("testguest: unknown test '%s'; tests:", name);
	for (unsigned i = 0; i < ARRAY_SIZE(tests); i++)
		tg_printf(" %s", tests[i].name);
	tg_printf("\n");
	tg_exit(TG_EXIT_BAD_CMDLINE);
}
