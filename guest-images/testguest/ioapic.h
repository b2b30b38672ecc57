/* SPDX-License-Identifier: Apache-2.0 */
/* IOAPIC at MINIVMM_IOAPIC_BASE, programmed from CPL3 (the page tables map
 * it with the U bit): route one GSI to a vector on one LAPIC. */
#ifndef TESTGUEST_IOAPIC_H
#define TESTGUEST_IOAPIC_H

#include <stdint.h>

/* Fixed delivery, physical destination, active high, unmasked; edge, or
 * level-triggered with level != 0. */
void ioapic_route(unsigned gsi, uint8_t vector, uint32_t apic_id, int level);
void ioapic_mask(unsigned gsi);
/* Number of redirection entries (IOAPIC version register). */
unsigned ioapic_entries(void);
/* The ID register's 4-bit ID. */
unsigned ioapic_id(void);

#endif
