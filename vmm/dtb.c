/* SPDX-License-Identifier: Apache-2.0 */
/* The VM described to the device-tree builder (boot/fdt.c) from what was
 * actually created: guest RAM regions, the vCPUs, the in-kernel IOAPIC and
 * LAPIC, COM1, the virtio-mmio transports with their windows and GSIs, and
 * the pvpanic register. */
#include "vmm/dtb.h"
#include "vmm/api_args.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot/acpi.h"
#include "boot/boot.h"
#include "boot/fdt.h"
#include "minivmm_abi.h"
#include "vmm/vm.h"

#define PC_UART_CLOCK_HZ  1843200   /* 115200 baud at divisor 1 */
#define APIC_WINDOW       0x1000

_Static_assert(GUEST_MEM_MAX_REGIONS <= FDT_MAX_MEM_REGIONS && MINIVMM_MAX_CPUS <= FDT_MAX_CPUS &&
	       MINIVMM_MAX_NETS <= FDT_MAX_VIRTIO_MMIO,
	       "the device tree holds every RAM region, vCPU and network device a VM can have");

static void vm_describe(const struct minivmm *vm, struct fdt_machine *m)
{
	memset(m, 0, sizeof(*m));
	m->model = "minivmm";
	m->compatible = "minivmm,x86-64";
	for (unsigned i = 0; i < vm->mem.nr_regions; i++)
		m->mem[m->nr_mem++] = (struct fdt_range){ vm->mem.region[i].gpa, vm->mem.region[i].size };
	/* The firmware area below 1 MiB (EBDA with the MP table, the VGA hole,
	 * ACPI tables, the BIOS area) is RAM to KVM but not the guest's to use;
	 * the e820 map says the same. */
	m->reserved[m->nr_reserved++] = (struct fdt_range){ BOOT_EBDA_START,
							    BOOT_KERNEL_MIN - BOOT_EBDA_START };
	m->ncpus = vm->ncpus;
	for (unsigned i = 0; i < vm->ncpus; i++)
		m->cpu_id[i] = i;   /* APIC ID = vCPU index (cpu_x86.c, mptable.c) */
	m->intc = (struct fdt_intc){
		.kind = FDT_INTC_X86_APIC, .nr_lines = ACPI_IOAPIC_PINS,
		.ioapic = { MINIVMM_IOAPIC_BASE, APIC_WINDOW },
		.lapic = { MINIVMM_LAPIC_BASE, APIC_WINDOW },
	};
	/* COM1 exists whatever --serial says (with "none" it discards output). */
	m->uart = (struct fdt_uart){
		.space = FDT_UART_IO, .base = MINIVMM_PORT_COM1, .size = 8,
		.clock_hz = PC_UART_CLOCK_HZ,
		.irq = { MINIVMM_IRQ_COM1, FDT_IRQ_EDGE_RISING },
	};
	for (unsigned i = 0; i < vm->nr_nets; i++) {
		const struct virtio_mmio *t = vm->net[i]->transport;
		/* irqfd pulses the line: edge-triggered, active high. */
		m->virtio_mmio[m->nr_virtio_mmio++] = (struct fdt_virtio_mmio){
			.base = t->base, .size = MINIVMM_MMIO_WINDOW,
			.irq = { t->gsi, FDT_IRQ_EDGE_RISING },
		};
	}
	m->pvpanic = (struct fdt_range){ MINIVMM_PVPANIC_MMIO_BASE, MINIVMM_PVPANIC_MMIO_SIZE };
	m->bootargs = cmdline_str(&vm->cmdline);
}

int vm_build_dtb(struct minivmm *vm, struct vmm_err *err)
{
	struct fdt_machine *m = malloc(sizeof(*m));
	void *blob = malloc(BOOT_FDT_MAX);
	int rc = m && blob ? 0 : vmm_err_set(err, ENOMEM, "out of memory for the device tree");
	if (rc == 0) {
		vm_describe(vm, m);
		rc = fdt_build(m, blob, BOOT_FDT_MAX, err);
	}
	free(m);
	if (rc < 0) {
		free(blob);
		return rc;
	}
	/* Keep only the tree, not the 64 KiB it was built in. */
	void *fit = realloc(blob, (size_t)rc);
	free(vm->fdt);
	vm->fdt = fit ? fit : blob;
	vm->fdt_size = (size_t)rc;
	return 0;
}

int minivmm_write_dtb(const struct minivmm *vm, const char *path, char *errbuf, size_t errlen)
{
	API_REQUIRE(vm);
	API_REQUIRE(path);
	if (!vm->fdt) {
		api_errbuf(errbuf, errlen, "the VM has no device tree");
		return -ENOENT;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		api_errbuf(errbuf, errlen, "cannot create device tree file '%s': %s", path, strerror(e));
		return -e;
	}
	const char *p = vm->fdt;
	size_t left = vm->fdt_size;
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(fd);
			api_errbuf(errbuf, errlen, "cannot write device tree file '%s': %s", path, strerror(e));
			return -e;
		}
		p += n;
		left -= (size_t)n;
	}
	if (close(fd) < 0) {
		int e = errno;
		api_errbuf(errbuf, errlen, "cannot write device tree file '%s': %s", path, strerror(e));
		return -e;
	}
	return 0;
}
