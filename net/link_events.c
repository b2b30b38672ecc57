/* SPDX-License-Identifier: Apache-2.0 */
/* RTNLGRP_LINK events, with libmnl (see net/link_events.h). */
#include "net/link_events.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* One datagram of events: a link message with all its attributes is a
 * few KiB. A longer one would be cut short; its link counts as changed. */
#define LINK_EVENTS_BUF 32768

struct link_events {
	struct mnl_socket *nl;
	char buf[LINK_EVENTS_BUF];
};

int link_events_open(struct link_events **out, struct vmm_err *err)
{
	*out = NULL;
	struct link_events *le = calloc(1, sizeof(*le));
	if (!le)
		return vmm_err_set(err, ENOMEM, "out of memory for a link event socket");
	le->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!le->nl) {
		int e = errno;
		free(le);
		return vmm_err_sys(err, e, "cannot open a netlink socket for link events");
	}
	if (mnl_socket_bind(le->nl, RTMGRP_LINK, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;
		link_events_close(le);
		return vmm_err_sys(err, e, "cannot listen to link events (RTNLGRP_LINK)");
	}
	*out = le;
	return 0;
}

void link_events_close(struct link_events *le)
{
	if (!le)
		return;
	if (le->nl)
		mnl_socket_close(le->nl);
	free(le);
}

int link_events_fd(const struct link_events *le)
{
	return mnl_socket_get_fd(le->nl);
}

static int name_attr(const struct nlattr *attr, void *data)
{
	struct link_event *ev = data;
	if (mnl_attr_get_type(attr) == IFLA_IFNAME && mnl_attr_validate(attr, MNL_TYPE_STRING) == 0)
		snprintf(ev->name, sizeof(ev->name), "%s", mnl_attr_get_str(attr));
	return MNL_CB_OK;
}

int link_events_read(struct link_events *le, void (*fn)(void *opaque, const struct link_event *ev),
		     void *opaque)
{
	int count = 0;
	for (;;) {
		/* read(), not recvmsg(): the sender is not checked, but only the
		 * kernel (or root) can send to this socket, and an event only
		 * makes its reader look at the interface itself. */
		ssize_t n = read(mnl_socket_get_fd(le->nl), le->buf, sizeof(le->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return count;
		if (n < 0)
			return -errno;
		int len = (int)n;
		for (const struct nlmsghdr *nlh = (const struct nlmsghdr *)le->buf; mnl_nlmsg_ok(nlh, len);
		     nlh = mnl_nlmsg_next(nlh, &len)) {
			if ((nlh->nlmsg_type != RTM_NEWLINK && nlh->nlmsg_type != RTM_DELLINK) ||
			    mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
				continue;
			const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
			struct link_event ev = { .gone = nlh->nlmsg_type == RTM_DELLINK,
						 .ifindex = (unsigned)ifi->ifi_index, .flags = ifi->ifi_flags };
			mnl_attr_parse(nlh, sizeof(*ifi), name_attr, &ev);
			count++;
			if (fn)
				fn(opaque, &ev);
		}
	}
}
