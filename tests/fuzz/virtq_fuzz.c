/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the split virtqueue, device side (devices/virtio/queue.c).
 *
 * The input is a small guest (one or two RAM regions), a queue layout
 * (size, EVENT_IDX, INDIRECT, ring addresses, start index) and then a
 * sequence of steps: the guest writing descriptors, indirect tables, avail
 * entries, indices, flags or any byte, interleaved with the device popping,
 * pushing, publishing, deciding whether to signal and (dis)arming kicks.
 *
 * Checked: every chain popped lies inside guest memory, within
 * GUEST_CHAIN_MAX_SEGS, with lengths that add up; a broken queue stays
 * broken with its first error; the device writes nothing but its used ring;
 * indices, kick suppression and signalling follow the spec; ASan/UBSan
 * catch any read or write outside the guest's buffers. */
#include <linux/virtio_ring.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"

enum {
	OP_POP = FUZZ_DRIVER_OPS,
	OP_PUSH_OLDEST,
	OP_PUSH_NEWEST,
	OP_PUBLISH,
	OP_SHOULD_SIGNAL,
	OP_ENABLE_KICKS,
	OP_DISABLE_KICKS,
	OP_PENDING,
	OP_RESET,
	OP_COUNT,
};
_Static_assert(OP_COUNT <= 32, "ops are the input byte's low 5 bits");

struct state {
	struct fuzz_vq v;
	bool pushed_since_signal;   /* something published since the last signal */
	bool signalled_once;
};

static void push_held(struct state *s, unsigned i, struct fz *in)
{
	struct fuzz_vq *v = &s->v;
	if (i >= v->nr_held || v->held[i].returned)
		return;
	uint32_t len = fz_u32(in);
	len = v->held[i].writable_len ? len % (v->held[i].writable_len + 1) : 0;
	fuzz_vq_pushed(v, v->held[i].head, len);
	uint16_t before = v->q.next_used;
	virtq_push(&v->q, v->held[i].head, len);
	FUZZ_CHECK(v->q.next_used == (uint16_t)(before + 1), "push moved next_used by %u",
		   (uint16_t)(v->q.next_used - before));
	volatile struct vring_used_elem *e = &v->q.used->ring[before & (v->size - 1)];
	FUZZ_CHECK(e->id == v->held[i].head && e->len == len, "used element not what was pushed");
	s->pushed_since_signal = true;
}

static void device_step(struct state *s, uint8_t op, struct fz *in)
{
	struct fuzz_vq *v = &s->v;
	struct guest_chain c;
	switch (op) {
	case OP_POP: {
		if (v->nr_held == FUZZ_MAX_HELD)
			break;
		uint16_t before = v->q.last_avail;
		int rc = virtq_pop(&v->q, &c);
		fuzz_vq_popped(v, &c, rc);
		FUZZ_CHECK(v->q.last_avail == (uint16_t)(before + (rc == 1)),
			   "pop returned %d and moved last_avail by %u", rc,
			   (uint16_t)(v->q.last_avail - before));
		break;
	}
	case OP_PUSH_OLDEST:
		push_held(s, 0, in);
		break;
	case OP_PUSH_NEWEST:
		push_held(s, v->nr_held - 1, in);
		break;
	case OP_PUBLISH:
		virtq_publish(&v->q);
		fuzz_vq_published(v);
		FUZZ_CHECK(v->q.used->idx == v->q.next_used, "published idx %u, pushed up to %u",
			   v->q.used->idx, v->q.next_used);
		break;
	case OP_SHOULD_SIGNAL: {
		uint16_t flags = v->q.avail->flags;
		bool sig = virtq_should_signal(&v->q);
		if (!v->event_idx)
			FUZZ_CHECK(sig == !(flags & VRING_AVAIL_F_NO_INTERRUPT),
				   "without EVENT_IDX the answer follows NO_INTERRUPT");
		else if (s->signalled_once && !s->pushed_since_signal)
			FUZZ_CHECK(!sig, "EVENT_IDX: an interrupt with nothing new since the last one");
		if (v->event_idx) {
			s->signalled_once = true;
			s->pushed_since_signal = false;
		}
		break;
	}
	case OP_ENABLE_KICKS: {
		bool more = virtq_enable_kicks(&v->q);
		FUZZ_CHECK(more == (virtq_pending(&v->q) != 0), "enable_kicks says %d", more);
		if (v->event_idx)
			FUZZ_CHECK(*v->q.avail_event == v->q.last_avail, "avail_event not at last_avail");
		else
			FUZZ_CHECK(!(v->q.used->flags & VRING_USED_F_NO_NOTIFY), "NO_NOTIFY still set");
		break;
	}
	case OP_DISABLE_KICKS:
		virtq_disable_kicks(&v->q);
		if (!v->event_idx)
			FUZZ_CHECK(v->q.used->flags & VRING_USED_F_NO_NOTIFY, "NO_NOTIFY not set");
		break;
	case OP_PENDING:
		FUZZ_CHECK(virtq_pending(&v->q) == (uint16_t)(v->q.avail->idx - v->q.last_avail),
			   "pending disagrees with the indices");
		break;
	case OP_RESET: {
		/* Device reset and the driver setting the same rings up again:
		 * the layout was accepted once, so it must be again, and the
		 * queue works afresh. */
		int rc = virtq_init(&v->q, &v->g->mem, v->size, v->desc, v->avail, v->used,
				    v->event_idx, v->indirect, NULL);
		FUZZ_CHECK(rc == 0, "re-init of an accepted layout failed");
		FUZZ_CHECK(v->q.error == VIRTQ_OK && v->q.used->idx == 0, "re-init left state behind");
		v->error = VIRTQ_OK;
		v->nr_held = 0;
		s->pushed_since_signal = false;
		s->signalled_once = false;
		break;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_init(data, size);
	struct fuzz_guest g;
	fuzz_guest_for_rings(&g, &in);
	static struct state s;
	memset(&s, 0, sizeof(s));
	fuzz_vq_setup(&s.v, &g, &in, 0, "virtq");
	s.v.chains_writable = false;   /* queue.c writes only its used ring */

	while (s.v.live && !fz_empty(&in)) {
		/* Op numbers are stable (a new op takes a free number): the
		 * low 5 bits, anything past the last op does nothing. */
		uint8_t op = fz_u8(&in) & 31;
		if (op >= OP_COUNT)
			continue;
		if (fuzz_vq_driver_op(&s.v, op, &in))
			continue;
		device_step(&s, op, &in);
		fuzz_vq_end_step(&s.v);
		if (op == OP_RESET) {
			/* The driver starts its side afresh too. */
			uint16_t zero = 0;
			s.v.avail_idx = 0;
			fuzz_vq_guest_write(&s.v, s.v.avail + 2, &zero, 2);
		}
	}
	fuzz_vq_check_writes(&s.v);
	fuzz_vq_free(&s.v);
	fuzz_guest_free(&g);
	return 0;
}
