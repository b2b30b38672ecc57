/* SPDX-License-Identifier: Apache-2.0 */
/* ACPI tables: how a guest with ACPI finds its CPUs, interrupt controllers,
 * virtio-mmio devices, COM1 and the pvpanic port, and how it powers off.
 *
 * minivmm is a hardware-reduced ACPI platform (no PM1 blocks, no SCI, no
 * GPEs): the FADT points at a sleep control/status register pair on an I/O
 * port (devices/acpi_pm.c) and the DSDT's \_S5 gives the value that powers
 * off. All tables live in [ACPI_TABLES_ADDR, ACPI_TABLES_END), the BIOS
 * area below the MP table's 0xF0000; the RSDP is the first 36 bytes there,
 * so a guest scanning 0xE0000-0xFFFFF finds it, and its address is also
 * passed through the boot protocol (boot_request.rsdp_addr).
 *
 *   RSDP (rev 2) -> XSDT -> FADT (rev 6, HW_REDUCED_ACPI) -> DSDT
 *                        -> MADT (LAPICs, IOAPIC, LINT1 NMI) */
#ifndef MINIVMM_BOOT_ACPI_H
#define MINIVMM_BOOT_ACPI_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/guest_mem.h"

#define ACPI_TABLES_ADDR   0xE0000ULL   /* RSDP here, the other tables after it */
#define ACPI_TABLES_END    0xF0000ULL   /* BOOT_BIOS_START: MP table territory */

#define ACPI_MAX_CPUS          254      /* 8-bit APIC ids, 0xff the broadcast one */
#define ACPI_MAX_VIRTIO_MMIO   8
#define ACPI_IOAPIC_PINS       24       /* KVM's IOAPIC: GSI n is pin n */
#define ACPI_S5_SLP_TYP        5        /* \_S5 value; acpi_pm.c waits for it */

#define ACPI_OEM_ID        "MINIVM"     /* 6 characters */
#define ACPI_OEM_TABLE_ID  "MINIVMM "   /* 8 characters */
#define ACPI_CREATOR_ID    "MVMM"

struct acpi_virtio_mmio {
	uint64_t base;   /* 4 KiB-aligned window below 4 GiB */
	uint32_t size;
	unsigned gsi;    /* IOAPIC pin, edge-triggered, active high */
};

struct acpi_config {
	unsigned ncpus;                      /* APIC ids 0..ncpus-1, CPU 0 the BSP */
	unsigned ioapic_id;                  /* what the IOAPIC's ID register reads */
	struct acpi_virtio_mmio virtio_mmio[ACPI_MAX_VIRTIO_MMIO];
	unsigned nr_virtio_mmio;             /* device k: \_SB.VRkk, _UID k */
	uint16_t pm_sleep_port;              /* sleep control; sleep status at +1 */
	uint16_t pvpanic_port;               /* \_SB.PEVT, QEMU's pvpanic (1 port); 0: none */
	bool no_8259;                        /* split irqchip: no PC-AT 8259 pair */
};

/* ---- Table layouts (ACPI 6.x chapter 5), shared with the unit tests ---- */

struct acpi_rsdp {
	char signature[8];        /* "RSD PTR " */
	uint8_t checksum;         /* first 20 bytes sum to 0 */
	char oem_id[6];
	uint8_t revision;         /* 2: ACPI 2.0+ with XSDT */
	uint32_t rsdt_address;    /* 0: no RSDT */
	uint32_t length;          /* 36 */
	uint64_t xsdt_address;
	uint8_t extended_checksum;/* all 36 bytes sum to 0 */
	uint8_t reserved[3];
} __attribute__((packed));

struct acpi_header {
	char signature[4];
	uint32_t length;          /* whole table, header included */
	uint8_t revision;
	uint8_t checksum;         /* whole table sums to 0 */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	char creator_id[4];
	uint32_t creator_revision;
} __attribute__((packed));

struct acpi_gas {             /* Generic Address Structure */
	uint8_t space_id;         /* ACPI_GAS_SYSTEM_IO */
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;      /* ACPI_GAS_ACCESS_BYTE */
	uint64_t address;
} __attribute__((packed));

#define ACPI_GAS_SYSTEM_IO    1
#define ACPI_GAS_ACCESS_BYTE  1

struct acpi_fadt {            /* revision 6: 276 bytes */
	struct acpi_header h;     /* "FACP" */
	uint32_t firmware_ctrl;
	uint32_t dsdt;
	uint8_t reserved0;
	uint8_t preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;
	uint8_t acpi_enable, acpi_disable, s4bios_req, pstate_cnt;
	uint32_t pm1a_evt_blk, pm1b_evt_blk, pm1a_cnt_blk, pm1b_cnt_blk;
	uint32_t pm2_cnt_blk, pm_tmr_blk, gpe0_blk, gpe1_blk;
	uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len;
	uint8_t gpe0_blk_len, gpe1_blk_len, gpe1_base, cst_cnt;
	uint16_t p_lvl2_lat, p_lvl3_lat, flush_size, flush_stride;
	uint8_t duty_offset, duty_width, day_alrm, mon_alrm, century;
	uint16_t iapc_boot_arch;
	uint8_t reserved1;
	uint32_t flags;
	struct acpi_gas reset_reg;
	uint8_t reset_value;
	uint16_t arm_boot_arch;
	uint8_t minor_version;
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;
	struct acpi_gas x_pm1a_evt_blk, x_pm1b_evt_blk, x_pm1a_cnt_blk, x_pm1b_cnt_blk;
	struct acpi_gas x_pm2_cnt_blk, x_pm_tmr_blk, x_gpe0_blk, x_gpe1_blk;
	struct acpi_gas sleep_control_reg;
	struct acpi_gas sleep_status_reg;
	uint64_t hypervisor_vendor_id;
} __attribute__((packed));

#define ACPI_FADT_HW_REDUCED        (1u << 20)
#define ACPI_FADT_BOOT_8042         (1u << 1)   /* iapc_boot_arch bits */
#define ACPI_FADT_BOOT_NO_VGA       (1u << 2)
#define ACPI_FADT_BOOT_NO_MSI       (1u << 3)
#define ACPI_FADT_BOOT_NO_CMOS_RTC  (1u << 5)

struct acpi_madt {
	struct acpi_header h;     /* "APIC" */
	uint32_t lapic_address;
	uint32_t flags;           /* ACPI_MADT_PCAT_COMPAT */
} __attribute__((packed));

#define ACPI_MADT_PCAT_COMPAT 1u

enum acpi_madt_type {
	ACPI_MADT_LAPIC = 0,
	ACPI_MADT_IOAPIC = 1,
	ACPI_MADT_INT_OVERRIDE = 2,
	ACPI_MADT_LAPIC_NMI = 4,
};

struct acpi_madt_lapic {
	uint8_t type, length;     /* 0, 8 */
	uint8_t processor_uid;
	uint8_t apic_id;
	uint32_t flags;           /* ACPI_MADT_ENABLED */
} __attribute__((packed));

#define ACPI_MADT_ENABLED 1u

struct acpi_madt_ioapic {
	uint8_t type, length;     /* 1, 12 */
	uint8_t ioapic_id;
	uint8_t reserved;
	uint32_t address;
	uint32_t gsi_base;
} __attribute__((packed));

struct acpi_madt_lapic_nmi {
	uint8_t type, length;     /* 4, 6 */
	uint8_t processor_uid;    /* 0xff: all processors */
	uint16_t flags;           /* 0: conforms to the bus (edge, high) */
	uint8_t lint;
} __attribute__((packed));

/* MADT entries: one per CPU, then the IOAPIC and the LINT1 NMI. */
#define ACPI_MADT_ENTRIES(ncpus) ((ncpus) + 2)

/* Build every table in a host buffer, then copy it to ACPI_TABLES_ADDR
 * (guest memory stays untouched on error) and store the RSDP's
 * guest-physical address in *rsdp_addr. Fails with EINVAL for a config the
 * tables cannot describe (0 or too many CPUs or devices, a window above
 * 4 GiB, a GSI beyond the IOAPIC, port 0), EFAULT if the area is not RAM. */
int acpi_write_tables(const struct guest_mem *mem, const struct acpi_config *cfg,
		      uint64_t *rsdp_addr, struct vmm_err *err);

#endif
