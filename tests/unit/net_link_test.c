/* SPDX-License-Identifier: Apache-2.0 */
/* The virtio-net device's link thread (devices/virtio/net_link.c) over a
 * real tap: told that the backend is gone, it takes the link down, and it
 * brings it up again when the kernel says the tap is back (an RTNLGRP_LINK
 * event), well before its slow fallback look. No guest: the device is made
 * over a fake machine and never activated.
 *
 * Each test runs in network and mount namespaces of its own (criterion
 * runs each test in a process of its own), with a sysfs of that namespace,
 * as net/tap.c reads it; it deletes the taps it made. */
#include <criterion/criterion.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "devices/virtio/net.h"
#include "net/tap.h"

static void fresh_netns(void)
{
	cr_assert_eq(unshare(CLONE_NEWNET | CLONE_NEWNS), 0, "unshare: %s", strerror(errno));
	cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0, "%s", strerror(errno));
	cr_assert_eq(mount("sysfs", "/sys", "sysfs", 0, NULL), 0, "sysfs: %s", strerror(errno));
}

/* As `ip tuntap add` makes a tap, by a maker that holds it hold_ms before
 * making it persistent and letting go: the kernel's link event comes at
 * the first step, TUNSETIFF. */
static void tap_add_persistent_slowly(const char *name, unsigned hold_ms)
{
	char real[IFNAMSIZ];
	struct vmm_err e = { 0 };
	int fd = tap_open_queue(name, false, real, &e);
	cr_assert_geq(fd, 0, "%s", e.msg);
	usleep(hold_ms * 1000);
	cr_assert_eq(ioctl(fd, TUNSETPERSIST, 1), 0, "%s", strerror(errno));
	close(fd);
}

static void tap_add_persistent(const char *name)
{
	tap_add_persistent_slowly(name, 0);
}

static void link_del(const char *name)
{
	char buf[512];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_DELLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = 1;
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	cr_assert_not_null(nl);
	cr_assert_eq(mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID), 0);
	cr_assert_gt(mnl_socket_sendto(nl, nlh, nlh->nlmsg_len), 0);
	ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	cr_assert_neq(mnl_cb_run(buf, (size_t)n, 1, mnl_socket_get_portid(nl), NULL, NULL), MNL_CB_ERROR,
		      "delete %s: %s", name, strerror(errno));
	mnl_socket_close(nl);
}

/* A machine that keeps the device's log lines (from any thread). */
struct fake_machine {
	struct machine m;
	pthread_mutex_t lock;
	char log[4096];
};

static void fm_stop(void *o, int status, const char *reason) { (void)o; (void)status; (void)reason; }

static void fm_log(void *o, const char *line)
{
	struct fake_machine *f = o;
	pthread_mutex_lock(&f->lock);
	size_t used = strlen(f->log);
	snprintf(f->log + used, sizeof(f->log) - used, "%s\n", line);
	pthread_mutex_unlock(&f->lock);
}

static int fm_ioeventfd(void *o, uint64_t addr, unsigned len, uint64_t datamatch, int fd, bool assign)
{
	(void)o; (void)addr; (void)len; (void)datamatch; (void)fd; (void)assign;
	return 0;
}

static int fm_irqfd(void *o, int fd, unsigned gsi, bool assign)
{
	(void)o; (void)fd; (void)gsi; (void)assign;
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Wait up to ms for a log line containing text; how long it took. */
static double wait_log(struct fake_machine *f, const char *text, double ms)
{
	double start = now_ms();
	for (;;) {
		pthread_mutex_lock(&f->lock);
		bool found = strstr(f->log, text) != NULL;
		pthread_mutex_unlock(&f->lock);
		if (found)
			return now_ms() - start;
		cr_assert_lt(now_ms() - start, ms, "no '%s' within %.0f ms; log:\n%s", text, ms, f->log);
		usleep(2000);
	}
}

static bool link_is_up(struct virtio_net *n)
{
	pthread_mutex_lock(&n->lock);
	bool up = n->link_up;
	pthread_mutex_unlock(&n->lock);
	return up;
}

struct env {
	struct fake_machine fm;
	struct guest_mem mem;
	struct virtio_net *n;
};

static void env_init(struct env *e, const char *tap)
{
	memset(e, 0, sizeof(*e));
	pthread_mutex_init(&e->fm.lock, NULL);
	e->fm.m = (struct machine){ .opaque = &e->fm, .request_stop = fm_stop, .log = fm_log,
				    .ioeventfd = fm_ioeventfd, .irqfd = fm_irqfd };
	struct minivmm_net_config cfg;
	minivmm_net_config_init(&cfg);
	cfg.engine = MINIVMM_ENGINE_EPOLL;
	snprintf(cfg.ifname, sizeof(cfg.ifname), "%s", tap);
	struct net_backend_config bc = { .kind = NET_BACKEND_TAP, .queues = 1, .mtu = 1500,
					 .queue_size = 256 };
	snprintf(bc.ifname, sizeof(bc.ifname), "%s", tap);
	struct net_backend *b;
	struct vmm_err err = { 0 };
	cr_assert_eq(net_backend_create(&bc, &b, &err), 0, "%s", err.msg);
	cr_assert_eq(virtio_net_create(&e->n, 0, &cfg, b, &e->fm.m, &e->mem, 0xd0000000ull, 5, 1, &err), 0,
		     "%s", err.msg);
	wait_log(&e->fm, "net0: tap lt0, 1 queue pair", 1);
	cr_assert(link_is_up(e->n));
}

Test(net_link, a_tap_made_again_is_back_on_its_link_event_not_the_fallback_look, .timeout = 20)
{
	fresh_netns();
	tap_add_persistent("lt0");
	struct env e;
	env_init(&e, "lt0");

	/* Gone: deleted, and a worker says so. */
	link_del("lt0");
	vnet_backend_lost(e.n, 0, -EBADFD);
	wait_log(&e.fm, "net0: tap lt0 is gone (File descriptor in bad state): link down", 500);
	cr_assert_not(link_is_up(e.n));
	/* Past the first look after the loss: from here only an event (or
	 * the fallback look, seconds away) brings it back. */
	usleep(500 * 1000);
	cr_assert_not(link_is_up(e.n));

	/* The event comes while the maker still holds the tap (a look then
	 * finds it busy, and would wait for the fallback). */
	double start = now_ms();
	tap_add_persistent_slowly("lt0", 30);
	double took = now_ms() - start;
	took += wait_log(&e.fm, "net0: tap lt0 is back: link up", 1000);
	cr_assert(link_is_up(e.n));
	cr_assert_lt(took, 300, "back in %.0f ms: on the event, not the 5 s fallback look", took);
	cr_log_info("back %.1f ms after the tap's maker began", took);
	pthread_mutex_lock(&e.fm.lock);
	cr_assert_null(strstr(e.fm.log, "cannot be used"), "looked before the maker was done:\n%s", e.fm.log);
	pthread_mutex_unlock(&e.fm.lock);

	/* The stop wakes the thread at once. */
	start = now_ms();
	virtio_net_destroy(e.n);
	cr_assert_lt(now_ms() - start, 500, "destroy took %.0f ms", now_ms() - start);
	link_del("lt0");
}

Test(net_link, the_stop_wakes_a_thread_waiting_for_a_gone_backend, .timeout = 20)
{
	fresh_netns();
	tap_add_persistent("lt0");
	struct env e;
	env_init(&e, "lt0");
	link_del("lt0");
	vnet_backend_lost(e.n, 0, -ENODEV);
	wait_log(&e.fm, "is gone", 500);
	usleep(400 * 1000);   /* waiting for an event or its fallback look */
	double start = now_ms();
	virtio_net_destroy(e.n);
	cr_assert_lt(now_ms() - start, 500, "destroy took %.0f ms", now_ms() - start);
}

Test(net_link, other_interfaces_events_leave_a_gone_backend_down, .timeout = 20)
{
	fresh_netns();
	tap_add_persistent("lt0");
	struct env e;
	env_init(&e, "lt0");
	link_del("lt0");
	vnet_backend_lost(e.n, 0, -ENODEV);
	wait_log(&e.fm, "is gone", 500);
	usleep(400 * 1000);
	tap_add_persistent("lt1");
	usleep(200 * 1000);
	cr_assert_not(link_is_up(e.n), "lt1 is not lt0");
	pthread_mutex_lock(&e.fm.lock);
	cr_assert_null(strstr(e.fm.log, "is back"), "%s", e.fm.log);
	pthread_mutex_unlock(&e.fm.lock);
	virtio_net_destroy(e.n);
	link_del("lt1");
}
