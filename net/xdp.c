/* SPDX-License-Identifier: Apache-2.0 */
/* The AF_XDP backend: guest RAM is the UMEM (docs/xdp.md).
 *
 * Created: the interface is checked (there, up, MTU, enough queues), the
 * chunk geometry chosen, libxdp's XSK program attached, and every queue's
 * socket made and bound once as a probe, so that a setup the kernel refuses
 * (capabilities, pinning limits, zero-copy, queues) is one line at start,
 * not a device that fails at DRIVER_OK. The workers' sockets come and go
 * with the workers (xdp_queue.c); queues not in use keep a drain socket here,
 * with a UMEM of its own and no buffers, so their frames are dropped and
 * counted rather than handed to the host stack. */
#include "net/xdp.h"

#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define ETH_PAD       26u   /* Ethernet header, two VLAN tags, FCS: the kernel's zero-copy frame need */
#define ETH_VLAN_HDR  18u   /* Ethernet header and one VLAN tag */
#define DRAIN_UMEM    4096u

static struct xdp_backend *xb_of(struct net_backend *b)
{
	return (struct xdp_backend *)b;
}

static void xdp_log(const struct xdp_backend *xb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void xdp_log(const struct xdp_backend *xb, const char *fmt, ...)
{
	if (!xb->machine)
		return;
	char msg[400], line[440];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "net%u: xdp %s: %s", xb->device_index, xb->base.ifname, msg);
	machine_log(xb->machine, line);
}

uint64_t xdp_backend_host_tail_bytes(const struct net_backend_config *cfg)
{
	return (uint64_t)cfg->queues * XDP_TAIL_PER_QUEUE;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

/* The chunk geometry for the frames this device must take: the guest's
 * largest (MTU + Ethernet + one VLAN tag) in copy mode; in zero-copy mode
 * what the kernel insists a driver's buffer holds (the interface's MTU +
 * 26, rounded up to 128), larger than Linux guests' 1536-byte buffers at MTU
 * 1500, so their frames are bounced. */
static int xdp_choose_geometry(struct xdp_backend *xb, struct vmm_err *err)
{
	uint32_t frame = xb->zero_copy ? (xb->iface.mtu + ETH_PAD + 127) / 128 * 128 : xb->mtu + ETH_VLAN_HDR;
	/* Copy mode: page-sized chunks (the frame still lands right after the
	 * header; the kernel writes nothing of the chunk before it). Every bind
	 * sets up a buffer per chunk of the UMEM, so half as many chunks halve
	 * what a (re)activation costs (~15 -> ~8 ms of CPU for 256 MiB). Zero
	 * copy keeps the smallest: its chunks may not cross a page, so a 4 KiB
	 * one would bounce every guest buffer that does not start one. */
	uint32_t min_chunk = xb->zero_copy ? XDP_CHUNK_MIN : XDP_CHUNK_MAX;
	if (xdp_geometry_for(frame, min_chunk, &xb->geo) == 0)
		return 0;
	return vmm_err_set(err, EINVAL,
			   "xdp backend: %u-byte frames do not fit an AF_XDP chunk (at most %u bytes after the kernel's %u of headroom): lower the %s to %u at most",
			   frame, XDP_CHUNK_MAX - XDP_PACKET_HEADROOM, XDP_PACKET_HEADROOM,
			   xb->zero_copy ? "interface's MTU" : "guest's MTU (--net mtu=)",
			   XDP_CHUNK_MAX - XDP_PACKET_HEADROOM - (xb->zero_copy ? ETH_PAD : ETH_VLAN_HDR));
}

static int xdp_check_interface(struct xdp_backend *xb, struct vmm_err *err)
{
	const char *name = xb->base.ifname;
	int rc = xdp_iface_query(name, &xb->iface, err);
	if (rc)
		return rc;
	const struct xdp_iface *i = &xb->iface;
	if (!i->up)
		return vmm_err_set(err, ENETDOWN, "xdp backend: interface '%s' is down (ip link set %s up)", name, name);
	if (i->mtu < xb->mtu)
		return vmm_err_set(err, EINVAL,
				   "xdp backend: interface '%s' has MTU %u, smaller than the guest's %u (lower --net mtu=)",
				   name, i->mtu, xb->mtu);
	unsigned n = xb->base.nr_queues;
	if ((i->rx_queues && i->rx_queues < n) || (i->tx_queues && i->tx_queues < n))
		return vmm_err_set(err, EINVAL,
				   "xdp backend: interface '%s' has %u receive and %u transmit queues, fewer than queues=%u (a veth gets them at creation: ip link add NAME numrxqueues %u numtxqueues %u type veth peer name PEER numrxqueues %u numtxqueues %u)",
				   name, i->rx_queues, i->tx_queues, n, n, n, n, n);
	return 0;
}

static int xdp_rewrite_zero_copy_error(struct xdp_backend *xb, int rc, struct vmm_err *err)
{
	if (rc == -EOPNOTSUPP && xb->zero_copy)
		return vmm_err_set(err, EOPNOTSUPP,
				   "xdp backend: interface '%s' (driver %s) has no AF_XDP zero-copy support: use xdp-zero-copy=off",
				   xb->base.ifname, xb->iface.driver);
	return rc;
}

/* Bind a socket to every queue once, sharing the UMEM, and close them
 * again: what the workers will do, checked now. Registering the UMEM here
 * also faults in and pins guest RAM once (it is resident from now on). */
static int xdp_probe(struct xdp_backend *xb, struct vmm_err *err)
{
	struct xsk s[NET_BACKEND_MAX_QUEUES];
	unsigned made = 0;
	int rc = 0;
	struct xsk_umem_spec umem = { .area = xb->umem_area, .len = xb->umem_len,
				      .chunk_size = xb->geo.chunk_size, .headroom = xb->geo.headroom };
	uint16_t flags = (xb->zero_copy ? XDP_ZEROCOPY : XDP_COPY) | XDP_USE_NEED_WAKEUP;
	for (unsigned q = 0; q < xb->base.nr_queues && rc == 0; q++) {
		rc = xsk_create(&s[q], q == 0 ? &umem : NULL, &xb->sizes, err);
		if (rc)
			break;
		made++;
		rc = xsk_bind(&s[q], xb->iface.ifindex, q, q ? s[0].fd : -1, flags, err);
	}
	rc = xdp_rewrite_zero_copy_error(xb, rc, err);
	while (made)
		xsk_close(&s[--made]);
	return rc;
}

/* relink: the interface came back (on the link thread): the program loaded
 * at set-up is attached again rather than loaded anew, and stays loaded if
 * that fails, for the next time. */
static int xdp_open(struct xdp_backend *xb, bool relink, struct vmm_err *err)
{
	int rc = xdp_check_interface(xb, err);
	if (rc == 0)
		rc = xdp_choose_geometry(xb, err);
	if (rc)
		return rc;
	xdp_rss_read(xb->ethtool_fd, xb->base.ifname, &xb->rss);
	unsigned entries = xb->iface.rx_queues > xb->base.nr_queues ? xb->iface.rx_queues : xb->base.nr_queues;
	if (relink)
		rc = xdp_prog_relink(&xb->prog, xb->iface.ifindex, xb->base.ifname, xb->zero_copy, err);
	else
		rc = xdp_prog_attach(&xb->prog, xb->iface.ifindex, xb->base.ifname, entries, xb->zero_copy, err);
	if (rc == 0)
		rc = xdp_probe(xb, err);
	if (rc) {
		if (relink)
			xdp_prog_unlink(&xb->prog);
		else
			xdp_prog_detach(&xb->prog);
		xdp_rss_restore(xb->ethtool_fd, xb->base.ifname, &xb->rss);
		return rc;
	}
	if (xb->iface.rx_queues > xb->base.nr_queues && !xb->rss.supported)
		xdp_log(xb, "the interface has %u receive queues and the device uses %u: frames it puts on the others go to the host stack",
			xb->iface.rx_queues, xb->base.nr_queues);
	return 0;
}

/* ---- sharing the UMEM ------------------------------------------------------- */

int xdp_backend_umem_fd(struct xdp_backend *xb, unsigned except_q)
{
	for (unsigned q = 0; q < xb->base.nr_queues; q++)
		if (q != except_q && xb->q[q].sock.fd >= 0)
			return xb->q[q].sock.fd;
	return -1;
}

/* ---- drain sockets ---------------------------------------------------------- */

static int xdp_drain_socket(struct xdp_backend *xb, unsigned q, struct xsk *s, struct vmm_err *err)
{
	static const struct xsk_sizes sizes = { .fill = 2, .comp = 2, .rx = 2 };
	struct xsk_umem_spec umem = { .area = xb->drain_umem, .len = DRAIN_UMEM,
				      .chunk_size = XDP_CHUNK_MIN, .headroom = 0 };
	int rc = xsk_create(s, &umem, &sizes, err);
	if (rc == 0)
		rc = xsk_bind(s, xb->iface.ifindex, q, -1, XDP_COPY, err);
	if (rc)
		xsk_close(s);
	return rc;
}

void xdp_backend_wait_queue_free(struct xdp_backend *xb, unsigned q)
{
	struct xsk s;
	struct vmm_err err = { 0 };
	if (xdp_drain_socket(xb, q, &s, &err) == 0)
		xsk_close(&s);
	else
		xdp_log(xb, "queue %u: %s", q, err.msg);
}

static void xdp_drain_close(struct xdp_backend *xb, unsigned q)
{
	struct xsk *d = &xb->drain[q];
	if (d->fd < 0)
		return;
	uint64_t drops = xsk_drops(d->fd, NULL), seen = xb->drain_seen[q];
	if (drops > seen)
		__atomic_add_fetch(&xb->q[q].drops_carry, drops - seen, __ATOMIC_RELAXED);
	xsk_close(d);
}

/* The queue is not in use: a socket that takes its frames and has no
 * buffers for them, so the kernel drops them and counts them. */
static int xdp_drain_open(struct xdp_backend *xb, unsigned q, struct vmm_err *err)
{
	if (xb->drain[q].fd >= 0)
		return 0;
	int rc = xdp_drain_socket(xb, q, &xb->drain[q], err);
	if (rc == 0)
		rc = xdp_prog_set_socket(&xb->prog, q, xb->drain[q].fd, err);
	if (rc)
		xsk_close(&xb->drain[q]);
	xb->drain_seen[q] = 0;
	return rc;
}

/* ---- steering ------------------------------------------------------------ */

/* A frame can only reach the socket of the queue the interface put it on.
 * Where the driver has an RSS indirection table, spread it over the active
 * queues only; where not (veth), frames for the others are dropped by their
 * drain sockets, and counted. */
static void xdp_steer(struct xdp_backend *xb)
{
	unsigned active[NET_BACKEND_MAX_QUEUES], n = 0;
	for (unsigned q = 0; q < xb->base.nr_queues; q++)
		if (xb->active[q])
			active[n++] = q;
	if (n == 0 || xb->base.nr_queues < 2)
		return;
	if (xb->rss.supported) {
		if (xdp_rss_spread(xb->ethtool_fd, xb->base.ifname, &xb->rss, active, n) < 0 && !xb->steer_logged) {
			xb->steer_logged = true;
			xdp_log(xb, "cannot set the RSS indirection table: frames for unused queues are dropped (backend_drops)");
		}
		return;
	}
	/* Said once. 2..N-1 pairs can only be the driver's VQ_PAIRS_SET. One
	 * pair is also DRIVER_OK's default until the driver sets more: said
	 * only once a worker has run. */
	bool chosen = n > 1 || __atomic_load_n(&xb->ever_started, __ATOMIC_ACQUIRE);
	if (n < xb->base.nr_queues && !xb->steer_logged && chosen) {
		xb->steer_logged = true;
		xdp_log(xb, "the driver (%s) cannot steer receive queues (no RSS indirection table): with %u of %u queue pairs in use, frames the interface puts on the others are dropped (counted in backend_drops)",
			xb->iface.driver, n, xb->base.nr_queues);
	}
}

/* With workers stopped (restart_to_steer): the queue's worker socket is
 * closed, so its drain socket can take the queue, and vice versa. */
static int xdp_set_queue_active(struct net_backend *b, unsigned q, bool active, struct vmm_err *err)
{
	struct xdp_backend *xb = xb_of(b);
	xb->active[q] = active;
	int rc = 0;
	if (active)
		xdp_drain_close(xb, q);
	else
		rc = xdp_drain_open(xb, q, err);
	/* The device steers every queue, in order: once the last has its
	 * state, the set is whole. */
	if (q == b->nr_queues - 1)
		xdp_steer(xb);
	return rc;
}

/* ---- the ops ------------------------------------------------------------------ */

static int xdp_set_offload(struct net_backend *b, unsigned offloads, struct vmm_err *err)
{
	/* Nothing is offered that would need any (csum_offload false). */
	if (offloads)
		return vmm_err_set(err, EINVAL,
				   "xdp backend: AF_XDP carries no checksum or GSO metadata: no offloads (asked for 0x%x)",
				   offloads);
	b->offloads = 0;
	return 0;
}

static bool xdp_present(struct net_backend *b)
{
	return net_iface_is_up(b->ifname);
}

static void xdp_close_all(struct xdp_backend *xb)
{
	for (unsigned q = 0; q < xb->base.nr_queues; q++)
		xdp_drain_close(xb, q);
	xdp_prog_detach(&xb->prog);
	xdp_rss_restore(xb->ethtool_fd, xb->base.ifname, &xb->rss);
}

/* Workers are stopped. The interface is back (perhaps a new one of the same
 * name): the program goes on it again; the caller steers afterwards, which
 * makes the drain sockets again. */
static int xdp_reopen(struct net_backend *b, struct vmm_err *err)
{
	struct xdp_backend *xb = xb_of(b);
	for (unsigned q = 0; q < xb->base.nr_queues; q++)
		xdp_drain_close(xb, q);
	xdp_prog_unlink(&xb->prog);
	xdp_rss_restore(xb->ethtool_fd, xb->base.ifname, &xb->rss);
	for (unsigned q = 0; q < b->nr_queues; q++)
		xdp_queue_io_setup(xb, q);
	return xdp_open(xb, true, err);
}

static unsigned long long xdp_take_drops(struct net_backend *b, unsigned q)
{
	struct xdp_backend *xb = xb_of(b);
	struct xdp_queue *xq = &xb->q[q];
	uint64_t n = __atomic_exchange_n(&xq->drops_carry, 0, __ATOMIC_RELAXED);
	/* The worker's socket. It is closed only with the device lock held,
	 * as this runs, or when a worker dies on its own (then at worst a
	 * count is lost). */
	int fd = __atomic_load_n(&xq->stats_fd, __ATOMIC_ACQUIRE);
	if (fd >= 0) {
		uint64_t d = xsk_drops(fd, NULL), seen = __atomic_load_n(&xq->drops_seen, __ATOMIC_RELAXED);
		if (d > seen) {
			n += d - seen;
			__atomic_store_n(&xq->drops_seen, d, __ATOMIC_RELAXED);
		}
	}
	/* The drain socket: made and closed with the device lock held. */
	if (xb->drain[q].fd >= 0) {
		uint64_t d = xsk_drops(xb->drain[q].fd, NULL);
		if (d > xb->drain_seen[q]) {
			n += d - xb->drain_seen[q];
			xb->drain_seen[q] = d;
		}
	}
	return n;
}

static void xdp_destroy(struct net_backend *b)
{
	struct xdp_backend *xb = xb_of(b);
	xdp_close_all(xb);
	for (unsigned q = 0; q < b->nr_queues; q++)
		xdp_queue_free(&xb->q[q]);
	if (xb->drain_umem)
		munmap(xb->drain_umem, DRAIN_UMEM);
	if (xb->ethtool_fd >= 0)
		close(xb->ethtool_fd);
	pthread_mutex_destroy(&xb->lock);
	log_limit_destroy(&xb->start_pace);
	free(xb);
}

static const struct net_backend_ops xdp_backend_ops = {
	.kind = "xdp",
	.set_offload = xdp_set_offload,
	.set_queue_active = xdp_set_queue_active,
	.present = xdp_present,
	.reopen = xdp_reopen,
	.queue_step = xdp_queue_step,
	.take_drops = xdp_take_drops,
	.destroy = xdp_destroy,
	/* A queue's frames go to its worker's socket or to its drain socket,
	 * one at a time: swapped with the workers stopped. */
	.restart_to_steer = true,
};

static void xdp_describe(struct xdp_backend *xb)
{
	snprintf(xb->base.detail, sizeof(xb->base.detail),
		 "%s XDP, %s mode; UMEM: guest RAM, %llu MiB, pinned; frames up to %u bytes",
		 xb->prog.mode == XDP_FLAGS_DRV_MODE ? "native" : "generic",
		 xb->zero_copy ? "zero-copy" : "copy", (unsigned long long)(xb->umem_len >> 20),
		 xb->geo.frame_len);
}

int xdp_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
		       struct vmm_err *err)
{
	*out = NULL;
	if (!cfg->ifname[0])
		return vmm_err_set(err, EINVAL, "xdp backend: the host interface is required (xdp=IFACE)");
	if (!cfg->mem || !cfg->mem->mapping)
		return vmm_err_set(err, EINVAL, "xdp backend: needs the guest's memory for its UMEM");
	if (cfg->host_tail_size < xdp_backend_host_tail_bytes(cfg) || !cfg->host_tail)
		return vmm_err_set(err, EINVAL, "xdp backend: needs %llu bytes of host memory after guest RAM, has %llu",
				   (unsigned long long)xdp_backend_host_tail_bytes(cfg),
				   (unsigned long long)cfg->host_tail_size);
	struct xdp_backend *xb = calloc(1, sizeof(*xb));
	if (!xb)
		return vmm_err_set(err, ENOMEM, "out of memory for an xdp backend");
	pthread_mutex_init(&xb->lock, NULL);
	log_limit_init(&xb->start_pace, XDP_START_BURST(cfg->queues), XDP_START_GAP_NS);
	xb->ethtool_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);   /* -1: no RSS steering */
	xb->prog = (struct xdp_prog){ .prog_fd = -1, .map_fd = -1, .link_fd = -1 };
	xb->base.ops = &xdp_backend_ops;
	xb->base.nr_queues = cfg->queues;
	snprintf(xb->base.ifname, sizeof(xb->base.ifname), "%s", cfg->ifname);
	xb->machine = cfg->machine;
	xb->device_index = cfg->index;
	xb->mtu = cfg->mtu;
	xb->zero_copy = cfg->xdp_zero_copy;
	xb->umem_area = cfg->mem->mapping;
	xb->umem_len = cfg->mem->mapping_size;
	xb->tail = cfg->host_tail;
	unsigned ring = cfg->queue_size ? cfg->queue_size : 256;
	xb->sizes = (struct xsk_sizes){ .fill = pow2_at_least(ring + XDP_RX_BOUNCE), .tx = pow2_at_least(ring) };
	xb->sizes.rx = xb->sizes.fill;
	xb->sizes.comp = xb->sizes.tx;
	for (unsigned q = 0; q < NET_BACKEND_MAX_QUEUES; q++) {
		xb->drain[q].fd = -1;
		xb->q[q].sock.fd = -1;
	}
	int rc = 0;
	for (unsigned q = 0; q < cfg->queues && rc == 0; q++)
		rc = xdp_queue_init(xb, q, err);
	xb->drain_umem = mmap(NULL, DRAIN_UMEM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rc == 0 && xb->drain_umem == MAP_FAILED) {
		xb->drain_umem = NULL;
		rc = vmm_err_sys(err, errno, "xdp backend: memory for the drain sockets");
	}
	if (rc == 0)
		rc = xdp_open(xb, false, err);
	if (rc) {
		xdp_destroy(&xb->base);
		return rc;
	}
	xdp_describe(xb);
	*out = &xb->base;
	return 0;
}
