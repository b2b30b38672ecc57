/* x86-64 vCPU state for the boot protocols minivmm supports. */
#include "boot/cpu_x86.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

/* ---- CPUID ---------------------------------------------------------- */

#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_1_EDX_HTT        (1u << 28)
#define CPUID_B_LEVEL_SMT      1u
#define CPUID_B_LEVEL_CORE     2u

static unsigned bits_for(unsigned n)
{
	unsigned b = 0;
	while ((1u << b) < n)
		b++;
	return b;
}

/* One socket, one thread per core, one core per vCPU: APIC ID = index. */
static void cpuid_patch_entry(struct kvm_cpuid_entry2 *e, unsigned index, unsigned ncpus)
{
	switch (e->function) {
	case 1:
		e->ebx = (e->ebx & 0x0000ffffu) | (index << 24) | ((ncpus & 0xff) << 16);
		e->ecx |= CPUID_1_ECX_HYPERVISOR;
		if (ncpus > 1)
			e->edx |= CPUID_1_EDX_HTT;
		else
			e->edx &= ~CPUID_1_EDX_HTT;
		break;
	case 4:
		/* EAX[31:26]: cores per package - 1; EAX[25:14]: logical CPUs
		 * sharing this cache - 1 (only the last level is shared). */
		e->eax &= 0x3fff;
		e->eax |= (ncpus - 1) << 26;
		if (((e->eax >> 5) & 7) >= 3)
			e->eax |= (ncpus - 1) << 14;
		break;
	case 0xb:
		e->edx = index;
		if (e->index == 0) {
			e->eax = 0;
			e->ebx = 1;
			e->ecx = (CPUID_B_LEVEL_SMT << 8) | 0;
		} else if (e->index == 1) {
			e->eax = bits_for(ncpus);
			e->ebx = ncpus;
			e->ecx = (CPUID_B_LEVEL_CORE << 8) | 1;
		} else {
			e->eax = e->ebx = 0;
			e->ecx = e->index;
		}
		break;
	case 0x80000008:
		/* ECX[7:0]: number of cores - 1 (AMD). */
		e->ecx = (e->ecx & ~0xffu) | ((ncpus - 1) & 0xff);
		break;
	default:
		break;
	}
}

#define CPUID_TIMING_LEAF 0x40000010
#define KVM_LAPIC_BUS_KHZ 1000000   /* KVM's LAPIC timer counts at 1 GHz */

void cpu_x86_build_cpuid(const struct kvm_cpuid2 *supported, unsigned index, unsigned ncpus,
			 unsigned tsc_khz, struct kvm_cpuid2 *out)
{
	out->nent = 0;
	bool have_hv_base = false;
	for (unsigned i = 0; i < supported->nent; i++) {
		struct kvm_cpuid_entry2 e = supported->entries[i];
		/* Leaf 0x1F (V2 topology) would contradict 0xB unless patched
		 * the same way; drop it so guests fall back to 0xB. */
		if (e.function == 0x1f || e.function == CPUID_TIMING_LEAF)
			continue;
		if (e.function == 0x40000000 && tsc_khz) {
			have_hv_base = true;
			if (e.eax < CPUID_TIMING_LEAF)
				e.eax = CPUID_TIMING_LEAF;
		}
		cpuid_patch_entry(&e, index, ncpus);
		out->entries[out->nent++] = e;
	}
	if (have_hv_base)
		out->entries[out->nent++] = (struct kvm_cpuid_entry2){
			.function = CPUID_TIMING_LEAF, .eax = tsc_khz, .ebx = KVM_LAPIC_BUS_KHZ };
}

int cpu_x86_set_cpuid(int vcpu_fd, const struct kvm_cpuid2 *supported, unsigned index,
		      unsigned ncpus, struct vmm_err *err)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + (supported->nent + 1) * sizeof(c->entries[0]));
	if (!c)
		return vmm_err_set(err, ENOMEM, "out of memory for CPUID");
	int khz = ioctl(vcpu_fd, KVM_GET_TSC_KHZ);
	cpu_x86_build_cpuid(supported, index, ncpus, khz > 0 ? (unsigned)khz : 0, c);
	int rc = ioctl(vcpu_fd, KVM_SET_CPUID2, c) < 0 ? vmm_err_sys(err, errno, "KVM_SET_CPUID2 (vCPU %u)", index) : 0;
	free(c);
	return rc;
}

/* ---- MSRs ----------------------------------------------------------- */

#define MSR_IA32_SYSENTER_CS     0x174
#define MSR_IA32_SYSENTER_ESP    0x175
#define MSR_IA32_SYSENTER_EIP    0x176
#define MSR_IA32_MISC_ENABLE     0x1a0
#define MSR_MTRR_DEF_TYPE        0x2ff
#define MSR_STAR                 0xc0000081
#define MSR_LSTAR                0xc0000082
#define MSR_CSTAR                0xc0000083
#define MSR_SYSCALL_MASK         0xc0000084
#define MSR_KERNEL_GS_BASE       0xc0000102

#define MISC_ENABLE_FAST_STRING  1ULL
#define MTRR_ENABLE              (1ULL << 11)
#define MTRR_TYPE_WRBACK         6ULL

static int msr_listed(const struct kvm_msr_list *l, unsigned index)
{
	for (unsigned i = 0; l && i < l->nmsrs; i++)
		if (l->indices[i] == index)
			return 1;
	return 0;
}

int cpu_x86_set_msrs(int vcpu_fd, const struct kvm_msr_list *supported, struct vmm_err *err)
{
	static const struct { unsigned index; unsigned long long value; } boot_msrs[] = {
		{ MSR_IA32_SYSENTER_CS, 0 },  { MSR_IA32_SYSENTER_ESP, 0 },
		{ MSR_IA32_SYSENTER_EIP, 0 }, { MSR_STAR, 0 },
		{ MSR_LSTAR, 0 },             { MSR_CSTAR, 0 },
		{ MSR_SYSCALL_MASK, 0 },      { MSR_KERNEL_GS_BASE, 0 },
		{ MSR_IA32_MISC_ENABLE, MISC_ENABLE_FAST_STRING },
		/* Without MTRRs enabled, Linux maps all RAM uncached. */
		{ MSR_MTRR_DEF_TYPE, MTRR_ENABLE | MTRR_TYPE_WRBACK },
	};
	enum { N = sizeof(boot_msrs) / sizeof(boot_msrs[0]) };
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry entry[N];
	} m;
	memset(&m, 0, sizeof(m));
	for (unsigned i = 0; i < N; i++) {
		if (!msr_listed(supported, boot_msrs[i].index))
			continue;
		m.entry[m.hdr.nmsrs].index = boot_msrs[i].index;
		m.entry[m.hdr.nmsrs].data = boot_msrs[i].value;
		m.hdr.nmsrs++;
	}
	int done = ioctl(vcpu_fd, KVM_SET_MSRS, &m);
	if (done < 0)
		return vmm_err_sys(err, errno, "KVM_SET_MSRS");
	if ((unsigned)done != m.hdr.nmsrs)
		return vmm_err_set(err, EINVAL, "KVM_SET_MSRS refused MSR 0x%x",
				   m.entry[done].index);
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
