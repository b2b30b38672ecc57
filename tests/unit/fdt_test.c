/* SPDX-License-Identifier: Apache-2.0 */
/* Device tree builder: DTBs for machines laid out as minivmm lays them out
 * (RAM split around the MMIO hole by guest_mem_init, COM1, the x86 APICs,
 * virtio-mmio windows from MINIVMM_MMIO_BASE), read back with libfdt: the
 * header, every node, every property value; and the descriptions the
 * builder must refuse. */
#include <criterion/criterion.h>
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/guest_mem.h"
#include "boot/boot.h"
#include "boot/fdt.h"
#include "minivmm_abi.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define BUF_SIZE BOOT_FDT_MAX
#define X86_EDGE_RISING 3   /* Linux's of_ioapic_type[] index */
#define X86_LEVEL_HIGH  1

/* ---- machines ------------------------------------------------------- */

/* What vmm/dtb.c describes for ncpus vCPUs, mem bytes of RAM and nvirtio
 * devices; RAM regions come from the real split (guest_mem_init). */
static void make_machine(struct fdt_machine *m, unsigned ncpus, uint64_t mem, unsigned nvirtio,
			 const char *bootargs)
{
	memset(m, 0, sizeof(*m));
	m->model = "minivmm";
	m->compatible = "minivmm,x86-64";
	struct guest_mem gm;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&gm, mem, &err), 0, "%s", err.msg);
	for (unsigned i = 0; i < gm.nr_regions; i++)
		m->mem[m->nr_mem++] = (struct fdt_range){ gm.region[i].gpa, gm.region[i].size };
	guest_mem_destroy(&gm);
	m->reserved[m->nr_reserved++] = (struct fdt_range){ BOOT_EBDA_START,
							    BOOT_KERNEL_MIN - BOOT_EBDA_START };
	m->ncpus = ncpus;
	for (unsigned i = 0; i < ncpus; i++)
		m->cpu_id[i] = i;
	m->intc = (struct fdt_intc){ .kind = FDT_INTC_X86_APIC, .nr_lines = 24,
				     .ioapic = { MINIVMM_IOAPIC_BASE, 0x1000 },
				     .lapic = { MINIVMM_LAPIC_BASE, 0x1000 } };
	m->uart = (struct fdt_uart){ .space = FDT_UART_IO, .base = MINIVMM_PORT_COM1, .size = 8,
				     .clock_hz = 1843200,
				     .irq = { MINIVMM_IRQ_COM1, FDT_IRQ_EDGE_RISING } };
	m->nr_virtio_mmio = nvirtio;
	for (unsigned k = 0; k < nvirtio; k++)
		m->virtio_mmio[k] = (struct fdt_virtio_mmio){
			.base = MINIVMM_MMIO_BASE + k * MINIVMM_MMIO_WINDOW, .size = MINIVMM_MMIO_WINDOW,
			.irq = { MINIVMM_VIRTIO_IRQ_BASE + k, FDT_IRQ_EDGE_RISING } };
	m->pvpanic = (struct fdt_range){ MINIVMM_PVPANIC_MMIO_BASE, MINIVMM_PVPANIC_MMIO_SIZE };
	m->bootargs = bootargs;
}

static void *build(const struct fdt_machine *m)
{
	void *blob = malloc(BUF_SIZE);
	struct vmm_err err = { 0 };
	/* Poison: nothing may depend on the buffer starting zeroed. */
	memset(blob, 0xa5, BUF_SIZE);
	int len = fdt_build(m, blob, BUF_SIZE, &err);
	cr_assert_gt(len, 0, "fdt_build: %s", err.msg);
	cr_assert_eq(fdt_check_header(blob), 0);
	cr_assert_eq((int)fdt_totalsize(blob), len);
	cr_assert_eq(fdt_version(blob), 17);
	return blob;
}

/* ---- reading back ---------------------------------------------------- */

static int node(const void *fdt, const char *path)
{
	int off = fdt_path_offset(fdt, path);
	cr_assert_geq(off, 0, "no node %s (%s)", path, fdt_strerror(off));
	return off;
}

static void expect_str(const void *fdt, int off, const char *prop, const char *want)
{
	int len;
	const char *v = fdt_getprop(fdt, off, prop, &len);
	cr_assert_not_null(v, "%s missing in %s", prop, fdt_get_name(fdt, off, NULL));
	cr_expect_eq(len, (int)strlen(want) + 1, "%s length", prop);
	cr_expect_str_eq(v, want, "%s of %s", prop, fdt_get_name(fdt, off, NULL));
}

/* A property of n big-endian 32-bit cells. */
static void expect_cells(const void *fdt, int off, const char *prop, const uint32_t *want, int n)
{
	int len;
	const fdt32_t *v = fdt_getprop(fdt, off, prop, &len);
	cr_assert_not_null(v, "%s missing in %s", prop, fdt_get_name(fdt, off, NULL));
	cr_assert_eq(len, 4 * n, "%s of %s is %d bytes, expected %d", prop,
		     fdt_get_name(fdt, off, NULL), len, 4 * n);
	for (int i = 0; i < n; i++)
		cr_expect_eq(fdt32_to_cpu(v[i]), want[i], "%s of %s, cell %d: 0x%x, expected 0x%x", prop,
			     fdt_get_name(fdt, off, NULL), i, fdt32_to_cpu(v[i]), want[i]);
}

static void expect_u32(const void *fdt, int off, const char *prop, uint32_t want)
{
	expect_cells(fdt, off, prop, &want, 1);
}

/* reg = <base size> with two cells each (the root's #address/#size-cells). */
static void expect_reg64(const void *fdt, int off, uint64_t base, uint64_t size)
{
	uint32_t want[4] = { (uint32_t)(base >> 32), (uint32_t)base, (uint32_t)(size >> 32),
			     (uint32_t)size };
	expect_cells(fdt, off, "reg", want, 4);
}

static void expect_empty_prop(const void *fdt, int off, const char *prop)
{
	int len = -1;
	cr_assert_not_null(fdt_getprop(fdt, off, prop, &len), "%s missing", prop);
	cr_expect_eq(len, 0, "%s is a flag (no value)", prop);
}

static int count_subnodes(const void *fdt, int parent)
{
	int n = 0, off;
	fdt_for_each_subnode(off, fdt, parent)
		n++;
	return n;
}

static int count_props(const void *fdt, int off)
{
	int n = 0, p;
	fdt_for_each_property_offset(p, fdt, off)
		n++;
	return n;
}

static void check_root(const void *fdt, const struct fdt_machine *m)
{
	int root = node(fdt, "/");
	expect_u32(fdt, root, "#address-cells", 2);
	expect_u32(fdt, root, "#size-cells", 2);
	expect_str(fdt, root, "model", m->model);
	expect_str(fdt, root, "compatible", m->compatible);
	int len;
	const fdt32_t *parent = fdt_getprop(fdt, root, "interrupt-parent", &len);
	cr_assert_not_null(parent);
	cr_assert_eq(len, 4);
	int intc = fdt_node_offset_by_phandle(fdt, fdt32_to_cpu(*parent));
	cr_assert_geq(intc, 0, "interrupt-parent names no node");
	cr_expect_str_eq(fdt_get_name(fdt, intc, NULL), "interrupt-controller@fec00000");
	cr_expect_eq(count_props(fdt, root), 5);
	/* chosen, memory, cpus, IOAPIC, LAPIC, isa, then the devices. */
	cr_expect_eq(count_subnodes(fdt, root),
		     1 + (int)m->nr_mem + 1 + 2 + 1 + (int)m->nr_virtio_mmio + (m->pvpanic.size ? 1 : 0));
}

static void check_reservations(const void *fdt, const struct fdt_machine *m)
{
	cr_assert_eq(fdt_num_mem_rsv(fdt), (int)m->nr_reserved);
	for (unsigned i = 0; i < m->nr_reserved; i++) {
		uint64_t a, s;
		cr_assert_eq(fdt_get_mem_rsv(fdt, (int)i, &a, &s), 0);
		cr_expect_eq(a, m->reserved[i].base);
		cr_expect_eq(s, m->reserved[i].size);
	}
}

static void check_chosen(const void *fdt, const struct fdt_machine *m)
{
	int chosen = node(fdt, "/chosen");
	expect_str(fdt, chosen, "bootargs", m->bootargs ? m->bootargs : "");
	expect_str(fdt, chosen, "stdout-path", "/isa/serial@i3f8");
	const char *path = fdt_getprop(fdt, chosen, "stdout-path", NULL);
	cr_expect_geq(fdt_path_offset(fdt, path), 0, "stdout-path %s names a node", path);
	cr_expect_eq(count_props(fdt, chosen), 2);
}

static void check_memory(const void *fdt, const struct fdt_machine *m)
{
	for (unsigned i = 0; i < m->nr_mem; i++) {
		char path[40];
		snprintf(path, sizeof(path), "/memory@%llx", (unsigned long long)m->mem[i].base);
		int off = node(fdt, path);
		expect_str(fdt, off, "device_type", "memory");
		expect_reg64(fdt, off, m->mem[i].base, m->mem[i].size);
		cr_expect_eq(count_props(fdt, off), 2);
	}
	/* Nothing else claims to be memory. */
	int n = 0;
	for (int off = fdt_node_offset_by_prop_value(fdt, -1, "device_type", "memory", 7); off >= 0;
	     off = fdt_node_offset_by_prop_value(fdt, off, "device_type", "memory", 7))
		n++;
	cr_expect_eq(n, (int)m->nr_mem);
}

static void check_cpus(const void *fdt, const struct fdt_machine *m)
{
	int cpus = node(fdt, "/cpus");
	expect_u32(fdt, cpus, "#address-cells", 1);
	expect_u32(fdt, cpus, "#size-cells", 0);
	cr_expect_eq(count_subnodes(fdt, cpus), (int)m->ncpus);
	for (unsigned i = 0; i < m->ncpus; i++) {
		char path[32];
		snprintf(path, sizeof(path), "/cpus/cpu@%x", m->cpu_id[i]);
		int off = node(fdt, path);
		expect_str(fdt, off, "device_type", "cpu");
		expect_u32(fdt, off, "reg", m->cpu_id[i]);
		cr_expect_eq(count_props(fdt, off), 2);
	}
}

static void check_apics(const void *fdt)
{
	int io = node(fdt, "/interrupt-controller@fec00000");
	expect_str(fdt, io, "compatible", "intel,ce4100-ioapic");
	expect_empty_prop(fdt, io, "interrupt-controller");
	expect_u32(fdt, io, "#interrupt-cells", 2);
	expect_u32(fdt, io, "#address-cells", 0);
	expect_reg64(fdt, io, 0xfec00000, 0x1000);
	cr_expect_gt(fdt_get_phandle(fdt, io), 0);
	cr_expect_eq(count_props(fdt, io), 6);
	int la = node(fdt, "/lapic@fee00000");
	expect_str(fdt, la, "compatible", "intel,ce4100-lapic");
	expect_reg64(fdt, la, 0xfee00000, 0x1000);
	cr_expect_eq(count_props(fdt, la), 2);
	/* Linux finds them by compatible. */
	cr_expect_eq(fdt_node_offset_by_compatible(fdt, -1, "intel,ce4100-ioapic"), io);
	cr_expect_eq(fdt_node_offset_by_compatible(fdt, -1, "intel,ce4100-lapic"), la);
}

static void check_uart_io(const void *fdt)
{
	int isa = node(fdt, "/isa");
	expect_str(fdt, isa, "compatible", "isa");
	expect_str(fdt, isa, "device_type", "isa");
	expect_u32(fdt, isa, "#address-cells", 2);
	expect_u32(fdt, isa, "#size-cells", 1);
	cr_expect_eq(count_props(fdt, isa), 4);
	cr_expect_eq(count_subnodes(fdt, isa), 1);
	int s = node(fdt, "/isa/serial@i3f8");
	expect_str(fdt, s, "compatible", "ns16550a");
	expect_cells(fdt, s, "reg", (const uint32_t[]){ 1, 0x3f8, 8 }, 3);
	expect_u32(fdt, s, "clock-frequency", 1843200);
	expect_cells(fdt, s, "interrupts", (const uint32_t[]){ 4, X86_EDGE_RISING }, 2);
	cr_expect_eq(count_props(fdt, s), 4);
}

static void check_virtio(const void *fdt, const struct fdt_machine *m)
{
	/* Every virtio,mmio node, in the description's order. */
	int off = -1;
	for (unsigned k = 0; k < m->nr_virtio_mmio; k++) {
		off = fdt_node_offset_by_compatible(fdt, off, "virtio,mmio");
		cr_assert_geq(off, 0, "virtio-mmio device %u missing", k);
		const struct fdt_virtio_mmio *v = &m->virtio_mmio[k];
		char name[40];
		snprintf(name, sizeof(name), "virtio_mmio@%llx", (unsigned long long)v->base);
		cr_expect_str_eq(fdt_get_name(fdt, off, NULL), name);
		cr_expect_eq(fdt_parent_offset(fdt, off), 0, "%s is a child of the root", name);
		expect_str(fdt, off, "compatible", "virtio,mmio");
		expect_reg64(fdt, off, v->base, v->size);
		expect_cells(fdt, off, "interrupts", (const uint32_t[]){ v->irq.line, X86_EDGE_RISING }, 2);
		cr_expect_eq(count_props(fdt, off), 3);
	}
	cr_expect_lt(fdt_node_offset_by_compatible(fdt, off, "virtio,mmio"), 0, "no extra devices");
}

/* QEMU's pvpanic-mmio binding: a root node with compatible and reg only. */
static void check_pvpanic(const void *fdt, const struct fdt_machine *m)
{
	int off = fdt_node_offset_by_compatible(fdt, -1, "qemu,pvpanic-mmio");
	if (!m->pvpanic.size) {
		cr_expect_lt(off, 0, "no pvpanic node without the device");
		return;
	}
	cr_assert_geq(off, 0, "no pvpanic node");
	char name[40];
	snprintf(name, sizeof(name), "pvpanic-mmio@%llx", (unsigned long long)m->pvpanic.base);
	cr_expect_str_eq(fdt_get_name(fdt, off, NULL), name);
	cr_expect_eq(fdt_parent_offset(fdt, off), 0, "%s is a child of the root", name);
	expect_reg64(fdt, off, m->pvpanic.base, m->pvpanic.size);
	cr_expect_eq(count_props(fdt, off), 2);
	cr_expect_lt(fdt_node_offset_by_compatible(fdt, off, "qemu,pvpanic-mmio"), 0, "one pvpanic node");
}

static void check_machine(unsigned ncpus, uint64_t mem, unsigned nvirtio, unsigned want_regions)
{
	struct fdt_machine m;
	make_machine(&m, ncpus, mem, nvirtio, "console=ttyS0 test=net-echo");
	cr_assert_eq(m.nr_mem, want_regions, "guest_mem split %llu MiB into %u regions",
		     (unsigned long long)(mem / MiB), m.nr_mem);
	void *fdt = build(&m);
	check_root(fdt, &m);
	check_reservations(fdt, &m);
	check_chosen(fdt, &m);
	check_memory(fdt, &m);
	check_cpus(fdt, &m);
	check_apics(fdt);
	check_uart_io(fdt);
	check_virtio(fdt, &m);
	check_pvpanic(fdt, &m);
	free(fdt);
}

/* ---- machines ---------------------------------------------------------- */

Test(fdt, one_cpu_low_ram_no_devices)
{
	check_machine(1, 256 * MiB, 0, 1);
}

Test(fdt, eight_cpus_low_ram_one_device)
{
	check_machine(8, 256 * MiB, 1, 1);
}

Test(fdt, ram_up_to_the_hole_is_one_region)
{
	check_machine(1, GUEST_MMIO_HOLE_START, 2, 1);
}

Test(fdt, ram_above_the_hole_is_a_second_memory_node)
{
	check_machine(8, 4 * GiB, 8, 2);
	check_machine(1, 8 * GiB, 4, 2);
}

Test(fdt, every_device_count_from_0_to_8)
{
	for (unsigned n = 0; n <= 8; n++)
		check_machine(n % 2 ? 8 : 1, n < 4 ? 64 * MiB : 5 * GiB, n, n < 4 ? 1 : 2);
}

Test(fdt, above_hole_memory_node_is_at_4_gib)
{
	struct fdt_machine m;
	make_machine(&m, 2, 6 * GiB, 0, NULL);
	void *fdt = build(&m);
	expect_reg64(fdt, node(fdt, "/memory@0"), 0, GUEST_MMIO_HOLE_START);
	expect_reg64(fdt, node(fdt, "/memory@100000000"), 4 * GiB, 6 * GiB - GUEST_MMIO_HOLE_START);
	free(fdt);
}

Test(fdt, null_bootargs_is_empty)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	void *fdt = build(&m);
	expect_str(fdt, node(fdt, "/chosen"), "bootargs", "");
	free(fdt);
}

Test(fdt, sparse_cpu_ids_name_the_nodes)
{
	struct fdt_machine m;
	make_machine(&m, 3, 64 * MiB, 0, NULL);
	m.cpu_id[0] = 0;
	m.cpu_id[1] = 2;
	m.cpu_id[2] = 0x1f;
	void *fdt = build(&m);
	check_cpus(fdt, &m);
	cr_expect_lt(fdt_path_offset(fdt, "/cpus/cpu@1"), 0);
	free(fdt);
}

Test(fdt, level_triggered_device_gets_sense_1)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 1, NULL);
	m.virtio_mmio[0].irq = (struct fdt_irq){ 23, FDT_IRQ_LEVEL_HIGH };
	void *fdt = build(&m);
	expect_cells(fdt, node(fdt, "/virtio_mmio@d0000000"), "interrupts",
		     (const uint32_t[]){ 23, X86_LEVEL_HIGH }, 2);
	free(fdt);
}

Test(fdt, mmio_uart_sits_at_the_root)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.uart = (struct fdt_uart){ .space = FDT_UART_MMIO, .base = 0x9000000, .size = 0x1000,
				    .clock_hz = 24000000, .irq = { 7, FDT_IRQ_LEVEL_HIGH } };
	void *fdt = build(&m);
	cr_expect_lt(fdt_path_offset(fdt, "/isa"), 0, "no ISA bus without an I/O UART");
	int s = node(fdt, "/serial@9000000");
	expect_str(fdt, s, "compatible", "ns16550a");
	expect_reg64(fdt, s, 0x9000000, 0x1000);
	expect_u32(fdt, s, "clock-frequency", 24000000);
	expect_cells(fdt, s, "interrupts", (const uint32_t[]){ 7, X86_LEVEL_HIGH }, 2);
	expect_str(fdt, node(fdt, "/chosen"), "stdout-path", "/serial@9000000");
	free(fdt);
}

Test(fdt, no_uart_means_no_serial_node_and_no_stdout_path)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.uart.space = FDT_UART_NONE;
	void *fdt = build(&m);
	cr_expect_lt(fdt_path_offset(fdt, "/isa"), 0);
	cr_expect_lt(fdt_node_offset_by_compatible(fdt, -1, "ns16550a"), 0);
	cr_expect_null(fdt_getprop(fdt, node(fdt, "/chosen"), "stdout-path", NULL));
	free(fdt);
}

/* The biggest description the builder takes still fits the PVH slot. */
Test(fdt, largest_machine_fits_the_pvh_slot)
{
	struct fdt_machine m;
	make_machine(&m, FDT_MAX_CPUS, 8 * GiB, 0, NULL);
	static char bootargs[BOOT_CMDLINE_MAX];
	memset(bootargs, 'x', sizeof(bootargs) - 1);
	m.bootargs = bootargs;
	m.nr_virtio_mmio = FDT_MAX_VIRTIO_MMIO;
	for (unsigned k = 0; k < FDT_MAX_VIRTIO_MMIO; k++)
		m.virtio_mmio[k] = (struct fdt_virtio_mmio){
			.base = MINIVMM_MMIO_BASE + k * MINIVMM_MMIO_WINDOW, .size = MINIVMM_MMIO_WINDOW,
			.irq = { k % 24, FDT_IRQ_EDGE_RISING } };
	m.pvpanic.base = MINIVMM_MMIO_BASE + FDT_MAX_VIRTIO_MMIO * MINIVMM_MMIO_WINDOW;   /* after them */
	for (unsigned i = m.nr_reserved; i < FDT_MAX_RESERVED; i++)
		m.reserved[m.nr_reserved++] = (struct fdt_range){ 0x10000 * (i + 1), 0x1000 };
	void *fdt = build(&m);
	cr_expect_leq(fdt_totalsize(fdt), BOOT_FDT_MAX);
	check_cpus(fdt, &m);
	check_virtio(fdt, &m);
	check_pvpanic(fdt, &m);
	free(fdt);
}

Test(fdt, no_pvpanic_means_no_pvpanic_node)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 1, NULL);
	m.pvpanic.size = 0;
	void *fdt = build(&m);
	check_root(fdt, &m);
	check_pvpanic(fdt, &m);
	free(fdt);
}

/* ---- refusals ----------------------------------------------------------- */

static void expect_refused(const struct fdt_machine *m, size_t size, int code, const char *msg)
{
	void *blob = malloc(BUF_SIZE);
	struct vmm_err err = { 0 };
	cr_expect_eq(fdt_build(m, blob, size, &err), -code, "wanted: %s", msg);
	cr_expect_str_eq(err.msg, msg);
	free(blob);
}

Test(fdt, refuses_a_buffer_too_small)
{
	struct fdt_machine m;
	make_machine(&m, 8, 64 * MiB, 8, NULL);
	expect_refused(&m, 256, E2BIG, "device tree does not fit in 256 bytes");
}

Test(fdt, refuses_no_cpu_and_too_many)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.ncpus = 0;
	expect_refused(&m, BUF_SIZE, EINVAL, "device tree: 0 CPUs, expected 1 to 256");
	m.ncpus = FDT_MAX_CPUS + 1;
	expect_refused(&m, BUF_SIZE, EINVAL, "device tree: 257 CPUs, expected 1 to 256");
}

Test(fdt, refuses_two_cpus_with_one_id)
{
	struct fdt_machine m;
	make_machine(&m, 4, 64 * MiB, 0, NULL);
	m.cpu_id[3] = 1;
	expect_refused(&m, BUF_SIZE, EINVAL, "device tree: CPUs 1 and 3 share the ID 1");
}

Test(fdt, refuses_no_ram_and_bad_ram_regions)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.nr_mem = 0;
	expect_refused(&m, BUF_SIZE, EINVAL, "device tree: 0 RAM regions, expected 1 to 4");
	m.nr_mem = 2;
	m.mem[1] = (struct fdt_range){ 32 * MiB, 64 * MiB };
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: RAM region 1 at 0x2000000 overlaps RAM region 0 at 0x0");
	m.mem[1] = (struct fdt_range){ 0xfffffffffffff000ULL, 0x2000 };
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: RAM region 1 at 0xfffffffffffff000 (+0x2000) is empty or wraps");
	m.mem[1] = (struct fdt_range){ 4 * GiB, 0 };
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: RAM region 1 at 0x100000000 (+0x0) is empty or wraps");
}

Test(fdt, accepts_ram_ending_at_2_pow_64)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.mem[m.nr_mem++] = (struct fdt_range){ 0xffffffff00000000ULL, 0x100000000ULL };
	void *fdt = build(&m);
	check_memory(fdt, &m);
	free(fdt);
}

Test(fdt, refuses_overlapping_virtio_windows)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 3, NULL);
	m.virtio_mmio[2].base = m.virtio_mmio[0].base;
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: virtio-mmio window 2 at 0xd0000000 overlaps virtio-mmio window 0 at 0xd0000000");
}

Test(fdt, refuses_a_pvpanic_register_in_a_virtio_window_or_wrapping)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 2, NULL);
	m.pvpanic.base = m.virtio_mmio[1].base + 0x10;
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: pvpanic register at 0xd0001010 overlaps virtio-mmio window 1 at 0xd0001000");
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.pvpanic.base = UINT64_MAX;
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: pvpanic register at 0xffffffffffffffff (+0x2) wraps");
}

Test(fdt, refuses_too_many_virtio_devices)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.nr_virtio_mmio = FDT_MAX_VIRTIO_MMIO + 1;
	expect_refused(&m, BUF_SIZE, EINVAL, "device tree: 33 virtio-mmio devices, at most 32");
}

Test(fdt, refuses_interrupt_lines_the_controller_lacks)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 2, NULL);
	m.virtio_mmio[1].irq.line = 24;
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: virtio-mmio device 1 uses interrupt 24; the controller has 24 lines");
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.uart.irq.line = 99;
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: the UART uses interrupt 99; the controller has 24 lines");
}

Test(fdt, refuses_bad_uart)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.uart.clock_hz = 0;
	expect_refused(&m, BUF_SIZE, EINVAL, "device tree: UART clock-frequency is 0");
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.uart.base = 0x100000000ULL;
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: UART registers at 0x100000000 (+0x8) are empty or out of range");
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.uart.size = 0;
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: UART registers at 0x3f8 (+0x0) are empty or out of range");
}

Test(fdt, refuses_missing_names_and_unknown_controller)
{
	struct fdt_machine m;
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.compatible = NULL;
	expect_refused(&m, BUF_SIZE, EINVAL, "device tree: the machine needs a model and a compatible string");
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.intc.kind = (enum fdt_intc_kind)7;
	expect_refused(&m, BUF_SIZE, EINVAL, "device tree: unknown interrupt controller kind 7");
	make_machine(&m, 1, 64 * MiB, 0, NULL);
	m.intc.lapic = m.intc.ioapic;
	expect_refused(&m, BUF_SIZE, EINVAL,
		       "device tree: APIC window 1 at 0xfec00000 overlaps APIC window 0 at 0xfec00000");
}
