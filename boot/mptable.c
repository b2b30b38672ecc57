/* SPDX-License-Identifier: Apache-2.0 */
/* MP 1.4 table: processors, the ISA bus, one IOAPIC, and interrupt routing.
 *
 * Interrupt routing mirrors KVM's default GSI routing (KVM_CREATE_IRQCHIP
 * without KVM_SET_GSI_ROUTING): GSI n drives IOAPIC pin n, so ISA IRQ n is
 * listed on pin n for all 24 pins (Firecracker does the same). irqflag 0
 * means "conforms to the bus": edge-triggered, active high for ISA. The
 * 8259 PIC reaches the BSP through LINT0 as ExtINT (virtual wire) and NMIs
 * reach every CPU through LINT1. */
#include "boot/mptable.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "boot/boot.h"
#include "minivmm_abi.h"

_Static_assert(sizeof(struct mpf_intel) == 16, "MP floating pointer is 16 bytes");
_Static_assert(sizeof(struct mpc_table) == 44, "MP table header is 44 bytes");
_Static_assert(sizeof(struct mpc_cpu) == 20, "MP processor entry is 20 bytes");
_Static_assert(sizeof(struct mpc_bus) == 8 && sizeof(struct mpc_ioapic) == 8 &&
	       sizeof(struct mpc_intsrc) == 8, "MP bus/IOAPIC/interrupt entries are 8 bytes");
#define EBDA_END 0xA0000ULL
_Static_assert(BOOT_MPTABLE_ADDR + sizeof(struct mpf_intel) +
	       MPTABLE_CONFIG_SIZE(MPTABLE_EBDA_MAX_CPUS) <= EBDA_END &&
	       BOOT_MPTABLE_ADDR + sizeof(struct mpf_intel) +
	       MPTABLE_CONFIG_SIZE(MPTABLE_EBDA_MAX_CPUS + 1) > EBDA_END,
	       "MPTABLE_EBDA_MAX_CPUS is the largest count whose table fits in the EBDA");
_Static_assert(BOOT_MPTABLE_HIGH_ADDR >= BOOT_BIOS_START &&
	       BOOT_MPTABLE_HIGH_ADDR + MPTABLE_CONFIG_SIZE(MPTABLE_MAX_CPUS) <= BOOT_KERNEL_MIN,
	       "the big table fits in the reserved BIOS area");

/* CPUID signature family 6 and features FPU | APIC, as Firecracker reports;
 * Linux only uses these for display. */
#define MPTABLE_CPU_SIGNATURE 0x600
#define MPTABLE_CPU_FEATURES  ((1u << 0) | (1u << 9))

static uint8_t mp_checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += p[i];
	return (uint8_t)-sum;
}

int mptable_write(const struct guest_mem *mem, unsigned ncpus, unsigned ioapic_id,
		  unsigned ioapic_version, struct vmm_err *err)
{
	if (ncpus == 0 || ncpus > MPTABLE_MAX_CPUS)
		return vmm_err_set(err, EINVAL,
				   "%u vCPUs: the MP table describes 1 to %u",
				   ncpus, MPTABLE_MAX_CPUS);
	if (ioapic_id > MPTABLE_IOAPIC_MAX_ID)
		return vmm_err_set(err, EINVAL, "IOAPIC id %u: its register holds 0 to %u",
				   ioapic_id, MPTABLE_IOAPIC_MAX_ID);

	size_t size = MPTABLE_CONFIG_SIZE(ncpus);
	uint64_t table_addr = BOOT_MPTABLE_ADDR + sizeof(struct mpf_intel);
	if (table_addr + size > EBDA_END)
		table_addr = BOOT_MPTABLE_HIGH_ADDR;
	uint8_t *mpf_host = guest_mem_ptr(mem, BOOT_MPTABLE_ADDR, sizeof(struct mpf_intel));
	uint8_t *table_host = guest_mem_ptr(mem, table_addr, size);
	if (!mpf_host || !table_host)
		return vmm_err_set(err, EFAULT, "MP table at 0x%llx is outside guest RAM",
				   (unsigned long long)table_addr);

	/* Built in host buffers, then copied: guest memory stays untouched on error. */
	uint8_t mpf_buf[sizeof(struct mpf_intel)];
	struct mpf_intel mpf = {
		.signature = { '_', 'M', 'P', '_' },
		.physptr = (uint32_t)table_addr,
		.length = 1,
		.specification = 4,
	};
	memcpy(mpf_buf, &mpf, sizeof(mpf));
	mpf_buf[offsetof(struct mpf_intel, checksum)] = mp_checksum(mpf_buf, sizeof(mpf));

	uint8_t table[MPTABLE_CONFIG_SIZE(MPTABLE_MAX_CPUS)];
	memset(table, 0, sizeof(table));
	size_t off = sizeof(struct mpc_table);
	uint16_t count = 0;
#define MP_PUT(entry) do { memcpy(table + off, &(entry), sizeof(entry)); \
			   off += sizeof(entry); count++; } while (0)

	for (unsigned i = 0; i < ncpus; i++) {
		struct mpc_cpu cpu = {
			.type = MP_PROCESSOR,
			.apicid = (uint8_t)i,
			.apicver = MPTABLE_LAPIC_VERSION,
			.cpuflag = MPC_CPU_ENABLED | (i == 0 ? MPC_CPU_BSP : 0),
			.cpufeature = MPTABLE_CPU_SIGNATURE,
			.featureflag = MPTABLE_CPU_FEATURES,
		};
		MP_PUT(cpu);
	}
	struct mpc_bus bus = { .type = MP_BUS, .busid = MPTABLE_ISA_BUS_ID,
			       .bustype = { 'I', 'S', 'A', ' ', ' ', ' ' } };
	MP_PUT(bus);
	struct mpc_ioapic ioapic = { .type = MP_IOAPIC, .apicid = (uint8_t)ioapic_id,
				     .apicver = (uint8_t)ioapic_version,
				     .flags = MPC_APIC_USABLE,
				     .apicaddr = (uint32_t)MINIVMM_IOAPIC_BASE };
	MP_PUT(ioapic);
	for (uint8_t irq = 0; irq < MPTABLE_IOAPIC_PINS; irq++) {
		struct mpc_intsrc src = { .type = MP_INTSRC, .irqtype = MP_IRQ_INT,
					  .srcbus = MPTABLE_ISA_BUS_ID, .srcbusirq = irq,
					  .dstapic = (uint8_t)ioapic_id, .dstirq = irq };
		MP_PUT(src);
	}
	struct mpc_intsrc extint = { .type = MP_LINTSRC, .irqtype = MP_IRQ_EXTINT,
				     .srcbus = MPTABLE_ISA_BUS_ID, .dstapic = 0, .dstirq = 0 };
	MP_PUT(extint);
	struct mpc_intsrc nmi = { .type = MP_LINTSRC, .irqtype = MP_IRQ_NMI,
				  .srcbus = MPTABLE_ISA_BUS_ID, .dstapic = 0xff, .dstirq = 1 };
	MP_PUT(nmi);
#undef MP_PUT
	/* Invariant: the entries written are exactly what MPTABLE_CONFIG_SIZE counts. */
	assert(off == size);

	struct mpc_table hdr = {
		.signature = { 'P', 'C', 'M', 'P' },
		.length = (uint16_t)off,
		.spec = 4,
		.oem = { 'M', 'I', 'N', 'I', 'V', 'M', 'M', ' ' },
		.productid = { 'M', 'I', 'N', 'I', 'V', 'M', 'M', ' ', ' ', ' ', ' ', ' ' },
		.oemcount = count,
		.lapic = (uint32_t)MINIVMM_LAPIC_BASE,
	};
	memcpy(table, &hdr, sizeof(hdr));
	table[offsetof(struct mpc_table, checksum)] = mp_checksum(table, off);

	memcpy(mpf_host, mpf_buf, sizeof(mpf_buf));
	memcpy(table_host, table, size);
	return 0;
}
