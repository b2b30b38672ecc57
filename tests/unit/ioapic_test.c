/* SPDX-License-Identifier: Apache-2.0 */
/* The userspace IOAPIC (split irqchip): registers as Linux programs them,
 * redirection entries as MSI routes, edge and level delivery, Remote IRR
 * and EOI, and what a guest may not write. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "devices/ioapic.h"

struct fake_kvm {
	bool routed[IOAPIC_PINS];
	struct ioapic_msi msi[IOAPIC_PINS];
	unsigned route_updates;
	unsigned raised[IOAPIC_PINS];
	int route_rc;
};

static int fake_set_routes(void *o, const bool routed[IOAPIC_PINS], const struct ioapic_msi msi[IOAPIC_PINS])
{
	struct fake_kvm *k = o;
	memcpy(k->routed, routed, sizeof(k->routed));
	memcpy(k->msi, msi, sizeof(k->msi));
	k->route_updates++;
	return k->route_rc;
}

static int fake_raise(void *o, unsigned pin)
{
	struct fake_kvm *k = o;
	cr_assert(k->routed[pin], "pin %u raised without a route", pin);
	k->raised[pin]++;
	return 0;
}

static struct fake_kvm kvm;
static struct ioapic io;
static struct bus_device dev;

static void setup(void)
{
	memset(&kvm, 0, sizeof(kvm));
	struct ioapic_ops ops = { .set_routes = fake_set_routes, .raise = fake_raise, .opaque = &kvm };
	ioapic_init(&io, &ops, 2);
	dev = ioapic_bus_device(&io);
}

static void teardown(void)
{
	ioapic_destroy(&io);
}

static void mmio_write32(uint64_t off, uint32_t v)
{
	uint8_t b[4];
	bus_store_le(b, 4, v);
	dev.write(dev.opaque, off, b, 4);
}

static uint32_t mmio_read32(uint64_t off)
{
	uint8_t b[4];
	dev.read(dev.opaque, off, b, 4);
	return (uint32_t)bus_load_le(b, 4);
}

static uint32_t reg_read(uint32_t reg)
{
	mmio_write32(0x00, reg);
	return mmio_read32(0x10);
}

static void reg_write(uint32_t reg, uint32_t v)
{
	mmio_write32(0x00, reg);
	mmio_write32(0x10, v);
}

/* Linux's order: high half (destination) first, then the low half. */
static void route_pin(unsigned pin, uint32_t low, uint8_t dest)
{
	reg_write(0x11 + 2 * pin, (uint32_t)dest << 24);
	reg_write(0x10 + 2 * pin, low);
}

#define LEVEL   (1u << 15)
#define MASKED  (1u << 16)
#define RIRR    (1u << 14)
#define LOGICAL (1u << 11)

TestSuite(ioapic, .init = setup, .fini = teardown);

Test(ioapic, version_register_says_24_pins_and_version_0x20)
{
	cr_assert_eq(reg_read(0x01), 0x00170020);
}

Test(ioapic, every_pin_starts_masked_and_unrouted)
{
	for (unsigned n = 0; n < IOAPIC_PINS; n++)
		cr_assert(reg_read(0x10 + 2 * n) & MASKED, "pin %u", n);
	ioapic_set_irq(&io, 4, 1);
	cr_assert_eq(kvm.raised[4], 0);
}

Test(ioapic, id_register_starts_with_the_tables_id_and_keeps_only_bits_27_to_24)
{
	cr_assert_eq(reg_read(0x00), 0x02000000);
	reg_write(0x00, 0xffffffff);
	cr_assert_eq(reg_read(0x00), 0x0f000000);
}

/* The ID every table and the register share: after the CPUs' while one
 * below the APIC bus's broadcast 0xf is free, else 0 (QEMU's), so it always
 * fits the register's 4 bits. */
Test(ioapic, id_for_cpus_is_the_first_after_the_cpus_while_4_bits_hold_it)
{
	cr_expect_eq(ioapic_id_for_cpus(1), 1);
	cr_expect_eq(ioapic_id_for_cpus(4), 4);
	cr_expect_eq(ioapic_id_for_cpus(14), 14);
	cr_expect_eq(ioapic_id_for_cpus(15), 0);
	cr_expect_eq(ioapic_id_for_cpus(16), 0);
	cr_expect_eq(ioapic_id_for_cpus(64), 0);
}

Test(ioapic, an_unmasked_entry_becomes_its_msi_route)
{
	route_pin(4, 0x31, 1);
	cr_assert(kvm.routed[4]);
	cr_assert_eq(kvm.msi[4].address, 0xfee01000);
	cr_assert_eq(kvm.msi[4].data, 0x31);
	route_pin(5, 0x32 | LEVEL | LOGICAL | (1u << 8), 3);   /* lowest priority, logical */
	cr_assert_eq(kvm.msi[5].address, 0xfee03004);
	cr_assert_eq(kvm.msi[5].data, 0x32 | (1u << 8) | (1u << 15));
}

Test(ioapic, masking_removes_the_route)
{
	route_pin(9, 0x40, 0);
	cr_assert(kvm.routed[9]);
	reg_write(0x10 + 18, 0x40 | MASKED);
	cr_assert_not(kvm.routed[9]);
}

Test(ioapic, rewriting_the_same_entry_does_not_update_routes)
{
	route_pin(9, 0x40, 0);
	unsigned n = kvm.route_updates;
	reg_write(0x10 + 18, 0x40);
	cr_assert_eq(kvm.route_updates, n);
}

Test(ioapic, extint_entries_get_no_route)
{
	route_pin(0, 0x30 | (7u << 8), 0);
	cr_assert_not(kvm.routed[0]);
	ioapic_set_irq(&io, 0, 1);
	cr_assert_eq(kvm.raised[0], 0);
}

Test(ioapic, an_edge_pin_fires_on_each_rising_edge_only)
{
	route_pin(4, 0x31, 0);
	ioapic_set_irq(&io, 4, 1);
	ioapic_set_irq(&io, 4, 1);
	cr_assert_eq(kvm.raised[4], 1);
	ioapic_set_irq(&io, 4, 0);
	ioapic_set_irq(&io, 4, 1);
	cr_assert_eq(kvm.raised[4], 2);
}

Test(ioapic, an_edge_on_a_masked_pin_is_lost)
{
	route_pin(4, 0x31 | MASKED, 0);
	ioapic_set_irq(&io, 4, 1);
	reg_write(0x10 + 8, 0x31);
	cr_assert_eq(kvm.raised[4], 0);
}

Test(ioapic, a_level_pin_waits_for_the_eoi_and_fires_again_while_asserted)
{
	route_pin(4, 0x31 | LEVEL, 0);
	ioapic_set_irq(&io, 4, 1);
	cr_assert_eq(kvm.raised[4], 1);
	cr_assert(reg_read(0x10 + 8) & RIRR);
	ioapic_set_irq(&io, 4, 1);
	cr_assert_eq(kvm.raised[4], 1, "Remote IRR holds it back");
	ioapic_eoi(&io, 0x31);
	cr_assert_eq(kvm.raised[4], 2, "still asserted after the EOI");
	ioapic_set_irq(&io, 4, 0);
	ioapic_eoi(&io, 0x31);
	cr_assert_eq(kvm.raised[4], 2);
	cr_assert_not(reg_read(0x10 + 8) & RIRR);
}

Test(ioapic, the_eoi_register_acts_like_a_lapic_eoi)
{
	route_pin(4, 0x31 | LEVEL, 0);
	ioapic_set_irq(&io, 4, 1);
	mmio_write32(0x40, 0x31);
	cr_assert_eq(kvm.raised[4], 2);
}

Test(ioapic, an_eoi_of_another_vector_changes_nothing)
{
	route_pin(4, 0x31 | LEVEL, 0);
	ioapic_set_irq(&io, 4, 1);
	ioapic_eoi(&io, 0x32);
	cr_assert_eq(kvm.raised[4], 1);
	cr_assert(reg_read(0x10 + 8) & RIRR);
}

Test(ioapic, unmasking_an_asserted_level_pin_delivers_it)
{
	route_pin(4, 0x31 | LEVEL | MASKED, 0);
	ioapic_set_irq(&io, 4, 1);
	cr_assert_eq(kvm.raised[4], 0);
	reg_write(0x10 + 8, 0x31 | LEVEL);
	cr_assert_eq(kvm.raised[4], 1);
}

Test(ioapic, the_guest_cannot_write_remote_irr_or_delivery_status)
{
	route_pin(4, 0x31 | LEVEL | RIRR | (1u << 12), 0);
	cr_assert_eq(reg_read(0x10 + 8) & (RIRR | (1u << 12)), 0);
	ioapic_set_irq(&io, 4, 1);
	cr_assert_eq(kvm.raised[4], 1, "a forged Remote IRR would have held it back");
}

Test(ioapic, switching_a_pin_to_edge_clears_remote_irr)
{
	route_pin(4, 0x31 | LEVEL, 0);
	ioapic_set_irq(&io, 4, 1);
	reg_write(0x10 + 8, 0x31);
	cr_assert_not(reg_read(0x10 + 8) & RIRR);
}

Test(ioapic, reserved_registers_read_zero_and_ignore_writes)
{
	reg_write(0x01, 0);
	cr_assert_eq(reg_read(0x01), 0x00170020);
	cr_assert_eq(reg_read(0x03), 0);
	cr_assert_eq(reg_read(0x10 + 2 * IOAPIC_PINS), 0);
	reg_write(0xff, 0x1234);
	cr_assert_eq(reg_read(0xff), 0);
}

Test(ioapic, only_aligned_32_bit_accesses_reach_registers)
{
	uint8_t b[8] = { 0x11, 0, 0, 0, 0, 0, 0, 0 };
	dev.write(dev.opaque, 0x00, b, 1);
	cr_assert_eq(mmio_read32(0x00), 0);
	dev.write(dev.opaque, 0x02, b, 4);
	cr_assert_eq(mmio_read32(0x00), 0);
	memset(b, 0xaa, sizeof(b));
	dev.read(dev.opaque, 0x10, b, 8);
	for (unsigned i = 0; i < 8; i++)
		cr_assert_eq(b[i], 0);
}

Test(ioapic, pins_beyond_the_table_are_refused)
{
	cr_assert_eq(ioapic_set_irq(&io, IOAPIC_PINS, 1), -EINVAL);
}

Test(ioapic, a_failed_route_update_is_counted)
{
	kvm.route_rc = -ENOMEM;
	route_pin(4, 0x31, 0);
	cr_assert_eq(io.route_errors, 1);
}
