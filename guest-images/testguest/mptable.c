/* SPDX-License-Identifier: Apache-2.0 */
#include "mptable.h"

#include "lib.h"

struct mp_floating {            /* 16 bytes, on a 16-byte boundary */
	char signature[4];      /* "_MP_" */
	uint32_t config_paddr;
	uint8_t length;         /* in 16-byte units: 1 */
	uint8_t spec_rev;
	uint8_t checksum;
	uint8_t feature[5];     /* feature[0] != 0: a default configuration */
} __attribute__((packed));

struct mp_config {
	char signature[4];      /* "PCMP" */
	uint16_t base_length;
	uint8_t spec_rev;
	uint8_t checksum;
	char oem_id[8];
	char product_id[12];
	uint32_t oem_table;
	uint16_t oem_table_size;
	uint16_t entry_count;
	uint32_t lapic_paddr;
	uint16_t ext_length;
	uint8_t ext_checksum;
	uint8_t reserved;
} __attribute__((packed));

#define MP_ENTRY_PROCESSOR 0
#define MP_ENTRY_IOAPIC    2
#define MP_CPU_ENABLED     0x01
#define MP_CPU_BSP         0x02

static uint8_t sum(const void *p, unsigned n)
{
	const uint8_t *b = p;
	uint8_t s = 0;

	while (n--)
		s += *b++;
	return s;
}

static const struct mp_floating *scan(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = start; a + 16 <= end; a += 16) {
		const struct mp_floating *f = (const void *)a;

		if (!memcmp(f->signature, "_MP_", 4) && f->length == 1 &&
		    sum(f, 16) == 0)
			return f;
	}
	return NULL;
}

int mptable_find_cpus(struct mp_cpus *out)
{
	const struct mp_floating *f;
	const struct mp_config *c;
	const uint8_t *e, *end;

	memset(out, 0, sizeof(*out));
	out->bsp_index = -1;
	out->ioapic_id = -1;
	f = scan(0x9fc00, 0xa0000);
	if (!f)
		f = scan(0xf0000, 0x100000);
	if (!f)
		return -1;
	out->floating_addr = (uintptr_t)f;

	if (f->feature[0]) {
		/* Default configuration: two processors, APIC IDs 0 and 1. */
		out->count = 2;
		out->apic_id[0] = 0;
		out->apic_id[1] = 1;
		out->bsp_index = 0;
		return 0;
	}
	if (!f->config_paddr)
		return -1;
	c = (const void *)(uintptr_t)f->config_paddr;
	if (memcmp(c->signature, "PCMP", 4) || c->base_length < sizeof(*c) ||
	    sum(c, c->base_length) != 0)
		return -1;

	e = (const uint8_t *)(c + 1);
	end = (const uint8_t *)c + c->base_length;
	/* Walk by base_length, not entry_count: some firmware (qboot) leaves
	 * the count 0. Linux does the same. */
	while (e < end) {
		if (*e == MP_ENTRY_PROCESSOR) {
			if (e + 20 > end)
				break;
			if ((e[3] & MP_CPU_ENABLED) && out->count < ARRAY_SIZE(out->apic_id)) {
				if (e[3] & MP_CPU_BSP)
					out->bsp_index = (int)out->count;
				out->apic_id[out->count++] = e[1];
			}
			e += 20;
		} else {
			if (*e == MP_ENTRY_IOAPIC && out->ioapic_id < 0 && e + 8 <= end)
				out->ioapic_id = e[1];
			e += 8;         /* bus, I/O APIC, I/O and local interrupt */
		}
	}
	return out->count ? 0 : -1;
}
