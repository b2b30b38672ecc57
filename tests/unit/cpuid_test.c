#include <criterion/criterion.h>
#include <stdlib.h>

#include "boot/cpu_x86.h"

static struct kvm_cpuid2 *fake_supported(void)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 8 * sizeof(c->entries[0]));
	c->entries[0] = (struct kvm_cpuid_entry2){ .function = 0, .eax = 0x1f };
	c->entries[1] = (struct kvm_cpuid_entry2){ .function = 1, .ebx = 0x00010800, .edx = 1 };
	c->entries[2] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 0 };
	c->entries[3] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 1 };
	c->entries[4] = (struct kvm_cpuid_entry2){ .function = 0xb, .index = 2 };
	c->entries[5] = (struct kvm_cpuid_entry2){ .function = 0x1f, .index = 0 };
	c->entries[6] = (struct kvm_cpuid_entry2){ .function = 4, .index = 3, .eax = (3 << 5) | 3 };
	c->entries[7] = (struct kvm_cpuid_entry2){ .function = 0x80000008, .ecx = 0x7 };
	c->nent = 8;
	return c;
}

static const struct kvm_cpuid_entry2 *find(const struct kvm_cpuid2 *c, unsigned fn, unsigned idx)
{
	for (unsigned i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn && c->entries[i].index == idx)
			return &c->entries[i];
	return NULL;
}

Test(cpuid, apic_id_and_count_in_leaf_1)
{
	struct kvm_cpuid2 *sup = fake_supported();
	struct kvm_cpuid2 *out = calloc(1, sizeof(*out) + sup->nent * sizeof(out->entries[0]));
	cpu_x86_build_cpuid(sup, 3, 4, 0, out);
	const struct kvm_cpuid_entry2 *l1 = find(out, 1, 0);
	cr_assert_not_null(l1);
	cr_assert_eq(l1->ebx >> 24, 3, "APIC ID");
	cr_assert_eq((l1->ebx >> 16) & 0xff, 4, "logical processor count");
	cr_assert_eq(l1->ebx & 0xffff, 0x0800, "CLFLUSH size kept");
	cr_assert(l1->ecx & (1u << 31), "hypervisor bit");
	cr_assert(l1->edx & (1u << 28), "HTT with several CPUs");
	free(sup);
	free(out);
}

Test(cpuid, leaf_b_topology_and_x2apic_id)
{
	struct kvm_cpuid2 *sup = fake_supported();
	struct kvm_cpuid2 *out = calloc(1, sizeof(*out) + sup->nent * sizeof(out->entries[0]));
	cpu_x86_build_cpuid(sup, 2, 3, 0, out);
	const struct kvm_cpuid_entry2 *smt = find(out, 0xb, 0), *core = find(out, 0xb, 1),
				       *end = find(out, 0xb, 2);
	cr_assert_eq(smt->edx, 2);
	cr_assert_eq(smt->ebx, 1);
	cr_assert_eq((smt->ecx >> 8) & 0xff, 1, "SMT level");
	cr_assert_eq(core->eax, 2, "shift: 3 CPUs need 2 bits");
	cr_assert_eq(core->ebx, 3);
	cr_assert_eq((core->ecx >> 8) & 0xff, 2, "core level");
	cr_assert_eq((end->ecx >> 8) & 0xff, 0, "no further levels");
	cr_assert_null(find(out, 0x1f, 0), "leaf 0x1f dropped");
	cr_assert_eq(find(out, 4, 3)->eax >> 26, 2, "cores per package - 1");
	cr_assert_eq(find(out, 0x80000008, 0)->ecx & 0xff, 2);
	free(sup);
	free(out);
}

Test(cpuid, single_cpu_has_no_htt)
{
	struct kvm_cpuid2 *sup = fake_supported();
	sup->entries[1].edx |= 1u << 28;
	struct kvm_cpuid2 *out = calloc(1, sizeof(*out) + sup->nent * sizeof(out->entries[0]));
	cpu_x86_build_cpuid(sup, 0, 1, 0, out);
	cr_assert_eq(find(out, 1, 0)->edx & (1u << 28), 0);
	free(sup);
	free(out);
}

Test(cpuid, timing_leaf_gives_tsc_and_bus_khz)
{
	struct kvm_cpuid2 *sup = calloc(1, sizeof(*sup) + 2 * sizeof(sup->entries[0]));
	sup->entries[0] = (struct kvm_cpuid_entry2){ .function = 0x40000000, .eax = 0x40000001 };
	sup->entries[1] = (struct kvm_cpuid_entry2){ .function = 0x40000001 };
	sup->nent = 2;
	struct kvm_cpuid2 *out = calloc(1, sizeof(*out) + 3 * sizeof(out->entries[0]));
	cpu_x86_build_cpuid(sup, 0, 1, 2100000, out);
	cr_assert_eq(find(out, 0x40000000, 0)->eax, 0x40000010, "max hypervisor leaf raised");
	const struct kvm_cpuid_entry2 *t = find(out, 0x40000010, 0);
	cr_assert_not_null(t);
	cr_assert_eq(t->eax, 2100000);
	cr_assert_eq(t->ebx, 1000000);
	cpu_x86_build_cpuid(sup, 0, 1, 0, out);
	cr_assert_null(find(out, 0x40000010, 0), "no leaf without a TSC frequency");
	free(sup);
	free(out);
}
