/* SPDX-License-Identifier: Apache-2.0 */
/* /dev/kvm: API version, capability checks, VM creation. */
#include "vmm/kvm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Where KVM puts its private TSS and identity map on VMX hosts: three pages
 * just below the BIOS area at the top of the 32-bit space, inside our MMIO
 * hole and clear of every device window. */
#define KVM_TSS_ADDR          0xfffbd000UL
#define KVM_IDENTITY_MAP_ADDR 0xfffbc000UL

struct kvm_cap_need {
	int cap;
	const char *name;
};

/* Everything minivmm relies on. Checked up front so a missing feature is
 * one clear line instead of an obscure ioctl failure later. */
static const struct kvm_cap_need kvm_caps_needed[] = {
	{ KVM_CAP_USER_MEMORY, "KVM_CAP_USER_MEMORY" },
	{ KVM_CAP_IRQCHIP, "KVM_CAP_IRQCHIP" },
	{ KVM_CAP_PIT2, "KVM_CAP_PIT2" },
	{ KVM_CAP_SET_TSS_ADDR, "KVM_CAP_SET_TSS_ADDR" },
	{ KVM_CAP_SET_IDENTITY_MAP_ADDR, "KVM_CAP_SET_IDENTITY_MAP_ADDR" },
	{ KVM_CAP_EXT_CPUID, "KVM_CAP_EXT_CPUID" },
	{ KVM_CAP_MP_STATE, "KVM_CAP_MP_STATE" },
	{ KVM_CAP_IMMEDIATE_EXIT, "KVM_CAP_IMMEDIATE_EXIT" },
	{ KVM_CAP_IOEVENTFD, "KVM_CAP_IOEVENTFD" },
	{ KVM_CAP_IRQFD, "KVM_CAP_IRQFD" },
	{ KVM_CAP_IRQ_ROUTING, "KVM_CAP_IRQ_ROUTING" },
};

static int kvm_check_caps(struct kvm *kvm, struct vmm_err *err)
{
	for (size_t i = 0; i < sizeof(kvm_caps_needed) / sizeof(kvm_caps_needed[0]); i++) {
		if (ioctl(kvm->dev_fd, KVM_CHECK_EXTENSION, kvm_caps_needed[i].cap) <= 0)
			return vmm_err_set(err, ENOTSUP, "/dev/kvm lacks %s, which minivmm needs",
					   kvm_caps_needed[i].name);
	}
	int max = ioctl(kvm->dev_fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	if (max <= 0)
		max = ioctl(kvm->dev_fd, KVM_CHECK_EXTENSION, KVM_CAP_NR_VCPUS);
	kvm->max_vcpus = max > 0 ? max : 1;
	kvm->tsc_deadline_timer = ioctl(kvm->dev_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_DEADLINE_TIMER) > 0;
	/* Optional: without them every write to COM1 exits to the VMM. */
	int ring = ioctl(kvm->dev_fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_MMIO);
	kvm->coalesced_ring_page = ring > 0 ? ring : 0;
	kvm->coalesced_pio = ring > 0 && ioctl(kvm->dev_fd, KVM_CHECK_EXTENSION, KVM_CAP_COALESCED_PIO) > 0;
	return 0;
}

static int kvm_get_supported_cpuid(struct kvm *kvm, struct vmm_err *err)
{
	/* The kernel says E2BIG until the buffer is large enough. */
	for (unsigned n = 256; n <= 4096; n *= 2) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));
		if (!c)
			return vmm_err_set(err, ENOMEM, "out of memory for CPUID");
		c->nent = n;
		if (ioctl(kvm->dev_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
			kvm->supported_cpuid = c;
			return 0;
		}
		int e = errno;
		free(c);
		if (e != E2BIG)
			return vmm_err_sys(err, e, "KVM_GET_SUPPORTED_CPUID");
	}
	return vmm_err_set(err, E2BIG, "KVM_GET_SUPPORTED_CPUID: too many entries");
}

static int kvm_get_msr_list(struct kvm *kvm, struct vmm_err *err)
{
	struct kvm_msr_list probe = { .nmsrs = 0 };
	if (ioctl(kvm->dev_fd, KVM_GET_MSR_INDEX_LIST, &probe) < 0 && errno != E2BIG)
		return vmm_err_sys(err, errno, "KVM_GET_MSR_INDEX_LIST");
	struct kvm_msr_list *l = calloc(1, sizeof(*l) + probe.nmsrs * sizeof(l->indices[0]));
	if (!l)
		return vmm_err_set(err, ENOMEM, "out of memory for the MSR list");
	l->nmsrs = probe.nmsrs;
	if (ioctl(kvm->dev_fd, KVM_GET_MSR_INDEX_LIST, l) < 0) {
		int e = errno;
		free(l);
		return vmm_err_sys(err, e, "KVM_GET_MSR_INDEX_LIST");
	}
	kvm->msr_list = l;
	return 0;
}

int kvm_coalesce_pio(struct kvm *kvm, uint16_t port, unsigned len, bool assign)
{
	if (!kvm->coalesced_pio)
		return -EOPNOTSUPP;
	struct kvm_coalesced_mmio_zone zone = { .addr = port, .size = len, .pio = 1 };
	return ioctl(kvm->vm_fd, assign ? KVM_REGISTER_COALESCED_MMIO : KVM_UNREGISTER_COALESCED_MMIO,
		     &zone) < 0 ? -errno : 0;
}

int kvm_msr_supported(const struct kvm *kvm, unsigned index)
{
	for (unsigned i = 0; kvm->msr_list && i < kvm->msr_list->nmsrs; i++)
		if (kvm->msr_list->indices[i] == index)
			return 1;
	return 0;
}

/* Split irqchip (the default): KVM keeps the LAPICs; the IOAPIC and a
 * counting PIT are minivmm's, and there is no PIC. KVM's in-kernel
 * PIC/IOAPIC and PIT cost ~4 ms at the memory slot and ~13 ms at teardown
 * (docs/benchmarks.md, "Start-up"). */
static int kvm_create_split_irqchip(struct kvm *kvm, struct vmm_err *err)
{
	if (ioctl(kvm->dev_fd, KVM_CHECK_EXTENSION, KVM_CAP_SPLIT_IRQCHIP) <= 0)
		return vmm_err_set(err, ENOTSUP, "/dev/kvm lacks KVM_CAP_SPLIT_IRQCHIP, which --irqchip=split (the default) needs: run with --irqchip=kernel");
	struct kvm_enable_cap cap = { .cap = KVM_CAP_SPLIT_IRQCHIP, .args = { KVM_SPLIT_IOAPIC_PINS } };
	if (ioctl(kvm->vm_fd, KVM_ENABLE_CAP, &cap) < 0)
		return vmm_err_sys(err, errno, "KVM_ENABLE_CAP(KVM_CAP_SPLIT_IRQCHIP)");
	return 0;
}

/* In-kernel PIC + IOAPIC + LAPICs and PIT: INIT/SIPI, HLT and interrupt
 * delivery never leave the kernel. */
static int kvm_create_kernel_irqchip(struct kvm *kvm, struct vmm_err *err)
{
	if (ioctl(kvm->vm_fd, KVM_CREATE_IRQCHIP) < 0)
		return vmm_err_sys(err, errno, "KVM_CREATE_IRQCHIP");
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	if (ioctl(kvm->vm_fd, KVM_CREATE_PIT2, &pit) < 0)
		return vmm_err_sys(err, errno, "KVM_CREATE_PIT2");
	return 0;
}

static int kvm_create_vm(struct kvm *kvm, struct vmm_err *err)
{
	kvm->vm_fd = ioctl(kvm->dev_fd, KVM_CREATE_VM, 0);
	if (kvm->vm_fd < 0)
		return vmm_err_sys(err, errno, "KVM_CREATE_VM");
	if (ioctl(kvm->vm_fd, KVM_SET_TSS_ADDR, KVM_TSS_ADDR) < 0)
		return vmm_err_sys(err, errno, "KVM_SET_TSS_ADDR");
	__u64 idmap = KVM_IDENTITY_MAP_ADDR;
	if (ioctl(kvm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap) < 0)
		return vmm_err_sys(err, errno, "KVM_SET_IDENTITY_MAP_ADDR");
	int rc = kvm->split_irqchip ? kvm_create_split_irqchip(kvm, err) : kvm_create_kernel_irqchip(kvm, err);
	if (rc)
		return rc;
	kvm->vcpu_mmap_size = ioctl(kvm->dev_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (kvm->vcpu_mmap_size < (int)sizeof(struct kvm_run))
		return vmm_err_sys(err, errno, "KVM_GET_VCPU_MMAP_SIZE");
	return 0;
}

int kvm_open(struct kvm *kvm, bool split_irqchip, struct vmm_err *err)
{
	memset(kvm, 0, sizeof(*kvm));
	kvm->vm_fd = -1;
	kvm->split_irqchip = split_irqchip;
	kvm->dev_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm->dev_fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return vmm_err_set(err, e, "/dev/kvm does not exist: KVM is not available on this host (load kvm-intel or kvm-amd)");
		return vmm_err_sys(err, e, "cannot open /dev/kvm%s",
				   e == EACCES ? " (add your user to the kvm group)" : "");
	}
	int version = ioctl(kvm->dev_fd, KVM_GET_API_VERSION, 0);
	if (version != KVM_API_VERSION)
		return vmm_err_set(err, ENOTSUP, "/dev/kvm speaks API version %d, minivmm needs %d",
				   version, KVM_API_VERSION);
	int rc = kvm_check_caps(kvm, err);
	if (rc == 0)
		rc = kvm_get_supported_cpuid(kvm, err);
	if (rc == 0)
		rc = kvm_get_msr_list(kvm, err);
	if (rc == 0)
		rc = kvm_create_vm(kvm, err);
	return rc;
}

int kvm_set_kernel_ioapic_id(struct kvm *kvm, unsigned id, struct vmm_err *err)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };
	if (ioctl(kvm->vm_fd, KVM_GET_IRQCHIP, &chip) < 0)
		return vmm_err_sys(err, errno, "KVM_GET_IRQCHIP (IOAPIC)");
	chip.chip.ioapic.id = id;
	if (ioctl(kvm->vm_fd, KVM_SET_IRQCHIP, &chip) < 0)
		return vmm_err_sys(err, errno, "KVM_SET_IRQCHIP (IOAPIC id %u)", id);
	return 0;
}

int kvm_map_guest_mem(struct kvm *kvm, const struct guest_mem *mem, struct vmm_err *err)
{
	for (unsigned i = 0; i < mem->nr_regions; i++) {
		struct kvm_userspace_memory_region r = {
			.slot = i,
			.guest_phys_addr = mem->region[i].gpa,
			.memory_size = mem->region[i].size,
			.userspace_addr = (unsigned long)mem->region[i].host,
		};
		if (ioctl(kvm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0)
			return vmm_err_sys(err, errno, "KVM_SET_USER_MEMORY_REGION (slot %u)", i);
	}
	return 0;
}

int kvm_set_irq_line(struct kvm *kvm, unsigned gsi, int level)
{
	struct kvm_irq_level irq = { .irq = gsi, .level = level };
	return ioctl(kvm->vm_fd, KVM_IRQ_LINE, &irq) < 0 ? -errno : 0;
}

int kvm_set_msi_routes(struct kvm *kvm, const struct kvm_msi_route *routes, unsigned n)
{
	if (n > KVM_SPLIT_IOAPIC_PINS)
		return -EINVAL;
	/* struct kvm_irq_routing ends in a flexible array: the header and the
	 * entries are copied into one buffer (no malloc on a vCPU thread). */
	_Alignas(struct kvm_irq_routing) uint8_t buf[sizeof(struct kvm_irq_routing) +
						     KVM_SPLIT_IOAPIC_PINS * sizeof(struct kvm_irq_routing_entry)];
	struct kvm_irq_routing head = { .nr = n };
	memcpy(buf, &head, sizeof(head));
	for (unsigned i = 0; i < n; i++) {
		struct kvm_irq_routing_entry e = {
			.gsi = routes[i].gsi, .type = KVM_IRQ_ROUTING_MSI,
			.u.msi = { .address_lo = (uint32_t)routes[i].address,
				   .address_hi = (uint32_t)(routes[i].address >> 32),
				   .data = routes[i].data },
		};
		memcpy(buf + sizeof(head) + i * sizeof(e), &e, sizeof(e));
	}
	return ioctl(kvm->vm_fd, KVM_SET_GSI_ROUTING, buf) < 0 ? -errno : 0;
}

int kvm_ioeventfd(struct kvm *kvm, uint64_t addr, unsigned len, uint64_t datamatch, int fd, bool assign)
{
	struct kvm_ioeventfd io = {
		.datamatch = datamatch, .addr = addr, .len = len, .fd = fd,
		.flags = KVM_IOEVENTFD_FLAG_DATAMATCH | (assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN),
	};
	return ioctl(kvm->vm_fd, KVM_IOEVENTFD, &io) < 0 ? -errno : 0;
}

int kvm_irqfd(struct kvm *kvm, int fd, unsigned gsi, bool assign)
{
	struct kvm_irqfd irq = { .fd = (uint32_t)fd, .gsi = gsi,
				 .flags = assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN };
	return ioctl(kvm->vm_fd, KVM_IRQFD, &irq) < 0 ? -errno : 0;
}

void kvm_close(struct kvm *kvm)
{
	if (kvm->vm_fd >= 0)
		close(kvm->vm_fd);
	if (kvm->dev_fd >= 0)
		close(kvm->dev_fd);
	free(kvm->supported_cpuid);
	free(kvm->msr_list);
	memset(kvm, 0, sizeof(*kvm));
	kvm->vm_fd = kvm->dev_fd = -1;
}
