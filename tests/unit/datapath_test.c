/* SPDX-License-Identifier: Apache-2.0 */
/* The engine-independent data path: the tests play both the guest (a fake
 * ring that hands out scripted chains pointing at the test's own buffers and
 * records what the data path pushes back) and the engine (a "read" is the
 * test copying bytes into the iovecs dp_rx_prepare handed out). */
#include <criterion/criterion.h>
#include <errno.h>
#include <linux/virtio_net.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/datapath.h"

#define HDR        12u
#define RING_SIZE  64
#define MAX_SCRIPT 128
#define MAX_PUSH   256
#define ARENA      (1u << 20)

/* ---- a fake guest ring --------------------------------------------------- */

struct push {
	uint16_t head;
	uint32_t len;
};

struct fake_ring {
	struct guest_chain script[MAX_SCRIPT];   /* what pop hands out, in order */
	unsigned nr, next;
	struct guest_chain late[4];              /* appear when kicks are enabled */
	unsigned nr_late;
	bool broken;
	const char *error_text;
	struct push push[MAX_PUSH];
	unsigned nr_push;
	unsigned pops, publishes, should_signal_calls, enable_calls, disable_calls;
	unsigned pushes_at_publish;               /* nr_push when publish last ran */
	bool signal_answer;
	bool kicks_enabled;
};

static int fr_pop(void *r, struct guest_chain *c)
{
	struct fake_ring *f = r;
	f->pops++;
	if (f->broken)
		return -1;
	if (f->next == f->nr)
		return 0;
	*c = f->script[f->next++];
	return 1;
}

static void fr_push(void *r, uint16_t head, uint32_t len)
{
	struct fake_ring *f = r;
	cr_assert_lt(f->nr_push, MAX_PUSH);
	f->push[f->nr_push++] = (struct push){ head, len };
}

static void fr_publish(void *r)
{
	struct fake_ring *f = r;
	f->publishes++;
	f->pushes_at_publish = f->nr_push;
}

static bool fr_should_signal(void *r)
{
	struct fake_ring *f = r;
	f->should_signal_calls++;
	return f->signal_answer;
}

static void fr_disable_kicks(void *r)
{
	struct fake_ring *f = r;
	f->disable_calls++;
	f->kicks_enabled = false;
}

static bool fr_enable_kicks(void *r)
{
	struct fake_ring *f = r;
	f->enable_calls++;
	f->kicks_enabled = true;
	/* The guest raced in with buffers just as kicks were enabled. */
	for (unsigned i = 0; i < f->nr_late; i++)
		f->script[f->nr++] = f->late[i];
	f->nr_late = 0;
	return f->next < f->nr;
}

static uint16_t fr_pending(void *r)
{
	struct fake_ring *f = r;
	return (uint16_t)(f->nr - f->next);
}

static const char *fr_error(void *r)
{
	struct fake_ring *f = r;
	return f->error_text;
}

static const struct net_ring_ops fake_ops = {
	.pop = fr_pop, .push = fr_push, .publish = fr_publish,
	.should_signal = fr_should_signal, .disable_kicks = fr_disable_kicks,
	.enable_kicks = fr_enable_kicks, .pending = fr_pending, .error = fr_error,
};

/* ---- environment ----------------------------------------------------------- */

struct env {
	struct fake_ring rx, tx;
	struct net_guest guest;
	struct net_queue_pair qp;
	struct dp_queue *q;
	uint8_t *arena;
	size_t arena_used;
	unsigned fails;
	char fail_why[128];
	int accept;                 /* rx_accept answer */
	unsigned accept_calls;
	uint8_t accept_dst[6];
};

static void env_fail(void *opaque, const char *why)
{
	struct env *e = opaque;
	e->fails++;
	snprintf(e->fail_why, sizeof(e->fail_why), "%s", why);
}

static void env_signal(void *opaque)
{
	(void)opaque;
}

static bool env_accept(void *opaque, const uint8_t *dst)
{
	struct env *e = opaque;
	e->accept_calls++;
	memcpy(e->accept_dst, dst, 6);
	return e->accept;
}

static struct env *env_new(bool mrg, uint32_t rx_frame_max)
{
	struct env *e = calloc(1, sizeof(*e));
	cr_assert_not_null(e);
	e->arena = calloc(1, ARENA);
	cr_assert_not_null(e->arena);
	e->rx.error_text = "rx ring broken";
	e->tx.error_text = "tx ring broken";
	e->guest = (struct net_guest){ .ops = &fake_ops, .opaque = e, .signal = env_signal,
				       .fail = env_fail, .rx_accept = NULL };
	e->qp = (struct net_queue_pair){
		.index = 0,
		.rx = { .ring = &e->rx, .kick_fd = -1 },
		.tx = { .ring = &e->tx, .kick_fd = -1 },
		.guest = &e->guest,
		.vnet_hdr_len = HDR,
		.rx_frame_max = rx_frame_max,
		.mrg_rxbuf = mrg,
		.rx_ring_size = RING_SIZE,
		.active = true,
	};
	e->q = dp_queue_create(&e->qp);
	cr_assert_not_null(e->q);
	return e;
}

static void env_free(struct env *e)
{
	dp_queue_free(e->q);
	free(e->arena);
	free(e);
}

static uint8_t *arena_take(struct env *e, size_t len)
{
	cr_assert_leq(e->arena_used + len, ARENA);
	uint8_t *p = e->arena + e->arena_used;
	e->arena_used += len;
	return p;
}

/* A chain with `nr_r` readable then `nr_w` writable segments, lengths given in
 * that order (varargs of unsigned). */
static struct guest_chain make_chain(struct env *e, uint16_t head, unsigned nr_r, unsigned nr_w, ...)
{
	struct guest_chain c;
	memset(&c, 0, sizeof(c));
	c.head = head;
	c.nr_readable = (uint16_t)nr_r;
	c.nr_writable = (uint16_t)nr_w;
	va_list ap;
	va_start(ap, nr_w);
	for (unsigned i = 0; i < nr_r + nr_w; i++) {
		unsigned len = va_arg(ap, unsigned);
		c.iov[i].iov_base = arena_take(e, len);
		c.iov[i].iov_len = len;
		if (i < nr_r)
			c.readable_len += len;
		else
			c.writable_len += len;
	}
	va_end(ap);
	return c;
}

static struct guest_chain *offer(struct fake_ring *f, struct guest_chain c)
{
	cr_assert_lt(f->nr, MAX_SCRIPT);
	f->script[f->nr] = c;
	return &f->script[f->nr++];
}

/* An RX buffer: one writable segment of `len` bytes. */
static struct guest_chain *offer_rx(struct env *e, uint16_t head, unsigned len)
{
	return offer(&e->rx, make_chain(e, head, 0, 1, len));
}

/* A TX frame: header segment then payload. */
static struct guest_chain *offer_tx(struct env *e, uint16_t head, unsigned payload)
{
	return offer(&e->tx, make_chain(e, head, 2, 0, HDR, payload));
}

/* Play the backend: write a frame of n bytes into the read's iovecs. The
 * header's num_buffers is poisoned so the test sees whether the data path
 * writes it; the destination MAC is dst. */
static void deliver(struct dp_read *r, size_t n, const uint8_t dst[6])
{
	uint8_t *frame = malloc(n ? n : 1);
	for (size_t i = 0; i < n; i++)
		frame[i] = (uint8_t)(i * 7 + 1);
	if (n >= HDR) {
		memset(frame, 0, HDR);
		frame[10] = frame[11] = 0xee;
	}
	if (dst && n >= HDR + 6)
		memcpy(frame + HDR, dst, 6);
	size_t off = 0;
	for (unsigned i = 0; i < r->nr_iov && off < n; i++) {
		size_t take = n - off < r->iov[i].iov_len ? n - off : r->iov[i].iov_len;
		memcpy(r->iov[i].iov_base, frame + off, take);
		off += take;
	}
	cr_assert_eq(off, n, "the read's iovecs hold the whole frame");
	free(frame);
}

static uint16_t num_buffers_of(const struct guest_chain *c)
{
	/* Gather header bytes 10 and 11 from the chain's writable segments. */
	const struct iovec *w = &c->iov[c->nr_readable];
	size_t off = 0;
	uint8_t b[HDR];
	for (unsigned i = 0; i < c->nr_writable && off < HDR; i++) {
		size_t take = HDR - off < w[i].iov_len ? HDR - off : w[i].iov_len;
		memcpy(b + off, w[i].iov_base, take);
		off += take;
	}
	cr_assert_eq(off, HDR);
	return (uint16_t)(b[10] | b[11] << 8);
}

static void assert_push(const struct fake_ring *f, unsigned i, uint16_t head, uint32_t len)
{
	cr_assert_gt(f->nr_push, i, "push %u missing (%u pushes)", i, f->nr_push);
	cr_assert_eq(f->push[i].head, head, "push %u: head %u, wanted %u", i, f->push[i].head, head);
	cr_assert_eq(f->push[i].len, len, "push %u: len %u, wanted %u", i, f->push[i].len, len);
}

static bool read_has_head(const struct env *e, const struct dp_read *r, uint16_t head)
{
	for (unsigned i = 0; i < r->nr_chains; i++)
		if (e->q->rx_chain[r->slot[i]].head == head)
			return true;
	return false;
}

/* An RX buffer of `nsegs` writable segments of `seglen` bytes each. */
static struct guest_chain *offer_rx_segs(struct env *e, uint16_t head, unsigned nsegs, unsigned seglen)
{
	struct guest_chain c;
	memset(&c, 0, sizeof(c));
	c.head = head;
	c.nr_writable = (uint16_t)nsegs;
	for (unsigned i = 0; i < nsegs; i++) {
		c.iov[i].iov_base = arena_take(e, seglen);
		c.iov[i].iov_len = seglen;
		c.writable_len += seglen;
	}
	return offer(&e->rx, c);
}

/* ---- RX prepare ------------------------------------------------------------ */

Test(datapath, rx_prepare_without_mrg_takes_one_chain_plus_discard_tail)
{
	struct env *e = env_new(false, 1530);
	offer_rx(e, 3, 1600);
	offer_rx(e, 4, 1600);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, 1);
	cr_assert_eq(e->q->rx_chain[r.slot[0]].head, 3);
	cr_assert_eq(r.capacity, 1600);
	cr_assert_eq(r.nr_iov, 2);
	cr_assert_eq(r.iov[0].iov_len, 1600);
	cr_assert_eq(r.iov[1].iov_base, e->q->discard, "last iovec is the discard tail");
	cr_assert_eq(r.iov[1].iov_len, DP_DISCARD_BYTES);
	cr_assert_eq(e->rx.pops, 1);
	cr_assert_eq(e->rx.disable_calls, 1, "kicks off while buffers are in hand");
	env_free(e);
}

Test(datapath, rx_prepare_with_mrg_gathers_chains_until_the_largest_frame_fits)
{
	struct env *e = env_new(true, 1530);
	for (uint16_t h = 0; h < 8; h++)
		offer_rx(e, h, 600);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, 3, "600 * 3 >= 1530 > 600 * 2");
	cr_assert_eq(r.capacity, 1800);
	cr_assert_eq(r.nr_iov, 4);
	cr_assert_eq(r.iov[3].iov_base, e->q->discard);
	cr_assert_eq(e->rx.pops, 3);

	struct env *e2 = env_new(true, 1530);
	offer_rx(e2, 0, 1530);
	offer_rx(e2, 1, 1530);
	cr_assert_eq(dp_rx_prepare(e2->q, &r), 1);
	cr_assert_eq(r.nr_chains, 1, "one chain already fits a whole frame");
	env_free(e2);
	env_free(e);
}

Test(datapath, rx_prepare_with_mrg_uses_what_it_has_when_nothing_else_will_free_chains)
{
	struct env *e = env_new(true, 4000);
	offer_rx(e, 1, 1000);
	offer_rx(e, 2, 1000);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, 2);
	cr_assert_eq(r.capacity, 2000);
	env_free(e);
}

/* A short read would drop a GSO frame whole: for a guest with TSO the data
 * path waits for the guest to post the rest instead. */
Test(datapath, rx_prepare_for_a_tso_guest_waits_until_the_largest_frame_fits)
{
	struct env *e = env_new(true, 4000);
	e->qp.rx_offloads = NET_RX_TSO4;
	offer_rx(e, 1, 1000);
	offer_rx(e, 2, 1000);
	e->rx.late[e->rx.nr_late++] = make_chain(e, 3, 0, 1, 1000);
	struct dp_read r;
	/* The two chains go back to the pool, kicks on, nothing to read yet;
	 * the late chain the guest posts meanwhile is not enough either. */
	cr_assert_eq(dp_rx_prepare(e->q, &r), 0);
	cr_assert(e->rx.kicks_enabled);
	cr_assert_eq(e->qp.stats.rx_no_buffer, 1);
	cr_assert_eq(e->q->rx_nr_free, 3, "the chains wait in the pool");
	/* The guest posts a fourth: 4000 bytes, a read. */
	offer_rx(e, 4, 1000);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, 4);
	cr_assert_eq(r.capacity, 4000);
	env_free(e);
}

/* A TSO guest whose whole ring is smaller than the largest frame is read
 * short once every slot is in the read, rather than never. */
Test(datapath, rx_prepare_for_a_tso_guest_with_a_small_ring_reads_the_whole_ring)
{
	struct env *e = env_new(true, 70000);
	e->qp.rx_offloads = NET_RX_TSO4;
	for (uint16_t h = 0; h < RING_SIZE; h++)
		offer_rx(e, h, 1000);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, RING_SIZE);
	cr_assert_eq(r.capacity, RING_SIZE * 1000);
	env_free(e);
}

Test(datapath, rx_prepare_with_mrg_waits_for_more_when_a_read_is_in_flight)
{
	struct env *e = env_new(true, 2000);
	offer_rx(e, 1, 1000);
	offer_rx(e, 2, 1000);
	offer_rx(e, 3, 1000);
	struct dp_read r1, r2;
	cr_assert_eq(dp_rx_prepare(e->q, &r1), 1);
	cr_assert_eq(r1.nr_chains, 2);
	/* One chain left and r1 still in flight: better to wait for buffers. */
	cr_assert_eq(dp_rx_prepare(e->q, &r2), 0);
	cr_assert_eq(r2.nr_chains, 0);
	cr_assert_eq(e->q->rx_nr_free, 1, "the partial chain went back to the pool");
	cr_assert(e->rx.kicks_enabled);
	/* r1 completes unused: now three chains are available. */
	dp_rx_complete(e->q, &r1, -ECANCELED);
	cr_assert_eq(dp_rx_prepare(e->q, &r2), 1);
	cr_assert_eq(r2.capacity, 2000);
	env_free(e);
}

Test(datapath, rx_prepare_reports_no_buffers_once_per_starvation_episode)
{
	struct env *e = env_new(false, 1530);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 0);
	cr_assert_eq(e->rx.enable_calls, 1);
	cr_assert(e->rx.kicks_enabled);
	cr_assert_eq(e->qp.stats.rx_no_buffer, 1);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 0);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 0);
	cr_assert_eq(e->qp.stats.rx_no_buffer, 1, "still the same episode");
	/* A kick ends the episode; starving again is a new one. */
	dp_rx_kicked(e->q);
	cr_assert_eq(e->qp.stats.rx_kicks, 1);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 0);
	cr_assert_eq(e->qp.stats.rx_no_buffer, 2);
	/* Buffers arrive: a successful prepare also ends it. */
	offer_rx(e, 9, 1600);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_not(e->rx.kicks_enabled);
	dp_rx_complete(e->q, &r, -ECANCELED);
	env_free(e);
}

Test(datapath, rx_prepare_continues_when_buffers_race_in_as_kicks_are_enabled)
{
	struct env *e = env_new(false, 1530);
	e->rx.late[e->rx.nr_late++] = make_chain(e, 7, 0, 1, 1600);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(e->q->rx_chain[r.slot[0]].head, 7);
	cr_assert_eq(e->rx.enable_calls, 1);
	cr_assert_eq(e->qp.stats.rx_no_buffer, 0, "not starved after all");
	cr_assert_not(e->rx.kicks_enabled, "kicks disabled again while working");
	env_free(e);
}

Test(datapath, rx_chain_without_writable_room_is_returned_with_length_zero)
{
	struct env *e = env_new(false, 1530);
	offer(&e->rx, make_chain(e, 5, 1, 0, 100));      /* readable only */
	offer(&e->rx, make_chain(e, 6, 0, 1, HDR - 1));  /* no room for the header */
	offer_rx(e, 8, 1600);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, 1);
	cr_assert_eq(e->q->rx_chain[r.slot[0]].head, 8);
	cr_assert_eq(e->rx.nr_push, 2);
	assert_push(&e->rx, 0, 5, 0);
	assert_push(&e->rx, 1, 6, 0);
	cr_assert(dp_flush(e->q) == false);
	cr_assert_eq(e->rx.publishes, 1, "the returned chains are published");
	env_free(e);
}

/* ---- RX complete ----------------------------------------------------------- */

Test(datapath, rx_complete_without_mrg_pushes_the_chain_with_the_frame_length)
{
	struct env *e = env_new(false, 1530);
	offer_rx(e, 11, 1600);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	deliver(&r, 100, NULL);
	dp_rx_complete(e->q, &r, 100);
	cr_assert_eq(e->rx.nr_push, 1);
	assert_push(&e->rx, 0, 11, 100);
	cr_assert_eq(e->qp.stats.rx_frames, 1);
	cr_assert_eq(e->qp.stats.rx_bytes, 100 - HDR, "bytes exclude the header");
	cr_assert_eq(e->q->rx_reads_inflight, 0);
	env_free(e);
}

/* Virtio 1.x, 5.1.6.4.1: "If VIRTIO_NET_F_MRG_RXBUF has not been negotiated,
 * the device MUST set num_buffers to 1." */
Test(datapath, rx_without_mrg_sets_num_buffers_to_one)
{
	/* virtio 1.x: num_buffers is 1 without MRG_RXBUF, whatever the
	 * backend left in header bytes 10-11. */
	struct env *e = env_new(false, 1530);
	offer_rx(e, 11, 1600);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	struct guest_chain *c = &e->q->rx_chain[r.slot[0]];
	deliver(&r, 100, NULL);
	dp_rx_complete(e->q, &r, 100);
	cr_expect_eq(num_buffers_of(c), 1, "num_buffers %#x without MRG_RXBUF", num_buffers_of(c));
	env_free(e);
}

/* With MRG: three 1000-byte chains; n bytes use ceil(n / 1000) of them. */
static void mrg_split(uint32_t n, unsigned want_chains, const uint32_t *want_len)
{
	struct env *e = env_new(true, 3000);
	offer_rx(e, 20, 1000);
	offer_rx(e, 21, 1000);
	offer_rx(e, 22, 1000);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, 3);
	struct guest_chain *first = &e->q->rx_chain[r.slot[0]];
	uint16_t heads[3];
	for (unsigned i = 0; i < 3; i++)
		heads[i] = e->q->rx_chain[r.slot[i]].head;
	deliver(&r, n, NULL);
	dp_rx_complete(e->q, &r, (ssize_t)n);
	cr_assert_eq(e->rx.nr_push, want_chains, "n=%u", n);
	for (unsigned i = 0; i < want_chains; i++)
		assert_push(&e->rx, i, heads[i], want_len[i]);
	cr_assert_eq(num_buffers_of(first), want_chains, "n=%u: num_buffers", n);
	cr_assert_eq(e->qp.stats.rx_frames, 1);
	cr_assert_eq(e->qp.stats.rx_bytes, n - HDR);
	cr_assert_eq(e->q->rx_nr_free, 3 - want_chains, "unused chains back in the pool");

	/* The next read takes the unused chains before popping anything. */
	unsigned pops = e->rx.pops;
	for (uint16_t h = 30; h < 33; h++)
		offer_rx(e, h, 1000);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	for (unsigned i = want_chains; i < 3; i++)
		cr_assert(read_has_head(e, &r, heads[i]), "unused head %u reused", heads[i]);
	cr_assert_eq(e->rx.pops - pops, want_chains, "only the used chains were replaced");
	env_free(e);
}

Test(datapath, rx_mrg_frame_in_one_chain)
{
	mrg_split(600, 1, (uint32_t[]){ 600 });
	mrg_split(1000, 1, (uint32_t[]){ 1000 });
}

Test(datapath, rx_mrg_frame_split_over_two_chains)
{
	mrg_split(1001, 2, (uint32_t[]){ 1000, 1 });
	mrg_split(1500, 2, (uint32_t[]){ 1000, 500 });
}

Test(datapath, rx_mrg_frame_split_over_three_chains)
{
	mrg_split(2500, 3, (uint32_t[]){ 1000, 1000, 500 });
	mrg_split(3000, 3, (uint32_t[]){ 1000, 1000, 1000 });
}

/* The first chain's header split over two iovecs at `split`. */
static void mrg_split_header(unsigned split)
{
	struct env *e = env_new(true, 3000);
	offer(&e->rx, make_chain(e, 40, 0, 2, split, 1000 - split));
	offer_rx(e, 41, 1000);
	offer_rx(e, 42, 1000);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	struct guest_chain *first = &e->q->rx_chain[r.slot[0]];
	cr_assert_eq(first->head, 40);
	deliver(&r, 1500, NULL);
	dp_rx_complete(e->q, &r, 1500);
	assert_push(&e->rx, 0, 40, 1000);
	assert_push(&e->rx, 1, 41, 500);
	cr_assert_eq(num_buffers_of(first), 2, "header split at %u", split);
	/* Nothing past the header was overwritten. */
	const uint8_t *seg1 = first->iov[1].iov_base;
	if (split < HDR)
		cr_assert_eq(seg1[HDR - split], (uint8_t)(HDR * 7 + 1), "split %u", split);
	else
		cr_assert_eq(seg1[0], (uint8_t)(split * 7 + 1), "split %u", split);
	env_free(e);
}

Test(datapath, rx_mrg_num_buffers_written_when_the_header_is_split)
{
	mrg_split_header(1);
	mrg_split_header(5);
	mrg_split_header(10);   /* num_buffers wholly in the second iovec */
	mrg_split_header(11);   /* num_buffers straddles the two */
	mrg_split_header(12);   /* header exactly in the first */
}

Test(datapath, rx_frame_larger_than_the_buffers_is_dropped_and_chains_reused)
{
	struct env *e = env_new(false, 1530);
	offer_rx(e, 1, 1000);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	deliver(&r, 1400, NULL);   /* 400 bytes into the discard tail */
	dp_rx_complete(e->q, &r, 1400);
	cr_assert_eq(e->rx.nr_push, 0);
	cr_assert_eq(e->qp.stats.rx_dropped, 1);
	cr_assert_eq(e->qp.stats.rx_frames, 0);
	cr_assert_eq(e->qp.stats.rx_errors, 0);
	unsigned pops = e->rx.pops;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(e->q->rx_chain[r.slot[0]].head, 1, "same chain again");
	cr_assert_eq(e->rx.pops, pops, "without popping");
	deliver(&r, 1000, NULL);
	dp_rx_complete(e->q, &r, 1000);
	assert_push(&e->rx, 0, 1, 1000);
	env_free(e);
}

Test(datapath, rx_runt_shorter_than_the_header_is_dropped)
{
	struct env *e = env_new(false, 1530);
	offer_rx(e, 1, 1000);
	struct dp_read r;
	for (int n = 0; n < (int)HDR; n++) {
		cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
		dp_rx_complete(e->q, &r, n);
	}
	cr_assert_eq(e->rx.nr_push, 0);
	cr_assert_eq(e->qp.stats.rx_dropped, HDR);
	cr_assert_eq(e->rx.pops, 1, "the one chain was reused every time");
	/* Exactly a header: an empty frame, delivered. */
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	dp_rx_complete(e->q, &r, HDR);
	assert_push(&e->rx, 0, 1, HDR);
	env_free(e);
}

Test(datapath, rx_read_errors_counted_except_cancellation)
{
	struct env *e = env_new(false, 1530);
	offer_rx(e, 1, 1000);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	dp_rx_complete(e->q, &r, -EIO);
	cr_assert_eq(e->qp.stats.rx_errors, 1);
	cr_assert_eq(e->qp.stats.rx_dropped, 0);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	dp_rx_complete(e->q, &r, -ECANCELED);
	cr_assert_eq(e->qp.stats.rx_errors, 1, "-ECANCELED is not an error");
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	dp_rx_complete(e->q, &r, -EAGAIN);
	cr_assert_eq(e->qp.stats.rx_errors, 1, "-EAGAIN is not an error");
	cr_assert_eq(e->rx.nr_push, 0);
	cr_assert_eq(e->rx.pops, 1, "chain kept for the next read");
	cr_assert_eq(e->q->rx_reads_inflight, 0);
	env_free(e);
}

Test(datapath, rx_filter_rejecting_a_frame_counts_it_and_reuses_the_chains)
{
	struct env *e = env_new(true, 2000);
	e->guest.rx_accept = env_accept;
	e->accept = 0;
	offer_rx(e, 1, 1000);
	offer_rx(e, 2, 1000);
	struct dp_read r;
	const uint8_t dst[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	deliver(&r, 1200, dst);
	dp_rx_complete(e->q, &r, 1200);
	cr_assert_eq(e->accept_calls, 1);
	cr_assert_eq(memcmp(e->accept_dst, dst, 6), 0, "the filter sees the destination MAC");
	cr_assert_eq(e->qp.stats.rx_filtered, 1);
	cr_assert_eq(e->qp.stats.rx_frames, 0);
	cr_assert_eq(e->rx.nr_push, 0);
	cr_assert_eq(e->q->rx_nr_free, 2);

	e->accept = 1;
	unsigned pops = e->rx.pops;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(e->rx.pops, pops, "the rejected frame's chains are reused");
	deliver(&r, 60, dst);
	dp_rx_complete(e->q, &r, 60);
	cr_assert_eq(e->qp.stats.rx_frames, 1);
	cr_assert_eq(e->rx.nr_push, 1);
	env_free(e);
}

Test(datapath, rx_filter_sees_a_mac_split_across_chains)
{
	struct env *e = env_new(true, 2000);
	e->guest.rx_accept = env_accept;
	e->accept = 1;
	offer(&e->rx, make_chain(e, 1, 0, 1, 15));   /* header + 3 bytes of the MAC */
	offer_rx(e, 2, 2000);
	struct dp_read r;
	const uint8_t dst[6] = { 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 };
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, 2);
	deliver(&r, 100, dst);
	dp_rx_complete(e->q, &r, 100);
	cr_assert_eq(memcmp(e->accept_dst, dst, 6), 0);
	assert_push(&e->rx, 0, 1, 15);
	assert_push(&e->rx, 1, 2, 85);
	env_free(e);
}

Test(datapath, rx_release_all_returns_pooled_chains_with_length_zero)
{
	struct env *e = env_new(true, 3000);
	offer_rx(e, 1, 1000);
	offer_rx(e, 2, 1000);
	offer_rx(e, 3, 1000);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	dp_rx_complete(e->q, &r, 500);
	dp_rx_release_all(e->q);
	cr_assert_eq(e->rx.nr_push, 3);
	assert_push(&e->rx, 0, 1, 500);
	cr_assert_eq(e->rx.push[1].len, 0);
	cr_assert_eq(e->rx.push[2].len, 0);
	cr_assert_eq(e->q->rx_nr_free, 0);
	env_free(e);
}

Test(datapath, rx_broken_ring_fails_the_device_once)
{
	struct env *e = env_new(false, 1530);
	e->rx.broken = true;
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), -1);
	cr_assert_eq(e->fails, 1);
	cr_assert_str_eq(e->fail_why, "rx ring broken");
	cr_assert_eq(dp_rx_prepare(e->q, &r), -1);
	cr_assert_eq(e->fails, 1, "reported once");
	cr_assert_eq(dp_tx_pop(e->q, &(struct guest_chain){ 0 }), -1, "the whole pair stops");
	cr_assert_eq(e->fails, 1);
	env_free(e);
}

/* ---- TX -------------------------------------------------------------------- */

Test(datapath, tx_pop_returns_frames_in_order)
{
	struct env *e = env_new(false, 1530);
	offer_tx(e, 4, 100);
	offer_tx(e, 9, 1);
	struct guest_chain c;
	cr_assert_eq(dp_tx_pop(e->q, &c), 1);
	cr_assert_eq(c.head, 4);
	cr_assert_eq(c.readable_len, HDR + 100);
	cr_assert_eq(dp_tx_pop(e->q, &c), 1);
	cr_assert_eq(c.head, 9);
	cr_assert_eq(e->tx.nr_push, 0);
	env_free(e);
}

Test(datapath, tx_pop_returns_chains_that_are_not_frames_and_counts_them)
{
	struct env *e = env_new(false, 1530);
	offer(&e->tx, make_chain(e, 1, 1, 0, HDR));            /* header only */
	offer(&e->tx, make_chain(e, 2, 1, 0, 5));              /* less than a header */
	offer(&e->tx, make_chain(e, 3, 2, 1, HDR, 100, 64));   /* writable part */
	offer(&e->tx, make_chain(e, 4, 0, 1, 200));            /* writable only */
	offer_tx(e, 5, 60);
	struct guest_chain c;
	cr_assert_eq(dp_tx_pop(e->q, &c), 1);
	cr_assert_eq(c.head, 5);
	cr_assert_eq(e->tx.nr_push, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_push(&e->tx, i, (uint16_t)(i + 1), 0);
	cr_assert_eq(e->qp.stats.tx_errors, 4);
	cr_assert(dp_flush(e->q) == false);
	cr_assert_eq(e->tx.publishes, 1);
	env_free(e);
}

Test(datapath, tx_pop_on_a_drained_ring_enables_kicks_and_returns_zero)
{
	struct env *e = env_new(false, 1530);
	struct guest_chain c;
	cr_assert_eq(dp_tx_pop(e->q, &c), 0);
	cr_assert_eq(e->tx.enable_calls, 1);
	cr_assert(e->tx.kicks_enabled);
	cr_assert_eq(e->tx.pops, 1, "enable_kicks itself re-checks the ring");
	/* The guest kicks and adds a frame: kicks go off while working. */
	dp_tx_kicked(e->q);
	cr_assert_eq(e->qp.stats.tx_kicks, 1);
	offer_tx(e, 3, 10);
	cr_assert_eq(dp_tx_pop(e->q, &c), 1);
	cr_assert_eq(c.head, 3);
	cr_assert_not(e->tx.kicks_enabled);
	env_free(e);
}

Test(datapath, tx_pop_continues_when_enable_kicks_reports_work)
{
	struct env *e = env_new(false, 1530);
	e->tx.late[e->tx.nr_late++] = make_chain(e, 8, 2, 0, HDR, 50);
	struct guest_chain c;
	cr_assert_eq(dp_tx_pop(e->q, &c), 1);
	cr_assert_eq(c.head, 8);
	cr_assert_eq(e->tx.enable_calls, 1);
	cr_assert_eq(dp_tx_pop(e->q, &c), 0);
	cr_assert_eq(e->tx.enable_calls, 2);
	env_free(e);
}

Test(datapath, tx_complete_counts_frames_bytes_and_errors)
{
	struct env *e = env_new(false, 1530);
	offer_tx(e, 1, 100);
	offer_tx(e, 2, 200);
	offer_tx(e, 3, 300);
	struct guest_chain c[3];
	for (unsigned i = 0; i < 3; i++)
		cr_assert_eq(dp_tx_pop(e->q, &c[i]), 1);
	dp_tx_complete(e->q, &c[0], HDR + 100);
	dp_tx_complete(e->q, &c[1], -ENOBUFS);
	dp_tx_complete(e->q, &c[2], HDR + 300);
	cr_assert_eq(e->qp.stats.tx_frames, 2);
	cr_assert_eq(e->qp.stats.tx_bytes, 400, "bytes exclude the 12-byte header");
	cr_assert_eq(e->qp.stats.tx_errors, 1);
	cr_assert_eq(e->tx.nr_push, 3);
	assert_push(&e->tx, 0, 1, 0);
	assert_push(&e->tx, 1, 2, 0);
	assert_push(&e->tx, 2, 3, 0);
	env_free(e);
}

Test(datapath, tx_cancelled_in_flight_counts_as_dropped_not_error)
{
	struct env *e = env_new(false, 1530);
	offer_tx(e, 4, 100);
	offer_tx(e, 5, 60);
	struct guest_chain c[2];
	for (unsigned i = 0; i < 2; i++)
		cr_assert_eq(dp_tx_pop(e->q, &c[i]), 1);
	dp_tx_complete(e->q, &c[0], -ECANCELED);
	dp_tx_done(e->q, c[1].head, c[1].readable_len, HDR + 60);
	cr_assert_eq(e->qp.stats.tx_dropped, 1);
	cr_assert_eq(e->qp.stats.tx_errors, 0);
	cr_assert_eq(e->qp.stats.tx_frames, 1);
	cr_assert_eq(e->qp.stats.tx_bytes, 60);
	assert_push(&e->tx, 0, 4, 0);
	assert_push(&e->tx, 1, 5, 0);
	env_free(e);
}

/* A backend that keeps only the slot of a one-chain read (AF_XDP) gets the
 * same read back, and completing it behaves as for the original. */
Test(datapath, read_restored_from_its_slot_completes_like_the_original)
{
	struct env *e = env_new(true, 1530);
	offer(&e->rx, make_chain(e, 7, 0, 2, 1000, 1000));
	struct dp_read r, back;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	cr_assert_eq(r.nr_chains, 1);
	memset(&back, 0x5a, sizeof(back));
	dp_read_restore(e->q, r.slot[0], &back);
	cr_assert_eq(back.nr_chains, 1);
	cr_assert_eq(back.slot[0], r.slot[0]);
	cr_assert_eq(back.capacity, r.capacity);
	cr_assert_eq(back.nr_iov, r.nr_iov);
	for (unsigned i = 0; i < r.nr_iov; i++) {
		cr_assert_eq(back.iov[i].iov_base, r.iov[i].iov_base);
		cr_assert_eq(back.iov[i].iov_len, r.iov[i].iov_len);
	}
	deliver(&back, HDR + 1500, NULL);
	dp_rx_complete(e->q, &back, HDR + 1500);
	cr_assert_eq(e->rx.nr_push, 1);
	assert_push(&e->rx, 0, 7, HDR + 1500);
	cr_assert_eq(e->qp.stats.rx_frames, 1);
	env_free(e);
}

Test(datapath, tx_broken_ring_fails_the_device_once_with_its_error)
{
	struct env *e = env_new(false, 1530);
	e->tx.broken = true;
	struct guest_chain c;
	cr_assert_eq(dp_tx_pop(e->q, &c), -1);
	cr_assert_eq(dp_tx_pop(e->q, &c), -1);
	cr_assert_eq(e->fails, 1);
	cr_assert_str_eq(e->fail_why, "tx ring broken");
	env_free(e);
}

/* ---- flush ----------------------------------------------------------------- */

Test(datapath, flush_publishes_only_dirty_rings)
{
	struct env *e = env_new(false, 1530);
	cr_assert(dp_flush(e->q) == false);
	cr_assert_eq(e->rx.publishes + e->tx.publishes, 0);
	cr_assert_eq(e->rx.should_signal_calls + e->tx.should_signal_calls, 0);

	offer_tx(e, 1, 10);
	struct guest_chain c;
	cr_assert_eq(dp_tx_pop(e->q, &c), 1);
	dp_tx_complete(e->q, &c, HDR + 10);
	e->tx.signal_answer = true;
	cr_assert(dp_flush(e->q));
	cr_assert_eq(e->tx.publishes, 1);
	cr_assert_eq(e->tx.pushes_at_publish, 1);
	cr_assert_eq(e->rx.publishes, 0, "RX had nothing to publish");
	cr_assert(dp_flush(e->q) == false, "nothing new");
	cr_assert_eq(e->tx.publishes, 1);

	offer_rx(e, 2, 1600);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	dp_rx_complete(e->q, &r, 100);
	e->rx.signal_answer = false;
	cr_assert(dp_flush(e->q) == false, "the guest did not ask for an interrupt");
	cr_assert_eq(e->rx.publishes, 1);
	cr_assert_eq(e->rx.should_signal_calls, 1);
	cr_assert_eq(e->tx.publishes, 1);

	offer_rx(e, 3, 1600);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	dp_rx_complete(e->q, &r, 100);
	e->rx.signal_answer = true;
	cr_assert(dp_flush(e->q));
	env_free(e);
}

Test(datapath, flush_signals_if_either_ring_asks)
{
	struct env *e = env_new(false, 1530);
	offer_tx(e, 1, 10);
	offer_rx(e, 2, 1600);
	struct guest_chain c;
	cr_assert_eq(dp_tx_pop(e->q, &c), 1);
	dp_tx_complete(e->q, &c, HDR + 10);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	dp_rx_complete(e->q, &r, 100);
	e->rx.signal_answer = true;
	e->tx.signal_answer = false;
	cr_assert(dp_flush(e->q));
	cr_assert_eq(e->rx.publishes, 1);
	cr_assert_eq(e->tx.publishes, 1);
	env_free(e);
}

/* ---- RX by copy (dp_rx_deliver: frames already in host memory) ------------- */

static uint8_t *make_frame(uint32_t len)
{
	uint8_t *f = malloc(len);
	for (uint32_t i = 0; i < len; i++)
		f[i] = (uint8_t)(i * 13 + 5);
	memset(f, 0, HDR);
	return f;
}

/* Concatenate what the pushes wrote into the guest chains, in push order. */
static void assert_guest_got(struct env *e, const uint8_t *frame, uint32_t len, unsigned first_push)
{
	uint32_t off = 0;
	for (unsigned p = first_push; p < e->rx.nr_push; p++) {
		const struct guest_chain *c = NULL;
		for (unsigned i = 0; i < e->rx.nr; i++)
			if (e->rx.script[i].head == e->rx.push[p].head)
				c = &e->rx.script[i];
		cr_assert_not_null(c);
		uint32_t left = e->rx.push[p].len;
		for (unsigned s = c->nr_readable; s < c->nr_readable + c->nr_writable && left; s++) {
			uint32_t take = left < c->iov[s].iov_len ? left : (uint32_t)c->iov[s].iov_len;
			const uint8_t *g = c->iov[s].iov_base;
			for (uint32_t i = 0; i < take; i++, off++) {
				if (off == 10 || off == 11)
					continue;   /* num_buffers */
				cr_assert_eq(g[i], frame[off], "byte %u", off);
			}
			left -= take;
		}
	}
	cr_assert_eq(off, len);
}

Test(datapath, rx_deliver_without_mrg_copies_the_frame_into_one_chain)
{
	struct env *e = env_new(false, 1530);
	offer_rx(e, 6, 1600);
	uint8_t *f = make_frame(700);
	cr_assert_eq(dp_rx_deliver(e->q, f, 700), 1);
	cr_assert_eq(e->rx.nr_push, 1);
	assert_push(&e->rx, 0, 6, 700);
	assert_guest_got(e, f, 700, 0);
	cr_assert_eq(e->qp.stats.rx_frames, 1);
	cr_assert_eq(e->qp.stats.rx_bytes, 700 - HDR);
	cr_assert_eq(e->q->rx_reads_inflight, 0);
	free(f);
	env_free(e);
}

Test(datapath, rx_deliver_with_mrg_spans_chains_and_sets_num_buffers)
{
	struct env *e = env_new(true, 65562);
	offer_rx(e, 1, 1000);
	offer_rx(e, 2, 1000);
	offer_rx(e, 3, 1000);
	offer_rx(e, 4, 1000);
	uint8_t *f = make_frame(2500);
	cr_assert_eq(dp_rx_deliver(e->q, f, 2500), 1);
	cr_assert_eq(e->rx.nr_push, 3);
	assert_push(&e->rx, 0, 1, 1000);
	assert_push(&e->rx, 1, 2, 1000);
	assert_push(&e->rx, 2, 3, 500);
	assert_guest_got(e, f, 2500, 0);
	cr_assert_eq(num_buffers_of(&e->rx.script[0]), 3);
	cr_assert_eq(e->rx.pops, 3, "only the chains the frame needs");
	free(f);
	env_free(e);
}

Test(datapath, rx_deliver_without_mrg_drops_a_frame_bigger_than_the_chain)
{
	struct env *e = env_new(false, 1530);
	offer_rx(e, 1, 1000);
	uint8_t *f = make_frame(1200);
	cr_assert_eq(dp_rx_deliver(e->q, f, 1200), 1, "dropped counts as handled");
	cr_assert_eq(e->qp.stats.rx_dropped, 1);
	cr_assert_eq(e->rx.nr_push, 0);
	cr_assert_eq(dp_rx_deliver(e->q, f, 900), 1);
	assert_push(&e->rx, 0, 1, 900);
	cr_assert_eq(e->rx.pops, 1, "the chain was kept for the next frame");
	free(f);
	env_free(e);
}

Test(datapath, rx_deliver_with_mrg_waits_when_the_guest_may_post_more_buffers)
{
	struct env *e = env_new(true, 65562);
	offer_rx(e, 1, 1000);
	offer_rx(e, 2, 1000);
	uint8_t *f = make_frame(2500);
	cr_assert_eq(dp_rx_deliver(e->q, f, 2500), 0);
	cr_assert_eq(e->rx.nr_push, 0);
	cr_assert_eq(e->q->rx_nr_free, 2, "chains kept for later");
	cr_assert(e->rx.kicks_enabled);
	cr_assert_eq(e->qp.stats.rx_dropped, 0);
	dp_rx_kicked(e->q);
	offer_rx(e, 3, 1000);
	cr_assert_eq(dp_rx_deliver(e->q, f, 2500), 1);
	cr_assert_eq(e->rx.nr_push, 3);
	assert_guest_got(e, f, 2500, 0);
	free(f);
	env_free(e);
}

Test(datapath, rx_deliver_with_no_buffers_returns_zero)
{
	struct env *e = env_new(false, 1530);
	uint8_t *f = make_frame(100);
	cr_assert_eq(dp_rx_deliver(e->q, f, 100), 0);
	cr_assert_eq(e->qp.stats.rx_no_buffer, 1);
	cr_assert(e->rx.kicks_enabled);
	free(f);
	env_free(e);
}

/* ---- hostile guests ------------------------------------------------------------ */

/* Every RX chain slot is held by a read in flight and the guest makes more
 * buffers available (it can only do that by re-posting heads still in use).
 * There is work pending but no slot to take it into: that must be a wait for
 * a read to complete, never a retry without progress. */
Test(datapath, rx_with_every_slot_in_flight_and_more_posted_waits_instead_of_spinning, .timeout = 5)
{
	struct env *e = env_new(true, 65562);   /* GSO: a read gathers up to 64 chains */
	for (uint16_t h = 0; h < RING_SIZE; h++)
		offer_rx(e, h, 1000);
	struct dp_read r1, r2;
	cr_assert_eq(dp_rx_prepare(e->q, &r1), 1);
	cr_assert_eq(r1.nr_chains, RING_SIZE, "one read holds every slot");
	offer_rx(e, 7, 1000);   /* head 7 again */
	cr_assert_eq(dp_rx_prepare(e->q, &r2), 0, "no slot: wait for the read in flight");
	cr_assert_eq(e->fails, 0u);
	/* The read completes: its chains are used, the pending buffer can be taken. */
	deliver(&r1, 100, NULL);
	dp_rx_complete(e->q, &r1, 100);
	cr_assert_eq(dp_rx_prepare(e->q, &r2), 1);
	env_free(e);
}

/* With MRG_RXBUF and RX chains of 64 one-byte segments, a read can hold one
 * chain (65 iovecs) and so 64 bytes: no amount of posting can make a 1000-byte
 * frame fit. The packet ring's delivery must drop it (counted), not recurse
 * waiting for buffers that cannot help. */
Test(datapath, rx_deliver_of_a_frame_no_read_can_hold_is_dropped_not_recursed, .timeout = 5)
{
	struct env *e = env_new(true, 1530);
	for (uint16_t h = 0; h < 100; h++)
		offer_rx_segs(e, h, 64, 1);
	uint8_t frame[1000] = { 0 };
	cr_assert_eq(dp_rx_deliver(e->q, frame, sizeof(frame)), 1);
	cr_assert_eq(e->qp.stats.rx_dropped, 1u, "dropped and counted");
	cr_assert_eq(e->qp.stats.rx_frames, 0u);
	env_free(e);
}

/* The guest keeps posting small buffers as fast as they are asked for: the
 * delivery waits at most a bounded number of times, and a frame that fits in
 * what the ring can hold is delivered. */
Test(datapath, rx_deliver_with_mrg_gathers_buffers_that_arrive_while_waiting, .timeout = 5)
{
	struct env *e = env_new(true, 1530);
	offer_rx(e, 0, 100);
	e->rx.late[e->rx.nr_late++] = make_chain(e, 1, 0, 1, 400);
	e->rx.late[e->rx.nr_late++] = make_chain(e, 2, 0, 1, 600);
	uint8_t frame[900] = { 0 };
	cr_assert_eq(dp_rx_deliver(e->q, frame, sizeof(frame)), 1);
	cr_assert_eq(e->qp.stats.rx_frames, 1u, "delivered over the buffers that came in meanwhile");
	cr_assert_eq(e->qp.stats.rx_dropped, 0u);
	env_free(e);
}

/* ---- offloads the guest did not negotiate ------------------------------ */

/* Write a whole frame (header included) into a read's iovecs. */
static void deliver_bytes(struct dp_read *r, const uint8_t *frame, size_t n)
{
	size_t off = 0;
	for (unsigned i = 0; i < r->nr_iov && off < n; i++) {
		size_t take = n - off < r->iov[i].iov_len ? n - off : r->iov[i].iov_len;
		memcpy(r->iov[i].iov_base, frame + off, take);
		off += take;
	}
	cr_assert_eq(off, n);
}

/* Read back n bytes of what the data path left in a read's iovecs. */
static void gather_bytes(const struct dp_read *r, uint8_t *out, size_t n)
{
	size_t off = 0;
	for (unsigned i = 0; i < r->nr_iov && off < n; i++) {
		size_t take = n - off < r->iov[i].iov_len ? n - off : r->iov[i].iov_len;
		memcpy(out + off, r->iov[i].iov_base, take);
		off += take;
	}
	cr_assert_eq(off, n);
}

/* vnet header + UDP/IPv4 with a partial checksum (NEEDS_CSUM). */
static size_t needs_csum_frame(uint8_t *f, unsigned payload)
{
	size_t n = HDR + 14 + 20 + 8 + payload;
	memset(f, 0, n);
	struct virtio_net_hdr_v1 *h = (struct virtio_net_hdr_v1 *)f;
	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->csum_start = 34;
	h->csum_offset = 6;
	uint8_t *eth = f + HDR, *ip = eth + 14, *udp = ip + 20;
	eth[12] = 0x08;
	ip[0] = 0x45; ip[3] = (uint8_t)(28 + payload); ip[9] = 17;
	ip[12] = 10; ip[15] = 1; ip[16] = 10; ip[19] = 2;
	udp[5] = (uint8_t)(8 + payload);
	for (unsigned i = 0; i < payload; i++)
		udp[8 + i] = (uint8_t)(i + 1);
	uint32_t pseudo = (10 << 8) + 1 + (10 << 8) + 2 + 17 + 8 + payload;
	udp[6] = (uint8_t)(pseudo >> 8); udp[7] = (uint8_t)pseudo;
	return n;
}

static bool udp_sums_to_zero(const uint8_t *eth)
{
	const uint8_t *ip = eth + 14, *udp = ip + 20;
	unsigned udplen = (unsigned)(udp[4] << 8 | udp[5]);
	uint32_t sum = (10 << 8) + 1 + (10 << 8) + 2 + 17 + udplen;
	for (unsigned i = 0; i + 1 < udplen; i += 2)
		sum += (uint32_t)(udp[i] << 8 | udp[i + 1]);
	if (udplen & 1)
		sum += (uint32_t)udp[udplen - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* A tap keeps frames queued from before a reset that turned GUEST_CSUM off,
 * and a packet socket read with rx=recv has no offload switch: such frames
 * reach a guest that cannot finish the checksum. The data path finishes it
 * in the guest's buffers (here split at odd places) and clears the flag. */
Test(datapath, rx_needs_csum_frame_is_finished_for_a_guest_without_guest_csum)
{
	struct env *e = env_new(true, 2000);
	offer(&e->rx, make_chain(e, 1, 0, 3, 13, 7, 30));
	offer_rx(e, 2, 1000);
	uint8_t f[256], got[256];
	size_t n = needs_csum_frame(f, 41);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	deliver_bytes(&r, f, n);
	dp_rx_complete(e->q, &r, (ssize_t)n);
	cr_assert_eq(e->qp.stats.rx_frames, 1);
	gather_bytes(&r, got, n);
	cr_assert_eq(got[0] & VIRTIO_NET_HDR_F_NEEDS_CSUM, 0, "flag cleared");
	cr_assert(udp_sums_to_zero(got + HDR), "checksum finished");
	env_free(e);
}

Test(datapath, rx_needs_csum_frame_is_left_alone_for_a_guest_with_guest_csum)
{
	struct env *e = env_new(true, 2000);
	e->qp.rx_offloads = NET_RX_CSUM;
	offer_rx(e, 1, 1000);
	uint8_t f[256], got[256];
	size_t n = needs_csum_frame(f, 41);
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	deliver_bytes(&r, f, n);
	dp_rx_complete(e->q, &r, (ssize_t)n);
	gather_bytes(&r, got, n);
	cr_assert_eq(memcmp(got, f, 10), 0, "header untouched (but num_buffers)");
	cr_assert_eq(memcmp(got + HDR, f + HDR, n - HDR), 0, "frame untouched");
	env_free(e);
}

Test(datapath, rx_needs_csum_frame_with_the_field_outside_it_is_dropped)
{
	struct env *e = env_new(true, 2000);
	offer_rx(e, 1, 1000);
	uint8_t f[256];
	size_t n = needs_csum_frame(f, 41);
	((struct virtio_net_hdr_v1 *)f)->csum_start = 200;
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	deliver_bytes(&r, f, n);
	dp_rx_complete(e->q, &r, (ssize_t)n);
	cr_assert_eq(e->qp.stats.rx_frames, 0);
	cr_assert_eq(e->qp.stats.rx_dropped, 1);
	cr_assert_eq(e->rx.nr_push, 0, "its chains are reused");
	env_free(e);
}

Test(datapath, rx_gso_frame_for_a_guest_without_tso_is_dropped)
{
	struct env *e = env_new(true, 70000);
	offer_rx(e, 1, 4000);
	uint8_t f[256];
	size_t n = needs_csum_frame(f, 41);
	struct virtio_net_hdr_v1 *h = (struct virtio_net_hdr_v1 *)f;
	h->gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
	h->gso_size = 20;
	struct dp_read r;
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	deliver_bytes(&r, f, n);
	dp_rx_complete(e->q, &r, (ssize_t)n);
	cr_assert_eq(e->qp.stats.rx_frames, 0);
	cr_assert_eq(e->qp.stats.rx_dropped, 1);

	/* The same frame to a guest with TSO4 goes through (once it has
	 * posted enough for the largest frame: 1 + 17 chains of 4000). */
	e->qp.rx_offloads = NET_RX_TSO4 | NET_RX_CSUM;
	for (uint16_t head = 2; head < 19; head++)
		offer_rx(e, head, 4000);
	cr_assert_eq(dp_rx_prepare(e->q, &r), 1);
	deliver_bytes(&r, f, n);
	dp_rx_complete(e->q, &r, (ssize_t)n);
	cr_assert_eq(e->qp.stats.rx_frames, 1);
	env_free(e);
}

/* ---- the packet backend's TPACKET_V3 ring -------------------------------- */

#include <linux/if_packet.h>

#include "net/packet.h"

/* One block holding one frame as tpacket_rcv leaves it: the legacy 10-byte
 * virtio_net_hdr right before the MAC header. */
static struct pkt_ring *one_frame_ring(const uint8_t *vnet_frame, size_t n)
{
	enum { BLOCK = 4096, FIRST = 64, MAC = 96 };
	struct pkt_ring *r = calloc(1, sizeof(*r));
	r->map = calloc(1, BLOCK);
	r->map_len = BLOCK;
	r->block_size = BLOCK;
	r->nr_blocks = 1;
	struct tpacket_block_desc *bd = (struct tpacket_block_desc *)r->map;
	bd->version = TPACKET_V3;
	bd->hdr.bh1.num_pkts = 1;
	bd->hdr.bh1.offset_to_first_pkt = FIRST;
	struct tpacket3_hdr *h = (struct tpacket3_hdr *)(r->map + FIRST);
	h->tp_mac = MAC;
	h->tp_snaplen = h->tp_len = (uint32_t)(n - HDR);
	memcpy((uint8_t *)h + MAC - sizeof(struct virtio_net_hdr), vnet_frame, sizeof(struct virtio_net_hdr));
	memcpy((uint8_t *)h + MAC, vnet_frame + HDR, n - HDR);
	bd->hdr.bh1.block_status = TP_STATUS_USER;
	return r;
}

/* A frame the guest had no buffers for stays in the ring and is delivered
 * once buffers come: its header was moved into place on the first try and
 * must not be moved again (it was, and the retried frame then had a garbage
 * header: its NEEDS_CSUM lost, the checksum never finished, badsum in the
 * guest for every frame that waited; GSO frames were cut by garbage). */
Test(datapath, packet_ring_frame_retried_after_no_buffers_keeps_its_header)
{
	struct env *e = env_new(false, 2000);
	uint8_t f[256], got[256];
	size_t n = needs_csum_frame(f, 41);
	struct pkt_ring *r = one_frame_ring(f, n);
	cr_assert_eq(pkt_ring_consume(r, e->q), 1, "no guest buffers: the frame waits");
	cr_assert_eq(e->qp.stats.rx_frames, 0);
	offer_rx(e, 1, 1000);
	dp_rx_kicked(e->q);
	cr_assert_eq(pkt_ring_consume(r, e->q), 0, "delivered, the block goes back");
	cr_assert_eq(e->qp.stats.rx_frames, 1);
	assert_push(&e->rx, 0, 1, (uint32_t)n);
	const struct guest_chain *c = &e->rx.script[0];
	memcpy(got, c->iov[0].iov_base, n);
	cr_assert_eq(got[0] & VIRTIO_NET_HDR_F_NEEDS_CSUM, 0);
	cr_assert_eq(got[1], VIRTIO_NET_HDR_GSO_NONE, "gso_type %u", got[1]);
	cr_assert(udp_sums_to_zero(got + HDR), "checksum finished");
	free(r->map);
	free(r);
	env_free(e);
}

/* A backend that keeps refusing writes for want of room is tried again
 * after 50 us, then twice as long each time, never more than 1 ms apart. */
Test(datapath, a_full_backend_is_retried_with_a_doubling_wait_up_to_a_millisecond)
{
	unsigned want[] = { 50, 100, 200, 400, 800, 1000, 1000 }, us = 0;
	for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		us = dp_tx_full_backoff(us);
		cr_assert_eq(us, want[k], "wait %u: %u us, expected %u", k, us, want[k]);
	}
	cr_assert(dp_tx_backend_full(-ENOBUFS) && dp_tx_backend_full(-EAGAIN));
	cr_assert(!dp_tx_backend_full(-EIO) && !dp_tx_backend_full(60) && !dp_tx_backend_full(-ECANCELED));
}
