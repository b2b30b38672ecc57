#include "vmm/cpulist.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static int parse_cpu_number(const char **p, long *out)
{
	char *end;
	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	long v = strtol(*p, &end, 10);
	if (errno || v > 4095)
		return -EINVAL;
	*out = v;
	*p = end;
	return 0;
}

int cpulist_parse_allowed(const char *text, int *cpus, unsigned max,
			  const unsigned char *allowed, unsigned nr_allowed, struct vmm_err *err)
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
			if ((unsigned long)c >= nr_allowed || !allowed[c])
				return vmm_err_set(err, EINVAL, "CPU %ld is not one this process may run on", c);
			if (n == max)
				return vmm_err_set(err, E2BIG, "CPU list '%s' has more than %u CPUs", text, max);
			cpus[n++] = (int)c;
		}
	}
	return (int)n;
}

int cpulist_parse(const char *text, int *cpus, unsigned max, struct vmm_err *err)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return vmm_err_sys(err, errno, "sched_getaffinity");
	unsigned char allowed[CPU_SETSIZE];
	for (unsigned c = 0; c < CPU_SETSIZE; c++)
		allowed[c] = CPU_ISSET(c, &set) ? 1 : 0;
	return cpulist_parse_allowed(text, cpus, max, allowed, CPU_SETSIZE, err);
}
