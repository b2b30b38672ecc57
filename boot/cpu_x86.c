/* SPDX-License-Identifier: Apache-2.0 */
/* x86-64 vCPU state for the boot protocols minivmm supports. */
#include "boot/cpu_x86.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* ---- CPUID ---------------------------------------------------------- */

struct kvm_cpuid2 *cpu_x86_guest_cpuid(int vcpu_fd, const struct kvm_cpuid2 *supported,
				       bool tsc_deadline_timer, unsigned index, unsigned ncpus,
				       struct vmm_err *err)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + (supported->nent + CPUID_MAX_ADDED) *
						   sizeof(c->entries[0]));
	if (!c) {
		vmm_err_set(err, ENOMEM, "out of memory for CPUID");
		return NULL;
	}
	struct cpuid_host host = { .tsc_deadline_timer = tsc_deadline_timer };
	/* KVM_GET_TSC_KHZ fails (or says 0) when KVM does not know the rate:
	 * then there is no timing leaf and the guest calibrates. */
	int khz = ioctl(vcpu_fd, KVM_GET_TSC_KHZ);
	host.tsc_khz = khz > 0 ? (unsigned)khz : 0;
	cpuid_host_brand(host.brand);
	cpuid_build(supported, &host, index, ncpus, c);
	return c;
}

int cpu_x86_set_cpuid(int vcpu_fd, const struct kvm_cpuid2 *supported, bool tsc_deadline_timer,
		      unsigned index, unsigned ncpus, struct vmm_err *err)
{
	struct kvm_cpuid2 *c = cpu_x86_guest_cpuid(vcpu_fd, supported, tsc_deadline_timer, index,
						   ncpus, err);
	if (!c)
		return -ENOMEM;
	int rc = ioctl(vcpu_fd, KVM_SET_CPUID2, c) < 0 ? vmm_err_sys(err, errno, "KVM_SET_CPUID2 (vCPU %u)", index) : 0;
	free(c);
	return rc;
}

/* ---- MSRs ----------------------------------------------------------- */

/* Everything else a fresh vCPU needs is KVM's reset state: SYSENTER_CS/ESP/
 * EIP, STAR, LSTAR, CSTAR, SFMASK and KERNEL_GS_BASE are 0 after
 * KVM_CREATE_VCPU (as after RESET), and both boot protocols enter with
 * interrupts off, so no guest runs SYSCALL/SYSENTER before setting them. */
#define MISC_ENABLE_FAST_STRING  1ULL
#define MTRR_ENABLE              (1ULL << 11)
#define MTRR_TYPE_WRBACK         6ULL

static bool msr_listed(const struct kvm_msr_list *l, uint32_t index)
{
	for (unsigned i = 0; l && i < l->nmsrs; i++)
		if (l->indices[i] == index)
			return true;
	return false;
}

#define CPUID_1_EDX_MTRR (1u << 12)

bool cpu_x86_msr_wanted(const struct kvm_cpuid2 *cpuid, const struct kvm_msr_list *listed,
			uint32_t index)
{
	const struct kvm_cpuid_entry2 *leaf1 = NULL;
	for (unsigned i = 0; i < cpuid->nent && !leaf1; i++)
		if (cpuid->entries[i].function == 1)
			leaf1 = &cpuid->entries[i];
	switch (index) {
	case MSR_IA32_MISC_ENABLE:
		return cpuid_vendor_of(cpuid) == CPUID_VENDOR_INTEL && msr_listed(listed, index);
	case MSR_MTRR_DEF_TYPE:
		/* KVM_GET_MSR_INDEX_LIST never lists the MTRRs: KVM emulates
		 * them whenever CPUID has MTRR (Firecracker goes by CPUID too). */
		return leaf1 && (leaf1->edx & CPUID_1_EDX_MTRR);
	default:
		return false;
	}
}

unsigned cpu_x86_boot_msrs(const struct kvm_cpuid2 *cpuid, const struct kvm_msr_list *listed,
			   uint64_t misc_enable, struct kvm_msr_entry out[CPU_X86_BOOT_MSRS])
{
	unsigned n = 0;
	/* IA32_MISC_ENABLE exists on Intel only. Firmware there turns fast
	 * strings on (QEMU's reset value too), and Linux then prefers REP
	 * MOVS/STOS. KVM's own bits stay: its reset value says BTS and PEBS
	 * are unavailable, and the guest may not change those bits later. */
	if (cpu_x86_msr_wanted(cpuid, listed, MSR_IA32_MISC_ENABLE))
		out[n++] = (struct kvm_msr_entry){ .index = MSR_IA32_MISC_ENABLE,
						   .data = misc_enable | MISC_ENABLE_FAST_STRING };
	/* MTRRs on, default type write-back, as firmware leaves them (the
	 * reset value is 0: MTRRs off, all memory uncached). */
	if (cpu_x86_msr_wanted(cpuid, listed, MSR_MTRR_DEF_TYPE))
		out[n++] = (struct kvm_msr_entry){ .index = MSR_MTRR_DEF_TYPE,
						   .data = MTRR_ENABLE | MTRR_TYPE_WRBACK };
	return n;
}

/* struct kvm_msrs ends in a flexible array: a union gives it room for n
 * entries (a struct member after it is a GNU extension that clang rejects
 * under -Werror). */
#define KVM_MSRS_WITH_ROOM(n) \
	union { \
		struct kvm_msrs hdr; \
		uint8_t room[sizeof(struct kvm_msrs) + (n) * sizeof(struct kvm_msr_entry)]; \
	}

int cpu_x86_get_msr(int vcpu_fd, uint32_t index, uint64_t *value, struct vmm_err *err)
{
	KVM_MSRS_WITH_ROOM(1) m;
	memset(&m, 0, sizeof(m));
	m.hdr.nmsrs = 1;
	m.hdr.entries[0].index = index;
	int done = ioctl(vcpu_fd, KVM_GET_MSRS, &m);
	if (done < 0)
		return vmm_err_sys(err, errno, "KVM_GET_MSRS 0x%x", index);
	if (done != 1)
		return vmm_err_set(err, EINVAL, "KVM_GET_MSRS refused MSR 0x%x", index);
	*value = m.hdr.entries[0].data;
	return 0;
}

int cpu_x86_set_msrs(int vcpu_fd, const struct kvm_cpuid2 *cpuid, const struct kvm_msr_list *listed,
		     struct vmm_err *err)
{
	uint64_t misc_enable = 0;
	if (cpu_x86_msr_wanted(cpuid, listed, MSR_IA32_MISC_ENABLE)) {
		int rc = cpu_x86_get_msr(vcpu_fd, MSR_IA32_MISC_ENABLE, &misc_enable, err);
		if (rc)
			return rc;
	}
	KVM_MSRS_WITH_ROOM(CPU_X86_BOOT_MSRS) m;
	memset(&m, 0, sizeof(m));
	m.hdr.nmsrs = cpu_x86_boot_msrs(cpuid, listed, misc_enable, m.hdr.entries);
	if (m.hdr.nmsrs == 0)
		return 0;
	int done = ioctl(vcpu_fd, KVM_SET_MSRS, &m);
	if (done < 0)
		return vmm_err_sys(err, errno, "KVM_SET_MSRS");
	if ((unsigned)done != m.hdr.nmsrs)
		return vmm_err_set(err, EINVAL, "KVM_SET_MSRS refused MSR 0x%x",
				   m.hdr.entries[done].index);
	return 0;
}

/* ---- FPU and LAPIC -------------------------------------------------- */

int cpu_x86_set_fpu(int vcpu_fd, struct vmm_err *err)
{
	struct kvm_fpu fpu = { .fcw = 0x37f, .mxcsr = 0x1f80 };
	if (ioctl(vcpu_fd, KVM_SET_FPU, &fpu) < 0)
		return vmm_err_sys(err, errno, "KVM_SET_FPU");
	return 0;
}

#define APIC_LVT_LINT0     0x350
#define APIC_LVT_LINT1     0x360
#define APIC_MODE_NMI      0x4
#define APIC_MODE_EXTINT   0x7

static void lapic_set_delivery_mode(struct kvm_lapic_state *s, unsigned reg, unsigned mode)
{
	uint32_t v;
	memcpy(&v, &s->regs[reg], sizeof(v));
	v = (v & ~0x700u) | (mode << 8);
	memcpy(&s->regs[reg], &v, sizeof(v));
}

int cpu_x86_set_lapic(int vcpu_fd, struct vmm_err *err)
{
	struct kvm_lapic_state s;
	if (ioctl(vcpu_fd, KVM_GET_LAPIC, &s) < 0)
		return vmm_err_sys(err, errno, "KVM_GET_LAPIC");
	lapic_set_delivery_mode(&s, APIC_LVT_LINT0, APIC_MODE_EXTINT);
	lapic_set_delivery_mode(&s, APIC_LVT_LINT1, APIC_MODE_NMI);
	if (ioctl(vcpu_fd, KVM_SET_LAPIC, &s) < 0)
		return vmm_err_sys(err, errno, "KVM_SET_LAPIC");
	return 0;
}

/* ---- Boot GDT and page tables ---------------------------------------- */

/* Descriptor: base 0, limit 0xfffff (with G: 4 GiB), flags and access byte. */
#define GDT_ENTRY(flags, access) \
	((0xfULL << 48) | ((uint64_t)(flags) << 52) | ((uint64_t)(access) << 40) | 0xffffULL)

#define PTE_PRESENT 0x1ULL
#define PTE_WRITE   0x2ULL
#define PTE_HUGE    0x80ULL

int cpu_x86_write_boot_tables(const struct guest_mem *mem, struct vmm_err *err)
{
	const uint64_t gdt[7] = {
		0, 0,
		GDT_ENTRY(0xa, 0x9b),   /* 0x10: 64-bit code, L=1 G=1 */
		GDT_ENTRY(0xc, 0x93),   /* 0x18: data, D/B=1 G=1 */
		/* 0x20: TSS (base 0, limit 0x67, busy), high half zero. */
		(0x8bULL << 40) | 0x67ULL, 0,
		GDT_ENTRY(0xc, 0x9b),   /* 0x30: 32-bit code, D=1 G=1 */
	};
	if (!guest_mem_write(mem, BOOT_GDT_ADDR, gdt, sizeof(gdt)))
		return vmm_err_set(err, EFAULT, "guest memory too small for the boot GDT");

	/* Identity map 0..4 GiB with 2 MiB pages: everything the 64-bit boot
	 * protocol may touch before the kernel builds its own tables. */
	uint64_t *pml4 = guest_mem_ptr(mem, BOOT_PML4_ADDR, 4096);
	uint64_t *pdpt = guest_mem_ptr(mem, BOOT_PDPT_ADDR, 4096);
	uint64_t *pd = guest_mem_ptr(mem, BOOT_PD_ADDR, 4 * 4096);
	if (!pml4 || !pdpt || !pd)
		return vmm_err_set(err, EFAULT, "guest memory too small for boot page tables");
	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = BOOT_PDPT_ADDR | PTE_PRESENT | PTE_WRITE;
	for (uint64_t i = 0; i < 4; i++)
		pdpt[i] = (BOOT_PD_ADDR + i * 4096) | PTE_PRESENT | PTE_WRITE;
	for (uint64_t i = 0; i < 4 * 512; i++)
		pd[i] = (i << 21) | PTE_PRESENT | PTE_WRITE | PTE_HUGE;
	return 0;
}

static struct kvm_segment flat_segment(uint16_t selector, uint8_t type, int code64)
{
	return (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = selector, .type = type,
		.present = 1, .dpl = 0, .db = code64 ? 0 : 1, .s = 1, .l = code64 ? 1 : 0, .g = 1,
	};
}

#define CR0_PE 0x1ULL
#define CR0_ET 0x10ULL
#define CR0_NE 0x20ULL
#define CR0_PG 0x80000000ULL
#define CR4_PAE 0x20ULL
#define EFER_LME 0x100ULL
#define EFER_LMA 0x400ULL
#define SEG_TYPE_CODE_RX 0xb   /* execute/read, accessed */
#define SEG_TYPE_DATA_RW 0x3   /* read/write, accessed */
#define SEG_TYPE_TSS_BUSY 0xb

int cpu_x86_set_entry_state(int vcpu_fd, const struct boot_entry *entry, struct vmm_err *err)
{
	struct kvm_sregs sregs;
	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sregs) < 0)
		return vmm_err_sys(err, errno, "KVM_GET_SREGS");

	int long_mode = entry->mode == BOOT_MODE_LONG64;
	struct kvm_segment data = flat_segment(BOOT_SEL_DATA, SEG_TYPE_DATA_RW, 0);
	sregs.cs = long_mode ? flat_segment(BOOT_SEL_CODE64, SEG_TYPE_CODE_RX, 1)
			     : flat_segment(BOOT_SEL_CODE32, SEG_TYPE_CODE_RX, 0);
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = data;
	/* Both protocols want an active TSS with base 0 and limit 0x67. */
	sregs.tr = (struct kvm_segment){ .base = 0, .limit = 0x67, .selector = BOOT_SEL_TSS,
					 .type = SEG_TYPE_TSS_BUSY, .present = 1 };
	sregs.gdt.base = BOOT_GDT_ADDR;
	sregs.gdt.limit = 7 * 8 - 1;
	sregs.idt.base = 0;
	sregs.idt.limit = 0;

	if (long_mode) {
		sregs.cr0 = CR0_PE | CR0_ET | CR0_NE | CR0_PG;
		sregs.cr3 = BOOT_PML4_ADDR;
		sregs.cr4 = CR4_PAE;
		sregs.efer = EFER_LME | EFER_LMA;
	} else {
		/* PVH: protected mode, paging off. */
		sregs.cr0 = CR0_PE | CR0_ET;
		sregs.cr3 = 0;
		sregs.cr4 = 0;
		sregs.efer = 0;
	}
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sregs) < 0)
		return vmm_err_sys(err, errno, "KVM_SET_SREGS");

	struct kvm_regs regs = { .rflags = 0x2, .rip = entry->entry };
	if (long_mode)
		regs.rsi = entry->boot_arg;
	else
		regs.rbx = entry->boot_arg;
	if (ioctl(vcpu_fd, KVM_SET_REGS, &regs) < 0)
		return vmm_err_sys(err, errno, "KVM_SET_REGS");
	return 0;
}
