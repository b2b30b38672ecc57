/* SPDX-License-Identifier: Apache-2.0 */
/* minivmm --cpuid-dump: what a guest's CPU looks like, without running one. */
#ifndef MINIVMM_VMM_CPUID_DUMP_H
#define MINIVMM_VMM_CPUID_DUMP_H

#include <stdio.h>

#include "base/error.h"
#include "minivmm.h"

/* The embedding API's values (minivmm_cpuid_dump). */
enum cpuid_dump_what {
	CPUID_DUMP_NONE,
	CPUID_DUMP_GUEST = MINIVMM_CPUID_DUMP_GUEST,         /* the CPUID of vCPU 0, the changes and why, the boot MSRs */
	CPUID_DUMP_SUPPORTED = MINIVMM_CPUID_DUMP_SUPPORTED, /* KVM_GET_SUPPORTED_CPUID as is: a tests/unit/data file */
};

/* Open /dev/kvm, create a VM and vCPU 0 of `ncpus` as a run would, and print
 * `what` to `out` in the format of tests/unit/data/cpuid-*.txt (one entry a
 * line; commentary on '#' lines). */
int cpuid_dump(FILE *out, enum cpuid_dump_what what, unsigned ncpus, struct vmm_err *err);

#endif
