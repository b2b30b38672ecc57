/* SPDX-License-Identifier: Apache-2.0 */
/* The library's validator (minivmm_config_validate), called directly as an
 * embedding program would: every range the command line enforces, in the
 * command line's words, so that --net queues=17 and an embedder's
 * net.queues = 17 get the same line. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>

#include "minivmm.h"
#include "vmm/config.h"

static struct minivmm_config valid_config(void)
{
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	cfg.kernel_path = "guest.elf";
	return cfg;
}

static struct minivmm_config with_net(void)
{
	struct minivmm_config cfg = valid_config();
	minivmm_net_config_init(&cfg.net[0]);
	cfg.nr_nets = 1;
	return cfg;
}

static void expect_refused(const struct minivmm_config *cfg, const char *want)
{
	char msg[256] = "";
	cr_assert_eq(minivmm_config_validate(cfg, msg, sizeof(msg)), -EINVAL, "accepted; wanted '%s'", want);
	cr_assert_str_eq(msg, want);
}

Test(config, defaults_with_a_kernel_are_valid)
{
	struct minivmm_config cfg = with_net();
	char msg[256] = "";
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(cfg.kick_signal, SIGRTMIN + 1);
}

Test(config, queues_17_is_refused_in_the_clis_words)
{
	struct minivmm_config cfg = with_net();
	cfg.net[0].queues = 17;
	expect_refused(&cfg, "--net queues: '17' is not a number from 1 to 16");
	cfg.net[0].queues = 0;
	expect_refused(&cfg, "--net queues: '0' is not a number from 1 to 16");
}

Test(config, mtu_1_is_refused_in_the_clis_words)
{
	struct minivmm_config cfg = with_net();
	cfg.net[0].mtu = 1;
	expect_refused(&cfg, "--net mtu: '1' is not a number from 68 to 65535");
	cfg.net[0].mtu = 65536;
	expect_refused(&cfg, "--net mtu: '65536' is not a number from 68 to 65535");
}

Test(config, every_net_range)
{
	struct minivmm_config cfg = with_net();
	cfg.net[0].queue_size = 300;
	expect_refused(&cfg, "--net queue-size: '300' is not a power of two from 2 to 1024");
	cfg.net[0].queue_size = 2048;
	expect_refused(&cfg, "--net queue-size: '2048' is not a power of two from 2 to 1024");

	cfg = with_net();
	cfg.net[0].poll_us = 1000001;
	expect_refused(&cfg, "--net poll-us: '1000001' is not auto or a number from 0 to 1000000");

	cfg = with_net();
	cfg.net[0].threads = 17;
	cfg.net[0].queues = 16;
	expect_refused(&cfg, "--net threads: '17' is not auto, per-queue or a number from 1 to 16");
	cfg.net[0].threads = 3;
	cfg.net[0].queues = 2;
	expect_refused(&cfg, "--net threads=3: more threads than the 2 queue pairs");

	cfg = with_net();
	cfg.net[0].queues = 4;
	cfg.net[0].threads = 2;
	cfg.net[0].nr_cpus = 1;
	expect_refused(&cfg, "--net cpus: 1 CPUs listed for 2 worker threads");
	cfg.net[0].nr_cpus = 17;
	expect_refused(&cfg, "--net cpus: 17 CPUs listed, at most 16");

	cfg = with_net();
	cfg.net[0].nr_cpus = 1;
	cfg.net[0].cpus[0] = 4095;
	expect_refused(&cfg, "--net cpus: CPU 4095 is not one this process may run on");
	cfg.net[0].cpus[0] = -1;
	expect_refused(&cfg, "--net cpus: CPU -1 is not one this process may run on");

	cfg = with_net();
	cfg.net[0].mac_set = 1;
	memcpy(cfg.net[0].mac, (unsigned char[]){ 0x01, 0, 0x5e, 0, 0, 1 }, 6);
	expect_refused(&cfg, "--net mac: '01:00:5e:00:00:01' is not a unicast MAC such as 02:00:00:00:00:01");
	memset(cfg.net[0].mac, 0, 6);
	expect_refused(&cfg, "--net mac: '00:00:00:00:00:00' is not a unicast MAC such as 02:00:00:00:00:01");

	cfg = with_net();
	cfg.net[0].backend = MINIVMM_NET_PACKET;
	expect_refused(&cfg, "--net packet=IFACE: the host interface is required");

	cfg = with_net();
	memset(cfg.net[0].ifname, 'a', sizeof(cfg.net[0].ifname));   /* no NUL */
	expect_refused(&cfg, "--net tap: interface name 'aaaaaaaaaaaaaaaa' is too long");

	cfg = with_net();
	cfg.net[0].engine = (enum minivmm_net_engine)7;
	expect_refused(&cfg, "--net engine: 7 is not uring or epoll");
	cfg = with_net();
	cfg.net[0].fanout = 3;
	expect_refused(&cfg, "--net fanout: 3 is not hash, cpu, lb or qm");
	cfg = with_net();
	cfg.net[0].rx_recv = 2;
	expect_refused(&cfg, "--net rx: 2 is not ring (0) or recv (1)");
	cfg = with_net();
	cfg.net[0].qdisc_bypass = -1;
	expect_refused(&cfg, "--net qdisc-bypass: -1 is not off (0) or on (1)");
	cfg = with_net();
	cfg.net[0].backend = (enum minivmm_net_backend)9;
	expect_refused(&cfg, "--net: backend 9 is not tap, packet or xdp");
	cfg = with_net();
	cfg.net[0].backend = MINIVMM_NET_XDP;
	expect_refused(&cfg, "--net xdp=IFACE: the host interface is required");
	strcpy(cfg.net[0].ifname, "eth0");
	cfg.net[0].xdp_zero_copy = 2;
	expect_refused(&cfg, "--net xdp zero-copy: 2 is not off (0) or on (1)");
}

Test(config, nine_net_devices_are_refused)
{
	struct minivmm_config cfg = with_net();
	cfg.nr_nets = 9;
	expect_refused(&cfg, "--net: at most 8 network devices");
}

Test(config, which_device_is_named_when_there_are_several)
{
	struct minivmm_config cfg = with_net();
	minivmm_net_config_init(&cfg.net[1]);
	cfg.net[1].mtu = 1;
	cfg.nr_nets = 2;
	expect_refused(&cfg, "--net mtu: '1' is not a number from 68 to 65535 (net1)");
}

Test(config, one_tap_for_two_devices_is_refused)
{
	struct minivmm_config cfg = with_net();
	minivmm_net_config_init(&cfg.net[1]);
	minivmm_net_config_init(&cfg.net[2]);
	strcpy(cfg.net[0].ifname, "a");
	strcpy(cfg.net[1].ifname, "b");
	strcpy(cfg.net[2].ifname, "a");
	cfg.nr_nets = 3;
	expect_refused(&cfg, "--net tap=a is given for both net0 and net2: each device needs its own tap");
	/* A packet socket on an interface named like a tap is not a tap. */
	cfg.net[2].backend = MINIVMM_NET_PACKET;
	char msg[256] = "";
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), 0, "%s", msg);
}

Test(config, cpus_mem_and_pinning)
{
	struct minivmm_config cfg = valid_config();
	cfg.ncpus = 0;
	expect_refused(&cfg, "--cpus: '0' is not a number from 1 to 64");
	cfg.ncpus = 65;
	expect_refused(&cfg, "--cpus: '65' is not a number from 1 to 64");

	cfg = valid_config();
	cfg.ncpus = 2;
	cfg.nr_vcpu_cpus = 1;
	expect_refused(&cfg, "--cpus pin: 1 CPUs listed for 2 vCPUs");
	cfg.nr_vcpu_cpus = 65;
	expect_refused(&cfg, "--cpus pin: 65 CPUs listed, at most 64");
	cfg.nr_vcpu_cpus = 2;
	cfg.vcpu_cpus[0] = 0;
	cfg.vcpu_cpus[1] = 4000;
	expect_refused(&cfg, "--cpus pin: CPU 4000 is not one this process may run on");

	cfg = valid_config();
	cfg.mem_size = 3ull << 20;
	expect_refused(&cfg, "--mem: '3M' must be at least 16M and a multiple of 2M");
	cfg.mem_size = (64ull << 20) + 4096;
	expect_refused(&cfg, "--mem: '65540K' must be at least 16M and a multiple of 2M");
	cfg.mem_size = 0;
	expect_refused(&cfg, "--mem: '0' must be at least 16M and a multiple of 2M");
}

Test(config, serial_kernel_and_kick_signal)
{
	struct minivmm_config cfg = valid_config();
	cfg.serial = MINIVMM_SERIAL_FILE;
	expect_refused(&cfg, "--serial file:PATH: no path given");
	cfg.serial = (enum minivmm_serial_mode)5;
	expect_refused(&cfg, "--serial: mode 5 is not stdio, none or file:PATH");
	cfg = valid_config();
	cfg.serial_out_fd = -2;
	expect_refused(&cfg, "--serial stdio: file descriptors 0 and -2: each must be -1 or an open descriptor");

	cfg = valid_config();
	cfg.kernel_path = NULL;
	expect_refused(&cfg, "--kernel PATH is required");

	cfg = valid_config();
	cfg.kick_signal = SIGINT;
	expect_refused(&cfg, "kick_signal SIGINT: not SIGUSR1, SIGUSR2 or a real-time signal (SIGRTMIN..SIGRTMAX)");
	cfg.kick_signal = SIGUSR2;
	char msg[256] = "";
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), 0, "%s", msg);
	cfg.kick_signal = SIGRTMAX;
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), 0, "%s", msg);
}

Test(config, irqchip_is_kernel_or_split)
{
	struct minivmm_config cfg = valid_config();
	char msg[256] = "";
	cfg.irqchip = MINIVMM_IRQCHIP_SPLIT;
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), 0, "%s", msg);
	cfg.irqchip = (enum minivmm_irqchip)2;
	expect_refused(&cfg, "--irqchip: 2 is not kernel or split");
}

Test(config, timeout_is_none_or_up_to_a_year)
{
	struct minivmm_config cfg = valid_config();
	char msg[256] = "";
	cr_assert_eq(cfg.timeout_secs, 0, "minivmm_config_init: no limit");
	cfg.timeout_secs = MINIVMM_TIMEOUT_MAX_SECS;
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), 0, "%s", msg);
	cfg.timeout_secs = MINIVMM_TIMEOUT_MAX_SECS + 1;
	expect_refused(&cfg, "--timeout: '31536001' is not a number of seconds from 1 to 31536000");
	cfg.timeout_secs = 0xffffffffu;
	expect_refused(&cfg, "--timeout: '4294967295' is not a number of seconds from 1 to 31536000");
}

Test(config, a_small_errbuf_gets_a_truncated_line)
{
	struct minivmm_config cfg = valid_config();
	cfg.kernel_path = NULL;
	char msg[8];
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), -EINVAL);
	cr_assert_str_eq(msg, "--kerne");
	cr_assert_eq(minivmm_config_validate(&cfg, NULL, 0), -EINVAL);
}

Test(config, cpus_checked_against_an_explicit_set)
{
	cpu_set_t allowed;
	CPU_ZERO(&allowed);
	for (int c = 0; c < 8; c++)
		CPU_SET(c, &allowed);
	CPU_SET(10, &allowed);
	struct vmm_err e = { 0 };
	cr_assert_eq(config_check_cpus_allowed("--net cpus", (int[]){ 0, 7, 10 }, 3, &allowed, &e), 0);
	cr_assert_eq(config_check_cpus_allowed("--net cpus", (int[]){ 7, 8, 9 }, 3, &allowed, &e), -EINVAL);
	cr_assert_str_eq(e.msg, "--net cpus: CPU 8 is not one this process may run on");
	cr_assert_eq(config_check_cpus_allowed("x", (int[]){ 0, 16 }, 2, &allowed, &e), -EINVAL);
	cr_assert_str_eq(e.msg, "x: CPU 16 is not one this process may run on");
}

Test(config, sizes_are_written_the_way_users_write_them)
{
	char b[32];
	config_format_size(3ull << 20, b, sizeof(b));
	cr_assert_str_eq(b, "3M");
	config_format_size(1ull << 40, b, sizeof(b));
	cr_assert_str_eq(b, "1T");
	config_format_size(3ull << 30, b, sizeof(b));
	cr_assert_str_eq(b, "3G");
	config_format_size(1025ull << 10, b, sizeof(b));
	cr_assert_str_eq(b, "1025K");
	config_format_size(1000, b, sizeof(b));
	cr_assert_str_eq(b, "1000");
	config_format_size(0, b, sizeof(b));
	cr_assert_str_eq(b, "0");
}

Test(config, signal_names)
{
	char b[32];
	config_signal_name(SIGRTMIN + 1, b, sizeof(b));
	cr_assert_str_eq(b, "SIGRTMIN+1");
	config_signal_name(SIGUSR2, b, sizeof(b));
	cr_assert_str_eq(b, "SIGUSR2");
	config_signal_name(200, b, sizeof(b));
	cr_assert_str_eq(b, "signal 200");
}

/* An embedder's ip and bridge fields get the command line's words. */
Test(config, ip_and_bridge_are_checked_in_the_clis_words)
{
	struct minivmm_config cfg = with_net();
	snprintf(cfg.net[0].ip, sizeof(cfg.net[0].ip), "10.0.0.1/24");
	char msg[256] = "";
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), 0, "%s", msg);
	snprintf(cfg.net[0].ip, sizeof(cfg.net[0].ip), "10.0.0.1");
	expect_refused(&cfg, "--net ip: '10.0.0.1' has no prefix length (ADDR/PREFIX, e.g. 10.0.0.1/24)");
	snprintf(cfg.net[0].ip, sizeof(cfg.net[0].ip), "10.0.0.1/24");
	snprintf(cfg.net[0].bridge, sizeof(cfg.net[0].bridge), "br0");
	expect_refused(&cfg, "--net ip=10.0.0.1/24,bridge=br0: one or the other: a bridge port takes no address of its own (give it to br0)");
	cfg.net[0].ip[0] = '\0';
	cr_assert_eq(minivmm_config_validate(&cfg, msg, sizeof(msg)), 0, "%s", msg);
	cfg.net[0].backend = MINIVMM_NET_PACKET;
	snprintf(cfg.net[0].ifname, sizeof(cfg.net[0].ifname), "eth0");
	expect_refused(&cfg, "--net bridge=br0: only for the tap backend, and this device's is packet");
	cfg.net[0].backend = MINIVMM_NET_TAP;
	memset(cfg.net[0].bridge, 'b', sizeof(cfg.net[0].bridge));
	expect_refused(&cfg, "--net bridge: interface name 'bbbbbbbbbbbbbbbb' is too long");
	cfg.net[0].bridge[0] = '\0';
	memset(cfg.net[0].ip, '1', sizeof(cfg.net[0].ip));
	expect_refused(&cfg, "--net ip: '1111111111111111111111111111111111111111111111111111111111111111' is too long for ADDR/PREFIX");
}
