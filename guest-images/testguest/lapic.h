/* Local APIC in xAPIC mode (MMIO at MINIVMM_LAPIC_BASE), usable at CPL3
 * because the page tables map it with the U bit. */
#ifndef TESTGUEST_LAPIC_H
#define TESTGUEST_LAPIC_H

#include <stdint.h>

/* Software-enable this CPU's APIC (spurious vector 0xff). */
void lapic_init(void);
uint32_t lapic_id(void);
void lapic_eoi(void);
/* INIT, then two STARTUPs with the given vector, per the MP spec. */
void lapic_start_ap(uint32_t apic_id, uint8_t sipi_vector);

#endif
