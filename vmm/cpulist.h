/* SPDX-License-Identifier: Apache-2.0 */
/* CPU lists as Linux writes them: "2-5", "2,4,6,8", "0-3,8". Part of the
 * minivmm program's command line; whether the CPUs exist and may be used
 * is the validator's business (vmm/config.c), not the parser's. */
#ifndef MINIVMM_VMM_CPULIST_H
#define MINIVMM_VMM_CPULIST_H

#include "base/error.h"

#define CPULIST_MAX_CPU 4095   /* larger numbers are refused as typos */

/* Parse into cpus[] in the order written (at most max entries). Returns
 * the count or -errno with a message naming the text. */
int cpulist_parse(const char *text, int *cpus, unsigned max, struct vmm_err *err);

#endif
