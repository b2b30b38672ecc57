/* SPDX-License-Identifier: Apache-2.0 */
#include "smp.h"

#include "cmdline.h"
#include "delay.h"
#include "io.h"
#include "lapic.h"
#include "lib.h"
#include "mptable.h"
#include "serial.h"
#include "sys.h"

struct tg_cpu tg_cpus[TG_MAX_CPUS];
static unsigned ncpus = 1;

/* From start.S / trampoline.S. */
extern uint32_t tg_ap_boot_cpu;
extern const char tg_trampoline_start[], tg_trampoline_end[];

void tg_ap_main(uint64_t cpu) __attribute__((noreturn));

static void add_cpu(uint32_t apic_id, uint32_t bsp_id)
{
	if (apic_id == bsp_id || ncpus == TG_MAX_CPUS)
		return;
	tg_cpus[ncpus++].apic_id = apic_id;
}

void smp_init(int verbose)
{
	static struct mp_cpus mp;
	uint32_t bsp_id = lapic_id();
	uint64_t want = 0;
	int have_mp = mptable_find_cpus(&mp) == 0;
	int r = cmdline_get_u64("cpus", 0, &want);

	if (r < 0 || (r == 0 && (want == 0 || want > TG_MAX_CPUS))) {
		tg_printf("testguest: bad cpus=%s (1-%u)\n",
			  cmdline_get("cpus", ""), TG_MAX_CPUS);
		tg_exit(TG_EXIT_BAD_CMDLINE);
	}
	if (!want)
		want = have_mp ? mp.count : 1;
	if (want > TG_MAX_CPUS) {
		tg_printf("testguest: %llu vCPUs, using the first %u\n",
			  (unsigned long long)want, TG_MAX_CPUS);
		want = TG_MAX_CPUS;
	}

	tg_cpus[0].apic_id = bsp_id;
	ncpus = 1;
	if (have_mp)
		for (unsigned i = 0; i < mp.count && ncpus < want; i++)
			add_cpu(mp.apic_id[i], bsp_id);
	/* No (or a short) MP table and cpus=N: guess APIC IDs 0, 1, 2... */
	for (uint32_t id = 0; ncpus < want && id < 256; id++) {
		int dup = 0;
		for (unsigned i = 0; i < ncpus; i++)
			dup |= tg_cpus[i].apic_id == id;
		if (!dup)
			add_cpu(id, bsp_id);
	}
	if (verbose)
		tg_printf("testguest: MP table %s at %p, %u CPUs listed, using %u\n",
			  have_mp ? "found" : "not found", (void *)mp.floating_addr,
			  mp.count, ncpus);
}

unsigned smp_cpu_count(void)
{
	return ncpus;
}

/* The VMM writes the APIC ID into CPUID per vCPU: leaf 1 EBX[31:24], leaf
 * 0xB EDX (when implemented: EBX != 0) and, on AMD with TOPOEXT, 0x8000001E
 * EAX. Each must be the LAPIC's ID, or the guest's topology is wrong. */
static void cpuid_apic_check(struct tg_cpu *c)
{
	uint32_t a, b, cx, d, max, ext, id = c->apic_id_seen;

	tg_cpuid_cpl0(0, 0, &max, &b, &cx, &d);
	tg_cpuid_cpl0(1, 0, &a, &b, &cx, &d);
	if ((b >> 24) != (id & 0xff)) {
		c->cpuid_bad_leaf = 1;
		c->cpuid_bad_id = b >> 24;
		return;
	}
	if (max >= 0xb) {
		tg_cpuid_cpl0(0xb, 0, &a, &b, &cx, &d);
		if (b != 0 && d != id) {
			c->cpuid_bad_leaf = 0xb;
			c->cpuid_bad_id = d;
			return;
		}
	}
	tg_cpuid_cpl0(0x80000000, 0, &ext, &b, &cx, &d);
	if (ext < 0x8000001e)
		return;
	tg_cpuid_cpl0(0x80000001, 0, &a, &b, &cx, &d);
	if (!(cx & (1u << 22)))   /* TOPOEXT; reserved (0) on Intel */
		return;
	tg_cpuid_cpl0(0x8000001e, 0, &a, &b, &cx, &d);
	if (a != id) {
		c->cpuid_bad_leaf = 0x8000001e;
		c->cpuid_bad_id = a;
	}
}

int smp_check_cpuid_apic_ids(void)
{
	for (unsigned i = 0; i < ncpus; i++) {
		struct tg_cpu *c = &tg_cpus[i];

		if (!__atomic_load_n(&c->up, __ATOMIC_ACQUIRE) || !c->cpuid_bad_leaf)
			continue;
		tg_printf("testguest: cpu %u: CPUID leaf 0x%x says APIC ID %u, its LAPIC says %u\n",
			  i, c->cpuid_bad_leaf, c->cpuid_bad_id, c->apic_id_seen);
		return -1;
	}
	return 0;
}

static void cpu_announce(unsigned cpu)
{
	struct tg_cpu *c = &tg_cpus[cpu];

	c->apic_id_seen = lapic_id();
	cpuid_apic_check(c);
	tg_printf("testguest: cpu %u up (apic %u)\n", cpu, c->apic_id_seen);
	__atomic_store_n(&c->up, 1, __ATOMIC_RELEASE);
}

/* Every AP arrives here at CPL3 from start.S. */
void tg_ap_main(uint64_t cpu)
{
	cpu_work_fn work;

	lapic_init();
	cpu_announce((unsigned)cpu);
	work = __atomic_load_n(&tg_cpus[cpu].work, __ATOMIC_ACQUIRE);
	if (work)
		work((unsigned)cpu);
	tg_halt();
}

unsigned smp_start_aps(cpu_work_fn work, uint64_t timeout_us)
{
	unsigned cpu;

	cpu_announce(0);
	memcpy((void *)TG_TRAMPOLINE_ADDR, tg_trampoline_start,
	       (size_t)(tg_trampoline_end - tg_trampoline_start));

	for (cpu = 1; cpu < ncpus; cpu++) {
		uint64_t end;

		__atomic_store_n(&tg_cpus[cpu].work, work, __ATOMIC_RELEASE);
		/* One AP at a time: the CPL0 entry reads its index from here. */
		__atomic_store_n(&tg_ap_boot_cpu, cpu, __ATOMIC_SEQ_CST);
		lapic_start_ap(tg_cpus[cpu].apic_id, TG_SIPI_VECTOR);
		end = tsc_deadline_us(timeout_us);
		while (!__atomic_load_n(&tg_cpus[cpu].up, __ATOMIC_ACQUIRE) &&
		       !tsc_passed(end))
			cpu_pause();
		if (!__atomic_load_n(&tg_cpus[cpu].up, __ATOMIC_ACQUIRE)) {
			tg_printf("testguest: cpu %u (apic %u) did not come up\n",
				  cpu, tg_cpus[cpu].apic_id);
			break;
		}
	}
	return smp_count_up();
}

unsigned smp_count_up(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ncpus; i++)
		n += __atomic_load_n(&tg_cpus[i].up, __ATOMIC_ACQUIRE) ? 1 : 0;
	return n;
}

int smp_wait_all_up(uint64_t timeout_us)
{
	uint64_t end = tsc_deadline_us(timeout_us);

	while (smp_count_up() < ncpus) {
		if (tsc_passed(end))
			return -1;
		cpu_pause();
	}
	return 0;
}

unsigned smp_self(void)
{
	uint32_t id = lapic_id();

	for (unsigned i = 0; i < ncpus; i++)
		if (__atomic_load_n(&tg_cpus[i].up, __ATOMIC_ACQUIRE) &&
		    tg_cpus[i].apic_id_seen == id)
			return i;
	return 0;
}
