/* SPDX-License-Identifier: Apache-2.0 */
/* ACPI tables: where they are, checksums, what each table says (read back
 * both by hand and through ACPICA's disassembler, iasl -d), the AML writer's
 * encodings, and the sleep-control device that powers the VM off. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/acpi.h"
#include "boot/aml.h"
#include "boot/boot.h"
#include "boot/mptable.h"
#include "devices/acpi_pm.h"
#include "devices/ioapic.h"
#include "minivmm_abi.h"

/* ---- helpers ------------------------------------------------------------ */

static uint8_t sum_bytes(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += p[i];
	return sum;
}

/* ncpus CPUs, ndev virtio-mmio windows and the pvpanic port laid out as
 * minivmm does. */
static struct acpi_config config(unsigned ncpus, unsigned ndev)
{
	struct acpi_config c = { .ncpus = ncpus, .ioapic_id = ioapic_id_for_cpus(ncpus), .nr_virtio_mmio = ndev,
				 .pm_sleep_port = ACPI_PM_PORT, .pvpanic_port = MINIVMM_PORT_PVPANIC };
	for (unsigned k = 0; k < ndev; k++)
		c.virtio_mmio[k] = (struct acpi_virtio_mmio){
			.base = MINIVMM_MMIO_BASE + k * MINIVMM_MMIO_WINDOW,
			.size = MINIVMM_MMIO_WINDOW, .gsi = MINIVMM_VIRTIO_IRQ_BASE + k };
	return c;
}

struct tables {
	struct guest_mem mem;
	uint64_t rsdp_addr;
	struct acpi_rsdp rsdp;
	const uint8_t *xsdt, *fadt, *madt, *dsdt;
	uint64_t fadt_addr, madt_addr, dsdt_addr;
};

/* The table at gpa, checked to lie whole in the ACPI area. */
static const uint8_t *table_at(const struct guest_mem *mem, uint64_t gpa, const char *sig)
{
	cr_assert_geq(gpa, ACPI_TABLES_ADDR, "%s at 0x%llx", sig, (unsigned long long)gpa);
	struct acpi_header h;
	const uint8_t *p = guest_mem_ptr(mem, gpa, sizeof(h));
	cr_assert_not_null(p);
	memcpy(&h, p, sizeof(h));
	cr_assert_eq(memcmp(h.signature, sig, 4), 0, "expected %s, found %.4s", sig, h.signature);
	cr_assert_geq(h.length, sizeof(h));
	cr_assert_leq(gpa + h.length, ACPI_TABLES_END, "%s ends below the MP table's area", sig);
	return guest_mem_ptr(mem, gpa, h.length);
}

static uint32_t table_length(const uint8_t *t)
{
	struct acpi_header h;
	memcpy(&h, t, sizeof(h));
	return h.length;
}

static void build(struct tables *t, const struct acpi_config *cfg)
{
	struct vmm_err err = { 0 };
	memset(t, 0, sizeof(*t));
	cr_assert_eq(guest_mem_init(&t->mem, 4 << 20, &err), 0, "%s", err.msg);
	cr_assert_eq(acpi_write_tables(&t->mem, cfg, &t->rsdp_addr, &err), 0, "%s", err.msg);
	const uint8_t *r = guest_mem_ptr(&t->mem, t->rsdp_addr, sizeof(t->rsdp));
	cr_assert_not_null(r);
	memcpy(&t->rsdp, r, sizeof(t->rsdp));

	t->xsdt = table_at(&t->mem, t->rsdp.xsdt_address, "XSDT");
	cr_assert_eq(table_length(t->xsdt), sizeof(struct acpi_header) + 2 * 8, "XSDT: FADT and MADT");
	memcpy(&t->fadt_addr, t->xsdt + 36, 8);
	memcpy(&t->madt_addr, t->xsdt + 44, 8);
	t->fadt = table_at(&t->mem, t->fadt_addr, "FACP");
	t->madt = table_at(&t->mem, t->madt_addr, "APIC");
	struct acpi_fadt f;
	memcpy(&f, t->fadt, sizeof(f));
	t->dsdt_addr = f.x_dsdt;
	t->dsdt = table_at(&t->mem, t->dsdt_addr, "DSDT");
}

/* ---- layout, signatures, lengths, checksums ------------------------------ */

Test(acpi, rsdp_is_in_the_bios_scan_area_and_checksummed)
{
	struct tables t;
	struct acpi_config cfg = config(2, 1);
	build(&t, &cfg);
	cr_expect_eq(t.rsdp_addr, ACPI_TABLES_ADDR);
	cr_expect_geq(t.rsdp_addr, 0xE0000);
	cr_expect_lt(t.rsdp_addr, 0x100000);
	cr_expect_eq(t.rsdp_addr % 16, 0, "Linux scans on 16-byte boundaries");
	const uint8_t *r = guest_mem_ptr(&t.mem, t.rsdp_addr, 36);
	cr_expect_eq(memcmp(t.rsdp.signature, "RSD PTR ", 8), 0);
	cr_expect_eq(sum_bytes(r, 20), 0, "ACPI 1.0 checksum over 20 bytes");
	cr_expect_eq(sum_bytes(r, 36), 0, "extended checksum over 36 bytes");
	cr_expect_eq(t.rsdp.revision, 2);
	cr_expect_eq(t.rsdp.length, 36);
	cr_expect_eq(t.rsdp.rsdt_address, 0, "XSDT only");
	cr_expect_eq(memcmp(t.rsdp.oem_id, "MINIVM", 6), 0);
	guest_mem_destroy(&t.mem);
}

Test(acpi, every_table_has_its_signature_length_revision_and_checksum)
{
	struct tables t;
	struct acpi_config cfg = config(4, 3);
	build(&t, &cfg);
	struct { const uint8_t *p; const char *sig; uint8_t rev; } tbl[] = {
		{ t.xsdt, "XSDT", 1 }, { t.fadt, "FACP", 6 }, { t.madt, "APIC", 5 }, { t.dsdt, "DSDT", 2 },
	};
	for (unsigned i = 0; i < 4; i++) {
		struct acpi_header h;
		memcpy(&h, tbl[i].p, sizeof(h));
		cr_expect_eq(sum_bytes(tbl[i].p, h.length), 0, "%s checksum", tbl[i].sig);
		cr_expect_eq(h.revision, tbl[i].rev, "%s revision %u", tbl[i].sig, h.revision);
		cr_expect_eq(memcmp(h.oem_id, "MINIVM", 6), 0, "%s OEM id", tbl[i].sig);
		cr_expect_eq(memcmp(h.oem_table_id, "MINIVMM ", 8), 0, "%s OEM table id", tbl[i].sig);
	}
	cr_expect_eq(table_length(t.fadt), 276, "FADT revision 6 length");
	cr_expect_eq(table_length(t.madt), 44 + 4 * 8 + 12 + 6);
	cr_expect_gt(table_length(t.dsdt), 36, "DSDT carries AML");
	for (unsigned i = 0; i < 4; i++)
		cr_expect_eq((uint64_t)(tbl[i].p - t.xsdt + t.rsdp.xsdt_address) % 16, 0,
			     "%s 16-byte aligned", tbl[i].sig);
	guest_mem_destroy(&t.mem);
}

Test(acpi, fadt_is_hardware_reduced_with_sleep_registers_on_the_pm_port)
{
	struct tables t;
	struct acpi_config cfg = config(1, 0);
	build(&t, &cfg);
	struct acpi_fadt f;
	memcpy(&f, t.fadt, sizeof(f));
	cr_expect_eq(f.flags & ACPI_FADT_HW_REDUCED, ACPI_FADT_HW_REDUCED);
	cr_expect_eq(f.dsdt, t.dsdt_addr, "32-bit DSDT pointer agrees with X_DSDT");
	cr_expect_eq(f.sci_int, 0);
	cr_expect_eq(f.pm1a_cnt_blk, 0, "no fixed hardware");
	cr_expect_eq(f.sleep_control_reg.space_id, ACPI_GAS_SYSTEM_IO);
	cr_expect_eq(f.sleep_control_reg.bit_width, 8);
	cr_expect_eq(f.sleep_control_reg.address, ACPI_PM_PORT);
	cr_expect_eq(f.sleep_status_reg.space_id, ACPI_GAS_SYSTEM_IO);
	cr_expect_eq(f.sleep_status_reg.bit_width, 8);
	cr_expect_eq(f.sleep_status_reg.address, ACPI_PM_PORT + 1);
	guest_mem_destroy(&t.mem);
}

static void check_madt(unsigned ncpus)
{
	struct tables t;
	struct acpi_config cfg = config(ncpus, 2);
	build(&t, &cfg);
	struct acpi_madt m;
	memcpy(&m, t.madt, sizeof(m));
	cr_expect_eq(m.lapic_address, 0xfee00000u);
	cr_expect_eq(sum_bytes(t.madt, m.h.length), 0, "MADT checksum");
	unsigned lapics = 0, ioapics = 0, nmis = 0, other = 0, entries = 0;
	const uint8_t *p = t.madt + sizeof(m), *end = t.madt + m.h.length;
	while (p < end) {
		cr_assert_geq(p[1], 2, "entry length");
		cr_assert_leq(p + p[1], end, "entry inside the table");
		entries++;
		if (p[0] == ACPI_MADT_LAPIC) {
			struct acpi_madt_lapic l;
			memcpy(&l, p, sizeof(l));
			cr_expect_eq(l.length, 8);
			cr_expect_eq(l.apic_id, lapics, "APIC ids in order");
			cr_expect_eq(l.processor_uid, lapics);
			cr_expect_eq(l.flags, ACPI_MADT_ENABLED);
			lapics++;
		} else if (p[0] == ACPI_MADT_IOAPIC) {
			struct acpi_madt_ioapic io;
			memcpy(&io, p, sizeof(io));
			cr_expect_eq(io.address, 0xfec00000u);
			cr_expect_eq(io.gsi_base, 0);
			cr_expect_eq(io.ioapic_id, ioapic_id_for_cpus(ncpus), "same id as in the MP table");
			ioapics++;
		} else if (p[0] == ACPI_MADT_LAPIC_NMI) {
			struct acpi_madt_lapic_nmi n;
			memcpy(&n, p, sizeof(n));
			cr_expect_eq(n.processor_uid, 0xff);
			cr_expect_eq(n.lint, 1);
			nmis++;
		} else {
			other++;
		}
		p += p[1];
	}
	cr_expect_eq(p, end, "entries fill the table exactly");
	cr_expect_eq(lapics, ncpus);
	cr_expect_eq(ioapics, 1);
	cr_expect_eq(nmis, 1);
	cr_expect_eq(other, 0, "no overrides: KVM routes ISA IRQ n to pin n");
	cr_expect_eq(entries, ACPI_MADT_ENTRIES(ncpus));
	guest_mem_destroy(&t.mem);
}

ParameterizedTestParameters(acpi, madt_has_one_enabled_lapic_per_cpu)
{
	static unsigned counts[] = { 1, 2, 4, 16, 64, ACPI_MAX_CPUS };
	return cr_make_param_array(unsigned, counts, sizeof(counts) / sizeof(counts[0]));
}

ParameterizedTest(unsigned *ncpus, acpi, madt_has_one_enabled_lapic_per_cpu)
{
	check_madt(*ncpus);
}

Test(acpi, tables_and_mp_table_coexist)
{
	/* 64 CPUs put the MP configuration table at 0xF0000, right after us. */
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 4 << 20, &err), 0, "%s", err.msg);
	struct acpi_config cfg = config(64, 8);
	uint64_t rsdp;
	cr_assert_eq(acpi_write_tables(&mem, &cfg, &rsdp, &err), 0, "%s", err.msg);
	cr_assert_eq(mptable_write(&mem, 64, cfg.ioapic_id, 0x11, &err), 0, "%s", err.msg);
	struct acpi_rsdp r;
	memcpy(&r, guest_mem_ptr(&mem, rsdp, sizeof(r)), sizeof(r));
	const uint8_t *x = table_at(&mem, r.xsdt_address, "XSDT");
	uint64_t madt;
	memcpy(&madt, x + 44, 8);
	const uint8_t *m = table_at(&mem, madt, "APIC");
	cr_expect_eq(sum_bytes(m, table_length(m)), 0, "MADT intact after the MP table");
	cr_expect_leq(ACPI_TABLES_END, BOOT_MPTABLE_HIGH_ADDR);
	guest_mem_destroy(&mem);
}

/* ---- bad configurations --------------------------------------------------- */

static void expect_rejected(struct acpi_config cfg, const char *what)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 2 << 20, &err), 0, "%s", err.msg);
	uint64_t rsdp = 0x1234;
	cr_expect_eq(acpi_write_tables(&mem, &cfg, &rsdp, &err), -EINVAL, "%s", what);
	cr_expect_neq(err.msg[0], 0, "%s: a message", what);
	cr_expect_eq(rsdp, 0x1234, "%s: no address returned", what);
	const uint8_t *area = guest_mem_ptr(&mem, ACPI_TABLES_ADDR, 64);
	cr_expect_eq(memcmp(area, (uint8_t[64]){ 0 }, 64), 0, "%s: guest memory untouched", what);
	guest_mem_destroy(&mem);
}

Test(acpi, rejects_configs_it_cannot_describe)
{
	expect_rejected(config(0, 0), "0 CPUs");
	expect_rejected(config(ACPI_MAX_CPUS + 1, 0), "too many CPUs");
	struct acpi_config c = config(1, 8);
	c.nr_virtio_mmio = 9;
	expect_rejected(c, "9 devices");
	c = config(1, 1);
	c.virtio_mmio[0].base = 0x100000000ULL;
	expect_rejected(c, "window above 4 GiB");
	c = config(1, 1);
	c.virtio_mmio[0].base = 0xfffff000ULL;
	c.virtio_mmio[0].size = 0x2000;
	expect_rejected(c, "window crossing 4 GiB");
	c = config(1, 1);
	c.virtio_mmio[0].size = 0;
	expect_rejected(c, "empty window");
	c = config(1, 1);
	c.virtio_mmio[0].gsi = ACPI_IOAPIC_PINS;
	expect_rejected(c, "GSI beyond the IOAPIC");
	c = config(1, 1);
	c.virtio_mmio[0].gsi = MINIVMM_IRQ_COM1;
	expect_rejected(c, "GSI of COM1");
	c = config(1, 0);
	c.pm_sleep_port = 0;
	expect_rejected(c, "port 0");
	c = config(1, 0);
	c.pvpanic_port = ACPI_PM_PORT + 1;
	expect_rejected(c, "pvpanic on the sleep status register");
}

Test(acpi, fails_when_the_area_is_not_ram)
{
	struct guest_mem mem = { 0 };   /* no regions at all */
	struct vmm_err err = { 0 };
	struct acpi_config cfg = config(1, 0);
	uint64_t rsdp;
	cr_expect_eq(acpi_write_tables(&mem, &cfg, &rsdp, &err), -EFAULT);
}

/* ---- iasl -d --------------------------------------------------------------- */

static const char *find_iasl(void)
{
	static char path[4096];
	const char *env = getenv("PATH");
	char dirs[4096];
	snprintf(dirs, sizeof(dirs), "%s:/usr/bin:/usr/local/bin", env ? env : "");
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(path, sizeof(path), "%s/iasl", d);
		if (access(path, X_OK) == 0)
			return path;
	}
	return NULL;
}

/* Comments dropped and whitespace runs collapsed to one space, so checks
 * depend neither on iasl's annotations nor on its column alignment. */
static char *squeeze(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;
	cr_assert_not_null(out);
	bool space = false;
	for (; *s; s++) {
		if (s[0] == '/' && s[1] == '/') {
			s += strcspn(s, "\n");
			if (!*s)
				break;
		} else if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			if (!e)
				break;
			s = e + 1;
			space = true;
			continue;
		}
		if (isspace((unsigned char)*s)) {
			space = true;
			continue;
		}
		if (space && o != out)
			*o++ = ' ';
		space = false;
		*o++ = *s;
	}
	*o = 0;
	return out;
}

/* Disassemble one table with iasl -d; return its .dsl text, squeezed. */
static char *disassemble(const uint8_t *table, const char *name)
{
	const char *iasl = find_iasl();
	cr_assert_not_null(iasl, "iasl not found in PATH: install Debian's acpica-tools "
				 "(apt-get install -y acpica-tools); the ACPI tables cannot be checked "
				 "without it");
	char dir[] = "/tmp/minivmm-acpi-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char dat[4200], dsl[4200], cmd[9000];
	snprintf(dat, sizeof(dat), "%s/%s.dat", dir, name);
	snprintf(dsl, sizeof(dsl), "%s/%s.dsl", dir, name);
	FILE *f = fopen(dat, "w");
	cr_assert_not_null(f);
	cr_assert_eq(fwrite(table, 1, table_length(table), f), table_length(table));
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' -d '%s.dat' > iasl.log 2>&1", dir, iasl, name);
	int st = system(cmd);
	char log[4200];
	snprintf(log, sizeof(log), "%s/iasl.log", dir);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "iasl -d %s failed (status 0x%x), see %s",
		  name, st, log);
	f = fopen(dsl, "r");
	cr_assert_not_null(f, "iasl wrote no %s", dsl);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	cr_assert_null(strstr(text, "**** ACPI table terminates in the middle"), "%s truncated", name);
	cr_assert_null(strstr(text, "Invalid"), "iasl found something invalid in %s", name);
	unlink(dat);
	unlink(dsl);
	unlink(log);
	rmdir(dir);
	return squeeze(text);
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The text of "Device (NAME)" up to the next Device or the end. */
static char *device_block(const char *dsl, const char *name)
{
	char key[32];
	snprintf(key, sizeof(key), "Device (%s)", name);
	const char *start = strstr(dsl, key);
	cr_assert_not_null(start, "no %s in the DSDT:\n%s", key, dsl);
	const char *end = strstr(start + 1, "Device (");
	size_t len = end ? (size_t)(end - start) : strlen(start);
	return strndup(start, len);
}

static void check_dsdt(unsigned ndev, uint16_t pvpanic_port)
{
	struct tables t;
	struct acpi_config cfg = config(2, ndev);
	cfg.pvpanic_port = pvpanic_port;
	build(&t, &cfg);
	char *dsl = disassemble(t.dsdt, "dsdt");
	cr_expect_eq(count(dsl, "Name (_S5, Package (0x04) { 0x05, 0x05, Zero, Zero })"), 1,
		     "\\_S5 with SLP_TYP 5:\n%s", dsl);
	cr_expect_eq(count(dsl, "Scope (\\_SB)"), 1);
	cr_expect_eq(count(dsl, "\"LNRO0005\""), ndev, "one virtio-mmio device per window");

	char *com1 = device_block(dsl, "COM1");
	cr_expect_neq(strstr(com1, "EisaId (\"PNP0501\")"), NULL, "%s", com1);
	cr_expect_neq(strstr(com1, "IO (Decode16, 0x03F8, 0x03F8, 0x01, 0x08, )"), NULL, "%s", com1);
	cr_expect_neq(strstr(com1, "IRQNoFlags () {4}"), NULL, "%s", com1);
	free(com1);

	for (unsigned k = 0; k < ndev; k++) {
		char name[8], want[200];
		snprintf(name, sizeof(name), "VR%02u", k);
		char *dev = device_block(dsl, name);
		cr_expect_neq(strstr(dev, "Name (_HID, \"LNRO0005\")"), NULL, "%s", dev);
		const char *uid = k == 0 ? "Zero" : k == 1 ? "One" : NULL;
		if (uid)
			snprintf(want, sizeof(want), "Name (_UID, %s)", uid);
		else
			snprintf(want, sizeof(want), "Name (_UID, 0x%02X)", k);
		cr_expect_neq(strstr(dev, want), NULL, "%s: want %s", dev, want);
		snprintf(want, sizeof(want), "Memory32Fixed (ReadWrite, 0x%08llX, 0x00001000, )",
			 (unsigned long long)cfg.virtio_mmio[k].base);
		cr_expect_neq(strstr(dev, want), NULL, "%s: want %s", dev, want);
		snprintf(want, sizeof(want), "Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive, ,, ) "
			 "{ 0x%08X, }", cfg.virtio_mmio[k].gsi);
		cr_expect_neq(strstr(dev, want), NULL, "%s: want %s", dev, want);
		free(dev);
	}

	/* QEMU's pvpanic, as QEMU describes it: what Linux's pvpanic-mmio
	 * driver matches. */
	cr_expect_eq(count(dsl, "\"QEMU0001\""), pvpanic_port ? 1 : 0, "%s", dsl);
	if (pvpanic_port) {
		char *pevt = device_block(dsl, "PEVT");
		char want[80];
		snprintf(want, sizeof(want), "IO (Decode16, 0x%04X, 0x%04X, 0x01, 0x01, )", pvpanic_port,
			 pvpanic_port);
		cr_expect_neq(strstr(pevt, "Name (_HID, \"QEMU0001\")"), NULL, "%s", pevt);
		cr_expect_neq(strstr(pevt, want), NULL, "%s: want %s", pevt, want);
		free(pevt);
	}
	free(dsl);
	guest_mem_destroy(&t.mem);
}

Test(acpi_iasl, dsdt_without_devices)
{
	check_dsdt(0, MINIVMM_PORT_PVPANIC);
}

Test(acpi_iasl, dsdt_with_one_device)
{
	check_dsdt(1, MINIVMM_PORT_PVPANIC);
}

Test(acpi_iasl, dsdt_with_eight_devices)
{
	check_dsdt(ACPI_MAX_VIRTIO_MMIO, MINIVMM_PORT_PVPANIC);
}

Test(acpi_iasl, dsdt_without_pvpanic)
{
	check_dsdt(1, 0);
}

Test(acpi_iasl, fadt_decodes_hardware_reduced_and_sleep_registers)
{
	struct tables t;
	struct acpi_config cfg = config(1, 1);
	build(&t, &cfg);
	char *dsl = disassemble(t.fadt, "facp");
	cr_expect_neq(strstr(dsl, "Revision : 06"), NULL, "%s", dsl);
	cr_expect_neq(strstr(dsl, "Table Length : 00000114"), NULL, "276 bytes");
	cr_expect_neq(strstr(dsl, "Hardware Reduced (V5) : 1"), NULL, "%s", dsl);
	char want[300];
	snprintf(want, sizeof(want), "DSDT Address : %016llX", (unsigned long long)t.dsdt_addr);
	cr_expect_neq(strstr(dsl, want), NULL, "X_DSDT: %s", want);
	const char *regs[] = { "Sleep Control Register", "Sleep Status Register" };
	for (unsigned i = 0; i < 2; i++) {
		snprintf(want, sizeof(want), "%s : [Generic Address Structure] [%s] Space ID : 01 [SystemIO] "
			 "[%s] Bit Width : 08 [%s] Bit Offset : 00 [%s] Encoded Access Width : 01 "
			 "[Byte Access:8] [%s] Address : %016X", regs[i],
			 i ? "100h 0256 1" : "0F4h 0244 1", i ? "101h 0257 1" : "0F5h 0245 1",
			 i ? "102h 0258 1" : "0F6h 0246 1", i ? "103h 0259 1" : "0F7h 0247 1",
			 i ? "104h 0260 8" : "0F8h 0248 8", ACPI_PM_PORT + i);
		cr_expect_neq(strstr(dsl, want), NULL, "want %s in\n%s", want, dsl);
	}
	free(dsl);
	guest_mem_destroy(&t.mem);
}

Test(acpi_iasl, madt_decodes_processors_and_ioapic)
{
	struct tables t;
	struct acpi_config cfg = config(4, 0);
	build(&t, &cfg);
	char *dsl = disassemble(t.madt, "apic");
	cr_expect_neq(strstr(dsl, "Local Apic Address : FEE00000"), NULL, "%s", dsl);
	cr_expect_eq(count(dsl, "[Processor Local APIC]"), 4);
	cr_expect_eq(count(dsl, "Processor Enabled : 1"), 4);
	for (unsigned i = 0; i < 4; i++) {
		char want[64];
		snprintf(want, sizeof(want), "Local Apic ID : %02X", i);
		cr_expect_eq(count(dsl, want), 1, "%s", want);
	}
	cr_expect_eq(count(dsl, "[I/O APIC]"), 1);
	cr_expect_neq(strstr(dsl, "I/O Apic ID : 04"), NULL);
	cr_expect_neq(strstr(dsl, "Address : FEC00000"), NULL);
	cr_expect_neq(strstr(dsl, "Interrupt : 00000000"), NULL, "GSI base 0");
	cr_expect_eq(count(dsl, "[Local APIC NMI]"), 1);
	cr_expect_neq(strstr(dsl, "Interrupt Input LINT : 01"), NULL);
	cr_expect_eq(count(dsl, "[Interrupt Source Override]"), 0);
	free(dsl);
	guest_mem_destroy(&t.mem);
}

Test(acpi_iasl, xsdt_lists_fadt_and_madt)
{
	struct tables t;
	struct acpi_config cfg = config(1, 0);
	build(&t, &cfg);
	char *dsl = disassemble(t.xsdt, "xsdt");
	char want[128];
	snprintf(want, sizeof(want), "ACPI Table Address 0 : %016llX", (unsigned long long)t.fadt_addr);
	cr_expect_neq(strstr(dsl, want), NULL, "%s in\n%s", want, dsl);
	snprintf(want, sizeof(want), "ACPI Table Address 1 : %016llX", (unsigned long long)t.madt_addr);
	cr_expect_neq(strstr(dsl, want), NULL, "%s in\n%s", want, dsl);
	free(dsl);
	guest_mem_destroy(&t.mem);
}

/* ---- AML encodings ------------------------------------------------------- */

Test(aml, pkglength_uses_one_to_four_bytes)
{
	uint8_t e[4];
	cr_expect_eq(aml_pkglength_encode(10, e), 1);
	cr_expect_eq(e[0], 11, "counts itself");
	cr_expect_eq(aml_pkglength_encode(62, e), 1);
	cr_expect_eq(e[0], 63);
	/* 63 contents + 2 = 65 = 0x41: byte count 1 in bits 7:6, nibble 1, then 0x04. */
	cr_expect_eq(aml_pkglength_encode(63, e), 2);
	cr_expect_eq(e[0], 0x41);
	cr_expect_eq(e[1], 0x04);
	cr_expect_eq(aml_pkglength_encode(0x1000, e), 3);
	cr_expect_eq(e[0], 0x83);
	cr_expect_eq(e[1], 0x00);
	cr_expect_eq(e[2], 0x01);
	cr_expect_eq(aml_pkglength_size(0x10000000), 0, "beyond 2^28");
}

Test(aml, integers_take_the_shortest_form)
{
	uint8_t buf[64];
	struct aml_buf b;
	aml_init(&b, buf, sizeof(buf));
	aml_integer(&b, 0);
	aml_integer(&b, 1);
	aml_integer(&b, 5);
	aml_integer(&b, 0x3f8);
	aml_integer(&b, 0xd0000000u);
	aml_integer(&b, 0x100000000ULL);
	const uint8_t want[] = { 0x00, 0x01, 0x0a, 0x05, 0x0b, 0xf8, 0x03, 0x0c, 0x00, 0x00, 0x00, 0xd0,
				 0x0e, 0, 0, 0, 0, 1, 0, 0, 0 };
	cr_assert_eq(b.len, sizeof(want));
	cr_expect_eq(memcmp(buf, want, sizeof(want)), 0);
	cr_expect_not(b.failed);
}

Test(aml, eisaid_compresses_pnp0501)
{
	cr_expect_eq(aml_eisaid_value("PNP0501"), 0x0105d041u);
	cr_expect_eq(aml_eisaid_value("PNP0A03"), 0x030ad041u);
	cr_expect_eq(aml_eisaid_value("pnp0501"), 0, "lower case is not an EISA id");
	cr_expect_eq(aml_eisaid_value("PNP050"), 0);
}

Test(aml, names_are_padded_and_prefixed)
{
	uint8_t buf[64];
	struct aml_buf b;
	aml_init(&b, buf, sizeof(buf));
	aml_name_string(&b, "\\_SB");
	aml_name_string(&b, "_SB.COM1");
	const uint8_t want[] = { '\\', '_', 'S', 'B', '_', 0x2e, '_', 'S', 'B', '_', 'C', 'O', 'M', '1' };
	cr_assert_eq(b.len, sizeof(want));
	cr_expect_eq(memcmp(buf, want, sizeof(want)), 0);
	aml_name_string(&b, "1ABC");
	cr_expect(b.failed, "a name may not start with a digit");
	aml_init(&b, buf, sizeof(buf));
	aml_name_string(&b, "TOOLONG");
	cr_expect(b.failed);
}

Test(aml, running_out_of_room_fails_instead_of_overflowing)
{
	uint8_t buf[16 + 8];
	memset(buf + 16, 0xaa, 8);
	struct aml_buf b;
	aml_init(&b, buf, 16);
	size_t dev = aml_device_open(&b, "VR00");
	aml_name(&b, "_HID");
	aml_string(&b, "LNRO0005");
	aml_pkg_close(&b, dev);
	cr_expect(b.failed);
	cr_expect_leq(b.len, 16);
	for (int i = 16; i < 24; i++)
		cr_expect_eq(buf[i], 0xaa, "byte %d past the end untouched", i);
}

/* ---- the sleep-control device --------------------------------------------- */

struct stop_log {
	int stops;
	int status;
	char reason[128];
	int logs;
};

static void record_stop(void *opaque, int status, const char *reason)
{
	struct stop_log *l = opaque;
	l->stops++;
	l->status = status;
	snprintf(l->reason, sizeof(l->reason), "%s", reason);
}

static void record_log(void *opaque, const char *line)
{
	struct stop_log *l = opaque;
	(void)line;
	l->logs++;
}

static struct bus_device pm_device(struct acpi_pm *pm, struct machine *ev, struct stop_log *l)
{
	memset(l, 0, sizeof(*l));
	*ev = (struct machine){ .opaque = l, .request_stop = record_stop, .log = record_log };
	acpi_pm_init(pm, ev, ACPI_S5_SLP_TYP);
	return acpi_pm_device(pm);
}

Test(acpi_pm, s5_write_powers_off_with_status_0)
{
	struct acpi_pm pm;
	struct machine ev;
	struct stop_log l;
	struct bus_device d = pm_device(&pm, &ev, &l);
	/* What ACPICA's acpi_hw_extended_sleep writes for \_S5. */
	uint8_t v = (uint8_t)(ACPI_SLEEP_SLP_EN | (ACPI_S5_SLP_TYP << ACPI_SLEEP_SLP_TYP_SHIFT));
	cr_assert_eq(v, 0x34);
	d.write(d.opaque, 0, &v, 1);
	cr_expect_eq(l.stops, 1);
	cr_expect_eq(l.status, 0);
	cr_expect_str_eq(l.reason, "guest powered off (ACPI S5)");
}

Test(acpi_pm, other_writes_do_not_stop)
{
	struct acpi_pm pm;
	struct machine ev;
	struct stop_log l;
	struct bus_device d = pm_device(&pm, &ev, &l);
	uint8_t typ_only = ACPI_S5_SLP_TYP << ACPI_SLEEP_SLP_TYP_SHIFT;
	d.write(d.opaque, 0, &typ_only, 1);
	cr_expect_eq(l.stops, 0, "SLP_TYP without SLP_EN does nothing");
	uint8_t s3 = ACPI_SLEEP_SLP_EN | (3 << ACPI_SLEEP_SLP_TYP_SHIFT);
	d.write(d.opaque, 0, &s3, 1);
	cr_expect_eq(l.stops, 0, "a sleep type we never advertised");
	cr_expect_eq(l.logs, 1, "is logged");
	uint8_t wak = ACPI_SLEEP_WAK_STS;
	d.write(d.opaque, 1, &wak, 1);
	cr_expect_eq(l.stops, 0, "clearing WAK_STS");
}

Test(acpi_pm, registers_read_zero_and_wide_writes_reach_control)
{
	struct acpi_pm pm;
	struct machine ev;
	struct stop_log l;
	struct bus_device d = pm_device(&pm, &ev, &l);
	uint8_t data[2] = { 0xff, 0xff };
	d.read(d.opaque, 1, data, 1);
	cr_expect_eq(data[0], 0, "status: no WAK_STS");
	data[0] = 0xff;
	d.read(d.opaque, 0, data, 2);
	cr_expect_eq(data[0], 0);
	cr_expect_eq(data[1], 0);
	/* One 16-bit write: S5 to control, WAK_STS clear to status. */
	uint8_t w[2] = { 0x34, ACPI_SLEEP_WAK_STS };
	d.write(d.opaque, 0, w, 2);
	cr_expect_eq(l.stops, 1);
}
