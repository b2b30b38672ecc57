/* SPDX-License-Identifier: Apache-2.0 */
/* Local APIC in xAPIC mode (MMIO at MINIVMM_LAPIC_BASE), usable at CPL3
 * because the page tables map it with the U bit. */
#ifndef TESTGUEST_LAPIC_H
#define TESTGUEST_LAPIC_H

#include <stdint.h>

/* Software-enable this CPU's APIC (spurious vector 0xff). */
void lapic_init(void);
uint32_t lapic_id(void);
void lapic_eoi(void);
/* One timer interrupt on `vector` after `count` bus clocks (divide by 1;
 * KVM's APIC bus runs at 1 GHz unless the VMM changed it), and its cancel. */
void lapic_timer_oneshot(uint8_t vector, uint32_t count);
void lapic_timer_stop(void);
/* INIT, then two STARTUPs with the given vector, per the MP spec. */
void lapic_start_ap(uint32_t apic_id, uint8_t sipi_vector);

#endif
