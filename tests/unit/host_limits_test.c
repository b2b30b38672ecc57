/* SPDX-License-Identifier: Apache-2.0 */
/* Guest memory against what the host can give: address bits, KVM's memory
 * slots, the host's memory (unless overcommitted). */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "vmm/host_limits.h"

#define G (1ull << 30)
#define T (1ull << 40)

static int check(uint64_t mem, bool overcommit, unsigned bits, uint64_t host, struct vmm_err *e)
{
	memset(e, 0, sizeof(*e));
	return host_check_guest_memory_against(mem, overcommit, bits, host, "MemTotal", e);
}

Test(host_limits, memory_within_the_host_is_fine)
{
	struct vmm_err e;
	cr_assert_eq(check(256ull << 20, false, 48, 23 * G, &e), 0, "%s", e.msg);
	cr_assert_eq(check(16 * G, false, 48, 23 * G, &e), 0, "%s", e.msg);
}

Test(host_limits, more_than_the_host_needs_overcommit)
{
	struct vmm_err e;
	cr_assert_eq(check(1 * T, false, 48, 23 * G + (512ull << 20), &e), -EINVAL);
	cr_assert_str_eq(e.msg, "--mem 1T: more than this host's memory (23.5G, MemTotal); --mem-overcommit boots it anyway");
	cr_assert_eq(check(256 * G, true, 48, 23 * G, &e), 0, "%s", e.msg);
}

/* KVM's bookkeeping for a slot is host kernel memory in proportion to it:
 * overcommitted guest RAM is bounded to 16 x the host's. */
Test(host_limits, overcommit_is_bounded_by_what_the_host_can_keep)
{
	struct vmm_err e;
	cr_assert_eq(check(368 * G, true, 48, 23 * G, &e), 0, "%s", e.msg);
	cr_assert_eq(check(1 * T, true, 48, 23 * G + (512ull << 20), &e), -EINVAL);
	cr_assert_str_eq(e.msg, "--mem 1T: more than --mem-overcommit allows, 16 x this host's memory (23.5G, MemTotal): 376.0G; KVM keeps about 2.6 MB of the host kernel's memory per GiB of guest RAM, used or not");
}

Test(host_limits, beyond_the_address_bits_is_refused_even_overcommitted)
{
	struct vmm_err e;
	/* 46 bits = 64T: 64T of RAM plus the 1G hole does not fit. */
	cr_assert_eq(check(64 * T, true, 46, 0, &e), -EINVAL);
	cr_assert_str_eq(e.msg, "--mem 64T: more than KVM and this CPU can address (46 guest physical address bits: 64T, including the 1G device hole below 4G)");
	/* Exactly full: RAM above 4G ends at 2^36. */
	cr_assert_eq(check((1ull << 36) - G, true, 36, 0, &e), 0, "%s", e.msg);
	cr_assert_eq(check((1ull << 36) - G + (2ull << 20), true, 36, 0, &e), -EINVAL);
	cr_assert_eq(check(8192 * T, true, 52, 0, &e), -EINVAL);
	cr_assert(strstr(e.msg, "52 guest physical address bits"), "%s", e.msg);
}

Test(host_limits, a_kvm_slot_holds_less_than_8T)
{
	struct vmm_err e;
	cr_assert_eq(check(64 * T, true, 48, 0, &e), -EINVAL);
	cr_assert_str_eq(e.msg, "--mem 64T: more than one KVM memory slot holds (just under 8T of RAM above 4G)");
	cr_assert_eq(check(7 * T, true, 48, 0, &e), 0, "%s", e.msg);
}

Test(host_limits, phys_bits_from_kvm_cpuid)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 2 * sizeof(c->entries[0]));
	c->nent = 2;
	c->entries[0].function = 0x80000001;
	c->entries[1].function = 0x80000008;
	c->entries[1].eax = 0x3030;          /* 48 physical, 48 virtual */
	cr_assert_eq(host_guest_phys_bits(c), 48);
	c->entries[1].eax = 0x2b3034;        /* guest size 43 wins */
	cr_assert_eq(host_guest_phys_bits(c), 43);
	c->nent = 1;
	cr_assert_eq(host_guest_phys_bits(c), 36, "no leaf: the architectural minimum");
	free(c);
}

Test(host_limits, this_hosts_memory_is_readable)
{
	uint64_t bytes = 0;
	const char *what = NULL;
	struct vmm_err e = { 0 };
	cr_assert_eq(host_memory_limit(&bytes, &what, &e), 0, "%s", e.msg);
	cr_assert_gt(bytes, 16ull << 20);
	cr_assert_not_null(what);
}

/* File descriptors: what the queues need against RLIMIT_NOFILE. */
Test(host_limits, file_descriptors_for_the_queues)
{
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	cfg.nr_nets = 1;
	minivmm_net_config_init(&cfg.net[0]);
	cfg.net[0].queues = 4;
	unsigned need = host_fds_needed(&cfg);
	cr_assert_gt(need, 32, "4 pairs need more than a limit of 32 (%u)", need);
	cr_assert_lt(need, 200, "4 pairs and 1 vCPU need far fewer than 1024 (%u)", need);
	struct vmm_err e = { 0 };
	cr_assert_eq(host_check_fds_against(&cfg, 3, 1024, &e), 0);
	cr_assert_eq(host_check_fds_against(&cfg, 3, RLIM_INFINITY, &e), 0);
	cr_assert_eq(host_check_fds_against(&cfg, 3, 32, &e), -EMFILE);
	char want[200];
	snprintf(want, sizeof(want),
		 "1 vCPU and 4 queue pairs need about %u file descriptors and 3 are open; the process may have 32 (RLIMIT_NOFILE: raise ulimit -n)",
		 need);
	cr_assert_str_eq(e.msg, want);
	/* The most the configuration allows fits a shell's default 1024. */
	cfg.ncpus = MINIVMM_MAX_CPUS;
	cfg.nr_nets = MINIVMM_MAX_NETS;
	for (unsigned i = 0; i < MINIVMM_MAX_NETS; i++) {
		minivmm_net_config_init(&cfg.net[i]);
		cfg.net[i].queues = MINIVMM_MAX_QUEUE_PAIRS;
	}
	cr_assert_lt(host_fds_needed(&cfg), 1000, "%u", host_fds_needed(&cfg));
}

Test(host_limits, address_space_below_guest_ram_and_more_is_refused_naming_the_limit)
{
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);   /* --mem 256M */
	const uint64_t mib = 1ull << 20;
	uint64_t need = host_address_space_needed(&cfg, 0);
	cr_assert_geq(need, 290 * mib, "measured: 256M ran at 290 MiB, not below (%" PRIu64 ")", need);
	cr_assert_leq(need, 320 * mib, "and needs no more than a few dozen MiB beyond RAM (%" PRIu64 ")", need);
	cr_assert_gt(host_address_space_needed(&cfg, 64 * mib), need, "AF_XDP's host tail counts");
	struct vmm_err e = { 0 };
	cr_assert_eq(host_check_address_space_against(&cfg, 0, RLIM_INFINITY, &e), 0);
	cr_assert_eq(host_check_address_space_against(&cfg, 0, need, &e), 0);
	cr_assert_eq(host_check_address_space_against(&cfg, 0, 288 * mib, &e), -ENOMEM);
	char want[300];
	snprintf(want, sizeof(want),
		 "--mem 256M needs about %" PRIu64 " MiB of address space and the process may have 288 MiB (RLIMIT_AS: raise ulimit -v to at least %" PRIu64 "M, or give --mem %" PRIu64 "M at most)",
		 need / mib, need / mib, (uint64_t)((288 - (need / mib - 256)) & ~1ull));
	cr_assert_str_eq(e.msg, want);
	/* Too little for any guest: only the limit is named. */
	cr_assert_eq(host_check_address_space_against(&cfg, 0, 40 * mib, &e), -ENOMEM);
	cr_assert_null(strstr(e.msg, "or give"), "%s", e.msg);
}
