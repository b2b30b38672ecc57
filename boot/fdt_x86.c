/* SPDX-License-Identifier: Apache-2.0 */
/* x86 interrupt controllers in a device tree, the way Linux reads them
 * (arch/x86/kernel/devicetree.c; the bindings came with the Intel CE4100,
 * hence the names):
 *
 *   interrupt-controller@fec00000 {
 *       compatible = "intel,ce4100-ioapic"; interrupt-controller;
 *       #interrupt-cells = <2>; #address-cells = <0>;
 *       reg = <0 0xfec00000 0 0x1000>; phandle = <1>;
 *   };
 *   lapic@fee00000 { compatible = "intel,ce4100-lapic"; reg = <...>; };
 *
 * A device's interrupts = <pin sense>. The sense cell is an index into
 * Linux's of_ioapic_type[]: 0 edge falling, 1 level high, 2 level low,
 * 3 edge rising. The binding text (Documentation/devicetree/bindings/
 * interrupt-controller/intel,ce4100-ioapic.txt) lists a different order
 * (0 edge rising, 1 level low, 2 level high, 3 edge falling); the code is
 * what a guest runs, so the values below follow the code. */
#include "boot/fdt_x86.h"

#include <stdio.h>

#define X86_SENSE_EDGE_RISING 3   /* of_ioapic_type[3]: IRQ_TYPE_EDGE_RISING */
#define X86_SENSE_LEVEL_HIGH  1   /* of_ioapic_type[1]: IRQ_TYPE_LEVEL_HIGH */

static int add_reg(void *fdt, const struct fdt_range *r)
{
	/* The root has #address-cells = #size-cells = 2: one 64-bit value each. */
	fdt64_t reg[2] = { cpu_to_fdt64(r->base), cpu_to_fdt64(r->size) };
	return fdt_property(fdt, "reg", reg, sizeof(reg));
}

int fdt_x86_add_apics(void *fdt, const struct fdt_intc *intc, uint32_t ioapic_phandle)
{
	char name[48];
	int rc;

	snprintf(name, sizeof(name), "interrupt-controller@%llx",
		 (unsigned long long)intc->ioapic.base);
	if ((rc = fdt_begin_node(fdt, name)) < 0 ||
	    (rc = fdt_property_string(fdt, "compatible", "intel,ce4100-ioapic")) < 0 ||
	    (rc = fdt_property(fdt, "interrupt-controller", NULL, 0)) < 0 ||
	    (rc = fdt_property_u32(fdt, "#interrupt-cells", FDT_X86_IRQ_CELLS)) < 0 ||
	    /* No interrupt-map refers to it; 0 is what dtc expects of a provider. */
	    (rc = fdt_property_u32(fdt, "#address-cells", 0)) < 0 ||
	    (rc = add_reg(fdt, &intc->ioapic)) < 0 ||
	    (rc = fdt_property_u32(fdt, "phandle", ioapic_phandle)) < 0 ||
	    (rc = fdt_end_node(fdt)) < 0)
		return rc;

	/* Linux takes the LAPIC address from here (APIC_DEFAULT_PHYS_BASE when
	 * the node is missing). It is not an interrupt parent of any device. */
	snprintf(name, sizeof(name), "lapic@%llx", (unsigned long long)intc->lapic.base);
	if ((rc = fdt_begin_node(fdt, name)) < 0 ||
	    (rc = fdt_property_string(fdt, "compatible", "intel,ce4100-lapic")) < 0 ||
	    (rc = add_reg(fdt, &intc->lapic)) < 0 ||
	    (rc = fdt_end_node(fdt)) < 0)
		return rc;
	return 0;
}

void fdt_x86_irq_cells(const struct fdt_irq *irq, fdt32_t cells[FDT_X86_IRQ_CELLS])
{
	cells[0] = cpu_to_fdt32(irq->line);   /* IOAPIC pin; KVM wires GSI n to pin n */
	cells[1] = cpu_to_fdt32(irq->sense == FDT_IRQ_LEVEL_HIGH ? X86_SENSE_LEVEL_HIGH
								 : X86_SENSE_EDGE_RISING);
}
