/* SPDX-License-Identifier: Apache-2.0 */
/* Intel MultiProcessor Specification 1.4 table: which CPUs exist. */
#ifndef TESTGUEST_MPTABLE_H
#define TESTGUEST_MPTABLE_H

#include <stdint.h>

struct mp_cpus {
	unsigned count;             /* enabled processor entries */
	uint8_t apic_id[256];
	int bsp_index;              /* entry flagged BP, or -1 */
	uintptr_t floating_addr;    /* where "_MP_" was found (0: none) */
	int ioapic_id;              /* the first I/O APIC entry's ID, or -1 */
};

/* Search 0x9fc00-0x9ffff and 0xf0000-0xfffff. Returns 0 and fills *out when
 * a valid table was found, -1 otherwise (*out then has count 0). */
int mptable_find_cpus(struct mp_cpus *out);

#endif
