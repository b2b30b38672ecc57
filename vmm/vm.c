/* SPDX-License-Identifier: Apache-2.0 */
/* The VM: assembles KVM, guest memory, devices and vCPUs, runs them and
 * stops them. Implements the embedding API of minivmm.h. */
#include "vmm/vm.h"
#include "vmm/api_args.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "boot/acpi.h"
#include "boot/boot.h"
#include "boot/cpu_x86.h"
#include "minivmm_abi.h"
#include "vmm/caps.h"
#include "vmm/config.h"
#include "vmm/dtb.h"
#include "vmm/host_limits.h"
#include "vmm/seccomp.h"
#include "vmm/vcpu.h"

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- stop protocol --------------------------------------------------- */

/* Everything here is async-signal-safe (atomics, a byte copy, write()), so
 * minivmm_stop() works from a signal handler as well as from any thread. */
void vm_request_stop(struct minivmm *vm, int status, const char *reason)
{
	int unclaimed = 0;
	if (!__atomic_compare_exchange_n(&vm->stop_claimed, &unclaimed, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;   /* the first request wins */
	vm->exit_status = status;
	size_t i = 0;
	for (; reason && reason[i] && i + 1 < sizeof(vm->stop_reason); i++)
		vm->stop_reason[i] = reason[i];
	vm->stop_reason[i] = '\0';
	/* Release: whoever sees `stopping` sees the status and reason. */
	__atomic_store_n(&vm->stopping, true, __ATOMIC_RELEASE);
	int saved_errno = errno;   /* a signal handler must leave it alone */
	uint64_t one = 1;
	if (write(vm->stop_fd, &one, sizeof(one)) < 0) {
		/* Only on counter overflow: the thread running the VM is
		 * woken already. */
	}
	errno = saved_errno;
}

void minivmm_request_stop(struct minivmm *vm, int status, const char *reason)
{
	if (vm)
		vm_request_stop(vm, status, reason);
}

void minivmm_stop(struct minivmm *vm)
{
	if (vm)
		vm_request_stop(vm, MINIVMM_EXIT_OK, "stopped by minivmm_stop()");
}

const char *minivmm_stop_reason(const struct minivmm *vm)
{
	if (!vm)
		return "";
	return __atomic_load_n(&vm->stop_claimed, __ATOMIC_ACQUIRE) && vm_is_stopping(vm) ?
		vm->stop_reason : "";
}

/* ---- the machine, as devices see it (base/machine.h) ----------------- */

static void vm_machine_request_stop(void *opaque, int status, const char *reason)
{
	vm_request_stop(opaque, status, reason);
}

static int vm_machine_set_irq(void *opaque, unsigned gsi, int level)
{
	struct minivmm *vm = opaque;
	return irqchip_set_irq(&vm->irqchip, gsi, level);
}

static int vm_machine_ioeventfd(void *opaque, uint64_t addr, unsigned len, uint64_t datamatch, int fd,
				bool assign)
{
	struct minivmm *vm = opaque;
	if (!assign && vm->tearing_down)
		return 0;   /* the VM fd's close frees it (vm->tearing_down) */
	return kvm_ioeventfd(&vm->kvm, addr, len, datamatch, fd, assign);
}

static int vm_machine_irqfd(void *opaque, int fd, unsigned gsi, bool assign)
{
	struct minivmm *vm = opaque;
	if (!assign && vm->tearing_down)
		return 0;   /* the VM fd's close frees it (vm->tearing_down) */
	return kvm_irqfd(&vm->kvm, fd, gsi, assign);
}

static int vm_machine_coalesce_pio(void *opaque, uint16_t port, unsigned len, bool assign)
{
	struct minivmm *vm = opaque;
	return kvm_coalesce_pio(&vm->kvm, port, len, assign);
}

static unsigned vm_machine_drain_queued(void *opaque)
{
	struct minivmm *vm = opaque;
	return coalesced_ring_drain(&vm->coalesced);
}

static void vm_log_out(struct minivmm *vm, const char *line)
{
	if (vm->cfg.log)
		vm->cfg.log(vm->cfg.log_opaque, line);
	else
		fprintf(stderr, "minivmm: %s\n", line);
}

static void vm_machine_log(void *opaque, const char *line)
{
	struct minivmm *vm = opaque;
	pthread_mutex_lock(&vm->log_lock);
	if (vm->log_holding) {
		size_t len = strlen(line);
		char *held = realloc(vm->log_held, vm->log_held_len + len + 2);
		if (held) {
			memcpy(held + vm->log_held_len, line, len);
			held[vm->log_held_len + len] = '\n';
			held[vm->log_held_len + len + 1] = '\0';
			vm->log_held = held;
			vm->log_held_len += len + 1;
		}
		pthread_mutex_unlock(&vm->log_lock);
		return;
	}
	pthread_mutex_unlock(&vm->log_lock);
	vm_log_out(vm, line);
}

/* The end of building: the held lines are said (flush) or dropped. */
static void vm_log_release(struct minivmm *vm, bool flush)
{
	pthread_mutex_lock(&vm->log_lock);
	vm->log_holding = false;
	char *held = vm->log_held;
	vm->log_held = NULL;
	vm->log_held_len = 0;
	pthread_mutex_unlock(&vm->log_lock);
	for (char *line = held, *nl; flush && line && (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		vm_log_out(vm, line);
	}
	free(held);
}

/* --boot-trace: one line per phase, with the time since the VMM started. */
static void vm_trace(struct minivmm *vm, const char *phase)
{
	if (!vm->cfg.boot_trace)
		return;
	char line[160];
	snprintf(line, sizeof(line), "boot trace: %8.3f ms  %s",
		 (double)(monotonic_ns() - vm->cfg.start_ns) / 1e6, phase);
	vm_machine_log(vm, line);
}

/* ---- input files --------------------------------------------------- */

struct mapped_file {
	const uint8_t *data;
	size_t size;
};

/* Files up to this size are read in at once (MAP_POPULATE): the loaders
 * read all of a kernel or initrd of a usual size, and one populate costs
 * less than a page fault per 4 KiB (nested, where a fault is an emulated
 * exception, ~0.1 s for a 10 MiB initrd). A bigger file is read as the
 * loader gets to it: a huge file that is no kernel is refused on its
 * header, not after reading it all. */
#define MAP_POPULATE_MAX (64ull << 20)

/* Map a whole file read-only; the mapping is dropped once it is copied
 * into guest memory, so it does not stay in the VMM's footprint. max: the
 * most a file can be to be used at all (0: no bound), checked from its size
 * before anything is read: a bigger one returns -E2BIG with f->size set and
 * err untouched, for the caller to say why. */
static int map_file(const char *what, const char *path, uint64_t max, struct mapped_file *f,
		    struct vmm_err *err)
{
	f->data = NULL;
	f->size = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return vmm_err_sys(err, errno, "cannot open %s '%s'", what, path);
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return vmm_err_sys(err, e, "cannot stat %s '%s'", what, path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return vmm_err_set(err, EINVAL, "%s '%s' is not a regular file", what, path);
	}
	if (st.st_size == 0) {
		close(fd);
		return vmm_err_set(err, EINVAL, "%s '%s' is empty", what, path);
	}
	if (max && (uint64_t)st.st_size > max) {
		close(fd);
		f->size = (size_t)st.st_size;
		return -E2BIG;
	}
	int populate = (uint64_t)st.st_size <= MAP_POPULATE_MAX ? MAP_POPULATE : 0;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | populate, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED)
		return vmm_err_sys(err, e, "cannot read %s '%s'", what, path);
	f->data = p;
	f->size = (size_t)st.st_size;
	return 0;
}

static void unmap_file(struct mapped_file *f)
{
	if (f->data)
		munmap((void *)f->data, f->size);
	f->data = NULL;
}

/* ---- assembly ------------------------------------------------------- */

/* The serial output file. O_NONBLOCK: opening a FIFO for writing would
 * otherwise wait, unkillably once signals are blocked, for a reader; this
 * way a FIFO without one is an error now, and the UART's writes never block
 * (it waits for a slow reader with poll, for a bounded time). */
static int vm_open_serial_file(struct minivmm *vm, struct vmm_err *err)
{
	const char *path = vm->cfg.serial_path;
	const int flags = O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	/* Made here or opened as it is: a refused run removes only a file it
	 * made (minivmm_create). */
	vm->serial_file_fd = open(path, flags | O_CREAT | O_EXCL, 0644);
	vm->serial_file_created = vm->serial_file_fd >= 0;
	if (vm->serial_file_fd < 0 && errno == EEXIST)
		vm->serial_file_fd = open(path, flags);
	if (vm->serial_file_fd >= 0)
		return 0;
	int e = errno;
	struct stat st;
	if (e == ENXIO && stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
		return vmm_err_set(err, e, "serial output '%s' is a FIFO with no reader: start the reader first",
				   path);
	return vmm_err_sys(err, e, "cannot open serial output '%s'", path);
}

static int vm_add_serial(struct minivmm *vm, struct vmm_err *err)
{
	struct serial_config sc = { .in_fd = -1, .out_fd = -1, .gsi = MINIVMM_IRQ_COM1,
				    .thr_port = MINIVMM_PORT_COM1,
				    .stopping = &vm->stopping };
	switch (vm->cfg.serial) {
	case MINIVMM_SERIAL_STDIO:
		sc.in_fd = vm->cfg.serial_in_fd;
		sc.out_fd = vm->cfg.serial_out_fd;
		sc.raw_terminal = true;
		/* The program's own descriptor: a slow reader (a pager, a
		 * terminal) holds the guest back, as a real UART would, until
		 * the VM is stopped. */
		sc.stall_ms = 0;
		snprintf(sc.out_name, sizeof(sc.out_name), "console output (fd %d)", sc.out_fd);
		break;
	case MINIVMM_SERIAL_FILE: {
		int rc = vm_open_serial_file(vm, err);
		if (rc)
			return rc;
		sc.out_fd = vm->serial_file_fd;
		/* A file nobody reads (a FIFO whose reader stopped reading)
		 * must not hold the guest back forever. */
		sc.stall_ms = 2000;
		snprintf(sc.out_name, sizeof(sc.out_name), "serial output '%s'", vm->cfg.serial_path);
		break;
	}
	case MINIVMM_SERIAL_NONE:
		break;
	}
	int rc = serial_create(&vm->serial, &sc, &vm->events, err);
	if (rc)
		return rc;
	struct bus_device dev = serial_bus_device(vm->serial);
	return bus_add(&vm->pio_bus, MINIVMM_PORT_COM1, 8, &dev, err);
}

/* A split irqchip leaves the PIT's ports to userspace: a counting 8254
 * there lets guests without kvm-clock or a timing leaf calibrate. */
static int vm_add_pit(struct minivmm *vm, struct vmm_err *err)
{
	pit_init(&vm->pit, &vm->events, NULL, NULL);
	struct bus_device counters = pit_counter_ports(&vm->pit);
	struct bus_device speaker = pit_speaker_port(&vm->pit);
	int rc = bus_add(&vm->pio_bus, PIT_PORT_BASE, PIT_PORT_COUNT, &counters, err);
	return rc ? rc : bus_add(&vm->pio_bus, PIT_PORT_SPEAKER, 1, &speaker, err);
}

/* One register, on its ISA port (the DSDT's) and in MMIO (the device tree's). */
static int vm_add_pvpanic(struct minivmm *vm, struct vmm_err *err)
{
	pvpanic_init(&vm->pvpanic, &vm->events);
	struct bus_device dev = pvpanic_device(&vm->pvpanic);
	int rc = bus_add(&vm->pio_bus, MINIVMM_PORT_PVPANIC, 1, &dev, err);
	return rc ? rc : bus_add(&vm->mmio_bus, MINIVMM_PVPANIC_MMIO_BASE, MINIVMM_PVPANIC_MMIO_SIZE,
				 &dev, err);
}

static int vm_add_legacy_devices(struct minivmm *vm, struct vmm_err *err)
{
	/* The interrupt controllers first: the UART's set-up may raise its line. */
	int rc = irqchip_init(&vm->irqchip, &vm->kvm, &vm->events, vm->ncpus, &vm->mmio_bus, err);
	if (rc == 0)
		rc = vm_add_serial(vm, err);
	if (rc == 0 && vm->kvm.split_irqchip)
		rc = vm_add_pit(vm, err);
	if (rc)
		return rc;

	i8042_init(&vm->i8042, &vm->events);
	struct bus_device data = i8042_data_port(&vm->i8042);
	struct bus_device cmd = i8042_command_port(&vm->i8042);
	rc = bus_add(&vm->pio_bus, MINIVMM_PORT_I8042_DATA, 1, &data, err);
	if (rc == 0)
		rc = bus_add(&vm->pio_bus, MINIVMM_PORT_I8042_CMD, 1, &cmd, err);
	if (rc)
		return rc;

	debug_ports_init(&vm->debug_ports, &vm->events, vm->cfg.start_ns);
	struct bus_device dbg = debug_exit_device(&vm->debug_ports);
	struct bus_device timer = boot_timer_device(&vm->debug_ports);
	/* Two ports wide, like QEMU's isa-debug-exit with iosize=2. */
	rc = bus_add(&vm->pio_bus, MINIVMM_PORT_DEBUG_EXIT, 2, &dbg, err);
	if (rc == 0)
		rc = bus_add(&vm->pio_bus, MINIVMM_PORT_BOOT_TIMER, 4, &timer, err);
	if (rc == 0)
		rc = vm_add_pvpanic(vm, err);
	if (rc == 0 && vm->cfg.acpi) {
		/* Hardware-reduced ACPI's sleep registers: S5 is poweroff. */
		acpi_pm_init(&vm->acpi_pm, &vm->events, ACPI_S5_SLP_TYP);
		struct bus_device pm = acpi_pm_device(&vm->acpi_pm);
		rc = bus_add(&vm->pio_bus, ACPI_PM_PORT, ACPI_PM_PORT_LEN, &pm, err);
	}
	return rc;
}

/* fixed-buffers=on pins all guest RAM, in every worker's io_uring, and an
 * xdp device pins it (and the host tail) as its UMEM. Fault it in once here,
 * so that each registration (at start-up, DRIVER_OK and every restart) only
 * pins pages that are there: 256 MiB took 1.5 s to register from scratch
 * here and 20 ms once present (an AF_XDP UMEM with huge pages: 1.9 s and
 * 1-2 ms). */
static void vm_prefault_for_pinning(struct minivmm *vm)
{
	bool wanted = false;
	for (unsigned i = 0; i < vm->cfg.nr_nets; i++)
		wanted |= (vm->cfg.net[i].uring_fixed_buffers && vm->cfg.net[i].engine == MINIVMM_ENGINE_URING) ||
			  vm->cfg.net[i].backend == MINIVMM_NET_XDP;
	if (!wanted)
		return;
	if (madvise(vm->mem.mapping, vm->mem.mapping_size, MADV_POPULATE_WRITE) < 0) {
		/* Older kernels: the registration faults the pages in itself. */
	}
	vm_trace(vm, "guest memory faulted in (to be pinned)");
}

/* threads=auto: the host's cores left after the vCPUs (at least one), from
 * the CPUs this process may run on. A busy worker on a vCPU's core only
 * takes time from it (measured: 2 pairs with a worker each on 2 cores move
 * 0.63 Mpps where 1 pair moves 1.1 Mpps). */
static unsigned vm_auto_workers(const struct minivmm *vm)
{
	cpu_set_t set;
	unsigned cores = sched_getaffinity(0, sizeof(set), &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
	return cores > vm->ncpus ? cores - vm->ncpus : 1;
}

/* The backend configuration of device i, from --net (or the embedding
 * API). The VM chooses the backend; the virtio-net device only sees struct
 * net_backend. */
static int vm_backend_config(const struct minivmm *vm, unsigned i, struct net_backend_config *bc,
			     struct vmm_err *err)
{
	static const enum net_backend_kind kinds[] = {
		[MINIVMM_NET_TAP] = NET_BACKEND_TAP,
		[MINIVMM_NET_PACKET] = NET_BACKEND_PACKET,
		[MINIVMM_NET_XDP] = NET_BACKEND_XDP,
	};
	const struct minivmm_net_config *nc = &vm->cfg.net[i];
	if ((unsigned)nc->backend >= sizeof(kinds) / sizeof(kinds[0]))
		return vmm_err_set(err, EINVAL, "unknown network backend %d", (int)nc->backend);
	*bc = (struct net_backend_config){
		.kind = kinds[nc->backend], .index = i, .machine = &vm->events,
		.queues = nc->queues, .mtu = nc->mtu, .queue_size = nc->queue_size,
		.fanout = nc->fanout, .rx_ring = !nc->rx_recv, .qdisc_bypass = nc->qdisc_bypass,
		.xdp_zero_copy = nc->xdp_zero_copy, .mem = &vm->mem,
	};
	snprintf(bc->ifname, sizeof(bc->ifname), "%s", nc->ifname);
	if (nc->backend != MINIVMM_NET_TAP)
		return 0;
	/* ip= and bridge= (validated): the tap backend applies them, and
	 * undoes them when it goes. */
	snprintf(bc->host.bridge, sizeof(bc->host.bridge), "%s", nc->bridge);
	bc->host.has_addr = nc->ip[0] != '\0';
	return bc->host.has_addr ? host_addr_parse(nc->ip, &bc->host.addr, err) : 0;
}

/* Host-only memory after guest RAM the backends need (the xdp backend's
 * bounce chunks live inside its UMEM, which is the whole mapping). */
static uint64_t vm_host_tail_bytes(const struct minivmm *vm)
{
	uint64_t total = 0;
	for (unsigned i = 0; i < vm->cfg.nr_nets && i < MINIVMM_MAX_NETS; i++) {
		struct net_backend_config bc;
		struct vmm_err e = { 0 };
		if (vm_backend_config(vm, i, &bc, &e) == 0)
			total += net_backend_host_tail_bytes(&bc);
	}
	return total;
}

/* Device i's backend, with its slice of the host tail (handed out in order,
 * as vm_host_tail_bytes added them up). */
static int vm_create_backend(const struct minivmm *vm, unsigned i, uint64_t *tail_used,
			     struct net_backend **out, struct vmm_err *err)
{
	struct net_backend_config bc;
	int rc = vm_backend_config(vm, i, &bc, err);
	if (rc)
		return rc;
	uint64_t want = net_backend_host_tail_bytes(&bc);
	if (want) {
		if (*tail_used + want > vm->mem.host_tail_size)
			return vmm_err_set(err, ENOMEM, "net%u: no room left in the host tail after guest RAM", i);
		bc.host_tail = vm->mem.host_tail + *tail_used;
		bc.host_tail_size = want;
		*tail_used += want;
	}
	return net_backend_create(&bc, out, err);
}

/* One virtio-mmio window and interrupt line per device, in order. */
static int vm_add_net_devices(struct minivmm *vm, struct vmm_err *err)
{
	uint64_t tail_used = 0;
	for (unsigned i = 0; i < vm->cfg.nr_nets; i++) {
		if (i >= MINIVMM_VIRTIO_MAX_DEVICES)
			return vmm_err_set(err, EINVAL, "at most %d network devices", MINIVMM_VIRTIO_MAX_DEVICES);
		uint64_t base = MINIVMM_MMIO_BASE + i * MINIVMM_MMIO_WINDOW;
		unsigned gsi = MINIVMM_VIRTIO_IRQ_BASE + i;
		struct net_backend *backend;
		int rc = vm_create_backend(vm, i, &tail_used, &backend, err);
		if (rc)
			return rc;
		rc = virtio_net_create(&vm->net[i], i, &vm->cfg.net[i], backend, &vm->events, &vm->mem,
				       base, gsi, vm_auto_workers(vm), err);
		vm->nr_nets = i + 1;
		if (rc)
			return rc;
		if (vm->cfg.acpi)
			vm->net[i]->transport->failed_hint =
				"if the kernel has ACPI but not PCI (Linux 6.1), it loads no ACPI table and the "
				"device gets no interrupt: boot it with --acpi=off";
		struct bus_device dev = virtio_mmio_bus_device(vm->net[i]->transport);
		rc = bus_add(&vm->mmio_bus, base, MINIVMM_MMIO_WINDOW, &dev, err);
		if (rc)
			return rc;
		char word[80];
		virtio_mmio_cmdline_word(vm->net[i]->transport, word, sizeof(word));
		rc = cmdline_append(&vm->cmdline, word, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* ACPI tables describing the vCPUs and every virtio-mmio device. */
static int vm_write_acpi(struct minivmm *vm, uint64_t *rsdp_addr, struct vmm_err *err)
{
	struct acpi_config ac = { .ncpus = vm->ncpus, .ioapic_id = irqchip_ioapic_id(&vm->irqchip),
				  .nr_virtio_mmio = vm->nr_nets,
				  .pm_sleep_port = ACPI_PM_PORT, .pvpanic_port = MINIVMM_PORT_PVPANIC,
				  .no_8259 = vm->kvm.split_irqchip };
	for (unsigned i = 0; i < vm->nr_nets; i++)
		ac.virtio_mmio[i] = (struct acpi_virtio_mmio){
			.base = MINIVMM_MMIO_BASE + i * MINIVMM_MMIO_WINDOW,
			.size = MINIVMM_MMIO_WINDOW, .gsi = MINIVMM_VIRTIO_IRQ_BASE + i };
	return acpi_write_tables(&vm->mem, &ac, rsdp_addr, err);
}

/* An initrd is copied whole into guest RAM below the MMIO hole: one
 * bigger than that RAM is refused from its size alone. */
static int initrd_too_big(uint64_t size, uint64_t max, struct vmm_err *err)
{
	char what[48], mib[32];
	boot_format_mib(size, mib, sizeof(mib));
	snprintf(what, sizeof(what), "initrd of %s", mib);
	return boot_err_ram(err, E2BIG, what, size, "", max, GUEST_MMIO_HOLE_START, "the 32-bit MMIO hole");
}

static int vm_load_kernel(struct minivmm *vm, struct boot_entry *entry, struct vmm_err *err)
{
	struct mapped_file kernel, initrd = { 0 };
	/* A kernel file may be much bigger than what it loads (an ELF's
	 * symbols and debug information): no bound from its size. */
	int rc = map_file("kernel", vm->cfg.kernel_path, 0, &kernel, err);
	if (rc)
		return rc;
	if (vm->cfg.initrd_path) {
		uint64_t ram_low = vm->cfg.mem_size < GUEST_MMIO_HOLE_START ? vm->cfg.mem_size : GUEST_MMIO_HOLE_START;
		rc = map_file("initrd", vm->cfg.initrd_path, ram_low, &initrd, err);
		if (rc == -E2BIG)
			rc = initrd_too_big(initrd.size, ram_low, err);
		if (rc) {
			unmap_file(&kernel);
			return rc;
		}
	}
	struct boot_request req = {
		.kernel = kernel.data, .kernel_size = kernel.size, .kernel_name = vm->cfg.kernel_path,
		.initrd = initrd.data, .initrd_size = initrd.size,
		.cmdline = cmdline_str(&vm->cmdline),
		.ncpus = vm->ncpus,
		.ioapic_id = irqchip_ioapic_id(&vm->irqchip),
		.ioapic_version = irqchip_ioapic_version(&vm->irqchip),
	};
	rc = vm_build_dtb(vm, err);
	req.fdt = vm->fdt;
	req.fdt_size = vm->fdt_size;
	if (rc == 0 && vm->cfg.acpi)
		rc = vm_write_acpi(vm, &req.rsdp_addr, err);
	if (rc == 0)
		rc = boot_load(&vm->mem, &req, entry, err);
	unmap_file(&kernel);
	unmap_file(&initrd);
	return rc;
}

/* ---- confinement (docs/security.md) ------------------------------------ */

/* The filter of every kind of thread, and the capabilities each keeps, built
 * before the first thread (the spawner, then the link threads) starts. */
static int vm_setup_confinement(struct minivmm *vm, struct vmm_err *err)
{
	enum minivmm_seccomp mode = seccomp_effective_mode(vm->cfg.seccomp);
	struct confine_needs needs;
	confine_needs_from_config(&vm->cfg, vm->cfg.kick_signal, &needs);
	vm->confine.filters = mode != MINIVMM_SECCOMP_OFF;
	vm->confine.drop_caps = vm->cfg.drop_caps != 0;
	caps_plan(&vm->confine, &needs);
	if (vm->confine.filters) {
		/* The minivmm command's signal thread is the program's: it builds its own. */
		int rc = seccomp_lists_build(&vm->confine, &needs, mode,
					     SECCOMP_ALL_ROLES & ~(1u << CONFINE_SIGNALS), err);
		if (rc)
			return rc;
	}
	vm->events.confine = &vm->confine;
	if (vm->cfg.nr_nets) {
		/* Its children inherit its signal mask: none for them. */
		sigset_t all, old;
		vcpu_thread_signal_mask(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		int rc = spawner_start(&vm->spawner, &vm->confine, err);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc)
			return rc;
		vm->events.spawner = vm->spawner;
	}
	return 0;
}

/* Said when the VM starts running (not when it is only built: a refused
 * configuration stays one line). */
static void vm_log_confinement(struct minivmm *vm)
{
	if (vm->cfg.seccomp != MINIVMM_SECCOMP_OFF && !vm->confine.filters)
		vm_machine_log(vm, "seccomp: off in this sanitizer build (its runtime makes system calls of its own at exit and in reports): the VMM runs unconfined");
	else if (vm->cfg.seccomp == MINIVMM_SECCOMP_OFF)
		vm_machine_log(vm, "seccomp: off: the VMM runs unconfined (no system-call filters)");
	else if (vm->cfg.seccomp == MINIVMM_SECCOMP_LOG)
		vm_machine_log(vm, "seccomp: log: calls outside a thread's list are allowed and logged by the kernel (dmesg: audit type=1326, comm= the thread, syscall= its number)");
}

static int vm_create_vcpus(struct minivmm *vm, const struct boot_entry *entry, struct vmm_err *err)
{
	vm->vcpus = calloc(vm->ncpus, sizeof(vm->vcpus[0]));
	if (!vm->vcpus)
		return vmm_err_set(err, ENOMEM, "out of memory for vCPUs");
	for (unsigned i = 0; i < vm->ncpus; i++)
		vm->vcpus[i].fd = -1;
	vm->vcpu_ctx = (struct vcpu_context){
		.vm_fd = vm->kvm.vm_fd, .run_size = vm->kvm.vcpu_mmap_size,
		.cpuid = vm->kvm.supported_cpuid, .msrs = vm->kvm.msr_list, .ncpus = vm->ncpus,
		.tsc_deadline_timer = vm->kvm.tsc_deadline_timer,
		.pio = &vm->pio_bus, .mmio = &vm->mmio_bus, .coalesced = &vm->coalesced,
		.machine = &vm->events,
		.stopping = &vm->stopping, .kick_signal = vm->cfg.kick_signal,
		.confine = &vm->confine, .ioapic = irqchip_ioapic(&vm->irqchip),
		.pause = &vm->pause,
	};
	for (unsigned i = 0; i < vm->ncpus; i++) {
		int pin = i < vm->cfg.nr_vcpu_cpus ? vm->cfg.vcpu_cpus[i] : -1;
		int rc = vcpu_create(&vm->vcpus[i], &vm->vcpu_ctx, i, pin, err);
		if (rc)
			return rc;
	}
	/* The coalesced ring is one page of every vCPU's kvm_run mapping. */
	long page = sysconf(_SC_PAGESIZE);
	long off = (long)vm->kvm.coalesced_ring_page * page;
	if (off > 0 && off + page <= vm->kvm.vcpu_mmap_size)
		coalesced_ring_attach(&vm->coalesced, (char *)vm->vcpus[0].run + off, page);
	int rc = cpu_x86_write_boot_tables(&vm->mem, err);
	if (rc == 0)
		rc = cpu_x86_set_entry_state(vm->vcpus[0].fd, entry, err);
	return rc;
}

static int vm_build(struct minivmm *vm, struct vmm_err *err)
{
	int rc = config_validate(&vm->cfg, err);
	if (rc)
		return rc;
	rc = vcpu_install_kick_handler(vm->cfg.kick_signal, err);
	if (rc)
		return rc;
	rc = host_check_fds(&vm->cfg, err);
	if (rc)
		return rc;
	rc = host_check_address_space(&vm->cfg, vm_host_tail_bytes(vm), err);
	if (rc)
		return rc;
	rc = vm_setup_confinement(vm, err);
	if (rc)
		return rc;
	rc = kvm_open(&vm->kvm, vm->cfg.irqchip == MINIVMM_IRQCHIP_SPLIT, err);
	if (rc)
		return rc;
	vm_trace(vm, "KVM opened, VM created");
	if ((int)vm->ncpus > vm->kvm.max_vcpus)
		return vmm_err_set(err, EINVAL, "%u vCPUs requested but KVM allows %d",
				   vm->ncpus, vm->kvm.max_vcpus);
	rc = host_check_guest_memory(vm->cfg.mem_size, vm->cfg.mem_overcommit,
				     vm->kvm.supported_cpuid, err);
	if (rc == 0)
		rc = guest_mem_init_with_tail(&vm->mem, vm->cfg.mem_size, vm_host_tail_bytes(vm), err);
	if (rc == 0)
		vm_prefault_for_pinning(vm);
	if (rc == 0)
		rc = vm_add_legacy_devices(vm, err);
	cmdline_init(&vm->cmdline);
	if (rc == 0)
		rc = cmdline_append(&vm->cmdline, vm->cfg.cmdline ? vm->cfg.cmdline : MINIVMM_DEFAULT_CMDLINE, err);
	if (rc == 0)
		rc = vm_add_net_devices(vm, err);
	if (rc == 0)
		vm_trace(vm, "devices added");
	struct boot_entry entry;
	if (rc == 0)
		rc = vm_load_kernel(vm, &entry, err);
	if (rc == 0)
		vm_trace(vm, "kernel loaded, boot tables written");
	if (rc == 0)
		rc = vm_create_vcpus(vm, &entry, err);
	if (rc == 0)
		vm_trace(vm, "vCPUs created");
	/* The memory slot last, after every KVM I/O-bus change of the set-up
	 * (the in-kernel irqchip's and PIT's ports, the UART's coalesced zone).
	 * KVM frees a replaced bus after an SRCU grace period (call_srcu() on
	 * recent kernels), and the slot's expedited grace period retires those
	 * here, while no vCPU runs. Left to a normal one, it ran on through the
	 * vCPUs' run (its back-off grows while they hold the read side) and
	 * closing a short-lived VM waited for it in srcu_barrier(): 9 of a test
	 * guest's 17 ms (docs/benchmarks.md). Nothing above needs the slot:
	 * the kernel, boot tables and registers are written through the host
	 * mapping and the vCPUs' ioctls. */
	if (rc == 0)
		rc = kvm_map_guest_mem(&vm->kvm, &vm->mem, err);
	if (rc == 0)
		vm_trace(vm, "guest memory mapped");
	return rc;
}

int minivmm_create(const struct minivmm_config *cfg, struct minivmm **out, char *errbuf,
		   size_t errlen)
{
	API_REQUIRE(out);
	*out = NULL;
	API_REQUIRE(cfg);
	struct vmm_err err = { 0 };
	struct minivmm *vm = calloc(1, sizeof(*vm));
	if (!vm) {
		api_errbuf(errbuf, errlen, "out of memory");
		return -ENOMEM;
	}
	vm->cfg = *cfg;
	if (!vm->cfg.start_ns)
		vm->cfg.start_ns = monotonic_ns();
	if (!vm->cfg.kick_signal)
		vm->cfg.kick_signal = SIGRTMIN + 1;
	vm->ncpus = cfg->ncpus;
	vm->serial_file_fd = -1;
	vm->kvm.dev_fd = vm->kvm.vm_fd = -1;
	vm->run_state = VM_CREATED;
	pthread_mutex_init(&vm->wait_lock, NULL);
	pthread_mutex_init(&vm->log_lock, NULL);
	pthread_mutex_init(&vm->pause.lock, NULL);
	pthread_cond_init(&vm->pause.cond, NULL);
	pthread_mutex_init(&vm->pause_op, NULL);
	vm->log_holding = true;
	bus_init(&vm->pio_bus, "port I/O");
	bus_init(&vm->mmio_bus, "MMIO");
	vm->events = (struct machine){ .opaque = vm, .request_stop = vm_machine_request_stop,
				       .log = vm_machine_log, .set_irq = vm_machine_set_irq,
				       .ioeventfd = vm_machine_ioeventfd, .irqfd = vm_machine_irqfd,
				       .coalesce_pio = vm_machine_coalesce_pio,
				       .drain_queued = vm_machine_drain_queued };
	coalesced_ring_init(&vm->coalesced, &vm->pio_bus, &vm->mmio_bus);

	int rc;
	vm->stop_fd = eventfd(0, EFD_CLOEXEC);   /* -1 on failure, as destroy expects */
	if (vm->stop_fd < 0)
		rc = vmm_err_sys(&err, errno, "eventfd for the stop request");
	else
		rc = vm_build(vm, &err);
	vm_log_release(vm, rc == 0 || vm->cfg.boot_trace);
	if (rc) {
		api_errbuf(errbuf, errlen, "%s", err.msg[0] ? err.msg : "cannot create the VM");
		if (vm->serial_file_created)
			unlink(vm->cfg.serial_path);   /* a refused run leaves nothing behind */
		minivmm_destroy(vm);
		return rc;
	}
	*out = vm;
	return 0;
}

/* ---- running --------------------------------------------------------- */

static void vm_stop_vcpus(struct minivmm *vm)
{
	__atomic_store_n(&vm->stopping, true, __ATOMIC_RELEASE);
	/* Parked ones (paused) wait on the condition, not in KVM_RUN. */
	pthread_mutex_lock(&vm->pause.lock);
	pthread_cond_broadcast(&vm->pause.cond);
	pthread_mutex_unlock(&vm->pause.lock);
	for (unsigned i = 0; i < vm->ncpus; i++)
		vcpu_kick(&vm->vcpus[i]);
	for (unsigned i = 0; i < vm->ncpus; i++)
		vcpu_join(&vm->vcpus[i]);
}

/* Until the first stop request, or, with a time limit (timeout_secs), until
 * it runs out, counted from now: the vCPUs have just started. */
static void vm_wait_for_stop_request(struct minivmm *vm)
{
	uint64_t deadline = vm->cfg.timeout_secs ?
		monotonic_ns() + (uint64_t)vm->cfg.timeout_secs * 1000000000ull : 0;
	while (!vm_is_stopping(vm)) {
		int wait_ms = -1;
		if (deadline) {
			uint64_t now = monotonic_ns();
			if (now >= deadline) {
				char reason[80];
				snprintf(reason, sizeof(reason), "guest still running after %u s (--timeout)",
					 vm->cfg.timeout_secs);
				vm_request_stop(vm, MINIVMM_EXIT_TIMEOUT, reason);
				break;
			}
			uint64_t left_ms = (deadline - now + 999999) / 1000000;   /* never early */
			wait_ms = left_ms > INT_MAX ? INT_MAX : (int)left_ms;
		}
		struct pollfd p = { .fd = vm->stop_fd, .events = POLLIN };
		if (poll(&p, 1, wait_ms) < 0 && errno != EINTR) {
			vm_request_stop(vm, MINIVMM_EXIT_HOST_ERROR, "poll on the stop request failed");
			break;
		}
	}
}

static int vm_start_serial_input(struct minivmm *vm, struct vmm_err *err)
{
	/* The input thread inherits this mask: no signals for it. */
	sigset_t all, old;
	vcpu_thread_signal_mask(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = serial_start_input(vm->serial, err);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

/* Start everything, wait for the first stop request, stop everything. On
 * the caller's thread (minivmm_run) or the run thread (minivmm_start); only
 * the library's own run thread confines itself: the caller's thread is the
 * program's (the minivmm command confines its own, docs/security.md). */
static int vm_run(struct minivmm *vm, bool own_thread)
{
	struct vmm_err err = { 0 };
	int rc = 0;
	if (!vm_is_stopping(vm)) {   /* minivmm_stop() before the start: nothing to run */
		vm_log_confinement(vm);
		rc = vm_start_serial_input(vm, &err);
		for (unsigned i = 0; rc == 0 && i < vm->ncpus; i++)
			rc = vcpu_start(&vm->vcpus[i], &err);
		/* Confined last: the threads above are started by an
		 * unconfined thread, each installs its own list and nothing of
		 * this one's. Afterwards it only waits, stops the vCPUs and calls
		 * on_stop. */
		if (rc == 0 && own_thread)
			rc = confine_enter(&vm->confine, CONFINE_MAIN, &err);
		if (rc)
			vm_request_stop(vm, MINIVMM_EXIT_HOST_ERROR, err.msg);
		else
			vm_trace(vm, "vCPUs started");
	}
	vm_wait_for_stop_request(vm);
	vm_trace(vm, "stop requested");
	vm_stop_vcpus(vm);
	vm_trace(vm, "vCPUs stopped");
	coalesced_ring_drain(&vm->coalesced);   /* the guest's last console bytes */
	serial_stop_input(vm->serial);
	int status = vm->exit_status;
	if (vm->cfg.on_stop)
		vm->cfg.on_stop(vm->cfg.on_stop_opaque, status, vm->stop_reason);
	__atomic_store_n(&vm->run_state, VM_FINISHED, __ATOMIC_RELEASE);
	return status;
}

static bool vm_claim_run(struct minivmm *vm)
{
	int created = VM_CREATED;
	return __atomic_compare_exchange_n(&vm->run_state, &created, VM_RUNNING, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

int minivmm_run(struct minivmm *vm)
{
	if (!vm)
		return -EINVAL;
	if (!vm_claim_run(vm))
		return MINIVMM_EXIT_HOST_ERROR;
	return vm_run(vm, false);
}

static void *vm_run_thread_main(void *arg)
{
	pthread_setname_np(pthread_self(), "minivmm");
	vm_run(arg, true);
	return NULL;
}

int minivmm_start(struct minivmm *vm, char *errbuf, size_t errlen)
{
	API_REQUIRE(vm);
	if (!vm_claim_run(vm)) {
		api_errbuf(errbuf, errlen, "the VM already ran or is running");
		return -EBUSY;
	}
	sigset_t all, old;
	vcpu_thread_signal_mask(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&vm->run_thread, NULL, vm_run_thread_main, vm);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		api_errbuf(errbuf, errlen, "cannot start the VM's thread: %s", strerror(rc));
		__atomic_store_n(&vm->run_state, VM_CREATED, __ATOMIC_RELEASE);
		return -rc;
	}
	vm->run_thread_started = true;
	return 0;
}

int minivmm_wait(struct minivmm *vm)
{
	if (!vm)
		return -EINVAL;
	if (vm->run_thread_started && pthread_equal(pthread_self(), vm->run_thread))
		return -EDEADLK;   /* on_stop: the thread would join itself */
	pthread_mutex_lock(&vm->wait_lock);
	if (vm->run_thread_started && !vm->run_thread_joined) {
		pthread_join(vm->run_thread, NULL);
		vm->run_thread_joined = true;
	}
	pthread_mutex_unlock(&vm->wait_lock);
	if (__atomic_load_n(&vm->run_state, __ATOMIC_ACQUIRE) != VM_FINISHED)
		return -EINVAL;   /* never ran (or minivmm_run() is still running elsewhere) */
	return vm->exit_status;
}

void minivmm_destroy(struct minivmm *vm)
{
	if (!vm)
		return;
	if (vm->run_thread_started) {
		minivmm_stop(vm);    /* no-op if it stopped already */
		minivmm_wait(vm);
	}
	vm->tearing_down = true;
	if (vm->vcpus) {
		vm_stop_vcpus(vm);
		/* The serial thread drains the coalesced ring, which lives in
		 * vCPU 0's kvm_run mapping: it stops first (vm_run stopped it
		 * already when the VM ran). */
		if (vm->serial)
			serial_stop_input(vm->serial);
		coalesced_ring_detach(&vm->coalesced);
		for (unsigned i = 0; i < vm->ncpus; i++)
			if (vm->vcpus[i].ctx)
				vcpu_destroy(&vm->vcpus[i]);
		free(vm->vcpus);
	}
	/* Devices stop their workers before guest memory goes away. */
	for (unsigned i = 0; i < vm->nr_nets; i++)
		virtio_net_destroy(vm->net[i]);
	serial_destroy(vm->serial);
	spawner_stop(vm->spawner);   /* no device is left to ask it */
	if (vm->i8042.ev)
		i8042_destroy(&vm->i8042);
	if (vm->pit.ev)
		pit_destroy(&vm->pit);
	irqchip_destroy(&vm->irqchip);
	if (vm->serial_file_fd >= 0)
		close(vm->serial_file_fd);
	kvm_close(&vm->kvm);
	guest_mem_destroy(&vm->mem);
	free(vm->fdt);
	seccomp_lists_free(&vm->confine);   /* every thread that used them is joined */
	if (vm->stop_fd >= 0)
		close(vm->stop_fd);
	pthread_mutex_destroy(&vm->wait_lock);
	pthread_mutex_destroy(&vm->log_lock);
	pthread_mutex_destroy(&vm->pause.lock);
	pthread_cond_destroy(&vm->pause.cond);
	pthread_mutex_destroy(&vm->pause_op);
	free(vm->log_held);
	coalesced_ring_destroy(&vm->coalesced);
	vm_trace(vm, "torn down");
	free(vm);
}

/* ---- pause and resume (minivmm_pause) --------------------------------- */

#define PAUSE_WAIT_MS 2000   /* for vCPUs to park and workers to go idle */

static int pause_fail(char *errbuf, size_t errlen, int rc, const char *what)
{
	if (errbuf && errlen)
		snprintf(errbuf, errlen, "%s", what);
	return rc;
}

/* With pause_op held: workers first (frames the guest made before the
 * pause go out before it makes more), then the parked vCPUs. */
static void vm_unpause(struct minivmm *vm)
{
	for (unsigned i = 0; i < vm->nr_nets; i++)
		virtio_net_pause(vm->net[i], false, 0);
	__atomic_store_n(&vm->pause.paused, false, __ATOMIC_RELEASE);
	pthread_mutex_lock(&vm->pause.lock);
	pthread_cond_broadcast(&vm->pause.cond);
	pthread_mutex_unlock(&vm->pause.lock);
}

int minivmm_pause(struct minivmm *vm, char *errbuf, size_t errlen)
{
	if (!vm)
		return pause_fail(errbuf, errlen, -EINVAL, "minivmm_pause: vm is NULL");
	pthread_mutex_lock(&vm->pause_op);
	int rc = 0;
	if (__atomic_load_n(&vm->run_state, __ATOMIC_ACQUIRE) != VM_RUNNING || vm_is_stopping(vm))
		rc = pause_fail(errbuf, errlen, -ESHUTDOWN, "the VM is not running");
	else if (__atomic_load_n(&vm->pause.paused, __ATOMIC_ACQUIRE))
		rc = pause_fail(errbuf, errlen, -EALREADY, "the VM is paused already");
	if (rc) {
		pthread_mutex_unlock(&vm->pause_op);
		return rc;
	}
	/* vCPUs first: the guest stops making frames, then the workers let
	 * what is in flight finish and stand still. */
	__atomic_store_n(&vm->pause.paused, true, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < vm->ncpus; i++)
		vcpu_kick(&vm->vcpus[i]);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += PAUSE_WAIT_MS / 1000;
	pthread_mutex_lock(&vm->pause.lock);
	while (vm->pause.parked < vm->ncpus && !vm_is_stopping(vm) &&
	       pthread_cond_timedwait(&vm->pause.cond, &vm->pause.lock, &until) == 0) {
	}
	bool parked = vm->pause.parked == vm->ncpus;
	pthread_mutex_unlock(&vm->pause.lock);
	for (unsigned i = 0; parked && i < vm->nr_nets; i++)
		if (virtio_net_pause(vm->net[i], true, PAUSE_WAIT_MS) < 0)
			parked = false;
	if (!parked) {
		/* Half paused is no state to leave a VM in: as it was. */
		vm_unpause(vm);
		rc = pause_fail(errbuf, errlen, vm_is_stopping(vm) ? -ESHUTDOWN : -ETIMEDOUT,
				vm_is_stopping(vm) ? "the VM stopped while pausing"
						   : "the VM did not pause within 2 s (a vCPU or a queue worker did not stop); it runs on");
	}
	pthread_mutex_unlock(&vm->pause_op);
	return rc;
}

int minivmm_resume(struct minivmm *vm, char *errbuf, size_t errlen)
{
	if (!vm)
		return pause_fail(errbuf, errlen, -EINVAL, "minivmm_resume: vm is NULL");
	pthread_mutex_lock(&vm->pause_op);
	int rc = 0;
	if (!__atomic_load_n(&vm->pause.paused, __ATOMIC_ACQUIRE)) {
		rc = pause_fail(errbuf, errlen, -EALREADY, "the VM is not paused");
	} else {
		vm_unpause(vm);
	}
	pthread_mutex_unlock(&vm->pause_op);
	return rc;
}

int minivmm_is_paused(const struct minivmm *vm)
{
	return vm && __atomic_load_n(&vm->pause.paused, __ATOMIC_ACQUIRE);
}
