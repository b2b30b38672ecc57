/* One thread per vCPU: KVM_RUN, dispatch exits to the buses, stop cleanly
 * on anything unexpected. */
#ifndef MINIVMM_VMM_VCPU_H
#define MINIVMM_VMM_VCPU_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>

#include "vmm/error.h"

struct minivmm;

struct vcpu {
	struct minivmm *vm;
	unsigned index;
	int fd;
	struct kvm_run *run;     /* shared with KVM, vcpu_mmap_size bytes */
	pthread_t thread;
	bool thread_started;
};

/* Create the KVM vCPU and give it CPUID, MSRs, FPU and LAPIC state. vCPU 0
 * starts at the boot entry (set separately); the others wait in the
 * in-kernel LAPIC for INIT/SIPI, as on real hardware. */
int vcpu_create(struct vcpu *v, struct minivmm *vm, unsigned index, struct vmm_err *err);
int vcpu_start(struct vcpu *v, struct vmm_err *err);
/* Make the vCPU leave KVM_RUN soon (immediate_exit + a signal). */
void vcpu_kick(struct vcpu *v);
void vcpu_join(struct vcpu *v);
void vcpu_destroy(struct vcpu *v);

/* Install the (empty) handler of the signal used to kick vCPUs. Process-wide
 * but stateless, so calling it for every VM is harmless. */
int vcpu_install_kick_handler(struct vmm_err *err);

#endif
