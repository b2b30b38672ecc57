/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the TX side of the data path (net/datapath.c: dp_tx_pop,
 * dp_tx_complete, dp_flush) over a real virtqueue in fuzzed guest memory,
 * through the ring ops virtio-net gives the data path.
 *
 * The input is a small guest, the TX queue's layout and then steps: the
 * guest posting chains (headers and frames of any shape, writable parts,
 * one-byte segments, indirect tables, garbage), rewriting memory and
 * indices, interleaved with what an engine does: pop a frame and write it
 * (writev to /dev/null, and every byte read), complete it now or later and
 * out of order, with success or an error, drain the ring as the epoll
 * engine does, flush, take a kick.
 *
 * Checked: every frame handed out is a readable-only chain longer than the
 * header, inside guest memory; every chain taken is returned exactly once,
 * with length 0; the device writes nothing but its used ring; a drained
 * queue re-arms kicks (or the guest would stall); a drain loop ends; a
 * broken ring is reported once and stays broken; the counters add up. */
#include <errno.h>
#include <fcntl.h>
#include <linux/virtio_ring.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "net/datapath.h"
#include "tests/fuzz/fuzz_common.h"

#define HDR 12u
#define MAX_INFLIGHT 8

enum {
	OP_TX_ONE = FUZZ_DRIVER_OPS,
	OP_COMPLETE,
	OP_DRAIN,
	OP_FLUSH,
	OP_KICK,
	OP_COUNT,
};
_Static_assert(OP_COUNT <= 32, "ops are the input byte's low 5 bits");

struct state {
	struct fuzz_vq tx;
	struct net_guest guest;
	struct net_queue_pair qp;
	struct dp_queue *dp;
	unsigned fails;
	struct guest_chain inflight[MAX_INFLIGHT];
	unsigned nr_inflight;
	/* What the counters must say. */
	uint64_t frames, bytes, errors, dropped, taken;
	uint8_t sum;   /* every byte of every frame, read */
};

static int null_fd = -1;

static void on_fail(void *opaque, const char *why)
{
	struct state *s = opaque;
	FUZZ_CHECK(why && *why && !strchr(why, '\n'), "ring error reason is not one line");
	s->fails++;
	FUZZ_CHECK(s->fails == 1, "ring failure reported %u times", s->fails);
}

static void on_signal(void *opaque) { (void)opaque; }

/* What an engine does with a frame: hand the iovecs to the kernel. */
static ssize_t write_frame(struct state *s, const struct guest_chain *c)
{
	for (unsigned i = 0; i < c->nr_readable; i++) {
		const uint8_t *p = c->iov[i].iov_base;
		for (size_t b = 0; b < c->iov[i].iov_len; b++)
			s->sum = (uint8_t)(s->sum + p[b]);
	}
	ssize_t n = writev(null_fd, c->iov, (int)c->nr_readable);
	FUZZ_CHECK(n == (ssize_t)c->readable_len, "writev wrote %zd of %u", n, c->readable_len);
	return n;
}

static void complete(struct state *s, const struct guest_chain *c, ssize_t n)
{
	dp_tx_complete(s->dp, c, n);
	if (n == -ECANCELED) {
		s->dropped++;   /* cancelled in flight (a stopping worker): dropped, not failed */
	} else if (n < 0) {
		s->errors++;
	} else {
		s->frames++;
		s->bytes += c->readable_len - HDR;
	}
}

/* One dp_tx_pop; 1 with *c a frame to send. */
static int take(struct state *s, struct guest_chain *c)
{
	int rc = dp_tx_pop(s->dp, c);
	FUZZ_CHECK(rc >= -1 && rc <= 1, "dp_tx_pop returned %d", rc);
	FUZZ_CHECK((rc < 0) == (s->fails > 0), "dp_tx_pop returned %d with %u failures", rc, s->fails);
	if (rc == 1) {
		s->taken++;
		FUZZ_CHECK(c->nr_writable == 0 && c->readable_len > HDR,
			   "a TX frame with %u writable segments and %u readable bytes", c->nr_writable,
			   c->readable_len);
	}
	if (rc == 0) {
		/* Drained: the guest must be asked to kick, or it never will. */
		struct virtq *q = &s->tx.q;
		if (s->tx.event_idx)
			FUZZ_CHECK(*q->avail_event == q->last_avail, "drained, avail_event %u, last_avail %u",
				   *q->avail_event, q->last_avail);
		else
			FUZZ_CHECK(!(q->used->flags & VRING_USED_F_NO_NOTIFY), "drained with kicks off");
	}
	return rc;
}

static ssize_t result_from(struct state *s, const struct guest_chain *c, uint8_t how)
{
	switch (how % 4) {
	case 0: return write_frame(s, c);
	case 1: return -EAGAIN;
	case 2: return -EIO;
	default: write_frame(s, c); return (ssize_t)(c->readable_len / 2);   /* short write */
	}
}

static void engine_step(struct state *s, uint8_t op, struct fz *in)
{
	struct guest_chain c;
	switch (op) {
	case OP_TX_ONE: {
		uint8_t how = fz_u8(in);
		if ((how & 0x80) && s->nr_inflight == MAX_INFLIGHT)
			break;
		if (take(s, &c) != 1)
			break;
		if (how & 0x80)   /* in flight: completed later, maybe out of order */
			s->inflight[s->nr_inflight++] = c;
		else
			complete(s, &c, result_from(s, &c, how));
		break;
	}
	case OP_COMPLETE: {
		uint8_t how = fz_u8(in);
		if (!s->nr_inflight)
			break;
		unsigned i = (how >> 2) % s->nr_inflight;
		complete(s, &s->inflight[i], result_from(s, &s->inflight[i], how));
		s->inflight[i] = s->inflight[--s->nr_inflight];
		break;
	}
	case OP_DRAIN: {
		/* The epoll engine's loop: it must end (the guest cannot add
		 * buffers while we run, so at most size chains are there). */
		unsigned rounds = 0;
		while (take(s, &c) > 0) {
			complete(s, &c, write_frame(s, &c));
			FUZZ_CHECK(++rounds <= 2u * s->tx.size + 2, "TX drain does not end");
		}
		break;
	}
	case OP_FLUSH:
		dp_flush(s->dp);
		FUZZ_CHECK(s->tx.unpublished == 0, "flush left %u used entries unpublished",
			   s->tx.unpublished);
		break;
	case OP_KICK:
		dp_tx_kicked(s->dp);
		break;
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	FUZZ_CHECK(null_fd >= 0, "cannot open /dev/null");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_init(data, size);
	struct fuzz_guest g;
	fuzz_guest_for_rings(&g, &in);
	static struct state s;
	memset(&s, 0, sizeof(s));
	fuzz_vq_setup(&s.tx, &g, &in, 1, "tx");
	s.tx.chains_writable = false;   /* TX buffers are the guest's to write */
	if (!s.tx.live)
		goto out;

	s.guest = (struct net_guest){ .ops = &fuzz_ring_ops, .opaque = &s, .signal = on_signal,
				      .fail = on_fail };
	static struct net_queue_io io;
	io = (struct net_queue_io){ .fd = null_fd };
	s.qp = (struct net_queue_pair){ .guest = &s.guest, .io = &io, .vnet_hdr_len = HDR,
					.rx_ring_size = s.tx.size, .active = true };
	s.qp.tx = (struct net_ring){ .ring = &s.tx.q, .kick_fd = -1 };
	s.dp = dp_queue_create(&s.qp);
	FUZZ_CHECK(s.dp, "dp_queue_create");

	while (!fz_empty(&in)) {
		/* Op numbers are stable (a new op takes a free number): the
		 * low 5 bits, anything past the last op does nothing. */
		uint8_t op = fz_u8(&in) & 31;
		if (op >= OP_COUNT)
			continue;
		if (fuzz_vq_driver_op(&s.tx, op, &in))
			continue;
		engine_step(&s, op, &in);
		fuzz_vq_end_step(&s.tx);
	}
	/* Stop: whatever is in flight completes, then everything is published. */
	while (s.nr_inflight) {
		s.nr_inflight--;
		complete(&s, &s.inflight[s.nr_inflight], -ECANCELED);
	}
	dp_flush(s.dp);
	fuzz_vq_end_step(&s.tx);
	fuzz_vq_check_writes(&s.tx);
	FUZZ_CHECK(s.tx.nr_held == 0, "%u TX chains never returned to the guest", s.tx.nr_held);
	FUZZ_CHECK(s.qp.stats.tx_frames == s.frames && s.qp.stats.tx_bytes == s.bytes,
		   "counted %llu frames / %llu bytes, sent %llu / %llu",
		   (unsigned long long)s.qp.stats.tx_frames, (unsigned long long)s.qp.stats.tx_bytes,
		   (unsigned long long)s.frames, (unsigned long long)s.bytes);
	FUZZ_CHECK(s.qp.stats.tx_errors == s.errors + (s.tx.pops - s.taken),
		   "counted %llu errors, %llu failed writes and %llu rejected chains",
		   (unsigned long long)s.qp.stats.tx_errors, (unsigned long long)s.errors,
		   (unsigned long long)(s.tx.pops - s.taken));
	FUZZ_CHECK(s.qp.stats.tx_dropped == s.dropped, "counted %llu dropped, %llu cancelled",
		   (unsigned long long)s.qp.stats.tx_dropped, (unsigned long long)s.dropped);
	dp_queue_free(s.dp);
out:
	fuzz_vq_free(&s.tx);
	fuzz_guest_free(&g);
	return 0;
}
