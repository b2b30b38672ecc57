/* SPDX-License-Identifier: Apache-2.0 */
/* What the host can give a guest, checked before guest memory is mapped so
 * that an impossible or unwise --mem is one clear line instead of a raw
 * KVM error (or a guest that boots and then gets the host OOM-killed). */
#ifndef MINIVMM_VMM_HOST_LIMITS_H
#define MINIVMM_VMM_HOST_LIMITS_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "minivmm.h"

/* KVM keeps a memory slot's size in pages in 31 bits
 * (KVM_MEM_MAX_NR_PAGES, include/linux/kvm_host.h: not in the uapi). */
#define HOST_KVM_MAX_SLOT_BYTES ((((uint64_t)1 << 31) - 1) << 12)

/* The guest physical address bits KVM offers on this CPU: CPUID
 * 0x80000008 as KVM_GET_SUPPORTED_CPUID reports it (EAX[23:16], the
 * guest size, when set; else EAX[7:0]); 36 if the leaf is missing, the
 * architectural minimum. */
unsigned host_guest_phys_bits(const struct kvm_cpuid2 *supported);

/* The memory this process may use: MemTotal, or the memory cgroup's
 * limit (v1 or v2, the lowest on the path to the root) if that is lower.
 * *what says which ("MemTotal", "the memory cgroup limit"). */
int host_memory_limit(uint64_t *bytes, const char **what, struct vmm_err *err);

/* --mem-overcommit still bounds guest RAM to this many times the host's
 * memory: KVM allocates its per-page bookkeeping (reverse maps, large-page
 * info: about 2.6 MB of kernel memory per GiB of guest RAM, measured) for
 * the whole slot when it is made, used or not; 1T of guest RAM cost the
 * host 2.6 GB of vmalloc space. 16 x keeps that under 4 % of the host. */
#define HOST_OVERCOMMIT_MAX 16u

/* Guest RAM of mem_size bytes, laid out around the device hole below
 * 4 GiB, must fit in the guest physical address space and in KVM's
 * memory slots (both always), and in the host's memory unless overcommit,
 * and then in HOST_OVERCOMMIT_MAX times it. */
int host_check_guest_memory(uint64_t mem_size, bool overcommit, const struct kvm_cpuid2 *supported,
			    struct vmm_err *err);

/* The same checks with the limits given (for tests). */
int host_check_guest_memory_against(uint64_t mem_size, bool overcommit, unsigned phys_bits,
				    uint64_t host_bytes, const char *host_what, struct vmm_err *err);

/* File descriptors: a VM of cfg holds up to host_fds_needed(cfg) at once
 * while it runs (per vCPU, per device and per queue pair, counted from a
 * running VM of each backend; vmm/host_limits.c). A process whose
 * RLIMIT_NOFILE leaves too few of them is refused at create, naming the
 * limit, instead of failing when the guest's driver starts the queues. */
unsigned host_fds_needed(const struct minivmm_config *cfg);

/* The check, against open_now descriptors in use and a limit of limit. */
int host_check_fds_against(const struct minivmm_config *cfg, unsigned open_now, uint64_t limit,
			   struct vmm_err *err);

/* The same with this process's descriptors and RLIMIT_NOFILE. */
int host_check_fds(const struct minivmm_config *cfg, struct vmm_err *err);

/* Address space: a VM of cfg maps guest RAM, host_tail bytes of host-only
 * memory beside it (AF_XDP's buffers) and, measured, up to 34 MiB more
 * (program, libraries, heap, stacks, rings). A process whose RLIMIT_AS
 * (ulimit -v) is below host_address_space_needed() is refused at create,
 * naming the limit and the --mem that would fit, instead of failing as
 * threads and rings are made. */
uint64_t host_address_space_needed(const struct minivmm_config *cfg, uint64_t host_tail);
int host_check_address_space_against(const struct minivmm_config *cfg, uint64_t host_tail, uint64_t limit,
				     struct vmm_err *err);
int host_check_address_space(const struct minivmm_config *cfg, uint64_t host_tail, struct vmm_err *err);

#endif
