/* x86-64 vCPU setup: CPUID, MSRs, FPU, LAPIC and the entry state of each
 * boot protocol (GDT, identity page tables, segment and control registers). */
#ifndef MINIVMM_BOOT_CPU_X86_H
#define MINIVMM_BOOT_CPU_X86_H

#include <linux/kvm.h>

#include "boot/boot.h"
#include "base/error.h"
#include "base/guest_mem.h"

/* GDT selectors of the boot GDT at BOOT_GDT_ADDR. 0x10/0x18 are what the
 * Linux 64-bit boot protocol calls __BOOT_CS/__BOOT_DS. */
#define BOOT_SEL_CODE64 0x10
#define BOOT_SEL_DATA   0x18
#define BOOT_SEL_TSS    0x20   /* 16-byte system descriptor: entries 4 and 5 */
#define BOOT_SEL_CODE32 0x30

/* Fill the CPUID entries for vCPU `index` of `ncpus` from what KVM supports:
 * APIC ID and topology (leaves 1, 4, 0xB, 0x8000_0008), the hypervisor bit,
 * and with tsc_khz != 0 the hypervisor timing leaf 0x4000_0010 (TSC and
 * LAPIC bus kHz, as QEMU and VMware give it) so guests need not calibrate.
 * `out` must have room for supported->nent + 1 entries. */
void cpu_x86_build_cpuid(const struct kvm_cpuid2 *supported, unsigned index, unsigned ncpus,
			 unsigned tsc_khz, struct kvm_cpuid2 *out);

int cpu_x86_set_cpuid(int vcpu_fd, const struct kvm_cpuid2 *supported, unsigned index,
		      unsigned ncpus, struct vmm_err *err);

/* MSRs a freshly reset CPU should have for Linux: fast strings, MTRRs on with
 * write-back default, zeroed syscall/sysenter MSRs. Only those KVM lists. */
int cpu_x86_set_msrs(int vcpu_fd, const struct kvm_msr_list *supported, struct vmm_err *err);

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
