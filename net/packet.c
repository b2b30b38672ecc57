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

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

bool pkt_fix_checksum(uint8_t *frame, uint32_t len, uint16_t csum_start, uint16_t csum_offset)
{
	if ((uint32_t)csum_start + csum_offset + 2 > len)
		return false;
	/* The field already holds the pseudo-header sum; add the rest. */
	uint32_t sum = 0;
	for (uint32_t i = csum_start; i + 1 < len; i += 2)
		sum += (uint32_t)(frame[i] << 8 | frame[i + 1]);
	if ((len - csum_start) & 1)
		sum += (uint32_t)frame[len - 1] << 8;
	uint16_t c = csum_fold(sum);
	frame[csum_start + csum_offset] = (uint8_t)(c >> 8);
	frame[csum_start + csum_offset + 1] = (uint8_t)c;
	return true;
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
	uint8_t *hdr = ring_frame_header(h);
	struct virtio_net_hdr_v1 *vh = (struct virtio_net_hdr_v1 *)hdr;
	if (!r->guest_csum && vh->gso_type == VIRTIO_NET_HDR_GSO_NONE &&
	    (vh->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)) {
		if (!pkt_fix_checksum(hdr + VNET_HDR_LEN, h->tp_snaplen, vh->csum_start,
				      vh->csum_offset)) {
			NET_STAT_ADD(dp->qp, rx_dropped, 1);
			return 1;
		}
		vh->flags &= (uint8_t)~VIRTIO_NET_HDR_F_NEEDS_CSUM;
	}
	vh->num_buffers = 0;
	/* A GSO frame (after GRO, or a host TCP segment passed on by a veth
	 * or bridge) goes as it is to a guest with TSO, else cut in segments
	 * (each with full checksums). */
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
		r->frames_left--;
		if (r->frames_left == 0)
			ring_release_block(r);
		else
			r->frame += h->tp_next_offset;
	}
}

/* ---- sockets ----------------------------------------------------------- */

static int setopt(int fd, int opt, int value)
{
	return setsockopt(fd, SOL_PACKET, opt, &value, sizeof(value));
}

static int packet_check_interface(struct net_backend *b, int fd, unsigned *ifindex,
				  struct vmm_err *err)
{
	*ifindex = if_nametoindex(b->ifname);
	if (*ifindex == 0)
		return vmm_err_set(err, ENODEV, "packet backend: no interface '%s'", b->ifname);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", b->ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP))
		return vmm_err_set(err, ENETDOWN, "packet backend: interface '%s' is down (ip link set %s up)",
				   b->ifname, b->ifname);
	if (ioctl(fd, SIOCGIFMTU, &ifr) == 0 && (unsigned)ifr.ifr_mtu < b->mtu)
		return vmm_err_set(err, EINVAL,
				   "packet backend: interface '%s' has MTU %d, smaller than the guest's %u (lower --net mtu=)",
				   b->ifname, ifr.ifr_mtu, b->mtu);
	return 0;
}

static int packet_setup_ring(struct net_backend *b, unsigned q, struct vmm_err *err)
{
	int fd = b->fd[q];
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
	r->guest_csum = b->offloads & 1;
	b->ring[q] = r;
	return 0;
}

/* One fanout group per device. The kernel picks a group id no one else
 * uses (PACKET_FANOUT_FLAG_UNIQUEID) for the first socket to join; the
 * others join that id. An id made up from the pid would put two devices of
 * one process (two VMs, or two --net on one interface) in the same group,
 * mixing their traffic. The group outlives a member leaving (VQ_PAIRS_SET)
 * as long as one remains, and queue 0 always does. */
static int packet_join_fanout(struct net_backend *b, int fd, struct vmm_err *err)
{
	if (b->fanout_id < 0) {
		int arg = (int)(((unsigned)b->fanout | PACKET_FANOUT_FLAG_UNIQUEID) << 16);
		if (setopt(fd, PACKET_FANOUT, arg) < 0)
			return vmm_err_sys(err, errno, "packet backend: PACKET_FANOUT with a unique id");
		int val = 0;
		socklen_t len = sizeof(val);
		if (getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &val, &len) < 0)
			return vmm_err_sys(err, errno, "packet backend: reading the fanout group id");
		b->fanout_id = val & 0xffff;
		return 0;
	}
	if (setopt(fd, PACKET_FANOUT, b->fanout_id | ((int)b->fanout << 16)) < 0)
		return vmm_err_sys(err, errno, "packet backend: joining fanout group %d", b->fanout_id);
	return 0;
}

/* Every queue's socket: vnet headers, ring, bound, in the fanout group. */
static int packet_open_queue(struct net_backend *b, unsigned q, unsigned ifindex,
			     struct vmm_err *err)
{
	int fd = b->fd[q];
	if (setopt(fd, PACKET_VNET_HDR, 1) < 0)
		return vmm_err_sys(err, errno, "packet backend: PACKET_VNET_HDR");
	if (setopt(fd, PACKET_VNET_HDR_SZ, VNET_HDR_LEN) < 0)
		return vmm_err_sys(err, errno, "packet backend: 12-byte vnet headers need Linux 6.2 or later (PACKET_VNET_HDR_SZ)");
	if (b->qdisc_bypass && setopt(fd, PACKET_QDISC_BYPASS, 1) < 0)
		return vmm_err_sys(err, errno, "packet backend: PACKET_QDISC_BYPASS");
	/* The guest must not see its own transmissions. */
	if (setopt(fd, PACKET_IGNORE_OUTGOING, 1) < 0)
		return vmm_err_sys(err, errno, "packet backend: PACKET_IGNORE_OUTGOING");
	if (b->rx_ring) {
		int rc = packet_setup_ring(b, q, err);
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
				   .sll_ifindex = (int)ifindex };
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		return vmm_err_sys(err, errno, "packet backend: bind to '%s'", b->ifname);
	/* Promiscuous while the socket lives: the guest has its own MAC. */
	struct packet_mreq mr = { .mr_ifindex = (int)ifindex, .mr_type = PACKET_MR_PROMISC };
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0)
		return vmm_err_sys(err, errno, "packet backend: promiscuous mode on '%s'", b->ifname);
	if (b->nr_queues > 1)
		return packet_join_fanout(b, fd, err);
	return 0;
}

static void packet_close_queue(struct net_backend *b, unsigned q)
{
	if (b->ring[q]) {
		munmap(b->ring[q]->map, b->ring[q]->map_len);
		free(b->ring[q]);
		b->ring[q] = NULL;
	}
	if (b->fd[q] >= 0)
		close(b->fd[q]);
	b->fd[q] = -1;
}

static void packet_close(struct net_backend *b)
{
	for (unsigned q = 0; q < b->nr_queues; q++)
		packet_close_queue(b, q);
}

static int packet_socket(struct net_backend *b, unsigned q, struct vmm_err *err)
{
	b->fd[q] = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (b->fd[q] < 0) {
		int e = errno;
		return e == EPERM || e == EACCES
			? vmm_err_set(err, e, "packet backend: raw sockets need CAP_NET_RAW")
			: vmm_err_sys(err, e, "packet backend: socket");
	}
	return 0;
}

static int packet_open(struct net_backend *b, struct vmm_err *err)
{
	for (unsigned q = 0; q < b->nr_queues; q++)
		b->fd[q] = -1;
	b->fanout_id = -1;   /* a new group on (re)open: the old one left with its sockets */
	int rc = 0;
	for (unsigned q = 0; q < b->nr_queues && rc == 0; q++) {
		rc = packet_socket(b, q, err);
		if (rc == 0 && q == 0)
			rc = packet_check_interface(b, b->fd[0], &b->ifindex, err);
		if (rc == 0)
			rc = packet_open_queue(b, q, b->ifindex, err);
	}
	if (rc)
		packet_close(b);
	/* TPACKET_V3 frames may fill a block (128 KiB) and recv reads into
	 * guest chains: a 64 KiB GSO frame fits either way. */
	b->guest_gso = true;
	return rc;
}

static int packet_set_offload(struct net_backend *b, unsigned offloads, struct vmm_err *err)
{
	(void)err;
	/* Checksums: frames the guest cannot finish are completed in
	 * pkt_ring_consume (rx=ring) — see ring->guest_csum. */
	b->offloads = offloads;
	for (unsigned q = 0; q < b->nr_queues; q++)
		if (b->ring[q])
			b->ring[q]->guest_csum = offloads & 1;
	return 0;
}

static int packet_set_queue_active(struct net_backend *b, unsigned q, bool active,
				   struct vmm_err *err)
{
	/* A fanout group cannot skip a member: an inactive queue's socket
	 * leaves the group (closed) so the kernel spreads over the rest, and
	 * joins again when the queue is activated. */
	if (b->nr_queues < 2)
		return 0;
	if (!active) {
		packet_close_queue(b, q);
		return 0;
	}
	/* Queue 0 never leaves (it keeps the group); if its socket is gone so
	 * is the interface, and the link thread reopens every queue. Only the
	 * control and link threads open sockets (vmm/seccomp.c): this runs on
	 * a vCPU thread at DRIVER_OK and reset, always for queue 0 alone. */
	if (b->fd[q] >= 0 || q == 0)
		return 0;
	int rc = packet_socket(b, q, err);
	if (rc == 0)
		rc = packet_open_queue(b, q, b->ifindex, err);
	if (rc)
		packet_close_queue(b, q);
	return rc;
}

/* The interface exists and is up: a packet socket can be bound to it. */
static bool packet_present(struct net_backend *b)
{
	unsigned ifindex = if_nametoindex(b->ifname);
	if (!ifindex)
		return false;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", b->ifname);
	bool up = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP);
	close(fd);
	return up;
}

/* New sockets on the interface that came back (its index may differ). */
static int packet_reopen(struct net_backend *b, struct vmm_err *err)
{
	packet_close(b);
	return packet_open(b, err);
}

const struct net_backend_ops packet_backend_ops = {
	.kind = "packet",
	.open = packet_open,
	.set_offload = packet_set_offload,
	.set_queue_active = packet_set_queue_active,
	.close = packet_close,
	.present = packet_present,
	.reopen = packet_reopen,
	.restart_to_steer = true,
};

unsigned long long net_backend_take_drops(struct net_backend *b, unsigned q)
{
	if (b->ops != &packet_backend_ops || q >= b->nr_queues || b->fd[q] < 0)
		return 0;
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);
	memset(&st, 0, sizeof(st));
	if (getsockopt(b->fd[q], SOL_PACKET, PACKET_STATISTICS, &st, &len) < 0)
		return 0;
	return st.tp_drops;   /* reading resets the kernel's counters */
}
