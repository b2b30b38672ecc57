/* SPDX-License-Identifier: Apache-2.0 */
/* ACPI tables for a hardware-reduced x86 microVM (layout: ACPI 6.x ch. 5).
 *
 * Interrupt routing mirrors KVM's default GSI routing, as the MP table does:
 * GSI n drives IOAPIC pin n, so no Interrupt Source Override is needed (the
 * PIT's IRQ 0 is pin 0, not pin 2 as on a PC chipset). A hardware-reduced
 * Linux does not use the PIT or the 8259s anyway (it bypasses the legacy PIC
 * and skips the PIT clockevent), and maps every GSI, ISA or not, from the
 * _CRS of the device using it: COM1's IRQNoFlags(4) and the virtio-mmio
 * windows' Interrupt(Edge, ActiveHigh) resources. */
#include "boot/acpi.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "boot/aml.h"
#include "minivmm_abi.h"

_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP is 36 bytes");
_Static_assert(sizeof(struct acpi_header) == 36, "table header is 36 bytes");
_Static_assert(sizeof(struct acpi_gas) == 12, "generic address is 12 bytes");
_Static_assert(offsetof(struct acpi_fadt, flags) == 112, "FADT flags at 112");
_Static_assert(offsetof(struct acpi_fadt, x_dsdt) == 140, "FADT X_DSDT at 140");
_Static_assert(offsetof(struct acpi_fadt, sleep_control_reg) == 244, "FADT sleep control at 244");
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT revision 6 is 276 bytes");
_Static_assert(sizeof(struct acpi_madt) == 44, "MADT header is 44 bytes");
_Static_assert(sizeof(struct acpi_madt_lapic) == 8 && sizeof(struct acpi_madt_ioapic) == 12 &&
	       sizeof(struct acpi_madt_lapic_nmi) == 6, "MADT entry sizes");

#define ACPI_FADT_REVISION   6
#define ACPI_FADT_MINOR      0
#define ACPI_MADT_REVISION   5
#define ACPI_DSDT_REVISION   2    /* 64-bit integers */
#define ACPI_XSDT_REVISION   1
#define ACPI_CREATOR_REVISION 1

/* Everything fits in a few KiB: 254 CPUs make a 2 KiB MADT, 8 devices a
 * DSDT under 1 KiB. */
#define ACPI_BUILD_MAX     8192
#define ACPI_DSDT_AML_MAX  2048
_Static_assert(16 + sizeof(struct acpi_rsdp) + sizeof(struct acpi_header) + ACPI_DSDT_AML_MAX +
	       16 + sizeof(struct acpi_fadt) + 16 + sizeof(struct acpi_madt) +
	       ACPI_MAX_CPUS * sizeof(struct acpi_madt_lapic) + sizeof(struct acpi_madt_ioapic) +
	       sizeof(struct acpi_madt_lapic_nmi) + 16 + sizeof(struct acpi_header) + 16 <=
	       ACPI_BUILD_MAX, "the largest table set fits the build buffer");
_Static_assert(ACPI_TABLES_ADDR + ACPI_BUILD_MAX <= ACPI_TABLES_END, "tables fit their area");
_Static_assert(ACPI_TABLES_ADDR % 16 == 0, "RSDP on a 16-byte boundary");

static uint8_t acpi_checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += p[i];
	return (uint8_t)-sum;
}

/* A table being assembled in the host buffer at offset `off`. */
struct acpi_builder {
	uint8_t *buf;
	size_t len;    /* bytes used, always a multiple of 16 between tables */
};

static size_t acpi_align(struct acpi_builder *b)
{
	b->len = (b->len + 15) & ~(size_t)15;
	return b->len;
}

static uint64_t acpi_gpa(size_t off)
{
	return ACPI_TABLES_ADDR + off;
}

static void acpi_header_init(struct acpi_header *h, const char sig[4], uint32_t length,
			     uint8_t revision)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->signature, sig, 4);
	h->length = length;
	h->revision = revision;
	memcpy(h->oem_id, ACPI_OEM_ID, 6);
	memcpy(h->oem_table_id, ACPI_OEM_TABLE_ID, 8);
	h->oem_revision = 1;
	memcpy(h->creator_id, ACPI_CREATOR_ID, 4);
	h->creator_revision = ACPI_CREATOR_REVISION;
}

/* Fill in the checksum of the table at `off` whose header says its length. */
static void acpi_finish_table(struct acpi_builder *b, size_t off)
{
	struct acpi_header h;
	memcpy(&h, b->buf + off, sizeof(h));
	/* Invariant: every table was written whole inside the buffer. */
	assert(off + h.length <= b->len);
	b->buf[off + offsetof(struct acpi_header, checksum)] = acpi_checksum(b->buf + off, h.length);
}

static void acpi_put(struct acpi_builder *b, const void *p, size_t n)
{
	assert(b->len + n <= ACPI_BUILD_MAX);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/* ---- DSDT ------------------------------------------------------------- */

static void dsdt_com1(struct aml_buf *a)
{
	size_t dev = aml_device_open(a, "COM1");
	aml_name(a, "_HID");
	aml_eisaid(a, "PNP0501");
	aml_name(a, "_UID");
	aml_integer(a, 1);
	aml_name(a, "_CRS");
	size_t crs = aml_resource_template_open(a);
	aml_res_io(a, MINIVMM_PORT_COM1, 8);
	aml_res_irq_noflags(a, MINIVMM_IRQ_COM1);
	aml_resource_template_close(a, crs);
	aml_pkg_close(a, dev);
}

static void dsdt_virtio_mmio(struct aml_buf *a, unsigned k, const struct acpi_virtio_mmio *v)
{
	char name[5] = { 'V', 'R', (char)('0' + k / 10), (char)('0' + k % 10), 0 };
	size_t dev = aml_device_open(a, name);
	aml_name(a, "_HID");
	aml_string(a, "LNRO0005");   /* Linux's virtio_mmio ACPI match */
	aml_name(a, "_UID");
	aml_integer(a, k);
	aml_name(a, "_CRS");
	size_t crs = aml_resource_template_open(a);
	aml_res_memory32_fixed(a, (uint32_t)v->base, v->size, true);
	aml_res_interrupt(a, v->gsi, true, false);
	aml_resource_template_close(a, crs);
	aml_pkg_close(a, dev);
}

/* QEMU's ISA pvpanic as QEMU describes it (PEVT, "QEMU0001"): Linux's
 * pvpanic-mmio driver matches the _HID and maps the I/O resource. */
static void dsdt_pvpanic(struct aml_buf *a, uint16_t port)
{
	size_t dev = aml_device_open(a, "PEVT");
	aml_name(a, "_HID");
	aml_string(a, "QEMU0001");
	aml_name(a, "_CRS");
	size_t crs = aml_resource_template_open(a);
	aml_res_io(a, port, 1);
	aml_resource_template_close(a, crs);
	aml_pkg_close(a, dev);
}

/* DSDT body: \_S5 (SLP_TYP for the sleep control register, twice for the
 * historical PM1a/PM1b pair, then two reserved zeros) and \_SB with COM1,
 * one LNRO0005 device per virtio-mmio window and the pvpanic port. */
static int dsdt_build(const struct acpi_config *cfg, uint8_t *out, size_t cap, size_t *len,
		      struct vmm_err *err)
{
	struct aml_buf a;
	aml_init(&a, out, cap);
	aml_name(&a, "_S5");
	size_t pkg = aml_package_open(&a, 4);
	aml_integer(&a, ACPI_S5_SLP_TYP);
	aml_integer(&a, ACPI_S5_SLP_TYP);
	aml_integer(&a, 0);
	aml_integer(&a, 0);
	aml_pkg_close(&a, pkg);

	size_t sb = aml_scope_open(&a, "\\_SB");
	dsdt_com1(&a);
	for (unsigned k = 0; k < cfg->nr_virtio_mmio; k++)
		dsdt_virtio_mmio(&a, k, &cfg->virtio_mmio[k]);
	if (cfg->pvpanic_port)
		dsdt_pvpanic(&a, cfg->pvpanic_port);
	aml_pkg_close(&a, sb);
	if (a.failed)
		return vmm_err_set(err, ENOSPC, "ACPI DSDT: AML does not fit in %zu bytes", cap);
	*len = a.len;
	return 0;
}

/* ---- Fixed tables ----------------------------------------------------- */

static struct acpi_gas pm_register(uint16_t port)
{
	return (struct acpi_gas){ .space_id = ACPI_GAS_SYSTEM_IO, .bit_width = 8,
				  .access_size = ACPI_GAS_ACCESS_BYTE, .address = port };
}

static void fadt_build(struct acpi_builder *b, const struct acpi_config *cfg, uint64_t dsdt)
{
	size_t off = acpi_align(b);
	struct acpi_fadt f;
	memset(&f, 0, sizeof(f));
	acpi_header_init(&f.h, "FACP", sizeof(f), ACPI_FADT_REVISION);
	f.minor_version = ACPI_FADT_MINOR;
	/* No FACS: optional on hardware-reduced platforms. */
	f.dsdt = (uint32_t)dsdt;
	f.x_dsdt = dsdt;
	f.flags = ACPI_FADT_HW_REDUCED;
	/* No keyboard controller is announced: minivmm's i8042 only
	 * implements the reset line (Linux reboot=k writes it regardless),
	 * and announcing it makes a distribution kernel probe it for ~1 s.
	 * No VGA, no MSI, no CMOS RTC either. */
	f.iapc_boot_arch = ACPI_FADT_BOOT_NO_VGA | ACPI_FADT_BOOT_NO_MSI |
			   ACPI_FADT_BOOT_NO_CMOS_RTC;
	f.sleep_control_reg = pm_register(cfg->pm_sleep_port);
	f.sleep_status_reg = pm_register((uint16_t)(cfg->pm_sleep_port + 1));
	acpi_put(b, &f, sizeof(f));
	acpi_finish_table(b, off);
}

static void madt_build(struct acpi_builder *b, const struct acpi_config *cfg)
{
	size_t off = acpi_align(b);
	size_t len = sizeof(struct acpi_madt) + cfg->ncpus * sizeof(struct acpi_madt_lapic) +
		     sizeof(struct acpi_madt_ioapic) + sizeof(struct acpi_madt_lapic_nmi);
	struct acpi_madt m;
	acpi_header_init(&m.h, "APIC", (uint32_t)len, ACPI_MADT_REVISION);
	m.lapic_address = (uint32_t)MINIVMM_LAPIC_BASE;
	/* KVM's full irqchip has the two 8259s; a split one has none. */
	m.flags = cfg->no_8259 ? 0 : ACPI_MADT_PCAT_COMPAT;
	acpi_put(b, &m, sizeof(m));
	for (unsigned i = 0; i < cfg->ncpus; i++) {
		struct acpi_madt_lapic l = { .type = ACPI_MADT_LAPIC, .length = sizeof(l),
					     .processor_uid = (uint8_t)i, .apic_id = (uint8_t)i,
					     .flags = ACPI_MADT_ENABLED };
		acpi_put(b, &l, sizeof(l));
	}
	/* The IOAPIC's own ID (its register and the MP table say the same). */
	struct acpi_madt_ioapic io = { .type = ACPI_MADT_IOAPIC, .length = sizeof(io),
				       .ioapic_id = (uint8_t)cfg->ioapic_id,
				       .address = (uint32_t)MINIVMM_IOAPIC_BASE, .gsi_base = 0 };
	acpi_put(b, &io, sizeof(io));
	struct acpi_madt_lapic_nmi nmi = { .type = ACPI_MADT_LAPIC_NMI, .length = sizeof(nmi),
					   .processor_uid = 0xff, .flags = 0, .lint = 1 };
	acpi_put(b, &nmi, sizeof(nmi));
	/* Invariant: the entries written are exactly what len counts. */
	assert(b->len - off == len);
	acpi_finish_table(b, off);
}

static int acpi_check_config(const struct acpi_config *cfg, struct vmm_err *err)
{
	if (cfg->ncpus == 0 || cfg->ncpus > ACPI_MAX_CPUS)
		return vmm_err_set(err, EINVAL, "%u vCPUs: the ACPI tables describe 1 to %u",
				   cfg->ncpus, ACPI_MAX_CPUS);
	if (cfg->nr_virtio_mmio > ACPI_MAX_VIRTIO_MMIO)
		return vmm_err_set(err, EINVAL, "%u virtio-mmio devices: the DSDT describes at most %u",
				   cfg->nr_virtio_mmio, ACPI_MAX_VIRTIO_MMIO);
	for (unsigned k = 0; k < cfg->nr_virtio_mmio; k++) {
		const struct acpi_virtio_mmio *v = &cfg->virtio_mmio[k];
		if (v->size == 0 || v->base > 0xffffffffULL || v->size - 1 > 0xffffffffULL - v->base)
			return vmm_err_set(err, EINVAL,
					   "virtio-mmio %u: window 0x%llx+0x%x is not a 32-bit range",
					   k, (unsigned long long)v->base, v->size);
		if (v->gsi >= ACPI_IOAPIC_PINS || v->gsi == MINIVMM_IRQ_COM1)
			return vmm_err_set(err, EINVAL,
					   "virtio-mmio %u: GSI %u is not a free IOAPIC pin", k, v->gsi);
	}
	if (cfg->pm_sleep_port == 0 || cfg->pm_sleep_port == 0xffff)
		return vmm_err_set(err, EINVAL, "ACPI sleep registers need two ports, not at 0x%x",
				   cfg->pm_sleep_port);
	if (cfg->pvpanic_port && (cfg->pvpanic_port == cfg->pm_sleep_port ||
				  cfg->pvpanic_port == cfg->pm_sleep_port + 1))
		return vmm_err_set(err, EINVAL, "pvpanic port 0x%x is one of the ACPI sleep registers",
				   cfg->pvpanic_port);
	return 0;
}

int acpi_write_tables(const struct guest_mem *mem, const struct acpi_config *cfg,
		      uint64_t *rsdp_addr, struct vmm_err *err)
{
	int rc = acpi_check_config(cfg, err);
	if (rc)
		return rc;

	uint8_t buf[ACPI_BUILD_MAX];
	memset(buf, 0, sizeof(buf));
	struct acpi_builder b = { .buf = buf, .len = sizeof(struct acpi_rsdp) };

	/* DSDT first: the FADT needs its address. */
	size_t dsdt_off = acpi_align(&b);
	size_t aml_len = 0;
	rc = dsdt_build(cfg, buf + dsdt_off + sizeof(struct acpi_header),
			ACPI_DSDT_AML_MAX, &aml_len, err);
	if (rc)
		return rc;
	struct acpi_header dh;
	acpi_header_init(&dh, "DSDT", (uint32_t)(sizeof(dh) + aml_len), ACPI_DSDT_REVISION);
	acpi_put(&b, &dh, sizeof(dh));
	b.len += aml_len;
	acpi_finish_table(&b, dsdt_off);

	size_t fadt_off = acpi_align(&b);
	fadt_build(&b, cfg, acpi_gpa(dsdt_off));
	size_t madt_off = acpi_align(&b);
	madt_build(&b, cfg);

	size_t xsdt_off = acpi_align(&b);
	struct acpi_header xh;
	acpi_header_init(&xh, "XSDT", sizeof(xh) + 2 * sizeof(uint64_t), ACPI_XSDT_REVISION);
	acpi_put(&b, &xh, sizeof(xh));
	uint64_t entries[2] = { acpi_gpa(fadt_off), acpi_gpa(madt_off) };
	acpi_put(&b, entries, sizeof(entries));
	acpi_finish_table(&b, xsdt_off);

	struct acpi_rsdp r = {
		.signature = { 'R', 'S', 'D', ' ', 'P', 'T', 'R', ' ' },
		.revision = 2,
		.length = sizeof(r),
		.xsdt_address = acpi_gpa(xsdt_off),
	};
	memcpy(r.oem_id, ACPI_OEM_ID, 6);
	memcpy(buf, &r, sizeof(r));
	buf[offsetof(struct acpi_rsdp, checksum)] = acpi_checksum(buf, 20);
	buf[offsetof(struct acpi_rsdp, extended_checksum)] = acpi_checksum(buf, sizeof(r));

	uint8_t *host = guest_mem_ptr(mem, ACPI_TABLES_ADDR, b.len);
	if (!host)
		return vmm_err_set(err, EFAULT, "ACPI tables at 0x%llx are outside guest RAM",
				   (unsigned long long)ACPI_TABLES_ADDR);
	memcpy(host, buf, b.len);
	*rsdp_addr = ACPI_TABLES_ADDR;
	return 0;
}
