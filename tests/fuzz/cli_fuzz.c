/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the command line (vmm/cli.c cli_parse, --net specs through
 * vmm/net_config.c, CPU lists through vmm/cpulist.c).
 *
 * The input, split at NUL bytes, is argv after "minivmm" (every argument
 * its own allocation, freed after the run, so a pointer kept into a
 * previous command line is a use-after-free). The whole input as one
 * string also goes to net_config_parse, cli_parse_size and
 * cpulist_parse (then config_check_cpus_allowed) directly. A dictionary of the options and keys is
 * in tests/fuzz/cli.dict.
 *
 * Checked: nothing crashes; every error is one non-empty line (no control
 * characters, so it cannot break the terminal or the log either) with its
 * errno; what parses is within the documented ranges and consistent
 * (vCPUs, pinning, memory, every --net passes net_config_check), and the
 * strings kept point into the command line. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <sched.h>
#include "vmm/cli.h"
#include "vmm/config.h"
#include "vmm/cpulist.h"
#include "vmm/net_config.h"
#include "tests/fuzz/fuzz_common.h"

#define MAX_ARGS 64

static void check_error(int rc, const struct vmm_err *err, const char *what)
{
	FUZZ_CHECK(rc < 0, "%s returned %d", what, rc);
	FUZZ_CHECK(err->code == -rc, "%s: error code %d, returned %d", what, err->code, rc);
	size_t len = strnlen(err->msg, sizeof(err->msg));
	FUZZ_CHECK(len > 0 && len < sizeof(err->msg), "%s: empty or unterminated message", what);
	for (size_t i = 0; i < len; i++)
		FUZZ_CHECK(!iscntrl((unsigned char)err->msg[i]),
			   "%s: error message has control character 0x%02x at %zu: \"%s\"", what,
			   (unsigned char)err->msg[i], i, err->msg);
}

static bool points_into(const char *p, char **argv, int argc)
{
	for (int i = 0; i < argc; i++)
		if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
			return true;
	return false;
}

static void check_net(const struct minivmm_net_config *n)
{
	struct vmm_err err = { 0 };
	FUZZ_CHECK(config_validate_net(n, &err) == 0, "accepted a --net that fails its check: %s", err.msg);
	FUZZ_CHECK(n->queues >= 1 && n->queues <= MINIVMM_MAX_QUEUE_PAIRS, "%u queues", n->queues);
	FUZZ_CHECK(n->threads == MINIVMM_THREADS_AUTO || n->threads <= n->queues,
		   "%u threads for %u queues", n->threads, n->queues);
	FUZZ_CHECK(n->queue_size >= 2 && n->queue_size <= 1024 && !(n->queue_size & (n->queue_size - 1)),
		   "queue size %u", n->queue_size);
	FUZZ_CHECK(n->mtu >= 68 && n->mtu <= 65535, "MTU %u", n->mtu);
	FUZZ_CHECK(n->nr_cpus <= MINIVMM_MAX_QUEUE_PAIRS, "%u CPUs", n->nr_cpus);
	FUZZ_CHECK(memchr(n->ifname, '\0', sizeof(n->ifname)), "interface name not terminated");
	FUZZ_CHECK(!n->mac_set || !(n->mac[0] & 1), "multicast MAC accepted");
	FUZZ_CHECK((n->backend != MINIVMM_NET_PACKET && n->backend != MINIVMM_NET_XDP) || n->ifname[0],
		   "packet or xdp backend without interface");
	FUZZ_CHECK(n->poll_us == MINIVMM_POLL_AUTO || n->poll_us <= 1000000, "poll-us %u", n->poll_us);
	FUZZ_CHECK(memchr(n->ip, '\0', sizeof(n->ip)) && memchr(n->bridge, '\0', sizeof(n->bridge)),
		   "ip or bridge not terminated");
	FUZZ_CHECK(!(n->ip[0] || n->bridge[0]) || (n->backend == MINIVMM_NET_TAP && !(n->ip[0] && n->bridge[0])),
		   "ip or bridge off a tap, or both");
}

static void check_options(const struct cli_options *o, char **argv, int argc)
{
	const struct minivmm_config *vm = &o->vm;
	if (!o->help && !o->version && !o->cpuid_dump)
		FUZZ_CHECK(vm->kernel_path, "accepted without --kernel");
	FUZZ_CHECK(!o->dump_dtb || (o->dump_dtb[0] && points_into(o->dump_dtb, argv, argc)),
		   "--dump-dtb file name");
	/* --help, --version and --seccomp-list parse every option but run no
	 * VM, so the values are not range-checked (cli_parse returns before
	 * the validator); only what was parsed must be sane. */
	FUZZ_CHECK(vm->nr_nets <= MINIVMM_MAX_NETS, "%u nets", vm->nr_nets);
	if (!o->help && !o->version && !o->seccomp_list) {
		FUZZ_CHECK(vm->ncpus >= 1 && vm->ncpus <= MINIVMM_MAX_CPUS, "%u vCPUs", vm->ncpus);
		FUZZ_CHECK(vm->nr_vcpu_cpus == 0 || vm->nr_vcpu_cpus >= vm->ncpus,
			   "%u pins for %u vCPUs", vm->nr_vcpu_cpus, vm->ncpus);
		FUZZ_CHECK(vm->mem_size >= (16ull << 20) && vm->mem_size % (2ull << 20) == 0,
			   "memory %llu", (unsigned long long)vm->mem_size);
		for (unsigned i = 0; i < vm->nr_nets; i++)
			check_net(&vm->net[i]);
	}
	FUZZ_CHECK(o->stats >= 0 && o->stats <= 2, "stats %d", o->stats);
	FUZZ_CHECK(o->stats_interval <= 86400, "stats interval %u", o->stats_interval);
	FUZZ_CHECK(!o->stats_interval_set || o->stats_file, "--stats-interval without --stats-file");
	FUZZ_CHECK(!o->stats_file || o->stats_file[0], "--stats-file without a name");
	FUZZ_CHECK(vm->irqchip == MINIVMM_IRQCHIP_KERNEL || vm->irqchip == MINIVMM_IRQCHIP_SPLIT,
		   "irqchip %d", (int)vm->irqchip);
	const char *kept[] = { vm->kernel_path, vm->initrd_path, vm->cmdline, vm->serial_path, o->stats_file };
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		FUZZ_CHECK(!kept[i] || points_into(kept[i], argv, argc) ||
			   (i == 2 && strcmp(kept[i], MINIVMM_DEFAULT_CMDLINE) == 0),
			   "option string %zu points outside the command line", i);
	FUZZ_CHECK(vm->serial != MINIVMM_SERIAL_FILE || (vm->serial_path && vm->serial_path[0]),
		   "serial to a file without a path");
}

/* The pieces on their own, with the whole input as their text. */
static void parse_pieces(const char *text)
{
	struct minivmm_net_config net;
	struct vmm_err err = { 0 };
	minivmm_net_config_init(&net);
	int rc = net_config_parse(text, &net, &err);
	if (rc == 0)
		rc = config_validate_net(&net, &err);
	if (rc)
		check_error(rc, &err, "net_config_parse");
	else
		check_net(&net);

	uint64_t bytes;
	(void)cli_parse_size(text, &bytes);

	int cpus[8];
	cpu_set_t allowed;
	CPU_ZERO(&allowed);
	for (int c = 0; c < 16; c++)
		if (c != 4 && c != 6)
			CPU_SET(c, &allowed);
	err = (struct vmm_err){ 0 };
	int n = cpulist_parse(text, cpus, 8, &err);
	if (n >= 0) {
		rc = config_check_cpus_allowed("cpus", cpus, (unsigned)n, &allowed, &err);
		if (rc) {
			check_error(rc, &err, "config_check_cpus_allowed");
			n = 0;
		}
	} else {
		check_error(n, &err, "cpulist_parse");
	}
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(cpus[i] >= 0 && cpus[i] < 16 && CPU_ISSET(cpus[i], &allowed), "CPU %d listed", cpus[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = strdup("minivmm");
	size_t start = 0;
	for (size_t i = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (i < size && data[i] != '\0')
			continue;
		char *a = malloc(i - start + 1);
		FUZZ_CHECK(a, "out of memory");
		memcpy(a, data + start, i - start);
		a[i - start] = '\0';
		argv[argc++] = a;
		start = i + 1;
	}
	argv[argc] = NULL;

	struct cli_options o;
	struct vmm_err err = { 0 };
	int rc = cli_parse(argc, argv, &o, &err);
	if (rc)
		check_error(rc, &err, "cli_parse");
	else
		check_options(&o, argv, argc);

	char *text = malloc(size + 1);
	FUZZ_CHECK(text, "out of memory");
	memcpy(text, data, size);
	text[size] = '\0';
	parse_pieces(text);
	free(text);

	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return 0;
}
