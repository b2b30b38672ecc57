/* SPDX-License-Identifier: Apache-2.0 */
/* Intel MultiProcessor Specification 1.4 tables: how a guest without ACPI
 * finds its CPUs, its IOAPIC and how ISA interrupts reach the IOAPIC.
 *
 * The 16-byte floating pointer "_MP_" goes at BOOT_MPTABLE_ADDR (the last KiB
 * of base memory, reserved in the e820 map), where Linux's smp_scan_config()
 * looks. The "PCMP" configuration table follows it directly when it fits
 * below 0xA0000 (up to MPTABLE_EBDA_MAX_CPUS vCPUs); a bigger table goes to
 * BOOT_MPTABLE_HIGH_ADDR in the reserved BIOS area instead. */
#ifndef MINIVMM_BOOT_MPTABLE_H
#define MINIVMM_BOOT_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/guest_mem.h"

/* MP 1.4 structures (layout from the spec; Linux names them alike). */
struct mpf_intel {            /* floating pointer */
	char signature[4];        /* "_MP_" */
	uint32_t physptr;         /* configuration table address */
	uint8_t length;           /* in 16-byte paragraphs: 1 */
	uint8_t specification;    /* 4 = revision 1.4 */
	uint8_t checksum;         /* all 16 bytes sum to 0 */
	uint8_t feature1;         /* 0: a configuration table is present */
	uint8_t feature2;         /* bit 7 IMCR; 0: virtual wire mode */
	uint8_t feature3[3];
} __attribute__((packed));

struct mpc_table {            /* configuration table header */
	char signature[4];        /* "PCMP" */
	uint16_t length;          /* header + entries */
	uint8_t spec;             /* 4 */
	uint8_t checksum;         /* base table sums to 0 */
	char oem[8];
	char productid[12];
	uint32_t oemptr;
	uint16_t oemsize;
	uint16_t oemcount;        /* number of entries */
	uint32_t lapic;           /* local APIC address */
	uint16_t ext_length;
	uint8_t ext_checksum;
	uint8_t reserved;
} __attribute__((packed));

enum mpc_entry_type { MP_PROCESSOR = 0, MP_BUS = 1, MP_IOAPIC = 2, MP_INTSRC = 3, MP_LINTSRC = 4 };

struct mpc_cpu {
	uint8_t type;             /* MP_PROCESSOR */
	uint8_t apicid;
	uint8_t apicver;
	uint8_t cpuflag;          /* MPC_CPU_ENABLED | MPC_CPU_BSP */
	uint32_t cpufeature;      /* CPUID signature (family/model/stepping) */
	uint32_t featureflag;     /* CPUID.1:EDX */
	uint32_t reserved[2];
} __attribute__((packed));

struct mpc_bus {
	uint8_t type;             /* MP_BUS */
	uint8_t busid;
	char bustype[6];          /* "ISA   " */
} __attribute__((packed));

struct mpc_ioapic {
	uint8_t type;             /* MP_IOAPIC */
	uint8_t apicid;
	uint8_t apicver;
	uint8_t flags;            /* MPC_APIC_USABLE */
	uint32_t apicaddr;
} __attribute__((packed));

struct mpc_intsrc {           /* also used for MP_LINTSRC: same layout */
	uint8_t type;             /* MP_INTSRC or MP_LINTSRC */
	uint8_t irqtype;          /* MP_IRQ_INT, MP_IRQ_NMI, MP_IRQ_EXTINT */
	uint16_t irqflag;         /* 0: polarity and trigger conform to the bus */
	uint8_t srcbus;
	uint8_t srcbusirq;
	uint8_t dstapic;          /* IOAPIC id, or local APIC id (0xff: all) */
	uint8_t dstirq;           /* IOAPIC pin, or LINTn */
} __attribute__((packed));

#define MPC_CPU_ENABLED   0x01
#define MPC_CPU_BSP       0x02
#define MPC_APIC_USABLE   0x01
#define MP_IRQ_INT        0
#define MP_IRQ_NMI        1
#define MP_IRQ_EXTINT     3

#define MPTABLE_ISA_BUS_ID     0
#define MPTABLE_IOAPIC_PINS    24     /* ISA IRQ n -> IOAPIC pin n, n < 24 */
#define MPTABLE_LAPIC_VERSION  0x14

/* Bytes of the configuration table (header and entries) for ncpus CPUs. */
#define MPTABLE_CONFIG_SIZE(ncpus)                                            \
	(sizeof(struct mpc_table) + (size_t)(ncpus) * sizeof(struct mpc_cpu) + \
	 sizeof(struct mpc_bus) + sizeof(struct mpc_ioapic) +                  \
	 (MPTABLE_IOAPIC_PINS + 2) * sizeof(struct mpc_intsrc))

/* The EBDA KiB at 0x9FC00 holds the floating pointer, 268 bytes of fixed
 * table and 20 bytes per CPU: 37 CPUs fill it. */
#define MPTABLE_EBDA_MAX_CPUS 37
/* APIC ids are 8 bits; 64 is minivmm's limit (MINIVMM_MAX_CPUS). */
#define MPTABLE_MAX_CPUS 64
/* An IOAPIC's ID register has 4 bits. */
#define MPTABLE_IOAPIC_MAX_ID 0xf

/* Write the floating pointer and configuration table for ncpus CPUs (APIC ids
 * 0..ncpus-1, CPU 0 the BSP) and one IOAPIC whose ID and version registers
 * read ioapic_id and ioapic_version. Fails with EINVAL when ncpus is 0 or
 * above MPTABLE_MAX_CPUS, or ioapic_id is not a 4-bit ID. */
int mptable_write(const struct guest_mem *mem, unsigned ncpus, unsigned ioapic_id,
		  unsigned ioapic_version, struct vmm_err *err);

#endif
