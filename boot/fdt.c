/* SPDX-License-Identifier: Apache-2.0 */
/* Device tree builder: a struct fdt_machine to a DTB, with libfdt's
 * sequential-write API (fdt_create ... fdt_finish), which writes the blob in
 * one pass into the caller's buffer and reports FDT_ERR_NOSPACE when it does
 * not fit.
 *
 * The description is checked first, because the sequential-write API does
 * not: two nodes with one name (two RAM regions at one base, two CPUs with
 * one ID) would give a tree that libfdt itself cannot look up.
 *
 * Architecture-neutral except for the interrupt controller, which
 * fdt_x86.c describes (the only x86 knowledge in the tree): memory, cpus,
 * chosen, the UART, the virtio-mmio and the pvpanic nodes are what arm64 Linux
 * reads too. */
#include "boot/fdt.h"

#include <errno.h>
#include <libfdt.h>
#include <stdbool.h>
#include <stdio.h>

#include "boot/fdt_x86.h"

#define ROOT_ADDRESS_CELLS 2
#define ROOT_SIZE_CELLS    2
#define INTC_PHANDLE       1
/* The ISA binding (IEEE 1275): phys.hi bit 0 set = I/O space, then the port. */
#define ISA_ADDRESS_CELLS  2
#define ISA_SIZE_CELLS     1
#define ISA_SPACE_IO       1

/* ---- checking the description ---------------------------------------- */

/* Non-empty and base + size does not wrap 2^64 (the end may be 2^64). */
static bool range_ok(const struct fdt_range *r)
{
	return r->size && r->base + (r->size - 1) >= r->base;
}

static bool ranges_overlap(const struct fdt_range *a, const struct fdt_range *b)
{
	/* range_ok() holds for both: the last bytes do not wrap. */
	return a->base <= b->base + (b->size - 1) && b->base <= a->base + (a->size - 1);
}

static int check_ranges(const struct fdt_range *r, unsigned n, const char *what,
			struct vmm_err *err)
{
	for (unsigned i = 0; i < n; i++) {
		if (!range_ok(&r[i]))
			return vmm_err_set(err, EINVAL, "device tree: %s %u at 0x%llx (+0x%llx) is empty or wraps",
					   what, i, (unsigned long long)r[i].base,
					   (unsigned long long)r[i].size);
		for (unsigned j = 0; j < i; j++)
			if (ranges_overlap(&r[i], &r[j]))
				return vmm_err_set(err, EINVAL, "device tree: %s %u at 0x%llx overlaps %s %u at 0x%llx",
						   what, i, (unsigned long long)r[i].base, what, j,
						   (unsigned long long)r[j].base);
	}
	return 0;
}

static int check_irq(const struct fdt_machine *m, const struct fdt_irq *irq, const char *what,
		     struct vmm_err *err)
{
	if (irq->line >= m->intc.nr_lines)
		return vmm_err_set(err, EINVAL, "device tree: %s uses interrupt %u; the controller has %u lines",
				   what, irq->line, m->intc.nr_lines);
	if (irq->sense != FDT_IRQ_EDGE_RISING && irq->sense != FDT_IRQ_LEVEL_HIGH)
		return vmm_err_set(err, EINVAL, "device tree: %s has an unknown interrupt sense %d",
				   what, (int)irq->sense);
	return 0;
}

static int check_intc(const struct fdt_intc *intc, struct vmm_err *err)
{
	if (intc->kind != FDT_INTC_X86_APIC)
		return vmm_err_set(err, EINVAL, "device tree: unknown interrupt controller kind %d",
				   (int)intc->kind);
	if (intc->nr_lines == 0)
		return vmm_err_set(err, EINVAL, "device tree: the interrupt controller has no lines");
	struct fdt_range both[2] = { intc->ioapic, intc->lapic };
	return check_ranges(both, 2, "APIC window", err);
}

static int check_uart(const struct fdt_machine *m, struct vmm_err *err)
{
	const struct fdt_uart *u = &m->uart;
	if (u->space == FDT_UART_NONE)
		return 0;
	if (u->space != FDT_UART_IO && u->space != FDT_UART_MMIO)
		return vmm_err_set(err, EINVAL, "device tree: unknown UART address space %d", (int)u->space);
	struct fdt_range r = { u->base, u->size };
	/* An ISA I/O address and size are one cell each. */
	if (!range_ok(&r) || (u->space == FDT_UART_IO && (r.base + r.size - 1) > UINT32_MAX))
		return vmm_err_set(err, EINVAL, "device tree: UART registers at 0x%llx (+0x%llx) are empty or out of range",
				   (unsigned long long)u->base, (unsigned long long)u->size);
	if (u->clock_hz == 0)
		return vmm_err_set(err, EINVAL, "device tree: UART clock-frequency is 0");
	return check_irq(m, &u->irq, "the UART", err);
}

static int check_virtio(const struct fdt_machine *m, struct vmm_err *err)
{
	if (m->nr_virtio_mmio > FDT_MAX_VIRTIO_MMIO)
		return vmm_err_set(err, EINVAL, "device tree: %u virtio-mmio devices, at most %d",
				   m->nr_virtio_mmio, FDT_MAX_VIRTIO_MMIO);
	struct fdt_range win[FDT_MAX_VIRTIO_MMIO];
	for (unsigned i = 0; i < m->nr_virtio_mmio; i++) {
		char what[40];
		snprintf(what, sizeof(what), "virtio-mmio device %u", i);
		int rc = check_irq(m, &m->virtio_mmio[i].irq, what, err);
		if (rc < 0)
			return rc;
		win[i] = (struct fdt_range){ m->virtio_mmio[i].base, m->virtio_mmio[i].size };
	}
	return check_ranges(win, m->nr_virtio_mmio, "virtio-mmio window", err);
}

/* The pvpanic register, when there is one, is a window of its own. */
static int check_pvpanic(const struct fdt_machine *m, struct vmm_err *err)
{
	const struct fdt_range *p = &m->pvpanic;
	if (p->size == 0)
		return 0;
	if (!range_ok(p))
		return vmm_err_set(err, EINVAL, "device tree: pvpanic register at 0x%llx (+0x%llx) wraps",
				   (unsigned long long)p->base, (unsigned long long)p->size);
	for (unsigned i = 0; i < m->nr_virtio_mmio; i++) {
		struct fdt_range win = { m->virtio_mmio[i].base, m->virtio_mmio[i].size };
		if (ranges_overlap(p, &win))
			return vmm_err_set(err, EINVAL, "device tree: pvpanic register at 0x%llx overlaps virtio-mmio window %u at 0x%llx",
					   (unsigned long long)p->base, i, (unsigned long long)win.base);
	}
	return 0;
}

static int check_machine(const struct fdt_machine *m, struct vmm_err *err)
{
	if (!m->model || !m->compatible)
		return vmm_err_set(err, EINVAL, "device tree: the machine needs a model and a compatible string");
	if (m->nr_mem == 0 || m->nr_mem > FDT_MAX_MEM_REGIONS)
		return vmm_err_set(err, EINVAL, "device tree: %u RAM regions, expected 1 to %d",
				   m->nr_mem, FDT_MAX_MEM_REGIONS);
	if (m->nr_reserved > FDT_MAX_RESERVED)
		return vmm_err_set(err, EINVAL, "device tree: %u reserved ranges, at most %d",
				   m->nr_reserved, FDT_MAX_RESERVED);
	if (m->ncpus == 0 || m->ncpus > FDT_MAX_CPUS)
		return vmm_err_set(err, EINVAL, "device tree: %u CPUs, expected 1 to %d",
				   m->ncpus, FDT_MAX_CPUS);
	for (unsigned i = 0; i < m->ncpus; i++)
		for (unsigned j = 0; j < i; j++)
			if (m->cpu_id[i] == m->cpu_id[j])
				return vmm_err_set(err, EINVAL, "device tree: CPUs %u and %u share the ID %u",
						   j, i, m->cpu_id[i]);
	int rc = check_ranges(m->mem, m->nr_mem, "RAM region", err);
	if (rc == 0)
		rc = check_ranges(m->reserved, m->nr_reserved, "reserved range", err);
	if (rc == 0)
		rc = check_intc(&m->intc, err);
	if (rc == 0)
		rc = check_uart(m, err);
	if (rc == 0)
		rc = check_virtio(m, err);
	if (rc == 0)
		rc = check_pvpanic(m, err);
	return rc;
}

/* ---- writing the nodes ----------------------------------------------- *
 * Each returns 0 or a negative libfdt error (FDT_ERR_NOSPACE above all). */

static int prop_reg64(void *fdt, uint64_t base, uint64_t size)
{
	fdt64_t reg[2] = { cpu_to_fdt64(base), cpu_to_fdt64(size) };
	return fdt_property(fdt, "reg", reg, sizeof(reg));
}

static int prop_interrupts(void *fdt, const struct fdt_machine *m, const struct fdt_irq *irq)
{
	switch (m->intc.kind) {
	case FDT_INTC_X86_APIC: {
		fdt32_t cells[FDT_X86_IRQ_CELLS];
		fdt_x86_irq_cells(irq, cells);
		return fdt_property(fdt, "interrupts", cells, sizeof(cells));
	}
	}
	return -FDT_ERR_INTERNAL;   /* check_intc() refused other kinds */
}

static int add_chosen(void *fdt, const struct fdt_machine *m, const char *stdout_path)
{
	int rc;
	if ((rc = fdt_begin_node(fdt, "chosen")) < 0 ||
	    (rc = fdt_property_string(fdt, "bootargs", m->bootargs ? m->bootargs : "")) < 0)
		return rc;
	if (stdout_path && (rc = fdt_property_string(fdt, "stdout-path", stdout_path)) < 0)
		return rc;
	return fdt_end_node(fdt);
}

static int add_memory(void *fdt, const struct fdt_range *r)
{
	char name[40];
	int rc;
	snprintf(name, sizeof(name), "memory@%llx", (unsigned long long)r->base);
	if ((rc = fdt_begin_node(fdt, name)) < 0 ||
	    (rc = fdt_property_string(fdt, "device_type", "memory")) < 0 ||
	    (rc = prop_reg64(fdt, r->base, r->size)) < 0)
		return rc;
	return fdt_end_node(fdt);
}

static int add_cpus(void *fdt, const struct fdt_machine *m)
{
	int rc;
	if ((rc = fdt_begin_node(fdt, "cpus")) < 0 ||
	    (rc = fdt_property_u32(fdt, "#address-cells", 1)) < 0 ||
	    (rc = fdt_property_u32(fdt, "#size-cells", 0)) < 0)
		return rc;
	for (unsigned i = 0; i < m->ncpus; i++) {
		char name[24];
		snprintf(name, sizeof(name), "cpu@%x", m->cpu_id[i]);
		if ((rc = fdt_begin_node(fdt, name)) < 0 ||
		    (rc = fdt_property_string(fdt, "device_type", "cpu")) < 0 ||
		    (rc = fdt_property_u32(fdt, "reg", m->cpu_id[i])) < 0 ||
		    (rc = fdt_end_node(fdt)) < 0)
			return rc;
	}
	return fdt_end_node(fdt);
}

static int add_intc(void *fdt, const struct fdt_machine *m)
{
	switch (m->intc.kind) {
	case FDT_INTC_X86_APIC:
		return fdt_x86_add_apics(fdt, &m->intc, INTC_PHANDLE);
	}
	return -FDT_ERR_INTERNAL;
}

/* Properties every UART node has, after its name and reg. */
static int uart_props(void *fdt, const struct fdt_machine *m)
{
	int rc;
	if ((rc = fdt_property_string(fdt, "compatible", "ns16550a")) < 0 ||
	    (rc = fdt_property_u32(fdt, "clock-frequency", m->uart.clock_hz)) < 0)
		return rc;
	return prop_interrupts(fdt, m, &m->uart.irq);
}

/* The UART's node name: serial@i<port> (the ISA binding's unit address for
 * I/O space) or serial@<address>. */
static void uart_name(const struct fdt_machine *m, char *name, size_t len)
{
	snprintf(name, len, m->uart.space == FDT_UART_IO ? "serial@i%llx" : "serial@%llx",
		 (unsigned long long)m->uart.base);
}

/* A UART in port I/O space sits on an ISA bus node. The bus has no
 * `ranges`: x86 ports are not in the memory address space, so there is no
 * CPU address to translate them to (an arm64 machine maps its UART as MMIO). */
static int add_uart_io(void *fdt, const struct fdt_machine *m, const char *name)
{
	fdt32_t reg[3] = { cpu_to_fdt32(ISA_SPACE_IO), cpu_to_fdt32((uint32_t)m->uart.base),
			   cpu_to_fdt32((uint32_t)m->uart.size) };
	int rc;
	if ((rc = fdt_begin_node(fdt, "isa")) < 0 ||
	    (rc = fdt_property_string(fdt, "compatible", "isa")) < 0 ||
	    (rc = fdt_property_string(fdt, "device_type", "isa")) < 0 ||
	    (rc = fdt_property_u32(fdt, "#address-cells", ISA_ADDRESS_CELLS)) < 0 ||
	    (rc = fdt_property_u32(fdt, "#size-cells", ISA_SIZE_CELLS)) < 0 ||
	    (rc = fdt_begin_node(fdt, name)) < 0 ||
	    (rc = fdt_property(fdt, "reg", reg, sizeof(reg))) < 0 ||
	    (rc = uart_props(fdt, m)) < 0 ||
	    (rc = fdt_end_node(fdt)) < 0)
		return rc;
	return fdt_end_node(fdt);
}

static int add_uart_mmio(void *fdt, const struct fdt_machine *m, const char *name)
{
	int rc;
	if ((rc = fdt_begin_node(fdt, name)) < 0 ||
	    (rc = prop_reg64(fdt, m->uart.base, m->uart.size)) < 0 ||
	    (rc = uart_props(fdt, m)) < 0)
		return rc;
	return fdt_end_node(fdt);
}

static int add_virtio_mmio(void *fdt, const struct fdt_machine *m, const struct fdt_virtio_mmio *v)
{
	char name[40];
	int rc;
	snprintf(name, sizeof(name), "virtio_mmio@%llx", (unsigned long long)v->base);
	if ((rc = fdt_begin_node(fdt, name)) < 0 ||
	    (rc = fdt_property_string(fdt, "compatible", "virtio,mmio")) < 0 ||
	    (rc = prop_reg64(fdt, v->base, v->size)) < 0 ||
	    (rc = prop_interrupts(fdt, m, &v->irq)) < 0)
		return rc;
	return fdt_end_node(fdt);
}

/* QEMU's binding (Linux Documentation/devicetree/bindings/misc/pvpanic-mmio.txt):
 * no interrupt, just the register. */
static int add_pvpanic(void *fdt, const struct fdt_range *p)
{
	char name[40];
	int rc;
	snprintf(name, sizeof(name), "pvpanic-mmio@%llx", (unsigned long long)p->base);
	if ((rc = fdt_begin_node(fdt, name)) < 0 ||
	    (rc = fdt_property_string(fdt, "compatible", "qemu,pvpanic-mmio")) < 0 ||
	    (rc = prop_reg64(fdt, p->base, p->size)) < 0)
		return rc;
	return fdt_end_node(fdt);
}

/* The whole tree, root properties before any subnode (the format requires it). */
static int write_tree(void *fdt, const struct fdt_machine *m)
{
	char uart[40] = "", uart_path[48] = "";
	if (m->uart.space != FDT_UART_NONE) {
		uart_name(m, uart, sizeof(uart));
		snprintf(uart_path, sizeof(uart_path), "%s/%s",
			 m->uart.space == FDT_UART_IO ? "/isa" : "", uart);
	}

	int rc;
	for (unsigned i = 0; i < m->nr_reserved; i++)
		if ((rc = fdt_add_reservemap_entry(fdt, m->reserved[i].base, m->reserved[i].size)) < 0)
			return rc;
	if ((rc = fdt_finish_reservemap(fdt)) < 0 ||
	    (rc = fdt_begin_node(fdt, "")) < 0 ||
	    (rc = fdt_property_u32(fdt, "#address-cells", ROOT_ADDRESS_CELLS)) < 0 ||
	    (rc = fdt_property_u32(fdt, "#size-cells", ROOT_SIZE_CELLS)) < 0 ||
	    (rc = fdt_property_string(fdt, "model", m->model)) < 0 ||
	    (rc = fdt_property_string(fdt, "compatible", m->compatible)) < 0 ||
	    (rc = fdt_property_u32(fdt, "interrupt-parent", INTC_PHANDLE)) < 0 ||
	    (rc = add_chosen(fdt, m, uart[0] ? uart_path : NULL)) < 0)
		return rc;
	for (unsigned i = 0; i < m->nr_mem; i++)
		if ((rc = add_memory(fdt, &m->mem[i])) < 0)
			return rc;
	if ((rc = add_cpus(fdt, m)) < 0 || (rc = add_intc(fdt, m)) < 0)
		return rc;
	if (m->uart.space == FDT_UART_IO && (rc = add_uart_io(fdt, m, uart)) < 0)
		return rc;
	if (m->uart.space == FDT_UART_MMIO && (rc = add_uart_mmio(fdt, m, uart)) < 0)
		return rc;
	for (unsigned i = 0; i < m->nr_virtio_mmio; i++)
		if ((rc = add_virtio_mmio(fdt, m, &m->virtio_mmio[i])) < 0)
			return rc;
	if (m->pvpanic.size && (rc = add_pvpanic(fdt, &m->pvpanic)) < 0)
		return rc;
	if ((rc = fdt_end_node(fdt)) < 0)
		return rc;
	return fdt_finish(fdt);
}

int fdt_build(const struct fdt_machine *m, void *buf, size_t size, struct vmm_err *err)
{
	int rc = check_machine(m, err);
	if (rc < 0)
		return rc;
	if (size > INT32_MAX)
		size = INT32_MAX;   /* libfdt sizes are int */
	rc = fdt_create(buf, (int)size);
	if (rc == 0)
		rc = write_tree(buf, m);
	if (rc == -FDT_ERR_NOSPACE)
		return vmm_err_set(err, E2BIG, "device tree does not fit in %zu bytes", size);
	if (rc < 0)
		return vmm_err_set(err, EINVAL, "device tree: libfdt: %s", fdt_strerror(rc));
	return (int)fdt_totalsize(buf);
}
