/* SPDX-License-Identifier: Apache-2.0 */
/* The --net option: every key, the ways the pieces must fit together, and
 * the messages a user sees for each mistake. Like the program, parse the
 * text (vmm/net_config.c) and then run the library's validator on it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "vmm/net_config.h"

static int parse(const char *spec, struct minivmm_net_config *net, struct vmm_err *e)
{
	minivmm_net_config_init(net);
	memset(e, 0, sizeof(*e));
	int rc = net_config_parse(spec, net, e);
	if (rc)
		return rc;
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	cfg.kernel_path = "k";
	cfg.net[0] = *net;
	cfg.nr_nets = 1;
	rc = minivmm_config_validate(&cfg, e->msg, sizeof(e->msg));
	if (rc)
		e->code = -rc;
	return rc;
}

static struct minivmm_net_config parse_ok(const char *spec)
{
	struct minivmm_net_config net;
	struct vmm_err e;
	cr_assert_eq(parse(spec, &net, &e), 0, "'%s': %s", spec, e.msg);
	return net;
}

static void expect_error(const char *spec, const char *msg_part)
{
	struct minivmm_net_config net;
	struct vmm_err e;
	cr_assert_eq(parse(spec, &net, &e), -EINVAL, "'%s' should be refused", spec);
	cr_assert_eq(e.code, EINVAL);
	cr_assert(strstr(e.msg, msg_part), "'%s': message '%s' lacks '%s'", spec, e.msg, msg_part);
}

/* ---- good specs ------------------------------------------------------------ */

Test(net_config, defaults)
{
	struct minivmm_net_config net;
	minivmm_net_config_init(&net);
	cr_assert_eq(net.backend, MINIVMM_NET_TAP);
	cr_assert_str_eq(net.ifname, "");
	cr_assert_eq(net.queues, 1);
	cr_assert_eq(net.threads, MINIVMM_THREADS_AUTO, "threads=auto is the default");
	cr_assert_eq(net.nr_cpus, 0);
	cr_assert_eq(net.mac_set, 0);
	cr_assert_eq(net.mtu, 1500);
	cr_assert_eq(net.queue_size, 256);
	cr_assert_eq(net.engine, MINIVMM_ENGINE_URING);
	cr_assert_eq(net.poll_us, 0);
}

Test(net_config, tap_with_queues_threads_per_queue_and_cpus)
{
	/* CPUs 0 and 1: present on every machine these tests run on. */
	struct minivmm_net_config net = parse_ok("tap=t0,queues=2,threads=per-queue,cpus=0-1");
	cr_assert_eq(net.backend, MINIVMM_NET_TAP);
	cr_assert_str_eq(net.ifname, "t0");
	cr_assert_eq(net.queues, 2);
	cr_assert_eq(net.threads, 0, "per-queue is 0");
	cr_assert_eq(net.nr_cpus, 2);
	cr_assert_eq(net.cpus[0], 0);
	cr_assert_eq(net.cpus[1], 1);

	net = parse_ok("tap=t0,queues=4,threads=2,cpus=0-1");
	cr_assert_eq(net.queues, 4);
	cr_assert_eq(net.threads, 2);
	cr_assert_eq(net.nr_cpus, 2);
}

/* NET_SYNTAX says cpus=LIST and a CPU list may be "2,4,6" (vmm/cpulist.h);
 * tests/integration/test_mq.sh runs "--net tap=t0,queues=2,cpus=1,0". */
Test(net_config, cpus_comma_list_inside_the_net_spec)
{
	struct minivmm_net_config net;
	struct vmm_err e;
	cr_expect_eq(parse("tap=t0,queues=2,cpus=1,0", &net, &e), 0, "%s", e.msg);
	cr_expect_eq(net.nr_cpus, 2);
	cr_expect_eq(net.cpus[0], 1, "order kept: worker 0 on CPU 1");
	cr_expect_eq(net.cpus[1], 0);
	cr_expect_eq(parse("cpus=0,1,queues=2,mtu=9000", &net, &e), 0, "%s", e.msg);
	cr_expect_eq(net.mtu, 9000);
}

Test(net_config, per_queue_threads_need_a_cpu_per_queue)
{
	/* threads=per-queue with 4 queues is 4 workers: two CPUs are too few. */
	expect_error("tap=t0,queues=4,threads=per-queue,cpus=0-1",
		     "2 CPUs listed for 4 worker threads");
}

Test(net_config, queues_alone)
{
	struct minivmm_net_config net = parse_ok("queues=4");
	cr_assert_eq(net.backend, MINIVMM_NET_TAP);
	cr_assert_str_eq(net.ifname, "", "the kernel picks the tap name");
	cr_assert_eq(net.queues, 4);
	cr_assert_eq(net.threads, MINIVMM_THREADS_AUTO);
	cr_assert_eq(net.nr_cpus, 0);
	net = parse_ok("queues=16");
	cr_assert_eq(net.queues, 16);
	net = parse_ok("tap");
	cr_assert_eq(net.backend, MINIVMM_NET_TAP);
	cr_assert_str_eq(net.ifname, "");
}

Test(net_config, packet_socket_on_an_interface)
{
	struct minivmm_net_config net = parse_ok("packet=eth0");
	cr_assert_eq(net.backend, MINIVMM_NET_PACKET);
	cr_assert_str_eq(net.ifname, "eth0");
}

Test(net_config, mac)
{
	struct minivmm_net_config net = parse_ok("mac=02:00:00:00:00:01");
	cr_assert_eq(net.mac_set, 1);
	const unsigned char want[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	cr_assert_eq(memcmp(net.mac, want, 6), 0);
}

Test(net_config, engine_poll_queue_size_and_mtu)
{
	struct minivmm_net_config net = parse_ok("engine=epoll");
	cr_assert_eq(net.engine, MINIVMM_ENGINE_EPOLL);
	net = parse_ok("engine=uring");
	cr_assert_eq(net.engine, MINIVMM_ENGINE_URING);
	net = parse_ok("engine=io_uring");
	cr_assert_eq(net.engine, MINIVMM_ENGINE_URING);
	net = parse_ok("poll-us=50");
	cr_assert_eq(net.poll_us, 50);
	net = parse_ok("queue-size=512");
	cr_assert_eq(net.queue_size, 512);
	net = parse_ok("queue-size=2");
	cr_assert_eq(net.queue_size, 2);
	net = parse_ok("queue-size=1024");
	cr_assert_eq(net.queue_size, 1024);
	net = parse_ok("mtu=9000");
	cr_assert_eq(net.mtu, 9000);
	net = parse_ok("mtu=68");
	cr_assert_eq(net.mtu, 68);
}

Test(net_config, everything_at_once)
{
	struct minivmm_net_config net =
		parse_ok("tap=vm0,queues=8,threads=2,cpus=0-1,mac=0a:1b:2c:3d:4e:5f,mtu=9000,"
			 "queue-size=512,engine=epoll,poll-us=50");
	cr_assert_str_eq(net.ifname, "vm0");
	cr_assert_eq(net.queues, 8);
	cr_assert_eq(net.threads, 2);
	cr_assert_eq(net.nr_cpus, 2);
	cr_assert_eq(net.mtu, 9000);
	cr_assert_eq(net.queue_size, 512);
	cr_assert_eq(net.engine, MINIVMM_ENGINE_EPOLL);
	cr_assert_eq(net.poll_us, 50);
	cr_assert_eq(net.mac[5], 0x5f);
}

Test(net_config, interface_name_of_fifteen_characters_fits)
{
	struct minivmm_net_config net = parse_ok("tap=abcdefghijklmno");
	cr_assert_str_eq(net.ifname, "abcdefghijklmno");
}

/* ---- bad specs ------------------------------------------------------------- */

/* An unknown key used to print the whole grammar (315 characters): the
 * nearest key, if one is near, says more in one short line. */
Test(net_config, unknown_key_names_the_nearest)
{
	static const struct { const char *spec, *want; } cases[] = {
		{ "tap=t,queue=2", "--net: unknown key 'queue'; did you mean 'queues'?" },
		{ "queue_size=512", "--net: unknown key 'queue_size'; did you mean 'queue-size'?" },
		{ "tap=t,poll_us=5", "--net: unknown key 'poll_us'; did you mean 'poll-us'?" },
		{ "thread=2", "--net: unknown key 'thread'; did you mean 'threads'?" },
		{ "zero-copy=on", "--net: unknown key 'zero-copy'" },
		{ "tap=t0,colour=blue", "--net: unknown key 'colour'" },
		{ "bogus=1", "--net: unknown key 'bogus'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct minivmm_net_config net;
		struct vmm_err e;
		cr_assert_eq(parse(cases[i].spec, &net, &e), -EINVAL, "'%s' accepted", cases[i].spec);
		cr_assert_str_eq(e.msg, cases[i].want);
	}
}

/* A key given twice used to win silently (the last one). */
Test(net_config, key_given_twice_is_refused_naming_both)
{
	expect_error("queues=2,queues=3", "--net: 'queues' given twice ('queues=2' and 'queues=3')");
	expect_error("tap=a,mtu=9000,mtu=1500", "'mtu' given twice");
	expect_error("cpus=0,cpus=1", "--net: 'cpus' given twice ('cpus=0' and 'cpus=1')");
	expect_error("cpus=0-1,queues=2,cpus=0", "'cpus' given twice");
	expect_error("tap=a,packet=eth0", "'tap=a' and 'packet=eth0' both choose the backend");
	expect_error("tap,tap=x", "'tap' given twice");
}

/* These used to be accepted and ignored: a user who mistyped the backend
 * or the engine never learned that the option did nothing. */
Test(net_config, key_for_another_backend_or_engine_is_refused)
{
	expect_error("tap=t0,fanout=cpu", "--net fanout=cpu: only for the packet backend, and this device's is tap");
	expect_error("rx=recv", "--net rx=recv: only for the packet backend, and this device's is tap");
	expect_error("xdp=v0,qdisc-bypass=off", "qdisc-bypass=off: only for the packet backend, and this device's is xdp");
	expect_error("packet=v0,xdp-zero-copy=on", "xdp-zero-copy=on: only for the xdp backend, and this device's is packet");
	expect_error("engine=epoll,fixed-files=off", "--net fixed-files=off: an io_uring option, and this device has engine=epoll");
	expect_error("fixed-buffers=on,engine=epoll", "fixed-buffers=on: an io_uring option");
	expect_error("packet=v0,engine=epoll,defer-taskrun=off", "defer-taskrun=off: an io_uring option");
}

Test(net_config, key_for_its_own_backend_and_engine_is_accepted)
{
	struct minivmm_net_config net = parse_ok("packet=v0,fanout=cpu,rx=recv,qdisc-bypass=off,engine=epoll");
	cr_assert_eq(net.rx_recv, 1);
#if MINIVMM_XDP
	net = parse_ok("xdp=v0,xdp-zero-copy=off,fixed-files=off");
	cr_assert_eq(net.uring_fixed_files, 0);
#else
	/* make XDP=0: the keys parse, the backend is refused. */
	struct vmm_err e;
	cr_assert_eq(parse("xdp=v0,xdp-zero-copy=off,fixed-files=off", &net, &e), -EOPNOTSUPP);
	cr_assert(strstr(e.msg, "built without AF_XDP"), "%s", e.msg);
#endif
	net = parse_ok("fixed-buffers=on,defer-taskrun=off,engine=uring");
	cr_assert_eq(net.uring_fixed_buffers, 1);
}

Test(net_config, empty_value_and_empty_items_are_refused)
{
	expect_error("", "--net: empty value");
	expect_error("tap=t0,,queues=2", "--net: empty item in 'tap=t0,,queues=2'");
	expect_error(",", "empty item");
	expect_error("queues=2,", "empty item");
	expect_error("tap=", "--net tap=: empty interface name");
}

Test(net_config, numbers_that_do_not_fit_are_refused_by_the_parser)
{
	expect_error("queues=99999999999", "--net queues: '99999999999' is too large");
	expect_error("mtu=1e3", "--net mtu: '1e3' is not a number");
	expect_error("poll-us=+5", "not a number");
}

Test(net_config, key_without_value)
{
	expect_error("queues", "'queues' needs a value");
	expect_error("packet", "'packet' needs a value");
}

Test(net_config, queues_out_of_range)
{
	expect_error("queues=0", "--net queues: '0' is not a number from 1 to 16");
	expect_error("queues=17", "'17' is not a number from 1 to 16");
	expect_error("queues=-1", "not a number");
	expect_error("queues=two", "not a number");
	expect_error("queues=", "not a number");
}

Test(net_config, more_threads_than_queues)
{
	expect_error("queues=2,threads=3", "--net threads=3: more threads than the 2 queue pairs");
	expect_error("threads=2", "more threads than the 1 queue pairs");
	expect_error("queues=2,threads=0", "not auto, per-queue or a number from 1 to 16");
	expect_error("queues=2,threads=x", "not auto, per-queue");
}

Test(net_config, fewer_cpus_than_workers)
{
	expect_error("queues=4,threads=2,cpus=0", "1 CPUs listed for 2 worker threads");
	expect_error("queues=2,threads=per-queue,cpus=1", "1 CPUs listed for 2 worker threads");
	/* threads=auto (the default): one worker per listed CPU at most. */
	struct minivmm_net_config net = parse_ok("queues=2,cpus=1");
	cr_assert_eq(net.threads, MINIVMM_THREADS_AUTO);
	cr_assert_eq(net.nr_cpus, 1);
}

Test(net_config, bad_cpu_list)
{
	expect_error("cpus=3-1", "--net cpus:");
	expect_error("cpus=x", "not a CPU list");
	expect_error("cpus=4095", "not one this process may run on");
}

Test(net_config, bad_or_multicast_mac)
{
	expect_error("mac=02:00:00:00:00", "--net mac: '02:00:00:00:00' is not a unicast MAC");
	expect_error("mac=02:00:00:00:00:zz", "is not a unicast MAC");
	expect_error("mac=01:00:5e:00:00:01", "'01:00:5e:00:00:01' is not a unicast MAC");
	expect_error("mac=ff:ff:ff:ff:ff:ff", "is not a unicast MAC");
}

Test(net_config, queue_size_not_a_power_of_two)
{
	expect_error("queue-size=300", "--net queue-size: '300' is not a power of two from 2 to 1024");
	expect_error("queue-size=1", "not a power of two");
	expect_error("queue-size=0", "not a power of two");
	expect_error("queue-size=2048", "not a power of two");
}

Test(net_config, packet_without_interface)
{
	expect_error("packet=", "--net packet=IFACE: the host interface is required");
}

Test(net_config, unknown_engine)
{
	expect_error("engine=xyz", "--net engine: 'xyz' is not uring or epoll");
}

Test(net_config, bad_mtu_and_poll)
{
	expect_error("mtu=67", "not a number from 68 to 65535");
	expect_error("mtu=65536", "not a number from 68 to 65535");
	expect_error("poll-us=1000001", "not auto or a number from 0 to 1000000");
}

Test(net_config, interface_name_too_long)
{
	expect_error("tap=abcdefghijklmnop", "--net tap: interface name 'abcdefghijklmnop' is too long");
	expect_error("packet=abcdefghijklmnop", "--net packet: interface name");
}

Test(net_config, whole_value_too_long)
{
	char spec[600];
	memset(spec, 'a', sizeof(spec) - 1);
	spec[sizeof(spec) - 1] = '\0';
	expect_error(spec, "value too long");
}

/* ---- MAC addresses ----------------------------------------------------------- */

Test(net_config, parse_mac_accepts_unicast_in_either_case)
{
	unsigned char mac[6];
	cr_assert_eq(net_config_parse_mac("02:00:00:00:00:01", mac), 0);
	cr_assert_eq(memcmp(mac, (unsigned char[]){ 2, 0, 0, 0, 0, 1 }, 6), 0);
	cr_assert_eq(net_config_parse_mac("AA:bb:Cc:dD:ee:FE", mac), 0);
	cr_assert_eq(memcmp(mac, (unsigned char[]){ 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xfe }, 6), 0);
	cr_assert_eq(net_config_parse_mac("00:00:00:00:00:00", mac), 0);
}

Test(net_config, parse_mac_refuses_malformed_and_multicast)
{
	const char *bad[] = {
		"", "02:00:00:00:00", "02:00:00:00:00:01:02", "02:00:00:00:00:01 ",
		"02:00:00:00:00:1", "2:0:0:0:0:1", "02-00-00-00-00-01", "02:00:00:00:00:0g",
		"0200:00:00:00:01", "x2:00:00:00:00:01",
		"01:00:00:00:00:00", "03:00:00:00:00:01", "ff:ff:ff:ff:ff:ff", "33:33:00:00:00:01",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned char mac[6];
		cr_assert_eq(net_config_parse_mac(bad[i], mac), -EINVAL, "'%s' accepted", bad[i]);
	}
}

/* ---- the tap's host side: ip= and bridge= ---------------------------------- */

Test(net_config, ip_or_bridge_on_a_tap)
{
#if !MINIVMM_HOSTNET
	/* make HOSTNET=0: the keys parse, the validator refuses them. */
	struct minivmm_net_config off;
	struct vmm_err e;
	cr_assert_eq(parse("tap=t0,ip=10.0.0.1/24", &off, &e), -EOPNOTSUPP);
	cr_assert(strstr(e.msg, "built without host networking"), "%s", e.msg);
	cr_assert_eq(parse("bridge=br0", &off, &e), -EOPNOTSUPP);
	return;
#endif
	struct minivmm_net_config net = parse_ok("tap=t0,ip=10.0.0.1/24");
	cr_assert_str_eq(net.ip, "10.0.0.1/24");
	cr_assert_str_eq(net.bridge, "");
	net = parse_ok("ip=fd00::1/64,queues=2");
	cr_assert_str_eq(net.ip, "fd00::1/64");
	cr_assert_eq(net.backend, MINIVMM_NET_TAP, "no backend key: a new tap");
	net = parse_ok("tap,bridge=br0");
	cr_assert_str_eq(net.bridge, "br0");
	cr_assert_str_eq(net.ip, "");
	net = parse_ok("bridge=abcdefghijklmno");
	cr_assert_str_eq(net.bridge, "abcdefghijklmno");
}

Test(net_config, ip_and_bridge_are_refused_together_and_off_a_tap)
{
	expect_error("tap=t0,ip=10.0.0.1/24,bridge=br0",
		     "--net ip=10.0.0.1/24,bridge=br0: one or the other: a bridge port takes no address of its own (give it to br0)");
	expect_error("packet=eth0,ip=10.0.0.1/24", "--net ip=10.0.0.1/24: only for the tap backend, and this device's is packet");
	expect_error("xdp=v0,bridge=br0", "--net bridge=br0: only for the tap backend, and this device's is xdp");
	expect_error("bridge=br0,packet=eth0", "--net bridge=br0: only for the tap backend, and this device's is packet");
	expect_error("ip=10.0.0.1/24,ip=10.0.0.2/24", "'ip' given twice");
}

Test(net_config, a_bad_ip_or_bridge_is_one_line_naming_the_key)
{
	expect_error("ip=10.0.0.1", "--net ip: '10.0.0.1' has no prefix length (ADDR/PREFIX, e.g. 10.0.0.1/24)");
	expect_error("ip=10.0.0.256/24", "--net ip: '10.0.0.256/24' is not ADDR/PREFIX with an IPv4 or IPv6 address");
	expect_error("ip=10.0.0.1/40", "--net ip: '10.0.0.1/40': the prefix length is not a number from 1 to 32");
	expect_error("ip=fd00::1/200", "the prefix length is not a number from 1 to 128");
	expect_error("ip=", "--net ip=: no address (ADDR/PREFIX, e.g. 10.0.0.1/24)");
	expect_error("ip", "'ip' needs a value");
	expect_error("bridge=", "--net bridge=: empty interface name");
	expect_error("bridge=abcdefghijklmnop", "--net bridge: interface name 'abcdefghijklmnop' is too long");
	expect_error("ip=1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa:bbbb:cccc:dddd:eeee/64",
		     "--net ip: '1111:2222:3333:4444:5555:6666:7777:8888:9999:aaaa:bbbb:cccc:dddd:eeee/64' is too long for ADDR/PREFIX");
}
