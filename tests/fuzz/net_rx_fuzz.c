/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the RX side of the data path (net/datapath.c: dp_rx_prepare,
 * dp_rx_complete, dp_rx_deliver, dp_rx_release_all, dp_flush) over a real
 * virtqueue in fuzzed guest memory, with a fake backend: the harness plays
 * the kernel, "reading" frames into the iovecs a prepared read hands out
 * (as readv or io_uring would) or handing frames over whole (as the packet
 * ring does).
 *
 * The input decides the guest's RX ring (chains of any sizes, one-byte
 * segments, read-only buffers, buffers smaller than the 12-byte header,
 * indirect tables, garbage), MRG_RXBUF on or off, the largest frame, the RX
 * filter's answers, frame lengths and contents, read results (short,
 * oversized, errors, cancellation) and the order of everything, with up to
 * four reads in flight.
 *
 * Frames for dp_rx_deliver_frame (the packet ring's path) may be GSO
 * frames of any shape from the network; for a guest without TSO they go
 * through net/gso.c's software segmentation, each segment delivered.
 *
 * Checked: a prepared read is the writable buffers of chains the device
 * holds plus the discard tail, within the read limits, its capacity adds
 * up; a frame becomes used entries that fill chains in order, add up to
 * its length, never exceed a chain, and say so in num_buffers (1 without
 * MRG_RXBUF); the device writes nothing but its used ring and writable
 * buffers it holds; "no buffers" re-arms kicks; every frame is counted
 * once (delivered, dropped, filtered or an error); waiting (0) always has
 * a wake-up (RX kicks re-armed, or a read in flight); a broken ring is
 * reported once and stays broken; at the end every chain is returned.
 *
 * Found while this was written and fixed in datapath.c since (c309b02):
 * dp_rx_gather spun when every slot was taken by reads in flight and the
 * guest had posted more, and dp_rx_deliver recursed without bound at the
 * iovec limit; inputs for both stay in the corpus (repro-*). */
#include <errno.h>
#include <linux/virtio_net.h>
#include <setjmp.h>
#include <linux/virtio_ring.h>
#include <string.h>

#include "net/datapath.h"
#include "tests/fuzz/fuzz_common.h"

#define HDR 12u
#define MAX_READS 4
#define FRAME_MAX (65550u + HDR)

enum {
	OP_PREPARE = FUZZ_DRIVER_OPS,
	OP_COMPLETE,
	OP_DELIVER,
	OP_KICKED,
	OP_FLUSH,
	OP_RELEASE_ALL,
	OP_DELIVER_FRAME,   /* the packet ring's way: GSO frames cut for a guest without TSO */
	OP_COUNT,
};
_Static_assert(OP_COUNT <= 32, "ops are the input byte's low 5 bits");

struct state {
	struct fuzz_vq rx;
	struct net_guest guest;
	struct net_queue_pair qp;
	struct dp_queue *dp;
	struct dp_read read[MAX_READS];
	bool inflight[MAX_READS];
	unsigned fails;
	uint8_t accept_mode;   /* how the fake RX filter answers */
	/* A frame dp_rx_deliver_frame has not finished (it ran out of guest
	 * buffers): tried again, from segment gso_done, as net/packet.c does. */
	bool frame_pending;
	uint32_t pending_len;
	unsigned gso_done;
	/* Pushes made during the current step. */
	struct { uint16_t head; uint32_t len; } log[DP_READ_MAX_CHAINS + 2];
	unsigned nr_log;
};

static struct state s;
static uint8_t frame[FRAME_MAX], gso_frame[FRAME_MAX];

/* FUZZ_SKIP_KNOWN_HANGS=1: an input that makes the data path spin ends
 * there (a known datapath.c bug), so fuzzing goes on past it. */
static jmp_buf spin_exit;
static void on_spin(struct fuzz_vq *v)
{
	(void)v;
	longjmp(spin_exit, 1);
}

static void on_fail(void *opaque, const char *why)
{
	(void)opaque;
	FUZZ_CHECK(why && *why && !strchr(why, '\n'), "ring error reason is not one line");
	s.fails++;
	FUZZ_CHECK(s.fails == 1, "ring failure reported %u times", s.fails);
}

static void on_signal(void *opaque) { (void)opaque; }

static void on_log(void *opaque, const char *line)
{
	(void)opaque;
	FUZZ_CHECK(line && *line && !strchr(line, '\n'), "data-path log line is not one line");
}

static bool on_accept(void *opaque, const uint8_t *dst)
{
	(void)opaque;
	switch (s.accept_mode % 4) {
	case 0: return true;
	case 1: return !(dst[0] & 1);            /* no multicast */
	case 2: return dst[5] != 0x5a;
	default: return false;
	}
}

/* The ring ops with a log of this step's pushes on top. */
static void log_push(void *r, uint16_t head, uint32_t len)
{
	if (s.nr_log < sizeof(s.log) / sizeof(s.log[0])) {
		s.log[s.nr_log].head = head;
		s.log[s.nr_log].len = len;
	}
	s.nr_log++;
	fuzz_ring_ops.push(r, head, len);
}

static struct net_ring_ops ops;

static uint64_t counted(void)
{
	const struct net_queue_stats *st = &s.qp.stats;
	return st->rx_frames + st->rx_dropped + st->rx_filtered + st->rx_errors;
}

/* The data path returned 0: it waits, and something must wake it. Either
 * the guest (RX kicks re-armed) or a read in flight (no slot is empty: a
 * completion frees one, no kick could help). */
static void check_kicks_armed(const char *what)
{
	struct virtq *q = &s.rx.q;
	if (s.dp->rx_nr_empty == 0 && s.dp->rx_reads_inflight > 0)
		return;
	if (s.rx.event_idx)
		FUZZ_CHECK(*q->avail_event == q->last_avail, "%s without buffers: avail_event %u, last_avail %u",
			   what, *q->avail_event, q->last_avail);
	else
		FUZZ_CHECK(!(q->used->flags & VRING_USED_F_NO_NOTIFY), "%s without buffers, kicks off", what);
}

static void check_read(const struct dp_read *r)
{
	FUZZ_CHECK(r->nr_chains >= 1 && r->nr_chains <= DP_READ_MAX_CHAINS, "read of %u chains",
		   r->nr_chains);
	FUZZ_CHECK(r->nr_iov >= 2 && r->nr_iov <= DP_READ_MAX_IOV, "read of %u iovecs", r->nr_iov);
	if (!s.qp.mrg_rxbuf)
		FUZZ_CHECK(r->nr_chains == 1, "%u chains for one read without MRG_RXBUF", r->nr_chains);
	const struct iovec *tail = &r->iov[r->nr_iov - 1];
	FUZZ_CHECK(tail->iov_base == s.dp->discard && tail->iov_len == DP_DISCARD_BYTES,
		   "the last iovec is not the discard tail");
	uint64_t cap = 0;
	for (unsigned i = 0; i + 1 < r->nr_iov; i++) {
		unsigned reg;
		size_t off;
		FUZZ_CHECK(fuzz_guest_holds(s.rx.g, r->iov[i].iov_base, r->iov[i].iov_len) &&
			   fuzz_guest_locate(s.rx.g, r->iov[i].iov_base, &reg, &off),
			   "read iovec %u is not in guest memory", i);
		for (size_t b = 0; b < r->iov[i].iov_len; b++)
			FUZZ_CHECK(s.rx.may_write[reg][off + b], "read iovec %u covers guest memory "
				   "no held chain lets the device write", i);
		cap += r->iov[i].iov_len;
	}
	FUZZ_CHECK(cap == r->capacity, "capacity %u, iovecs add up to %llu", r->capacity,
		   (unsigned long long)cap);
}

/* A frame's bytes: a virtio_net_hdr_v1 and a packet, its first bytes
 * (header, MACs, IP and TCP/UDP headers) from the input, the rest filler. */
static uint32_t make_frame_in(uint8_t *buf, struct fz *in)
{
	uint32_t len = fz_u16(in);
	uint8_t how = fz_u8(in);
	if (how & 1)
		len += 0x10000;                  /* GSO-sized */
	if (how & 2)
		len %= 64;                       /* runts and tiny frames */
	len = len > FRAME_MAX ? FRAME_MAX : len;
	size_t got;
	const uint8_t *p = fz_take(in, fz_u8(in), &got);
	memset(buf, 0x3c, len);
	memcpy(buf, p, got < len ? got : len);
	return len;
}

static uint32_t make_frame(struct fz *in)
{
	return make_frame_in(frame, in);
}

/* What the kernel's readv does: fill the iovecs in order, at most len
 * (never more than the largest frame, FRAME_MAX). */
static ssize_t kernel_read(struct dp_read *r, uint32_t len)
{
	size_t off = 0;
	len = len > FRAME_MAX ? FRAME_MAX : len;
	for (unsigned i = 0; i < r->nr_iov && off < len; i++) {
		size_t take = len - off < r->iov[i].iov_len ? len - off : r->iov[i].iov_len;
		memcpy(r->iov[i].iov_base, frame + off, take);
		off += take;
	}
	return (ssize_t)off;
}

/* Bytes [off, off+2) of what a read delivered, little endian. */
static uint16_t read_u16(const struct dp_read *r, size_t off)
{
	uint8_t b[2];
	unsigned got = 0;
	for (unsigned i = 0; i < r->nr_iov && got < 2; i++) {
		while (got < 2 && off < r->iov[i].iov_len)
			b[got++] = ((const uint8_t *)r->iov[i].iov_base)[off++];
		off = off >= r->iov[i].iov_len ? off - r->iov[i].iov_len : 0;
	}
	return (uint16_t)(b[0] | b[1] << 8);
}

/* A delivered frame's used entries: in order, full chains but the last,
 * adding up to n; num_buffers says how many. */
static void check_frame_pushed(const struct dp_read *r, ssize_t n)
{
	FUZZ_CHECK(s.nr_log >= 1 && s.nr_log <= r->nr_chains, "a frame in %u used entries of %u chains",
		   s.nr_log, r->nr_chains);
	uint64_t sum = 0;
	for (unsigned i = 0; i < s.nr_log; i++) {
		const struct guest_chain *c = &s.dp->rx_chain[r->slot[i]];
		FUZZ_CHECK(s.log[i].head == c->head, "used entry %u is head %u, chain %u is %u", i,
			   s.log[i].head, i, c->head);
		FUZZ_CHECK(i + 1 == s.nr_log || s.log[i].len == c->writable_len,
			   "used entry %u not full (%u of %u) before the last", i, s.log[i].len,
			   c->writable_len);
		sum += s.log[i].len;
	}
	FUZZ_CHECK(sum == (uint64_t)n, "used lengths add up to %llu, frame of %zd",
		   (unsigned long long)sum, n);
	FUZZ_CHECK(read_u16(r, offsetof(struct virtio_net_hdr_v1, num_buffers)) == s.nr_log,
		   "num_buffers %u, %u used entries", read_u16(r, 10), s.nr_log);
}

static void engine_step(uint8_t op, struct fz *in)
{
	s.nr_log = 0;
	switch (op) {
	case OP_PREPARE: {
		unsigned i = fz_u8(in) % MAX_READS;
		if (s.inflight[i])
			break;
		int rc = dp_rx_prepare(s.dp, &s.read[i]);
		FUZZ_CHECK(rc >= -1 && rc <= 1, "dp_rx_prepare returned %d", rc);
		FUZZ_CHECK((rc < 0) == (s.fails > 0), "prepare returned %d with %u failures", rc, s.fails);
		if (rc == 0)
			check_kicks_armed("prepare");
		if (rc == 1) {
			check_read(&s.read[i]);
			s.inflight[i] = true;
		}
		break;
	}
	case OP_COMPLETE: {
		uint8_t how = fz_u8(in);
		unsigned i = how % MAX_READS;
		if (!s.inflight[i])
			break;
		struct dp_read *r = &s.read[i];
		s.inflight[i] = false;
		ssize_t n;
		switch ((how >> 2) % 8) {
		case 0: n = -EAGAIN; break;
		case 1: n = -ECANCELED; break;
		case 2: n = -EIO; break;
		case 3: /* too big for the buffers (if they hold less than a frame can be): dropped */
			n = kernel_read(r, r->capacity + 1 + fz_u8(in));
			break;
		default: n = kernel_read(r, make_frame(in)); break;
		}
		uint64_t before = counted(), frames = s.qp.stats.rx_frames;
		bool silent = n == -EAGAIN || n == -ECANCELED;
		static struct dp_read was;   /* complete clears the chain list */
		was = *r;
		dp_rx_complete(s.dp, r, n);
		FUZZ_CHECK(counted() == before + !silent, "a completed read counted %llu times",
			   (unsigned long long)(counted() - before));
		if (s.qp.stats.rx_frames != frames)
			check_frame_pushed(&was, n);
		else
			FUZZ_CHECK(s.nr_log == 0, "%u used entries for a frame not delivered", s.nr_log);
		break;
	}
	case OP_DELIVER: {
		uint32_t len = make_frame(in);
		uint64_t before = counted();
		int rc = dp_rx_deliver(s.dp, frame, len);
		FUZZ_CHECK(rc >= -1 && rc <= 1, "dp_rx_deliver returned %d", rc);
		FUZZ_CHECK((rc < 0) == (s.fails > 0), "deliver returned %d with %u failures", rc, s.fails);
		FUZZ_CHECK(counted() == before + (rc == 1), "a delivered frame counted %llu times",
			   (unsigned long long)(counted() - before));
		if (rc == 0)
			check_kicks_armed("deliver");
		break;
	}
	case OP_DELIVER_FRAME: {
		if (!s.frame_pending) {
			s.pending_len = make_frame_in(gso_frame, in);
			s.gso_done = 0;
		}
		unsigned pops = s.rx.pops;
		int rc = dp_rx_deliver_frame(s.dp, gso_frame, s.pending_len, &s.gso_done);
		FUZZ_CHECK(rc >= -1 && rc <= 1, "dp_rx_deliver_frame returned %d", rc);
		/* A frame it cannot cut is dropped without looking at the ring,
		 * so that one comes back 1 even on a broken ring. */
		FUZZ_CHECK((rc < 0) == (s.fails > 0) ||
			   (rc == 1 && s.nr_log == 0 && s.rx.pops == pops),
			   "deliver_frame returned %d with %u failures", rc, s.fails);
		s.frame_pending = rc == 0;
		if (rc == 1)
			FUZZ_CHECK(s.gso_done == 0, "a finished frame left %u segments done", s.gso_done);
		if (rc == 0)
			check_kicks_armed("deliver_frame");
		break;
	}
	case OP_KICKED:
		dp_rx_kicked(s.dp);
		break;
	case OP_FLUSH:
		dp_flush(s.dp);
		FUZZ_CHECK(s.rx.unpublished == 0, "flush left %u used entries unpublished",
			   s.rx.unpublished);
		break;
	case OP_RELEASE_ALL: {
		bool any = false;
		for (unsigned i = 0; i < MAX_READS; i++)
			any |= s.inflight[i];
		if (!any)   /* a reset: the engine has cancelled its reads first */
			dp_rx_release_all(s.dp);
		break;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_init(data, size);
	struct fuzz_guest g;
	fuzz_guest_for_rings(&g, &in);
	memset(&s, 0, sizeof(s));
	fuzz_vq_setup(&s.rx, &g, &in, 0, "rx");
	s.rx.chains_writable = true;
	uint8_t mode = fz_u8(&in);
	if (!s.rx.live)
		goto out;

	ops = fuzz_ring_ops;
	ops.push = log_push;
	s.accept_mode = mode >> 2;
	s.guest = (struct net_guest){ .ops = &ops, .opaque = &s, .signal = on_signal, .fail = on_fail,
				      .rx_accept = (mode & 2) ? on_accept : NULL, .log = on_log };
	static struct net_queue_io io;
	io = (struct net_queue_io){ .fd = -1 };
	s.qp = (struct net_queue_pair){ .guest = &s.guest, .io = &io, .vnet_hdr_len = HDR,
					.mrg_rxbuf = mode & 1, .rx_ring_size = s.rx.size,
					.active = true };
	/* The largest frame: a 1500-byte MTU, a 64 KiB GSO frame, or small. */
	static const uint32_t frame_max[4] = { HDR + 14 + 4 + 1500, FRAME_MAX, HDR + 64, HDR + 1 };
	s.qp.rx_frame_max = frame_max[(mode >> 4) & 3];
	/* What the guest takes of GSO frames (GUEST_TSO4 / TSO6 and ECN). */
	s.qp.rx_offloads = (mode & 0x40 ? NET_RX_TSO4 : 0) | (mode & 0x80 ? NET_RX_TSO6 | NET_RX_ECN : 0);
	s.qp.rx = (struct net_ring){ .ring = &s.rx.q, .kick_fd = -1 };
	s.dp = dp_queue_create(&s.qp);
	FUZZ_CHECK(s.dp, "dp_queue_create");
	if (fuzz_skip_known_hangs()) {
		s.rx.on_spin = on_spin;
		if (setjmp(spin_exit)) {
			dp_queue_free(s.dp);
			goto out;
		}
	}

	while (!fz_empty(&in)) {
		/* Op numbers are stable (a new op takes a free number): the
		 * low 5 bits, anything past the last op does nothing. */
		uint8_t op = fz_u8(&in) & 31;
		if (op >= OP_COUNT)
			continue;
		if (fuzz_vq_driver_op(&s.rx, op, &in))
			continue;
		engine_step(op, &in);
		fuzz_vq_end_step(&s.rx);
	}
	/* Stop: reads in flight are cancelled, held buffers given back. */
	for (unsigned i = 0; i < MAX_READS; i++)
		if (s.inflight[i])
			dp_rx_complete(s.dp, &s.read[i], -ECANCELED);
	dp_rx_release_all(s.dp);
	dp_flush(s.dp);
	fuzz_vq_end_step(&s.rx);
	fuzz_vq_check_writes(&s.rx);
	FUZZ_CHECK(s.rx.nr_held == 0, "%u RX chains never returned to the guest", s.rx.nr_held);
	dp_queue_free(s.dp);
out:
	fuzz_vq_free(&s.rx);
	fuzz_guest_free(&g);
	return 0;
}
