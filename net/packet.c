/* SPDX-License-Identifier: Apache-2.0 */
#include "net/packet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/backend.h"

#ifndef PACKET_VNET_HDR_SZ
#define PACKET_VNET_HDR_SZ 24   /* Linux 6.2+: vnet header size (we need 12) */
#endif

/* A block is handed over when full or RING_RETIRE_MS after its first
 * frame, so a trickle uses one block per millisecond: many smaller blocks
 * ride out a guest that stops taking frames better than a few big ones. */
#define RING_BLOCK_SIZE   (128 * 1024)
#define RING_BLOCKS       16
#define RING_FRAME_SIZE   2048
#define RING_RETIRE_MS    1      /* a partly filled block is handed over after this */
#define VNET_HDR_LEN      12     /* struct virtio_net_hdr_v1 */

/* ---- ring ------------------------------------------------------------- */

static struct tpacket_block_desc *ring_block(const struct pkt_ring *r, unsigned b)
{
	return (struct tpacket_block_desc *)(r->map + (size_t)b * r->block_size);
}

bool pkt_ring_ready(const struct pkt_ring *r)
{
	const struct tpacket_block_desc *bd = ring_block(r, r->block);
	return __atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER;
}

static void ring_release_block(struct pkt_ring *r)
{
	struct tpacket_block_desc *bd = ring_block(r, r->block);
	__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
	r->block = (r->block + 1) % r->nr_blocks;
	r->frames_left = 0;
	r->frame = NULL;
}

/* One frame. The kernel reserves PACKET_VNET_HDR_SZ (12) bytes before the
 * MAC header but the ring path (tpacket_rcv) writes only the legacy
 * 10-byte struct virtio_net_hdr, right before the MAC header; readv gets
 * all 12. Move those 10 bytes down to make a virtio_net_hdr_v1 in place
 * (we own the frame until the block goes back). */
static uint8_t *ring_frame_header(struct tpacket3_hdr *h)
{
	uint8_t *mac = (uint8_t *)h + h->tp_mac;
	uint8_t *hdr = mac - VNET_HDR_LEN;
	memmove(hdr, mac - sizeof(struct virtio_net_hdr), sizeof(struct virtio_net_hdr));
	return hdr;
}

static int ring_deliver_frame(struct pkt_ring *r, struct dp_queue *dp, struct tpacket3_hdr *h)
{
	if (h->tp_mac < sizeof(struct tpacket3_hdr) + VNET_HDR_LEN || h->tp_snaplen < h->tp_len) {
		NET_STAT_ADD(dp->qp, rx_dropped, 1);   /* truncated: larger than the ring's frames */
		return 1;
	}
	/* A frame the guest had no buffers for is delivered again later: its
	 * header must be moved once only. */
	uint8_t *hdr = r->header_moved ? (uint8_t *)h + h->tp_mac - VNET_HDR_LEN : ring_frame_header(h);
	r->header_moved = true;
	struct virtio_net_hdr_v1 *vh = (struct virtio_net_hdr_v1 *)hdr;
	vh->num_buffers = 0;
	/* A GSO frame (after GRO, or a host TCP segment passed on by a veth
	 * or bridge) goes as it is to a guest with TSO, else cut in segments
	 * (each with full checksums); the data path finishes a NEEDS_CSUM
	 * checksum for a guest without GUEST_CSUM. */
	return dp_rx_deliver_frame(dp, hdr, VNET_HDR_LEN + h->tp_snaplen, &r->gso_done);
}

int pkt_ring_consume(struct pkt_ring *r, struct dp_queue *dp)
{
	for (;;) {
		if (!r->frame) {
			if (!pkt_ring_ready(r))
				return 0;
			struct tpacket_block_desc *bd = ring_block(r, r->block);
			r->frames_left = bd->hdr.bh1.num_pkts;
			r->frame = (uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt;
			if (r->frames_left == 0) {
				ring_release_block(r);
				continue;
			}
		}
		struct tpacket3_hdr *h = (struct tpacket3_hdr *)r->frame;
		int rc = ring_deliver_frame(r, dp, h);
		if (rc <= 0)
			return rc < 0 ? -1 : 1;   /* no guest buffers: keep this frame for later */
		r->header_moved = false;
		r->frames_left--;
		if (r->frames_left == 0)
			ring_release_block(r);
		else
			r->frame += h->tp_next_offset;
	}
}

/* As a queue's rx(): the engine calls it when the socket may have a block. */
static int pkt_ring_rx(struct net_queue_io *io, struct dp_queue *dp)
{
	return pkt_ring_consume(io->priv, dp);
}

/* ---- sockets ----------------------------------------------------------- */

struct packet_backend {
	struct net_backend base;
	unsigned mtu;               /* the guest's MTU: the interface must carry it */
	unsigned fanout;            /* PACKET_FANOUT_* type */
	int fanout_id;              /* the group the kernel gave us, -1 before the first join */
	unsigned ifindex;
	bool rx_ring;               /* TPACKET_V3 ring (else readv per frame) */
	bool qdisc_bypass;
	struct pkt_ring *ring[NET_BACKEND_MAX_QUEUES];
};

static struct packet_backend *pb_of(struct net_backend *b)
{
	return (struct packet_backend *)b;
}

static int setopt(int fd, int opt, int value)
{
	return setsockopt(fd, SOL_PACKET, opt, &value, sizeof(value));
}

static int packet_check_interface(struct packet_backend *pb, int fd, struct vmm_err *err)
{
	const char *name = pb->base.ifname;
	pb->ifindex = if_nametoindex(name);
	if (pb->ifindex == 0)
		return vmm_err_set(err, ENODEV, "packet backend: no interface '%s'", name);
	int rc = net_iface_check_bindable(fd, "packet backend", name, err);
	if (rc)
		return rc;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP))
		return vmm_err_set(err, ENETDOWN, "packet backend: interface '%s' is down (ip link set %s up)",
				   name, name);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && (unsigned)ifr.ifr_mtu < pb->mtu)
		return vmm_err_set(err, EINVAL,
				   "packet backend: interface '%s' has MTU %d, smaller than the guest's %u (lower --net mtu=)",
				   name, ifr.ifr_mtu, pb->mtu);
	return 0;
}

static int packet_setup_ring(struct packet_backend *pb, unsigned q, struct vmm_err *err)
{
	int fd = pb->base.io[q].fd;
	struct tpacket_req3 req = {
		.tp_block_size = RING_BLOCK_SIZE, .tp_block_nr = RING_BLOCKS,
		.tp_frame_size = RING_FRAME_SIZE,
		.tp_frame_nr = RING_BLOCK_SIZE / RING_FRAME_SIZE * RING_BLOCKS,
		.tp_retire_blk_tov = RING_RETIRE_MS,
	};
	if (setopt(fd, PACKET_VERSION, TPACKET_V3) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		return vmm_err_sys(err, errno, "packet backend: TPACKET_V3 receive ring");
	struct pkt_ring *r = calloc(1, sizeof(*r));
	if (!r)
		return vmm_err_set(err, ENOMEM, "out of memory for a packet ring");
	r->block_size = RING_BLOCK_SIZE;
	r->nr_blocks = RING_BLOCKS;
	r->map_len = (size_t)RING_BLOCK_SIZE * RING_BLOCKS;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->map == MAP_FAILED) {
		int e = errno;
		free(r);
		return vmm_err_sys(err, e, "packet backend: mmap of the receive ring");
	}
	pb->ring[q] = r;
	/* The ring is read in place; the socket is only waited on. A block is
	 * handed over by a timer too (RING_RETIRE_MS), and readability can be
	 * signalled before the block is marked ours: look again a few times,
	 * and never wait longer than 10 ms for a wake-up. */
	struct net_queue_io *io = &pb->base.io[q];
	io->rx = pkt_ring_rx;
	io->priv = r;
	io->rx_rechecks = 4;
	io->rx_recheck_us = RING_RETIRE_MS * 1000;
	io->rx_poll_limit_us = 10000;
	return 0;
}

/* One fanout group per device. The kernel picks a group id no one else
 * uses (PACKET_FANOUT_FLAG_UNIQUEID) for the first socket to join; the
 * others join that id. An id made up from the pid would put two devices of
 * one process (two VMs, or two --net on one interface) in the same group,
 * mixing their traffic. The group outlives a member leaving (VQ_PAIRS_SET)
 * as long as one remains, and queue 0 always does. */
static int packet_join_fanout(struct packet_backend *pb, int fd, struct vmm_err *err)
{
	if (pb->fanout_id < 0) {
		int arg = (int)((pb->fanout | PACKET_FANOUT_FLAG_UNIQUEID) << 16);
		if (setopt(fd, PACKET_FANOUT, arg) < 0)
			return vmm_err_sys(err, errno, "packet backend: PACKET_FANOUT with a unique id");
		int val = 0;
		socklen_t len = sizeof(val);
		if (getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &val, &len) < 0)
			return vmm_err_sys(err, errno, "packet backend: reading the fanout group id");
		pb->fanout_id = val & 0xffff;
		return 0;
	}
	if (setopt(fd, PACKET_FANOUT, pb->fanout_id | ((int)pb->fanout << 16)) < 0)
		return vmm_err_sys(err, errno, "packet backend: joining fanout group %d", pb->fanout_id);
	return 0;
}

/* Every queue's socket: vnet headers, ring, bound, in the fanout group. */
static int packet_open_queue(struct packet_backend *pb, unsigned q, struct vmm_err *err)
{
	int fd = pb->base.io[q].fd;
	if (setopt(fd, PACKET_VNET_HDR, 1) < 0)
		return vmm_err_sys(err, errno, "packet backend: PACKET_VNET_HDR");
	if (setopt(fd, PACKET_VNET_HDR_SZ, VNET_HDR_LEN) < 0)
		return vmm_err_sys(err, errno, "packet backend: 12-byte vnet headers need Linux 6.2 or later (PACKET_VNET_HDR_SZ)");
	if (pb->qdisc_bypass && setopt(fd, PACKET_QDISC_BYPASS, 1) < 0)
		return vmm_err_sys(err, errno, "packet backend: PACKET_QDISC_BYPASS");
	/* The guest must not see its own transmissions. */
	if (setopt(fd, PACKET_IGNORE_OUTGOING, 1) < 0)
		return vmm_err_sys(err, errno, "packet backend: PACKET_IGNORE_OUTGOING");
	if (pb->rx_ring) {
		int rc = packet_setup_ring(pb, q, err);
		if (rc)
			return rc;
	} else {
		/* readv per frame: room for bursts while the worker sleeps
		 * (FORCE as root, else up to the rmem_max limit). */
		int bytes = 4 << 20;
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) < 0)
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	}
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = (int)pb->ifindex };
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return vmm_err_sys(err, errno, "packet backend: bind to '%s'", pb->base.ifname);
	/* Promiscuous while the socket lives: the guest has its own MAC. */
	struct packet_mreq mr = { .mr_ifindex = (int)pb->ifindex, .mr_type = PACKET_MR_PROMISC };
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		return vmm_err_sys(err, errno, "packet backend: promiscuous mode on '%s'", pb->base.ifname);
	if (pb->base.nr_queues > 1)
		return packet_join_fanout(pb, fd, err);
	return 0;
}

static void packet_close_queue(struct packet_backend *pb, unsigned q)
{
	if (pb->ring[q]) {
		munmap(pb->ring[q]->map, pb->ring[q]->map_len);
		free(pb->ring[q]);
		pb->ring[q] = NULL;
	}
	if (pb->base.io[q].fd >= 0)
		close(pb->base.io[q].fd);
	pb->base.io[q] = (struct net_queue_io){ .fd = -1 };
}

static void packet_close(struct packet_backend *pb)
{
	for (unsigned q = 0; q < pb->base.nr_queues; q++)
		packet_close_queue(pb, q);
}

static int packet_socket(struct packet_backend *pb, unsigned q, struct vmm_err *err)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	pb->base.io[q] = (struct net_queue_io){ .fd = fd };
	if (fd < 0) {
		int e = errno;
		return e == EPERM || e == EACCES
			? vmm_err_set(err, e, "packet backend: raw sockets need CAP_NET_RAW")
			: vmm_err_sys(err, e, "packet backend: socket");
	}
	return 0;
}

static int packet_open(struct packet_backend *pb, struct vmm_err *err)
{
	for (unsigned q = 0; q < pb->base.nr_queues; q++)
		pb->base.io[q] = (struct net_queue_io){ .fd = -1 };
	pb->fanout_id = -1;   /* a new group on (re)open: the old one left with its sockets */
	int rc = 0;
	for (unsigned q = 0; q < pb->base.nr_queues && rc == 0; q++) {
		rc = packet_socket(pb, q, err);
		if (rc == 0 && q == 0)
			rc = packet_check_interface(pb, pb->base.io[0].fd, err);
		if (rc == 0)
			rc = packet_open_queue(pb, q, err);
	}
	if (rc)
		packet_close(pb);
	/* TPACKET_V3 frames may fill a block (128 KiB) and recv reads into
	 * guest chains: a 64 KiB GSO frame fits either way. */
	pb->base.guest_gso = true;
	pb->base.csum_offload = true;
	return rc;
}

static int packet_set_offload(struct net_backend *b, unsigned offloads, struct vmm_err *err)
{
	(void)err;
	/* A packet socket has no offload switch: it hands over what the
	 * kernel has. The data path finishes NEEDS_CSUM checksums for a guest
	 * without GUEST_CSUM and cuts GSO frames for one without TSO. */
	b->offloads = offloads;
	return 0;
}

static int packet_set_queue_active(struct net_backend *b, unsigned q, bool active,
				   struct vmm_err *err)
{
	struct packet_backend *pb = pb_of(b);
	/* A fanout group cannot skip a member: an inactive queue's socket
	 * leaves the group (closed) so the kernel spreads over the rest, and
	 * joins again when the queue is activated. */
	if (b->nr_queues < 2)
		return 0;
	if (!active) {
		packet_close_queue(pb, q);
		return 0;
	}
	/* Queue 0 never leaves (it keeps the group); if its socket is gone so
	 * is the interface, and the link thread reopens every queue. Only the
	 * control and link threads open sockets (vmm/seccomp.c): this runs on
	 * a vCPU thread at DRIVER_OK and reset, always for queue 0 alone. */
	if (b->io[q].fd >= 0 || q == 0)
		return 0;
	int rc = packet_socket(pb, q, err);
	if (rc == 0)
		rc = packet_open_queue(pb, q, err);
	if (rc)
		packet_close_queue(pb, q);
	return rc;
}

/* The interface exists and is up: a packet socket can be bound to it. */
static bool packet_present(struct net_backend *b)
{
	return net_iface_is_up(b->ifname);
}

/* New sockets on the interface that came back (its index may differ). */
static int packet_reopen(struct net_backend *b, struct vmm_err *err)
{
	struct packet_backend *pb = pb_of(b);
	packet_close(pb);
	return packet_open(pb, err);
}

static unsigned long long packet_take_drops(struct net_backend *b, unsigned q)
{
	if (b->io[q].fd < 0)
		return 0;
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);
	memset(&st, 0, sizeof(st));
	if (getsockopt(b->io[q].fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) < 0)
		return 0;
	return st.tp_drops;   /* reading resets the kernel's counters */
}

static void packet_destroy(struct net_backend *b)
{
	packet_close(pb_of(b));
	free(b);
}

static const struct net_backend_ops packet_backend_ops = {
	.kind = "packet",
	.set_offload = packet_set_offload,
	.set_queue_active = packet_set_queue_active,
	.present = packet_present,
	.reopen = packet_reopen,
	.take_drops = packet_take_drops,
	.destroy = packet_destroy,
	.restart_to_steer = true,
};

int packet_backend_create(const struct net_backend_config *cfg, struct net_backend **out,
			  struct vmm_err *err)
{
	if (!cfg->ifname[0])
		return vmm_err_set(err, EINVAL, "packet backend: the host interface is required (packet=IFACE)");
	struct packet_backend *pb = calloc(1, sizeof(*pb));
	if (!pb)
		return vmm_err_set(err, ENOMEM, "out of memory for a packet backend");
	pb->base.ops = &packet_backend_ops;
	pb->base.nr_queues = cfg->queues;
	snprintf(pb->base.ifname, sizeof(pb->base.ifname), "%s", cfg->ifname);
	pb->mtu = cfg->mtu;
	pb->fanout = cfg->fanout;
	pb->rx_ring = cfg->rx_ring;
	pb->qdisc_bypass = cfg->qdisc_bypass;
	int rc = packet_open(pb, err);
	if (rc) {
		free(pb);
		return rc;
	}
	*out = &pb->base;
	return 0;
}
