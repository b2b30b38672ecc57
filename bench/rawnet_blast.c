/* SPDX-License-Identifier: Apache-2.0 */
/* rawnet: test frames (Ethernet/IPv4/UDP in net-sink's format) and the raw
 * AF_PACKET blaster, sendmmsg batches or a TPACKET_V3 TX ring. */
#include "rawnet.h"
#include "tests/tools/udp_flows.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define ETH_HLEN_ 14u
#define IP_HLEN   20u
#define UDP_HLEN  8u

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int rn_frame_opts(const struct rn_opts *o, struct rn_opts *f)
{
	*f = *o;
	if (!o->have_dst_mac) {
		rn_fail(o, 0, "--dst-mac is required to build frames");
		return -EINVAL;
	}
	if (!o->have_src_mac) {
		int rc = rn_dev_mac(o->dev, f->src_mac);
		if (rc) {
			rn_fail(o, -rc, "MAC address of %s (give --src-mac)", o->dev);
			return rc;
		}
		f->have_src_mac = true;
	}
	return 0;
}

size_t rn_frame_build(const struct rn_opts *o, uint8_t *buf, uint64_t n)
{
	uint16_t flow = (uint16_t)(n % o->flows);
	uint64_t seq = n / o->flows;
	size_t len = o->size, plen = len - ETH_HLEN_ - IP_HLEN - UDP_HLEN;
	uint8_t *ip = buf + ETH_HLEN_, *udp = ip + IP_HLEN, *payload = udp + UDP_HLEN;

	memcpy(buf, o->dst_mac, 6);
	memcpy(buf + 6, o->src_mac, 6);
	put16(buf + 12, ETHERTYPE_IP);

	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(len - ETH_HLEN_));
	put16(ip + 4, (uint16_t)n);
	put16(ip + 6, 0x4000);                   /* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	put16(ip + 10, 0);
	memcpy(ip + 12, &o->src_ip, 4);
	memcpy(ip + 16, &o->dst_ip, 4);
	put16(ip + 10, csum_fold(csum_add(0, ip, IP_HLEN)));

	put16(udp, (uint16_t)(o->sport + flow));
	put16(udp + 2, o->dport);
	put16(udp + 4, (uint16_t)(plen + UDP_HLEN));
	put16(udp + 6, 0);
	udpf_fill(payload, plen, flow, seq);
	/* pseudo header: addresses, protocol, UDP length */
	uint32_t sum = csum_add(0, ip + 12, 8) + IPPROTO_UDP + (uint32_t)(plen + UDP_HLEN);
	uint16_t c = csum_fold(csum_add(sum, udp, plen + UDP_HLEN));
	put16(udp + 6, c ? c : 0xffff);          /* 0 means "no checksum" in UDP/IPv4 */
	return len;
}

int rn_frame_is_test(const uint8_t *buf, size_t len)
{
	struct udpf_hdr h;
	if (len < ETH_HLEN_ + IP_HLEN + UDP_HLEN || buf[12] != 0x08 || buf[13] != 0x00)
		return 0;
	const uint8_t *ip = buf + ETH_HLEN_;
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	if ((ip[0] >> 4) != 4 || ihl < IP_HLEN || ip[9] != IPPROTO_UDP || len < ETH_HLEN_ + ihl + UDP_HLEN)
		return 0;
	const uint8_t *payload = ip + ihl + UDP_HLEN;
	return udpf_parse(payload, len - (size_t)(payload - buf), &h);
}

/* ---- sendmmsg --------------------------------------------------------------- */

static int blast_mmsg(const struct rn_opts *o, struct rn_result *r, int fd)
{
	uint8_t *bufs = malloc((size_t)o->batch * RN_FRAME_MAX);
	struct mmsghdr *msgs = calloc(o->batch, sizeof(*msgs));
	struct iovec *iov = calloc(o->batch, sizeof(*iov));
	if (!bufs || !msgs || !iov) {
		free(bufs), free(msgs), free(iov);
		rn_fail(o, ENOMEM, "blast buffers");
		return -ENOMEM;
	}
	int rc = 0;
	r->t_start_ns = rn_now_ns();
	while (!rn_should_stop(o, r)) {
		unsigned n = rn_burst(o, r);
		for (unsigned i = 0; i < n; i++) {
			iov[i].iov_base = bufs + (size_t)i * RN_FRAME_MAX;
			iov[i].iov_len = rn_frame_build(o, iov[i].iov_base, r->frames + i);
			msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
		}
		int sent = sendmmsg(fd, msgs, n, 0);
		if (sent < 0) {
			if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
				rc = -errno;
				rn_fail(o, errno, "sendmmsg on %s", o->dev);
				break;
			}
			r->errors++;
			sched_yield();
			continue;
		}
		/* frames not taken are rebuilt, with the same sequence numbers, next round */
		for (int i = 0; i < sent; i++)
			r->bytes += iov[i].iov_len;
		r->frames += (uint64_t)sent;
		rn_pace(o, r);
	}
	r->t_end_ns = rn_now_ns();
	free(bufs), free(msgs), free(iov);
	return rc;
}

/* ---- TPACKET_V3 TX ring ------------------------------------------------------ */

#define TX_FRAME_SIZE 2048u
#define TX_BLOCK_SIZE (1u << 16)
#define TX_BLOCKS     128u
#define TX_FRAMES     (TX_BLOCK_SIZE / TX_FRAME_SIZE * TX_BLOCKS)
/* Without PACKET_TX_HAS_OFF the kernel takes a frame's data right after the
 * aligned header (TPACKET3_HDRLEN less the sockaddr_ll it accounts for). */
#define TX_DATA_OFF   (TPACKET3_HDRLEN - sizeof(struct sockaddr_ll))

static int blast_ring(const struct rn_opts *o, struct rn_result *r, int fd)
{
	int v = TPACKET_V3;
	struct tpacket_req3 req = { .tp_block_size = TX_BLOCK_SIZE, .tp_block_nr = TX_BLOCKS,
				    .tp_frame_size = TX_FRAME_SIZE, .tp_frame_nr = TX_FRAMES };
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) < 0) {
		rn_fail(o, errno, "TPACKET_V3 TX ring on %s", o->dev);
		return -errno;
	}
	size_t size = (size_t)TX_BLOCK_SIZE * TX_BLOCKS;
	uint8_t *ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (ring == MAP_FAILED) {
		rn_fail(o, errno, "mmap TX ring");
		return -errno;
	}
	unsigned idx = 0;
	int rc = 0;
	r->t_start_ns = rn_now_ns();
	while (!rn_should_stop(o, r)) {
		unsigned n = rn_burst(o, r), queued = 0;
		for (; queued < n; queued++) {
			struct tpacket3_hdr *h = (void *)(ring + (size_t)idx * TX_FRAME_SIZE);
			uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
			if (st != TP_STATUS_AVAILABLE && st != TP_STATUS_WRONG_FORMAT)
				break;               /* still in flight: the ring is full */
			size_t len = rn_frame_build(o, (uint8_t *)h + TX_DATA_OFF, r->frames + queued);
			h->tp_len = (uint32_t)len;
			h->tp_snaplen = (uint32_t)len;
			h->tp_next_offset = 0;
			r->bytes += len;
			__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
			idx = (idx + 1) % TX_FRAMES;
		}
		r->frames += queued;
		if (send(fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != ENOBUFS && errno != EAGAIN &&
		    errno != EINTR) {
			rc = -errno;
			rn_fail(o, errno, "send (TX ring) on %s", o->dev);
			break;
		}
		if (queued < n) {
			r->errors++;
			sched_yield();
		}
		rn_pace(o, r);
	}
	send(fd, NULL, 0, 0);                        /* flush what is still queued */
	r->t_end_ns = rn_now_ns();
	munmap(ring, size);
	return rc;
}

int rn_blast(const struct rn_opts *o, struct rn_result *r)
{
	struct rn_opts f;
	int rc = rn_frame_opts(o, &f);
	if (rc)
		return rc;
	int fd = rn_packet_socket(o, false, true);
	if (fd < 0)
		return fd;
	rc = o->ring ? blast_ring(&f, r, fd) : blast_mmsg(&f, r, fd);
	close(fd);
	return rc;
}
