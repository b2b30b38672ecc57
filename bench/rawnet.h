/* SPDX-License-Identifier: Apache-2.0 */
/* rawnet: the host's own packet-rate ceilings for the benchmark, and the raw
 * AF_PACKET blaster that offers a guest more than it can take.
 *
 * Every mode is a plain host process doing the one thing a VMM backend does,
 * as fast as it can on one core, so bench/bench.py can show each VMM rate as
 * a fraction of what the host itself reaches on the same device in the same
 * run. Each mode prints one JSON line on stdout (see rn_report). */
#ifndef MINIVMM_BENCH_RAWNET_H
#define MINIVMM_BENCH_RAWNET_H

#include <netinet/in.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RN_VNET_HDR_LEN 12u          /* struct virtio_net_hdr_v1, as minivmm sets on its tap */
#define RN_FRAME_MAX    1514u
#define RN_FLOWS_MAX    64u          /* net-sink tracks flows 0..63 per queue */

struct rn_opts {
	const char *mode;
	char dev[IF_NAMESIZE];
	char bridge[IF_NAMESIZE];    /* tap modes: put the tap into this bridge */
	unsigned size;               /* frame length without FCS (60..1514) */
	unsigned flows;              /* sequence flows, round-robin, 1..64 */
	unsigned batch;              /* frames per sendmmsg / ring flush */
	double secs;                 /* writers: run this long; readers: longest run */
	unsigned idle_ms;            /* readers: end after this much silence once frames came */
	uint64_t count;              /* writers: stop after this many frames (0: --secs) */
	uint64_t rate;               /* writers: frames per second (0: as fast as possible) */
	int cpu;                     /* pin to this CPU (-1: no) */
	bool ring;                   /* packet-read: TPACKET_V3 RX ring; blast: TPACKET_V3 TX ring */
	bool multi_queue;            /* tap modes: IFF_MULTI_QUEUE (as minivmm with queues > 1) */
	bool skb_mode;               /* xdp modes: generic (skb) XDP instead of native */
	unsigned queue;              /* xdp modes: interface queue to bind */
	uint8_t dst_mac[6], src_mac[6];
	bool have_dst_mac, have_src_mac;
	struct in_addr src_ip, dst_ip;
	uint16_t dport, sport;       /* flow k leaves from sport + k */
};

struct rn_result {
	uint64_t frames;             /* written / read / sent */
	uint64_t bytes;
	uint64_t errors;             /* failed calls (ENOBUFS, EAGAIN on a full ring ...) */
	uint64_t drops;              /* reported by the kernel (ring drops) where it tells */
	uint64_t cpu_ns;             /* this process's CPU time over the run */
	uint64_t t_first_ns, t_last_ns;  /* readers: first and last frame */
	uint64_t t_start_ns, t_end_ns;
	uint64_t bad;                /* readers: frames that were not a test datagram */
	uint64_t check_at;           /* readers: frame count of the next clock check */
};

/* Time and CPU. */
uint64_t rn_now_ns(void);
uint64_t rn_cpu_ns(void);
/* True once SIGINT/SIGTERM came or the run's time is over. */
bool rn_should_stop(const struct rn_opts *o, const struct rn_result *r);
/* Readers share one loop: drain with non-blocking calls, sleep in poll()
 * when the device is empty (so CPU per frame is what reading costs).
 * rn_reader_count books one frame; rn_reader_wait polls fd up to 20 ms and
 * returns false when the reader should end (stop, time, idle). */
void rn_reader_count(struct rn_result *r, const uint8_t *frame, size_t len);
bool rn_reader_wait(const struct rn_opts *o, struct rn_result *r, int fd);
/* Readers, between frames: a signal, --count or --secs (the clock is read
 * every 1024 frames only: it is not free). */
bool rn_reader_done(const struct rn_opts *o, struct rn_result *r);
/* Readers: true once idle_ms passed since the last frame (after a first one). */
bool rn_reader_idle(const struct rn_opts *o, const struct rn_result *r, uint64_t now);
/* Writers: sleep until frame number `sent` is due under --rate. */
void rn_pace(const struct rn_opts *o, const struct rn_result *r);
/* Frames the next burst may contain under --rate and --batch. */
unsigned rn_burst(const struct rn_opts *o, const struct rn_result *r);

/* Frames: Ethernet + IPv4 + UDP with valid checksums, payload in the test
 * datagram format (struct minivmm_net_seq_hdr + pattern, tests/tools/udp_flows.c).
 * Frame n of a run belongs to flow n % flows with seq n / flows. */
/* A writer's copy of the options with the frame MACs settled: --dst-mac is
 * required, --src-mac defaults to the device's own. */
int rn_frame_opts(const struct rn_opts *o, struct rn_opts *f);
size_t rn_frame_build(const struct rn_opts *o, uint8_t *buf, uint64_t n);
/* A reader's check: 1 if buf holds a test datagram, else 0. */
int rn_frame_is_test(const uint8_t *buf, size_t len);

/* Devices. */
int rn_ifindex(const char *dev);
int rn_dev_mac(const char *dev, uint8_t mac[6]);
int rn_tap_open(const struct rn_opts *o);
/* Bound to --dev; receive: ETH_P_ALL, else protocol 0 (send only). */
int rn_packet_socket(const struct rn_opts *o, bool receive, bool qdisc_bypass);
int rn_pin(int cpu);

/* Modes; each fills *r and returns 0 or a negative errno (message printed). */
int rn_tap_write(const struct rn_opts *o, struct rn_result *r);
int rn_tap_read(const struct rn_opts *o, struct rn_result *r);
int rn_packet_write(const struct rn_opts *o, struct rn_result *r);
int rn_packet_read(const struct rn_opts *o, struct rn_result *r);
int rn_blast(const struct rn_opts *o, struct rn_result *r);
int rn_xdp_tx(const struct rn_opts *o, struct rn_result *r);
int rn_xdp_rx(const struct rn_opts *o, struct rn_result *r);

void rn_ready(const struct rn_opts *o);

/* One line of stderr naming the mode and the failing step. */
void rn_fail(const struct rn_opts *o, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
