/* SPDX-License-Identifier: Apache-2.0 */
#include "vmm/irqchip.h"

#include <stdio.h>
#include <string.h>

#include "minivmm_abi.h"

static int irqchip_set_routes(void *opaque, const bool routed[IOAPIC_PINS],
			      const struct ioapic_msi msi[IOAPIC_PINS])
{
	struct irqchip *ic = opaque;
	struct kvm_msi_route routes[IOAPIC_PINS];
	unsigned n = 0;
	for (unsigned pin = 0; pin < IOAPIC_PINS; pin++)
		if (routed[pin])
			routes[n++] = (struct kvm_msi_route){ .gsi = pin, .address = msi[pin].address,
							      .data = msi[pin].data };
	int rc = kvm_set_msi_routes(ic->kvm, routes, n);
	if (rc < 0 && !ic->route_error_logged) {
		/* Only the host can make this fail (ENOMEM): said once. */
		ic->route_error_logged = true;
		char line[120];
		snprintf(line, sizeof(line), "IOAPIC: KVM_SET_GSI_ROUTING failed (%s): interrupts may be lost",
			 strerror(-rc));
		machine_log(ic->machine, line);
	}
	return rc;
}

static int irqchip_raise(void *opaque, unsigned pin)
{
	struct irqchip *ic = opaque;
	return kvm_set_irq_line(ic->kvm, pin, 1);   /* fires the pin's MSI route */
}

int irqchip_init(struct irqchip *ic, struct kvm *kvm, const struct machine *machine,
		 unsigned ncpus, struct bus *mmio, struct vmm_err *err)
{
	memset(ic, 0, sizeof(*ic));
	ic->kvm = kvm;
	ic->machine = machine;
	ic->ioapic_id = ioapic_id_for_cpus(ncpus);
	if (!kvm->split_irqchip)
		return kvm_set_kernel_ioapic_id(kvm, ic->ioapic_id, err);
	struct ioapic_ops ops = { .set_routes = irqchip_set_routes, .raise = irqchip_raise, .opaque = ic };
	ioapic_init(&ic->ioapic, &ops, ic->ioapic_id);
	ic->split = true;
	struct bus_device dev = ioapic_bus_device(&ic->ioapic);
	return bus_add(mmio, MINIVMM_IOAPIC_BASE, MINIVMM_IOAPIC_SIZE, &dev, err);
}

void irqchip_destroy(struct irqchip *ic)
{
	if (ic->split)
		ioapic_destroy(&ic->ioapic);
	ic->split = false;
}

int irqchip_set_irq(struct irqchip *ic, unsigned gsi, int level)
{
	if (ic->split)
		return ioapic_set_irq(&ic->ioapic, gsi, level);
	return kvm_set_irq_line(ic->kvm, gsi, level);
}

/* KVM's in-kernel IOAPIC (arch/x86/kvm/ioapic.h IOAPIC_VERSION_ID). */
#define KVM_IOAPIC_VERSION 0x11

unsigned irqchip_ioapic_version(const struct irqchip *ic)
{
	return ic->split ? IOAPIC_VERSION : KVM_IOAPIC_VERSION;
}

unsigned irqchip_ioapic_id(const struct irqchip *ic)
{
	return ic->ioapic_id;
}

struct ioapic *irqchip_ioapic(struct irqchip *ic)
{
	return ic->split ? &ic->ioapic : NULL;
}
