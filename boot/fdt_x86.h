/* SPDX-License-Identifier: Apache-2.0 */
/* The x86 part of the device tree: the local APIC and IOAPIC nodes and the
 * IOAPIC's interrupt specifier. Internal to boot/fdt.c, which calls it only
 * for FDT_INTC_X86_APIC; libfdt's sequential-write state is passed in. */
#ifndef MINIVMM_BOOT_FDT_X86_H
#define MINIVMM_BOOT_FDT_X86_H

#include <libfdt.h>

#include "boot/fdt.h"

#define FDT_X86_IRQ_CELLS 2   /* <pin sense> */

/* The IOAPIC node (an interrupt controller with this phandle) and the local
 * APIC node, as children of the node being written (the root). Returns 0 or
 * a negative libfdt error. */
int fdt_x86_add_apics(void *fdt, const struct fdt_intc *intc, uint32_t ioapic_phandle);

/* The `interrupts` cells of a device wired to IOAPIC pin irq->line. */
void fdt_x86_irq_cells(const struct fdt_irq *irq, fdt32_t cells[FDT_X86_IRQ_CELLS]);

#endif
