/* SPDX-License-Identifier: Apache-2.0 */
#include "net/tap.h"

#include "net/backend.h"
#include "net/host_link.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TAP_VNET_HDR_LEN 12   /* struct virtio_net_hdr_v1 */

/* The flags an existing tap was created with, from sysfs; -1 if there is
 * no such interface. */
static long tap_existing_flags(const char *name)
{
	char path[96];
	snprintf(path, sizeof(path), "/sys/class/net/%s/tun_flags", name);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long flags = -1;
	if (fscanf(f, "%li", &flags) != 1)
		flags = -1;
	fclose(f);
	return flags;
}

static int tap_check_existing(const char *name, bool multi_queue, struct vmm_err *err)
{
	if (!*name)
		return 0;
	char path[96];
	snprintf(path, sizeof(path), "/sys/class/net/%s", name);
	if (access(path, F_OK) != 0)
		return 0;   /* will be created */
	long flags = tap_existing_flags(name);
	if (flags < 0)
		return vmm_err_set(err, EINVAL, "'%s' exists and is not a tap device", name);
	if (!(flags & IFF_TAP))
		return vmm_err_set(err, EINVAL, "'%s' is a tun (layer 3) device, not a tap", name);
	bool is_mq = flags & IFF_MULTI_QUEUE;
	if (is_mq != multi_queue)
		return vmm_err_set(err, EINVAL,
				   "tap '%s' was created %s IFF_MULTI_QUEUE; %s (recreate it with 'ip tuntap add %s mode tap%s')",
				   name, is_mq ? "with" : "without",
				   multi_queue ? "several queues need a multiqueue tap"
					       : "one queue needs a single-queue tap",
				   name, multi_queue ? " multi_queue" : "");
	return 0;
}

int tap_open_queue(const char *name, bool multi_queue, char *name_out, struct vmm_err *err)
{
	if (strlen(name) >= IFNAMSIZ)
		return vmm_err_set(err, EINVAL, "tap name '%s' is longer than %d characters", name,
				   IFNAMSIZ - 1);
	int rc = tap_check_existing(name, multi_queue, err);
	if (rc)
		return rc;
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		return vmm_err_sys(err, e, "cannot open /dev/net/tun%s",
				   e == EACCES || e == EPERM ? " (needs root or CAP_NET_ADMIN)" : "");
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | (multi_queue ? IFF_MULTI_QUEUE : 0);
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", *name ? name : "mvmtap%d");
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		int e = errno;
		close(fd);
		if (e == EPERM || e == EACCES)
			return vmm_err_set(err, e, "no permission to use tap '%s' (needs CAP_NET_ADMIN, or a tap owned by this user)",
					   *name ? name : "(new)");
		if (e == EBUSY)
			return vmm_err_set(err, e, "tap '%s' is already in use (by another program, or another VM of this one)", name);
		return vmm_err_sys(err, e, "cannot attach to tap '%s'", *name ? name : "(new)");
	}
	int hdr = TAP_VNET_HDR_LEN;
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0) {
		int e = errno;
		close(fd);
		return vmm_err_sys(err, e, "TUNSETVNETHDRSZ on tap '%s'", ifr.ifr_name);
	}
	if (name_out)
		snprintf(name_out, IFNAMSIZ, "%s", ifr.ifr_name);
	return fd;
}

int tap_set_offload(int fd, unsigned offloads, struct vmm_err *err)
{
	unsigned flags = 0;
	if (offloads & TAP_OFFLOAD_CSUM) {
		flags |= TUN_F_CSUM;
		/* Segmentation offloads need checksum offload underneath. */
		if (offloads & TAP_OFFLOAD_TSO4)
			flags |= TUN_F_TSO4;
		if (offloads & TAP_OFFLOAD_TSO6)
			flags |= TUN_F_TSO6;
		if ((offloads & TAP_OFFLOAD_ECN) && (flags & (TUN_F_TSO4 | TUN_F_TSO6)))
			flags |= TUN_F_TSO_ECN;
	}
	if (ioctl(fd, TUNSETOFFLOAD, (unsigned long)flags) < 0)
		return vmm_err_sys(err, errno, "TUNSETOFFLOAD 0x%x", flags);
	return 0;
}

int tap_set_queue_attached(int fd, bool attached, struct vmm_err *err)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = attached ? IFF_ATTACH_QUEUE : IFF_DETACH_QUEUE;
	if (ioctl(fd, TUNSETQUEUE, &ifr) < 0)
		return vmm_err_sys(err, errno, "TUNSETQUEUE %s", attached ? "attach" : "detach");
	return 0;
}

unsigned tap_offloads_from_features(unsigned long long f)
{
	unsigned o = 0;
	if (f & (1ull << VIRTIO_NET_F_GUEST_CSUM))
		o |= TAP_OFFLOAD_CSUM;
	if (f & (1ull << VIRTIO_NET_F_GUEST_TSO4))
		o |= TAP_OFFLOAD_TSO4;
	if (f & (1ull << VIRTIO_NET_F_GUEST_TSO6))
		o |= TAP_OFFLOAD_TSO6;
	if (f & (1ull << VIRTIO_NET_F_GUEST_ECN))
		o |= TAP_OFFLOAD_ECN;
	return o;
}

/* ---- as a backend -------------------------------------------------------- */

/* One fd-style queue per pair (the common part), and what was done to the
 * tap's host side (ip=, bridge=), to be undone when the backend goes. */
struct tap_backend {
	struct net_backend base;
	const struct machine *machine;   /* for the line saying what could not be undone */
	unsigned index;
	/* Open from set-up to the undo, so that the undo (on a confined
	 * thread, at exit) makes no socket: NULL when there is nothing to undo. */
	struct host_link *nl;
	struct host_link_undo undo;
};

static struct tap_backend *tap_of(struct net_backend *b)
{
	return (struct tap_backend *)b;
}

static void tap_backend_close(struct net_backend *b)
{
	for (unsigned q = 0; q < b->nr_queues; q++) {
		if (b->io[q].fd >= 0)
			close(b->io[q].fd);
		b->io[q] = (struct net_queue_io){ .fd = -1 };
	}
}

/* Queues attached to the tap now, from sysfs (the kernel lists one rx-N per
 * attached queue); -1 if it cannot tell. */
static int tap_attached_queues(const char *name)
{
	char path[96];
	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", name);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strncmp(e->d_name, "rx-", 3) == 0;
	closedir(d);
	return n;
}

/* A multiqueue tap takes any number of attachments without a word: a second
 * VMM (or anything else) on the same tap would silently get half of our
 * frames, with our MAC. Refuse it once our queues are attached. */
static int tap_check_not_shared(struct net_backend *b, struct vmm_err *err)
{
	int attached = tap_attached_queues(b->ifname);
	if (attached < 0 || (unsigned)attached <= b->nr_queues)
		return 0;
	return vmm_err_set(err, EBUSY,
			   "tap '%s' already has %u queue%s attached by another program or VM; sharing a multiqueue tap splits its frames between both (use a tap of its own)",
			   b->ifname, (unsigned)attached - b->nr_queues,
			   (unsigned)attached - b->nr_queues == 1 ? "" : "s");
}

/* Did TUNSETIFF on fd attach to a tap someone made persistent (ip tuntap
 * add), rather than create a new one? */
static bool tap_is_persistent(int fd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	return ioctl(fd, TUNGETIFF, &ifr) == 0 && (ifr.ifr_flags & IFF_PERSIST);
}

/* Open every queue. attach_only: the tap must be one an operator made
 * (persistent); a TUNSETIFF that created it instead is undone and -EAGAIN
 * returned. */
static int tap_backend_open_queues(struct net_backend *b, bool attach_only, struct vmm_err *err)
{
	bool multi = b->nr_queues > 1;
	bool existed = false;
	if (*b->ifname) {
		char path[96];
		snprintf(path, sizeof(path), "/sys/class/net/%s", b->ifname);
		existed = access(path, F_OK) == 0;
	}
	for (unsigned q = 0; q < b->nr_queues; q++)
		b->io[q] = (struct net_queue_io){ .fd = -1 };
	for (unsigned q = 0; q < b->nr_queues; q++) {
		/* The first open names the tap; the others join it. */
		int fd = tap_open_queue(b->ifname, multi, b->ifname, err);
		if (fd < 0) {
			tap_backend_close(b);
			return fd;
		}
		b->io[q].fd = fd;
		if (q == 0 && attach_only && !tap_is_persistent(fd)) {
			tap_backend_close(b);   /* the last fd of a tap we made: it goes */
			return vmm_err_set(err, EAGAIN, "tap '%s' is not there (yet)", b->ifname);
		}
	}
	int rc = multi ? tap_check_not_shared(b, err) : 0;
	if (rc) {
		tap_backend_close(b);
		return rc;
	}
	b->created = !existed;
	b->guest_gso = true;
	b->csum_offload = true;
	return 0;
}

static int tap_backend_open(struct net_backend *b, struct vmm_err *err)
{
	return tap_backend_open_queues(b, false, err);
}

static int tap_backend_set_offload(struct net_backend *b, unsigned offloads, struct vmm_err *err)
{
	/* One setting for the whole interface; any queue's fd will do. */
	b->offloads = offloads;
	return tap_set_offload(b->io[0].fd, offloads, err);
}

static int tap_backend_set_queue_active(struct net_backend *b, unsigned q, bool active,
					struct vmm_err *err)
{
	if (b->nr_queues < 2)
		return 0;   /* a single-queue tap cannot detach its only queue */
	int rc = tap_set_queue_attached(b->io[q].fd, active, err);
	/* Attaching an attached queue (or detaching a detached one) is EINVAL. */
	if (rc == -EINVAL)
		rc = 0;
	return rc;
}

static bool tap_backend_present(struct net_backend *b)
{
	char path[96];
	snprintf(path, sizeof(path), "/sys/class/net/%s", b->ifname);
	return access(path, F_OK) == 0;
}

/* Attach to the tap again by name, never creating one: /sys/class/net can
 * still show a tap that is being deleted, and a TUNSETIFF by name then makes
 * a new tap of that name, which the operator's `ip tuntap add` after the
 * delete fails on (EBUSY). A tap an operator makes is persistent; one that
 * is not was ours, just made, and goes again (-EAGAIN: not back yet). A tap
 * of the wrong kind is refused by tap_open_queue with its usual message. */
static int tap_backend_reopen(struct net_backend *b, struct vmm_err *err)
{
	tap_backend_close(b);
	int rc = tap_backend_open_queues(b, true, err);
	/* Whoever made the tap that is there now owns it, host side and all:
	 * what ip=/bridge= did went with the old one, and the undo, finding
	 * another index under the name, leaves this one alone. */
	b->created = false;
	return rc;
}

/* Undo the host side before the queues close: a tap we created goes away
 * with its last queue, taking its address and bridge port along, so only
 * an operator's tap has anything to undo. */
static void tap_host_revert(struct tap_backend *tb)
{
	struct vmm_err err = { 0 };
	if (tb->nl && host_link_revert(tb->nl, &tb->undo, &err) < 0 && tb->machine) {
		char line[sizeof(err.msg) + 64];
		snprintf(line, sizeof(line), "net%u: tap %s %s", tb->index, tb->base.ifname, err.msg);
		machine_log(tb->machine, line);
	}
	host_link_close(tb->nl);
	tb->nl = NULL;
}

static void tap_backend_destroy(struct net_backend *b)
{
	tap_host_revert(tap_of(b));
	tap_backend_close(b);
	free(b);
}

static const struct net_backend_ops tap_backend_ops = {
	.kind = "tap",
	.set_offload = tap_backend_set_offload,
	.set_queue_active = tap_backend_set_queue_active,
	.present = tap_backend_present,
	.reopen = tap_backend_reopen,
	.destroy = tap_backend_destroy,
};

static bool tap_host_wanted(const struct host_link_setup *s)
{
	return s->has_addr || s->bridge[0];
}

/* ip= and bridge=, once the tap is open; the start-up line says what. */
static int tap_host_apply(struct tap_backend *tb, const struct host_link_setup *s, struct vmm_err *err)
{
	struct vmm_err e = { 0 };
	int rc = host_link_apply(tb->nl, tb->base.ifname, s, &tb->undo, &e);
	if (rc)
		return vmm_err_set(err, e.code, "tap %s: %s", tb->base.ifname, e.msg);
	char addr[64] = "";
	if (s->has_addr)
		host_addr_format(&s->addr, addr, sizeof(addr));
	snprintf(tb->base.detail, sizeof(tb->base.detail), "host side: %s%s%s, up%s",
		 addr, s->bridge[0] ? "port of " : "", s->bridge,
		 tb->base.created ? "" : "; undone at exit");
	if (tb->base.created) {
		/* Nothing to undo: the kernel removes the tap, and with it
		 * the address and the bridge port, when its last queue closes. */
		memset(&tb->undo, 0, sizeof(tb->undo));
		host_link_close(tb->nl);
		tb->nl = NULL;
	}
	return 0;
}

int tap_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err)
{
	struct tap_backend *tb = calloc(1, sizeof(*tb));
	if (!tb)
		return vmm_err_set(err, ENOMEM, "out of memory for a tap backend");
	struct net_backend *b = &tb->base;
	b->ops = &tap_backend_ops;
	b->nr_queues = cfg->queues;
	snprintf(b->ifname, sizeof(b->ifname), "%s", cfg->ifname);
	tb->machine = cfg->machine;
	tb->index = cfg->index;
	int rc = 0;
	if (tap_host_wanted(&cfg->host)) {
		/* A missing bridge is refused before any tap is made. */
		rc = host_link_open(&tb->nl, err);
		struct vmm_err e = { 0 };
		if (rc == 0 && host_link_check_bridge(tb->nl, &cfg->host, &e) < 0)
			rc = vmm_err_set(err, e.code, "--net bridge=%s: %s", cfg->host.bridge, e.msg);
	}
	if (rc == 0)
		rc = tap_backend_open(b, err);
	if (rc == 0 && tb->nl) {
		rc = tap_host_apply(tb, &cfg->host, err);
		if (rc)
			tap_backend_close(b);   /* a tap we made goes with it */
	}
	if (rc) {
		host_link_close(tb->nl);
		free(tb);
		return rc;
	}
	*out = b;
	return 0;
}
