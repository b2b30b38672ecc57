/* SPDX-License-Identifier: Apache-2.0 */
/* The guest's interrupt controllers as the rest of the VMM sees them: one
 * call to raise or lower a GSI, whichever model runs them. Kernel mode:
 * KVM's PIC/IOAPIC/PIT take the line directly. Split mode: devices/ioapic
 * sits in front of KVM's LAPICs, its pins routed as KVM MSI routes. */
#ifndef MINIVMM_VMM_IRQCHIP_H
#define MINIVMM_VMM_IRQCHIP_H

#include <stdbool.h>

#include "base/error.h"
#include "base/machine.h"
#include "devices/bus.h"
#include "devices/ioapic.h"
#include "vmm/kvm.h"

struct irqchip {
	struct kvm *kvm;
	const struct machine *machine;   /* for the one log line of a failed route update */
	bool split;                      /* kvm->split_irqchip: ioapic below is live */
	bool route_error_logged;         /* under ioapic.lock */
	unsigned ioapic_id;              /* ioapic_id_for_cpus(ncpus), in either mode */
	struct ioapic ioapic;
};

/* For a machine of ncpus vCPUs. Split mode (kvm->split_irqchip): the
 * IOAPIC on mmio at MINIVMM_IOAPIC_BASE. Kernel mode: KVM's IOAPIC is given
 * the same ID, so its register says what the firmware tables say. */
int irqchip_init(struct irqchip *ic, struct kvm *kvm, const struct machine *machine,
		 unsigned ncpus, struct bus *mmio, struct vmm_err *err);
void irqchip_destroy(struct irqchip *ic);

/* A device's line to GSI gsi is now at level (0 or 1). */
int irqchip_set_irq(struct irqchip *ic, unsigned gsi, int level);

/* What the guest's IOAPIC version register reads (the firmware tables
 * must say the same: Linux takes an MP table's word for it). */
unsigned irqchip_ioapic_version(const struct irqchip *ic);

/* The IOAPIC's ID, for the MP table and the MADT. */
unsigned irqchip_ioapic_id(const struct irqchip *ic);

/* Where KVM_EXIT_IOAPIC_EOI goes: the IOAPIC in split mode, else NULL. */
struct ioapic *irqchip_ioapic(struct irqchip *ic);

#endif
