/* SPDX-License-Identifier: Apache-2.0 */
/* The VM's device tree: what boot/fdt.c is told about this VM, the blob
 * PVH guests receive, and --dump-dtb. */
#ifndef MINIVMM_VMM_DTB_H
#define MINIVMM_VMM_DTB_H

#include "base/error.h"

struct minivmm;

/* Describe the VM (RAM regions, vCPUs, IOAPIC and LAPIC, COM1, every
 * virtio-mmio device, the pvpanic register, the final command line) and
 * build its DTB into vm->fdt / vm->fdt_size. Call after the devices exist
 * and the command line is complete, before the kernel is loaded. */
int vm_build_dtb(struct minivmm *vm, struct vmm_err *err);

#endif
