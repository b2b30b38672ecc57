/* SPDX-License-Identifier: Apache-2.0 */
/* A userspace 82093AA-style IOAPIC (version 0x20, with the EOI register),
 * for KVM's split irqchip (KVM_CAP_SPLIT_IRQCHIP: the LAPICs stay in the
 * kernel, the IOAPIC, PIC and PIT do not).
 *
 * Each pin's redirection entry becomes an MSI (what the IOAPIC would put on
 * the APIC bus). The device hands the MSI of every unmasked pin to its
 * owner as a route (pin n = GSI n), so interrupts KVM raises by itself
 * (irqfds) reach the LAPICs without leaving the kernel, and asks the owner
 * to raise a pin when a line it models (ioapic_set_irq) asserts. Registers
 * are read and written on vCPU threads, lines driven from any thread: one
 * lock covers both. */
#ifndef MINIVMM_DEVICES_IOAPIC_H
#define MINIVMM_DEVICES_IOAPIC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/bus.h"

#define IOAPIC_PINS 24
#define IOAPIC_VERSION 0x20   /* the EOI register came with 0x20 (the 82093AA is 0x11) */

/* One pin's interrupt as an MSI. */
struct ioapic_msi {
	uint64_t address;
	uint32_t data;
};

struct ioapic_ops {
	/* The routes changed: routed[n] tells whether pin n has one, msi[n]
	 * is it. Called with the IOAPIC's lock held. Returns 0 or -errno. */
	int (*set_routes)(void *opaque, const bool routed[IOAPIC_PINS],
			  const struct ioapic_msi msi[IOAPIC_PINS]);
	/* Raise pin n once through its route. Called with the lock held. */
	int (*raise)(void *opaque, unsigned pin);
	void *opaque;
};

struct ioapic {
	pthread_mutex_t lock;
	struct ioapic_ops ops;
	uint32_t id;                       /* bits 27:24 of the ID register */
	uint32_t regsel;
	uint64_t rte[IOAPIC_PINS];         /* redirection entries */
	uint32_t line;                     /* levels of the lines ioapic_set_irq drives */
	uint64_t route_errors;             /* set_routes failures (the guest gets no interrupt there) */
};

/* The IOAPIC ID for a machine of ncpus CPUs (APIC IDs 0..ncpus-1): the
 * first ID after the CPUs' where the register's 4 bits hold one below 0xf
 * (the broadcast ID of the APIC bus the MP spec describes, where the IDs
 * had to differ), else 0, as QEMU gives every machine: since the xAPIC,
 * interrupts travel as messages to LAPIC IDs and the IOAPIC's own ID
 * addresses nothing, so sharing one with a CPU is harmless. The register,
 * the MP table and the MADT must all say this one. */
unsigned ioapic_id_for_cpus(unsigned ncpus);

/* id: the IOAPIC ID the MP table and MADT give (ioapic_id_for_cpus). */
void ioapic_init(struct ioapic *io, const struct ioapic_ops *ops, unsigned id);
void ioapic_destroy(struct ioapic *io);

/* The 4 KiB MMIO window at MINIVMM_IOAPIC_BASE. */
struct bus_device ioapic_bus_device(struct ioapic *io);

/* A device's interrupt line to pin n goes to level (0 or 1, active high).
 * Edge-triggered pins fire on the rising edge; level-triggered ones while
 * the line is high and the last interrupt was EOI'd. */
int ioapic_set_irq(struct ioapic *io, unsigned pin, int level);

/* A LAPIC EOI'd vector (KVM_EXIT_IOAPIC_EOI): clears Remote IRR of the
 * level-triggered pins using it and re-raises those still asserted. */
void ioapic_eoi(struct ioapic *io, uint8_t vector);

/* The MSI a redirection entry stands for; false when it delivers none
 * (masked, or ExtINT, which only an 8259 could answer). */
bool ioapic_rte_to_msi(uint64_t rte, struct ioapic_msi *msi);

#endif
