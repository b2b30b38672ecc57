/* SPDX-License-Identifier: Apache-2.0 */
#include "vmm/cli.h"

#include "vmm/config.h"
#include "vmm/cpulist.h"
#include "vmm/net_config.h"
#include "vmm/suggest.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* make API_SOCKET=0 builds without --api-socket (vmm/api_none.c). */
#ifndef MINIVMM_API_SOCKET
#define MINIVMM_API_SOCKET 1
#endif

/* --api-socket-group: a group name, or a number. The lookup is the C
 * library's (NSS: /etc/group, or what nsswitch.conf says). */
static int parse_group(const char *arg, gid_t *gid, struct vmm_err *err)
{
	if (!MINIVMM_API_SOCKET)
		return vmm_err_set(err, EOPNOTSUPP,
				   "--api-socket-group: this minivmm is built without the API socket (make API_SOCKET=0)");
	if (!*arg)
		return vmm_err_set(err, EINVAL, "--api-socket-group: no group");
	char *end;
	errno = 0;
	unsigned long n = strtoul(arg, &end, 10);
	if (*end == '\0' && arg[0] >= '0' && arg[0] <= '9') {
		if (errno || n >= (unsigned long)(gid_t)-1)
			return vmm_err_set(err, EINVAL, "--api-socket-group: '%s' is not a group number", arg);
		*gid = (gid_t)n;
		return 0;
	}
#if MINIVMM_API_SOCKET
	struct group gr, *found = NULL;
	char buf[4096];
	int rc = getgrnam_r(arg, &gr, buf, sizeof(buf), &found);
	if (rc || !found)
		return vmm_err_set(err, rc ? rc : ENOENT, "--api-socket-group: no group '%s'%s%s", arg, rc ? ": " : "",
				   rc ? strerror(rc) : "");
	*gid = gr.gr_gid;
	return 0;
#else
	return vmm_err_set(err, EINVAL, "--api-socket-group: '%s' is not a group number", arg);
#endif
}

#define SERIAL_SYNTAX "stdio|none|file:PATH"
#define STATS_INTERVAL_MAX 86400   /* seconds: a day */
#define STR2(x) #x
#define STR(x) STR2(x)

const char cli_usage[] =
	"Usage: minivmm --kernel PATH [options]\n"
	"\n"
	"Boot a Linux bzImage, a PVH vmlinux or a PVH unikernel ELF under KVM.\n"
	"Each option may be given once, except --net (one device each time).\n"
	"\n"
	"  --kernel PATH        kernel to boot: bzImage (64-bit boot protocol, >= 2.12)\n"
	"                       or an ELF with a PVH entry note\n"
	"  --initrd PATH        initial ramdisk\n"
	"  --cmdline STR        kernel command line\n"
	"                       (default: \"" MINIVMM_DEFAULT_CMDLINE "\")\n"
	"  --cpus N[,pin=LIST]  number of vCPUs, 1 to 64 (default 1); pin=LIST runs\n"
	"                       vCPU i on the i-th CPU of LIST (e.g. 0-3 or 0,2,4,6)\n"
	"  --mem SIZE           guest RAM in MiB, or with a suffix K, M, G or T: 512,\n"
	"                       64M, 1G ... At least 16M and a multiple of 2M (default\n"
	"                       256M); at most the host's memory\n"
	"  --mem-overcommit     allow --mem above the host's memory (MemTotal, or the\n"
	"                       memory cgroup limit): RAM costs what the guest touches\n"
	"  --serial " SERIAL_SYNTAX "\n"
	"                       where COM1 (ttyS0) goes (default stdio; on a terminal\n"
	"                       input is raw and Ctrl-A x quits). A FIFO needs a reader\n"
	"  --net " NET_SYNTAX "\n"
	"                       a virtio-net device; repeat for more (up to 8). Keys:\n"
	"    tap[=NAME]               a tap (default), NAME opened or created; none: new\n"
	"    packet=IFACE             AF_PACKET sockets on the host interface IFACE\n"
	"    xdp=IFACE                AF_XDP sockets on IFACE, guest RAM as the UMEM\n"
	"    queues=N                 queue pairs, 1 to 16 (default 1)\n"
	"    threads=auto|per-queue|M workers: fit the free cores (default), 1 a pair, M\n"
	"    cpus=LIST                pin worker i to the i-th CPU of LIST\n"
	"    mac=MAC                  guest MAC (default: made from the interface name)\n"
	"    mtu=N                    MTU for the guest, 68 to 65535 (default 1500)\n"
	"    queue-size=N             ring size, a power of 2 up to 1024 (default 256)\n"
	"    engine=uring|epoll       the workers' loop: io_uring (default) or epoll\n"
	"    poll-us=auto|N           busy-poll N us before sleeping (default 0) or auto\n"
	"    fixed-files=on|off       io_uring: registered descriptors (default on)\n"
	"    fixed-buffers=on|off     io_uring: guest RAM as fixed buffers (default off)\n"
	"    defer-taskrun=on|off     io_uring: DEFER_TASKRUN (default on)\n"
	"    fanout=hash|cpu|lb|qm    packet: PACKET_FANOUT mode (default hash)\n"
	"    rx=ring|recv             packet: TPACKET_V3 ring (default) or readv a frame\n"
	"    qdisc-bypass=on|off      packet: bypass the qdisc on transmit (default on)\n"
	"    xdp-zero-copy=on|off     xdp: zero-copy, if the driver can (default off)\n"
	"    ip=ADDR/PREFIX           tap: this address on it, up (undone at exit)\n"
	"    bridge=BR                tap: a port of bridge BR instead, up (undone too)\n"
	"    rx-bw=SIZE/MS[/BURST]    rate limit host to guest: a bucket of SIZE bytes\n"
	"                             refilled every MS ms (+ a one-time BURST); e.g.\n"
	"                             125000/100 is 10 Mbit/s (default: none)\n"
	"    tx-bw=SIZE/MS[/BURST]    the same, guest to host (the guest waits: no drop)\n"
	"    rx-ops=N/MS[/BURST]      frames: N per MS ms, host to guest\n"
	"    tx-ops=N/MS[/BURST]      frames, guest to host\n"
	"  --stats[=json]       statistics at exit and on SIGUSR1, to stderr: a table\n"
	"                       (the VM, then each device's queues and workers) or\n"
	"                       one JSON line (keys in docs/stats.md)\n"
	"  --stats-file PATH    append one JSON line of statistics to PATH every\n"
	"                       --stats-interval, on SIGUSR1 and at exit (a new file\n"
	"                       is made mode 0600)\n"
	"  --stats-interval SECS\n"
	"                       seconds between --stats-file lines, 0 to " STR(STATS_INTERVAL_MAX) "\n"
	"                       (default " STR(CLI_STATS_INTERVAL_DEFAULT) "); 0: only on SIGUSR1 and at exit\n"
	"  --api-socket PATH    serve the HTTP API (docs/api.md) on a new Unix socket\n"
	"                       PATH, mode 0600: curl --unix-socket PATH\n"
	"                       http://localhost/api/v1/vmm.ping\n"
	"  --api-socket-group GROUP\n"
	"                       the socket's group (a name or number), mode 0660:\n"
	"                       its members may use the API too\n"
	"  --acpi=on|off        ACPI tables (default on): distribution kernels find\n"
	"                       virtio-mmio devices and power off through them. The MP\n"
	"                       table and virtio_mmio.device= cmdline entries are\n"
	"                       always there for kernels without ACPI\n"
	"  --irqchip=kernel|split\n"
	"                       split (default): minivmm's IOAPIC and a PIT that counts\n"
	"                       but raises no IRQ0, KVM's LAPICs, no PIC (the guest\n"
	"                       takes its ticks from the LAPIC, as Linux under KVM\n"
	"                       does); kernel: KVM's PIC, IOAPIC and ticking PIT\n"
	"                       (start-up and exit ~20 ms slower)\n"
	"  --dump-dtb FILE      build the machine the other options describe, write its\n"
	"                       device tree (the DTB a PVH guest gets) to FILE and exit\n"
	"                       0 without running the guest\n"
	"  --cpuid-dump[=guest|supported]\n"
	"                       print the CPUID vCPU 0 gets (with --cpus N), what differs\n"
	"                       from KVM's and why; or KVM_GET_SUPPORTED_CPUID as is.\n"
	"                       Runs no guest (see docs/cpu.md)\n"
	"  --seccomp=on|off|log each thread allows only the system calls of its kind\n"
	"                       (default on: any other kills the process, exit status\n"
	"                       159 = 128 + SIGSYS); log: such calls are allowed and the\n"
	"                       kernel logs them (dmesg: audit type=1326, comm= thread,\n"
	"                       syscall= number); off: no filters. See docs/security.md\n"
	"  --drop-caps          (the default) once set up, each thread keeps only the\n"
	"                       capabilities it needs: none, but CAP_NET_ADMIN/CAP_NET_RAW\n"
	"                       for the threads that reopen taps and packet sockets\n"
	"  --keep-caps          every thread keeps all the capabilities minivmm started\n"
	"                       with (for debugging; says so at start)\n"
	"  --seccomp-list       print every thread's allow-list (Markdown) and exit\n"
	"  --boot-trace         one line per start-up phase with the milliseconds since\n"
	"                       the VMM started, and at the stop (see docs/boot.md)\n"
	"  --timeout SECS       stop a guest still running SECS seconds (1 to 31536000)\n"
	"                       after it started: exit status 12\n"
	"  --help               this text\n"
	"  --version            print the version\n"
	"\n"
	"Signals: SIGTERM, SIGINT, SIGHUP and SIGQUIT stop the guest cleanly (exit\n"
	"128+N; SIGHUP stays ignored under nohup); SIGUSR1 writes the statistics: a\n"
	"line to --stats-file, and to stderr as --stats says (a table when neither\n"
	"is given); SIGPIPE is ignored.\n"
	"\n"
	"Exit status:\n"
	"  0        the guest reset or powered off (or Ctrl-A x)\n"
	"  1..127   odd: (v << 1) | 1, the guest wrote v (0 to 63) to the debug-exit\n"
	"           port 0x501\n"
	"  2        bad usage or input: nothing ran\n"
	"  4        the guest crashed (triple fault, KVM internal error)\n"
	"  6        the VMM failed while running\n"
	"  8        debug-exit value out of range (the guest wrote more than 63)\n"
	"  10       the guest panicked (it said so through the pvpanic device)\n"
	"  12       the guest still ran when --timeout ran out\n"
	"  128+N    stopped by signal N (SIGTERM 143, SIGINT 130)\n";

enum { OPT_KERNEL, OPT_INITRD, OPT_CMDLINE, OPT_CPUS, OPT_MEM, OPT_SERIAL, OPT_HELP,
       OPT_VERSION, OPT_NET, OPT_STATS, OPT_ACPI, OPT_MEM_OVERCOMMIT, OPT_DUMP_DTB,
       OPT_CPUID_DUMP, OPT_SECCOMP, OPT_DROP_CAPS, OPT_KEEP_CAPS, OPT_SECCOMP_LIST, OPT_BOOT_TRACE, OPT_IRQCHIP, OPT_TIMEOUT,
       OPT_STATS_FILE, OPT_STATS_INTERVAL, OPT_API_SOCKET, OPT_API_SOCKET_GROUP, OPT_END };

/* A value: none (--drop-caps), after '=' or as the next argument
 * (--mem 1G, --mem=1G), or only after '=' (--stats=json). */
enum cli_value { VALUE_NONE, VALUE_REQUIRED, VALUE_OPTIONAL };

/* Long options only, and only by their full names: getopt_long's unique
 * prefixes ("--kern") would turn into errors or other options the day a
 * new option shares them. */
static const struct cli_option {
	const char *name;   /* first: vmm/suggest.h reads the table by it */
	enum cli_value value;
	int id;
} cli_options[] = {
	{ "kernel", VALUE_REQUIRED, OPT_KERNEL },
	{ "initrd", VALUE_REQUIRED, OPT_INITRD },
	{ "cmdline", VALUE_REQUIRED, OPT_CMDLINE },
	{ "cpus", VALUE_REQUIRED, OPT_CPUS },
	{ "mem", VALUE_REQUIRED, OPT_MEM },
	{ "serial", VALUE_REQUIRED, OPT_SERIAL },
	{ "net", VALUE_REQUIRED, OPT_NET },
	{ "stats", VALUE_OPTIONAL, OPT_STATS },
	{ "stats-file", VALUE_REQUIRED, OPT_STATS_FILE },
	{ "stats-interval", VALUE_REQUIRED, OPT_STATS_INTERVAL },
	{ "api-socket", VALUE_REQUIRED, OPT_API_SOCKET },
	{ "api-socket-group", VALUE_REQUIRED, OPT_API_SOCKET_GROUP },
	{ "acpi", VALUE_REQUIRED, OPT_ACPI },
	{ "irqchip", VALUE_REQUIRED, OPT_IRQCHIP },
	{ "mem-overcommit", VALUE_NONE, OPT_MEM_OVERCOMMIT },
	{ "dump-dtb", VALUE_REQUIRED, OPT_DUMP_DTB },
	{ "cpuid-dump", VALUE_OPTIONAL, OPT_CPUID_DUMP },
	{ "seccomp", VALUE_REQUIRED, OPT_SECCOMP },
	{ "drop-caps", VALUE_NONE, OPT_DROP_CAPS },
	{ "keep-caps", VALUE_NONE, OPT_KEEP_CAPS },
	{ "seccomp-list", VALUE_NONE, OPT_SECCOMP_LIST },
	{ "boot-trace", VALUE_NONE, OPT_BOOT_TRACE },
	{ "timeout", VALUE_REQUIRED, OPT_TIMEOUT },
	{ "help", VALUE_NONE, OPT_HELP },
	{ "version", VALUE_NONE, OPT_VERSION },
};

#define NR_CLI_OPTIONS (sizeof(cli_options) / sizeof(cli_options[0]))

int cli_parse_size(const char *text, uint64_t *bytes)
{
	if (!text || *text < '0' || *text > '9')
		return -EINVAL;   /* strtoull would take " 1", "+1" and "-1" */
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text)
		return -EINVAL;
	unsigned shift = 20;   /* no suffix: MiB, as QEMU's -m and kvmtool's --mem */
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (end[-1] > '9' && (*end == 'i' || *end == 'I') && (end[1] == 'B' || end[1] == 'b'))
		end += 2;   /* "KiB" ... "TiB" */
	if (*end || v > (ULLONG_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

static int cli_parse_serial(const char *text, struct minivmm_config *vm, struct vmm_err *err)
{
	if (strcmp(text, "stdio") == 0) {
		vm->serial = MINIVMM_SERIAL_STDIO;
	} else if (strcmp(text, "none") == 0) {
		vm->serial = MINIVMM_SERIAL_NONE;
	} else if (strncmp(text, "file:", 5) == 0 && text[5]) {
		vm->serial = MINIVMM_SERIAL_FILE;
		vm->serial_path = text + 5;
	} else {
		return vmm_err_set(err, EINVAL, "--serial: '%s' is not one of " SERIAL_SYNTAX, text);
	}
	return 0;
}

/* "N" or "N,pin=LIST". The range of N and the length of LIST are the
 * validator's (vmm/config.c). */
static int cli_parse_cpus(const char *arg, struct minivmm_config *vm, struct vmm_err *err)
{
	char num[16];
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	if (len >= sizeof(num))
		len = sizeof(num) - 1;
	memcpy(num, arg, len);
	num[len] = '\0';
	int rc = net_config_parse_number(num, &vm->ncpus);
	if (rc == -ERANGE)
		return vmm_err_set(err, EINVAL, "--cpus: '%s' is too large", num);
	if (rc)
		return vmm_err_set(err, EINVAL, "--cpus: '%s' is not a number", num);
	if (!comma)
		return 0;
	if (strncmp(comma + 1, "pin=", 4) != 0)
		return vmm_err_set(err, EINVAL, "--cpus: '%s' is not N or N,pin=LIST", arg);
	struct vmm_err e = { 0 };
	int n = cpulist_parse(comma + 5, vm->vcpu_cpus, MINIVMM_MAX_CPUS, &e);
	if (n < 0)
		return vmm_err_set(err, EINVAL, "--cpus pin: %s", e.msg);
	vm->nr_vcpu_cpus = (unsigned)n;
	return 0;
}

/* A keyword option: arg must be one of names[] (NULL-terminated); *out gets
 * the matching value. The error lists the choices: "'x' is not a, b or c". */
static int cli_pick(const char *opt, const char *arg, const char *const names[], const int values[],
		    int *out, struct vmm_err *err)
{
	unsigned n = 0;
	for (; names[n]; n++)
		if (strcmp(arg, names[n]) == 0) {
			*out = values[n];
			return 0;
		}
	char choices[128] = "";
	for (unsigned i = 0; i < n; i++) {
		size_t used = strlen(choices);
		snprintf(choices + used, sizeof(choices) - used, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
			 names[i]);
	}
	return vmm_err_set(err, EINVAL, "--%s: '%s' is not %s", opt, arg, choices);
}

static int cli_apply(int opt, const char *arg, struct cli_options *o, struct vmm_err *err)
{
	switch (opt) {
	case OPT_KERNEL:
		o->vm.kernel_path = arg;
		return 0;
	case OPT_INITRD:
		o->vm.initrd_path = arg;
		return 0;
	case OPT_CMDLINE:
		o->vm.cmdline = arg;
		return 0;
	case OPT_CPUS:
		return cli_parse_cpus(arg, &o->vm, err);
	case OPT_NET:
		/* The array holds MINIVMM_MAX_NETS: the validator's limit. */
		if (o->vm.nr_nets == MINIVMM_MAX_NETS)
			return vmm_err_set(err, EINVAL, "--net: at most %d network devices", MINIVMM_MAX_NETS);
		minivmm_net_config_init(&o->vm.net[o->vm.nr_nets]);
		if (net_config_parse(arg, &o->vm.net[o->vm.nr_nets], err))
			return -EINVAL;
		o->vm.nr_nets++;
		return 0;
	case OPT_ACPI:
		return cli_pick("acpi", arg, (const char *const[]){ "on", "off", NULL }, (const int[]){ 1, 0 },
				&o->vm.acpi, err);
	case OPT_IRQCHIP:
	{
		int v = 0;
		int rc = cli_pick("irqchip", arg, (const char *const[]){ "kernel", "split", NULL },
				  (const int[]){ MINIVMM_IRQCHIP_KERNEL, MINIVMM_IRQCHIP_SPLIT }, &v, err);
		if (rc == 0)
			o->vm.irqchip = (enum minivmm_irqchip)v;
		return rc;
	}
	case OPT_CPUID_DUMP:
		if (!arg || strcmp(arg, "guest") == 0)
			o->cpuid_dump = MINIVMM_CPUID_DUMP_GUEST;
		else if (strcmp(arg, "supported") == 0)
			o->cpuid_dump = MINIVMM_CPUID_DUMP_SUPPORTED;
		else
			return vmm_err_set(err, EINVAL, "--cpuid-dump: '%s' is not guest or supported", arg);
		return 0;
	case OPT_STATS:
		if (!arg || strcmp(arg, "table") == 0)
			o->stats = 1;
		else if (strcmp(arg, "json") == 0)
			o->stats = 2;
		else
			return vmm_err_set(err, EINVAL, "--stats: '%s' is not table or json", arg);
		return 0;
	case OPT_STATS_FILE:
		if (!*arg)
			return vmm_err_set(err, EINVAL, "--stats-file: no file name");
		o->stats_file = arg;
		return 0;
	case OPT_API_SOCKET:
		if (!MINIVMM_API_SOCKET)
			return vmm_err_set(err, EOPNOTSUPP,
					   "--api-socket: this minivmm is built without the API socket (make API_SOCKET=0)");
		if (!*arg)
			return vmm_err_set(err, EINVAL, "--api-socket: no path");
		o->api_socket = arg;
		return 0;
	case OPT_API_SOCKET_GROUP:
		return parse_group(arg, &o->api_gid, err);
	case OPT_STATS_INTERVAL:
		if (net_config_parse_number(arg, &o->stats_interval) || o->stats_interval > STATS_INTERVAL_MAX)
			return vmm_err_set(err, EINVAL,
					   "--stats-interval: '%s' is not a number of seconds from 0 to %u", arg,
					   STATS_INTERVAL_MAX);
		o->stats_interval_set = true;
		return 0;
	case OPT_MEM:
		if (cli_parse_size(arg, &o->vm.mem_size))
			return vmm_err_set(err, EINVAL, "--mem: '%s' is not a size such as 256M or 1G", arg);
		return 0;
	case OPT_BOOT_TRACE:
		o->vm.boot_trace = 1;
		return 0;
	case OPT_TIMEOUT:
		/* 0 means "no limit" to the library, never on the command line;
		 * the upper bound is the validator's. */
		if (net_config_parse_number(arg, &o->vm.timeout_secs) || o->vm.timeout_secs == 0)
			return vmm_err_set(err, EINVAL, CONFIG_TIMEOUT_MSG, arg, MINIVMM_TIMEOUT_MAX_SECS);
		return 0;
	case OPT_MEM_OVERCOMMIT:
		o->vm.mem_overcommit = 1;
		return 0;
	case OPT_SERIAL:
		return cli_parse_serial(arg, &o->vm, err);
	case OPT_DUMP_DTB:
		if (!*arg)
			return vmm_err_set(err, EINVAL, "--dump-dtb: no file name");
		o->dump_dtb = arg;
		return 0;
	case OPT_SECCOMP:
	{
		int v = 0;
		int rc = cli_pick("seccomp", arg, (const char *const[]){ "on", "off", "log", NULL },
				  (const int[]){ MINIVMM_SECCOMP_ON, MINIVMM_SECCOMP_OFF, MINIVMM_SECCOMP_LOG },
				  &v, err);
		if (rc == 0)
			o->vm.seccomp = (enum minivmm_seccomp)v;
		return rc;
	}
	case OPT_DROP_CAPS:
		o->vm.drop_caps = 1;
		return 0;
	case OPT_KEEP_CAPS:
		o->vm.drop_caps = 0;
		o->keep_caps = true;
		return 0;
	case OPT_SECCOMP_LIST:
		o->seccomp_list = true;
		return 0;
	case OPT_HELP:
		o->help = true;
		return 0;
	case OPT_VERSION:
		o->version = true;
		return 0;
	default:
		return vmm_err_set(err, EINVAL, "internal: unhandled option %d", opt);
	}
}

/* Options that may appear once: a second --kernel would silently win. */
static bool cli_single_valued(int opt)
{
	return opt != OPT_NET && opt != OPT_HELP && opt != OPT_VERSION && opt != OPT_MEM_OVERCOMMIT &&
	       opt != OPT_DROP_CAPS && opt != OPT_SECCOMP_LIST;
}

static const struct cli_option *cli_option_find(const char *name, size_t len)
{
	for (size_t i = 0; i < NR_CLI_OPTIONS; i++)
		if (strncmp(cli_options[i].name, name, len) == 0 && cli_options[i].name[len] == '\0')
			return &cli_options[i];
	return NULL;
}

/* arg begins with '-' and is no option of ours: "unknown option '--cpu';
 * did you mean '--cpus'?" when one is that close. There are no short
 * options: "-k X" is "unknown option '-k'", but "-kernel" may mean one. */
static int cli_unknown_option(const char *arg, struct vmm_err *err)
{
	bool dashes = arg[1] == '-';
	const char *name = arg + (dashes ? 2 : 1);
	size_t len = strcspn(name, "=");
	int shown = (int)(name - arg + len);   /* the option as given, without "=value" */
	const char *near = NULL;
	if (dashes || len > 1) {
		char word[SUGGEST_MAX_NAME + 8];
		/* Cut, a name too long to be near any still is. */
		size_t cut = len < sizeof(word) ? len : sizeof(word) - 1;
		memcpy(word, name, cut);
		word[cut] = '\0';
		near = suggest_nearest(word, cli_options, NR_CLI_OPTIONS, sizeof(cli_options[0]));
	}
	if (near)
		return vmm_err_set(err, EINVAL, "unknown option '%.*s'; did you mean '--%s'?", shown, arg, near);
	if (!dashes)
		shown = 2;   /* "-m512": a short option m with its value */
	else if (len == 0)
		shown = (int)strlen(arg);   /* "--=x" */
	return vmm_err_set(err, EINVAL, "unknown option '%.*s'", shown, arg);
}

int cli_parse(int argc, char **argv, struct cli_options *o, struct vmm_err *err)
{
	memset(o, 0, sizeof(*o));
	minivmm_config_init(&o->vm);
	/* Least privilege by default (the library's default is the
	 * embedding program's to choose): --keep-caps for debugging. */
	o->vm.drop_caps = 1;
	o->stats_interval = CLI_STATS_INTERVAL_DEFAULT;
	o->api_gid = (gid_t)-1;
	/* The value each single-valued option was given, for "given twice". */
	const char *given[OPT_END] = { 0 };
	bool seen[OPT_END] = { false };
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--") == 0) {
			if (i + 1 < argc)
				return vmm_err_set(err, EINVAL, "unexpected argument '%s'", argv[i + 1]);
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0')
			return vmm_err_set(err, EINVAL, "unexpected argument '%s'", arg);
		const char *eq = strchr(arg, '=');
		const struct cli_option *opt = arg[1] == '-' ?
			cli_option_find(arg + 2, eq ? (size_t)(eq - arg - 2) : strlen(arg + 2)) : NULL;
		if (!opt)
			return cli_unknown_option(arg, err);
		const char *value = eq ? eq + 1 : NULL;
		if (opt->value == VALUE_NONE && value)
			return vmm_err_set(err, EINVAL, "--%s takes no value", opt->name);
		if (opt->value == VALUE_REQUIRED && !value) {
			if (i + 1 == argc)
				return vmm_err_set(err, EINVAL, "--%s needs a value", opt->name);
			value = argv[++i];
		}
		if (cli_single_valued(opt->id)) {
			if (seen[opt->id])
				return vmm_err_set(err, EINVAL, "--%s given twice ('%s' and '%s')", opt->name,
						   given[opt->id] ? given[opt->id] : "", value ? value : "");
			seen[opt->id] = true;
			given[opt->id] = value;
		}
		int rc = cli_apply(opt->id, value, o, err);
		if (rc)
			return rc;
		if (opt->id == OPT_DROP_CAPS)
			o->drop_caps_given = true;
	}
	if (o->keep_caps && o->drop_caps_given)
		return vmm_err_set(err, EINVAL, "--keep-caps and --drop-caps: one or the other");
	if (o->stats_interval_set && !o->stats_file)
		return vmm_err_set(err, EINVAL, "--stats-interval needs --stats-file");
	if (o->api_gid != (gid_t)-1 && !o->api_socket)
		return vmm_err_set(err, EINVAL, "--api-socket-group needs --api-socket");
	if (o->help || o->version || o->seccomp_list)
		return 0;
	/* Ranges and consistency: the library's own validator, so the words
	 * are those an embedding program gets from minivmm_create().
	 * --cpuid-dump runs no kernel, but its --cpus is checked as well. */
	struct minivmm_config check = o->vm;
	if (o->cpuid_dump && !check.kernel_path)
		check.kernel_path = "-";
	char msg[sizeof(err->msg)];
	if (minivmm_config_validate(&check, msg, sizeof(msg)) < 0)
		return vmm_err_set(err, EINVAL, "%s", msg);
	return 0;
}
