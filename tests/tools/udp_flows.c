/* SPDX-License-Identifier: Apache-2.0 */
/* udp_flows: test-datagram format, UDP sockets, per-flow bookkeeping. */
#include "udp_flows.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Pattern byte i (i >= UDPF_HDR_LEN) of datagram (flow, seq): consecutive
 * bytes differ, and datagrams of different seq or flow differ, so a swapped,
 * shifted or stale buffer shows up in a byte-for-byte comparison. */
static uint8_t pattern_base(uint16_t flow, uint64_t seq)
{
	return (uint8_t)(seq * 0x9d + (seq >> 8) * 0x3b + (seq >> 16) * 0x17 + flow * 0x55u);
}

static void put_hdr(uint8_t *p, uint16_t flow, uint64_t seq)
{
	uint32_t magic = htole32(MINIVMM_NET_SEQ_MAGIC);
	uint16_t fl = htole16(flow), reserved = 0;
	uint64_t sq = htole64(seq);

	memcpy(p + 0, &magic, 4);
	memcpy(p + 4, &fl, 2);
	memcpy(p + 6, &reserved, 2);
	memcpy(p + 8, &sq, 8);
}

void udpf_fill(uint8_t *payload, size_t len, uint16_t flow, uint64_t seq)
{
	uint8_t hdr[UDPF_HDR_LEN];
	uint8_t base = pattern_base(flow, seq);

	put_hdr(hdr, flow, seq);
	memcpy(payload, hdr, len < UDPF_HDR_LEN ? len : UDPF_HDR_LEN);
	for (size_t i = UDPF_HDR_LEN; i < len; i++)
		payload[i] = (uint8_t)(base + i * 7);
}

int udpf_check(const uint8_t *payload, size_t len, uint16_t flow, uint64_t seq)
{
	uint8_t hdr[UDPF_HDR_LEN];
	uint8_t base = pattern_base(flow, seq);

	if (len < UDPF_HDR_LEN)
		return -EINVAL;
	put_hdr(hdr, flow, seq);
	if (memcmp(payload, hdr, UDPF_HDR_LEN) != 0)
		return -EINVAL;
	for (size_t i = UDPF_HDR_LEN; i < len; i++)
		if (payload[i] != (uint8_t)(base + i * 7))
			return -EINVAL;
	return 0;
}

bool udpf_parse(const uint8_t *payload, size_t len, struct udpf_hdr *h)
{
	uint32_t magic;
	uint16_t flow;
	uint64_t seq;

	if (len < UDPF_HDR_LEN)
		return false;
	memcpy(&magic, payload, 4);
	memcpy(&flow, payload + 4, 2);
	memcpy(&seq, payload + 8, 8);
	if (le32toh(magic) != MINIVMM_NET_SEQ_MAGIC)
		return false;
	h->magic = le32toh(magic);
	h->flow = le16toh(flow);
	h->seq = le64toh(seq);
	return true;
}

bool udpf_is_stop(const uint8_t *payload, size_t len)
{
	return len >= UDPF_STOP_LEN && memcmp(payload, MINIVMM_NET_STOP_MAGIC, UDPF_STOP_LEN) == 0;
}

int udpf_parse_ipv4(const char *text, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	return inet_pton(AF_INET, text, &sa->sin_addr) == 1 ? 0 : -EINVAL;
}

static void set_rcvbuf(int fd, int bytes)
{
	/* SO_RCVBUFFORCE ignores rmem_max but needs CAP_NET_ADMIN; fall back. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

int udpf_socket(uint16_t port, const struct sockaddr_in *dst, int rcvbuf, bool nonblock)
{
	struct sockaddr_in local = { .sin_family = AF_INET, .sin_port = htons(port) };
	int one = 1, err;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);

	if (fd < 0)
		return -errno;
	if (port != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (rcvbuf > 0)
		set_rcvbuf(fd, rcvbuf);
	if (bind(fd, (const struct sockaddr *)&local, sizeof(local)) != 0)
		goto fail;
	if (dst && connect(fd, (const struct sockaddr *)dst, sizeof(*dst)) != 0)
		goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

uint16_t udpf_local_port(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		return 0;
	return ntohs(sa.sin_port);
}

/* Each copy from its own socket, so its own source port: on a multiqueue
 * device the copies spread over the queues (a flow stays on one), and a
 * guest listening on only some of them still gets one. */
static int send_one_stop(const struct sockaddr_in *dst)
{
	int fd = udpf_socket(0, NULL, 0, false);

	if (fd < 0)
		return fd;
	int rc = sendto(fd, MINIVMM_NET_STOP_MAGIC, UDPF_STOP_LEN, 0,
			(const struct sockaddr *)dst, sizeof(*dst)) >= 0 ? 0 : -errno;
	close(fd);
	return rc;
}

int udpf_send_stop(const struct sockaddr_in *dst, unsigned repeat)
{
	int err = -EIO;
	unsigned sent = 0;

	for (unsigned i = 0; i < repeat; i++) {
		if (i > 0)
			udpf_sleep_until_ns(udpf_now_ns() + 50 * 1000 * 1000ull);
		/* Once a guest has stopped, its tap (and the route) may be gone:
		 * only the first copy has to get out. */
		int rc = send_one_stop(dst);
		if (rc == 0)
			sent++;
		else if (sent == 0)
			err = rc;
	}
	return sent ? 0 : err;
}

uint64_t udpf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void udpf_sleep_until_ns(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
			       .tv_nsec = (long)(t % 1000000000ull) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int udpf_flow_record(struct udpf_flow *f, uint64_t seq)
{
	if (seq >= UDPF_SEQ_LIMIT)
		return -ERANGE;
	if (seq >= f->bitmap_bits) {
		uint64_t bits = f->bitmap_bits ? f->bitmap_bits : 4096;

		while (bits <= seq)
			bits *= 2;
		uint8_t *map = realloc(f->bitmap, bits / 8);
		if (!map)
			return -ENOMEM;
		memset(map + f->bitmap_bits / 8, 0, (bits - f->bitmap_bits) / 8);
		f->bitmap = map;
		f->bitmap_bits = bits;
	}
	uint8_t bit = (uint8_t)(1u << (seq & 7));
	if (f->bitmap[seq / 8] & bit) {
		f->duplicates++;
		return 0;
	}
	f->bitmap[seq / 8] |= bit;
	f->received++;
	if (!f->seen || seq > f->max_seq) {
		f->max_seq = seq;
		f->seen = true;
	} else {
		f->reordered++;
	}
	return 1;
}

uint64_t udpf_flow_gaps(const struct udpf_flow *f)
{
	return f->seen ? f->max_seq + 1 - f->received : 0;
}

void udpf_flow_free(struct udpf_flow *f)
{
	free(f->bitmap);
	f->bitmap = NULL;
	f->bitmap_bits = 0;
}
