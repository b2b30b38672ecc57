/* SPDX-License-Identifier: Apache-2.0 */
/* Host networking of a build without libmnl (make HOSTNET=0, the default
 * of make STATIC=1: Debian's libmnl-dev has no libmnl.a). A tap takes no
 * ip= or bridge= (the validator refuses them first, vmm/config.c; this
 * refuses any caller that skipped it), and the link thread hears no link
 * events: it looks for a vanished backend on its timer alone
 * (devices/virtio/net_link.c). */
#include "net/host_link.h"
#include "net/link_events.h"

#include <errno.h>
#include <stddef.h>

int host_link_open(struct host_link **out, struct vmm_err *err)
{
	*out = NULL;
	return vmm_err_set(err, EOPNOTSUPP,
			   "--net ip=/bridge=: this minivmm is built without host networking (make HOSTNET=0)");
}

void host_link_close(struct host_link *h)
{
	(void)h;
}

/* Unreachable without a socket from host_link_open(). */
int host_link_check_bridge(struct host_link *h, const struct host_link_setup *s, struct vmm_err *err)
{
	(void)h;
	(void)s;
	return host_link_open(&h, err);
}

int host_link_apply(struct host_link *h, const char *ifname, const struct host_link_setup *s,
		    struct host_link_undo *u, struct vmm_err *err)
{
	(void)ifname;
	(void)s;
	(void)u;
	return host_link_open(&h, err);
}

int host_link_revert(struct host_link *h, struct host_link_undo *u, struct vmm_err *err)
{
	(void)h;
	(void)err;
	u->ifindex = 0;   /* nothing was applied */
	return 0;
}

/* No socket: link_events_fd() is -1, which poll(2) skips. */
int link_events_open(struct link_events **out, struct vmm_err *err)
{
	(void)err;
	*out = NULL;
	return 0;
}

void link_events_close(struct link_events *le)
{
	(void)le;
}

int link_events_fd(const struct link_events *le)
{
	(void)le;
	return -1;
}

int link_events_read(struct link_events *le, void (*fn)(void *opaque, const struct link_event *ev),
		     void *opaque)
{
	(void)le;
	(void)fn;
	(void)opaque;
	return 0;
}
