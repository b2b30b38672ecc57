/* SPDX-License-Identifier: Apache-2.0 */
/* What the AF_XDP backend needs to know about (and change on) its interface:
 * index, state, MTU, queue counts and driver (ethtool channels and driver
 * info), and the RSS indirection table that decides which receive queue a
 * flow lands on. All through ioctls on a socket of the caller's network
 * namespace (sysfs may show another namespace's devices). */
#include "net/xdp.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int iface_ioctl(int fd, const char *name, unsigned long req, struct ifreq *ifr)
{
	snprintf(ifr->ifr_name, IFNAMSIZ, "%s", name);
	return ioctl(fd, req, ifr) < 0 ? -errno : 0;
}

static int iface_ethtool(int fd, const char *name, void *cmd)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_data = cmd;
	return iface_ioctl(fd, name, SIOCETHTOOL, &ifr);
}

int xdp_iface_query(const char *name, struct xdp_iface *info, struct vmm_err *err)
{
	memset(info, 0, sizeof(*info));
	info->ifindex = if_nametoindex(name);
	if (!info->ifindex)
		return vmm_err_set(err, ENODEV, "xdp backend: no interface '%s'", name);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vmm_err_sys(err, errno, "xdp backend: a socket to ask about '%s'", name);
	int rc = net_iface_check_bindable(fd, "xdp backend", name, err);
	if (rc) {
		close(fd);
		return rc;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (iface_ioctl(fd, name, SIOCGIFFLAGS, &ifr) == 0)
		info->up = ifr.ifr_flags & IFF_UP;
	memset(&ifr, 0, sizeof(ifr));
	if (iface_ioctl(fd, name, SIOCGIFMTU, &ifr) == 0)
		info->mtu = (unsigned)ifr.ifr_mtu;
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	if (iface_ethtool(fd, name, &ch) == 0) {
		info->rx_queues = ch.rx_count + ch.combined_count;
		info->tx_queues = ch.tx_count + ch.combined_count;
	}
	struct ethtool_drvinfo drv = { .cmd = ETHTOOL_GDRVINFO };
	if (iface_ethtool(fd, name, &drv) == 0)
		snprintf(info->driver, sizeof(info->driver), "%s", drv.driver);
	else
		snprintf(info->driver, sizeof(info->driver), "unknown");
	close(fd);
	return 0;
}

void xdp_rss_read(int fd, const char *name, struct xdp_rss *r)
{
	memset(r, 0, sizeof(*r));
	if (fd < 0)
		return;
	struct ethtool_rxfh_indir probe = { .cmd = ETHTOOL_GRXFHINDIR, .size = 0 };
	if (iface_ethtool(fd, name, &probe) == 0 && probe.size > 0 && probe.size <= 4096) {
		struct ethtool_rxfh_indir *t = calloc(1, sizeof(*t) + probe.size * sizeof(uint32_t));
		if (t) {
			t->cmd = ETHTOOL_GRXFHINDIR;
			t->size = probe.size;
			if (iface_ethtool(fd, name, t) == 0) {
				r->orig = malloc(probe.size * sizeof(uint32_t));
				if (r->orig) {
					memcpy(r->orig, t->ring_index, probe.size * sizeof(uint32_t));
					r->size = probe.size;
					r->supported = true;
				}
			}
			free(t);
		}
	}
}

static int xdp_rss_write(int fd, const char *name, uint32_t size, const uint32_t *table)
{
	if (fd < 0)
		return -EBADF;
	struct ethtool_rxfh_indir *t = calloc(1, sizeof(*t) + size * sizeof(uint32_t));
	int rc = -ENOMEM;
	if (t) {
		t->cmd = ETHTOOL_SRXFHINDIR;
		t->size = size;
		memcpy(t->ring_index, table, size * sizeof(uint32_t));
		rc = iface_ethtool(fd, name, t);
		free(t);
	}
	return rc;
}

int xdp_rss_spread(int fd, const char *name, struct xdp_rss *r, const unsigned *queues, unsigned n)
{
	if (!r->supported || n == 0)
		return -EOPNOTSUPP;
	uint32_t *table = malloc(r->size * sizeof(uint32_t));
	if (!table)
		return -ENOMEM;
	for (uint32_t i = 0; i < r->size; i++)
		table[i] = queues[i % n];
	int rc = xdp_rss_write(fd, name, r->size, table);
	free(table);
	if (rc == 0)
		r->changed = true;
	return rc;
}

void xdp_rss_restore(int fd, const char *name, struct xdp_rss *r)
{
	if (r->supported && r->changed)
		xdp_rss_write(fd, name, r->size, r->orig);
	free(r->orig);
	memset(r, 0, sizeof(*r));
}
