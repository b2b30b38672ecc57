/* SPDX-License-Identifier: Apache-2.0 */
#include "vmm/cpulist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int parse_cpu_number(const char **p, long *out)
{
	char *end;
	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	long v = strtol(*p, &end, 10);
	if (errno || v > CPULIST_MAX_CPU)
		return -EINVAL;
	*out = v;
	*p = end;
	return 0;
}

int cpulist_parse(const char *text, int *cpus, unsigned max, struct vmm_err *err)
{
	unsigned n = 0;
	const char *p = text;
	if (!*p)
		return vmm_err_set(err, EINVAL, "empty CPU list");
	while (*p) {
		long first, last;
		if (parse_cpu_number(&p, &first))
			return vmm_err_set(err, EINVAL, "'%s' is not a CPU list such as 2-5 or 2,4,6", text);
		last = first;
		if (*p == '-') {
			p++;
			if (parse_cpu_number(&p, &last) || last < first)
				return vmm_err_set(err, EINVAL, "'%s' is not a CPU list such as 2-5 or 2,4,6", text);
		}
		if (*p == ',')
			p++;
		else if (*p)
			return vmm_err_set(err, EINVAL, "'%s' is not a CPU list such as 2-5 or 2,4,6", text);
		for (long c = first; c <= last; c++) {
			if (n == max)
				return vmm_err_set(err, E2BIG, "CPU list '%s' has more than %u CPUs", text, max);
			cpus[n++] = (int)c;
		}
	}
	if (p > text && p[-1] == ',')
		return vmm_err_set(err, EINVAL, "'%s' is not a CPU list such as 2-5 or 2,4,6", text);
	return (int)n;
}
