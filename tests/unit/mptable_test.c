/* SPDX-License-Identifier: Apache-2.0 */
/* MP 1.4 table: checksums, entry counts, and what each entry says. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

#include "boot/boot.h"
#include "boot/mptable.h"
#include "devices/ioapic.h"
#include "minivmm_abi.h"

static uint8_t sum_bytes(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += p[i];
	return sum;
}

static void check_table(unsigned ncpus, unsigned ioapic_id, unsigned ioapic_version)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 2 << 20, &err), 0, "%s", err.msg);
	cr_assert_eq(mptable_write(&mem, ncpus, ioapic_id, ioapic_version, &err), 0, "%u cpus: %s", ncpus, err.msg);

	const uint8_t *mpf_p = guest_mem_ptr(&mem, BOOT_MPTABLE_ADDR, sizeof(struct mpf_intel));
	struct mpf_intel mpf;
	memcpy(&mpf, mpf_p, sizeof(mpf));
	cr_expect_eq(memcmp(mpf.signature, "_MP_", 4), 0);
	cr_expect_eq(sum_bytes(mpf_p, 16), 0, "floating pointer checksum");
	cr_expect_eq(mpf.length, 1);
	cr_expect_eq(mpf.specification, 4);
	if (ncpus <= MPTABLE_EBDA_MAX_CPUS)
		cr_assert_eq(mpf.physptr, BOOT_MPTABLE_ADDR + 16, "table right after the pointer");
	else
		cr_assert_eq(mpf.physptr, BOOT_MPTABLE_HIGH_ADDR, "big table in the BIOS area");

	struct mpc_table hdr;
	const uint8_t *tbl = guest_mem_ptr(&mem, mpf.physptr, sizeof(hdr));
	memcpy(&hdr, tbl, sizeof(hdr));
	cr_expect_eq(memcmp(hdr.signature, "PCMP", 4), 0);
	cr_expect_eq(hdr.spec, 4);
	cr_expect_eq(memcmp(hdr.oem, "MINIVMM", 7), 0);
	cr_expect_eq(memcmp(hdr.productid, "MINIVMM", 7), 0);
	cr_expect_eq(hdr.lapic, MINIVMM_LAPIC_BASE);
	cr_expect_eq(hdr.oemcount, ncpus + 1 + 1 + 24 + 2);
	cr_expect_eq(hdr.length, MPTABLE_CONFIG_SIZE(ncpus));
	if (ncpus <= MPTABLE_EBDA_MAX_CPUS)
		cr_assert_leq(mpf.physptr + hdr.length, 0xA0000, "ends below 640 KiB");
	else
		cr_assert_leq(mpf.physptr + hdr.length, 0x100000, "ends below 1 MiB");
	cr_expect_eq(sum_bytes(tbl, hdr.length), 0, "configuration table checksum");

	/* Walk the entries in order: CPUs, bus, IOAPIC, 24 INT, 2 local. */
	const uint8_t *p = tbl + sizeof(hdr);
	for (unsigned i = 0; i < ncpus; i++) {
		struct mpc_cpu cpu;
		memcpy(&cpu, p, sizeof(cpu));
		p += sizeof(cpu);
		cr_expect_eq(cpu.type, MP_PROCESSOR);
		cr_expect_eq(cpu.apicid, i);
		cr_expect_eq(cpu.cpuflag, MPC_CPU_ENABLED | (i == 0 ? MPC_CPU_BSP : 0),
			     "cpu %u flags 0x%x", i, cpu.cpuflag);
	}
	struct mpc_bus bus;
	memcpy(&bus, p, sizeof(bus));
	p += sizeof(bus);
	cr_expect_eq(bus.type, MP_BUS);
	cr_expect_eq(memcmp(bus.bustype, "ISA   ", 6), 0);
	struct mpc_ioapic io;
	memcpy(&io, p, sizeof(io));
	p += sizeof(io);
	cr_expect_eq(io.type, MP_IOAPIC);
	cr_expect_eq(io.apicid, ioapic_id);
	cr_expect_eq(io.apicver, ioapic_version);
	cr_expect_eq(io.flags, MPC_APIC_USABLE);
	cr_expect_eq(io.apicaddr, 0xfec00000u);
	for (unsigned irq = 0; irq < 24; irq++) {
		struct mpc_intsrc src;
		memcpy(&src, p, sizeof(src));
		p += sizeof(src);
		cr_expect_eq(src.type, MP_INTSRC);
		cr_expect_eq(src.irqtype, MP_IRQ_INT);
		cr_expect_eq(src.srcbus, bus.busid);
		cr_expect_eq(src.srcbusirq, irq);
		cr_expect_eq(src.dstapic, ioapic_id);
		cr_expect_eq(src.dstirq, irq);
	}
	struct mpc_intsrc lint0, lint1;
	memcpy(&lint0, p, sizeof(lint0));
	memcpy(&lint1, p + 8, sizeof(lint1));
	cr_expect_eq(lint0.type, MP_LINTSRC);
	cr_expect_eq(lint0.irqtype, MP_IRQ_EXTINT);
	cr_expect_eq(lint0.dstirq, 0);
	cr_expect_eq(lint1.type, MP_LINTSRC);
	cr_expect_eq(lint1.irqtype, MP_IRQ_NMI);
	cr_expect_eq(lint1.dstapic, 0xff);
	cr_expect_eq(lint1.dstirq, 1);
	cr_expect_eq((size_t)(p + 16 - tbl), hdr.length, "entries fill the table exactly");
	guest_mem_destroy(&mem);
}

ParameterizedTestParameters(mptable, checksums_and_entries_for_n_cpus)
{
	static unsigned counts[] = { 1, 2, 4, 16, MPTABLE_EBDA_MAX_CPUS, MPTABLE_EBDA_MAX_CPUS + 1,
				     MPTABLE_MAX_CPUS };
	return cr_make_param_array(unsigned, counts, sizeof(counts) / sizeof(counts[0]));
}

ParameterizedTest(unsigned *ncpus, mptable, checksums_and_entries_for_n_cpus)
{
	check_table(*ncpus, ioapic_id_for_cpus(*ncpus), 0x11);   /* KVM's in-kernel IOAPIC */
}

/* The split irqchip's IOAPIC is version 0x20: the table must say so, or a
 * Linux booted from it (acpi=off) would think there is no EOI register. */
Test(mptable, says_the_ioapic_version_it_is_given)
{
	check_table(2, 2, 0x20);
}

/* From 15 CPUs on no 4-bit ID is free: the IOAPIC takes 0 (QEMU's). */
Test(mptable, names_the_ioapic_id_it_is_given)
{
	check_table(16, 0, 0x11);
	check_table(3, 3, 0x11);
}

Test(mptable, rejects_an_ioapic_id_its_register_cannot_hold)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 2 << 20, &err), 0, "%s", err.msg);
	cr_expect_eq(mptable_write(&mem, 16, 16, 0x11, &err), -EINVAL);
	cr_expect(strstr(err.msg, "IOAPIC id 16") != NULL, "%s", err.msg);
	guest_mem_destroy(&mem);
}

Test(mptable, rejects_zero_cpus)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 2 << 20, &err), 0, "%s", err.msg);
	cr_expect_eq(mptable_write(&mem, 0, 0, 0x11, &err), -EINVAL);
	guest_mem_destroy(&mem);
}

Test(mptable, rejects_more_than_64_cpus)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 2 << 20, &err), 0, "%s", err.msg);
	cr_expect_eq(mptable_write(&mem, MPTABLE_MAX_CPUS + 1, 0, 0x11, &err), -EINVAL);
	cr_expect_str_eq(err.msg,
			 "65 vCPUs: the MP table describes 1 to 64");
	guest_mem_destroy(&mem);
}
