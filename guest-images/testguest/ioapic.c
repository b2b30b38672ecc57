/* SPDX-License-Identifier: Apache-2.0 */
#include "ioapic.h"

#include "io.h"
#include "minivmm_abi.h"

#define IOREGSEL   0x00
#define IOWIN      0x10
#define IOAPICID   0x00
#define IOAPICVER  0x01
#define REDTBL(n)  (0x10 + 2 * (n))
#define RTE_MASKED 0x10000u
#define RTE_LEVEL  0x8000u

static uint32_t rd(uint32_t reg)
{
	mmio_write32(MINIVMM_IOAPIC_BASE + IOREGSEL, reg);
	return mmio_read32(MINIVMM_IOAPIC_BASE + IOWIN);
}

static void wr(uint32_t reg, uint32_t v)
{
	mmio_write32(MINIVMM_IOAPIC_BASE + IOREGSEL, reg);
	mmio_write32(MINIVMM_IOAPIC_BASE + IOWIN, v);
}

unsigned ioapic_entries(void)
{
	return ((rd(IOAPICVER) >> 16) & 0xff) + 1;
}

unsigned ioapic_id(void)
{
	return (rd(IOAPICID) >> 24) & 0xf;
}

void ioapic_route(unsigned gsi, uint8_t vector, uint32_t apic_id, int level)
{
	uint32_t trigger = level ? RTE_LEVEL : 0;

	wr(REDTBL(gsi), RTE_MASKED | trigger | vector);
	wr(REDTBL(gsi) + 1, apic_id << 24);
	wr(REDTBL(gsi), trigger | vector);
}

void ioapic_mask(unsigned gsi)
{
	wr(REDTBL(gsi), rd(REDTBL(gsi)) | RTE_MASKED);
}
