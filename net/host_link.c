/* SPDX-License-Identifier: Apache-2.0 */
/* Interfaces over rtnetlink, with libmnl (see net/host_link.h). */
#include "net/host_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Room for any one reply: a link with all its attributes is a few KiB. */
#define HOST_LINK_BUF 32768

struct host_link {
	struct mnl_socket *nl;
	unsigned portid;
	unsigned seq;
	char buf[HOST_LINK_BUF];
};

/* ---- addresses ------------------------------------------------------------ */

static size_t host_addr_len(const struct host_addr *a)
{
	return a->family == AF_INET ? 4 : 16;
}

/* ---- the socket and one exchange ---------------------------------------- */

int host_link_open(struct host_link **out, struct vmm_err *err)
{
	*out = NULL;
	struct host_link *h = calloc(1, sizeof(*h));
	if (!h)
		return vmm_err_set(err, ENOMEM, "out of memory for a netlink socket");
	h->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!h->nl) {
		int e = errno;
		free(h);
		return vmm_err_sys(err, e, "cannot open a netlink socket");
	}
	if (mnl_socket_bind(h->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;
		host_link_close(h);
		return vmm_err_sys(err, e, "cannot bind a netlink socket");
	}
	h->portid = mnl_socket_get_portid(h->nl);
	*out = h;
	return 0;
}

void host_link_close(struct host_link *h)
{
	if (!h)
		return;
	if (h->nl)
		mnl_socket_close(h->nl);
	free(h);
}

static struct nlmsghdr *host_link_msg(struct host_link *h, uint16_t type, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(h->buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	nlh->nlmsg_seq = ++h->seq;
	return nlh;
}

/* Send the request built in h->buf and read the answer: cb for each reply
 * message (may be NULL for a plain acknowledgement). 0 or -errno. */
static int host_link_talk(struct host_link *h, mnl_cb_t cb, void *data)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)h->buf;
	unsigned seq = nlh->nlmsg_seq;
	if (mnl_socket_sendto(h->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(h->nl, h->buf, sizeof(h->buf));
		if (n < 0)
			return -errno;
		int rc = mnl_cb_run(h->buf, (size_t)n, seq, h->portid, cb, data);
		if (rc == MNL_CB_ERROR)
			return errno ? -errno : -EIO;
		if (rc == MNL_CB_STOP)
			return 0;
	}
}

/* ---- links ------------------------------------------------------------------ */

static int link_kind_attr(const struct nlattr *attr, void *data)
{
	char *kind = data;
	if (mnl_attr_get_type(attr) == IFLA_INFO_KIND && mnl_attr_validate(attr, MNL_TYPE_STRING) == 0)
		snprintf(kind, 16, "%s", mnl_attr_get_str(attr));
	return MNL_CB_OK;
}

static int link_attr(const struct nlattr *attr, void *data)
{
	struct host_link_info *info = data;
	switch (mnl_attr_get_type(attr)) {
	case IFLA_MASTER:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			info->master = mnl_attr_get_u32(attr);
		break;
	case IFLA_LINKINFO:
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
			mnl_attr_parse_nested(attr, link_kind_attr, info->kind);
		break;
	}
	return MNL_CB_OK;
}

static int link_reply(const struct nlmsghdr *nlh, void *data)
{
	struct host_link_info *info = data;
	if (nlh->nlmsg_type != RTM_NEWLINK || mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifinfomsg))
		return MNL_CB_OK;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	info->ifindex = (unsigned)ifi->ifi_index;
	info->flags = ifi->ifi_flags;
	mnl_attr_parse(nlh, sizeof(*ifi), link_attr, info);
	return MNL_CB_OK;
}

int host_link_get(struct host_link *h, const char *name, struct host_link_info *info,
		  struct vmm_err *err)
{
	memset(info, 0, sizeof(*info));
	if (strlen(name) >= IFNAMSIZ)
		return vmm_err_set(err, EINVAL, "interface name '%s' is too long", name);
	/* With an acknowledgement after the reply: it ends the exchange. */
	struct nlmsghdr *nlh = host_link_msg(h, RTM_GETLINK, NLM_F_ACK);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	int rc = host_link_talk(h, link_reply, info);
	if (rc == -ENODEV || (rc == 0 && !info->ifindex))
		return vmm_err_set(err, ENODEV, "there is no interface %s", name);
	if (rc)
		return vmm_err_sys(err, -rc, "cannot look up interface %s", name);
	return 0;
}

/* RTM_NEWLINK on ifindex with an optional u32 attribute. */
static int link_change(struct host_link *h, unsigned ifindex, unsigned change, unsigned flags,
		       int attr, uint32_t value)
{
	struct nlmsghdr *nlh = host_link_msg(h, RTM_NEWLINK, NLM_F_ACK);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = (int)ifindex;
	ifi->ifi_change = change;
	ifi->ifi_flags = flags;
	if (attr >= 0)
		mnl_attr_put_u32(nlh, (uint16_t)attr, value);
	return host_link_talk(h, NULL, NULL);
}

int host_link_set_up(struct host_link *h, unsigned ifindex, bool up, struct vmm_err *err)
{
	int rc = link_change(h, ifindex, IFF_UP, up ? IFF_UP : 0, -1, 0);
	if (rc)
		return vmm_err_sys(err, -rc, "cannot set interface %u %s", ifindex, up ? "up" : "down");
	return 0;
}

int host_link_set_master(struct host_link *h, unsigned ifindex, unsigned master,
			 struct vmm_err *err)
{
	int rc = link_change(h, ifindex, 0, 0, IFLA_MASTER, master);
	if (rc && master)
		return vmm_err_sys(err, -rc, "cannot make interface %u a port of interface %u", ifindex, master);
	if (rc)
		return vmm_err_sys(err, -rc, "cannot take interface %u off its bridge", ifindex);
	return 0;
}

/* ---- addresses on links ------------------------------------------------------ */

static void addr_msg(struct host_link *h, uint16_t type, uint16_t flags, unsigned ifindex,
		     const struct host_addr *a)
{
	struct nlmsghdr *nlh = host_link_msg(h, type, flags);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (unsigned char)a->family;
	ifa->ifa_prefixlen = (unsigned char)a->prefix;
	ifa->ifa_index = ifindex;
	/* As `ip addr add` sends it: local and address the same (no peer). */
	mnl_attr_put(nlh, IFA_LOCAL, host_addr_len(a), a->bytes);
	mnl_attr_put(nlh, IFA_ADDRESS, host_addr_len(a), a->bytes);
}

int host_link_add_addr(struct host_link *h, unsigned ifindex, const struct host_addr *a,
		       struct vmm_err *err)
{
	addr_msg(h, RTM_NEWADDR, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, ifindex, a);
	int rc = host_link_talk(h, NULL, NULL);
	if (rc) {
		char text[INET6_ADDRSTRLEN + 8];
		host_addr_format(a, text, sizeof(text));
		return vmm_err_sys(err, -rc, "cannot add address %s", text);
	}
	return 0;
}

int host_link_del_addr(struct host_link *h, unsigned ifindex, const struct host_addr *a,
		       struct vmm_err *err)
{
	addr_msg(h, RTM_DELADDR, NLM_F_ACK, ifindex, a);
	int rc = host_link_talk(h, NULL, NULL);
	if (rc) {
		char text[INET6_ADDRSTRLEN + 8];
		host_addr_format(a, text, sizeof(text));
		return vmm_err_sys(err, -rc, "cannot remove address %s", text);
	}
	return 0;
}

struct addr_match {
	unsigned ifindex;
	const struct host_addr *want;
	bool found;
};

static int addr_attr(const struct nlattr *attr, void *data)
{
	struct addr_match *m = data;
	uint16_t type = mnl_attr_get_type(attr);
	size_t len = host_addr_len(m->want);
	if ((type == IFA_LOCAL || type == IFA_ADDRESS) && mnl_attr_get_payload_len(attr) == len &&
	    memcmp(mnl_attr_get_payload(attr), m->want->bytes, len) == 0)
		m->found = true;
	return MNL_CB_OK;
}

static int addr_reply(const struct nlmsghdr *nlh, void *data)
{
	struct addr_match *m = data;
	if (nlh->nlmsg_type != RTM_NEWADDR || mnl_nlmsg_get_payload_len(nlh) < sizeof(struct ifaddrmsg))
		return MNL_CB_OK;
	const struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	if (ifa->ifa_index == m->ifindex && ifa->ifa_family == m->want->family &&
	    ifa->ifa_prefixlen == m->want->prefix)
		mnl_attr_parse(nlh, sizeof(*ifa), addr_attr, m);
	return MNL_CB_OK;
}

int host_link_has_addr(struct host_link *h, unsigned ifindex, const struct host_addr *a,
		       struct vmm_err *err)
{
	struct nlmsghdr *nlh = host_link_msg(h, RTM_GETADDR, NLM_F_DUMP);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (unsigned char)a->family;
	struct addr_match m = { .ifindex = ifindex, .want = a };
	int rc = host_link_talk(h, addr_reply, &m);
	if (rc)
		return vmm_err_sys(err, -rc, "cannot list the addresses of interface %u", ifindex);
	return m.found;
}

/* ---- a set-up and its undo ------------------------------------------------- */

int host_link_check_bridge(struct host_link *h, const struct host_link_setup *s, struct vmm_err *err)
{
	if (!s->bridge[0])
		return 0;
	struct host_link_info br;
	int rc = host_link_get(h, s->bridge, &br, err);
	if (rc == -ENODEV)
		return vmm_err_set(err, ENODEV, "there is no interface %s (make the bridge first: ip link add %s type bridge)",
				   s->bridge, s->bridge);
	if (rc)
		return rc;
	if (strcmp(br.kind, "bridge") != 0)
		return vmm_err_set(err, EINVAL, "%s is not a bridge%s%s%s", s->bridge,
				   br.kind[0] ? " (it is a " : "", br.kind, br.kind[0] ? ")" : "");
	return 0;
}

int host_link_apply(struct host_link *h, const char *ifname, const struct host_link_setup *s,
		    struct host_link_undo *u, struct vmm_err *err)
{
	memset(u, 0, sizeof(*u));
	struct host_link_info info, br = { 0 };
	int rc = host_link_get(h, ifname, &info, err);
	if (rc == 0 && s->bridge[0]) {
		rc = host_link_check_bridge(h, s, err);
		if (rc == 0)
			rc = host_link_get(h, s->bridge, &br, err);
		if (rc == 0 && info.master && info.master != br.ifindex) {
			char other[IFNAMSIZ];
			if (!if_indextoname(info.master, other))
				snprintf(other, sizeof(other), "#%u", info.master);
			rc = vmm_err_set(err, EBUSY, "already a port of %s: it cannot join %s too", other,
					 s->bridge);
		}
	}
	if (rc)
		return rc;
	u->ifindex = info.ifindex;
	snprintf(u->ifname, sizeof(u->ifname), "%s", ifname);
	if (s->bridge[0] && info.master != br.ifindex) {
		rc = host_link_set_master(h, info.ifindex, br.ifindex, err);
		if (rc == 0)
			u->master_set = true;
		else
			rc = vmm_err_set(err, -rc, "cannot join bridge %s: %s", s->bridge, strerror(-rc));
	}
	if (rc == 0 && s->has_addr) {
		rc = host_link_add_addr(h, info.ifindex, &s->addr, err);
		if (rc == -EEXIST) {
			rc = 0;   /* the operator's: it stays at exit */
		} else if (rc == 0) {
			u->addr_added = true;
			u->addr = s->addr;
		}
	}
	if (rc == 0 && !(info.flags & IFF_UP)) {
		rc = host_link_set_up(h, info.ifindex, true, err);
		if (rc == 0)
			u->brought_up = true;
		else
			rc = vmm_err_set(err, -rc, "cannot bring it up: %s", strerror(-rc));
	}
	if (rc)
		host_link_revert(h, u, NULL);
	return rc;
}

int host_link_revert(struct host_link *h, struct host_link_undo *u, struct vmm_err *err)
{
	if (!u->ifindex)
		return 0;
	/* Still the interface the steps were done to? One deleted under us
	 * (and perhaps made again by its operator) has nothing of ours. */
	struct host_link_info info;
	struct vmm_err e = { 0 };
	int rc = host_link_get(h, u->ifname, &info, &e);
	if (rc == -ENODEV || (rc == 0 && info.ifindex != u->ifindex)) {
		memset(u, 0, sizeof(*u));
		return 0;
	}
	int first = rc ? vmm_err_set(err, e.code, "%s", e.msg) : 0;
	char addr[INET6_ADDRSTRLEN + 8];
	host_addr_format(&u->addr, addr, sizeof(addr));
	/* Down last: it would take an IPv6 address away by itself. One
	 * already gone (EADDRNOTAVAIL) is no failure. */
	rc = u->addr_added ? host_link_del_addr(h, u->ifindex, &u->addr, &e) : 0;
	if (rc < 0 && rc != -EADDRNOTAVAIL && !first)
		first = vmm_err_set(err, -rc, "keeps address %s: %s", addr, strerror(-rc));
	if (u->master_set && (rc = host_link_set_master(h, u->ifindex, 0, &e)) < 0 && !first)
		first = vmm_err_set(err, -rc, "stays a port of its bridge: %s", strerror(-rc));
	if (u->brought_up && (rc = host_link_set_up(h, u->ifindex, false, &e)) < 0 && !first)
		first = vmm_err_set(err, -rc, "stays up: %s", strerror(-rc));
	memset(u, 0, sizeof(*u));
	return first;
}
