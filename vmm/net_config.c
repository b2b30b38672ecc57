/* SPDX-License-Identifier: Apache-2.0 */
#include "vmm/net_config.h"

#include <errno.h>
#include <net/if.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/config.h"
#include "vmm/cpulist.h"
#include "vmm/suggest.h"

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

int net_config_parse_number(const char *text, unsigned *value)
{
	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno || v > UINT_MAX)
		return -ERANGE;
	*value = (unsigned)v;
	return 0;
}

/* ---- one function per key ----------------------------------------------------
 * Each turns its text into the field; ranges are the validator's. */

typedef int (*net_key_fn)(struct minivmm_net_config *net, const char *key, const char *value,
			  struct vmm_err *err);

static int number_key(const char *key, const char *value, unsigned *field, struct vmm_err *err)
{
	int rc = net_config_parse_number(value, field);
	if (rc == -ERANGE)
		return vmm_err_set(err, EINVAL, "--net %s: '%s' is too large", key, value);
	if (rc)
		return vmm_err_set(err, EINVAL, "--net %s: '%s' is not a number", key, value);
	return 0;
}

_Static_assert(sizeof(((struct minivmm_net_config *)0)->ifname) == IFNAMSIZ &&
		       sizeof(((struct minivmm_net_config *)0)->bridge) == IFNAMSIZ,
	       "set_ifname writes IFNAMSIZ bytes");

/* An interface name into dst (IFNAMSIZ bytes: ifname, bridge). */
static int set_ifname(char dst[IFNAMSIZ], const char *key, const char *value, struct vmm_err *err)
{
	if (!*value)
		return vmm_err_set(err, EINVAL, "--net %s=: empty interface name", key);
	if (strlen(value) >= IFNAMSIZ)
		return vmm_err_set(err, EINVAL, "--net %s: interface name '%s' is too long", key, value);
	snprintf(dst, IFNAMSIZ, "%s", value);
	return 0;
}

static int key_tap(struct minivmm_net_config *net, const char *key, const char *value,
		   struct vmm_err *err)
{
	net->backend = MINIVMM_NET_TAP;
	return value ? set_ifname(net->ifname, key, value, err) : 0;   /* "tap" alone: a new tap */
}

static int key_packet(struct minivmm_net_config *net, const char *key, const char *value,
		      struct vmm_err *err)
{
	net->backend = MINIVMM_NET_PACKET;
	if (!*value)
		return vmm_err_set(err, EINVAL, "--net packet=IFACE: the host interface is required");
	return set_ifname(net->ifname, key, value, err);
}

static int key_xdp(struct minivmm_net_config *net, const char *key, const char *value,
		   struct vmm_err *err)
{
	net->backend = MINIVMM_NET_XDP;
	if (!*value)
		return vmm_err_set(err, EINVAL, "--net xdp=IFACE: the host interface is required");
	return set_ifname(net->ifname, key, value, err);
}

static int key_queues(struct minivmm_net_config *net, const char *key, const char *value,
		      struct vmm_err *err)
{
	return number_key(key, value, &net->queues, err);
}

static int key_threads(struct minivmm_net_config *net, const char *key, const char *value,
		       struct vmm_err *err)
{
	(void)key;
	if (strcmp(value, "auto") == 0) {
		net->threads = MINIVMM_THREADS_AUTO;
		return 0;
	}
	if (strcmp(value, "per-queue") == 0) {
		net->threads = 0;
		return 0;
	}
	/* 0 is how the struct says per-queue: not a number of threads. */
	if (net_config_parse_number(value, &net->threads) || net->threads == 0)
		return vmm_err_set(err, EINVAL, CONFIG_NET_THREADS_MSG, value, MINIVMM_MAX_QUEUE_PAIRS);
	return 0;
}

static int key_cpus(struct minivmm_net_config *net, const char *key, const char *value,
		    struct vmm_err *err)
{
	(void)key;
	struct vmm_err e = { 0 };
	int n = cpulist_parse(value, net->cpus, MINIVMM_MAX_QUEUE_PAIRS, &e);
	if (n < 0)
		return vmm_err_set(err, EINVAL, "--net cpus: %s", e.msg);
	net->nr_cpus = (unsigned)n;
	return 0;
}

static int key_mac(struct minivmm_net_config *net, const char *key, const char *value,
		   struct vmm_err *err)
{
	(void)key;
	if (net_config_parse_mac(value, net->mac))
		return vmm_err_set(err, EINVAL, "--net mac: '%s' is not a unicast MAC such as 02:00:00:00:00:01", value);
	net->mac_set = 1;
	return 0;
}

static int key_mtu(struct minivmm_net_config *net, const char *key, const char *value,
		   struct vmm_err *err)
{
	return number_key(key, value, &net->mtu, err);
}

static int key_queue_size(struct minivmm_net_config *net, const char *key, const char *value,
			  struct vmm_err *err)
{
	return number_key(key, value, &net->queue_size, err);
}

static int key_engine(struct minivmm_net_config *net, const char *key, const char *value,
		      struct vmm_err *err)
{
	(void)key;
	if (strcmp(value, "uring") == 0 || strcmp(value, "io_uring") == 0)
		net->engine = MINIVMM_ENGINE_URING;
	else if (strcmp(value, "epoll") == 0)
		net->engine = MINIVMM_ENGINE_EPOLL;
	else
		return vmm_err_set(err, EINVAL, "--net engine: '%s' is not uring or epoll", value);
	return 0;
}

static int key_poll_us(struct minivmm_net_config *net, const char *key, const char *value,
		       struct vmm_err *err)
{
	if (strcmp(value, "auto") == 0) {
		net->poll_us = MINIVMM_POLL_AUTO;
		return 0;
	}
	return number_key(key, value, &net->poll_us, err);
}

/* on|off into *flag; the key names it in the message. */
static int on_off(const char *key, const char *value, int *flag, struct vmm_err *err)
{
	if (strcmp(value, "on") == 0)
		*flag = 1;
	else if (strcmp(value, "off") == 0)
		*flag = 0;
	else
		return vmm_err_set(err, EINVAL, "--net %s: '%s' is not on or off", key, value);
	return 0;
}

static int key_fixed_files(struct minivmm_net_config *net, const char *key, const char *value,
			   struct vmm_err *err)
{
	return on_off(key, value, &net->uring_fixed_files, err);
}

static int key_fixed_buffers(struct minivmm_net_config *net, const char *key, const char *value,
			     struct vmm_err *err)
{
	return on_off(key, value, &net->uring_fixed_buffers, err);
}

static int key_defer_taskrun(struct minivmm_net_config *net, const char *key, const char *value,
			     struct vmm_err *err)
{
	return on_off(key, value, &net->uring_defer_taskrun, err);
}

static int key_xdp_zero_copy(struct minivmm_net_config *net, const char *key, const char *value,
			     struct vmm_err *err)
{
	return on_off(key, value, &net->xdp_zero_copy, err);
}

static int key_fanout(struct minivmm_net_config *net, const char *key, const char *value,
		      struct vmm_err *err)
{
	(void)key;
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

static int key_rx(struct minivmm_net_config *net, const char *key, const char *value,
		  struct vmm_err *err)
{
	(void)key;
	if (strcmp(value, "ring") == 0)
		net->rx_recv = 0;
	else if (strcmp(value, "recv") == 0)
		net->rx_recv = 1;
	else
		return vmm_err_set(err, EINVAL, "--net rx: '%s' is not ring or recv", value);
	return 0;
}

static int key_qdisc_bypass(struct minivmm_net_config *net, const char *key, const char *value,
			    struct vmm_err *err)
{
	(void)key;
	if (strcmp(value, "on") == 0)
		net->qdisc_bypass = 1;
	else if (strcmp(value, "off") == 0)
		net->qdisc_bypass = 0;
	else
		return vmm_err_set(err, EINVAL, "--net qdisc-bypass: '%s' is not on or off", value);
	return 0;
}

static int key_ip(struct minivmm_net_config *net, const char *key, const char *value,
		  struct vmm_err *err)
{
	(void)key;
	/* The address itself is the validator's to check. */
	if (!*value)
		return vmm_err_set(err, EINVAL, "--net ip=: no address (ADDR/PREFIX, e.g. 10.0.0.1/24)");
	if (strlen(value) >= sizeof(net->ip))
		return vmm_err_set(err, EINVAL, "--net ip: '%s' is too long for ADDR/PREFIX", value);
	snprintf(net->ip, sizeof(net->ip), "%s", value);
	return 0;
}

static int key_bridge(struct minivmm_net_config *net, const char *key, const char *value,
		      struct vmm_err *err)
{
	return set_ifname(net->bridge, key, value, err);
}

/* One unsigned 64-bit decimal number from *p up to the next '/' or the end. */
static int bucket_number(const char **p, uint64_t *out)
{
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	uint64_t v = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (*s && *s != '/')
		return -EINVAL;
	*p = *s ? s + 1 : s;
	*out = v;
	return 0;
}

/* SIZE/REFILL_MS[/BURST]: a token bucket (include/minivmm.h); its ranges
 * are the validator's to check. */
static int bucket_key(const char *key, const char *value, struct minivmm_token_bucket *b, struct vmm_err *err)
{
	const char *p = value;
	uint64_t v[3] = { 0, 0, 0 };
	unsigned n = 0;
	while (*p && n < 3) {
		int rc = bucket_number(&p, &v[n]);
		if (rc == -ERANGE)
			return vmm_err_set(err, EINVAL, "--net %s: '%s': a number is too large", key, value);
		if (rc)
			break;
		n++;
	}
	if (*p || n < 2 || value[strlen(value) - 1] == '/')
		return vmm_err_set(err, EINVAL, "--net %s: '%s' is not SIZE/REFILL_MS or SIZE/REFILL_MS/BURST (e.g. 125000/100: 125000 %s per 100 ms)",
				   key, value, strstr(key, "ops") ? "frames" : "bytes");
	*b = (struct minivmm_token_bucket){ .size = v[0], .refill_time_ms = v[1], .one_time_burst = v[2] };
	return 0;
}

static int key_rx_bw(struct minivmm_net_config *net, const char *key, const char *value, struct vmm_err *err)
{
	return bucket_key(key, value, &net->rx_limit.bandwidth, err);
}

static int key_tx_bw(struct minivmm_net_config *net, const char *key, const char *value, struct vmm_err *err)
{
	return bucket_key(key, value, &net->tx_limit.bandwidth, err);
}

static int key_rx_ops(struct minivmm_net_config *net, const char *key, const char *value, struct vmm_err *err)
{
	return bucket_key(key, value, &net->rx_limit.ops, err);
}

static int key_tx_ops(struct minivmm_net_config *net, const char *key, const char *value, struct vmm_err *err)
{
	return bucket_key(key, value, &net->tx_limit.ops, err);
}

/* Which devices a key means something for: one that does not apply is
 * refused, not ignored, so a typo'd backend or engine is never silent. */
enum key_scope { FOR_ANY, FOR_TAP, FOR_PACKET, FOR_XDP, FOR_URING };

/* Keys sharing a slot exclude each other (one backend per device); every
 * slot may be given once. A new key is one line here and one function. */
enum { SLOT_BACKEND, SLOT_QUEUES, SLOT_THREADS, SLOT_CPUS, SLOT_MAC, SLOT_MTU, SLOT_QUEUE_SIZE,
       SLOT_ENGINE, SLOT_POLL_US, SLOT_FANOUT, SLOT_RX, SLOT_QDISC_BYPASS, SLOT_FIXED_FILES,
       SLOT_FIXED_BUFFERS, SLOT_DEFER_TASKRUN, SLOT_XDP_ZERO_COPY, SLOT_IP, SLOT_BRIDGE, SLOT_RX_BW,
       SLOT_TX_BW, SLOT_RX_OPS, SLOT_TX_OPS, NR_SLOTS };

static const struct net_key {
	const char *name;   /* first: vmm/suggest.h reads the table by it */
	unsigned slot;
	bool value_optional;
	net_key_fn apply;
	enum key_scope scope;
} net_keys[] = {
	{ "tap", SLOT_BACKEND, true, key_tap, FOR_ANY },
	{ "packet", SLOT_BACKEND, false, key_packet, FOR_ANY },
	{ "xdp", SLOT_BACKEND, false, key_xdp, FOR_ANY },
	{ "queues", SLOT_QUEUES, false, key_queues, FOR_ANY },
	{ "threads", SLOT_THREADS, false, key_threads, FOR_ANY },
	{ "cpus", SLOT_CPUS, false, key_cpus, FOR_ANY },
	{ "mac", SLOT_MAC, false, key_mac, FOR_ANY },
	{ "mtu", SLOT_MTU, false, key_mtu, FOR_ANY },
	{ "queue-size", SLOT_QUEUE_SIZE, false, key_queue_size, FOR_ANY },
	{ "engine", SLOT_ENGINE, false, key_engine, FOR_ANY },
	{ "poll-us", SLOT_POLL_US, false, key_poll_us, FOR_ANY },
	{ "fanout", SLOT_FANOUT, false, key_fanout, FOR_PACKET },
	{ "rx", SLOT_RX, false, key_rx, FOR_PACKET },
	{ "qdisc-bypass", SLOT_QDISC_BYPASS, false, key_qdisc_bypass, FOR_PACKET },
	{ "fixed-files", SLOT_FIXED_FILES, false, key_fixed_files, FOR_URING },
	{ "fixed-buffers", SLOT_FIXED_BUFFERS, false, key_fixed_buffers, FOR_URING },
	{ "defer-taskrun", SLOT_DEFER_TASKRUN, false, key_defer_taskrun, FOR_URING },
	{ "xdp-zero-copy", SLOT_XDP_ZERO_COPY, false, key_xdp_zero_copy, FOR_XDP },
	{ "ip", SLOT_IP, false, key_ip, FOR_TAP },
	{ "bridge", SLOT_BRIDGE, false, key_bridge, FOR_TAP },
	{ "rx-bw", SLOT_RX_BW, false, key_rx_bw, FOR_ANY },
	{ "tx-bw", SLOT_TX_BW, false, key_tx_bw, FOR_ANY },
	{ "rx-ops", SLOT_RX_OPS, false, key_rx_ops, FOR_ANY },
	{ "tx-ops", SLOT_TX_OPS, false, key_tx_ops, FOR_ANY },
};

#define NR_NET_KEYS (sizeof(net_keys) / sizeof(net_keys[0]))

static const struct net_key *net_key_find(const char *name)
{
	for (size_t i = 0; i < NR_NET_KEYS; i++)
		if (strcmp(net_keys[i].name, name) == 0)
			return &net_keys[i];
	return NULL;
}

const char *net_config_key_name(unsigned i)
{
	return i < NR_NET_KEYS ? net_keys[i].name : NULL;
}

/* One item of the spec, split at '='. */
struct net_item {
	const char *key;
	const char *value;   /* NULL: no '=' */
};

static void item_text(const struct net_item *it, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", it->key, it->value ? "=" : "", it->value ? it->value : "");
}

struct net_parse {
	struct minivmm_net_config *net;
	struct net_item seen[NR_SLOTS];
	const struct net_key *key[NR_SLOTS];   /* the key each seen item is */
	bool have[NR_SLOTS];
};

static int net_apply(struct net_parse *p, const struct net_item *it, struct vmm_err *err)
{
	const struct net_key *k = net_key_find(it->key);
	if (!k) {
		/* The grammar is in --help: one line names the key closest to it. */
		const char *near = suggest_nearest(it->key, net_keys, NR_NET_KEYS, sizeof(net_keys[0]));
		if (near)
			return vmm_err_set(err, EINVAL, "--net: unknown key '%s'; did you mean '%s'?", it->key, near);
		return vmm_err_set(err, EINVAL, "--net: unknown key '%s'", it->key);
	}
	if (!it->value && !k->value_optional)
		return vmm_err_set(err, EINVAL, "--net: '%s' needs a value", it->key);
	if (p->have[k->slot]) {
		char a[96], b[96];
		item_text(&p->seen[k->slot], a, sizeof(a));
		item_text(it, b, sizeof(b));
		if (strcmp(p->seen[k->slot].key, it->key) == 0)
			return vmm_err_set(err, EINVAL, "--net: '%s' given twice ('%s' and '%s')", it->key, a, b);
		return vmm_err_set(err, EINVAL, "--net: '%s' and '%s' both choose the backend: one per device", a, b);
	}
	p->have[k->slot] = true;
	p->seen[k->slot] = *it;
	p->key[k->slot] = k;
	return k->apply(p->net, it->key, it->value, err);
}

/* Once every key is in: one that does nothing for this device's backend
 * or engine is a mistake the user would otherwise never hear about. */
static int net_check_scopes(const struct net_parse *p, struct vmm_err *err)
{
	const struct minivmm_net_config *net = p->net;
	/* The backend keys are the backends' names; none given is a tap. */
	const char *backend = p->have[SLOT_BACKEND] ? p->seen[SLOT_BACKEND].key : "tap";
	for (unsigned slot = 0; slot < NR_SLOTS; slot++) {
		if (!p->have[slot])
			continue;
		const struct net_item *it = &p->seen[slot];
		const struct net_key *k = p->key[slot];
		char text[96];
		item_text(it, text, sizeof(text));
		static const struct { enum key_scope scope; enum minivmm_net_backend backend; const char *name; }
			only[] = { { FOR_TAP, MINIVMM_NET_TAP, "tap" }, { FOR_PACKET, MINIVMM_NET_PACKET, "packet" },
				   { FOR_XDP, MINIVMM_NET_XDP, "xdp" } };
		for (size_t i = 0; i < sizeof(only) / sizeof(only[0]); i++)
			if (k->scope == only[i].scope && net->backend != only[i].backend)
				return vmm_err_set(err, EINVAL, "--net %s: only for the %s backend, and this device's is %s",
						   text, only[i].name, backend);
		if (k->scope == FOR_URING && net->engine != MINIVMM_ENGINE_URING)
			return vmm_err_set(err, EINVAL, "--net %s: an io_uring option, and this device has engine=epoll",
					   text);
	}
	return 0;
}

int net_config_parse(const char *spec, struct minivmm_net_config *net, struct vmm_err *err)
{
	char buf[512];
	if (!*spec)
		return vmm_err_set(err, EINVAL, "--net: empty value (" NET_SYNTAX ")");
	if (strlen(spec) >= sizeof(buf))
		return vmm_err_set(err, EINVAL, "--net: value too long");
	snprintf(buf, sizeof(buf), "%s", spec);

	/* Split at ',' by hand (strtok would skip empty items). "cpus=2,4,6"
	 * keeps its commas: words without '=' right after a cpus= item belong
	 * to that CPU list. */
	struct net_parse p = { .net = net };
	char cpus[256] = "";
	struct net_item cpus_item = { 0 };
	bool in_cpus = false;
	char *item = buf;
	for (;;) {
		char *comma = strchr(item, ',');
		if (comma)
			*comma = '\0';
		if (!*item)
			return vmm_err_set(err, EINVAL, "--net: empty item in '%s'", spec);
		char *eq = strchr(item, '=');
		if (!eq && in_cpus) {
			if (strlen(cpus) + strlen(item) + 2 > sizeof(cpus))
				return vmm_err_set(err, EINVAL, "--net cpus: list too long");
			strcat(cpus, ",");
			strcat(cpus, item);
		} else {
			if (eq)
				*eq = '\0';
			struct net_item it = { .key = item, .value = eq ? eq + 1 : NULL };
			in_cpus = eq && strcmp(item, "cpus") == 0;
			if (in_cpus && cpus_item.key)
				return vmm_err_set(err, EINVAL, "--net: 'cpus' given twice ('cpus=%s' and 'cpus=%s')",
						   cpus, it.value);
			if (in_cpus) {
				/* Applied once the whole list is known. */
				snprintf(cpus, sizeof(cpus), "%s", it.value);
				cpus_item = it;
			} else {
				int rc = net_apply(&p, &it, err);
				if (rc)
					return rc;
			}
		}
		if (!comma)
			break;
		item = comma + 1;
	}
	if (cpus_item.key) {
		cpus_item.value = cpus;
		int rc = net_apply(&p, &cpus_item, err);
		if (rc)
			return rc;
	}
	return net_check_scopes(&p, err);
}
