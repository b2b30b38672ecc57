/* SPDX-License-Identifier: Apache-2.0 */
/* x86-64 vCPU setup: CPUID (the model itself is boot/cpuid.c), MSRs, FPU,
 * LAPIC and the entry state of each boot protocol (GDT, identity page
 * tables, segment and control registers). */
#ifndef MINIVMM_BOOT_CPU_X86_H
#define MINIVMM_BOOT_CPU_X86_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "boot/boot.h"
#include "boot/cpuid.h"
#include "base/error.h"
#include "base/guest_mem.h"

/* GDT selectors of the boot GDT at BOOT_GDT_ADDR. 0x10/0x18 are what the
 * Linux 64-bit boot protocol calls __BOOT_CS/__BOOT_DS. */
#define BOOT_SEL_CODE64 0x10
#define BOOT_SEL_DATA   0x18
#define BOOT_SEL_TSS    0x20   /* 16-byte system descriptor: entries 4 and 5 */
#define BOOT_SEL_CODE32 0x30

/* The CPUID vCPU `index` of `ncpus` gets: KVM's supported list through the
 * tables of boot/cpuid.c, given the vCPU's TSC frequency (KVM_GET_TSC_KHZ),
 * the host's brand string and whether KVM has KVM_CAP_TSC_DEADLINE_TIMER.
 * malloc'd, with room for supported->nent + CPUID_MAX_ADDED entries; NULL
 * (and err) when out of memory. */
struct kvm_cpuid2 *cpu_x86_guest_cpuid(int vcpu_fd, const struct kvm_cpuid2 *supported,
				       bool tsc_deadline_timer, unsigned index, unsigned ncpus,
				       struct vmm_err *err);

/* cpu_x86_guest_cpuid() handed to KVM_SET_CPUID2. */
int cpu_x86_set_cpuid(int vcpu_fd, const struct kvm_cpuid2 *supported, bool tsc_deadline_timer,
		      unsigned index, unsigned ncpus, struct vmm_err *err);

/* MSRs: KVM's reset state, plus what firmware would have set. `cpuid` is
 * the vCPU's (KVM's supported list will do: the vendor and CPUID.1:EDX.MTRR
 * are all that matter); `listed` is KVM_GET_MSR_INDEX_LIST. */
#define CPU_X86_BOOT_MSRS 2
#define MSR_IA32_MISC_ENABLE 0x1a0
#define MSR_MTRR_DEF_TYPE    0x2ff

/* Whether minivmm writes MSR `index` at vCPU creation. */
bool cpu_x86_msr_wanted(const struct kvm_cpuid2 *cpuid, const struct kvm_msr_list *listed,
			uint32_t index);

/* The MSR writes firmware would have done: IA32_MISC_ENABLE (Intel: KVM's
 * value `misc_enable` plus fast strings) and MTRRs on with write-back
 * default. Returns how many entries it filled. */
unsigned cpu_x86_boot_msrs(const struct kvm_cpuid2 *cpuid, const struct kvm_msr_list *listed,
			   uint64_t misc_enable, struct kvm_msr_entry out[CPU_X86_BOOT_MSRS]);

/* Read one MSR of the vCPU. */
int cpu_x86_get_msr(int vcpu_fd, uint32_t index, uint64_t *value, struct vmm_err *err);

/* cpu_x86_boot_msrs() from the vCPU's current IA32_MISC_ENABLE, written. */
int cpu_x86_set_msrs(int vcpu_fd, const struct kvm_cpuid2 *cpuid, const struct kvm_msr_list *listed,
		     struct vmm_err *err);

/* x87 control word and MXCSR at their reset values. */
int cpu_x86_set_fpu(int vcpu_fd, struct vmm_err *err);

/* LINT0 = ExtINT, LINT1 = NMI, as firmware leaves them for Linux. */
int cpu_x86_set_lapic(int vcpu_fd, struct vmm_err *err);

/* Write the boot GDT and (for LONG64) identity page tables for the first
 * 4 GiB into guest memory. */
int cpu_x86_write_boot_tables(const struct guest_mem *mem, struct vmm_err *err);

/* Registers and segments for the boot entry on the boot vCPU. */
int cpu_x86_set_entry_state(int vcpu_fd, const struct boot_entry *entry, struct vmm_err *err);

#endif
