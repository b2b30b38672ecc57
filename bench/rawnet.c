/* SPDX-License-Identifier: Apache-2.0 */
/* rawnet: command line, timing, output, and the tap and AF_PACKET ceilings.
 * The blaster is in rawnet_blast.c, the AF_XDP ceilings in rawnet_xdp.c. */
#include "rawnet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <net/ethernet.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The one piece of process state: set from the SIGINT/SIGTERM handler, read
 * by every loop, so bench.py can end a reader early and still get its line. */
static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static const char usage_text[] =
	"Usage: rawnet MODE --dev IFACE [options]\n"
	"The host's own packet-rate ceilings, one core, one JSON line on stdout.\n"
	"  tap-write     create tap IFACE (IFF_TAP|IFF_NO_PI|IFF_VNET_HDR, as minivmm),\n"
	"                write test frames with one write() each\n"
	"  tap-read      create tap IFACE, read() frames until --idle-ms of silence\n"
	"  packet-write  AF_PACKET on IFACE, one send() per frame, PACKET_QDISC_BYPASS\n"
	"  packet-read   AF_PACKET on IFACE, one recv() per frame (--ring: TPACKET_V3 RX ring)\n"
	"  xdp-tx        AF_XDP socket on IFACE queue --queue, copy mode, own UMEM\n"
	"  xdp-rx        the same receiving (libxdp's default program redirects the queue)\n"
	"  blast         AF_PACKET blaster: sendmmsg batches (--ring: TPACKET_V3 TX ring)\n"
	"Options:\n"
	"  --dev IFACE           device (tap modes: the tap to create)\n"
	"  --bridge BR           tap modes: enslave the new tap to bridge BR and bring it up\n"
	"  --multi-queue         tap modes: IFF_MULTI_QUEUE\n"
	"  --size N              frame length without FCS, 60-1514 (default 64)\n"
	"  --flows K             sequence flows, 1-64 (default 4; flow k from --sport + k)\n"
	"  --secs S              writers: how long (default 2); readers: at most (default 30)\n"
	"  --count N             writers: stop after N frames\n"
	"  --rate PPS            writers: pace to PPS (default: as fast as possible)\n"
	"  --batch N             frames per sendmmsg / ring flush / AF_XDP burst (default 64)\n"
	"  --idle-ms MS          readers: end after MS of silence once frames came (default 500)\n"
	"  --cpu N               pin to CPU N\n"
	"  --ring                see packet-read and blast\n"
	"  --queue Q             xdp modes: interface queue (default 0)\n"
	"  --skb-mode            xdp modes: generic XDP instead of native\n"
	"  --dst-mac MAC --src-mac MAC   frame MACs (src default: the device's own)\n"
	"  --src-ip IP --dst-ip IP --dport P --sport P   frame addresses and ports\n"
	"Frames are UDP/IPv4 with valid checksums carrying struct minivmm_net_seq_hdr and\n"
	"netpeer's pattern, frame n in flow n %% K with seq n / K (what net-sink checks).\n"
	"Output: {\"rawnet\":MODE,\"frames\":N,\"elapsed_s\":T,\"pps\":R,\"cpu_ns_frame\":C,...}\n"
	"(readers first say \"rawnet MODE: ready\" on stderr once they listen).\n"
	"Exit status: 0 ok, 2 bad usage, 3 a system call failed.\n";

void rn_fail(const struct rn_opts *o, int err, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "rawnet %s: ", o->mode ? o->mode : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
}

/* ---- time, CPU, pacing ----------------------------------------------------- */

uint64_t rn_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t rn_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool rn_should_stop(const struct rn_opts *o, const struct rn_result *r)
{
	if (stop_requested)
		return true;
	if (o->count && r->frames >= o->count)
		return true;
	return rn_now_ns() - r->t_start_ns >= (uint64_t)(o->secs * 1e9);
}

bool rn_reader_idle(const struct rn_opts *o, const struct rn_result *r, uint64_t now)
{
	return r->frames && now - r->t_last_ns >= (uint64_t)o->idle_ms * 1000000ull;
}

void rn_pace(const struct rn_opts *o, const struct rn_result *r)
{
	if (!o->rate)
		return;
	uint64_t due = r->t_start_ns + (uint64_t)((double)r->frames * 1e9 / (double)o->rate);
	if (rn_now_ns() >= due)
		return;
	struct timespec ts = { .tv_sec = (time_t)(due / 1000000000ull),
			       .tv_nsec = (long)(due % 1000000000ull) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop_requested)
		;
}

/* Paced runs send small bursts about every 50 us, so a low rate is a steady
 * trickle rather than one batch every few milliseconds (which would measure
 * how the receiver handles bursts, not a load level); a sender that fell
 * behind (a late wake-up) catches up with bigger bursts, up to --batch. */
unsigned rn_burst(const struct rn_opts *o, const struct rn_result *r)
{
	uint64_t n = o->batch;
	if (o->rate) {
		uint64_t per = o->rate / 20000 ? o->rate / 20000 : 1;
		double due = (double)(rn_now_ns() - r->t_start_ns) * (double)o->rate / 1e9;
		uint64_t behind = due > (double)r->frames ? (uint64_t)due - r->frames : 0;
		n = behind + per < n ? behind + per : n;
	}
	if (o->count && o->count - r->frames < n)
		n = o->count - r->frames;
	return (unsigned)n;
}

/* Readers tell their starter on stderr that they are listening, so stdout
 * stays one JSON line. */
void rn_ready(const struct rn_opts *o)
{
	fprintf(stderr, "rawnet %s: ready\n", o->mode);
}

/* ---- devices ---------------------------------------------------------------- */

int rn_pin(int cpu)
{
	cpu_set_t set;
	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

int rn_ifindex(const char *dev)
{
	unsigned i = if_nametoindex(dev);
	return i ? (int)i : -errno;
}

static int ifreq_ioctl(unsigned long req, struct ifreq *ifr)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	int rc = ioctl(s, req, ifr) ? -errno : 0;
	close(s);
	return rc;
}

int rn_dev_mac(const char *dev, uint8_t mac[6])
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", dev);
	int rc = ifreq_ioctl(SIOCGIFHWADDR, &ifr);
	if (rc == 0)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return rc;
}

static int dev_set_up(const char *dev)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", dev);
	int rc = ifreq_ioctl(SIOCGIFFLAGS, &ifr);
	if (rc)
		return rc;
	ifr.ifr_flags |= IFF_UP;
	return ifreq_ioctl(SIOCSIFFLAGS, &ifr);
}

static int bridge_add(const char *bridge, const char *dev)
{
	struct ifreq ifr;
	int idx = rn_ifindex(dev);
	if (idx < 0)
		return idx;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", bridge);
	ifr.ifr_ifindex = idx;
	return ifreq_ioctl(SIOCBRADDIF, &ifr);
}

/* The tap as minivmm opens it (net/tap.c): no packet info, a 12-byte vnet
 * header, no offloads (the test guest negotiates none). */
int rn_tap_open(const struct rn_opts *o)
{
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		rn_fail(o, errno, "open /dev/net/tun");
		return -errno;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | (o->multi_queue ? IFF_MULTI_QUEUE : 0);
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", o->dev);
	int hdr = RN_VNET_HDR_LEN, rc = 0;
	const char *step = "TUNSETIFF";
	if (ioctl(fd, TUNSETIFF, &ifr) < 0)
		rc = -errno;
	if (!rc) {
		step = "TUNSETVNETHDRSZ";
		rc = ioctl(fd, TUNSETVNETHDRSZ, &hdr) < 0 ? -errno : 0;
	}
	if (!rc) {
		step = "TUNSETOFFLOAD";
		rc = ioctl(fd, TUNSETOFFLOAD, 0UL) < 0 ? -errno : 0;
	}
	if (!rc && o->bridge[0]) {
		step = "SIOCBRADDIF (into the bridge)";
		rc = bridge_add(o->bridge, o->dev);
	}
	if (!rc) {
		step = "SIOCSIFFLAGS (up)";
		rc = dev_set_up(o->dev);
	}
	if (rc) {
		rn_fail(o, -rc, "tap %s: %s", o->dev, step);
		close(fd);
		return rc;
	}
	return fd;
}

int rn_packet_socket(const struct rn_opts *o, bool receive, bool qdisc_bypass)
{
	/* protocol 0: the socket sends only, the kernel queues nothing to it */
	uint16_t proto = receive ? htons(ETH_P_ALL) : 0;
	int idx = rn_ifindex(o->dev);
	if (idx < 0) {
		rn_fail(o, -idx, "interface %s", o->dev);
		return idx;
	}
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (fd < 0) {
		rn_fail(o, errno, "socket(AF_PACKET)");
		return -errno;
	}
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = proto,
				   .sll_ifindex = idx };
	int one = 1;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ||
	    (qdisc_bypass && setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) < 0)) {
		int e = errno;
		rn_fail(o, e, "AF_PACKET on %s", o->dev);
		close(fd);
		return -e;
	}
	return fd;
}

/* ---- tap ---------------------------------------------------------------------- */

int rn_tap_write(const struct rn_opts *o, struct rn_result *r)
{
	uint8_t buf[RN_VNET_HDR_LEN + RN_FRAME_MAX] = { 0 };   /* zero vnet header: no offload */
	struct rn_opts f;
	int fd = rn_tap_open(o);
	if (fd < 0)
		return fd;
	if (rn_frame_opts(o, &f) < 0) {
		close(fd);
		return -EINVAL;
	}
	r->t_start_ns = rn_now_ns();
	while (!rn_should_stop(o, r)) {
		unsigned n = rn_burst(o, r);
		for (unsigned i = 0; i < n; i++) {
			size_t len = rn_frame_build(&f, buf + RN_VNET_HDR_LEN, r->frames);
			if (write(fd, buf, RN_VNET_HDR_LEN + len) < 0) {
				r->errors++;
				continue;
			}
			r->frames++;
			r->bytes += len;
		}
		rn_pace(o, r);
	}
	r->t_end_ns = rn_now_ns();
	close(fd);
	return 0;
}

void rn_reader_count(struct rn_result *r, const uint8_t *frame, size_t len)
{
	uint64_t now = rn_now_ns();
	if (!r->frames)
		r->t_first_ns = now;
	r->t_last_ns = now;
	r->frames++;
	r->bytes += len;
	if (!rn_frame_is_test(frame, len))
		r->bad++;
}

bool rn_reader_done(const struct rn_opts *o, struct rn_result *r)
{
	if (r->frames < r->check_at)
		return stop_requested;
	r->check_at = r->frames + 1024;
	return rn_should_stop(o, r);
}
bool rn_reader_wait(const struct rn_opts *o, struct rn_result *r, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (rn_should_stop(o, r) || rn_reader_idle(o, r, rn_now_ns()))
		return false;
	poll(&p, 1, 20);
	return true;
}

int rn_tap_read(const struct rn_opts *o, struct rn_result *r)
{
	static uint8_t buf[RN_VNET_HDR_LEN + 65536];
	int fd = rn_tap_open(o);
	if (fd < 0)
		return fd;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	rn_ready(o);
	r->t_start_ns = rn_now_ns();
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n > (ssize_t)RN_VNET_HDR_LEN) {
			rn_reader_count(r, buf + RN_VNET_HDR_LEN, (size_t)n - RN_VNET_HDR_LEN);
			if (rn_reader_done(o, r))
				break;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			r->errors++;
		if (!rn_reader_wait(o, r, fd))
			break;
	}
	r->t_end_ns = rn_now_ns();
	close(fd);
	return 0;
}

/* ---- AF_PACKET ------------------------------------------------------------------ */

static void packet_drops(int fd, struct rn_result *r)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);
	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
		r->drops += st.tp_drops;
}

int rn_packet_write(const struct rn_opts *o, struct rn_result *r)
{
	uint8_t buf[RN_FRAME_MAX];
	struct rn_opts f;
	int fd = rn_frame_opts(o, &f);
	if (fd < 0)
		return fd;
	fd = rn_packet_socket(o, false, true);
	if (fd < 0)
		return fd;
	r->t_start_ns = rn_now_ns();
	while (!rn_should_stop(o, r)) {
		unsigned n = rn_burst(o, r);
		for (unsigned i = 0; i < n; i++) {
			size_t len = rn_frame_build(&f, buf, r->frames);
			if (send(fd, buf, len, 0) < 0) {
				r->errors++;
				continue;
			}
			r->frames++;
			r->bytes += len;
		}
		rn_pace(o, r);
	}
	r->t_end_ns = rn_now_ns();
	close(fd);
	return 0;
}

static int packet_read_plain(const struct rn_opts *o, struct rn_result *r, int fd)
{
	uint8_t buf[65536];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			rn_reader_count(r, buf, (size_t)n);
			if (rn_reader_done(o, r))
				break;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			r->errors++;
		if (!rn_reader_wait(o, r, fd))
			break;
	}
	return 0;
}

/* TPACKET_V3: the kernel fills whole blocks; walk a block's frames, give it
 * back, move on. Geometry as a receive-heavy VMM would pick it. */
#define RING_BLOCK_SIZE (1u << 18)
#define RING_BLOCKS     64u
#define RING_FRAME_SIZE 2048u

static int packet_read_ring(const struct rn_opts *o, struct rn_result *r, int fd)
{
	int v = TPACKET_V3;
	struct tpacket_req3 req = { .tp_block_size = RING_BLOCK_SIZE, .tp_block_nr = RING_BLOCKS,
				    .tp_frame_size = RING_FRAME_SIZE,
				    .tp_frame_nr = RING_BLOCK_SIZE / RING_FRAME_SIZE * RING_BLOCKS,
				    .tp_retire_blk_tov = 1 };
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) < 0 ||
	    setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) {
		rn_fail(o, errno, "TPACKET_V3 RX ring");
		return -errno;
	}
	size_t size = (size_t)RING_BLOCK_SIZE * RING_BLOCKS;
	uint8_t *ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (ring == MAP_FAILED) {
		rn_fail(o, errno, "mmap RX ring");
		return -errno;
	}
	for (unsigned b = 0;;) {
		struct tpacket_block_desc *bd = (void *)(ring + (size_t)b * RING_BLOCK_SIZE);
		if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) {
			if (!rn_reader_wait(o, r, fd))
				break;
			continue;
		}
		struct tpacket3_hdr *h = (void *)((uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt);
		for (unsigned i = 0; i < bd->hdr.bh1.num_pkts; i++) {
			rn_reader_count(r, (uint8_t *)h + h->tp_mac, h->tp_snaplen);
			h = (void *)((uint8_t *)h + h->tp_next_offset);
		}
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		b = (b + 1) % RING_BLOCKS;
		if (rn_reader_done(o, r))
			break;
	}
	munmap(ring, size);
	return 0;
}

int rn_packet_read(const struct rn_opts *o, struct rn_result *r)
{
	int fd = rn_packet_socket(o, true, false);
	if (fd < 0)
		return fd;
	rn_ready(o);
	r->t_start_ns = rn_now_ns();
	int rc = o->ring ? packet_read_ring(o, r, fd) : packet_read_plain(o, r, fd);
	r->t_end_ns = rn_now_ns();
	packet_drops(fd, r);
	close(fd);
	return rc;
}

/* ---- command line and output ---------------------------------------------------- */

static const struct {
	const char *name;
	int (*run)(const struct rn_opts *o, struct rn_result *r);
	bool reader;
} modes[] = {
	{ "tap-write", rn_tap_write, false },    { "tap-read", rn_tap_read, true },
	{ "packet-write", rn_packet_write, false }, { "packet-read", rn_packet_read, true },
	{ "xdp-tx", rn_xdp_tx, false },          { "xdp-rx", rn_xdp_rx, true },
	{ "blast", rn_blast, false },
};

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	char end;
	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &end) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	return 0;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct rn_opts *o)
{
	*o = (struct rn_opts){ .size = 64, .flows = 4, .batch = 64, .secs = 0, .idle_ms = 500,
			       .cpu = -1, .dport = 5001, .sport = 6000 };
	inet_pton(AF_INET, "10.0.0.1", &o->src_ip);
	inet_pton(AF_INET, "10.0.0.2", &o->dst_ip);
	if (argc < 2)
		return -EINVAL;
	o->mode = argv[1];
	for (int i = 2; i < argc; i++) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n = 0;
		int rc = 0, takes = 1;
		if (!strcmp(k, "--multi-queue")) { o->multi_queue = true; takes = 0; }
		else if (!strcmp(k, "--ring")) { o->ring = true; takes = 0; }
		else if (!strcmp(k, "--skb-mode")) { o->skb_mode = true; takes = 0; }
		else if (!v) rc = -EINVAL;
		else if (!strcmp(k, "--dev") || !strcmp(k, "--bridge")) {
			if (strlen(v) >= IF_NAMESIZE)
				rc = -EINVAL;
			else
				snprintf(k[2] == 'd' ? o->dev : o->bridge, IF_NAMESIZE, "%s", v);
		}
		else if (!strcmp(k, "--size")) { rc = parse_u64(v, 60, RN_FRAME_MAX, &n); o->size = (unsigned)n; }
		else if (!strcmp(k, "--flows")) { rc = parse_u64(v, 1, RN_FLOWS_MAX, &n); o->flows = (unsigned)n; }
		else if (!strcmp(k, "--batch")) { rc = parse_u64(v, 1, 1024, &n); o->batch = (unsigned)n; }
		else if (!strcmp(k, "--count")) rc = parse_u64(v, 1, UINT64_MAX, &o->count);
		else if (!strcmp(k, "--rate")) rc = parse_u64(v, 1, 100000000, &o->rate);
		else if (!strcmp(k, "--idle-ms")) { rc = parse_u64(v, 1, 600000, &n); o->idle_ms = (unsigned)n; }
		else if (!strcmp(k, "--cpu")) { rc = parse_u64(v, 0, CPU_SETSIZE - 1, &n); o->cpu = (int)n; }
		else if (!strcmp(k, "--queue")) { rc = parse_u64(v, 0, 4095, &n); o->queue = (unsigned)n; }
		else if (!strcmp(k, "--dport") || !strcmp(k, "--sport")) {
			rc = parse_u64(v, 1, 65535, &n);
			*(k[2] == 'd' ? &o->dport : &o->sport) = (uint16_t)n;
		}
		else if (!strcmp(k, "--secs")) {
			char *end;
			o->secs = strtod(v, &end);
			if (*end || end == v || !(o->secs > 0 && o->secs <= 3600))
				rc = -EINVAL;
		}
		else if (!strcmp(k, "--dst-mac")) { rc = parse_mac(v, o->dst_mac); o->have_dst_mac = true; }
		else if (!strcmp(k, "--src-mac")) { rc = parse_mac(v, o->src_mac); o->have_src_mac = true; }
		else if (!strcmp(k, "--src-ip")) rc = inet_pton(AF_INET, v, &o->src_ip) == 1 ? 0 : -EINVAL;
		else if (!strcmp(k, "--dst-ip")) rc = inet_pton(AF_INET, v, &o->dst_ip) == 1 ? 0 : -EINVAL;
		else { fprintf(stderr, "rawnet: unknown option '%s'\n", k); return -EINVAL; }
		if (rc) {
			fprintf(stderr, "rawnet: bad value for %s: '%s'\n", k, v ? v : "(none)");
			return rc;
		}
		i += takes;
	}
	if (!o->dev[0]) {
		fprintf(stderr, "rawnet: --dev is required\n");
		return -EINVAL;
	}
	if ((o->flows > 1 && (unsigned)o->sport + o->flows - 1 > 65535)) {
		fprintf(stderr, "rawnet: --sport + --flows goes past port 65535\n");
		return -EINVAL;
	}
	return 0;
}

static void report(const struct rn_opts *o, const struct rn_result *r, bool reader)
{
	uint64_t t0 = reader ? r->t_first_ns : r->t_start_ns, t1 = reader ? r->t_last_ns : r->t_end_ns;
	double el = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0.0;
	/* a reader's rate is over first..last frame: n frames span n-1 gaps */
	double pps = el > 0 ? (double)(reader ? r->frames - 1 : r->frames) / el : 0.0;
	printf("{\"rawnet\":\"%s\",\"dev\":\"%s\",\"size\":%u,\"rate_asked\":%" PRIu64 ",\"ring\":%s,"
	       "\"frames\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"elapsed_s\":%.6f,\"pps\":%.1f,"
	       "\"cpu_ns\":%" PRIu64 ",\"cpu_ns_frame\":%.1f,\"errors\":%" PRIu64 ",\"drops\":%" PRIu64
	       ",\"bad\":%" PRIu64 ",\"run_s\":%.6f}\n",
	       o->mode, o->dev, o->size, o->rate, o->ring ? "true" : "false", r->frames, r->bytes, el, pps,
	       r->cpu_ns, r->frames ? (double)r->cpu_ns / (double)r->frames : 0.0, r->errors, r->drops,
	       r->bad, (double)(r->t_end_ns - r->t_start_ns) / 1e9);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct rn_opts o;
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (parse_args(argc, argv, &o)) {
		fputs(usage_text, stderr);
		return 2;
	}
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		if (strcmp(o.mode, modes[m].name))
			continue;
		if (o.secs == 0)
			o.secs = modes[m].reader ? 30 : 2;
		struct sigaction sa = { .sa_handler = on_stop_signal };   /* no SA_RESTART: wake poll() */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		prctl(PR_SET_TIMERSLACK, 1UL);   /* paced sends wake on time */
		int rc = rn_pin(o.cpu);
		if (rc) {
			rn_fail(&o, -rc, "pin to CPU %d", o.cpu);
			return 3;
		}
		struct rn_result r = { 0 };
		uint64_t c0 = rn_cpu_ns();
		rc = modes[m].run(&o, &r);
		r.cpu_ns = rn_cpu_ns() - c0;
		if (rc)
			return 3;
		report(&o, &r, modes[m].reader);
		return 0;
	}
	fprintf(stderr, "rawnet: unknown mode '%s'\n", o.mode);
	fputs(usage_text, stderr);
	return 2;
}
