/* SPDX-License-Identifier: Apache-2.0 */
/* Network tests: net-echo, net-gen, net-sink, net-duplex.
 *
 * The BSP finds and sets up the device, sends VQ_PAIRS_SET, posts the RX
 * buffers (after rx-pause-ms), then vCPU i polls queue pair i (rx 2i, tx
 * 2i+1) in its own loop: no locks, each pair and its counters belong to one
 * vCPU. Every loop answers ARP for our IP and ICMP echo requests to it.
 * Replies go out on the queue the request came in on; TX descriptors are
 * published in batches with one kick only when the device asked for it. */
#include "nettests.h"

#include "cmdline.h"
#include "delay.h"
#include "io.h"
#include "ioapic.h"
#include "lapic.h"
#include "layout.h"
#include "lib.h"
#include "minivmm_abi.h"
#include "netproto.h"
#include "serial.h"
#include "smp.h"
#include "sys.h"
#include "vnet.h"

#define AP_TIMEOUT_US    2000000
#define ARP_TIMEOUT_US   5000000
#define ARP_RETRY_US     250000
#define STALL_US         5000000    /* TX ring full and nothing reclaimed */
#define TX_WAIT_US       1000000    /* TX ring full: wait this long, then drop */
#define DRAIN_US         200000     /* after stop: let the last replies go */
#define WAIT_IDLE_US     10000000   /* BSP: no worker progress for this long */
#define IRQ_WAIT_US      200000     /* irq=1: wait this long per interrupt */
#define HALT_BOUND_NS    50000000   /* idle=halt: LAPIC timer wakes a sleep after ~this */
#define LINK_POLL_US     20000      /* echo/sink queue 0: link status read this often */
#define RX_BATCH         64
#define GEN_BATCH        64
#define MAX_FLOWS        64         /* net-sink: flows tracked per queue */
#define BADSUM_SHOWN     3          /* net-sink: bad checksums described per queue */
#define STOP_LEN         (sizeof(MINIVMM_NET_STOP_MAGIC) - 1)

enum net_mode { NET_ECHO, NET_GEN, NET_SINK, NET_DUPLEX };

static const char *const mode_name[] = { "net-echo", "net-gen", "net-sink", "net-duplex" };

struct net_params {
	struct np_addr self;
	uint8_t peer_ip[4];
	uint16_t port;
	unsigned size, size_max;    /* net-gen/duplex frame lengths without FCS */
	uint64_t count;             /* net-gen/duplex frames per queue (0: secs only) */
	uint64_t secs;              /* 0: no time limit */
	uint64_t wait_secs;         /* net-duplex: RX after TX ends, stop datagram at the latest */
	unsigned queues;            /* pairs polled, one vCPU each */
	int pairs;                  /* VQ_PAIRS_SET value, -1: queues */
	uint64_t rx_pause_ms;
	int irq, irq_level, offload, verbose;
	int halt;                   /* idle=halt: sleep in hlt instead of spinning */
	uint64_t spin_us;           /* idle=halt: spin this long first */
};

/* Counters of one queue pair, written only by its vCPU. */
struct qstat {
	uint64_t frames;            /* every frame received */
	uint64_t rx, tx;            /* test datagrams received / sent */
	uint64_t arp, icmp;         /* ARP and echo replies sent */
	uint64_t other, bad, drops;
	uint64_t lost, reorders, badsum, corrupt, flows;    /* net-sink */
	uint64_t moved;             /* sink: flows also seen on another queue */
	uint64_t usecs;                             /* net-gen */
	uint64_t irq_wakeups, irq_missed;           /* irq=1, queue 0 */
	uint64_t halts;                             /* idle=halt, queue 0 */
	uint64_t partial;           /* NEEDS_CSUM although GUEST_CSUM is not negotiated */
	uint64_t progress;          /* moves while the worker makes progress */
	int done;
} __attribute__((aligned(64)));

struct flow {
	uint64_t next;              /* highest seq seen + 1 */
	uint64_t rx;                /* datagrams of the flow on this queue */
	int seen;
};

static enum net_mode mode;
static struct net_params prm;
static struct vnet net;
static struct qstat qs[VNET_MAX_PAIRS];
static struct flow flows[VNET_MAX_PAIRS][MAX_FLOWS];
/* Queue + 1 that saw each flow first (0: none yet): a flow the host's
 * steering moves between queues shows up as `moved`, not as loss. */
static uint8_t flow_queue[MAX_FLOWS];
/* TX buffers a reply overwrote: net-gen rebuilds its template there. */
static uint8_t tx_dirty[VNET_MAX_PAIRS][VNET_QUEUE_SIZE];
static int net_stop;
static uint64_t deadline;       /* TSC; 0: none */
static uint8_t peer_mac[ETH_ALEN];
static int peer_known;

/* From netirq.S. */
extern volatile uint64_t tg_net_irq_mmio, tg_net_irq_count;
extern volatile uint32_t tg_net_irq_status;

static int stopped(void)
{
	return __atomic_load_n(&net_stop, __ATOMIC_RELAXED);
}

static void set_stop(void)
{
	__atomic_store_n(&net_stop, 1, __ATOMIC_RELAXED);
}

static uint64_t tsc_to_us(uint64_t cycles)
{
	uint64_t per_us = tsc_hz() / 1000000;

	return per_us ? cycles / per_us : cycles;
}

/* ---- command line ------------------------------------------------------ */

static __attribute__((noreturn)) void bad_param(const char *key)
{
	tg_printf("testguest: bad %s=%s\n", key, cmdline_get(key, ""));
	tg_exit(TG_EXIT_BAD_CMDLINE);
}

static uint64_t get_num(const char *key, uint64_t def, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (cmdline_get_u64(key, def, &v) < 0 || v < min || v > max)
		bad_param(key);
	return v;
}

static int get_flag(const char *key)
{
	const char *v = cmdline_get(key, NULL);

	if (!v)
		return 0;
	if (!*v || !strcmp(v, "1"))
		return 1;
	if (!strcmp(v, "0"))
		return 0;
	bad_param(key);
}

static void get_ip(const char *key, const char *def, uint8_t ip[4])
{
	if (np_parse_ip(cmdline_get(key, def), ip))
		bad_param(key);
}

/* size=N, or size=MIN-MAX for net-duplex (frame i of a queue is
 * MIN + i mod (MAX - MIN + 1) bytes long). */
static void get_sizes(void)
{
	const char *v = cmdline_get("size", "64"), *dash = strchr(v, '-');
	char lo[16];
	uint64_t a, b;

	if (!dash) {
		a = get_num("size", 64, ETH_ZLEN, ETH_FRAME_MAX);
		prm.size = prm.size_max = (unsigned)a;
		return;
	}
	if (mode != NET_DUPLEX || (size_t)(dash - v) >= sizeof(lo))
		bad_param("size");
	memcpy(lo, v, (size_t)(dash - v));
	lo[dash - v] = '\0';
	if (parse_u64(lo, &a) || parse_u64(dash + 1, &b) || a < ETH_ZLEN || b > ETH_FRAME_MAX || a > b)
		bad_param("size");
	prm.size = (unsigned)a;
	prm.size_max = (unsigned)b;
}

/* idle=poll (the default) spins while queue 0 waits; idle=halt sleeps. */
static int get_idle_halt(void)
{
	const char *v = cmdline_get("idle", "poll");

	if (!strcmp(v, "poll"))
		return 0;
	if (!strcmp(v, "halt"))
		return 1;
	bad_param("idle");
}

static void parse_params(void)
{
	int have_count = cmdline_find("count", 0) >= 0;

	get_ip("ip", "10.0.0.2", prm.self.ip);
	get_ip("peer", "10.0.0.1", prm.peer_ip);
	prm.port = (uint16_t)get_num("port", 5001, 1, 65535 - 1000 - VNET_MAX_PAIRS);
	get_sizes();
	prm.secs = get_num("secs", 0, 0, 1000000);
	prm.wait_secs = get_num("wait-secs", 60, 0, 1000000);
	prm.count = get_num("count", 0, 0, UINT64_MAX);
	if ((mode == NET_GEN || mode == NET_DUPLEX) && !have_count && !prm.secs)
		prm.count = 1000;
	prm.queues = (unsigned)get_num("queues", 1, 1, VNET_MAX_PAIRS);
	prm.pairs = cmdline_find("pairs", 0) >= 0 ? (int)get_num("pairs", 0, 0, 65535) : -1;
	prm.rx_pause_ms = get_num("rx-pause-ms", 0, 0, 3600000);
	prm.irq = get_flag("irq");
	prm.irq_level = get_flag("irq-level");
	prm.irq |= prm.irq_level;
	prm.halt = get_idle_halt();
	prm.irq |= prm.halt;
	prm.spin_us = get_num("spin-us", 20, 0, 1000000);
	prm.offload = get_flag("offload");
	prm.verbose = cmdline_find("debug", 0) >= 0;
	if (prm.queues > smp_cpu_count()) {
		tg_printf("testguest: queues=%u needs as many vCPUs (have %u)\n",
			  prm.queues, smp_cpu_count());
		tg_exit(TG_EXIT_BAD_CMDLINE);
	}
}

/* ---- sending ------------------------------------------------------------ */

/* A TX buffer with a zeroed header, waited for rather than dropped: echo
 * must not lose what the VMM delivered. */
static uint8_t *tx_begin(struct vnet_pair *p, uint16_t *id)
{
	uint8_t *buf = vnet_tx_begin(p, id, TX_WAIT_US);

	if (buf)
		tx_dirty[p->index][*id] = 1;
	return buf;
}

/* Fill in a partial checksum ourselves (the device gave us NEEDS_CSUM but
 * cannot take it back because VIRTIO_NET_F_CSUM is not negotiated). */
static void csum_complete(uint8_t *frame, unsigned len, unsigned start, unsigned off)
{
	uint16_t c;

	if (start + off + 2 > len)
		return;
	c = np_csum_fold(np_csum_add(0, frame + start, len - start));
	if (!c)
		c = 0xffff;             /* UDP: 0 means "no checksum" */
	memcpy(frame + start + off, &c, 2);
}

static void send_udp_echo(struct vnet_pair *p, struct qstat *st,
			  const struct vnet_rx *rx, const struct np_view *v, int count)
{
	uint16_t id;
	uint8_t *out = tx_begin(p, &id);
	struct virtio_net_hdr_v1 *h;
	unsigned len;

	if (!out) {
		st->drops += count;
		return;
	}
	h = (struct virtio_net_hdr_v1 *)(out - VNET_HDR_LEN);
	len = np_udp_echo(out, v);
	if (rx->hdr->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		/* Swapping addresses and ports keeps the pseudo-header sum. */
		if (vnet_has(&net, VIRTIO_NET_F_CSUM)) {
			h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
			h->csum_start = rx->hdr->csum_start;
			h->csum_offset = rx->hdr->csum_offset;
		} else {
			csum_complete(out, len, rx->hdr->csum_start, rx->hdr->csum_offset);
		}
	}
	vnet_tx_put(p, id, len);
	st->tx += count;
}

/* ---- receiving ---------------------------------------------------------- */

static int is_stop(const struct np_view *v)
{
	return v->payload_len >= STOP_LEN &&
	       !memcmp(v->payload, MINIVMM_NET_STOP_MAGIC, STOP_LEN);
}

static void learn_peer(const struct np_view *v)
{
	if (!__atomic_load_n(&peer_known, __ATOMIC_ACQUIRE) &&
	    !memcmp(v->arp->spa, prm.peer_ip, 4)) {
		memcpy(peer_mac, v->arp->sha, ETH_ALEN);
		__atomic_store_n(&peer_known, 1, __ATOMIC_RELEASE);
	}
}

/* A datagram with a wrong UDP checksum: what it carries and what the sum
 * should be (the first few per queue; the soak reports them). */
static void show_badsum(unsigned q, const struct vnet_rx *rx, const struct np_view *v,
			uint32_t pseudo, unsigned ulen)
{
	struct minivmm_net_seq_hdr h = { 0 };
	uint16_t got = v->udp->csum, want;

	v->udp->csum = 0;
	want = np_csum_fold(np_csum_add(pseudo, v->udp, ulen));
	v->udp->csum = got;
	if (v->payload_len >= sizeof(h))
		memcpy(&h, v->payload, sizeof(h));
	tg_printf("testguest: q%u badsum flow %u seq %llu frame %u udp-len %u csum 0x%04x want 0x%04x hdr-flags 0x%x gso %u csum-start %u csum-offset %u\n",
		  q, h.flow, (unsigned long long)h.seq, rx->len, ulen, ntohs(got),
		  ntohs(want ? want : 0xffff), rx->hdr->flags, rx->hdr->gso_type,
		  rx->hdr->csum_start, rx->hdr->csum_offset);
}

static void sink_check(struct qstat *st, unsigned q, const struct vnet_rx *rx,
		       const struct np_view *v)
{
	struct minivmm_net_seq_hdr h;
	struct flow *f;
	int r;

	if (v->udp->csum && !(rx->hdr->flags & (VIRTIO_NET_HDR_F_NEEDS_CSUM |
						 VIRTIO_NET_HDR_F_DATA_VALID))) {
		unsigned ulen = v->payload_len + UDP_HLEN;
		uint32_t s = np_pseudo_sum(v->ip->src, v->ip->dst, (uint16_t)ulen);

		if (np_csum_fold(np_csum_add(s, v->udp, ulen)) && ++st->badsum <= BADSUM_SHOWN)
			show_badsum(q, rx, v, s, ulen);
	}
	r = np_seq_check(v->payload, v->payload_len, &h);
	if (r < 0 || h.flow >= MAX_FLOWS) {
		st->bad++;
		return;
	}
	if (r)
		st->corrupt++;
	f = &flows[q][h.flow];
	if (!f->seen) {
		uint8_t none = 0;

		f->seen = 1;
		f->next = 0;
		st->flows++;
		if (!__atomic_compare_exchange_n(&flow_queue[h.flow], &none, (uint8_t)(q + 1), 0,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			st->moved++;
	}
	f->rx++;
	if (h.seq == f->next) {
		f->next++;
	} else if (h.seq > f->next) {
		st->lost += h.seq - f->next;
		f->next = h.seq + 1;
	} else {
		st->reorders++;         /* late (or duplicate) */
	}
}

static void handle_udp(struct vnet_pair *p, struct qstat *st, const struct vnet_rx *rx,
		       const struct np_view *v)
{
	if (is_stop(v)) {
		set_stop();
		if (mode == NET_ECHO)
			send_udp_echo(p, st, rx, v, 0);     /* an ack, not counted */
		return;
	}
	switch (mode) {
	case NET_ECHO:
		st->rx++;
		send_udp_echo(p, st, rx, v, 1);
		break;
	case NET_SINK:
	case NET_DUPLEX:
		if (ntohs(v->udp->dport) != prm.port) {
			st->other++;
			break;
		}
		st->rx++;
		sink_check(st, p->index, rx, v);
		break;
	case NET_GEN:
		st->other++;
		break;
	}
}

static void handle_frame(struct vnet_pair *p, struct qstat *st, const struct vnet_rx *rx)
{
	struct np_view v;
	uint16_t id;
	uint8_t *out;

	st->frames++;
	/* Without GUEST_CSUM the device must hand over full checksums and
	 * flags 0 (spec 5.1.6.4.1); count it when it does not. */
	if ((rx->hdr->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) && !vnet_has(&net, VIRTIO_NET_F_GUEST_CSUM))
		st->partial++;
	switch (np_classify(rx->frame, rx->len, &prm.self, &v)) {
	case NP_ARP_REQUEST:
		learn_peer(&v);
		if ((out = tx_begin(p, &id))) {
			vnet_tx_put(p, id, np_arp_reply(out, &v, &prm.self));
			st->arp++;
		} else {
			st->drops++;
		}
		break;
	case NP_ARP_REPLY:
		learn_peer(&v);
		st->other++;
		break;
	case NP_ICMP_ECHO:
		if (ETH_HLEN + v.ip_len <= ETH_FRAME_MAX && (out = tx_begin(p, &id))) {
			vnet_tx_put(p, id, np_icmp_reply(out, &v));
			st->icmp++;
		} else {
			st->drops++;
		}
		break;
	case NP_UDP:
		handle_udp(p, st, rx, &v);
		break;
	case NP_BAD:
		st->bad++;
		break;
	default:
		st->other++;
		break;
	}
}

/* Handle up to `budget` received frames, then send the replies and give
 * the buffers back (one publish each, a kick only if asked). */
static unsigned rx_service(struct vnet_pair *p, struct qstat *st, unsigned budget)
{
	struct vnet_rx rx;
	unsigned n = 0;

	/* vnet_rx_next publishes the buffers of frames it drops itself
	 * (merged ones with rxbuf=N). */
	while (n < budget && vnet_rx_next(p, &rx)) {
		handle_frame(p, st, &rx);
		vnet_rx_recycle(p, rx.id);
		n++;
	}
	if (n) {
		vnet_tx_flush(p);
		vnet_rx_flush(p);
		if (!p->rx.want_irq)
			virtq_update_used_event(&p->rx);
		__atomic_store_n(&st->progress, st->progress + n, __ATOMIC_RELAXED);
	}
	vnet_tx_reclaim(p);
	return n;
}

/* idle=halt: give the host CPU back until the interrupt counted as c0
 * moves (the LAPIC timer bounds the sleep, so a lost interrupt only costs
 * time and still shows as missed). The vCPU blocks in the VMM's halt. */
static void halt_for_irq(struct qstat *st, uint64_t c0)
{
	lapic_timer_oneshot(TG_WAKE_VECTOR, HALT_BOUND_NS);
	tg_wait_irq(c0);
	lapic_timer_stop();
	st->halts++;
}

/* irq=1, queue 0: arm the used-ring interrupt, then wait for the handler
 * to count one (bounded). A timeout with frames waiting is a missed one.
 * With idle=halt, after spin_us of spinning the vCPU sleeps instead, as a
 * NAPI guest with an idle loop does. */
static void irq_wait(struct vnet_pair *p, struct qstat *st)
{
	uint64_t c0 = tg_net_irq_count, end, spin_end;

	if (virtq_update_used_event(&p->rx))
		return;                 /* already something to do */
	end = tsc_deadline_us(IRQ_WAIT_US);
	spin_end = tsc_deadline_us(prm.spin_us);
	while (tg_net_irq_count == c0) {
		if (stopped())
			return;
		if (tsc_passed(end)) {
			if (virtq_used_pending(&p->rx))
				st->irq_missed++;
			return;
		}
		if (prm.halt && tsc_passed(spin_end))
			halt_for_irq(st, c0);
		else
			cpu_pause();
	}
	st->irq_wakeups++;
}

/* Let the replies still in flight go out (bounded). */
static void tx_drain(struct vnet_pair *p, uint64_t us)
{
	uint64_t end = tsc_deadline_us(us);

	vnet_tx_flush(p);
	while (vnet_tx_inflight(p) && !tsc_passed(end)) {
		vnet_tx_reclaim(p);
		cpu_pause();
	}
}

/* Wait (bounded by progress) until the device has taken every TX frame:
 * the frames counted as sent are the frames the VMM consumed. */
static void tx_wait_all(struct vnet_pair *p, const char *when)
{
	uint64_t last_progress = rdtsc();

	vnet_tx_flush(p);
	while (vnet_tx_inflight(p)) {
		if (vnet_tx_reclaim(p))
			last_progress = rdtsc();
		else if (tsc_to_us(rdtsc() - last_progress) > STALL_US) {
			tg_printf("testguest: q%u tx stalled %s (%u in flight)\n", p->index, when,
				  vnet_tx_inflight(p));
			tg_exit(TG_EXIT_NET_STALL);
		}
		cpu_pause();
	}
}

/* ---- per-queue loops ------------------------------------------------------ */

static void echo_sink_worker(unsigned q)
{
	struct vnet_pair *p = &net.pair[q];
	struct qstat *st = &qs[q];
	int irq = q == 0 && prm.irq;
	uint64_t next_link = 0;

	while (!stopped()) {
		if (irq)
			irq_wait(p, st);
		rx_service(p, st, RX_BATCH);
		if (deadline && tsc_passed(deadline))
			set_stop();
		/* Queue 0 watches the link (a host interface that vanishes and
		 * comes back): two MMIO reads every LINK_POLL_US. */
		if (q == 0 && tsc_passed(next_link)) {
			vnet_link_poll(&net, irq ? &tg_net_irq_status : NULL);
			next_link = tsc_deadline_us(LINK_POLL_US);
		}
	}
	tx_drain(p, DRAIN_US);
}

/* Frame template of net-gen in TX buffer `id` of pair q: virtio header
 * and Ethernet/IPv4/UDP headers for a `size`-byte frame (the payload is
 * written per frame). Returns the unfolded checksum of the pseudo header
 * and the UDP header (or 0 with CSUM offload: the device sums). */
static uint32_t gen_template(struct vnet_pair *p, uint16_t id, unsigned size)
{
	uint8_t *buf = vnet_tx_buf(p, id), *frame = buf + VNET_HDR_LEN;
	struct virtio_net_hdr_v1 *h = (struct virtio_net_hdr_v1 *)buf;
	unsigned plen = size - UDP_FRAME_HLEN;
	struct udp_hdr *u = (struct udp_hdr *)(frame + ETH_HLEN + IP_HLEN);
	uint32_t pseudo = np_pseudo_sum(prm.self.ip, prm.peer_ip, (uint16_t)(UDP_HLEN + plen));
	uint32_t sum = 0;

	memset(h, 0, VNET_HDR_LEN);
	np_udp_headers(frame, &prm.self, peer_mac, prm.peer_ip,
		       (uint16_t)(prm.port + 1000 + p->index), prm.port, plen);
	if (prm.offload && vnet_has(&net, VIRTIO_NET_F_CSUM)) {
		/* Partial checksum: the field holds the folded pseudo-header
		 * sum, the device adds the rest from csum_start. */
		h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		h->csum_start = ETH_HLEN + IP_HLEN;
		h->csum_offset = 6;     /* offsetof(struct udp_hdr, csum) */
		u->csum = (uint16_t)~np_csum_fold(pseudo);
	} else {
		sum = np_csum_add(pseudo, u, UDP_HLEN);   /* csum field 0 */
	}
	tx_dirty[p->index][id] = 0;
	return sum;
}

/* The payload of datagram `seq` of this queue's flow into TX buffer `id`,
 * whose headers gen_template() wrote for `size` bytes (hsum: what it
 * returned), and its UDP checksum unless the device computes it. */
static void gen_payload(struct vnet_pair *p, uint16_t id, unsigned size, uint64_t seq,
			uint32_t hsum, int sw_csum)
{
	uint8_t *pl = vnet_tx_buf(p, id) + VNET_HDR_LEN + UDP_FRAME_HLEN;
	unsigned plen = size - UDP_FRAME_HLEN;

	np_seq_fill(pl, plen, (uint16_t)p->index, seq);
	if (sw_csum) {
		uint16_t c = np_csum_fold(np_csum_add(hsum, pl, plen));

		if (!c)
			c = 0xffff;
		__builtin_memcpy(pl - 2, &c, 2);        /* udp->csum */
	}
}

static void gen_worker(unsigned q)
{
	struct vnet_pair *p = &net.pair[q];
	struct qstat *st = &qs[q];
	int sw_csum = !(prm.offload && vnet_has(&net, VIRTIO_NET_F_CSUM));
	uint32_t hsum = 0;
	uint64_t seq = 0, t0, t1, last_progress;

	for (uint16_t id = 0; id < p->tx.num; id++)
		hsum = gen_template(p, id, prm.size);
	t0 = last_progress = rdtsc();
	for (unsigned iter = 0;; iter++) {
		unsigned n = 0;
		uint16_t id;

		if ((prm.count && seq >= prm.count) || stopped())
			break;
		if (deadline && !(iter & 15) && tsc_passed(deadline))
			break;
		while (n < GEN_BATCH && (!prm.count || seq < prm.count) &&
		       vnet_tx_get(p, &id)) {
			if (tx_dirty[q][id])
				gen_template(p, id, prm.size);
			gen_payload(p, id, prm.size, seq, hsum, sw_csum);
			vnet_tx_put(p, id, prm.size);
			seq++;
			n++;
		}
		if (n) {
			vnet_tx_flush(p);
			last_progress = rdtsc();
			__atomic_store_n(&st->progress, seq, __ATOMIC_RELAXED);
		} else if (tsc_to_us(rdtsc() - last_progress) > STALL_US) {
			tg_printf("testguest: q%u tx stalled after %llu frames (%u in flight)\n",
				  q, (unsigned long long)seq, vnet_tx_inflight(p));
			tg_exit(TG_EXIT_NET_STALL);
		}
		if (!(iter & 63))
			rx_service(p, st, RX_BATCH);    /* ARP/ping from the host */
	}
	tx_wait_all(p, "at the end");
	t1 = rdtsc();
	st->tx = seq;
	st->usecs = tsc_to_us(t1 - t0);
}

/* Frame length of datagram `seq` of a queue: cycles through size..size_max. */
static unsigned duplex_size(uint64_t seq)
{
	return prm.size + (unsigned)(seq % (prm.size_max - prm.size + 1));
}

/* net-duplex: both directions at once on this queue pair. TX sends flow q
 * (net-gen's datagrams, port+1000+q -> peer:port, sizes cycling) for `secs`
 * or `count`; in the same loop RX counts and checks the host's datagrams to
 * `port` (net-sink's checks) and answers ARP and ping. RX goes on after TX
 * ends, until the stop datagram (at most wait-secs more); then what is
 * still arriving is taken for DRAIN_US and every TX frame handed over. */
static void duplex_worker(unsigned q)
{
	struct vnet_pair *p = &net.pair[q];
	struct qstat *st = &qs[q];
	int sw_csum = !(prm.offload && vnet_has(&net, VIRTIO_NET_F_CSUM));
	uint64_t seq = 0, t0 = rdtsc(), t_end = 0, last_progress = t0, rx_until = 0, end;
	int sending = 1;

	while (!stopped()) {
		unsigned n = 0;
		uint16_t id;

		if (sending && ((prm.count && seq >= prm.count) || (deadline && tsc_passed(deadline)))) {
			sending = 0;
			vnet_tx_flush(p);
			rx_until = tsc_deadline_us(prm.wait_secs * 1000000);
		}
		while (sending && n < GEN_BATCH && (!prm.count || seq < prm.count) &&
		       vnet_tx_get(p, &id)) {
			unsigned size = duplex_size(seq);

			gen_payload(p, id, size, seq, gen_template(p, id, size), sw_csum);
			vnet_tx_put(p, id, size);
			seq++;
			n++;
		}
		if (n) {
			vnet_tx_flush(p);
			last_progress = rdtsc();
		} else if (sending && tsc_to_us(rdtsc() - last_progress) > STALL_US) {
			tg_printf("testguest: q%u tx stalled after %llu frames (%u in flight)\n",
				  q, (unsigned long long)seq, vnet_tx_inflight(p));
			tg_exit(TG_EXIT_NET_STALL);
		}
		rx_service(p, st, RX_BATCH);
		__atomic_store_n(&st->progress, seq + st->frames, __ATOMIC_RELAXED);
		if (!sending && !t_end && !vnet_tx_inflight(p))
			t_end = rdtsc();
		if (!sending && tsc_passed(rx_until))
			set_stop();
	}
	end = tsc_deadline_us(DRAIN_US);
	while (!tsc_passed(end))
		rx_service(p, st, RX_BATCH);
	tx_wait_all(p, "at the end");
	st->tx = seq;
	st->usecs = tsc_to_us((t_end ? t_end : rdtsc()) - t0);
}

static void run_worker(unsigned q)
{
	if (mode == NET_GEN)
		gen_worker(q);
	else if (mode == NET_DUPLEX)
		duplex_worker(q);
	else
		echo_sink_worker(q);
	__atomic_store_n(&qs[q].done, 1, __ATOMIC_RELEASE);
}

static void ap_worker(unsigned cpu)
{
	if (cpu < prm.queues)
		run_worker(cpu);
}

/* ---- setup and reports ---------------------------------------------------- */

static void resolve_peer(void)
{
	uint64_t end = tsc_deadline_us(ARP_TIMEOUT_US), next = 0;

	while (!__atomic_load_n(&peer_known, __ATOMIC_ACQUIRE)) {
		if (tsc_passed(end)) {
			tg_printf("testguest: no ARP reply from %u.%u.%u.%u\n",
				  prm.peer_ip[0], prm.peer_ip[1], prm.peer_ip[2],
				  prm.peer_ip[3]);
			tg_exit(TG_EXIT_NET_ARP);
		}
		if (tsc_passed(next)) {
			uint16_t id;
			uint8_t *out = tx_begin(&net.pair[0], &id);

			if (out) {
				vnet_tx_put(&net.pair[0], id,
					    np_arp_request(out, &prm.self, prm.peer_ip));
				vnet_tx_flush(&net.pair[0]);
			}
			next = tsc_deadline_us(ARP_RETRY_US);
		}
		/* The reply may come in on any queue. */
		for (unsigned q = 0; q < net.npairs; q++)
			rx_service(&net.pair[q], &qs[q], RX_BATCH);
		cpu_pause();
	}
}

/* Wait for every worker (bounded by progress, not by total time). */
static void wait_workers(void)
{
	uint64_t last_sum = ~0ull, since = rdtsc();

	for (;;) {
		uint64_t sum = 0;
		unsigned done = 0;

		for (unsigned q = 0; q < prm.queues; q++) {
			done += __atomic_load_n(&qs[q].done, __ATOMIC_ACQUIRE) ? 1 : 0;
			sum += __atomic_load_n(&qs[q].progress, __ATOMIC_RELAXED);
		}
		if (done == prm.queues)
			return;
		if (sum != last_sum) {
			last_sum = sum;
			since = rdtsc();
		} else if (tsc_to_us(rdtsc() - since) > WAIT_IDLE_US) {
			tg_printf("testguest: only %u of %u queue workers finished\n",
				  done, prm.queues);
			tg_exit(TG_EXIT_NET_CPUS);
		}
		delay_us(1000);
	}
}

#define U(x) ((unsigned long long)(x))

/* net-duplex: one line per flow and queue that saw it, for the soak's
 * accounting (the host knows what it sent per flow, not per queue). */
static void report_flows(void)
{
	for (unsigned q = 0; q < prm.queues; q++)
		for (unsigned f = 0; f < MAX_FLOWS; f++)
			if (flows[q][f].seen)
				tg_printf("testguest: flow %u q%u rx %llu next %llu\n", f, q,
					  U(flows[q][f].rx), U(flows[q][f].next));
}

static void report(void)
{
	struct qstat t;
	uint64_t kicks = 0, txframes = 0, rxerr = 0;

	memset(&t, 0, sizeof(t));
	for (unsigned q = 0; q < prm.queues; q++) {
		struct qstat *s = &qs[q];
		struct vnet_pair *p = &net.pair[q];

		switch (mode) {
		case NET_ECHO:
			tg_printf("testguest: q%u rx %llu tx %llu drops %llu frames %llu arp %llu icmp %llu other %llu bad %llu rxerr %llu rxkicks %llu txkicks %llu partial %llu\n",
				  q, U(s->rx), U(s->tx), U(s->drops), U(s->frames), U(s->arp),
				  U(s->icmp), U(s->other), U(s->bad), U(p->rx_errors),
				  U(p->rx.kicks), U(p->tx.kicks), U(s->partial));
			break;
		case NET_SINK:
			tg_printf("testguest: q%u rx %llu lost %llu reorders %llu bad %llu badsum %llu corrupt %llu flows %llu frames %llu arp %llu icmp %llu other %llu drops %llu rxerr %llu rxkicks %llu partial %llu\n",
				  q, U(s->rx), U(s->lost), U(s->reorders), U(s->bad), U(s->badsum),
				  U(s->corrupt), U(s->flows), U(s->frames), U(s->arp), U(s->icmp), U(s->other),
				  U(s->drops), U(p->rx_errors), U(p->rx.kicks), U(s->partial));
			break;
		case NET_GEN:
			tg_printf("testguest: q%u tx %llu kicks %llu usecs %llu pps %llu frames %llu arp %llu icmp %llu\n",
				  q, U(s->tx), U(p->tx.kicks), U(s->usecs),
				  U(s->usecs ? s->tx * 1000000 / s->usecs : 0), U(s->frames),
				  U(s->arp), U(s->icmp));
			break;
		case NET_DUPLEX:
			tg_printf("testguest: q%u rx %llu lost %llu reorders %llu bad %llu badsum %llu corrupt %llu flows %llu moved %llu frames %llu rxerr %llu tx %llu txframes %llu drops %llu usecs %llu pps %llu arp %llu icmp %llu other %llu rxkicks %llu txkicks %llu partial %llu\n",
				  q, U(s->rx), U(s->lost), U(s->reorders), U(s->bad), U(s->badsum),
				  U(s->corrupt), U(s->flows), U(s->moved), U(s->frames), U(p->rx_errors),
				  U(s->tx), U(p->tx_frames), U(s->drops), U(s->usecs),
				  U(s->usecs ? s->tx * 1000000 / s->usecs : 0), U(s->arp), U(s->icmp),
				  U(s->other), U(p->rx.kicks), U(p->tx.kicks), U(s->partial));
			break;
		}
		t.rx += s->rx;
		t.tx += s->tx;
		t.drops += s->drops;
		t.lost += s->lost;
		t.reorders += s->reorders;
		t.bad += s->bad;
		t.badsum += s->badsum;
		t.corrupt += s->corrupt;
		t.moved += s->moved;
		t.frames += s->frames;
		txframes += p->tx_frames;
		rxerr += p->rx_errors;
		t.usecs = s->usecs > t.usecs ? s->usecs : t.usecs;
		kicks += p->tx.kicks;
	}
	if (prm.irq)
		tg_printf("testguest: irq count %llu wakeups %llu missed %llu halts %llu status 0x%x\n",
			  U(tg_net_irq_count), U(qs[0].irq_wakeups), U(qs[0].irq_missed),
			  U(qs[0].halts), tg_net_irq_status);
	switch (mode) {
	case NET_ECHO:
		tg_printf("testguest: net-echo done rx %llu tx %llu drops %llu\n",
			  U(t.rx), U(t.tx), U(t.drops));
		break;
	case NET_SINK:
		tg_printf("testguest: net-sink done rx %llu lost %llu reorders %llu bad %llu badsum %llu corrupt %llu\n",
			  U(t.rx), U(t.lost), U(t.reorders), U(t.bad), U(t.badsum), U(t.corrupt));
		break;
	case NET_GEN:
		tg_printf("testguest: net-gen done tx %llu kicks %llu usecs %llu pps %llu\n",
			  U(t.tx), U(kicks), U(t.usecs),
			  U(t.usecs ? t.tx * 1000000 / t.usecs : 0));
		break;
	case NET_DUPLEX:
		report_flows();
		tg_printf("testguest: net-duplex done rx %llu lost %llu reorders %llu bad %llu badsum %llu corrupt %llu moved %llu tx %llu txframes %llu drops %llu frames %llu rxerr %llu\n",
			  U(t.rx), U(t.lost), U(t.reorders), U(t.bad), U(t.badsum), U(t.corrupt),
			  U(t.moved), U(t.tx), U(txframes), U(t.drops), U(t.frames), U(rxerr));
		break;
	}
}

/* rxbuf=N: every buffer's guards once more, after the traffic; one line. */
static void report_guards(void)
{
	uint64_t checks = 0, broken = 0;
	struct vnet_pair *first = NULL;

	for (unsigned q = 0; q < prm.queues; q++) {
		struct vnet_pair *p = &net.pair[q];

		for (uint16_t id = 0; id < p->rx.num; id++)
			vnet_rx_guard_check(p, id);
		checks += p->guard_checks;
		broken += p->guard_broken;
		if (p->guard_broken && !first)
			first = p;
	}
	if (!first) {
		tg_printf("testguest: rx guards ok buffers %u bytes %u checks %llu\n",
			  net.pair[0].rx.num * prm.queues, net.rxbuf, U(checks));
		return;
	}
	tg_printf("testguest: rx guard broken q%u buffer %u offset %ld byte 0x%02x expected 0x%02x (%llu of %llu checks)\n",
		  first->index, first->guard_id, first->guard_off, first->guard_got, first->guard_want,
		  U(broken), U(checks));
	tg_exit(TG_EXIT_NET_GUARD);
}

static void setup_irq(void)
{
	unsigned gsi = net.dev.irq;
	uint32_t pending;

	if (gsi >= ioapic_entries()) {
		tg_printf("testguest: irq=1: GSI %u is not on the IOAPIC\n", gsi);
		tg_exit(TG_EXIT_NET_SETUP);
	}
	tg_net_irq_mmio = net.dev.base;
	net.pair[0].rx.want_irq = 1;
	ioapic_route(gsi, TG_NET_IRQ_VECTOR, lapic_id(), prm.irq_level);
	/* A line the device raised earlier (e.g. for the control queue) would
	 * stay high and hide the next edge: acknowledge what is pending. */
	pending = vmmio_read(&net.dev, VIRTIO_MMIO_INTERRUPT_STATUS);
	if (pending)
		vmmio_write(&net.dev, VIRTIO_MMIO_INTERRUPT_ACK, pending);
}

static __attribute__((noreturn)) void net_run(enum net_mode m)
{
	int r;

	mode = m;
	parse_params();
	r = vnet_init(&net, prm.queues, prm.offload, prm.verbose);
	if (r)
		tg_exit((uint32_t)r);
	memcpy(prm.self.mac, net.mac, ETH_ALEN);

	if (vnet_has(&net, VIRTIO_NET_F_MQ)) {
		unsigned k = prm.pairs >= 0 ? (unsigned)prm.pairs : prm.queues;

		r = vnet_ctrl_mq(&net, k);
		if (r < 0) {
			tg_printf("testguest: ctrl mq %u -> no answer\n", k);
			tg_exit(TG_EXIT_NET_CTRL);
		}
		tg_printf("testguest: ctrl mq %u -> %s\n", k, r ? "ERR" : "OK");
	} else if (prm.pairs >= 0) {
		tg_printf("testguest: pairs=%d needs VIRTIO_NET_F_MQ\n", prm.pairs);
		tg_exit(TG_EXIT_NET_SETUP);
	}
	if (prm.irq)
		setup_irq();

	if (prm.rx_pause_ms) {
		tg_printf("testguest: rx paused for %llu ms\n", U(prm.rx_pause_ms));
		delay_us(prm.rx_pause_ms * 1000);
	}
	for (unsigned q = 0; q < prm.queues; q++)
		vnet_rx_post_all(&net.pair[q]);
	if (prm.rx_pause_ms)
		tg_printf("testguest: rx buffers posted\n");

	if (mode == NET_GEN || mode == NET_DUPLEX) {
		resolve_peer();
		tg_printf("testguest: peer %u.%u.%u.%u is %02x:%02x:%02x:%02x:%02x:%02x\n",
			  prm.peer_ip[0], prm.peer_ip[1], prm.peer_ip[2], prm.peer_ip[3],
			  peer_mac[0], peer_mac[1], peer_mac[2], peer_mac[3], peer_mac[4],
			  peer_mac[5]);
	}
	if (prm.secs)
		deadline = tsc_deadline_us(prm.secs * 1000000);
	if (prm.queues > 1 && smp_start_aps(ap_worker, AP_TIMEOUT_US) < prm.queues) {
		tg_printf("testguest: %u queues need %u vCPUs up\n", prm.queues, prm.queues);
		tg_exit(TG_EXIT_NET_CPUS);
	}
	tg_printf("testguest: %s ready ip %u.%u.%u.%u port %u queues %u\n", mode_name[mode],
		  prm.self.ip[0], prm.self.ip[1], prm.self.ip[2], prm.self.ip[3],
		  prm.port, prm.queues);
	run_worker(0);
	wait_workers();
	if (prm.irq)
		ioapic_mask(net.dev.irq);
	report();
	if (net.rxbuf)
		report_guards();
	tg_reset();
}

/* net-up: the device up and every queue's data path running, then a reset
 * at once: one ARP request for `peer` on each queue, waited for until the
 * device has taken it (a worker consumes TX only once its queue is
 * started). Nothing is waited for from the host. resets=N: N times more,
 * each after a device reset (Status = 0, then the same bring-up with its
 * VQ_PAIRS_SET), before the machine's reset. */
static void net_up_once(void)
{
	int r = vnet_init(&net, prm.queues, prm.offload, prm.verbose);
	if (r)
		tg_exit((uint32_t)r);
	memcpy(prm.self.mac, net.mac, ETH_ALEN);
	if (vnet_has(&net, VIRTIO_NET_F_MQ)) {
		r = vnet_ctrl_mq(&net, prm.queues);
		tg_printf("testguest: ctrl mq %u -> %s\n", prm.queues, r < 0 ? "no answer" : r ? "ERR" : "OK");
		if (r)
			tg_exit(TG_EXIT_NET_CTRL);
	}
	for (unsigned q = 0; q < prm.queues; q++) {
		struct vnet_pair *p = &net.pair[q];
		uint16_t id;
		uint8_t *out;

		vnet_rx_post_all(p);
		out = tx_begin(p, &id);
		if (!out) {
			tg_printf("testguest: q%u has no TX buffer\n", q);
			tg_exit(TG_EXIT_NET_STALL);
		}
		vnet_tx_put(p, id, np_arp_request(out, &prm.self, prm.peer_ip));
		tx_wait_all(p, "bringing the device up");
	}
}

void test_net_up(void)
{
	uint64_t resets = 0;

	mode = NET_ECHO;        /* its parameters: no peer to resolve, no count */
	parse_params();
	if (cmdline_get_u64("resets", 0, &resets) < 0 || resets > 16) {
		tg_printf("testguest: bad resets=%s (0 to 16)\n", cmdline_get("resets", ""));
		tg_exit(TG_EXIT_BAD_CMDLINE);
	}
	for (uint64_t i = 0; i <= resets; i++)
		net_up_once();
	tg_printf("testguest: net-up queues %u, %llu device resets\n", prm.queues, (unsigned long long)resets);
	tg_reset();
}

void test_net_echo(void)
{
	net_run(NET_ECHO);
}

void test_net_gen(void)
{
	net_run(NET_GEN);
}

void test_net_sink(void)
{
	net_run(NET_SINK);
}

void test_net_duplex(void)
{
	net_run(NET_DUPLEX);
}
