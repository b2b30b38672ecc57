/* SPDX-License-Identifier: Apache-2.0 */
/* Host limits on guest memory (see host_limits.h). */
#include "vmm/host_limits.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/guest_mem.h"
#include "vmm/config.h"

unsigned host_guest_phys_bits(const struct kvm_cpuid2 *supported)
{
	for (unsigned i = 0; supported && i < supported->nent; i++) {
		const struct kvm_cpuid_entry2 *e = &supported->entries[i];
		if (e->function != 0x80000008)
			continue;
		unsigned guest = (e->eax >> 16) & 0xff;
		unsigned phys = e->eax & 0xff;
		if (guest)
			return guest;
		if (phys)
			return phys;
	}
	return 36;
}

/* "MemTotal:       24684084 kB" */
static int read_mem_total(uint64_t *bytes, struct vmm_err *err)
{
	FILE *f = fopen("/proc/meminfo", "re");
	if (!f)
		return vmm_err_sys(err, errno, "cannot read /proc/meminfo");
	char line[128];
	int rc = vmm_err_set(err, EINVAL, "/proc/meminfo has no MemTotal line");
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
			*bytes = (uint64_t)kb << 10;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* One number from a cgroup file; "max" (v2) and unreadable files are no
 * limit (0). */
static uint64_t read_cgroup_limit(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char text[64] = "";
	uint64_t v = 0;
	if (fgets(text, sizeof(text), f)) {
		char *end;
		unsigned long long n = strtoull(text, &end, 10);
		if (end != text && (*end == '\n' || *end == '\0'))
			v = n;
	}
	fclose(f);
	return v;
}

/* The lowest limit on the path from `cgroup` (as /proc/self/cgroup names
 * it) up to the root of the hierarchy mounted at `mount`. */
static uint64_t cgroup_path_limit(const char *mount, const char *cgroup, const char *file)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", cgroup);
	uint64_t lowest = 0;
	for (;;) {
		char path[PATH_MAX + 128];
		snprintf(path, sizeof(path), "%s%s/%s", mount, dir, file);
		uint64_t v = read_cgroup_limit(path);
		if (v && (!lowest || v < lowest))
			lowest = v;
		char *slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return lowest;
}

/* The memory cgroup limit of this process, 0 if none is visible. */
static uint64_t cgroup_memory_limit(void)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return 0;
	char line[PATH_MAX + 64];
	uint64_t lowest = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* "hierarchy-ID:controller-list:cgroup-path" */
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		const char *controllers = c1 + 1, *path = c2 + 1;
		uint64_t v = 0;
		if (strcmp(line, "0") == 0 && !*controllers) {
			v = cgroup_path_limit("/sys/fs/cgroup", path, "memory.max");
			if (!v)
				v = cgroup_path_limit("/sys/fs/cgroup/unified", path, "memory.max");
		} else if (strstr(controllers, "memory")) {
			v = cgroup_path_limit("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes");
		}
		if (v && (!lowest || v < lowest))
			lowest = v;
	}
	fclose(f);
	return lowest;
}

int host_memory_limit(uint64_t *bytes, const char **what, struct vmm_err *err)
{
	int rc = read_mem_total(bytes, err);
	if (rc)
		return rc;
	*what = "MemTotal";
	uint64_t cg = cgroup_memory_limit();
	if (cg && cg < *bytes) {
		*bytes = cg;
		*what = "the memory cgroup limit";
	}
	return 0;
}

/* Approximate size for a host's memory: "23.5G", "512M". */
static void format_approx(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ull << 40))
		snprintf(buf, len, "%.1fT", (double)bytes / (double)(1ull << 40));
	else if (bytes >= (1ull << 30))
		snprintf(buf, len, "%.1fG", (double)bytes / (double)(1ull << 30));
	else
		snprintf(buf, len, "%" PRIu64 "M", bytes >> 20);
}

int host_check_guest_memory_against(uint64_t mem_size, bool overcommit, unsigned phys_bits,
				    uint64_t host_bytes, const char *host_what, struct vmm_err *err)
{
	char size[32], limit[32];
	config_format_size(mem_size, size, sizeof(size));
	/* RAM below the hole, then the rest from 4 GiB up (base/guest_mem.c). */
	uint64_t low = mem_size < GUEST_MMIO_HOLE_START ? mem_size : GUEST_MMIO_HOLE_START;
	uint64_t high = mem_size - low;
	uint64_t space = phys_bits >= 64 ? UINT64_MAX : (1ull << phys_bits);
	if (high && (high > space - GUEST_MMIO_HOLE_END || GUEST_MMIO_HOLE_END > space)) {
		config_format_size(space, limit, sizeof(limit));
		return vmm_err_set(err, EINVAL,
				   "--mem %s: more than KVM and this CPU can address (%u guest physical address bits: %s, including the 1G device hole below 4G)",
				   size, phys_bits, limit);
	}
	if (high > HOST_KVM_MAX_SLOT_BYTES)
		return vmm_err_set(err, EINVAL,
				   "--mem %s: more than one KVM memory slot holds (just under 8T of RAM above 4G)",
				   size);
	if (!overcommit && host_bytes && mem_size > host_bytes) {
		format_approx(host_bytes, limit, sizeof(limit));
		return vmm_err_set(err, EINVAL,
				   "--mem %s: more than this host's memory (%s, %s); --mem-overcommit boots it anyway",
				   size, limit, host_what);
	}
	if (overcommit && host_bytes && mem_size / HOST_OVERCOMMIT_MAX > host_bytes) {
		format_approx(host_bytes * HOST_OVERCOMMIT_MAX, limit, sizeof(limit));
		char host[32];
		format_approx(host_bytes, host, sizeof(host));
		return vmm_err_set(err, EINVAL,
				   "--mem %s: more than --mem-overcommit allows, %u x this host's memory (%s, %s): %s; KVM keeps about 2.6 MB of the host kernel's memory per GiB of guest RAM, used or not",
				   size, HOST_OVERCOMMIT_MAX, host, host_what, limit);
	}
	return 0;
}

int host_check_guest_memory(uint64_t mem_size, bool overcommit, const struct kvm_cpuid2 *supported,
			    struct vmm_err *err)
{
	uint64_t host = 0;
	const char *what = "";
	int rc = host_memory_limit(&host, &what, err);
	if (rc)
		return rc;
	return host_check_guest_memory_against(mem_size, overcommit, host_guest_phys_bits(supported),
					       host, what, err);
}

/* Counted on running VMs (ls /proc/PID/fd: 4 vCPUs and 4 queue pairs held
 * 32 over tap or the packet backend, 38 over AF_XDP), with a margin of
 * about 1.5: the VM itself
 * (/dev/kvm, the VM, its stop, serial and spawner descriptors), each vCPU
 * (its fd and kick), each device (control queue, link thread, interrupt
 * and config descriptors), each queue pair (the backend's socket or tap
 * queue, two kick ioeventfds, an interrupt eventfd, a worker's ring and
 * wake-up descriptors, an AF_XDP drain socket). */
#define HOST_FDS_BASE     16u
#define HOST_FDS_PER_VCPU 2u
#define HOST_FDS_PER_NET  6u
#define HOST_FDS_PER_PAIR 6u

unsigned host_fds_needed(const struct minivmm_config *cfg)
{
	unsigned n = HOST_FDS_BASE + cfg->ncpus * HOST_FDS_PER_VCPU;
	for (unsigned i = 0; i < cfg->nr_nets && i < MINIVMM_MAX_NETS; i++)
		n += HOST_FDS_PER_NET + cfg->net[i].queues * HOST_FDS_PER_PAIR;
	return n;
}

int host_check_fds_against(const struct minivmm_config *cfg, unsigned open_now, uint64_t limit,
			   struct vmm_err *err)
{
	uint64_t need = host_fds_needed(cfg);
	if (limit == RLIM_INFINITY || (uint64_t)open_now + need <= limit)
		return 0;
	unsigned pairs = 0;
	for (unsigned i = 0; i < cfg->nr_nets && i < MINIVMM_MAX_NETS; i++)
		pairs += cfg->net[i].queues;
	return vmm_err_set(err, EMFILE,
			   "%u vCPU%s and %u queue pair%s need about %" PRIu64 " file descriptors and %u are open; the process may have %" PRIu64 " (RLIMIT_NOFILE: raise ulimit -n)",
			   cfg->ncpus, cfg->ncpus == 1 ? "" : "s", pairs, pairs == 1 ? "" : "s", need, open_now,
			   limit);
}

int host_check_fds(const struct minivmm_config *cfg, struct vmm_err *err)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;   /* nothing to compare with: the worst is a later error */
	unsigned open_now = 3;
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		open_now = 0;
		struct dirent *e;
		while ((e = readdir(d)))
			open_now += e->d_name[0] != '.';
		closedir(d);
		open_now = open_now ? open_now - 1 : 0;   /* the directory's own */
	}
	return host_check_fds_against(cfg, open_now, rl.rlim_cur, err);
}

/* Measured under RLIMIT_AS (ulimit -v) on running VMs of 256 MiB: the
 * smallest limit that ran was 286 MiB with 1 vCPU and no device, 290 MiB
 * with 2-4 vCPUs and 4 or 16 queue pairs, a worker each, over tap, packet
 * sockets or AF_XDP: 30-34 MiB beyond guest RAM (the program and its
 * libraries, the heap, the threads' stacks, the io_uring rings). Asked
 * for with a margin. */
#define HOST_AS_BEYOND_RAM (40ull << 20)

uint64_t host_address_space_needed(const struct minivmm_config *cfg, uint64_t host_tail)
{
	return cfg->mem_size + host_tail + HOST_AS_BEYOND_RAM;
}

int host_check_address_space_against(const struct minivmm_config *cfg, uint64_t host_tail, uint64_t limit,
				     struct vmm_err *err)
{
	uint64_t need = host_address_space_needed(cfg, host_tail);
	if (limit == RLIM_INFINITY || need <= limit)
		return 0;
	const uint64_t mib = 1ull << 20;
	uint64_t beyond = need - cfg->mem_size;
	/* The largest --mem that fits: a multiple of 2M, at least 16M. */
	uint64_t fits = limit > beyond ? ((limit - beyond) / mib) & ~1ull : 0;
	char also[64] = "";
	if (fits >= 16)
		snprintf(also, sizeof(also), ", or give --mem %" PRIu64 "M at most", fits);
	return vmm_err_set(err, ENOMEM,
			   "--mem %" PRIu64 "M needs about %" PRIu64 " MiB of address space and the process may have %" PRIu64 " MiB (RLIMIT_AS: raise ulimit -v to at least %" PRIu64 "M%s)",
			   cfg->mem_size / mib, (need + mib - 1) / mib, limit / mib, (need + mib - 1) / mib, also);
}

int host_check_address_space(const struct minivmm_config *cfg, uint64_t host_tail, struct vmm_err *err)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) < 0)
		return 0;   /* nothing to compare with: the worst is a later error */
	return host_check_address_space_against(cfg, host_tail, rl.rlim_cur, err);
}
