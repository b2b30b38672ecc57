/* SPDX-License-Identifier: Apache-2.0 */
/* The API socket's endpoints over a VM (vmm/api_vm.c). */
#ifndef MINIVMM_VMM_API_VM_H
#define MINIVMM_VMM_API_VM_H

#include "minivmm.h"
#include "vmm/api.h"

/* vm.reboot is not among them yet (501). */
struct api_ops api_vm_ops(struct minivmm *vm);

#endif
