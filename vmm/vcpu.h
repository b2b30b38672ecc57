/* SPDX-License-Identifier: Apache-2.0 */
/* One thread per vCPU: KVM_RUN, dispatch exits to the buses, stop cleanly
 * on anything unexpected. */
#ifndef MINIVMM_VMM_VCPU_H
#define MINIVMM_VMM_VCPU_H

#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "base/confine.h"
#include "base/error.h"
#include "base/machine.h"
#include "devices/bus.h"
#include "vmm/coalesced.h"

struct ioapic;

/* What a vCPU needs of its VM, and nothing more: the vCPU never sees the VM
 * object. Everything here is fixed before the first vCPU runs. */
/* Pausing the vCPUs (minivmm_pause): each parks before its next KVM_RUN
 * while `paused` is set, counted in `parked`; the VM kicks them to get
 * there, and broadcasts `cond` to let them go (or when it stops). */
struct vcpu_pause {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool paused;          /* atomic read in the run loop */
	unsigned parked;
};

struct vcpu_context {
	int vm_fd;
	int run_size;                       /* size of the kvm_run mapping */
	const struct kvm_cpuid2 *cpuid;     /* KVM_GET_SUPPORTED_CPUID */
	const struct kvm_msr_list *msrs;    /* KVM_GET_MSR_INDEX_LIST */
	unsigned ncpus;
	bool tsc_deadline_timer;            /* KVM_CAP_TSC_DEADLINE_TIMER */
	struct bus *pio, *mmio;             /* read-only once vCPUs run */
	struct coalesced_ring *coalesced;   /* writes KVM queued: delivered before each exit */
	const struct machine *machine;      /* stop requests */
	const bool *stopping;               /* set (atomically) when the VM stops */
	int kick_signal;                    /* interrupts KVM_RUN (vcpu_install_kick_handler) */
	const struct confine *confine;      /* each vCPU thread confines itself */
	struct ioapic *ioapic;              /* split irqchip: where level EOIs go; else NULL */
	struct vcpu_pause *pause;           /* NULL: never paused (tests) */
};

#define VCPU_CRASH_REPORT 2048              /* bytes of a crash report */

struct vcpu {
	const struct vcpu_context *ctx;
	unsigned index;
	int pin_cpu;             /* host CPU to run on, -1: not pinned */
	int fd;
	struct kvm_run *run;     /* shared with KVM, vcpu_mmap_size bytes */
	pthread_t thread;
	bool thread_started;
};

/* Create the KVM vCPU and give it CPUID, MSRs, FPU and LAPIC state. vCPU 0
 * starts at the boot entry (set separately); the others wait in the
 * in-kernel LAPIC for INIT/SIPI, as on real hardware. */
int vcpu_create(struct vcpu *v, const struct vcpu_context *ctx, unsigned index, int pin_cpu,
		struct vmm_err *err);
/* Start the thread. It blocks every asynchronous signal but the kick
 * signal, whatever the caller's mask (see vcpu_thread_signal_mask). */
int vcpu_start(struct vcpu *v, struct vmm_err *err);
/* Make the vCPU leave KVM_RUN soon (immediate_exit + the kick signal). */
void vcpu_kick(struct vcpu *v);
void vcpu_join(struct vcpu *v);
void vcpu_destroy(struct vcpu *v);

/* Install the (empty) handler of the signal used to kick vCPUs. Process-wide
 * but stateless, so calling it for every VM is harmless. Refuses a signal
 * that already has a handler that is not ours (the embedding program's):
 * replacing it would break the program, sharing it would break the kick. */
int vcpu_install_kick_handler(int sig, struct vmm_err *err);

/* The mask every thread of the library runs with: all signals blocked but
 * the synchronous ones (a fault must still reach its handler). */
void vcpu_thread_signal_mask(sigset_t *set);

#endif
