/* SPDX-License-Identifier: Apache-2.0 */
#include "dtb.h"

#include "lib.h"

#define DTB_MAGIC        0xd00dfeedu
#define DTB_HEADER_SIZE  40      /* version 17 */
#define DTB_BEGIN_NODE   1
#define DTB_END_NODE     2
#define DTB_PROP         3
#define DTB_NOP          4
#define DTB_END          9
#define DTB_MAX_DEPTH    16
#define DTB_MAX_MODULES  64      /* more is not a start info we trust */
#define FOUR_GIB         0x100000000ull

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* [addr, addr + len) lies in the identity-mapped first 4 GiB. */
static int below_4g(uint64_t addr, uint64_t len)
{
	return addr < FOUR_GIB && len <= FOUR_GIB - addr;
}

int dtb_find_module(const struct hvm_start_info *si, const uint8_t **blob, uint64_t *size)
{
	uint32_t n = si->nr_modules;

	if (!n || n > DTB_MAX_MODULES || !si->modlist_paddr ||
	    !below_4g(si->modlist_paddr, (uint64_t)n * sizeof(struct hvm_modlist_entry)))
		return 0;
	const struct hvm_modlist_entry *mods = (const void *)(uintptr_t)si->modlist_paddr;
	for (uint32_t i = 0; i < n; i++) {
		struct hvm_modlist_entry m = mods[i];   /* read once */

		if (!m.cmdline_paddr || !below_4g(m.cmdline_paddr, 4) ||
		    memcmp((const void *)(uintptr_t)m.cmdline_paddr, "dtb", 4) != 0)
			continue;
		if (!m.size || !below_4g(m.paddr, m.size))
			return 0;
		*blob = (const uint8_t *)(uintptr_t)m.paddr;
		*size = m.size;
		return 1;
	}
	return 0;
}

/* What the walk keeps per open node. */
struct dtb_node {
	uint32_t addr_cells, size_cells;   /* for its children (defaults 2, 1) */
	int virtio;                        /* compatible has "virtio,mmio" */
	const uint8_t *reg, *irq;
	uint32_t reg_len, irq_len;
};

/* A NUL-terminated string list contains s. */
static int strlist_has(const uint8_t *v, uint32_t len, const char *s)
{
	uint32_t want = (uint32_t)strlen(s) + 1;

	for (uint32_t pos = 0; pos < len;) {
		uint32_t end = pos;

		while (end < len && v[end])
			end++;
		if (end == len)
			return 0;   /* last string not terminated: ignore it */
		if (end + 1 - pos == want && memcmp(v + pos, s, want) == 0)
			return 1;
		pos = end + 1;
	}
	return 0;
}

static uint64_t read_cells(const uint8_t *p, uint32_t cells)
{
	uint64_t v = 0;

	for (uint32_t i = 0; i < cells; i++)
		v = v << 32 | be32(p + 4 * i);
	return v;
}

static void node_prop(struct dtb_node *n, const char *name, const uint8_t *v, uint32_t len)
{
	if (!strcmp(name, "#address-cells") && len == 4)
		n->addr_cells = be32(v);
	else if (!strcmp(name, "#size-cells") && len == 4)
		n->size_cells = be32(v);
	else if (!strcmp(name, "compatible"))
		n->virtio = strlist_has(v, len, "virtio,mmio");
	else if (!strcmp(name, "reg"))
		n->reg = v, n->reg_len = len;
	else if (!strcmp(name, "interrupts"))
		n->irq = v, n->irq_len = len;
}

/* A closed virtio node: its first reg entry (parent's cell sizes) and
 * first interrupt cell. 0 or -1 with *why. */
static int node_device(const struct dtb_node *n, const struct dtb_node *parent,
		       struct dtb_mmio_dev *d, const char **why)
{
	uint32_t ac = parent->addr_cells, sc = parent->size_cells;

	if (ac < 1 || ac > 2 || sc < 1 || sc > 2) {
		*why = "virtio-mmio node under a bus with unusable #address-cells/#size-cells";
		return -1;
	}
	if (!n->reg || n->reg_len < 4 * (ac + sc)) {
		*why = "virtio-mmio node without a reg entry";
		return -1;
	}
	if (!n->irq || n->irq_len < 4) {
		*why = "virtio-mmio node without interrupts";
		return -1;
	}
	d->base = read_cells(n->reg, ac);
	d->size = read_cells(n->reg + 4 * ac, sc);
	d->irq = be32(n->irq);
	return 0;
}

int dtb_virtio_mmio(const uint8_t *blob, uint64_t avail, struct dtb_mmio_dev *out, unsigned max,
		    const char **why)
{
	struct dtb_node stack[DTB_MAX_DEPTH + 1];
	unsigned depth = 0, found = 0;

#define BAD(msg) do { *why = (msg); return -1; } while (0)
	if (avail < DTB_HEADER_SIZE)
		BAD("shorter than a DTB header");
	if (be32(blob) != DTB_MAGIC)
		BAD("no DTB magic");
	uint32_t total = be32(blob + 4), off_struct = be32(blob + 8), off_strings = be32(blob + 12);
	uint32_t version = be32(blob + 20), last_comp = be32(blob + 24);
	uint32_t size_strings = be32(blob + 32), size_struct = be32(blob + 36);
	if (total < DTB_HEADER_SIZE || total > avail)
		BAD("totalsize beyond the module");
	if (version < 17 || last_comp > 17)
		BAD("DTB version not compatible with 17");
	if ((off_struct & 3) || off_struct > total || size_struct > total - off_struct ||
	    off_strings > total || size_strings > total - off_strings)
		BAD("structure or strings block outside the blob");

	const uint8_t *s = blob + off_struct, *strings = blob + off_strings;
	uint32_t pos = 0;   /* invariant: pos <= size_struct, pos % 4 == 0 */
	stack[0] = (struct dtb_node){ .addr_cells = 2, .size_cells = 1 };
	for (;;) {
		if (size_struct - pos < 4)
			BAD("structure block ends without FDT_END");
		uint32_t tok = be32(s + pos);

		pos += 4;
		switch (tok) {
		case DTB_BEGIN_NODE: {
			uint32_t end = pos;

			while (end < size_struct && s[end])
				end++;
			if (end == size_struct)
				BAD("node name runs past the structure block");
			/* Round up to the next token (64-bit: cannot wrap). */
			uint64_t next = ((uint64_t)end + 1 + 3) & ~3ull;

			if (next > size_struct)
				BAD("node name padding runs past the structure block");
			pos = (uint32_t)next;
			if (++depth > DTB_MAX_DEPTH)
				BAD("nodes nested too deep");
			stack[depth] = (struct dtb_node){ .addr_cells = 2, .size_cells = 1 };
			break;
		}
		case DTB_PROP: {
			if (size_struct - pos < 8)
				BAD("property header runs past the structure block");
			uint32_t len = be32(s + pos), nameoff = be32(s + pos + 4);

			pos += 8;
			if (!depth)
				BAD("property outside any node");
			uint64_t padded = ((uint64_t)len + 3) & ~3ull;

			if (padded > size_struct - pos)
				BAD("property value runs past the structure block");
			if (nameoff >= size_strings)
				BAD("property name outside the strings block");
			uint32_t nend = nameoff;

			while (nend < size_strings && strings[nend])
				nend++;
			if (nend == size_strings)
				BAD("property name not terminated in the strings block");
			node_prop(&stack[depth], (const char *)strings + nameoff, s + pos, len);
			pos += (uint32_t)padded;
			break;
		}
		case DTB_END_NODE:
			if (!depth)
				BAD("FDT_END_NODE without a node");
			if (stack[depth].virtio) {
				struct dtb_mmio_dev d;

				if (node_device(&stack[depth], &stack[depth - 1], &d, why))
					return -1;
				if (found == max)
					BAD("more virtio-mmio devices than the guest keeps");
				out[found++] = d;
			}
			depth--;
			break;
		case DTB_NOP:
			break;
		case DTB_END:
			if (depth)
				BAD("FDT_END inside a node");
			return (int)found;
		default:
			BAD("unknown token in the structure block");
		}
	}
#undef BAD
}
