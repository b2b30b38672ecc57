/* SPDX-License-Identifier: Apache-2.0 */
/* The host side of a tap over rtnetlink (net/host_link.c), the tap
 * backend's ip= and bridge= and their undo (net/tap.c), and link events
 * (net/link_events.c), on real taps and bridges.
 *
 * Every test that touches interfaces runs in network and mount namespaces
 * of its own (criterion runs each test in a process of its own; the
 * namespaces end with it): a fresh sysfs there shows that namespace's
 * interfaces, as net/tap.c reads them. Each test still removes what it
 * made, and the namespace takes anything a failed assertion left. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/backend.h"
#include "net/host_link.h"
#include "net/link_events.h"
#include "net/tap.h"

static void fresh_netns(void)
{
	cr_assert_eq(unshare(CLONE_NEWNET | CLONE_NEWNS), 0, "unshare: %s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s", strerror(errno));
	cr_assert_eq(mount("sysfs", "/sys", "sysfs", 0, NULL), 0, "sysfs: %s", strerror(errno));
}

static struct host_link *nl_open(void)
{
	struct host_link *h;
	struct vmm_err e = { 0 };
	cr_assert_eq(host_link_open(&h, &e), 0, "%s", e.msg);
	return h;
}

static struct host_link_info info_of(struct host_link *h, const char *name)
{
	struct host_link_info info;
	struct vmm_err e = { 0 };
	cr_assert_eq(host_link_get(h, name, &info, &e), 0, "%s", e.msg);
	return info;
}

static bool exists(struct host_link *h, const char *name)
{
	struct host_link_info info;
	return host_link_get(h, name, &info, NULL) == 0;
}

static struct host_addr addr_of(const char *text)
{
	struct host_addr a;
	struct vmm_err e = { 0 };
	cr_assert_eq(host_addr_parse(text, &a, &e), 0, "%s", e.msg);
	return a;
}

static bool has_addr(struct host_link *h, const char *name, const char *text)
{
	struct host_addr a = addr_of(text);
	struct vmm_err e = { 0 };
	int rc = host_link_has_addr(h, info_of(h, name).ifindex, &a, &e);
	cr_assert_geq(rc, 0, "%s", e.msg);
	return rc == 1;
}

/* A tap as an operator makes one (ip tuntap add NAME mode tap): persistent. */
static void tap_add_persistent(const char *name)
{
	char real[IFNAMSIZ];
	struct vmm_err e = { 0 };
	int fd = tap_open_queue(name, false, real, &e);
	cr_assert_geq(fd, 0, "%s", e.msg);
	cr_assert_eq(ioctl(fd, TUNSETPERSIST, 1), 0, "%s", strerror(errno));
	close(fd);
}

/* RTM_NEWLINK (a bridge) or RTM_DELLINK by name, as `ip link` would. */
static int link_add_or_del(const char *name, const char *kind, bool add)
{
	char buf[1024];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = add ? RTM_NEWLINK : RTM_DELLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | (add ? NLM_F_CREATE | NLM_F_EXCL : 0);
	nlh->nlmsg_seq = 1;
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	if (add) {
		struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
		mnl_attr_put_strz(nlh, IFLA_INFO_KIND, kind);
		mnl_attr_nest_end(nlh, info);
	}
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	cr_assert_not_null(nl);
	cr_assert_eq(mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID), 0);
	cr_assert_gt(mnl_socket_sendto(nl, nlh, nlh->nlmsg_len), 0);
	ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	int rc = n < 0 ? -errno : mnl_cb_run(buf, (size_t)n, 1, mnl_socket_get_portid(nl), NULL, NULL);
	if (rc == MNL_CB_ERROR)
		rc = -errno;
	mnl_socket_close(nl);
	return rc;
}

static void bridge_add(const char *name)
{
	cr_assert_eq(link_add_or_del(name, "bridge", true), 0, "bridge %s: %s", name, strerror(errno));
}

static void link_del(const char *name)
{
	cr_assert_eq(link_add_or_del(name, NULL, false), 0, "delete %s: %s", name, strerror(errno));
}

static struct host_link_setup setup(const char *ip, const char *bridge)
{
	struct host_link_setup s = { 0 };
	if (ip) {
		s.has_addr = true;
		s.addr = addr_of(ip);
	}
	snprintf(s.bridge, sizeof(s.bridge), "%s", bridge ? bridge : "");
	return s;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text), "%s: %s", path, strerror(errno));
	close(fd);
}

/* ---- addresses as ip= writes them ------------------------------------------ */

Test(host_link, addresses_and_prefixes_parse_both_families)
{
	struct host_addr a = addr_of("10.0.0.1/24");
	cr_assert_eq(a.family, AF_INET);
	cr_assert_eq(a.prefix, 24);
	cr_assert_eq(a.bytes[0], 10);
	cr_assert_eq(a.bytes[3], 1);
	a = addr_of("fd00::1/64");
	cr_assert_eq(a.family, AF_INET6);
	cr_assert_eq(a.prefix, 64);
	cr_assert_eq(a.bytes[0], 0xfd);
	cr_assert_eq(a.bytes[15], 1);
	char text[64];
	host_addr_format(&a, text, sizeof(text));
	cr_assert_str_eq(text, "fd00::1/64");
	a = addr_of("192.168.7.9/32");
	host_addr_format(&a, text, sizeof(text));
	cr_assert_str_eq(text, "192.168.7.9/32");
}

Test(host_link, a_bad_address_or_prefix_is_one_line_saying_which)
{
	static const struct { const char *text, *says; } bad[] = {
		{ "10.0.0.1", "'10.0.0.1' has no prefix length (ADDR/PREFIX, e.g. 10.0.0.1/24)" },
		{ "10.0.0/24", "'10.0.0/24' is not ADDR/PREFIX with an IPv4 or IPv6 address" },
		{ "/24", "is not ADDR/PREFIX" },
		{ "eth0/24", "is not ADDR/PREFIX" },
		{ "10.0.0.1/33", "'10.0.0.1/33': the prefix length is not a number from 1 to 32" },
		{ "10.0.0.1/0", "not a number from 1 to 32" },
		{ "10.0.0.1/", "not a number from 1 to 32" },
		{ "10.0.0.1/2x", "not a number from 1 to 32" },
		{ "10.0.0.1/-1", "not a number from 1 to 32" },
		{ "fd00::1/129", "not a number from 1 to 128" },
		{ "fd00::1/99999999999999999999", "not a number from 1 to 128" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct host_addr a;
		struct vmm_err e = { 0 };
		cr_assert_eq(host_addr_parse(bad[i].text, &a, &e), -EINVAL, "'%s' accepted", bad[i].text);
		cr_assert(strstr(e.msg, bad[i].says), "'%s': '%s' lacks '%s'", bad[i].text, e.msg, bad[i].says);
	}
}

/* ---- ip= and bridge= on an interface, and their undo ---------------------- */

Test(host_link, ip_brings_a_tap_up_with_its_address_and_revert_takes_both_away, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	cr_assert_not(info_of(h, "ht0").flags & IFF_UP, "a new tap is down");
	for (int v6 = 0; v6 < 2; v6++) {
		const char *ip = v6 ? "fd00:1::1/64" : "10.9.0.1/24";
		struct host_link_setup s = setup(ip, NULL);
		struct host_link_undo u;
		struct vmm_err e = { 0 };
		cr_assert_eq(host_link_apply(h, "ht0", &s, &u, &e), 0, "%s", e.msg);
		cr_assert(info_of(h, "ht0").flags & IFF_UP);
		cr_assert(has_addr(h, "ht0", ip), "%s is on the tap", ip);
		cr_assert(u.brought_up && u.addr_added && !u.master_set);
		cr_assert_eq(host_link_revert(h, &u, &e), 0, "%s", e.msg);
		cr_assert_not(info_of(h, "ht0").flags & IFF_UP, "down again");
		cr_assert_not(has_addr(h, "ht0", ip), "%s is gone", ip);
		cr_assert_eq(u.ifindex, 0, "a revert is done once");
		cr_assert_eq(host_link_revert(h, &u, &e), 0);
	}
	link_del("ht0");
	host_link_close(h);
}

Test(host_link, bridge_makes_the_tap_a_port_and_revert_takes_it_off, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	bridge_add("hbr0");
	struct host_link_setup s = setup(NULL, "hbr0");
	struct host_link_undo u;
	struct vmm_err e = { 0 };
	cr_assert_eq(host_link_apply(h, "ht0", &s, &u, &e), 0, "%s", e.msg);
	struct host_link_info t = info_of(h, "ht0");
	cr_assert_eq(t.master, info_of(h, "hbr0").ifindex, "the tap is the bridge's port");
	cr_assert(t.flags & IFF_UP);
	cr_assert_str_eq(t.kind, "tun");
	cr_assert_eq(host_link_revert(h, &u, &e), 0, "%s", e.msg);
	t = info_of(h, "ht0");
	cr_assert_eq(t.master, 0, "no longer a port");
	cr_assert_not(t.flags & IFF_UP);
	cr_assert(exists(h, "hbr0"), "the operator's bridge stays");
	link_del("ht0");
	link_del("hbr0");
	host_link_close(h);
}

Test(host_link, what_the_operator_had_already_stays_at_revert, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	bridge_add("hbr0");
	struct vmm_err e = { 0 };
	unsigned tap = info_of(h, "ht0").ifindex;
	struct host_addr a = addr_of("10.9.0.1/24");
	cr_assert_eq(host_link_add_addr(h, tap, &a, &e), 0, "%s", e.msg);
	cr_assert_eq(host_link_add_addr(h, tap, &a, &e), -EEXIST, "twice: EEXIST");
	cr_assert_eq(host_link_set_up(h, tap, true, &e), 0, "%s", e.msg);
	struct host_link_setup s = setup("10.9.0.1/24", NULL);
	struct host_link_undo u;
	cr_assert_eq(host_link_apply(h, "ht0", &s, &u, &e), 0, "%s", e.msg);
	cr_assert(!u.addr_added && !u.brought_up, "nothing was ours");
	cr_assert_eq(host_link_revert(h, &u, &e), 0, "%s", e.msg);
	cr_assert(has_addr(h, "ht0", "10.9.0.1/24"), "the address stays");
	cr_assert(info_of(h, "ht0").flags & IFF_UP, "the link stays up");

	cr_assert_eq(host_link_set_master(h, tap, info_of(h, "hbr0").ifindex, &e), 0, "%s", e.msg);
	s = setup(NULL, "hbr0");
	cr_assert_eq(host_link_apply(h, "ht0", &s, &u, &e), 0, "%s", e.msg);
	cr_assert_not(u.master_set, "it was a port already");
	cr_assert_eq(host_link_revert(h, &u, &e), 0, "%s", e.msg);
	cr_assert_eq(info_of(h, "ht0").master, info_of(h, "hbr0").ifindex, "still a port");
	link_del("ht0");
	link_del("hbr0");
	host_link_close(h);
}

Test(host_link, a_missing_bridge_or_a_non_bridge_is_one_line, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	struct vmm_err e = { 0 };
	struct host_link_setup s = setup(NULL, "nobr0");
	cr_assert_eq(host_link_check_bridge(h, &s, &e), -ENODEV);
	cr_assert_str_eq(e.msg, "there is no interface nobr0 (make the bridge first: ip link add nobr0 type bridge)");
	s = setup(NULL, "ht0");
	cr_assert_eq(host_link_check_bridge(h, &s, &e), -EINVAL);
	cr_assert_str_eq(e.msg, "ht0 is not a bridge (it is a tun)");
	s = setup(NULL, "lo");
	cr_assert_eq(host_link_check_bridge(h, &s, &e), -EINVAL);
	cr_assert_str_eq(e.msg, "lo is not a bridge");
	/* apply checks too, and changes nothing */
	struct host_link_undo u;
	s = setup("10.9.0.1/24", "nobr0");
	cr_assert_eq(host_link_apply(h, "ht0", &s, &u, &e), -ENODEV);
	cr_assert_not(info_of(h, "ht0").flags & IFF_UP);
	cr_assert_not(has_addr(h, "ht0", "10.9.0.1/24"));
	link_del("ht0");
	host_link_close(h);
}

Test(host_link, a_port_of_another_bridge_is_refused_and_left_alone, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	bridge_add("hbr0");
	bridge_add("hbr1");
	struct vmm_err e = { 0 };
	unsigned br1 = info_of(h, "hbr1").ifindex;
	cr_assert_eq(host_link_set_master(h, info_of(h, "ht0").ifindex, br1, &e), 0, "%s", e.msg);
	struct host_link_setup s = setup(NULL, "hbr0");
	struct host_link_undo u;
	cr_assert_eq(host_link_apply(h, "ht0", &s, &u, &e), -EBUSY);
	cr_assert_str_eq(e.msg, "already a port of hbr1: it cannot join hbr0 too");
	cr_assert_eq(info_of(h, "ht0").master, br1);
	cr_assert_not(info_of(h, "ht0").flags & IFF_UP);
	link_del("ht0");
	link_del("hbr0");
	link_del("hbr1");
	host_link_close(h);
}

/* The address cannot be added (IPv6 is off on the tap) after the tap
 * joined the bridge: it leaves the bridge again before apply returns. */
Test(host_link, a_failed_step_undoes_the_ones_before_it, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	bridge_add("hbr0");
	write_file("/proc/sys/net/ipv6/conf/ht0/disable_ipv6", "1");
	struct host_link_setup s = setup("fd00:1::1/64", "hbr0");
	struct host_link_undo u;
	struct vmm_err e = { 0 };
	cr_assert_lt(host_link_apply(h, "ht0", &s, &u, &e), 0, "IPv6 is off: the address cannot be added");
	cr_assert(strstr(e.msg, "cannot add address fd00:1::1/64: "), "%s", e.msg);
	struct host_link_info t = info_of(h, "ht0");
	cr_assert_eq(t.master, 0, "off the bridge again");
	cr_assert_not(t.flags & IFF_UP);
	cr_assert_eq(u.ifindex, 0, "nothing left to undo");
	link_del("ht0");
	link_del("hbr0");
	host_link_close(h);
}

Test(host_link, a_tap_made_again_under_the_same_name_is_left_alone, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	struct host_link_setup s = setup("10.9.0.1/24", NULL);
	struct host_link_undo u;
	struct vmm_err e = { 0 };
	cr_assert_eq(host_link_apply(h, "ht0", &s, &u, &e), 0, "%s", e.msg);
	link_del("ht0");
	tap_add_persistent("ht0");
	unsigned tap = info_of(h, "ht0").ifindex;
	struct host_addr a = addr_of("10.9.0.1/24");
	cr_assert_eq(host_link_add_addr(h, tap, &a, &e), 0, "%s", e.msg);
	cr_assert_eq(host_link_set_up(h, tap, true, &e), 0, "%s", e.msg);
	cr_assert_eq(host_link_revert(h, &u, &e), 0, "%s", e.msg);
	cr_assert(has_addr(h, "ht0", "10.9.0.1/24"), "the new tap's address is its operator's");
	cr_assert(info_of(h, "ht0").flags & IFF_UP);
	link_del("ht0");
	host_link_close(h);
}

/* ---- the tap backend: ip= and bridge= at create, undone at destroy -------- */

static struct net_backend_config tap_config(const char *name, const char *ip, const char *bridge)
{
	struct net_backend_config c = { .kind = NET_BACKEND_TAP, .queues = 1, .mtu = 1500,
					.queue_size = 256, .host = setup(ip, bridge) };
	snprintf(c.ifname, sizeof(c.ifname), "%s", name);
	return c;
}

Test(host_link, a_created_tap_with_ip_is_up_and_gone_at_destroy, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	struct net_backend_config c = tap_config("", "10.9.0.1/24", NULL);
	struct net_backend *b;
	struct vmm_err e = { 0 };
	cr_assert_eq(net_backend_create(&c, &b, &e), 0, "%s", e.msg);
	cr_assert(b->created);
	char name[IFNAMSIZ];
	snprintf(name, sizeof(name), "%s", b->ifname);
	cr_assert(strncmp(name, "mvmtap", 6) == 0, "%s", name);
	cr_assert(info_of(h, name).flags & IFF_UP);
	cr_assert(has_addr(h, name, "10.9.0.1/24"));
	cr_assert_str_eq(b->detail, "host side: 10.9.0.1/24, up");
	net_backend_destroy(b);
	cr_assert_not(exists(h, name), "the tap minivmm made is gone, its address with it");
	host_link_close(h);
}

Test(host_link, an_operators_tap_on_a_bridge_is_restored_at_destroy, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	bridge_add("hbr0");
	struct net_backend_config c = tap_config("ht0", NULL, "hbr0");
	struct net_backend *b;
	struct vmm_err e = { 0 };
	cr_assert_eq(net_backend_create(&c, &b, &e), 0, "%s", e.msg);
	cr_assert_not(b->created);
	cr_assert_str_eq(b->detail, "host side: port of hbr0, up; undone at exit");
	cr_assert_eq(info_of(h, "ht0").master, info_of(h, "hbr0").ifindex);
	cr_assert(info_of(h, "ht0").flags & IFF_UP);
	net_backend_destroy(b);
	struct host_link_info t = info_of(h, "ht0");
	cr_assert_eq(t.master, 0, "off the bridge");
	cr_assert_not(t.flags & IFF_UP, "down, as it was");
	link_del("ht0");
	link_del("hbr0");
	host_link_close(h);
}

Test(host_link, an_operators_tap_loses_the_address_minivmm_gave_it_at_destroy, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	struct net_backend_config c = tap_config("ht0", "10.9.0.1/24", NULL);
	struct net_backend *b;
	struct vmm_err e = { 0 };
	cr_assert_eq(net_backend_create(&c, &b, &e), 0, "%s", e.msg);
	cr_assert(has_addr(h, "ht0", "10.9.0.1/24"));
	net_backend_destroy(b);
	cr_assert_not(has_addr(h, "ht0", "10.9.0.1/24"), "the address minivmm added is gone");
	cr_assert_not(info_of(h, "ht0").flags & IFF_UP);
	link_del("ht0");
	host_link_close(h);
}

Test(host_link, a_refused_start_leaves_no_tap_behind, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	/* Refused before the tap is made. */
	struct net_backend_config c = tap_config("ht9", NULL, "nobr0");
	struct net_backend *b;
	struct vmm_err e = { 0 };
	cr_assert_eq(net_backend_create(&c, &b, &e), -ENODEV);
	cr_assert_str_eq(e.msg, "--net bridge=nobr0: there is no interface nobr0 (make the bridge first: ip link add nobr0 type bridge)");
	cr_assert_not(exists(h, "ht9"), "no tap was made");
	c = tap_config("ht9", NULL, "lo");
	cr_assert_eq(net_backend_create(&c, &b, &e), -EINVAL);
	cr_assert_str_eq(e.msg, "--net bridge=lo: lo is not a bridge");
	cr_assert_not(exists(h, "ht9"));
	/* Refused once the tap is made (new interfaces get no IPv6 here):
	 * the tap minivmm made goes. */
	write_file("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	c = tap_config("ht9", "fd00:1::1/64", NULL);
	cr_assert_lt(net_backend_create(&c, &b, &e), 0);
	cr_assert(strstr(e.msg, "tap ht9: cannot add address fd00:1::1/64: "), "%s", e.msg);
	cr_assert_not(exists(h, "ht9"), "the tap minivmm made is gone");
	/* An operator's tap stays, as it was. */
	tap_add_persistent("ht8");
	c = tap_config("ht8", "fd00:1::1/64", NULL);
	cr_assert_lt(net_backend_create(&c, &b, &e), 0);
	cr_assert(exists(h, "ht8"));
	cr_assert_not(info_of(h, "ht8").flags & IFF_UP);
	link_del("ht8");
	host_link_close(h);
}

/* ---- link events ----------------------------------------------------------- */

struct seen {
	const char *name;
	int up, down, gone;
};

static void count_event(void *opaque, const struct link_event *ev)
{
	struct seen *s = opaque;
	if (strcmp(ev->name, s->name) != 0)
		return;
	if (ev->gone)
		s->gone++;
	else if (ev->flags & IFF_UP)
		s->up++;
	else
		s->down++;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Wait up to 100 ms for an event matching want() and return how long it took. */
static double wait_for(struct link_events *le, struct seen *s, int (*want)(const struct seen *))
{
	double start = now_ms();
	while (!want(s)) {
		double left = 100 - (now_ms() - start);
		cr_assert_gt(left, 0, "no event for %s within 100 ms (up %d down %d gone %d)", s->name, s->up,
			     s->down, s->gone);
		struct pollfd p = { .fd = link_events_fd(le), .events = POLLIN };
		if (poll(&p, 1, (int)left + 1) == 1)
			cr_assert_geq(link_events_read(le, count_event, s), 0);
	}
	return now_ms() - start;
}

static int saw_up(const struct seen *s) { return s->up > 0; }
static int saw_down(const struct seen *s) { return s->down > 0; }
static int saw_gone(const struct seen *s) { return s->gone > 0; }

Test(link_events, a_tap_going_up_down_and_away_is_heard_within_100_ms, .timeout = 10)
{
	fresh_netns();
	struct host_link *h = nl_open();
	tap_add_persistent("ht0");
	struct link_events *le;
	struct vmm_err e = { 0 };
	cr_assert_eq(link_events_open(&le, &e), 0, "%s", e.msg);
	cr_assert_eq(link_events_read(le, NULL, NULL), 0, "nothing queued yet, and no wait");
	unsigned tap = info_of(h, "ht0").ifindex;
	struct seen s = { .name = "ht0" };
	cr_assert_eq(host_link_set_up(h, tap, true, &e), 0, "%s", e.msg);
	wait_for(le, &s, saw_up);
	cr_assert_eq(host_link_set_up(h, tap, false, &e), 0, "%s", e.msg);
	wait_for(le, &s, saw_down);
	link_del("ht0");
	wait_for(le, &s, saw_gone);
	/* Other interfaces' events carry their own names. */
	struct seen other = { .name = "ht1" };
	tap_add_persistent("ht1");
	wait_for(le, &other, saw_down);
	cr_assert_eq(s.gone, 1);
	link_del("ht1");
	link_events_close(le);
	host_link_close(h);
}
