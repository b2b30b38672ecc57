/* SPDX-License-Identifier: Apache-2.0 */
/* The rule tables behind cpuid_build(), shared by cpuid.c, cpuid_intel.c,
 * cpuid_amd.c and the unit tests. One rule = one line of a table: which
 * bits of which register of which leaf, what happens to them, and why. */
#ifndef MINIVMM_BOOT_CPUID_RULES_H
#define MINIVMM_BOOT_CPUID_RULES_H

#include "boot/cpuid.h"

enum cpuid_reg { CPUID_EAX, CPUID_EBX, CPUID_ECX, CPUID_EDX, CPUID_NREGS };

/* Register sets of a rule. */
#define R_EAX (1u << CPUID_EAX)
#define R_EBX (1u << CPUID_EBX)
#define R_ECX (1u << CPUID_ECX)
#define R_EDX (1u << CPUID_EDX)
#define R_ALL (R_EAX | R_EBX | R_ECX | R_EDX)

#define CPUID_ANY 0xffffffffu   /* index: every subleaf KVM lists */
#define BIT(n) (1u << (n))
#define BITS(hi, lo) ((~0u >> (31 - (hi))) & ~((1u << (lo)) - 1))

enum cpuid_action {
	KEEP,      /* stays as KVM reports it (listed for the record; tested) */
	SET,       /* the bits are set */
	CLEAR,     /* the bits are cleared */
	COMPUTE,   /* the bits become value() */
	ADD,       /* the entry (function, index) is added, zeroed, when KVM lacks it */
	DROP,      /* every entry of the function is removed */
};

/* What value() and when() may look at. */
struct cpuid_ctx {
	const struct kvm_cpuid2 *supported;
	const struct cpuid_host *host;
	unsigned index, ncpus;
	enum cpuid_vendor vendor;
};

struct cpuid_rule {
	uint32_t function, index;   /* index CPUID_ANY: every subleaf */
	unsigned regs;              /* R_* set; ignored by ADD and DROP */
	uint32_t mask;              /* bits the rule owns */
	enum cpuid_action action;
	/* NULL: always. Otherwise the rule does nothing when this is false. */
	bool (*when)(const struct cpuid_ctx *c);
	/* COMPUTE: the new value of the register (only `mask` bits are used);
	 * `e` is the entry being built, still holding KVM's values. */
	uint32_t (*value)(const struct cpuid_ctx *c, const struct kvm_cpuid_entry2 *e,
			  enum cpuid_reg reg);
	const char *what;   /* the field's name */
	const char *why;    /* the reason, one line */
	const char *qemu;   /* what QEMU -cpu host does with it */
	const char *fc;     /* what Firecracker's CPUID normalisation does */
};

struct cpuid_table {
	const char *name;
	const struct cpuid_rule *rules;
	unsigned n;
};

extern const struct cpuid_table cpuid_common_table;
extern const struct cpuid_table cpuid_intel_table;
extern const struct cpuid_table cpuid_amd_table;

/* The tables applied for vendor v, in order (the common one first).
 * Returns how many (1 or 2). */
unsigned cpuid_tables_for(enum cpuid_vendor v, const struct cpuid_table *out[2]);

/* ---- helpers for the rule files ------------------------------------ */

const struct kvm_cpuid_entry2 *cpuid_find(const struct kvm_cpuid2 *c, uint32_t function,
					  uint32_t index);
bool cpuid_has_function(const struct kvm_cpuid2 *c, uint32_t function);
uint32_t cpuid_reg_of(const struct kvm_cpuid_entry2 *e, enum cpuid_reg r);

/* Bits needed for n IDs: 1 -> 0, 2 -> 1, 3..4 -> 2, 64 -> 6. */
unsigned cpuid_bits_for(unsigned n);

/* Topology (one socket, `ncpus` cores of one thread): bits of the APIC ID
 * that number the cores. */
static inline unsigned cpuid_core_bits(const struct cpuid_ctx *c)
{
	return cpuid_bits_for(c->ncpus);
}

/* Cache level in EAX[7:5] and type in EAX[4:0], the same in leaf 4 (Intel)
 * and 0x8000_001D (AMD); type 0 ends the list. */
static inline unsigned cpuid_cache_level(const struct kvm_cpuid_entry2 *e)
{
	return (e->eax >> 5) & 7;
}
static inline unsigned cpuid_cache_type(const struct kvm_cpuid_entry2 *e)
{
	return e->eax & 0x1f;
}

#endif
