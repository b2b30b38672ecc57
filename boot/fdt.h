/* SPDX-License-Identifier: Apache-2.0 */
/* The machine as a flattened device tree (DTB), built with libfdt.
 *
 * The caller describes the machine in a plain struct fdt_machine (RAM, CPUs,
 * the interrupt controller, a 16550 UART, every virtio-mmio device, the
 * command line) and fdt_build() turns it into a DTB:
 *
 *   /memreserve/ for each reserved range (firmware tables)
 *   / { #address-cells = <2>; #size-cells = <2>; interrupt-parent = <&intc>;
 *       chosen { bootargs; stdout-path (the UART) }
 *       memory@<base> { device_type = "memory"; reg }     one per RAM region
 *       cpus { cpu@<id> { device_type = "cpu"; reg = <id>; } ... }
 *       the interrupt controller(s)                        (fdt_x86.c on x86)
 *       isa { serial@i<port> }   a UART in I/O space, or serial@<addr> for MMIO
 *       virtio_mmio@<base> { compatible = "virtio,mmio"; reg; interrupts; }
 *       pvpanic-mmio@<base> { compatible = "qemu,pvpanic-mmio"; reg; }
 *   }
 *
 * Nothing here knows x86 except what enum fdt_intc_kind selects: the tree
 * is the one an arm64 port would boot Linux with, given a GIC kind. PVH
 * guests get it as a boot module (boot/pvh.c); `minivmm --dump-dtb FILE`
 * writes it out. Layout documented in docs/boot.md. */
#ifndef MINIVMM_BOOT_FDT_H
#define MINIVMM_BOOT_FDT_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define FDT_MAX_MEM_REGIONS   4
#define FDT_MAX_RESERVED      4
#define FDT_MAX_CPUS          256
#define FDT_MAX_VIRTIO_MMIO   32

struct fdt_range {
	uint64_t base;
	uint64_t size;
};

/* How a device drives its interrupt line. */
enum fdt_irq_sense {
	FDT_IRQ_EDGE_RISING,   /* edge, active high: ISA devices, virtio-mmio via irqfd */
	FDT_IRQ_LEVEL_HIGH,
};

struct fdt_irq {
	uint32_t line;         /* input of the interrupt controller (IOAPIC pin = GSI) */
	enum fdt_irq_sense sense;
};

enum fdt_intc_kind {
	/* The x86 local APIC and one IOAPIC, in the bindings Linux's
	 * arch/x86/kernel/devicetree.c reads ("intel,ce4100-ioapic",
	 * "intel,ce4100-lapic"). An arm64 port adds its GIC here. */
	FDT_INTC_X86_APIC,
};

struct fdt_intc {
	enum fdt_intc_kind kind;
	unsigned nr_lines;          /* interrupt inputs (IOAPIC pins); every fdt_irq.line is below */
	struct fdt_range ioapic;    /* FDT_INTC_X86_APIC: the IOAPIC's MMIO window */
	struct fdt_range lapic;     /* FDT_INTC_X86_APIC: the local APIC's */
};

enum fdt_uart_space {
	FDT_UART_NONE,         /* no UART node */
	FDT_UART_IO,           /* port I/O (x86): under an "isa" node, reg = <1 port size> */
	FDT_UART_MMIO,         /* memory-mapped, at the root */
};

struct fdt_uart {
	enum fdt_uart_space space;
	uint64_t base;         /* port or physical address */
	uint64_t size;         /* bytes of registers (8 for a 16550) */
	uint32_t clock_hz;     /* input clock: 1843200 for a PC UART (115200 baud at divisor 1) */
	struct fdt_irq irq;
};

struct fdt_virtio_mmio {
	uint64_t base;         /* window start */
	uint64_t size;         /* window bytes */
	struct fdt_irq irq;
};

struct fdt_machine {
	const char *model;                 /* root "model" */
	const char *compatible;            /* root "compatible" */

	struct fdt_range mem[FDT_MAX_MEM_REGIONS];       /* RAM, each becomes memory@<base> */
	unsigned nr_mem;
	struct fdt_range reserved[FDT_MAX_RESERVED];     /* memory reservation block */
	unsigned nr_reserved;

	uint32_t cpu_id[FDT_MAX_CPUS];     /* cpu@<id>, reg = <id>: the APIC ID on x86 */
	unsigned ncpus;

	struct fdt_intc intc;
	struct fdt_uart uart;
	struct fdt_virtio_mmio virtio_mmio[FDT_MAX_VIRTIO_MMIO];   /* in this order */
	unsigned nr_virtio_mmio;
	struct fdt_range pvpanic;          /* QEMU's pvpanic register in MMIO; size 0: none */

	const char *bootargs;              /* /chosen bootargs; NULL writes "" */
};

/* Build the DTB for m into buf (size bytes). Returns the DTB's length
 * (fdt_totalsize) or a negative errno: EINVAL for a description the tree
 * cannot hold (no CPU or RAM, two nodes with one name, an interrupt line the
 * controller lacks, an empty or wrapping range, device windows that overlap), E2BIG when it does not fit
 * in size bytes. */
int fdt_build(const struct fdt_machine *m, void *buf, size_t size, struct vmm_err *err);

#endif
