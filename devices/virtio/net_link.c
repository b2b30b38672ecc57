/* SPDX-License-Identifier: Apache-2.0 */
/* The backend's link: an interface can vanish under a running VM (`ip link
 * del` of the tap, the packet socket's device unregistered). A worker that
 * sees its fd die stops using it and reports it here (vnet_backend_lost,
 * from the worker thread); the device's link thread then
 *   - says so once, clears VIRTIO_NET_S_LINK_UP and raises a config
 *     interrupt, so the guest's driver sees carrier loss;
 *   - looks for the interface shortly after the kernel says it changed
 *     (an RTNLGRP_LINK event naming it: made again, up, carrier) and, when
 *     it is back, reopens every queue's fd, restarts the workers on them
 *     (their queue state lives on in qp->dp), re-applies offloads and
 *     steering, and sets the link up again.
 * Nothing spins meanwhile: the workers drop the guest's TX frames as they
 * come and leave RX buffers with the guest.
 *
 * While the backend is gone the thread also looks every LINK_FALLBACK_MS,
 * events or not: some things that make an interface that is there usable
 * again send no link event (another process letting go of the tap, or of
 * an AF_XDP queue; a tap's owner changed), and a socket that overran
 * (ENOBUFS) has lost events. It does nothing at all while the link is up. */
#include "base/confine.h"
#include "devices/virtio/net.h"
#include "minivmm_abi.h"
#include "net/helper.h"
#include "net/tap.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* The first look after a loss: not at once, as the interface may still be
 * half-deleted, but soon, for one made again so quickly that its events
 * were read (and let go) before the loss was known. */
#define LINK_SETTLE_MS 250
/* After an event naming the interface: its maker may not be done with it
 * (`ip tuntap add` is heard at TUNSETIFF, while it still holds the tap and
 * before TUNSETPERSIST; a veth is heard down, then up). */
#define LINK_EVENT_SETTLE_MS 100
/* A build without link events (make HOSTNET=0) has only this look. */
#if !defined(MINIVMM_HOSTNET) || MINIVMM_HOSTNET
#define LINK_FALLBACK_MS 5000
#else
#define LINK_FALLBACK_MS 1000
#endif

void vnet_backend_lost(void *opaque, unsigned qp, int err)
{
	struct virtio_net *n = opaque;
	__atomic_store_n(&n->link_lost_err, err, __ATOMIC_RELEASE);
	(void)qp;
	uint64_t one = 1;
	if (write(n->link_wake_fd, &one, sizeof(one)) < 0) {
		/* only fails on counter overflow: already woken */
	}
}

/* "net0: tap t0 <what>" */
static void vnet_link_log(struct virtio_net *n, const char *what)
{
	char line[700];
	snprintf(line, sizeof(line), "net%u: %s %s %s", n->index, n->backend->ops->kind, n->backend->ifname,
		 what);
	machine_log(n->ev, line);
}

static void vnet_link_set(struct virtio_net *n, bool up)
{
	pthread_mutex_lock(&n->lock);
	n->link_up = up;
	pthread_mutex_unlock(&n->lock);
	virtio_mmio_config_changed(n->transport);
}

/* With n->lock held: reopen the backend and put the queue pairs back on it.
 * Workers are stopped around the swap; their state is kept in qp->dp. */
static int vnet_link_reopen_locked(struct virtio_net *n, struct vmm_err *err)
{
	bool running = n->activated;
	if (running)
		vnet_stop_workers(n);
	int rc = net_backend_reopen(n->backend, err);
	if (rc == 0 && running)
		rc = n->backend->ops->set_offload(n->backend, tap_offloads_from_features(n->guest_offloads), err);
	for (unsigned p = 0; p < n->nr_pairs && rc == 0; p++) {
		struct vmm_err e = { 0 };
		if (net_backend_set_queue_active(n->backend, p, p < n->active_pairs, &e) < 0)
			rc = vmm_err_set(err, e.code, "%s", e.msg);
	}
	for (unsigned p = 0; p < n->nr_pairs; p++)
		if (n->qp[p].dp)
			n->qp[p].dp->backend_gone = rc != 0;
	if (running) {
		struct vmm_err e = { 0 };
		if (vnet_start_workers(n, n->usable_pairs, &e) < 0 && rc == 0)
			rc = vmm_err_set(err, e.code, "cannot restart queue workers: %s", e.msg);
	}
	return rc;
}

/* Once the interface is present again: 0 when the link is back up. */
static int vnet_link_try_recover(struct virtio_net *n, char *last_err, size_t size)
{
	if (!net_backend_present(n->backend))
		return -EAGAIN;
	struct vmm_err err = { 0 };
	pthread_mutex_lock(&n->lock);
	int rc = vnet_link_reopen_locked(n, &err);
	pthread_mutex_unlock(&n->lock);
	if (rc == 0) {
		vnet_link_set(n, true);
		vnet_link_log(n, "is back: link up");
		last_err[0] = '\0';
		return 0;
	}
	if (rc == -EAGAIN)
		return rc;   /* not really back (being deleted, or not made yet) */
	/* Say why once per distinct reason, not at every look. */
	if (strcmp(last_err, err.msg) != 0) {
		snprintf(last_err, size, "%s", err.msg);
		char what[600];
		snprintf(what, sizeof(what), "is there again but cannot be used (%s); still trying", err.msg);
		vnet_link_log(n, what);
	}
	return rc;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct link_watch {
	const char *ifname;
	bool named;              /* an event for our interface (not its deletion) */
};

static void vnet_link_event(void *opaque, const struct link_event *ev)
{
	struct link_watch *w = opaque;
	if (!ev->gone && strcmp(ev->name, w->ifname) == 0)
		w->named = true;
}

static void *vnet_link_main(void *arg)
{
	struct virtio_net *n = arg;
	char name[16], last_err[sizeof(((struct vmm_err *)0)->msg)] = "";
	snprintf(name, sizeof(name), "net%u-link", (uint8_t)n->index);
	pthread_setname_np(pthread_self(), name);
	/* Reopening the backend is its helper's (net/helper.h): this thread
	 * keeps no capability. One that cannot confine itself must not run:
	 * the VM stops. */
	struct vmm_err err = { 0 };
	if (confine_enter(n->ev->confine, CONFINE_NET_LINK, &err) < 0) {
		char why[sizeof(err.msg) + 40];
		snprintf(why, sizeof(why), "net%u: link thread: %s", n->index, err.msg);
		machine_stop(n->ev, MINIVMM_EXIT_HOST_ERROR, why);
		return NULL;
	}
	bool down = false;
	int64_t next_look = 0;   /* while down: when to look next */
	for (;;) {
		struct pollfd fds[3] = { { .fd = n->link_stop_fd, .events = POLLIN },
					 { .fd = n->link_wake_fd, .events = POLLIN },
					 { .fd = link_events_fd(n->link_events), .events = POLLIN } };
		int timeout = -1;
		if (down) {
			int64_t left = next_look - now_ms();
			timeout = left > 0 ? (int)left : 0;
		}
		int ready = poll(fds, 3, timeout);
		if (ready < 0 && errno != EINTR)
			break;
		if (fds[0].revents)
			break;
		/* The loss first, so that events read in the same pass count. */
		if (fds[1].revents) {
			uint64_t v;
			if (read(n->link_wake_fd, &v, sizeof(v)) < 0) {
				/* nothing to clear */
			}
			if (!down) {
				down = true;
				next_look = now_ms() + LINK_SETTLE_MS;
				int e = __atomic_load_n(&n->link_lost_err, __ATOMIC_ACQUIRE);
				vnet_link_set(n, false);
				char what[200];
				snprintf(what, sizeof(what), "is gone (%s): link down, waiting for it to come back",
					 strerror(-e));
				vnet_link_log(n, what);
			}
		}
		if (fds[2].revents) {
			/* Read while up too, or the socket would overrun. */
			struct link_watch w = { .ifname = n->backend->ifname };
			int rc = link_events_read(n->link_events, vnet_link_event, &w);
			int64_t soon = now_ms() + LINK_EVENT_SETTLE_MS;
			if (down && (w.named || rc == -ENOBUFS) && soon < next_look)
				next_look = soon;
		}
		if (down && now_ms() >= next_look) {
			if (vnet_link_try_recover(n, last_err, sizeof(last_err)) == 0)
				down = false;
			else
				next_look = now_ms() + LINK_FALLBACK_MS;
		}
	}
	return NULL;
}

int vnet_link_start(struct virtio_net *n, struct vmm_err *err)
{
	n->link_up = true;
	n->link_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	n->link_stop_fd = eventfd(0, EFD_CLOEXEC);
	if (n->link_wake_fd < 0 || n->link_stop_fd < 0)
		return vmm_err_sys(err, errno, "eventfds for net%u's link thread", n->index);
	/* Here, on the thread that opened the backend: the socket hears the
	 * network namespace the backend's interface is in. */
	struct vmm_err e = { 0 };
	if (link_events_open(&n->link_events, &e) < 0)
		return vmm_err_set(err, e.code, "net%u's link thread: %s", n->index, e.msg);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(n->unpinned), &n->unpinned);
	/* It sleeps almost always; its stack costs only what it touches. */
	pthread_attr_setstacksize(&attr, 64 * 1024);
	int rc = pthread_create(&n->link_thread, &attr, vnet_link_main, n);
	pthread_attr_destroy(&attr);
	if (rc)
		return vmm_err_sys(err, rc, "cannot start net%u's link thread", n->index);
	n->link_running = true;
	return 0;
}

void vnet_link_stop(struct virtio_net *n)
{
	if (n->link_running) {
		uint64_t one = 1;
		if (write(n->link_stop_fd, &one, sizeof(one)) < 0) {
			/* only fails on overflow: already told */
		}
		pthread_join(n->link_thread, NULL);
		n->link_running = false;
	}
	if (n->link_wake_fd >= 0)
		close(n->link_wake_fd);
	if (n->link_stop_fd >= 0)
		close(n->link_stop_fd);
	n->link_wake_fd = n->link_stop_fd = -1;
	link_events_close(n->link_events);
	n->link_events = NULL;
}
