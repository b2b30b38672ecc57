/* SPDX-License-Identifier: Apache-2.0 */
/* The guest's CPU model: the CPUID each vCPU gets, built from
 * KVM_GET_SUPPORTED_CPUID by tables of rules, one per vendor (cpuid.c holds
 * the rules every vendor gets, cpuid_intel.c and cpuid_amd.c the rest).
 * docs/cpu.md describes the tables; `minivmm --cpuid-dump` prints the result.
 *
 * Everything here is pure: the caller gathers what the rules need from KVM
 * and the host (struct cpuid_host), so the tables can be tested against
 * recorded CPUID dumps without /dev/kvm. */
#ifndef MINIVMM_BOOT_CPUID_H
#define MINIVMM_BOOT_CPUID_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum cpuid_vendor {
	CPUID_VENDOR_OTHER,   /* unknown vendor string: the common rules only */
	CPUID_VENDOR_INTEL,   /* GenuineIntel; CentaurHauls and Zhaoxin follow Intel */
	CPUID_VENDOR_AMD,     /* AuthenticAMD; HygonGenuine follows AMD */
};

/* What the rules need besides KVM's list. */
struct cpuid_host {
	unsigned tsc_khz;          /* KVM_GET_TSC_KHZ of the vCPU; 0: unknown (no timing leaf) */
	bool tsc_deadline_timer;   /* KVM_CAP_TSC_DEADLINE_TIMER */
	uint32_t brand[12];        /* the host's CPUID 0x80000002..4, EAX..EDX each: the
				    * brand string when KVM's leaves are empty */
};

/* Entries cpuid_build() may add to KVM's list (leaf 0xB subleaves 1 and 2,
 * the timing leaf 0x4000_0010), with room to spare. */
#define CPUID_MAX_ADDED 8

/* The vendor whose table applies, from leaf 0 of `c`. */
enum cpuid_vendor cpuid_vendor_of(const struct kvm_cpuid2 *c);

/* "Intel", "AMD", "other". */
const char *cpuid_vendor_name(enum cpuid_vendor v);

/* The CPUID of vCPU `index` of `ncpus` (one socket, one thread per core,
 * APIC ID = index). `out` must have room for supported->nent +
 * CPUID_MAX_ADDED entries. */
void cpuid_build(const struct kvm_cpuid2 *supported, const struct cpuid_host *host,
		 unsigned index, unsigned ncpus, struct kvm_cpuid2 *out);

/* The host's brand string leaves, from the CPUID instruction. */
void cpuid_host_brand(uint32_t brand[12]);

/* One line per entry: "function index eax ebx ecx edx flags" in hex, the
 * format of tests/unit/data/cpuid-*.txt. */
void cpuid_print(FILE *f, const struct kvm_cpuid2 *c);

/* As '#' comment lines: every entry or register of `guest` that differs from
 * `supported`, with the table lines that changed it and why. Returns the
 * number of differing registers and entries. */
unsigned cpuid_print_changes(FILE *f, const struct kvm_cpuid2 *supported,
			     const struct kvm_cpuid2 *guest, enum cpuid_vendor v);

#endif
