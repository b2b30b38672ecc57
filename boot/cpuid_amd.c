/* SPDX-License-Identifier: Apache-2.0 */
/* The AMD table (AuthenticAMD, HygonGenuine): topology in AMD's own leaves.
 * Linux on AMD reads the core ID from 0x8000_001E when TOPOEXT is set (the
 * 6.9 topology code takes the APIC ID from it too; later versions only
 * without leaf 0xB), the package width from 0x8000_0008 and the LLC sharing
 * from 0x8000_001D. KVM passes the host's values or zeros, which made every
 * vCPU core 0 with APIC ID 0 (AMD APM vol. 3, appendix E). */
#include "boot/cpuid_rules.h"

static bool has_topoext_leaves(const struct cpuid_ctx *c)
{
	return cpuid_has_function(c->supported, 0x8000001d) &&
	       cpuid_has_function(c->supported, 0x8000001e);
}

static uint32_t v_cmp_legacy(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			     enum cpuid_reg r)
{
	(void)e, (void)r;
	return c->ncpus > 1 ? BIT(1) : 0;
}

static uint32_t v_topoext(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			  enum cpuid_reg r)
{
	(void)r;
	return has_topoext_leaves(c) ? e->ecx & BIT(22) : 0;
}

/* 0x8000_0008 ECX: NC = cores - 1 in [7:0], ApicIdSize in [15:12]. */
static uint32_t v_core_count(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			     enum cpuid_reg r)
{
	(void)e, (void)r;
	return (c->ncpus - 1) | (cpuid_core_bits(c) << 12);
}

/* NumSharingCache (logical processors sharing the cache - 1): L1 and L2
 * belong to a core (one thread), L3 to the package. AMD counts the real
 * sharers; the guest rounds up to a power of two for the ShareId shift. */
static uint32_t v_cache_sharing(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
				enum cpuid_reg r)
{
	(void)r;
	if (cpuid_cache_type(e) == 0)
		return e->eax;   /* the terminating entry stays as it is */
	return cpuid_cache_level(e) <= 2 ? 0 : (c->ncpus - 1) << 14;
}

/* 0x8000_001E: EAX extended APIC ID; EBX core ID [7:0], threads per core - 1
 * [15:8]; ECX node ID [7:0], nodes per socket - 1 [10:8]; EDX reserved. */
static uint32_t v_ext_apic(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			   enum cpuid_reg r)
{
	(void)e;
	switch (r) {
	case CPUID_EAX: return c->index;
	case CPUID_EBX: return (c->index & 0xff) | (0u << 8);
	default:        return 0;
	}
}

static const struct cpuid_rule amd_rules[] = {
/*        leaf  sub        regs   bits          action   when  value            name: reason | QEMU -cpu host | Firecracker */
	{ 0x80000001, 0,   R_ECX, BIT(1),       COMPUTE, NULL, v_cmp_legacy,    "CmpLegacy", "set with more than one vCPU: the HTT count means cores, not threads", "same", "KVM's (the host's)" },
	{ 0x80000001, 0,   R_ECX, BIT(22),      COMPUTE, NULL, v_topoext,       "TOPOEXT", "kept when KVM lists 0x8000001D and 0x8000001E, which this table fills; cleared otherwise", "always set", "always set" },
	{ 0x80000008, 0,   R_ECX, BITS(7, 0),   COMPUTE, NULL, v_core_count,    "NC (cores - 1)", "vCPUs - 1", "same (0 for one)", "same" },
	{ 0x80000008, 0,   R_ECX, BITS(15, 12), COMPUTE, NULL, v_core_count,    "ApicIdSize", "bits for N vCPUs: every APIC ID is in package 0", "same (0 for one)", "7" },
	{ 0x8000001d, CPUID_ANY, R_EAX, BITS(25, 14), COMPUTE, NULL, v_cache_sharing, "NumSharingCache", "L1/L2 per core, L3 shared by all vCPUs", "its own cache model (host-cache-info=off)", "same" },
	{ 0x8000001e, 0,   R_EAX, ~0u,          COMPUTE, NULL, v_ext_apic,      "extended APIC ID", "vCPU index (KVM gives zeros or the host's)", "same", "same" },
	{ 0x8000001e, 0,   R_EBX, ~0u,          COMPUTE, NULL, v_ext_apic,      "core ID, threads per core", "core = vCPU index, one thread", "same", "same" },
	{ 0x8000001e, 0,   R_ECX, ~0u,          COMPUTE, NULL, v_ext_apic,      "node ID, nodes per socket", "node 0 of one", "same", "same" },
	{ 0x8000001e, 0,   R_EDX, ~0u,          CLEAR,   NULL, NULL,            "0x8000001E EDX", "reserved", "zero", "kept" },
};

const struct cpuid_table cpuid_amd_table = {
	"AMD", amd_rules, sizeof(amd_rules) / sizeof(amd_rules[0]),
};
