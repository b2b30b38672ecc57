/* SPDX-License-Identifier: Apache-2.0 */
/* The CPU model (boot/cpuid*.c) against recorded KVM CPUID dumps of real
 * hosts (tests/unit/data/cpuid-*.txt): every table line has its effect on
 * each vendor, the topology is right for 1 to 64 vCPUs, and nothing the
 * tables do not mention changes. Also the boot MSR list (boot/cpu_x86.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot/cpu_x86.h"
#include "boot/cpuid_rules.h"

#ifndef UNIT_DATA_DIR
#define UNIT_DATA_DIR "tests/unit/data"
#endif

#define MAX_ENTRIES 256

static const struct dump {
	const char *file;
	enum cpuid_vendor vendor;
} dumps[] = {
	{ "cpuid-amd-epyc-pvm.txt", CPUID_VENDOR_AMD },    /* this host, recorded */
	{ "cpuid-amd-genoa-fc.txt", CPUID_VENDOR_AMD },    /* Firecracker's test data */
	{ "cpuid-intel-spr-fc.txt", CPUID_VENDOR_INTEL },  /* Firecracker's test data */
};
#define NDUMPS (sizeof(dumps) / sizeof(dumps[0]))

static const unsigned vcpu_counts[] = { 1, 2, 4, 64 };

/* ---- helpers ------------------------------------------------------------ */

static struct kvm_cpuid2 *cpuid_alloc(unsigned n)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));
	cr_assert_not_null(c);
	return c;
}

static struct kvm_cpuid2 *cpuid_copy(const struct kvm_cpuid2 *c)
{
	struct kvm_cpuid2 *n = cpuid_alloc(MAX_ENTRIES);
	memcpy(n->entries, c->entries, c->nent * sizeof(c->entries[0]));
	n->nent = c->nent;
	return n;
}

/* "function index eax ebx ecx edx flags" a line, '#' comments. */
static struct kvm_cpuid2 *load_text(FILE *f, const char *name)
{
	struct kvm_cpuid2 *c = cpuid_alloc(MAX_ENTRIES);
	char line[512];
	unsigned lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		unsigned long v[7];
		char *p = line, *end;
		for (int i = 0; i < 7; i++, p = end) {
			v[i] = strtoul(p, &end, 0);
			cr_assert_neq(end, p, "%s:%u: not 'function index eax ebx ecx edx flags'", name, lineno);
		}
		cr_assert_lt(c->nent, MAX_ENTRIES, "%s: too many entries", name);
		c->entries[c->nent++] = (struct kvm_cpuid_entry2){
			.function = (uint32_t)v[0], .index = (uint32_t)v[1], .eax = (uint32_t)v[2],
			.ebx = (uint32_t)v[3], .ecx = (uint32_t)v[4], .edx = (uint32_t)v[5],
			.flags = (uint32_t)v[6] };
	}
	return c;
}

static struct kvm_cpuid2 *load_dump(const char *file)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", UNIT_DATA_DIR, file);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f, "cannot open %s: %s", path, strerror(errno));
	struct kvm_cpuid2 *c = load_text(f, file);
	fclose(f);
	cr_assert_gt(c->nent, 20, "%s: only %u entries", file, c->nent);
	return c;
}

static struct cpuid_host host_all(void)
{
	struct cpuid_host h = { .tsc_khz = 2100000, .tsc_deadline_timer = true };
	memcpy(h.brand, "Test CPU Model 1234 @ 2.10GHz", 29);
	return h;
}

static struct kvm_cpuid2 *build(const struct kvm_cpuid2 *sup, const struct cpuid_host *h,
				unsigned index, unsigned ncpus)
{
	struct kvm_cpuid2 *out = cpuid_alloc(sup->nent + CPUID_MAX_ADDED);
	cpuid_build(sup, h, index, ncpus, out);
	cr_assert_leq(out->nent, sup->nent + CPUID_MAX_ADDED);
	return out;
}

static const struct kvm_cpuid_entry2 *must_find(const struct kvm_cpuid2 *c, uint32_t fn, uint32_t idx)
{
	const struct kvm_cpuid_entry2 *e = cpuid_find(c, fn, idx);
	cr_assert_not_null(e, "no CPUID entry 0x%x.%u", fn, idx);
	return e;
}

static struct kvm_cpuid_entry2 *find_mut(struct kvm_cpuid2 *c, uint32_t fn, uint32_t idx)
{
	for (unsigned i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn && c->entries[i].index == idx)
			return &c->entries[i];
	return NULL;
}

static uint32_t *reg_mut(struct kvm_cpuid_entry2 *e, enum cpuid_reg r)
{
	return r == CPUID_EAX ? &e->eax : r == CPUID_EBX ? &e->ebx : r == CPUID_ECX ? &e->ecx : &e->edx;
}

static void set_vendor(struct kvm_cpuid2 *c, const char id[12])
{
	struct kvm_cpuid_entry2 *e = find_mut(c, 0, 0);
	cr_assert_not_null(e);
	memcpy(&e->ebx, id, 4);
	memcpy(&e->edx, id + 4, 4);
	memcpy(&e->ecx, id + 8, 4);
}

static bool rule_matches(const struct cpuid_rule *r, const struct kvm_cpuid_entry2 *e)
{
	return r->function == e->function && (r->index == CPUID_ANY || r->index == e->index);
}

static bool is_modifier(const struct cpuid_rule *r)
{
	return r->action == SET || r->action == CLEAR || r->action == COMPUTE;
}

/* Bits of (e, reg) that some SET/CLEAR/COMPUTE line of vendor v owns. */
static uint32_t owned_bits(enum cpuid_vendor v, const struct kvm_cpuid_entry2 *e, enum cpuid_reg reg)
{
	const struct cpuid_table *t[2];
	unsigned nt = cpuid_tables_for(v, t);
	uint32_t bits = 0;
	for (unsigned i = 0; i < nt; i++)
		for (unsigned j = 0; j < t[i]->n; j++) {
			const struct cpuid_rule *r = &t[i]->rules[j];
			if (is_modifier(r) && rule_matches(r, e) && (r->regs & (1u << reg)))
				bits |= r->mask;
		}
	return bits;
}

static bool rule_says(enum cpuid_vendor v, enum cpuid_action action, uint32_t fn, uint32_t idx)
{
	const struct cpuid_table *t[2];
	unsigned nt = cpuid_tables_for(v, t);
	const struct kvm_cpuid_entry2 e = { .function = fn, .index = idx };
	for (unsigned i = 0; i < nt; i++)
		for (unsigned j = 0; j < t[i]->n; j++)
			if (t[i]->rules[j].action == action && rule_matches(&t[i]->rules[j], &e))
				return true;
	return false;
}

static unsigned pow2_at_least(unsigned n)
{
	unsigned p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

static unsigned log2_ceil(unsigned n)
{
	unsigned b = 0;
	while ((1u << b) < n)
		b++;
	return b;
}

/* ---- vendors and tables ---------------------------------------------------- */

Test(cpuid, vendor_of_each_dump_and_of_the_vendors_that_follow_intel_or_amd)
{
	for (size_t d = 0; d < NDUMPS; d++) {
		struct kvm_cpuid2 *c = load_dump(dumps[d].file);
		cr_assert_eq(cpuid_vendor_of(c), dumps[d].vendor, "%s", dumps[d].file);
		free(c);
	}
	static const struct { const char *id; enum cpuid_vendor v; } ids[] = {
		{ "HygonGenuine", CPUID_VENDOR_AMD }, { "CentaurHauls", CPUID_VENDOR_INTEL },
		{ "  Shanghai  ", CPUID_VENDOR_INTEL }, { "GenuineIotel", CPUID_VENDOR_OTHER },
		{ "KVMKVMKVM\0\0\0", CPUID_VENDOR_OTHER },
	};
	struct kvm_cpuid2 *c = load_dump(dumps[0].file);
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		set_vendor(c, ids[i].id);
		cr_assert_eq(cpuid_vendor_of(c), ids[i].v, "%.12s", ids[i].id);
	}
	c->nent = 0;
	cr_assert_eq(cpuid_vendor_of(c), CPUID_VENDOR_OTHER, "no leaf 0");
	free(c);
}

Test(cpuid, every_table_line_is_complete)
{
	const struct cpuid_table *tables[] = { &cpuid_common_table, &cpuid_intel_table, &cpuid_amd_table };
	unsigned adds = 0;
	for (size_t i = 0; i < 3; i++)
		for (unsigned j = 0; j < tables[i]->n; j++) {
			const struct cpuid_rule *r = &tables[i]->rules[j];
			const char *where = tables[i]->name;
			cr_assert(r->what && *r->what && r->why && *r->why && r->qemu && *r->qemu &&
				  r->fc && *r->fc, "%s line %u: a name, reason, QEMU and Firecracker note", where, j);
			if (r->action == ADD || r->action == DROP) {
				cr_assert_eq(r->regs, 0, "%s %s: ADD/DROP own whole entries", where, r->what);
				adds += r->action == ADD;
			} else {
				cr_assert_neq(r->regs, 0, "%s %s: no register", where, r->what);
				cr_assert_neq(r->mask, 0, "%s %s: no bits", where, r->what);
			}
			cr_assert_eq(r->action == COMPUTE, r->value != NULL, "%s %s: value() iff COMPUTE", where, r->what);
		}
	cr_assert_leq(adds, CPUID_MAX_ADDED, "more ADD lines than CPUID_MAX_ADDED");
}

Test(cpuid, no_two_lines_own_the_same_bits)
{
	const enum cpuid_vendor vendors[] = { CPUID_VENDOR_OTHER, CPUID_VENDOR_INTEL, CPUID_VENDOR_AMD };
	for (size_t v = 0; v < 3; v++) {
		const struct cpuid_table *t[2];
		unsigned nt = cpuid_tables_for(vendors[v], t);
		const struct cpuid_rule *all[128];
		unsigned n = 0;
		for (unsigned i = 0; i < nt; i++)
			for (unsigned j = 0; j < t[i]->n; j++)
				all[n++] = &t[i]->rules[j];
		for (unsigned a = 0; a < n; a++)
			for (unsigned b = a + 1; b < n; b++) {
				const struct cpuid_rule *x = all[a], *y = all[b];
				if (x->function != y->function)
					continue;
				if (x->action == DROP || y->action == DROP)
					cr_assert_fail("%s and %s: a dropped leaf has other lines", x->what, y->what);
				bool same_index = x->index == CPUID_ANY || y->index == CPUID_ANY || x->index == y->index;
				if (x->action == ADD || y->action == ADD || !same_index)
					continue;
				cr_assert(!((x->regs & y->regs) && (x->mask & y->mask)),
					  "'%s' and '%s' own the same bits of 0x%x", x->what, y->what, x->function);
			}
	}
}

/* ---- each line's effect ----------------------------------------------------- */

/* An entry the rule applies to, created zeroed when the dump has none. */
static struct kvm_cpuid_entry2 *target_of(struct kvm_cpuid2 *in, const struct cpuid_rule *r)
{
	for (unsigned i = 0; i < in->nent; i++)
		if (rule_matches(r, &in->entries[i]))
			return &in->entries[i];
	in->entries[in->nent] = (struct kvm_cpuid_entry2){
		.function = r->function, .index = r->index == CPUID_ANY ? 0 : r->index };
	return &in->entries[in->nent++];
}

static void remove_entry(struct kvm_cpuid2 *c, uint32_t fn, uint32_t idx)
{
	for (unsigned i = 0; i < c->nent; i++)
		if (c->entries[i].function == fn && c->entries[i].index == idx) {
			c->entries[i] = c->entries[--c->nent];
			return;
		}
}

/* Give the rule's bits `fill` (all ones, then all zeros) in every entry it
 * matches, build, and check the bits came out as the line says. */
static void check_rule(const char *file, const struct kvm_cpuid2 *dump, const char *table,
		       const struct cpuid_rule *r, uint32_t fill, unsigned index, unsigned ncpus)
{
	const struct cpuid_host h = host_all();
	struct kvm_cpuid2 *in = cpuid_copy(dump);
	const struct cpuid_ctx c = { .supported = in, .host = &h, .index = index, .ncpus = ncpus,
				     .vendor = cpuid_vendor_of(in) };
	cr_assert(!r->when || r->when(&c), "%s: %s line '%s' never applies to this dump", file, table, r->what);

	if (r->action == ADD) {
		remove_entry(in, r->function, r->index);
		struct kvm_cpuid2 *out = build(in, &h, index, ncpus);
		cr_assert_not_null(cpuid_find(out, r->function, r->index), "%s: '%s' did not add 0x%x.%u",
				   file, r->what, r->function, r->index);
		free(out);
		free(in);
		return;
	}
	(void)target_of(in, r);
	if (r->action == DROP) {
		struct kvm_cpuid2 *out = build(in, &h, index, ncpus);
		cr_assert(!cpuid_has_function(out, r->function), "%s: '%s' left 0x%x", file, r->what, r->function);
		free(out);
		free(in);
		return;
	}
	for (unsigned i = 0; i < in->nent; i++)
		if (rule_matches(r, &in->entries[i]))
			for (enum cpuid_reg g = CPUID_EAX; g < CPUID_NREGS; g++)
				if (r->regs & (1u << g))
					*reg_mut(&in->entries[i], g) = (*reg_mut(&in->entries[i], g) & ~r->mask) | (fill & r->mask);
	struct kvm_cpuid2 *out = build(in, &h, index, ncpus);
	for (unsigned i = 0; i < in->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &in->entries[i];
		if (!rule_matches(r, e))
			continue;
		const struct kvm_cpuid_entry2 *o = must_find(out, e->function, e->index);
		for (enum cpuid_reg g = CPUID_EAX; g < CPUID_NREGS; g++) {
			if (!(r->regs & (1u << g)))
				continue;
			uint32_t got = cpuid_reg_of(o, g) & r->mask, want;
			switch (r->action) {
			case KEEP:  want = fill & r->mask; break;
			case SET:   want = r->mask; break;
			case CLEAR: want = 0; break;
			default:    want = r->value(&c, e, g) & r->mask; break;
			}
			cr_assert_eq(got, want, "%s: %s line '%s' on 0x%x.%u reg %d (bits 0x%08x set to 0x%08x): "
				     "got 0x%08x, want 0x%08x", file, table, r->what, e->function, e->index, g,
				     r->mask, fill & r->mask, got, want);
		}
	}
	free(out);
	free(in);
}

Test(cpuid, every_table_line_has_its_effect_on_each_vendor)
{
	for (size_t d = 0; d < NDUMPS; d++) {
		struct kvm_cpuid2 *dump = load_dump(dumps[d].file);
		const struct cpuid_table *t[2];
		unsigned nt = cpuid_tables_for(cpuid_vendor_of(dump), t);
		cr_assert_eq(nt, 2, "%s: a vendor table applies", dumps[d].file);
		for (unsigned i = 0; i < nt; i++)
			for (unsigned j = 0; j < t[i]->n; j++)
				for (unsigned k = 0; k < sizeof(vcpu_counts) / sizeof(vcpu_counts[0]); k++) {
					unsigned n = vcpu_counts[k];
					check_rule(dumps[d].file, dump, t[i]->name, &t[i]->rules[j], ~0u, n - 1, n);
					check_rule(dumps[d].file, dump, t[i]->name, &t[i]->rules[j], 0, n / 2, n);
				}
		free(dump);
	}
}

Test(cpuid, nothing_outside_the_tables_changes)
{
	const struct cpuid_host h = host_all();
	for (size_t d = 0; d < NDUMPS; d++) {
		struct kvm_cpuid2 *in = load_dump(dumps[d].file);
		enum cpuid_vendor v = cpuid_vendor_of(in);
		for (size_t k = 0; k < sizeof(vcpu_counts) / sizeof(vcpu_counts[0]); k++) {
			unsigned n = vcpu_counts[k];
			const unsigned indices[] = { 0, n / 2, n - 1 };
			for (size_t x = 0; x < 3; x++) {
				struct kvm_cpuid2 *out = build(in, &h, indices[x], n);
				for (unsigned i = 0; i < out->nent; i++) {
					const struct kvm_cpuid_entry2 *o = &out->entries[i];
					for (unsigned j = i + 1; j < out->nent; j++)
						cr_assert(o->function != out->entries[j].function ||
							  o->index != out->entries[j].index,
							  "%s: 0x%x.%u twice", dumps[d].file, o->function, o->index);
					const struct kvm_cpuid_entry2 *s = cpuid_find(in, o->function, o->index);
					if (!s) {
						cr_assert(rule_says(v, ADD, o->function, o->index),
							  "%s: 0x%x.%u added by no line", dumps[d].file, o->function, o->index);
						continue;
					}
					cr_assert_eq(o->flags, s->flags, "%s: 0x%x.%u flags", dumps[d].file, o->function, o->index);
					for (enum cpuid_reg g = CPUID_EAX; g < CPUID_NREGS; g++) {
						uint32_t changed = cpuid_reg_of(o, g) ^ cpuid_reg_of(s, g);
						cr_assert_eq(changed & ~owned_bits(v, o, g), 0,
							     "%s (vCPU %u of %u): 0x%x.%u reg %d bits 0x%08x changed by no line",
							     dumps[d].file, indices[x], n, o->function, o->index, g,
							     changed & ~owned_bits(v, o, g));
					}
				}
				for (unsigned i = 0; i < in->nent; i++) {
					const struct kvm_cpuid_entry2 *s = &in->entries[i];
					if (!cpuid_find(out, s->function, s->index))
						cr_assert(rule_says(v, DROP, s->function, s->index),
							  "%s: 0x%x.%u removed by no line", dumps[d].file, s->function, s->index);
				}
				free(out);
			}
		}
		free(in);
	}
}

/* ---- topology ------------------------------------------------------------------ */

static void check_common_topology(const char *file, const struct kvm_cpuid2 *out, unsigned i, unsigned n)
{
	const struct kvm_cpuid_entry2 *l1 = must_find(out, 1, 0);
	cr_assert_eq(l1->ebx >> 24, i, "%s: leaf 1 APIC ID", file);
	cr_assert_eq((l1->ebx >> 16) & 0xff, pow2_at_least(n), "%s: leaf 1 addressable IDs for %u", file, n);
	cr_assert_eq(!!(l1->edx & BIT(28)), n > 1, "%s: HTT with %u vCPUs", file, n);

	const struct kvm_cpuid_entry2 *smt = must_find(out, 0xb, 0), *core = must_find(out, 0xb, 1),
				      *end = must_find(out, 0xb, 2);
	cr_assert_eq(smt->eax & 0x1f, 0, "%s: no SMT bits", file);
	cr_assert_eq(smt->ebx & 0xffff, 1, "%s: one thread per core", file);
	cr_assert_eq(smt->ecx, 0x100, "%s: level 0 is SMT", file);
	cr_assert_eq(core->eax & 0x1f, log2_ceil(n), "%s: core shift for %u", file, n);
	cr_assert_eq(core->ebx & 0xffff, n, "%s: %u cores", file, n);
	cr_assert_eq(core->ecx, 0x201, "%s: level 1 is core", file);
	cr_assert_eq(end->ecx, 0x002, "%s: level 2 ends the list", file);
	cr_assert(smt->edx == i && core->edx == i && end->edx == i, "%s: x2APIC ID %u", file, i);
	/* As Linux decodes it: one package, core ID = vCPU index. */
	unsigned shift = core->eax & 0x1f;
	cr_assert_eq(i >> shift, 0, "%s: vCPU %u of %u outside package 0", file, i, n);
	cr_assert(!cpuid_has_function(out, 0x1f), "%s: leaf 0x1F dropped", file);
}

static void check_intel_topology(const struct kvm_cpuid2 *out, unsigned n)
{
	unsigned seen = 0;
	for (unsigned k = 0; k < out->nent; k++) {
		const struct kvm_cpuid_entry2 *e = &out->entries[k];
		if (e->function != 4 || (e->eax & 0x1f) == 0)
			continue;
		seen++;
		unsigned level = (e->eax >> 5) & 7, share = ((e->eax >> 14) & 0xfff) + 1;
		cr_assert_eq((e->eax >> 26) + 1, pow2_at_least(n), "leaf 4.%u cores for %u", e->index, n);
		cr_assert_eq(share, level <= 2 ? 1 : pow2_at_least(n), "leaf 4.%u (L%u) sharing", e->index, level);
	}
	cr_assert_geq(seen, 3, "leaf 4 lists the caches");
}

static void check_amd_topology(const struct kvm_cpuid2 *out, unsigned i, unsigned n)
{
	const struct kvm_cpuid_entry2 *e8 = must_find(out, 0x80000008, 0), *e1e = must_find(out, 0x8000001e, 0),
				      *ext = must_find(out, 0x80000001, 0);
	unsigned size = (e8->ecx >> 12) & 0xf;
	cr_assert_eq(e8->ecx & 0xff, n - 1, "NC");
	cr_assert_eq(size, log2_ceil(n), "ApicIdSize");
	cr_assert_eq(i >> size, 0, "vCPU %u of %u outside package 0", i, n);
	cr_assert_eq(e1e->eax, i, "extended APIC ID");
	cr_assert_eq(e1e->ebx, i, "core ID %u, one thread per core", i);
	cr_assert_eq(e1e->ecx, 0, "one node");
	cr_assert_eq(!!(ext->ecx & BIT(1)), n > 1, "CmpLegacy with %u", n);
	cr_assert(ext->ecx & BIT(22), "TOPOEXT kept: the leaves are filled");
	unsigned seen = 0;
	for (unsigned k = 0; k < out->nent; k++) {
		const struct kvm_cpuid_entry2 *e = &out->entries[k];
		if (e->function != 0x8000001d || (e->eax & 0x1f) == 0)
			continue;
		seen++;
		unsigned level = (e->eax >> 5) & 7, share = ((e->eax >> 14) & 0xfff) + 1;
		cr_assert_eq(share, level <= 2 ? 1 : n, "0x8000001D.%u (L%u) sharing", e->index, level);
	}
	cr_assert_geq(seen, 3, "0x8000001D lists the caches");
}

Test(cpuid, topology_for_1_2_4_and_64_vcpus)
{
	const struct cpuid_host h = host_all();
	for (size_t d = 0; d < NDUMPS; d++) {
		struct kvm_cpuid2 *in = load_dump(dumps[d].file);
		for (size_t k = 0; k < sizeof(vcpu_counts) / sizeof(vcpu_counts[0]); k++) {
			unsigned n = vcpu_counts[k];
			for (unsigned i = 0; i < n; i++) {
				struct kvm_cpuid2 *out = build(in, &h, i, n);
				check_common_topology(dumps[d].file, out, i, n);
				if (dumps[d].vendor == CPUID_VENDOR_INTEL)
					check_intel_topology(out, n);
				else
					check_amd_topology(out, i, n);
				free(out);
			}
		}
		free(in);
	}
}

Test(cpuid, unknown_vendor_gets_the_common_lines_only)
{
	const struct cpuid_host h = host_all();
	struct kvm_cpuid2 *in = load_dump("cpuid-amd-epyc-pvm.txt");
	set_vendor(in, "GenuineIotel");
	struct kvm_cpuid2 *out = build(in, &h, 3, 4);
	check_common_topology("unknown vendor", out, 3, 4);
	cr_assert_eq(must_find(out, 0x8000001e, 0)->eax, must_find(in, 0x8000001e, 0)->eax, "AMD leaf untouched");
	cr_assert_eq(must_find(out, 0x80000008, 0)->ecx, must_find(in, 0x80000008, 0)->ecx, "AMD leaf untouched");
	free(out);
	free(in);
}

/* ---- single features --------------------------------------------------------------- */

Test(cpuid, tsc_deadline_follows_the_kvm_capability)
{
	struct cpuid_host h = host_all();
	for (size_t d = 0; d < NDUMPS; d++) {
		struct kvm_cpuid2 *in = load_dump(dumps[d].file);
		find_mut(in, 1, 0)->ecx &= ~BIT(24);
		h.tsc_deadline_timer = true;
		struct kvm_cpuid2 *out = build(in, &h, 0, 1);
		cr_assert(must_find(out, 1, 0)->ecx & BIT(24), "%s: set with the capability", dumps[d].file);
		free(out);
		find_mut(in, 1, 0)->ecx |= BIT(24);
		h.tsc_deadline_timer = false;
		out = build(in, &h, 0, 1);
		cr_assert_eq(must_find(out, 1, 0)->ecx & BIT(24), 0, "%s: clear without it", dumps[d].file);
		free(out);
		free(in);
	}
}

Test(cpuid, timing_leaf_only_with_a_known_tsc_frequency)
{
	struct cpuid_host h = host_all();
	struct kvm_cpuid2 *in = load_dump("cpuid-intel-spr-fc.txt");
	struct kvm_cpuid2 *out = build(in, &h, 0, 2);
	const struct kvm_cpuid_entry2 *t = must_find(out, 0x40000010, 0);
	cr_assert_eq(t->eax, 2100000, "TSC kHz");
	cr_assert_eq(t->ebx, 1000000, "LAPIC bus kHz");
	cr_assert_eq(must_find(out, 0x40000000, 0)->eax, 0x40000010, "max hypervisor leaf raised");
	free(out);
	h.tsc_khz = 0;
	out = build(in, &h, 0, 2);
	cr_assert_null(cpuid_find(out, 0x40000010, 0));
	cr_assert_eq(must_find(out, 0x40000000, 0)->eax, must_find(in, 0x40000000, 0)->eax, "max leaf as KVM says");
	free(out);
	free(in);
}

static void brand_of(const struct kvm_cpuid2 *c, char out[49])
{
	for (unsigned i = 0; i < 3; i++) {
		const struct kvm_cpuid_entry2 *e = must_find(c, 0x80000002 + i, 0);
		memcpy(out + i * 16, &e->eax, 4);
		memcpy(out + i * 16 + 4, &e->ebx, 4);
		memcpy(out + i * 16 + 8, &e->ecx, 4);
		memcpy(out + i * 16 + 12, &e->edx, 4);
	}
	out[48] = '\0';
}

Test(cpuid, brand_string_is_kvms_or_else_the_hosts)
{
	const struct cpuid_host h = host_all();
	char brand[49];
	struct kvm_cpuid2 *in = load_dump("cpuid-amd-epyc-pvm.txt");   /* PVM: all zero */
	struct kvm_cpuid2 *out = build(in, &h, 0, 1);
	brand_of(out, brand);
	cr_assert_str_eq(brand, "Test CPU Model 1234 @ 2.10GHz");
	free(out);
	free(in);
	in = load_dump("cpuid-intel-spr-fc.txt");
	out = build(in, &h, 0, 1);
	brand_of(out, brand);
	cr_assert_str_eq(brand, "Intel(R) Xeon(R) Processor", "KVM's kept");
	free(out);
	free(in);
}

Test(cpuid, nested_virtualization_and_mwait_stay_hidden)
{
	const struct cpuid_host h = host_all();
	for (size_t d = 0; d < NDUMPS; d++) {
		struct kvm_cpuid2 *in = load_dump(dumps[d].file);
		find_mut(in, 1, 0)->ecx |= BIT(5) | BIT(3);               /* VMX, MONITOR */
		find_mut(in, 0x80000001, 0)->ecx |= BIT(2) | BIT(29);     /* SVM, MONITORX */
		find_mut(in, 7, 0)->ecx |= BIT(5);                        /* WAITPKG */
		find_mut(in, 5, 0)->eax = 0x40;
		struct kvm_cpuid2 *out = build(in, &h, 0, 2);
		cr_assert_eq(must_find(out, 1, 0)->ecx & (BIT(5) | BIT(3)), 0, "%s", dumps[d].file);
		cr_assert_eq(must_find(out, 0x80000001, 0)->ecx & (BIT(2) | BIT(29)), 0, "%s", dumps[d].file);
		cr_assert_eq(must_find(out, 7, 0)->ecx & BIT(5), 0, "%s", dumps[d].file);
		cr_assert_eq(must_find(out, 5, 0)->eax, 0, "%s", dumps[d].file);
		cr_assert(must_find(out, 1, 0)->ecx & BIT(31), "%s: HYPERVISOR", dumps[d].file);
		free(out);
		free(in);
	}
}

Test(cpuid, kvm_leaves_xsave_and_pmu_pass_unchanged)
{
	const struct cpuid_host h = host_all();
	for (size_t d = 0; d < NDUMPS; d++) {
		struct kvm_cpuid2 *in = load_dump(dumps[d].file);
		struct kvm_cpuid2 *out = build(in, &h, 1, 2);
		const struct kvm_cpuid_entry2 *sig = must_find(out, 0x40000000, 0);
		char id[13] = { 0 };
		memcpy(id, &sig->ebx, 4);
		memcpy(id + 4, &sig->ecx, 4);
		memcpy(id + 8, &sig->edx, 4);
		cr_assert_str_eq(id, "KVMKVMKVM", "%s", dumps[d].file);
		for (unsigned i = 0; i < in->nent; i++) {
			const struct kvm_cpuid_entry2 *s = &in->entries[i];
			if (s->function != 0xd && s->function != 0xa && s->function != 0x40000001)
				continue;
			const struct kvm_cpuid_entry2 *o = must_find(out, s->function, s->index);
			cr_assert(!memcmp(o, s, sizeof(*o)), "%s: 0x%x.%u changed", dumps[d].file, s->function, s->index);
		}
		free(out);
		free(in);
	}
}

Test(cpuid, print_round_trips_and_changes_name_their_lines)
{
	const struct cpuid_host h = host_all();
	struct kvm_cpuid2 *in = load_dump("cpuid-intel-spr-fc.txt");
	struct kvm_cpuid2 *out = build(in, &h, 1, 2);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	cpuid_print(f, out);
	fclose(f);
	f = fmemopen(text, len, "r");
	struct kvm_cpuid2 *back = load_text(f, "printed");
	fclose(f);
	free(text);
	cr_assert_eq(back->nent, out->nent);
	cr_assert(!memcmp(back->entries, out->entries, out->nent * sizeof(out->entries[0])));

	f = open_memstream(&text, &len);
	unsigned changes = cpuid_print_changes(f, in, out, CPUID_VENDOR_INTEL);
	fclose(f);
	cr_assert_gt(changes, 3);
	cr_assert_not_null(strstr(text, "# 0x00000001.0 ebx 0x00010800 -> 0x01020800\n#     initial APIC ID [common]"), "%s", text);
	cr_assert_not_null(strstr(text, "# 0x0000001f.0 removed\n#     0x1F V2 topology [common]"), "%s", text);
	cr_assert_not_null(strstr(text, "# 0x40000010.0 added"), "%s", text);
	cr_assert_null(strstr(text, "no table line"), "%s", text);
	free(text);
	free(back);
	free(out);
	free(in);
}

/* ---- boot MSRs ------------------------------------------------------------------------ */

static struct kvm_msr_list *msr_list(const uint32_t *idx, unsigned n)
{
	struct kvm_msr_list *l = calloc(1, sizeof(*l) + n * sizeof(l->indices[0]));
	cr_assert_not_null(l);
	l->nmsrs = n;
	if (n)
		memcpy(l->indices, idx, n * sizeof(idx[0]));
	return l;
}

Test(msrs, intel_keeps_kvms_misc_enable_bits_and_adds_fast_strings)
{
	static const uint32_t listed[] = { 0x174, 0x1a0, 0xc0000081 };
	struct kvm_msr_list *l = msr_list(listed, 3);
	struct kvm_cpuid2 *c = load_dump("cpuid-intel-spr-fc.txt");
	struct kvm_msr_entry e[CPU_X86_BOOT_MSRS];
	/* KVM's reset value: BTS and PEBS unavailable (bits 11, 12). */
	unsigned n = cpu_x86_boot_msrs(c, l, 0x1800, e);
	cr_assert_eq(n, 2);
	cr_assert_eq(e[0].index, MSR_IA32_MISC_ENABLE);
	cr_assert_eq(e[0].data, 0x1801, "KVM's bits kept, fast strings added");
	cr_assert_eq(e[1].index, MSR_MTRR_DEF_TYPE);
	cr_assert_eq(e[1].data, (1u << 11) | 6, "MTRRs on, default write-back");
	free(c);
	free(l);
}

Test(msrs, amd_and_unlisted_misc_enable_are_left_alone)
{
	static const uint32_t listed[] = { 0x1a0 };
	struct kvm_msr_list *l = msr_list(listed, 1), *none = msr_list(listed, 0);
	struct kvm_cpuid2 *amd = load_dump("cpuid-amd-epyc-pvm.txt"), *intel = load_dump("cpuid-intel-spr-fc.txt");
	struct kvm_msr_entry e[CPU_X86_BOOT_MSRS];
	cr_assert_eq(cpu_x86_boot_msrs(amd, l, 0x1800, e), 1, "AMD has no IA32_MISC_ENABLE");
	cr_assert_eq(e[0].index, MSR_MTRR_DEF_TYPE);
	cr_assert_eq(cpu_x86_boot_msrs(intel, none, 0, e), 1, "not listed by KVM: not written");
	cr_assert_eq(e[0].index, MSR_MTRR_DEF_TYPE);
	free(amd);
	free(intel);
	free(l);
	free(none);
}

Test(msrs, mtrrs_follow_cpuid_because_kvm_never_lists_them)
{
	struct kvm_msr_list *none = msr_list(NULL, 0);
	struct kvm_cpuid2 *c = load_dump("cpuid-amd-genoa-fc.txt");
	struct kvm_msr_entry e[CPU_X86_BOOT_MSRS];
	cr_assert_eq(cpu_x86_boot_msrs(c, none, 0, e), 1);
	cr_assert_eq(e[0].index, MSR_MTRR_DEF_TYPE);
	find_mut(c, 1, 0)->edx &= ~BIT(12);
	cr_assert_eq(cpu_x86_boot_msrs(c, none, 0, e), 0, "no MTRR in CPUID: no MTRR write");
	free(c);
	free(none);
}
