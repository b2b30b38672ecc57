#include "vmm/net_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/cli.h"
#include "vmm/cpulist.h"

void minivmm_net_config_init(struct minivmm_net_config *net)
{
	memset(net, 0, sizeof(*net));
	net->backend = MINIVMM_NET_TAP;
	net->queues = 1;
	net->mtu = 1500;
	net->queue_size = 256;
	net->engine = MINIVMM_ENGINE_URING;
	net->qdisc_bypass = 1;
	net->uring_fixed_files = 1;
	net->uring_defer_taskrun = 1;
}

int net_config_parse_mac(const char *text, unsigned char mac[6])
{
	unsigned v[6];
	char tail;
	if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &tail) != 6 || strlen(text) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++)
		mac[i] = (unsigned char)v[i];
	if (mac[0] & 1)
		return -EINVAL;   /* multicast addresses cannot name a NIC */
	return 0;
}

static int set_ifname(struct minivmm_net_config *net, const char *key, const char *value,
		      struct vmm_err *err)
{
	if (strlen(value) >= sizeof(net->ifname))
		return vmm_err_set(err, EINVAL, "--net %s: interface name '%s' is too long", key, value);
	snprintf(net->ifname, sizeof(net->ifname), "%s", value);
	return 0;
}

static int net_apply(struct minivmm_net_config *net, const char *key, const char *value,
		     struct vmm_err *err)
{
	unsigned u;
	if (strcmp(key, "tap") == 0) {
		net->backend = MINIVMM_NET_TAP;
		return value ? set_ifname(net, key, value, err) : 0;
	}
	if (!value)
		return vmm_err_set(err, EINVAL, "--net: '%s' needs a value (" NET_SYNTAX ")", key);
	if (strcmp(key, "packet") == 0) {
		net->backend = MINIVMM_NET_PACKET;
		return set_ifname(net, key, value, err);
	}
	if (strcmp(key, "xdp") == 0) {
		net->backend = MINIVMM_NET_XDP;
		return set_ifname(net, key, value, err);
	}
	if (strcmp(key, "queues") == 0) {
		if (cli_parse_uint(value, 1, MINIVMM_MAX_QUEUE_PAIRS, &net->queues))
			return vmm_err_set(err, EINVAL, "--net queues: '%s' is not a number from 1 to %d",
					   value, MINIVMM_MAX_QUEUE_PAIRS);
		return 0;
	}
	if (strcmp(key, "threads") == 0) {
		if (strcmp(value, "per-queue") == 0) {
			net->threads = 0;
			return 0;
		}
		if (strcmp(value, "auto") == 0) {
			net->threads = MINIVMM_THREADS_AUTO;
			return 0;
		}
		if (cli_parse_uint(value, 1, MINIVMM_MAX_QUEUE_PAIRS, &net->threads))
			return vmm_err_set(err, EINVAL, "--net threads: '%s' is not auto, per-queue or a number from 1 to %d",
					   value, MINIVMM_MAX_QUEUE_PAIRS);
		return 0;
	}
	if (strcmp(key, "cpus") == 0) {
		struct vmm_err e = { 0 };
		int n = cpulist_parse(value, net->cpus, MINIVMM_MAX_QUEUE_PAIRS, &e);
		if (n < 0)
			return vmm_err_set(err, EINVAL, "--net cpus: %s", e.msg);
		net->nr_cpus = (unsigned)n;
		return 0;
	}
	if (strcmp(key, "mac") == 0) {
		if (net_config_parse_mac(value, net->mac))
			return vmm_err_set(err, EINVAL, "--net mac: '%s' is not a unicast MAC such as 02:00:00:00:00:01", value);
		net->mac_set = 1;
		return 0;
	}
	if (strcmp(key, "mtu") == 0) {
		if (cli_parse_uint(value, 68, 65535, &net->mtu))
			return vmm_err_set(err, EINVAL, "--net mtu: '%s' is not a number from 68 to 65535", value);
		return 0;
	}
	if (strcmp(key, "queue-size") == 0) {
		if (cli_parse_uint(value, 2, 1024, &u) || (u & (u - 1)))
			return vmm_err_set(err, EINVAL, "--net queue-size: '%s' is not a power of two from 2 to 1024", value);
		net->queue_size = u;
		return 0;
	}
	if (strcmp(key, "engine") == 0) {
		if (strcmp(value, "uring") == 0 || strcmp(value, "io_uring") == 0)
			net->engine = MINIVMM_ENGINE_URING;
		else if (strcmp(value, "epoll") == 0)
			net->engine = MINIVMM_ENGINE_EPOLL;
		else
			return vmm_err_set(err, EINVAL, "--net engine: '%s' is not uring or epoll", value);
		return 0;
	}
	if (strcmp(key, "poll-us") == 0) {
		if (strcmp(value, "auto") == 0) {
			net->poll_us = MINIVMM_POLL_AUTO;
			return 0;
		}
		if (cli_parse_uint(value, 0, 1000000, &net->poll_us))
			return vmm_err_set(err, EINVAL, "--net poll-us: '%s' is not auto or a number from 0 to 1000000", value);
		return 0;
	}
	int *onoff = strcmp(key, "fixed-files") == 0 ? &net->uring_fixed_files
		   : strcmp(key, "fixed-buffers") == 0 ? &net->uring_fixed_buffers
		   : strcmp(key, "defer-taskrun") == 0 ? &net->uring_defer_taskrun
		   : strcmp(key, "xdp-zero-copy") == 0 ? &net->xdp_zero_copy : NULL;
	if (onoff) {
		if (strcmp(value, "on") == 0)
			*onoff = 1;
		else if (strcmp(value, "off") == 0)
			*onoff = 0;
		else
			return vmm_err_set(err, EINVAL, "--net %s: '%s' is not on or off", key, value);
		return 0;
	}
	if (strcmp(key, "fanout") == 0) {
		static const struct { const char *name; unsigned type; } modes[] = {
			{ "hash", 0 }, { "lb", 1 }, { "cpu", 2 }, { "qm", 5 },
		};
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (strcmp(value, modes[i].name) == 0) {
				net->fanout = modes[i].type;
				return 0;
			}
		return vmm_err_set(err, EINVAL, "--net fanout: '%s' is not hash, cpu, lb or qm", value);
	}
	if (strcmp(key, "rx") == 0) {
		if (strcmp(value, "ring") == 0)
			net->rx_recv = 0;
		else if (strcmp(value, "recv") == 0)
			net->rx_recv = 1;
		else
			return vmm_err_set(err, EINVAL, "--net rx: '%s' is not ring or recv", value);
		return 0;
	}
	if (strcmp(key, "qdisc-bypass") == 0) {
		if (strcmp(value, "on") == 0)
			net->qdisc_bypass = 1;
		else if (strcmp(value, "off") == 0)
			net->qdisc_bypass = 0;
		else
			return vmm_err_set(err, EINVAL, "--net qdisc-bypass: '%s' is not on or off", value);
		return 0;
	}
	return vmm_err_set(err, EINVAL, "--net: unknown key '%s' (" NET_SYNTAX ")", key);
}

int net_config_parse(const char *spec, struct minivmm_net_config *net, struct vmm_err *err)
{
	char buf[512];
	if (strlen(spec) >= sizeof(buf))
		return vmm_err_set(err, EINVAL, "--net: value too long");
	snprintf(buf, sizeof(buf), "%s", spec);
	/* "cpus=2,4,6" keeps its commas: words without '=' right after a
	 * cpus= item belong to that CPU list. */
	char *save = NULL;
	char cpus[256] = "";
	for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (!eq && cpus[0] && strlen(cpus) + strlen(item) + 2 < sizeof(cpus)) {
			strcat(cpus, ",");
			strcat(cpus, item);
			continue;
		}
		if (eq)
			*eq = '\0';
		if (eq && strcmp(item, "cpus") == 0) {
			snprintf(cpus, sizeof(cpus), "%s", eq + 1);
			continue;
		}
		int rc = net_apply(net, item, eq ? eq + 1 : NULL, err);
		if (rc)
			return rc;
	}
	if (cpus[0]) {
		int rc = net_apply(net, "cpus", cpus, err);
		if (rc)
			return rc;
	}
	return net_config_check(net, err);
}

int net_config_check(const struct minivmm_net_config *net, struct vmm_err *err)
{
	if (net->backend == MINIVMM_NET_PACKET && !net->ifname[0])
		return vmm_err_set(err, EINVAL, "--net packet=IFACE: the host interface is required");
	if (net->backend == MINIVMM_NET_XDP && !net->ifname[0])
		return vmm_err_set(err, EINVAL, "--net xdp=IFACE: the host interface is required");
	if (net->threads != MINIVMM_THREADS_AUTO && net->threads > net->queues)
		return vmm_err_set(err, EINVAL, "--net threads=%u: more threads than the %u queue pairs",
				   net->threads, net->queues);
	unsigned workers = net->threads == MINIVMM_THREADS_AUTO ? 0 : net->threads ? net->threads : net->queues;
	if (net->nr_cpus && net->nr_cpus < workers)
		return vmm_err_set(err, EINVAL, "--net cpus: %u CPUs listed for %u worker threads",
				   net->nr_cpus, workers);
	return 0;
}
