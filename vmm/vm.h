/* SPDX-License-Identifier: Apache-2.0 */
/* The VM object behind the embedding API: KVM, guest memory, buses,
 * devices, vCPUs and the stop protocol. */
#ifndef MINIVMM_VMM_VM_H
#define MINIVMM_VMM_VM_H

#include <pthread.h>
#include <stdbool.h>

#include "devices/acpi_pm.h"
#include "devices/bus.h"
#include "devices/debug_ports.h"
#include "devices/i8042.h"
#include "devices/pit.h"
#include "devices/pvpanic.h"
#include "devices/serial.h"
#include "devices/virtio/net.h"
#include "boot/cmdline.h"
#include "minivmm.h"
#include "base/confine.h"
#include "base/guest_mem.h"
#include "base/spawn.h"
#include "vmm/irqchip.h"
#include "vmm/kvm.h"
#include "vmm/vcpu.h"
#include "base/machine.h"


struct minivmm {
	struct minivmm_config cfg;
	struct kvm kvm;
	struct guest_mem mem;
	struct bus pio_bus;
	struct bus mmio_bus;
	struct machine events;
	struct confine confine;    /* filters and capabilities of its threads */
	struct spawner *spawner;   /* starts threads for confined ones (with a network device) */

	/* Lines logged while the VM is built are held until it is: a refused
	 * create prints only its error (not "tap ... (created)" lines for
	 * devices it then took down), unless --boot-trace asked for them. */
	pthread_mutex_t log_lock;
	bool log_holding;
	char *log_held;            /* lines, each ending in '\n' */
	size_t log_held_len;

	struct serial *serial;
	int serial_file_fd;
	bool serial_file_created;   /* by this VM: a refused create removes it */
	struct i8042 i8042;
	struct pit pit;             /* split irqchip only (KVM's otherwise); pit.ev set when added */
	struct debug_ports debug_ports;
	struct acpi_pm acpi_pm;
	struct pvpanic pvpanic;
	struct irqchip irqchip;    /* set before the serial port, torn down after it */

	struct virtio_net *net[MINIVMM_MAX_NETS];
	unsigned nr_nets;
	struct cmdline cmdline;    /* the user's line plus device entries */
	void *fdt;                 /* the machine's device tree (vmm/dtb.c) */
	size_t fdt_size;

	struct vcpu *vcpus;
	struct vcpu_context vcpu_ctx;
	struct vcpu_pause pause;   /* minivmm_pause(): vCPUs parked, workers idle */
	pthread_mutex_t pause_op;  /* one pause or resume at a time */
	struct coalesced_ring coalesced;   /* KVM's queue of COM1 writes */
	unsigned ncpus;
	/* Being torn down: what KVM holds for the devices (ioeventfds,
	 * irqfds, the coalesced zone) goes with the VM fd, all at once;
	 * devices going away do not unregister theirs one by one, each of
	 * which costs an SRCU grace period. Main thread only. */
	bool tearing_down;

	/* Stop protocol (async-signal-safe on the requesting side): the
	 * first request claims stop_claimed, records status and reason,
	 * sets `stopping` and writes stop_fd; the thread running the VM
	 * wakes on stop_fd and kicks every vCPU out of KVM_RUN. */
	int stop_fd;            /* eventfd */
	int stop_claimed;       /* atomic: 0 until the first stop request */
	bool stopping;          /* atomic; read by vCPU threads */
	int exit_status;
	char stop_reason[2048];

	/* Running: minivmm_run() on the caller's thread, or minivmm_start()
	 * on run_thread. */
	int run_state;          /* atomic: enum vm_run_state */
	pthread_t run_thread;
	bool run_thread_started;
	pthread_mutex_t wait_lock;   /* serialises minivmm_wait() callers */
	bool run_thread_joined;
};

enum vm_run_state {
	VM_CREATED,     /* not run yet */
	VM_RUNNING,     /* minivmm_run() or the run thread is inside vm_run() */
	VM_FINISHED,    /* vm_run() returned: vCPUs joined, exit_status final */
};

/* Used by vCPU threads. */
void vm_request_stop(struct minivmm *vm, int status, const char *reason);
static inline bool vm_is_stopping(const struct minivmm *vm)
{
	return __atomic_load_n(&vm->stopping, __ATOMIC_ACQUIRE);
}

#endif
