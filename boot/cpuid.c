/* SPDX-License-Identifier: Apache-2.0 */
/* The guest CPU model: the engine that applies the rule tables to
 * KVM_GET_SUPPORTED_CPUID, and the table every vendor gets.
 *
 * Each table line is one rule, on one line on purpose, so that a table reads
 * as a list: leaf, subleaf, registers, bits, what happens, and beside it the
 * reason and what QEMU's `-cpu host` (target/i386/cpu.c cpu_x86_cpuid(),
 * kvm/kvm.c kvm_arch_get_supported_cpuid(), kvm_arch_init_vcpu()) and
 * Firecracker's normalisation (cpu_config/x86_64/cpuid/normalize.rs) do with
 * the same bits. Anything no line mentions reaches the guest as KVM reports
 * it; the unit tests check that. docs/cpu.md has the same tables in prose. */
#include "boot/cpuid_rules.h"

#include <asm/kvm_para.h>
#include <cpuid.h>
#include <string.h>

#define CPUID_TIMING_LEAF  0x40000010   /* TSC and LAPIC bus kHz (VMware's, QEMU's) */
#define KVM_LAPIC_BUS_KHZ  1000000      /* KVM's LAPIC timer counts at 1 GHz */

/* ---- helpers ------------------------------------------------------------ */

const struct kvm_cpuid_entry2 *cpuid_find(const struct kvm_cpuid2 *c, uint32_t function,
					  uint32_t index)
{
	for (unsigned i = 0; i < c->nent; i++)
		if (c->entries[i].function == function && c->entries[i].index == index)
			return &c->entries[i];
	return NULL;
}

bool cpuid_has_function(const struct kvm_cpuid2 *c, uint32_t function)
{
	for (unsigned i = 0; i < c->nent; i++)
		if (c->entries[i].function == function)
			return true;
	return false;
}

uint32_t cpuid_reg_of(const struct kvm_cpuid_entry2 *e, enum cpuid_reg r)
{
	switch (r) {
	case CPUID_EAX: return e->eax;
	case CPUID_EBX: return e->ebx;
	case CPUID_ECX: return e->ecx;
	default:        return e->edx;
	}
}

static uint32_t *cpuid_reg_ptr(struct kvm_cpuid_entry2 *e, enum cpuid_reg r)
{
	switch (r) {
	case CPUID_EAX: return &e->eax;
	case CPUID_EBX: return &e->ebx;
	case CPUID_ECX: return &e->ecx;
	default:        return &e->edx;
	}
}

unsigned cpuid_bits_for(unsigned n)
{
	unsigned b = 0;
	while (b < 31 && (1u << b) < n)
		b++;
	return b;
}

/* ---- vendors --------------------------------------------------------------- */

static const struct { const char *id; enum cpuid_vendor v; } cpuid_vendor_ids[] = {
	{ "GenuineIntel", CPUID_VENDOR_INTEL },
	{ "CentaurHauls", CPUID_VENDOR_INTEL },   /* VIA/Centaur and early Zhaoxin */
	{ "  Shanghai  ", CPUID_VENDOR_INTEL },   /* Zhaoxin */
	{ "AuthenticAMD", CPUID_VENDOR_AMD },
	{ "HygonGenuine", CPUID_VENDOR_AMD },     /* Hygon Dhyana: a Zen derivative */
};

enum cpuid_vendor cpuid_vendor_of(const struct kvm_cpuid2 *c)
{
	const struct kvm_cpuid_entry2 *e = cpuid_find(c, 0, 0);
	if (!e)
		return CPUID_VENDOR_OTHER;
	char id[12];   /* EBX, EDX, ECX: "Genu" "ineI" "ntel" */
	memcpy(id, &e->ebx, 4);
	memcpy(id + 4, &e->edx, 4);
	memcpy(id + 8, &e->ecx, 4);
	for (size_t i = 0; i < sizeof(cpuid_vendor_ids) / sizeof(cpuid_vendor_ids[0]); i++)
		if (memcmp(id, cpuid_vendor_ids[i].id, 12) == 0)
			return cpuid_vendor_ids[i].v;
	return CPUID_VENDOR_OTHER;
}

const char *cpuid_vendor_name(enum cpuid_vendor v)
{
	switch (v) {
	case CPUID_VENDOR_INTEL: return "Intel";
	case CPUID_VENDOR_AMD:   return "AMD";
	default:                 return "other";
	}
}

unsigned cpuid_tables_for(enum cpuid_vendor v, const struct cpuid_table *out[2])
{
	out[0] = &cpuid_common_table;
	switch (v) {
	case CPUID_VENDOR_INTEL: out[1] = &cpuid_intel_table; return 2;
	case CPUID_VENDOR_AMD:   out[1] = &cpuid_amd_table; return 2;
	default:                 return 1;
	}
}

void cpuid_host_brand(uint32_t brand[12])
{
	memset(brand, 0, 12 * sizeof(brand[0]));
	/* gcc's <cpuid.h> returns unsigned, clang's int: compare as unsigned. */
	if ((unsigned)__get_cpuid_max(0x80000000, NULL) < 0x80000004)
		return;
	for (unsigned i = 0; i < 3; i++)
		__cpuid(0x80000002 + i, brand[i * 4], brand[i * 4 + 1], brand[i * 4 + 2],
			brand[i * 4 + 3]);
}

/* ---- conditions and computed values of the common table --------------- */

static uint32_t apic_id(const struct cpuid_ctx *c)
{
	return c->index;   /* KVM_CREATE_VCPU(index) gives the LAPIC this ID */
}

static uint32_t v_leaf1_apic_id(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
				enum cpuid_reg r)
{
	(void)e, (void)r;
	return apic_id(c) << 24;
}

static uint32_t v_leaf1_count(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			      enum cpuid_reg r)
{
	(void)e, (void)r;
	return (1u << cpuid_core_bits(c)) << 16;
}

static uint32_t v_htt(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e, enum cpuid_reg r)
{
	(void)e, (void)r;
	return c->ncpus > 1 ? BIT(28) : 0;
}

/* TSC-DEADLINE POLICY. The one entry to flip: this sets CPUID.1:ECX[24] when
 * KVM has KVM_CAP_TSC_DEADLINE_TIMER, as QEMU does (KVM emulates the
 * deadline timer but never lists the bit in KVM_GET_SUPPORTED_CPUID).
 * Returning 0 here hides it, and guests use the LAPIC timer in one-shot mode. */
static uint32_t v_tsc_deadline(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			       enum cpuid_reg r)
{
	(void)e, (void)r;
	return c->host->tsc_deadline_timer ? BIT(24) : 0;
}

static bool has_leaf_b(const struct cpuid_ctx *c)
{
	return cpuid_has_function(c->supported, 0xb);
}

/* Leaf 0xB: level 0 = SMT (one thread per core, no APIC ID bits), level 1 =
 * core (all vCPUs, cpuid_core_bits() bits), then the invalid level. */
static uint32_t v_leaf_b(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			 enum cpuid_reg r)
{
	enum { LEVEL_SMT = 1, LEVEL_CORE = 2 };
	unsigned level = e->index;
	switch (r) {
	case CPUID_EAX: return level == 1 ? cpuid_core_bits(c) : 0;
	case CPUID_EBX: return level == 0 ? 1 : level == 1 ? c->ncpus : 0;
	case CPUID_ECX: return (level & 0xff) | (level == 0 ? LEVEL_SMT << 8 : level == 1 ? LEVEL_CORE << 8 : 0);
	default:        return apic_id(c);
	}
}

static bool timing_leaf_wanted(const struct cpuid_ctx *c)
{
	return c->host->tsc_khz && cpuid_has_function(c->supported, KVM_CPUID_SIGNATURE);
}

static uint32_t v_hv_max_leaf(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			      enum cpuid_reg r)
{
	(void)r;
	if (timing_leaf_wanted(c) && e->eax < CPUID_TIMING_LEAF)
		return CPUID_TIMING_LEAF;
	return e->eax;
}

static uint32_t v_timing(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e, enum cpuid_reg r)
{
	(void)e;
	return r == CPUID_EAX ? c->host->tsc_khz : KVM_LAPIC_BUS_KHZ;
}

static bool kvm_brand_empty(const struct kvm_cpuid2 *s)
{
	for (uint32_t f = 0x80000002; f <= 0x80000004; f++) {
		const struct kvm_cpuid_entry2 *e = cpuid_find(s, f, 0);
		if (e && (e->eax | e->ebx | e->ecx | e->edx))
			return false;
	}
	return true;
}

static uint32_t v_brand(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e, enum cpuid_reg r)
{
	if (!kvm_brand_empty(c->supported))
		return cpuid_reg_of(e, r);
	return c->host->brand[(e->function - 0x80000002) * 4 + r];
}

/* ---- the table every vendor gets ----------------------------------------- */

static const struct cpuid_rule common_rules[] = {
/*        leaf  sub        regs         bits          action   when                value            name: reason | QEMU -cpu host | Firecracker */
	{ 0x1,        0,   R_EBX,       BITS(31, 24), COMPUTE, NULL,               v_leaf1_apic_id, "initial APIC ID", "vCPU index, the ID KVM gives vCPU i's LAPIC", "APIC ID", "vCPU index" },
	{ 0x1,        0,   R_EBX,       BITS(23, 16), COMPUTE, NULL,               v_leaf1_count,   "addressable logical processor IDs", "next power of two >= vCPUs (one package)", "vCPUs (0 for one)", "next power of two" },
	{ 0x1,        0,   R_EDX,       BIT(28),      COMPUTE, NULL,               v_htt,           "HTT", "set with more than one vCPU: EBX[23:16] is valid", "same", "same" },
	{ 0x1,        0,   R_ECX,       BIT(31),      SET,     NULL,               NULL,            "HYPERVISOR", "the guest knows it is a guest: kvmclock, PV features, no microcode or MCE probing", "set", "set" },
	{ 0x1,        0,   R_ECX,       BIT(24),      COMPUTE, NULL,               v_tsc_deadline,  "TSC-DEADLINE (policy: see v_tsc_deadline)", "set when KVM has KVM_CAP_TSC_DEADLINE_TIMER; KVM emulates it but never lists it", "same", "always set" },
	{ 0x1,        0,   R_ECX,       BIT(21),      KEEP,    NULL,               NULL,            "x2APIC", "KVM's in-kernel LAPIC emulates it: MSR writes instead of MMIO exits", "kept (in-kernel irqchip)", "kept" },
	{ 0x1,        0,   R_ECX,       BIT(15),      KEEP,    NULL,               NULL,            "PDCM", "IA32_PERF_CAPABILITIES comes with KVM's vPMU", "kept (pmu=on)", "cleared" },
	{ 0x1,        0,   R_ECX,       BIT(3),       CLEAR,   NULL,               NULL,            "MONITOR/MWAIT", "an idle guest must HLT and exit, not MWAIT on a host CPU", "hidden unless -overcommit cpu-pm=on", "KVM never lists it" },
	{ 0x5,        0,   R_ALL,       ~0u,          CLEAR,   NULL,               NULL,            "MONITOR/MWAIT leaf", "goes with MONITOR", "zero unless cpu-pm=on", "KVM's (zero)" },
	{ 0x1,        0,   R_ECX,       BIT(5),       CLEAR,   NULL,               NULL,            "VMX", "no nested virtualization by default (KVM lists it with kvm_intel nested=1)", "passed through (named models hide it)", "passed through" },
	{ 0x80000001, 0,   R_ECX,       BIT(2),       CLEAR,   NULL,               NULL,            "SVM", "no nested virtualization by default (KVM lists it with kvm_amd nested=1)", "passed through (named models: svm=off)", "passed through" },
	{ 0x8000000a, 0,   R_ALL,       ~0u,          CLEAR,   NULL,               NULL,            "SVM features", "go with SVM", "filled when svm is on", "passed through" },
	{ 0x80000001, 0,   R_ECX,       BIT(29),      CLEAR,   NULL,               NULL,            "MONITORX/MWAITX", "as MONITOR", "not listed by KVM", "not listed by KVM" },
	{ 0x6,        0,   R_EAX,       ~BIT(2),      CLEAR,   NULL,               NULL,            "power management but ARAT", "no MSRs behind turbo, HWP, EPB; ARAT stays: the emulated LAPIC timer never stops", "ARAT only", "clears turbo and EPB" },
	{ 0x6,        0,   R_EBX | R_ECX | R_EDX, ~0u, CLEAR,  NULL,               NULL,            "power management", "as above", "zero", "EPB cleared" },
	{ 0x7,        0,   R_ECX,       BIT(5),       CLEAR,   NULL,               NULL,            "WAITPKG", "UMWAIT/TPAUSE would park the host CPU in C0.x; KVM enables them only when this is set", "only with cpu-pm=on", "cleared" },
	{ 0x7,        0,   R_EBX,       BIT(2),       CLEAR,   NULL,               NULL,            "SGX", "needs an EPC section, which minivmm does not give", "only with sgx-epc", "passed through" },
	{ 0x7,        0,   R_ECX,       BIT(30),      CLEAR,   NULL,               NULL,            "SGX_LC", "goes with SGX", "only with sgx-epc", "passed through" },
	{ 0x12,       CPUID_ANY, R_ALL, ~0u,          CLEAR,   NULL,               NULL,            "SGX leaf", "goes with SGX", "zero without sgx-epc", "passed through" },
	{ 0x7,        0,   R_EDX,       BIT(29),      KEEP,    NULL,               NULL,            "ARCH_CAPABILITIES", "KVM emulates the MSR on every vendor; it tells the guest which mitigations it can skip", "kept when KVM lists the MSR", "cleared on AMD" },
	{ 0xa,        0,   R_ALL,       ~0u,          KEEP,    NULL,               NULL,            "architectural PMU", "KVM's vPMU (kvm.enable_pmu): perf works in the guest", "kept (pmu=on for -cpu host)", "zeroed" },
	{ 0xb,        1,   0,           0,            ADD,     has_leaf_b,         NULL,            "0xB core level", "newer KVM lists only an empty subleaf 0, older ones the host's", "built by QEMU", "inserted" },
	{ 0xb,        2,   0,           0,            ADD,     has_leaf_b,         NULL,            "0xB end of levels", "the first invalid level ends the list", "built by QEMU", "-" },
	{ 0xb,        CPUID_ANY, R_EAX, ~0u,          COMPUTE, NULL,               v_leaf_b,        "0xB APIC ID shift", "0 at the thread level, bits for N vCPUs at the core level", "same", "core level: 5 (room for 32 vCPUs)" },
	{ 0xb,        CPUID_ANY, R_EBX, ~0u,          COMPUTE, NULL,               v_leaf_b,        "0xB processors at this level", "1 thread per core, N vCPUs per package", "same", "same" },
	{ 0xb,        CPUID_ANY, R_ECX, ~0u,          COMPUTE, NULL,               v_leaf_b,        "0xB level number and type", "SMT, core, then invalid", "same", "same" },
	{ 0xb,        CPUID_ANY, R_EDX, ~0u,          COMPUTE, NULL,               v_leaf_b,        "0xB x2APIC ID", "vCPU index", "same", "same" },
	{ 0x1f,       CPUID_ANY, 0,     0,            DROP,    NULL,               NULL,            "0x1F V2 topology", "would describe the host's dies and modules; without it guests read 0xB", "zero unless -smp has dies/modules", "copy of 0xB" },
	{ 0xd,        CPUID_ANY, R_ALL, ~0u,          KEEP,    NULL,               NULL,            "XSAVE components and sizes", "KVM sizes them for the components it enables and updates EBX when the guest sets XCR0", "recomputed, same components", "kept" },
	{ 0x40000000, 0,   R_EBX | R_ECX | R_EDX, ~0u, KEEP,   NULL,               NULL,            "signature KVMKVMKVM", "guests find kvmclock and the PV features through it", "same", "kept" },
	{ 0x40000000, 0,   R_EAX,       ~0u,          COMPUTE, NULL,               v_hv_max_leaf,   "max hypervisor leaf", "raised to 0x40000010 with the timing leaf", "same", "kept (0x40000001)" },
	{ 0x40000001, 0,   R_ALL,       ~0u,          KEEP,    NULL,               NULL,            "KVM PV features", "as KVM offers them; PV unhalt works with the in-kernel irqchip", "kept (pv-unhalt needs the in-kernel irqchip)", "kept" },
	{ 0x40000010, 0,   0,           0,            ADD,     timing_leaf_wanted, NULL,            "timing leaf", "TSC and LAPIC frequencies, so guests need not calibrate (slow and unreliable nested)", "only with invtsc, which -cpu host hides", "none" },
	{ 0x40000010, 0,   R_EAX,       ~0u,          COMPUTE, timing_leaf_wanted, v_timing,        "TSC kHz", "KVM_GET_TSC_KHZ", "env->tsc_khz", "-" },
	{ 0x40000010, 0,   R_EBX,       ~0u,          COMPUTE, timing_leaf_wanted, v_timing,        "LAPIC bus kHz", "KVM's LAPIC timer runs at 1 GHz", "apic-bus-frequency (1 GHz)", "-" },
	{ 0x80000002, 0,   R_ALL,       ~0u,          COMPUTE, NULL,               v_brand,         "brand string 1/3", "KVM's (the host's); the host CPUID's when KVM's is empty", "host CPUID", "fixed per vendor" },
	{ 0x80000003, 0,   R_ALL,       ~0u,          COMPUTE, NULL,               v_brand,         "brand string 2/3", "as above", "host CPUID", "fixed per vendor" },
	{ 0x80000004, 0,   R_ALL,       ~0u,          COMPUTE, NULL,               v_brand,         "brand string 3/3", "as above", "host CPUID", "fixed per vendor" },
	{ 0x80000007, 0,   R_EDX,       BIT(8),       KEEP,    NULL,               NULL,            "invariant TSC", "KVM keeps the TSC constant: the guest's cheapest clock", "hidden (migratable=on)", "kept" },
};

const struct cpuid_table cpuid_common_table = {
	"common", common_rules, sizeof(common_rules) / sizeof(common_rules[0]),
};

/* ---- the engine ------------------------------------------------------------ */

static bool rule_matches(const struct cpuid_rule *r, const struct kvm_cpuid_entry2 *e)
{
	return r->function == e->function && (r->index == CPUID_ANY || r->index == e->index);
}

static bool rule_active(const struct cpuid_rule *r, const struct cpuid_ctx *c)
{
	return !r->when || r->when(c);
}

static bool function_dropped(const struct cpuid_table *const *t, unsigned nt,
			     const struct cpuid_ctx *c, uint32_t function)
{
	for (unsigned i = 0; i < nt; i++)
		for (unsigned j = 0; j < t[i]->n; j++) {
			const struct cpuid_rule *r = &t[i]->rules[j];
			if (r->action == DROP && r->function == function && rule_active(r, c))
				return true;
		}
	return false;
}

/* A new entry is significant-index when KVM's entries of the function are. */
static void cpuid_add_entry(struct kvm_cpuid2 *out, uint32_t function, uint32_t index)
{
	uint32_t flags = 0;
	for (unsigned i = 0; i < out->nent; i++)
		if (out->entries[i].function == function)
			flags |= out->entries[i].flags & KVM_CPUID_FLAG_SIGNIFCANT_INDEX;
	out->entries[out->nent++] = (struct kvm_cpuid_entry2){
		.function = function, .index = index, .flags = flags };
}

static void rule_apply(const struct cpuid_rule *r, const struct cpuid_ctx *c,
		       struct kvm_cpuid_entry2 *e)
{
	for (enum cpuid_reg reg = CPUID_EAX; reg < CPUID_NREGS; reg++) {
		if (!(r->regs & (1u << reg)))
			continue;
		uint32_t *v = cpuid_reg_ptr(e, reg);
		switch (r->action) {
		case SET:     *v |= r->mask; break;
		case CLEAR:   *v &= ~r->mask; break;
		case COMPUTE: *v = (*v & ~r->mask) | (r->value(c, e, reg) & r->mask); break;
		default:      break;
		}
	}
}

void cpuid_build(const struct kvm_cpuid2 *supported, const struct cpuid_host *host,
		 unsigned index, unsigned ncpus, struct kvm_cpuid2 *out)
{
	const struct cpuid_ctx c = {
		.supported = supported, .host = host, .index = index, .ncpus = ncpus ? ncpus : 1,
		.vendor = cpuid_vendor_of(supported),
	};
	const struct cpuid_table *t[2];
	unsigned nt = cpuid_tables_for(c.vendor, t);

	out->nent = 0;
	for (unsigned i = 0; i < supported->nent; i++)
		if (!function_dropped(t, nt, &c, supported->entries[i].function))
			out->entries[out->nent++] = supported->entries[i];

	unsigned added = 0;
	for (unsigned i = 0; i < nt; i++)
		for (unsigned j = 0; j < t[i]->n; j++) {
			const struct cpuid_rule *r = &t[i]->rules[j];
			if (r->action == ADD && rule_active(r, &c) &&
			    !cpuid_find(out, r->function, r->index) && added < CPUID_MAX_ADDED) {
				cpuid_add_entry(out, r->function, r->index);
				added++;
			}
		}

	for (unsigned i = 0; i < nt; i++)
		for (unsigned j = 0; j < t[i]->n; j++) {
			const struct cpuid_rule *r = &t[i]->rules[j];
			if (r->action == ADD || r->action == DROP || !rule_active(r, &c))
				continue;
			for (unsigned k = 0; k < out->nent; k++)
				if (rule_matches(r, &out->entries[k]))
					rule_apply(r, &c, &out->entries[k]);
		}
}

/* ---- printing ---------------------------------------------------------------- */

void cpuid_print(FILE *f, const struct kvm_cpuid2 *c)
{
	for (unsigned i = 0; i < c->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &c->entries[i];
		fprintf(f, "0x%08x 0x%x 0x%08x 0x%08x 0x%08x 0x%08x 0x%x\n", e->function, e->index,
			e->eax, e->ebx, e->ecx, e->edx, e->flags);
	}
}

static const char *const reg_names[CPUID_NREGS] = { "eax", "ebx", "ecx", "edx" };

/* Every rule of the vendor's tables that owns bits in `bits` of (e, reg),
 * or, with reg == CPUID_NREGS, that adds or drops the entry. */
static unsigned print_rules_for(FILE *f, enum cpuid_vendor v, const struct kvm_cpuid_entry2 *e,
				enum cpuid_reg reg, uint32_t bits)
{
	const struct cpuid_table *t[2];
	unsigned nt = cpuid_tables_for(v, t), found = 0;
	for (unsigned i = 0; i < nt; i++)
		for (unsigned j = 0; j < t[i]->n; j++) {
			const struct cpuid_rule *r = &t[i]->rules[j];
			if (!rule_matches(r, e))
				continue;
			bool owns = reg == CPUID_NREGS ? (r->action == ADD || r->action == DROP)
						       : (r->regs & (1u << reg)) && (r->mask & bits) &&
							 r->action != KEEP;
			if (!owns)
				continue;
			fprintf(f, "#     %s [%s]: %s (QEMU: %s; Firecracker: %s)\n", r->what,
				t[i]->name, r->why, r->qemu, r->fc);
			found++;
		}
	if (!found)
		fprintf(f, "#     (no table line: changed by KVM itself)\n");
	return found;
}

unsigned cpuid_print_changes(FILE *f, const struct kvm_cpuid2 *supported,
			     const struct kvm_cpuid2 *guest, enum cpuid_vendor v)
{
	unsigned changes = 0;
	for (unsigned i = 0; i < guest->nent; i++) {
		const struct kvm_cpuid_entry2 *g = &guest->entries[i];
		const struct kvm_cpuid_entry2 *s = cpuid_find(supported, g->function, g->index);
		if (!s) {
			fprintf(f, "# 0x%08x.%u added: %08x %08x %08x %08x\n", g->function, g->index,
				g->eax, g->ebx, g->ecx, g->edx);
			print_rules_for(f, v, g, CPUID_NREGS, 0);
			changes++;
			continue;
		}
		for (enum cpuid_reg r = CPUID_EAX; r < CPUID_NREGS; r++) {
			uint32_t from = cpuid_reg_of(s, r), to = cpuid_reg_of(g, r);
			if (from == to)
				continue;
			fprintf(f, "# 0x%08x.%u %s 0x%08x -> 0x%08x\n", g->function, g->index,
				reg_names[r], from, to);
			print_rules_for(f, v, g, r, from ^ to);
			changes++;
		}
	}
	for (unsigned i = 0; i < supported->nent; i++) {
		const struct kvm_cpuid_entry2 *s = &supported->entries[i];
		if (cpuid_find(guest, s->function, s->index))
			continue;
		fprintf(f, "# 0x%08x.%u removed\n", s->function, s->index);
		print_rules_for(f, v, s, CPUID_NREGS, 0);
		changes++;
	}
	return changes;
}
