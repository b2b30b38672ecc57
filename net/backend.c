/* SPDX-License-Identifier: Apache-2.0 */
/* Choosing and dropping a backend. */
#include "net/backend.h"

#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int net_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err)
{
	*out = NULL;
	if (cfg->queues == 0 || cfg->queues > NET_BACKEND_MAX_QUEUES)
		return vmm_err_set(err, EINVAL, "%u queues: a backend has 1 to %d", cfg->queues,
				   NET_BACKEND_MAX_QUEUES);
	switch (cfg->kind) {
	case NET_BACKEND_TAP: return tap_backend_create(cfg, out, err);
	case NET_BACKEND_PACKET: return packet_backend_create(cfg, out, err);
	case NET_BACKEND_XDP: return xdp_backend_create(cfg, out, err);
	}
	return vmm_err_set(err, EINVAL, "unknown network backend %d", (int)cfg->kind);
}

void net_backend_destroy(struct net_backend *b)
{
	if (b)
		b->ops->destroy(b);
}

uint64_t net_backend_host_tail_bytes(const struct net_backend_config *cfg)
{
	return cfg->kind == NET_BACKEND_XDP ? xdp_backend_host_tail_bytes(cfg) : 0;
}

unsigned long long net_backend_take_drops(struct net_backend *b, unsigned q)
{
	if (!b->ops->take_drops || q >= b->nr_queues)
		return 0;
	return b->ops->take_drops(b, q);
}

bool net_iface_is_up(const char *ifname)
{
	if (!if_nametoindex(ifname))
		return false;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", ifname);
	bool up = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP);
	close(fd);
	return up;
}

int net_iface_check_bindable(int fd, const char *what, const char *name, struct vmm_err *err)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_LOOPBACK))
		return vmm_err_set(err, EINVAL,
				   "%s: '%s' is a loopback interface: a guest bound to it would see and send the host's own loopback traffic (use a veth, a bridge port or a NIC)",
				   what, name);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0 && ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
		return vmm_err_set(err, EINVAL,
				   "%s: '%s' does not carry Ethernet frames (link type %u), and the guest's virtio-net sends and receives Ethernet (use a veth, a bridge port or a NIC)",
				   what, name, (unsigned)ifr.ifr_hwaddr.sa_family);
	return 0;
}
