/* SPDX-License-Identifier: Apache-2.0 */
/* vCPUs: which exist (MP table, or cpus=N on the command line), per-CPU
 * data indexed by CPU index (0 = BSP), and AP bring-up with INIT/SIPI/SIPI
 * through the local APIC. */
#ifndef TESTGUEST_SMP_H
#define TESTGUEST_SMP_H

#include <stdint.h>

#include "layout.h"

typedef void (*cpu_work_fn)(unsigned cpu);

struct tg_cpu {
	uint32_t apic_id;           /* from the MP table (or guessed) */
	uint32_t apic_id_seen;      /* what the CPU's own APIC ID register says */
	uint32_t cpuid_bad_leaf;    /* a CPUID leaf whose APIC ID is not apic_id_seen, 0: none */
	uint32_t cpuid_bad_id;      /* the APIC ID that leaf gave */
	int up;                     /* set atomically by the CPU once at CPL3 */
	cpu_work_fn work;           /* run by an AP after it is up; NULL: park */
	void *priv;                 /* free for tests and drivers */
} __attribute__((aligned(64)));

extern struct tg_cpu tg_cpus[TG_MAX_CPUS];

/* BSP only, after cmdline_init(): find the CPUs. */
void smp_init(int verbose);
unsigned smp_cpu_count(void);
/* Print "cpu 0 up", then start APs one by one, each running `work` (NULL:
 * park) once up; waits up to timeout_us for each. Returns how many vCPUs
 * are up, BSP included; stops at the first AP that does not come up. */
unsigned smp_start_aps(cpu_work_fn work, uint64_t timeout_us);
/* Bounded wait until every vCPU has set its flag: 0 or -1 on timeout. */
int smp_wait_all_up(uint64_t timeout_us);
unsigned smp_count_up(void);
/* 0 if every vCPU's CPUID APIC IDs (leaf 1, 0xB, AMD's 0x8000001E) are its
 * LAPIC ID; otherwise prints the first that is not and returns -1. */
int smp_check_cpuid_apic_ids(void);
/* Index of the calling CPU, from its APIC ID (one MMIO read: keep it out
 * of hot paths, pass the index along instead). */
unsigned smp_self(void);

#endif
