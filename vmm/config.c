/* SPDX-License-Identifier: Apache-2.0 */
/* Configuration defaults and the validator (see vmm/config.h). */
#include "vmm/config.h"
#include "vmm/api_args.h"
#include "vmm/rate_limits.h"

#include "net/host_addr.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

void minivmm_config_init(struct minivmm_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->ncpus = 1;
	cfg->mem_size = MINIVMM_DEFAULT_MEM;
	cfg->serial = MINIVMM_SERIAL_STDIO;
	cfg->serial_in_fd = 0;
	cfg->serial_out_fd = 1;
	cfg->acpi = 1;
	/* Start-up and teardown ~20 ms faster than KVM's PIC, IOAPIC and PIT
	 * (their SRCU grace periods; docs/architecture.md, "Interrupt
	 * controllers"), as Cloud Hypervisor runs. */
	cfg->irqchip = MINIVMM_IRQCHIP_SPLIT;
	cfg->kick_signal = SIGRTMIN + 1;
}

void minivmm_net_config_init(struct minivmm_net_config *net)
{
	if (!net)
		return;
	memset(net, 0, sizeof(*net));
	net->backend = MINIVMM_NET_TAP;
	net->queues = 1;
	net->threads = MINIVMM_THREADS_AUTO;
	net->mtu = 1500;
	net->queue_size = 256;
	net->engine = MINIVMM_ENGINE_URING;
	net->qdisc_bypass = 1;
	net->uring_fixed_files = 1;
	net->uring_defer_taskrun = 1;
}

void config_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const struct { unsigned shift; char unit; } units[] = {
		{ 40, 'T' }, { 30, 'G' }, { 20, 'M' }, { 10, 'K' },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t one = 1ull << units[i].shift;
		if (bytes && bytes % one == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", bytes / one, units[i].unit);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, bytes);
}

void config_signal_name(int sig, char *buf, size_t len)
{
	const char *abbrev = sig > 0 && sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, len, "SIGRTMIN+%d", sig - SIGRTMIN);
	else if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", sig);
}

int config_check_cpus_allowed(const char *what, const int *cpus, unsigned n,
			      const cpu_set_t *allowed, struct vmm_err *err)
{
	for (unsigned i = 0; i < n; i++)
		if (cpus[i] < 0 || cpus[i] >= CPU_SETSIZE || !CPU_ISSET(cpus[i], allowed))
			return vmm_err_set(err, EINVAL, "%s: CPU %d is not one this process may run on",
					   what, cpus[i]);
	return 0;
}

static int check_cpus_runnable(const char *what, const int *cpus, unsigned n, struct vmm_err *err)
{
	if (n == 0)
		return 0;
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return vmm_err_sys(err, errno, "%s: sched_getaffinity", what);
	return config_check_cpus_allowed(what, cpus, n, &allowed, err);
}

/* ---- one network device: one function per key ---------------------------- */

typedef int (*net_check_fn)(const struct minivmm_net_config *net, struct vmm_err *err);

/* The --net key naming each backend. */
static const char *net_backend_key(enum minivmm_net_backend b)
{
	switch (b) {
	case MINIVMM_NET_TAP: return "tap";
	case MINIVMM_NET_PACKET: return "packet";
	case MINIVMM_NET_XDP: return "xdp";
	}
	return NULL;
}

/* make XDP=0 builds without the AF_XDP backend (net/xdp_none.c). */
#ifndef MINIVMM_XDP
#define MINIVMM_XDP 1
#endif
/* make HOSTNET=0 builds without a tap's ip= and bridge= (net/hostnet_none.c). */
#ifndef MINIVMM_HOSTNET
#define MINIVMM_HOSTNET 1
#endif

static int net_check_backend(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (!net_backend_key(net->backend))
		return vmm_err_set(err, EINVAL, "--net: backend %d is not tap, packet or xdp", (int)net->backend);
	return 0;
}

/* Last: a configuration that is right in every other way. */
static int net_check_backend_built(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->backend == MINIVMM_NET_XDP && !MINIVMM_XDP)
		return vmm_err_set(err, EOPNOTSUPP,
				   "--net xdp=%s: this minivmm is built without AF_XDP (make XDP=0); "
				   "use tap= or packet=", net->ifname);
	if ((net->ip[0] || net->bridge[0]) && !MINIVMM_HOSTNET)
		return vmm_err_set(err, EOPNOTSUPP,
				   "--net %s=%s: this minivmm is built without host networking (make HOSTNET=0, "
				   "the default of STATIC=1); set the tap up with ip(8) instead",
				   net->ip[0] ? "ip" : "bridge", net->ip[0] ? net->ip : net->bridge);
	return 0;
}

static int net_check_ifname(const struct minivmm_net_config *net, struct vmm_err *err)
{
	const char *key = net_backend_key(net->backend);
	if (strnlen(net->ifname, sizeof(net->ifname)) == sizeof(net->ifname))
		return vmm_err_set(err, EINVAL, "--net %s: interface name '%.*s' is too long", key,
				   (int)sizeof(net->ifname), net->ifname);
	/* Only a tap can be made up: the others bind to an interface. */
	if (net->backend != MINIVMM_NET_TAP && !net->ifname[0])
		return vmm_err_set(err, EINVAL, "--net %s=IFACE: the host interface is required", key);
	return 0;
}

static int net_check_queues(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->queues < 1 || net->queues > MINIVMM_MAX_QUEUE_PAIRS)
		return vmm_err_set(err, EINVAL, "--net queues: '%u' is not a number from 1 to %d",
				   net->queues, MINIVMM_MAX_QUEUE_PAIRS);
	return 0;
}

static int net_check_threads(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->threads == MINIVMM_THREADS_AUTO)
		return 0;
	if (net->threads > MINIVMM_MAX_QUEUE_PAIRS) {
		char text[16];
		snprintf(text, sizeof(text), "%u", net->threads);
		return vmm_err_set(err, EINVAL, CONFIG_NET_THREADS_MSG, text, MINIVMM_MAX_QUEUE_PAIRS);
	}
	if (net->threads > net->queues)
		return vmm_err_set(err, EINVAL, "--net threads=%u: more threads than the %u queue pairs",
				   net->threads, net->queues);
	return 0;
}

static int net_check_cpus(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->nr_cpus > MINIVMM_MAX_QUEUE_PAIRS)
		return vmm_err_set(err, EINVAL, "--net cpus: %u CPUs listed, at most %d", net->nr_cpus,
				   MINIVMM_MAX_QUEUE_PAIRS);
	/* threads=auto: as many workers as the host's spare cores allow, at
	 * most one per pair; a CPU list covers it if it covers every pair. */
	unsigned workers = net->threads == MINIVMM_THREADS_AUTO ? 1 : net->threads ? net->threads : net->queues;
	if (net->nr_cpus && net->nr_cpus < workers)
		return vmm_err_set(err, EINVAL, "--net cpus: %u CPUs listed for %u worker threads",
				   net->nr_cpus, workers);
	return check_cpus_runnable("--net cpus", net->cpus, net->nr_cpus, err);
}

static int net_check_mac(const struct minivmm_net_config *net, struct vmm_err *err)
{
	const unsigned char *m = net->mac;
	static const unsigned char zero[6];
	/* Multicast addresses and 00:00:00:00:00:00 cannot name a NIC. */
	if (net->mac_set && ((m[0] & 1) || memcmp(m, zero, sizeof(zero)) == 0))
		return vmm_err_set(err, EINVAL,
				   "--net mac: '%02x:%02x:%02x:%02x:%02x:%02x' is not a unicast MAC such as 02:00:00:00:00:01",
				   m[0], m[1], m[2], m[3], m[4], m[5]);
	return 0;
}

static int net_check_mtu(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->mtu < MINIVMM_NET_MTU_MIN || net->mtu > MINIVMM_NET_MTU_MAX)
		return vmm_err_set(err, EINVAL, "--net mtu: '%u' is not a number from %d to %d", net->mtu,
				   MINIVMM_NET_MTU_MIN, MINIVMM_NET_MTU_MAX);
	return 0;
}

static int net_check_queue_size(const struct minivmm_net_config *net, struct vmm_err *err)
{
	unsigned n = net->queue_size;
	if (n < 2 || n > MINIVMM_NET_QUEUE_SIZE_MAX || (n & (n - 1)))
		return vmm_err_set(err, EINVAL, "--net queue-size: '%u' is not a power of two from 2 to %d",
				   n, MINIVMM_NET_QUEUE_SIZE_MAX);
	return 0;
}

static int net_check_engine(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->engine != MINIVMM_ENGINE_URING && net->engine != MINIVMM_ENGINE_EPOLL)
		return vmm_err_set(err, EINVAL, "--net engine: %d is not uring or epoll", (int)net->engine);
	return 0;
}

static int net_check_poll_us(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->poll_us > MINIVMM_NET_POLL_US_MAX && net->poll_us != MINIVMM_POLL_AUTO)
		return vmm_err_set(err, EINVAL, "--net poll-us: '%u' is not auto or a number from 0 to %d",
				   net->poll_us, MINIVMM_NET_POLL_US_MAX);
	return 0;
}

static int net_check_fanout(const struct minivmm_net_config *net, struct vmm_err *err)
{
	switch (net->fanout) {
	case 0: case 1: case 2: case 5:   /* PACKET_FANOUT_HASH, _LB, _CPU, _QM */
		return 0;
	default:
		return vmm_err_set(err, EINVAL, "--net fanout: %u is not hash, cpu, lb or qm", net->fanout);
	}
}

static int net_check_rx(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->rx_recv != 0 && net->rx_recv != 1)
		return vmm_err_set(err, EINVAL, "--net rx: %d is not ring (0) or recv (1)", net->rx_recv);
	return 0;
}

static int net_check_qdisc_bypass(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->qdisc_bypass != 0 && net->qdisc_bypass != 1)
		return vmm_err_set(err, EINVAL, "--net qdisc-bypass: %d is not off (0) or on (1)",
				   net->qdisc_bypass);
	return 0;
}

static int net_check_uring_flags(const struct minivmm_net_config *net, struct vmm_err *err)
{
	const struct { int v; const char *key; } flags[] = {
		{ net->uring_fixed_files, "fixed-files" }, { net->uring_fixed_buffers, "fixed-buffers" },
		{ net->uring_defer_taskrun, "defer-taskrun" },
	};
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (flags[i].v != 0 && flags[i].v != 1)
			return vmm_err_set(err, EINVAL, "--net %s: %d is not off (0) or on (1)", flags[i].key,
					   flags[i].v);
	return 0;
}

static int net_check_xdp_zero_copy(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->xdp_zero_copy != 0 && net->xdp_zero_copy != 1)
		return vmm_err_set(err, EINVAL, "--net xdp zero-copy: %d is not off (0) or on (1)",
				   net->xdp_zero_copy);
	return 0;
}

/* ip= and bridge=: the tap's host side, one or the other. */
static int net_check_host(const struct minivmm_net_config *net, struct vmm_err *err)
{
	bool ip_set = net->ip[0], bridge_set = net->bridge[0];
	if (strnlen(net->ip, sizeof(net->ip)) == sizeof(net->ip))
		return vmm_err_set(err, EINVAL, "--net ip: '%.*s' is too long for ADDR/PREFIX",
				   (int)sizeof(net->ip), net->ip);
	if (strnlen(net->bridge, sizeof(net->bridge)) == sizeof(net->bridge))
		return vmm_err_set(err, EINVAL, "--net bridge: interface name '%.*s' is too long",
				   (int)sizeof(net->bridge), net->bridge);
	if ((ip_set || bridge_set) && net->backend != MINIVMM_NET_TAP)
		return vmm_err_set(err, EINVAL, "--net %s=%s: only for the tap backend, and this device's is %s",
				   ip_set ? "ip" : "bridge", ip_set ? net->ip : net->bridge,
				   net_backend_key(net->backend));
	if (ip_set && bridge_set)
		return vmm_err_set(err, EINVAL,
				   "--net ip=%s,bridge=%s: one or the other: a bridge port takes no address of its own (give it to %s)",
				   net->ip, net->bridge, net->bridge);
	struct host_addr a;
	struct vmm_err e = { 0 };
	if (ip_set && host_addr_parse(net->ip, &a, &e) < 0)
		return vmm_err_set(err, EINVAL, "--net ip: %s", e.msg);
	return 0;
}

static int net_check_rate_limits(const struct minivmm_net_config *net, struct vmm_err *err)
{
	int rc = rate_limit_check(&net->rx_limit, "--net rx", err);
	return rc ? rc : rate_limit_check(&net->tx_limit, "--net tx", err);
}

/* Ranges first, then how the fields fit together (threads and cpus refer
 * to queues). */
static const net_check_fn net_checks[] = {
	net_check_backend, net_check_ifname, net_check_queues, net_check_mac, net_check_mtu,
	net_check_queue_size, net_check_engine, net_check_poll_us, net_check_fanout, net_check_rx,
	net_check_qdisc_bypass, net_check_uring_flags, net_check_xdp_zero_copy, net_check_host,
	net_check_rate_limits, net_check_threads, net_check_cpus, net_check_backend_built,
};

int config_validate_net(const struct minivmm_net_config *net, struct vmm_err *err)
{
	for (size_t i = 0; i < sizeof(net_checks) / sizeof(net_checks[0]); i++) {
		int rc = net_checks[i](net, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the VM: one function per option -------------------------------------- */

typedef int (*vm_check_fn)(const struct minivmm_config *cfg, struct vmm_err *err);

static int vm_check_ncpus(const struct minivmm_config *cfg, struct vmm_err *err)
{
	if (cfg->ncpus < 1 || cfg->ncpus > MINIVMM_MAX_CPUS)
		return vmm_err_set(err, EINVAL, "--cpus: '%u' is not a number from 1 to %d", cfg->ncpus,
				   MINIVMM_MAX_CPUS);
	return 0;
}

static int vm_check_vcpu_pins(const struct minivmm_config *cfg, struct vmm_err *err)
{
	if (cfg->nr_vcpu_cpus > MINIVMM_MAX_CPUS)
		return vmm_err_set(err, EINVAL, "--cpus pin: %u CPUs listed, at most %d", cfg->nr_vcpu_cpus,
				   MINIVMM_MAX_CPUS);
	if (cfg->nr_vcpu_cpus && cfg->nr_vcpu_cpus < cfg->ncpus)
		return vmm_err_set(err, EINVAL, "--cpus pin: %u CPUs listed for %u vCPUs",
				   cfg->nr_vcpu_cpus, cfg->ncpus);
	return check_cpus_runnable("--cpus pin", cfg->vcpu_cpus, cfg->nr_vcpu_cpus, err);
}

static int vm_check_mem(const struct minivmm_config *cfg, struct vmm_err *err)
{
	if (cfg->mem_size < MINIVMM_MIN_MEM || cfg->mem_size % MINIVMM_MEM_ALIGN) {
		char size[32];
		config_format_size(cfg->mem_size, size, sizeof(size));
		return vmm_err_set(err, EINVAL, "--mem: '%s' must be at least 16M and a multiple of 2M", size);
	}
	return 0;
}

static int vm_check_serial(const struct minivmm_config *cfg, struct vmm_err *err)
{
	switch (cfg->serial) {
	case MINIVMM_SERIAL_STDIO:
		if (cfg->serial_in_fd < -1 || cfg->serial_out_fd < -1)
			return vmm_err_set(err, EINVAL, "--serial stdio: file descriptors %d and %d: each must be -1 or an open descriptor",
					   cfg->serial_in_fd, cfg->serial_out_fd);
		return 0;
	case MINIVMM_SERIAL_NONE:
		return 0;
	case MINIVMM_SERIAL_FILE:
		if (!cfg->serial_path || !*cfg->serial_path)
			return vmm_err_set(err, EINVAL, "--serial file:PATH: no path given");
		return 0;
	default:
		return vmm_err_set(err, EINVAL, "--serial: mode %d is not stdio, none or file:PATH",
				   (int)cfg->serial);
	}
}

/* Two devices on one tap would share its queues: the second open fails
 * with words about "another process". Refuse it here with the right ones. */
static int vm_check_distinct_taps(const struct minivmm_config *cfg, struct vmm_err *err)
{
	for (unsigned i = 0; i < cfg->nr_nets; i++)
		for (unsigned j = i + 1; j < cfg->nr_nets; j++) {
			const struct minivmm_net_config *a = &cfg->net[i], *b = &cfg->net[j];
			if (a->backend == MINIVMM_NET_TAP && b->backend == MINIVMM_NET_TAP && a->ifname[0] &&
			    strncmp(a->ifname, b->ifname, sizeof(a->ifname)) == 0)
				return vmm_err_set(err, EINVAL,
						   "--net tap=%.16s is given for both net%u and net%u: each device needs its own tap",
						   a->ifname, i, j);
		}
	return 0;
}

static int vm_check_nets(const struct minivmm_config *cfg, struct vmm_err *err)
{
	if (cfg->nr_nets > MINIVMM_MAX_NETS)
		return vmm_err_set(err, EINVAL, "--net: at most %d network devices", MINIVMM_MAX_NETS);
	for (unsigned i = 0; i < cfg->nr_nets; i++) {
		int rc = config_validate_net(&cfg->net[i], err);
		if (rc) {
			if (cfg->nr_nets > 1 && err) {
				/* Say which --net it was. */
				size_t used = strlen(err->msg);
				snprintf(err->msg + used, sizeof(err->msg) - used, " (net%u)", i);
			}
			return rc;
		}
	}
	return vm_check_distinct_taps(cfg, err);
}

static int vm_check_kick_signal(const struct minivmm_config *cfg, struct vmm_err *err)
{
	int sig = cfg->kick_signal;
	if (sig == 0 || sig == SIGUSR1 || sig == SIGUSR2 || (sig >= SIGRTMIN && sig <= SIGRTMAX))
		return 0;
	char name[32];
	config_signal_name(sig, name, sizeof(name));
	return vmm_err_set(err, EINVAL,
			   "kick_signal %s: not SIGUSR1, SIGUSR2 or a real-time signal (SIGRTMIN..SIGRTMAX)", name);
}

static int vm_check_seccomp(const struct minivmm_config *cfg, struct vmm_err *err)
{
	if (cfg->seccomp == MINIVMM_SECCOMP_ON || cfg->seccomp == MINIVMM_SECCOMP_OFF ||
	    cfg->seccomp == MINIVMM_SECCOMP_LOG)
		return 0;
	return vmm_err_set(err, EINVAL, "--seccomp: %d is not on, off or log", (int)cfg->seccomp);
}

static int vm_check_irqchip(const struct minivmm_config *cfg, struct vmm_err *err)
{
	if (cfg->irqchip == MINIVMM_IRQCHIP_KERNEL || cfg->irqchip == MINIVMM_IRQCHIP_SPLIT)
		return 0;
	return vmm_err_set(err, EINVAL, "--irqchip: %d is not kernel or split", (int)cfg->irqchip);
}

static int vm_check_timeout(const struct minivmm_config *cfg, struct vmm_err *err)
{
	if (cfg->timeout_secs > MINIVMM_TIMEOUT_MAX_SECS) {
		char text[16];
		snprintf(text, sizeof(text), "%u", cfg->timeout_secs);
		return vmm_err_set(err, EINVAL, CONFIG_TIMEOUT_MSG, text, MINIVMM_TIMEOUT_MAX_SECS);
	}
	return 0;
}

static int vm_check_kernel(const struct minivmm_config *cfg, struct vmm_err *err)
{
	if (!cfg->kernel_path || !*cfg->kernel_path)
		return vmm_err_set(err, EINVAL, "--kernel PATH is required");
	return 0;
}

/* In the order the CLI reports mistakes: values first, the missing kernel
 * last. */
static const vm_check_fn vm_checks[] = {
	vm_check_ncpus, vm_check_vcpu_pins, vm_check_mem, vm_check_serial, vm_check_nets,
	vm_check_kick_signal, vm_check_seccomp, vm_check_irqchip, vm_check_timeout, vm_check_kernel,
};

int config_validate(const struct minivmm_config *cfg, struct vmm_err *err)
{
	for (size_t i = 0; i < sizeof(vm_checks) / sizeof(vm_checks[0]); i++) {
		int rc = vm_checks[i](cfg, err);
		if (rc)
			return rc;
	}
	return 0;
}

int minivmm_config_validate(const struct minivmm_config *cfg, char *errbuf, size_t errlen)
{
	API_REQUIRE(cfg);
	struct vmm_err err = { 0 };
	int rc = config_validate(cfg, &err);
	if (rc)
		api_errbuf(errbuf, errlen, "%s", err.msg);
	return rc;
}
