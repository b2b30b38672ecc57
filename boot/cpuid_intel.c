/* SPDX-License-Identifier: Apache-2.0 */
/* The Intel table (GenuineIntel; CentaurHauls and Zhaoxin's "  Shanghai  "
 * follow Intel's CPUID layout): the deterministic cache parameters, whose
 * core and sharing counts KVM passes from the host. Topology proper is in
 * leaf 0xB, which the common table builds for every vendor. */
#include "boot/cpuid_rules.h"

/* Leaf 4 EAX: [31:26] addressable core IDs in the package - 1, [25:14]
 * addressable logical processor IDs sharing the cache - 1. Intel gives
 * "addressable" counts (powers of two), as QEMU does: L1 and L2 per core
 * (one thread), L3 and beyond shared by the package. */
static uint32_t v_cache_params(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			       enum cpuid_reg r)
{
	(void)r;
	if (cpuid_cache_type(e) == 0)
		return e->eax;   /* the terminating entry stays as it is */
	uint32_t ids = (1u << cpuid_core_bits(c)) - 1;
	return (ids << 26) | (cpuid_cache_level(e) <= 2 ? 0 : ids << 14);
}

static const struct cpuid_rule intel_rules[] = {
/*        leaf  sub        regs   bits          action   when  value           name: reason | QEMU -cpu host | Firecracker */
	{ 0x4,  CPUID_ANY, R_EAX, BITS(31, 26), COMPUTE, NULL, v_cache_params, "cores per package", "addressable core IDs - 1 for N vCPUs (the host's count otherwise)", "same", "vCPUs - 1" },
	{ 0x4,  CPUID_ANY, R_EAX, BITS(25, 14), COMPUTE, NULL, v_cache_params, "threads sharing the cache", "L1/L2: one thread; L3: the package", "its own cache model (host-cache-info=off)", "same, vCPUs - 1" },
};

const struct cpuid_table cpuid_intel_table = {
	"Intel", intel_rules, sizeof(intel_rules) / sizeof(intel_rules[0]),
};
