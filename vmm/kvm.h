/* SPDX-License-Identifier: Apache-2.0 */
/* /dev/kvm and the VM file descriptor: capabilities, irqchip, PIT, memory. */
#ifndef MINIVMM_VMM_KVM_H
#define MINIVMM_VMM_KVM_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/guest_mem.h"

struct kvm {
	int dev_fd;                       /* /dev/kvm */
	int vm_fd;
	int vcpu_mmap_size;               /* size of each vCPU's struct kvm_run mapping */
	int max_vcpus;
	bool split_irqchip;               /* KVM_CAP_SPLIT_IRQCHIP: IOAPIC in userspace, no PIC or PIT */
	bool tsc_deadline_timer;          /* KVM_CAP_TSC_DEADLINE_TIMER: the guest may see it */
	int coalesced_ring_page;          /* page offset of the coalesced I/O ring in kvm_run, 0: none */
	bool coalesced_pio;               /* KVM_CAP_COALESCED_PIO */
	struct kvm_cpuid2 *supported_cpuid;   /* KVM_GET_SUPPORTED_CPUID, malloc'd */
	struct kvm_msr_list *msr_list;        /* KVM_GET_MSR_INDEX_LIST, malloc'd */
};

/* IOAPIC pins (= GSIs) a split irqchip reserves for the userspace IOAPIC. */
#define KVM_SPLIT_IOAPIC_PINS 24

/* Open /dev/kvm, check the API version and every capability minivmm uses
 * (the error names the missing one), create the VM with an in-kernel irqchip
 * and PIT, or with split_irqchip only the LAPICs in the kernel. */
int kvm_open(struct kvm *kvm, bool split_irqchip, struct vmm_err *err);

/* Kernel irqchip: what the in-kernel IOAPIC's ID register reads (KVM
 * resets it to 0; the firmware tables name another). */
int kvm_set_kernel_ioapic_id(struct kvm *kvm, unsigned id, struct vmm_err *err);

/* Register every region of guest RAM as a KVM memory slot. */
int kvm_map_guest_mem(struct kvm *kvm, const struct guest_mem *mem, struct vmm_err *err);

/* Raise or lower a GSI (split irqchip: raising fires the GSI's MSI route). */
int kvm_set_irq_line(struct kvm *kvm, unsigned gsi, int level);

/* One GSI routed as an MSI. */
struct kvm_msi_route {
	unsigned gsi;
	uint64_t address;
	uint32_t data;
};

/* KVM_SET_GSI_ROUTING: exactly these n routes (n <= KVM_SPLIT_IOAPIC_PINS);
 * a GSI without one raises nothing. Returns 0 or -errno. */
int kvm_set_msi_routes(struct kvm *kvm, const struct kvm_msi_route *routes, unsigned n);

/* KVM_IOEVENTFD: a len-byte write of datamatch to addr (MMIO) signals fd. */
int kvm_ioeventfd(struct kvm *kvm, uint64_t addr, unsigned len, uint64_t datamatch, int fd, bool assign);

/* KVM_IRQFD: a signal on fd raises gsi. */
int kvm_irqfd(struct kvm *kvm, int fd, unsigned gsi, bool assign);

/* KVM_(UN)REGISTER_COALESCED_MMIO for ports [port, port+len): KVM queues
 * the guest's writes there in the coalesced ring instead of exiting.
 * -EOPNOTSUPP without KVM_CAP_COALESCED_PIO. */
int kvm_coalesce_pio(struct kvm *kvm, uint16_t port, unsigned len, bool assign);

int kvm_msr_supported(const struct kvm *kvm, unsigned index);

void kvm_close(struct kvm *kvm);

#endif
