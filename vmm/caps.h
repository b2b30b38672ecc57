/* SPDX-License-Identifier: Apache-2.0 */
/* --drop-caps: the capabilities each kind of thread keeps (base/confine.h
 * drops the rest, thread by thread, as it confines itself). */
#ifndef MINIVMM_VMM_CAPS_H
#define MINIVMM_VMM_CAPS_H

#include <stdint.h>

#include "base/confine.h"
#include "vmm/seccomp.h"

/* Fill c->keep_caps for the VM's needs. */
void caps_plan(struct confine *c, const struct confine_needs *n);

#endif
