/* CPU lists as Linux writes them: "2-5", "2,4,6,8", "0-3,8". */
#ifndef MINIVMM_VMM_CPULIST_H
#define MINIVMM_VMM_CPULIST_H

#include "base/error.h"

/* Parse into cpus[] in the order written (at most max entries). Every CPU
 * must be one this process may run on (sched_getaffinity), so a typo is an
 * error now rather than a failed pin later. Returns the count or -errno. */
int cpulist_parse(const char *text, int *cpus, unsigned max, struct vmm_err *err);

/* Same, checked against an explicit set of allowed CPUs (for tests). */
int cpulist_parse_allowed(const char *text, int *cpus, unsigned max,
			  const unsigned char *allowed, unsigned nr_allowed, struct vmm_err *err);

#endif
