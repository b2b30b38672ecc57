/* SPDX-License-Identifier: Apache-2.0 */
/* Split virtqueue, device side: the tests play the driver, laying out the
 * rings in guest memory by hand and checking what the device side makes of
 * them, including every way a hostile guest can break them. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "devices/virtio/queue.h"

#define RAM       (16ull << 20)
#define DESC_GPA  0x10000ull
#define AVAIL_GPA 0x20000ull
#define USED_GPA  0x30000ull
#define IND_GPA   0x40000ull   /* indirect tables */
#define BUF_GPA   0x100000ull  /* data buffers */

/* The driver's view: rings in guest memory and its own avail index. */
struct drv {
	struct guest_mem m;
	struct virtq q;
	uint16_t size;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t *used_event;    /* driver writes, after avail->ring[size] */
	uint16_t *avail_event;   /* device writes, after used->ring[size] */
	uint16_t avail_idx;
};

static void drv_init(struct drv *d, uint16_t size, bool event_idx, bool indirect)
{
	memset(d, 0, sizeof(*d));
	cr_assert_eq(guest_mem_init(&d->m, RAM, NULL), 0);
	d->size = size;
	d->desc = guest_mem_ptr(&d->m, DESC_GPA, 16ull * size);
	d->avail = guest_mem_ptr(&d->m, AVAIL_GPA, 6ull + 2ull * size);
	d->used = guest_mem_ptr(&d->m, USED_GPA, 6ull + 8ull * size);
	cr_assert(d->desc && d->avail && d->used);
	d->used_event = &d->avail->ring[size];
	d->avail_event = (uint16_t *)&d->used->ring[size];
	struct vmm_err e = { 0 };
	cr_assert_eq(virtq_init(&d->q, &d->m, size, DESC_GPA, AVAIL_GPA, USED_GPA, event_idx,
				indirect, &e), 0, "%s", e.msg);
}

static void drv_done(struct drv *d)
{
	guest_mem_destroy(&d->m);
}

/* Start both sides at index `idx` (for wrap tests): the device's shadow
 * indices and the rings' published ones. */
static void drv_start_at(struct drv *d, uint16_t idx)
{
	d->q.last_avail = idx;
	d->q.next_used = idx;
	d->q.published_used = idx;
	d->used->idx = idx;
	d->avail_idx = idx;
	d->avail->idx = idx;
}

static void set_desc(struct vring_desc *t, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	t[i] = (struct vring_desc){ .addr = addr, .len = len, .flags = flags, .next = next };
}

/* Make the chain at `head` available and move avail->idx. */
static void drv_offer(struct drv *d, uint16_t head)
{
	d->avail->ring[d->avail_idx & (d->size - 1)] = head;
	d->avail_idx++;
	__atomic_store_n(&d->avail->idx, d->avail_idx, __ATOMIC_RELEASE);
}

static void *host(struct drv *d, uint64_t gpa)
{
	return guest_mem_ptr(&d->m, gpa, 1);
}

/* Pop must refuse the ring with `want`, and keep refusing it. */
static void expect_broken(struct drv *d, enum virtq_error want)
{
	struct guest_chain c;
	cr_assert_eq(virtq_pop(&d->q, &c), -1);
	cr_assert_eq(d->q.error, want, "error %d (%s), wanted %d (%s)", d->q.error,
		     virtq_error_text(d->q.error), want, virtq_error_text(want));
	cr_assert_eq(virtq_pop(&d->q, &c), -1, "a broken queue stays broken");
	cr_assert_eq(d->q.error, want);
}

/* ---- init ---------------------------------------------------------------- */

static int init_with(struct guest_mem *m, uint16_t size, uint64_t desc, uint64_t avail,
		     uint64_t used, struct vmm_err *e)
{
	struct virtq q;
	return virtq_init(&q, m, size, desc, avail, used, false, false, e);
}

Test(virtq, init_accepts_power_of_two_sizes_up_to_the_maximum)
{
	struct guest_mem m;
	cr_assert_eq(guest_mem_init(&m, RAM, NULL), 0);
	for (uint32_t s = 1; s <= VIRTQ_MAX_SIZE; s <<= 1)
		cr_assert_eq(init_with(&m, (uint16_t)s, DESC_GPA, AVAIL_GPA, USED_GPA, NULL), 0,
			     "size %u", s);
	guest_mem_destroy(&m);
}

Test(virtq, init_rejects_zero_non_power_of_two_and_too_large_sizes)
{
	struct guest_mem m;
	struct vmm_err e = { 0 };
	cr_assert_eq(guest_mem_init(&m, RAM, NULL), 0);
	uint16_t bad[] = { 0, 3, 6, 100, 255, 1023, 2048, 4096, 32768, 65535 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		e.code = 0;
		cr_assert_lt(init_with(&m, bad[i], DESC_GPA, AVAIL_GPA, USED_GPA, &e), 0,
			     "size %u", bad[i]);
		cr_assert_eq(e.code, EINVAL);
		cr_assert(strstr(e.msg, "power of two"), "%s", e.msg);
	}
	guest_mem_destroy(&m);
}

Test(virtq, init_rejects_misaligned_ring_addresses)
{
	struct guest_mem m;
	struct vmm_err e = { 0 };
	cr_assert_eq(guest_mem_init(&m, RAM, NULL), 0);
	/* desc 16, avail 2, used 4 (spec 2.7) */
	cr_assert_lt(init_with(&m, 8, DESC_GPA + 8, AVAIL_GPA, USED_GPA, &e), 0);
	cr_assert_eq(e.code, EINVAL);
	cr_assert(strstr(e.msg, "misaligned"), "%s", e.msg);
	cr_assert_lt(init_with(&m, 8, DESC_GPA + 1, AVAIL_GPA, USED_GPA, &e), 0);
	cr_assert_lt(init_with(&m, 8, DESC_GPA, AVAIL_GPA + 1, USED_GPA, &e), 0);
	cr_assert_lt(init_with(&m, 8, DESC_GPA, AVAIL_GPA, USED_GPA + 2, &e), 0);
	cr_assert_lt(init_with(&m, 8, DESC_GPA, AVAIL_GPA, USED_GPA + 1, &e), 0);
	/* the minimum alignments themselves are fine */
	cr_assert_eq(init_with(&m, 8, DESC_GPA + 16, AVAIL_GPA + 2, USED_GPA + 4, &e), 0, "%s",
		     e.msg);
	guest_mem_destroy(&m);
}

Test(virtq, init_rejects_rings_outside_or_straddling_the_end_of_ram)
{
	struct guest_mem m;
	struct vmm_err e = { 0 };
	cr_assert_eq(guest_mem_init(&m, RAM, NULL), 0);
	uint16_t s = 256;
	uint64_t desc_sz = 16ull * s, avail_sz = 6ull + 2ull * s, used_sz = 6ull + 8ull * s;

	/* entirely outside */
	cr_assert_lt(init_with(&m, s, RAM, AVAIL_GPA, USED_GPA, &e), 0);
	cr_assert_eq(e.code, EFAULT);
	cr_assert(strstr(e.msg, "outside"), "%s", e.msg);
	cr_assert_lt(init_with(&m, s, DESC_GPA, GUEST_MMIO_HOLE_START, USED_GPA, &e), 0);
	cr_assert_lt(init_with(&m, s, DESC_GPA, AVAIL_GPA, 0xfffffffffffff000ull, &e), 0);

	/* last byte just inside is fine, one more byte straddles the end */
	cr_assert_eq(init_with(&m, s, RAM - desc_sz, AVAIL_GPA, USED_GPA, &e), 0);
	cr_assert_lt(init_with(&m, s, RAM - desc_sz + 16, AVAIL_GPA, USED_GPA, &e), 0);
	/* used_event (the 2 bytes after ring[size]) counts as part of the avail ring */
	cr_assert_eq(init_with(&m, s, DESC_GPA, RAM - avail_sz, USED_GPA, &e), 0);
	cr_assert_lt(init_with(&m, s, DESC_GPA, RAM - avail_sz + 2, USED_GPA, &e), 0);
	/* avail_event likewise for the used ring */
	cr_assert_eq(init_with(&m, s, DESC_GPA, AVAIL_GPA, (RAM - used_sz) & ~3ull, &e), 0);
	cr_assert_lt(init_with(&m, s, DESC_GPA, AVAIL_GPA, RAM - used_sz + 2, &e), 0);
	guest_mem_destroy(&m);
}

Test(virtq, init_resets_the_used_ring_and_indices)
{
	struct drv d;
	drv_init(&d, 8, true, true);
	d.used->idx = 77;
	d.used->flags = VRING_USED_F_NO_NOTIFY;
	cr_assert_eq(virtq_init(&d.q, &d.m, 8, DESC_GPA, AVAIL_GPA, USED_GPA, true, true, NULL), 0);
	cr_assert_eq(d.used->idx, 0);
	cr_assert_eq(d.used->flags, 0);
	cr_assert_eq(d.q.last_avail, 0);
	cr_assert_eq(d.q.next_used, 0);
	cr_assert_eq(d.q.error, VIRTQ_OK);
	cr_assert(d.q.event_idx);
	cr_assert(d.q.indirect);
	cr_assert_eq((void *)d.q.used_event, (void *)d.used_event);
	cr_assert_eq((void *)d.q.avail_event, (void *)d.avail_event);
	drv_done(&d);
}

/* ---- pop ----------------------------------------------------------------- */

Test(virtq, pop_on_empty_ring_returns_zero)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	cr_assert_eq(virtq_pending(&d.q), 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 0);
	cr_assert_eq(d.q.error, VIRTQ_OK);
	cr_assert_eq(d.q.last_avail, 0);
	drv_done(&d);
}

Test(virtq, pop_maps_readable_then_writable_buffers_to_host_iovecs)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	/* head 5 -> 2 -> 7 -> 0: two readable, two writable, non-sequential */
	set_desc(d.desc, 5, BUF_GPA + 0x000, 10, VRING_DESC_F_NEXT, 2);
	set_desc(d.desc, 2, BUF_GPA + 0x100, 20, VRING_DESC_F_NEXT, 7);
	set_desc(d.desc, 7, BUF_GPA + 0x1000, 300, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 0);
	set_desc(d.desc, 0, BUF_GPA + 0x3001, 4000, VRING_DESC_F_WRITE, 6 /* ignored */);
	drv_offer(&d, 5);
	cr_assert_eq(virtq_pending(&d.q), 1);

	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(c.head, 5);
	cr_assert_eq(c.nr_readable, 2);
	cr_assert_eq(c.nr_writable, 2);
	cr_assert_eq(c.readable_len, 30);
	cr_assert_eq(c.writable_len, 4300);
	cr_assert_eq(c.iov[0].iov_base, host(&d, BUF_GPA));
	cr_assert_eq(c.iov[0].iov_len, 10);
	cr_assert_eq(c.iov[1].iov_base, host(&d, BUF_GPA + 0x100));
	cr_assert_eq(c.iov[1].iov_len, 20);
	cr_assert_eq(c.iov[2].iov_base, host(&d, BUF_GPA + 0x1000));
	cr_assert_eq(c.iov[2].iov_len, 300);
	cr_assert_eq(c.iov[3].iov_base, host(&d, BUF_GPA + 0x3001));
	cr_assert_eq(c.iov[3].iov_len, 4000);
	cr_assert_eq(guest_chain_writable(&c), &c.iov[2]);

	/* the iovecs really alias guest memory */
	memcpy(c.iov[2].iov_base, "hello", 5);
	char back[5];
	cr_assert(guest_mem_read(&d.m, BUF_GPA + 0x1000, back, 5));
	cr_assert_eq(memcmp(back, "hello", 5), 0);

	cr_assert_eq(virtq_pending(&d.q), 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 0);
	drv_done(&d);
}

Test(virtq, pop_single_readable_and_single_writable_buffers)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 4, false, false);
	set_desc(d.desc, 0, BUF_GPA, 64, 0, 0);
	set_desc(d.desc, 1, BUF_GPA + 64, 128, VRING_DESC_F_WRITE, 0);
	drv_offer(&d, 0);
	drv_offer(&d, 1);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(c.head, 0);
	cr_assert_eq(c.nr_readable, 1);
	cr_assert_eq(c.nr_writable, 0);
	cr_assert_eq(c.readable_len, 64);
	cr_assert_eq(c.writable_len, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(c.head, 1);
	cr_assert_eq(c.nr_readable, 0);
	cr_assert_eq(c.nr_writable, 1);
	cr_assert_eq(c.readable_len, 0);
	cr_assert_eq(c.writable_len, 128);
	cr_assert_eq(c.iov[0].iov_base, host(&d, BUF_GPA + 64));
	cr_assert_eq(guest_chain_writable(&c), &c.iov[0]);
	drv_done(&d);
}

Test(virtq, pop_returns_several_chains_in_avail_order)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	/* chains: 3 (alone), 6->1, 4 ; offered in the order 6, 3, 4 */
	set_desc(d.desc, 3, BUF_GPA + 0x3000, 3, 0, 0);
	set_desc(d.desc, 6, BUF_GPA + 0x6000, 6, VRING_DESC_F_NEXT, 1);
	set_desc(d.desc, 1, BUF_GPA + 0x1000, 1, VRING_DESC_F_WRITE, 0);
	set_desc(d.desc, 4, BUF_GPA + 0x4000, 4, VRING_DESC_F_WRITE, 0);
	drv_offer(&d, 6);
	drv_offer(&d, 3);
	drv_offer(&d, 4);
	cr_assert_eq(virtq_pending(&d.q), 3);

	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(c.head, 6);
	cr_assert_eq(c.nr_readable + c.nr_writable, 2);
	cr_assert_eq(c.iov[1].iov_base, host(&d, BUF_GPA + 0x1000));
	cr_assert_eq(virtq_pending(&d.q), 2);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(c.head, 3);
	cr_assert_eq(c.iov[0].iov_base, host(&d, BUF_GPA + 0x3000));
	cr_assert_eq(virtq_pending(&d.q), 1);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(c.head, 4);
	cr_assert_eq(c.writable_len, 4);
	cr_assert_eq(virtq_pending(&d.q), 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 0);
	cr_assert_eq(d.q.last_avail, 3);
	drv_done(&d);
}

Test(virtq, pop_accepts_a_chain_as_long_as_the_table)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 16, false, false);
	for (uint16_t i = 0; i < 16; i++)
		set_desc(d.desc, i, BUF_GPA + 0x100ull * i, 1,
			 i < 15 ? VRING_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	drv_offer(&d, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 1, "error %s", virtq_error_text(d.q.error));
	cr_assert_eq(c.nr_readable, 16);
	cr_assert_eq(c.readable_len, 16);
	drv_done(&d);
}

Test(virtq, pop_accepts_exactly_max_segments)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 128, false, false);
	for (uint16_t i = 0; i < GUEST_CHAIN_MAX_SEGS; i++)
		set_desc(d.desc, i, BUF_GPA + 0x10ull * i, 16,
			 (i < GUEST_CHAIN_MAX_SEGS - 1 ? VRING_DESC_F_NEXT : 0) |
			 (i >= 32 ? VRING_DESC_F_WRITE : 0), (uint16_t)(i + 1));
	drv_offer(&d, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 1, "error %s", virtq_error_text(d.q.error));
	cr_assert_eq(c.nr_readable, 32);
	cr_assert_eq(c.nr_writable, 32);
	cr_assert_eq(c.iov[GUEST_CHAIN_MAX_SEGS - 1].iov_base,
		     host(&d, BUF_GPA + 0x10ull * (GUEST_CHAIN_MAX_SEGS - 1)));
	drv_done(&d);
}

Test(virtq, pop_skips_zero_length_descriptors)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	/* zero-length buffers, even at addresses that are not RAM and even a
	 * "writable" one before a readable one, are neither an iovec nor an error */
	set_desc(d.desc, 0, BUF_GPA, 0, VRING_DESC_F_NEXT, 1);
	set_desc(d.desc, 1, BUF_GPA + 0x10, 8, VRING_DESC_F_NEXT, 2);
	set_desc(d.desc, 2, RAM + 0x1000, 0, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 3);
	set_desc(d.desc, 3, BUF_GPA + 0x20, 8, VRING_DESC_F_NEXT, 4);
	set_desc(d.desc, 4, ~0ull, 0, VRING_DESC_F_NEXT, 5);
	set_desc(d.desc, 5, BUF_GPA + 0x30, 8, VRING_DESC_F_WRITE, 0);
	drv_offer(&d, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 1, "error %s", virtq_error_text(d.q.error));
	cr_assert_eq(c.nr_readable, 2);
	cr_assert_eq(c.nr_writable, 1);
	cr_assert_eq(c.readable_len, 16);
	cr_assert_eq(c.writable_len, 8);
	cr_assert_eq(c.iov[0].iov_base, host(&d, BUF_GPA + 0x10));
	cr_assert_eq(c.iov[1].iov_base, host(&d, BUF_GPA + 0x20));
	cr_assert_eq(c.iov[2].iov_base, host(&d, BUF_GPA + 0x30));

	/* a chain of nothing but a zero-length buffer is an empty chain */
	set_desc(d.desc, 7, BUF_GPA, 0, 0, 0);
	drv_offer(&d, 7);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(c.head, 7);
	cr_assert_eq(c.nr_readable + c.nr_writable, 0);
	cr_assert_eq(c.readable_len + c.writable_len, 0);
	drv_done(&d);
}

Test(virtq, pop_accepts_buffer_ending_at_the_last_byte_of_ram)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 4, false, false);
	set_desc(d.desc, 0, RAM - 4096, 4096, VRING_DESC_F_WRITE, 0);
	drv_offer(&d, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(c.iov[0].iov_base, host(&d, RAM - 4096));
	drv_done(&d);
}

/* ---- malformed rings ----------------------------------------------------- */

Test(virtq, rejects_head_out_of_range)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	drv_offer(&d, 8);
	expect_broken(&d, VIRTQ_ERR_HEAD);
	cr_assert_eq(d.q.last_avail, 0, "the bad chain is not consumed");
	drv_done(&d);
}

Test(virtq, rejects_next_out_of_range)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(d.desc, 1, BUF_GPA, 8, VRING_DESC_F_NEXT, 8);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_NEXT);
	drv_done(&d);
}

Test(virtq, rejects_descriptor_loop, .timeout = 5)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 2, BUF_GPA, 8, VRING_DESC_F_NEXT, 5);
	set_desc(d.desc, 5, BUF_GPA + 8, 8, VRING_DESC_F_NEXT, 2);
	drv_offer(&d, 2);
	expect_broken(&d, VIRTQ_ERR_LOOP);
	drv_done(&d);
}

Test(virtq, rejects_self_loop_of_zero_length_descriptor, .timeout = 5)
{
	/* skipped buffers still count towards the loop limit */
	struct drv d;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 3, BUF_GPA, 0, VRING_DESC_F_NEXT, 3);
	drv_offer(&d, 3);
	expect_broken(&d, VIRTQ_ERR_LOOP);
	drv_done(&d);
}

Test(virtq, rejects_buffer_outside_ram)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(d.desc, 1, RAM, 8, VRING_DESC_F_WRITE, 0);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_DESC_ADDR);
	drv_done(&d);
}

Test(virtq, rejects_buffer_straddling_the_end_of_ram)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 0, RAM - 4096, 4097, VRING_DESC_F_WRITE, 0);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_DESC_ADDR);
	drv_done(&d);
}

Test(virtq, rejects_buffer_whose_end_overflows_64_bits)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 0, 0xfffffffffffff000ull, 0x2000, 0, 0);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_DESC_ADDR);
	drv_done(&d);

	/* wraps exactly to a RAM address */
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 0, ~0ull, 0x1001, 0, 0);   /* end = 0x1000 after wrap */
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_DESC_ADDR);
	drv_done(&d);
}

Test(virtq, rejects_readable_after_writable)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(d.desc, 1, BUF_GPA + 8, 8, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 2);
	set_desc(d.desc, 2, BUF_GPA + 16, 8, 0, 0);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_ORDER);
	drv_done(&d);
}

Test(virtq, rejects_more_than_max_segments)
{
	struct drv d;
	drv_init(&d, 128, false, false);
	for (uint16_t i = 0; i <= GUEST_CHAIN_MAX_SEGS; i++)
		set_desc(d.desc, i, BUF_GPA + 0x10ull * i, 16,
			 i < GUEST_CHAIN_MAX_SEGS ? VRING_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_TOO_LONG);
	drv_done(&d);
}

Test(virtq, rejects_chain_longer_than_4g)
{
	/* 33 segments of 128 MiB (the same buffer, over and over): the total
	 * no longer fits the 32-bit lengths of the chain */
	struct drv d;
	drv_init(&d, 64, false, false);
	guest_mem_destroy(&d.m);
	cr_assert_eq(guest_mem_init(&d.m, 256ull << 20, NULL), 0);
	d.desc = guest_mem_ptr(&d.m, DESC_GPA, 16ull * 64);
	d.avail = guest_mem_ptr(&d.m, AVAIL_GPA, 6ull + 2ull * 64);
	d.used = guest_mem_ptr(&d.m, USED_GPA, 6ull + 8ull * 64);
	cr_assert_eq(virtq_init(&d.q, &d.m, 64, DESC_GPA, AVAIL_GPA, USED_GPA, false, false, NULL),
		     0);
	for (uint16_t i = 0; i < 33; i++)
		set_desc(d.desc, i, 128ull << 20, 128u << 20,
			 VRING_DESC_F_WRITE | (i < 32 ? VRING_DESC_F_NEXT : 0), (uint16_t)(i + 1));
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_TOO_LONG);
	drv_done(&d);
}

Test(virtq, rejects_avail_idx_more_than_size_ahead)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	for (uint16_t i = 0; i < 8; i++)
		set_desc(d.desc, i, BUF_GPA, 8, 0, 0);
	/* exactly size ahead is a full ring: fine */
	d.avail->idx = 8;
	cr_assert_eq(virtq_pending(&d.q), 8);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	/* now 9 ahead of last_avail = 1 -> idx 10 */
	d.avail->idx = 10;
	expect_broken(&d, VIRTQ_ERR_AVAIL_IDX);
	drv_done(&d);

	/* and a guest moving idx backwards looks like a huge jump */
	drv_init(&d, 8, false, false);
	d.avail->idx = 0xffff;
	expect_broken(&d, VIRTQ_ERR_AVAIL_IDX);
	drv_done(&d);
}

/* A driver can have at most `size` chains outstanding (made available and
 * not yet used): a head made available again while the device still holds
 * it, or any avail index more than size past the used index, is a broken
 * ring, even though it is within size of what the device has popped. */
Test(virtq, rejects_more_chains_outstanding_than_the_queue_holds)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	for (uint16_t i = 0; i < 8; i++) {
		set_desc(d.desc, i, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
		drv_offer(&d, i);
	}
	for (int i = 0; i < 8; i++)
		cr_assert_eq(virtq_pop(&d.q, &c), 1, "all eight chains are popped and held");
	drv_offer(&d, 3);   /* head 3 again, while the device still holds it */
	cr_assert_eq(virtq_pending(&d.q), 1, "only one ahead of what was popped");
	expect_broken(&d, VIRTQ_ERR_AVAIL_IDX);
	drv_done(&d);

	/* Once the device has used chains the driver may post that many again. */
	drv_init(&d, 8, false, false);
	for (uint16_t i = 0; i < 8; i++) {
		set_desc(d.desc, i, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
		drv_offer(&d, i);
	}
	for (int i = 0; i < 8; i++)
		cr_assert_eq(virtq_pop(&d.q, &c), 1);
	virtq_push(&d.q, 5, 0);
	virtq_publish(&d.q);
	drv_offer(&d, 5);
	cr_assert_eq(virtq_pop(&d.q, &c), 1, "a used head may be posted again");
	cr_assert_eq(c.head, 5);
	drv_done(&d);
}

/* A chain pushed but not yet published is still the device's: the driver
 * cannot have seen it used, so a head posted again before the publish is a
 * re-post of a held chain (found by the hostile rx-heads-in-flight guest: a
 * device holding every chain pops at least one push ahead of what the guest
 * sees, so counting from the pushed index let re-posted heads through). */
Test(virtq, a_pushed_but_unpublished_chain_still_counts_as_outstanding)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	for (uint16_t i = 0; i < 8; i++) {
		set_desc(d.desc, i, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
		drv_offer(&d, i);
	}
	for (int i = 0; i < 8; i++)
		cr_assert_eq(virtq_pop(&d.q, &c), 1);
	virtq_push(&d.q, 5, 0);          /* not published */
	drv_offer(&d, 5);
	expect_broken(&d, VIRTQ_ERR_AVAIL_IDX);
	drv_done(&d);
}

Test(virtq, broken_queue_stays_broken_after_the_guest_fixes_the_ring)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 9);
	drv_offer(&d, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), -1);
	cr_assert_eq(d.q.error, VIRTQ_ERR_NEXT);
	/* repair it, and add a well-formed chain with a different error lurking */
	set_desc(d.desc, 0, BUF_GPA, 8, 0, 0);
	drv_offer(&d, 9);   /* would be HEAD */
	cr_assert_eq(virtq_pop(&d.q, &c), -1);
	cr_assert_eq(virtq_pop(&d.q, &c), -1);
	cr_assert_eq(d.q.error, VIRTQ_ERR_NEXT, "the first error is kept");
	drv_done(&d);
}

Test(virtq, error_text_describes_every_error)
{
	enum virtq_error all[] = {
		VIRTQ_OK, VIRTQ_ERR_AVAIL_IDX, VIRTQ_ERR_HEAD, VIRTQ_ERR_DESC_ADDR,
		VIRTQ_ERR_NEXT, VIRTQ_ERR_LOOP, VIRTQ_ERR_TOO_LONG, VIRTQ_ERR_ORDER,
		VIRTQ_ERR_INDIRECT,
	};
	size_t n = sizeof(all) / sizeof(all[0]);
	for (size_t i = 0; i < n; i++) {
		const char *t = virtq_error_text(all[i]);
		cr_assert_not_null(t);
		cr_assert_gt(strlen(t), 0, "error %d", all[i]);
		cr_assert_neq(strcmp(t, "unknown error"), 0, "error %d", all[i]);
		for (size_t j = 0; j < i; j++)
			cr_assert_neq(strcmp(t, virtq_error_text(all[j])), 0, "%d and %d", all[i],
				      all[j]);
	}
	cr_assert_gt(strlen(virtq_error_text((enum virtq_error)1000)), 0);
}

/* ---- indirect ------------------------------------------------------------ */

Test(virtq, pop_follows_an_indirect_table_when_negotiated)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, true);
	struct vring_desc *t = host(&d, IND_GPA);
	set_desc(t, 0, BUF_GPA, 12, VRING_DESC_F_NEXT, 2);
	set_desc(t, 2, BUF_GPA + 0x100, 34, VRING_DESC_F_NEXT | VRING_DESC_F_WRITE, 1);
	set_desc(t, 1, BUF_GPA + 0x200, 56, VRING_DESC_F_WRITE, 0);
	set_desc(d.desc, 4, IND_GPA, 3 * 16, VRING_DESC_F_INDIRECT, 0);
	drv_offer(&d, 4);
	cr_assert_eq(virtq_pop(&d.q, &c), 1, "error %s", virtq_error_text(d.q.error));
	cr_assert_eq(c.head, 4);
	cr_assert_eq(c.nr_readable, 1);
	cr_assert_eq(c.nr_writable, 2);
	cr_assert_eq(c.readable_len, 12);
	cr_assert_eq(c.writable_len, 90);
	cr_assert_eq(c.iov[0].iov_base, host(&d, BUF_GPA));
	cr_assert_eq(c.iov[1].iov_base, host(&d, BUF_GPA + 0x100));
	cr_assert_eq(c.iov[2].iov_base, host(&d, BUF_GPA + 0x200));
	cr_assert_eq(c.iov[2].iov_len, 56);
	drv_done(&d);
}

Test(virtq, pop_accepts_direct_descriptors_before_an_indirect_one)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, true);
	struct vring_desc *t = host(&d, IND_GPA);
	set_desc(t, 0, BUF_GPA + 0x100, 8, VRING_DESC_F_WRITE, 0);
	set_desc(d.desc, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(d.desc, 1, IND_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	drv_offer(&d, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 1, "error %s", virtq_error_text(d.q.error));
	cr_assert_eq(c.nr_readable, 1);
	cr_assert_eq(c.nr_writable, 1);
	drv_done(&d);
}

Test(virtq, indirect_table_may_be_longer_than_the_queue)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 2, false, true);
	struct vring_desc *t = host(&d, IND_GPA);
	for (uint16_t i = 0; i < 40; i++)
		set_desc(t, i, BUF_GPA + i, 1, i < 39 ? VRING_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	set_desc(d.desc, 1, IND_GPA, 40 * 16, VRING_DESC_F_INDIRECT, 0);
	drv_offer(&d, 1);
	cr_assert_eq(virtq_pop(&d.q, &c), 1, "error %s", virtq_error_text(d.q.error));
	cr_assert_eq(c.nr_readable, 40);
	drv_done(&d);
}

Test(virtq, rejects_indirect_when_not_negotiated)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	struct vring_desc *t = host(&d, IND_GPA);
	set_desc(t, 0, BUF_GPA, 8, 0, 0);
	set_desc(d.desc, 0, IND_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_INDIRECT);
	drv_done(&d);
}

/* A one-entry indirect table at IND_GPA, reached through desc[0] with the
 * given len and flags; pop must fail with `want`. */
static void expect_bad_indirect(uint64_t addr, uint32_t len, uint16_t flags, enum virtq_error want)
{
	struct drv d;
	drv_init(&d, 8, false, true);
	struct vring_desc *t = host(&d, IND_GPA);
	set_desc(t, 0, BUF_GPA, 8, 0, 0);
	set_desc(t, 1, BUF_GPA, 8, 0, 0);
	set_desc(d.desc, 0, addr, len, flags, 1);
	set_desc(d.desc, 1, BUF_GPA, 8, 0, 0);
	drv_offer(&d, 0);
	expect_broken(&d, want);
	drv_done(&d);
}

Test(virtq, rejects_indirect_len_not_a_multiple_of_16)
{
	expect_bad_indirect(IND_GPA, 24, VRING_DESC_F_INDIRECT, VIRTQ_ERR_INDIRECT);
	expect_bad_indirect(IND_GPA, 15, VRING_DESC_F_INDIRECT, VIRTQ_ERR_INDIRECT);
	expect_bad_indirect(IND_GPA, 1, VRING_DESC_F_INDIRECT, VIRTQ_ERR_INDIRECT);
}

Test(virtq, rejects_indirect_len_zero)
{
	expect_bad_indirect(IND_GPA, 0, VRING_DESC_F_INDIRECT, VIRTQ_ERR_INDIRECT);
}

Test(virtq, rejects_indirect_table_larger_than_max_queue_size)
{
	expect_bad_indirect(IND_GPA, (VIRTQ_MAX_SIZE + 1) * 16, VRING_DESC_F_INDIRECT,
			    VIRTQ_ERR_INDIRECT);
}

Test(virtq, rejects_indirect_with_next_set)
{
	expect_bad_indirect(IND_GPA, 32, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT,
			    VIRTQ_ERR_INDIRECT);
}

Test(virtq, rejects_indirect_table_outside_ram)
{
	/* the table itself is a bad address (reported as DESC_ADDR) */
	expect_bad_indirect(RAM, 16, VRING_DESC_F_INDIRECT, VIRTQ_ERR_DESC_ADDR);
	expect_bad_indirect(RAM - 16, 32, VRING_DESC_F_INDIRECT, VIRTQ_ERR_DESC_ADDR);
	expect_bad_indirect(0xfffffffffffffff0ull, 32, VRING_DESC_F_INDIRECT,
			    VIRTQ_ERR_DESC_ADDR);
}

Test(virtq, rejects_indirect_inside_indirect)
{
	struct drv d;
	drv_init(&d, 8, false, true);
	struct vring_desc *t = host(&d, IND_GPA);
	struct vring_desc *t2 = host(&d, IND_GPA + 0x1000);
	set_desc(t2, 0, BUF_GPA, 8, 0, 0);
	set_desc(t, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, IND_GPA + 0x1000, 16, VRING_DESC_F_INDIRECT, 0);
	set_desc(d.desc, 0, IND_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_INDIRECT);
	drv_done(&d);
}

Test(virtq, rejects_loop_inside_indirect_table, .timeout = 5)
{
	struct drv d;
	drv_init(&d, 8, false, true);
	struct vring_desc *t = host(&d, IND_GPA);
	set_desc(t, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, BUF_GPA, 8, VRING_DESC_F_NEXT, 2);
	set_desc(t, 2, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(d.desc, 0, IND_GPA, 3 * 16, VRING_DESC_F_INDIRECT, 0);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_LOOP);
	drv_done(&d);
}

Test(virtq, rejects_next_beyond_the_indirect_table)
{
	/* next is bounded by the indirect table's length, not the queue size */
	struct drv d;
	drv_init(&d, 8, false, true);
	struct vring_desc *t = host(&d, IND_GPA);
	set_desc(t, 0, BUF_GPA, 8, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, BUF_GPA, 8, VRING_DESC_F_NEXT, 2);
	set_desc(t, 2, BUF_GPA, 8, 0, 0);   /* present, but not in the table */
	set_desc(d.desc, 0, IND_GPA, 2 * 16, VRING_DESC_F_INDIRECT, 0);
	drv_offer(&d, 0);
	expect_broken(&d, VIRTQ_ERR_NEXT);
	drv_done(&d);
}

Test(virtq, pop_reads_an_indirect_table_at_any_guest_address)
{
	/* Nothing in the spec aligns indirect tables ("anywhere in memory",
	 * 2.7.5.3); a guest may put one at an odd address, and the device must
	 * neither crash nor misbehave (virtq_walk copies each descriptor out
	 * with memcpy; under UBSan an aligned load here would abort). */
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, true);
	struct vring_desc tbl[2] = {
		{ .addr = BUF_GPA, .len = 8, .flags = VRING_DESC_F_NEXT, .next = 1 },
		{ .addr = BUF_GPA + 0x40, .len = 16, .flags = VRING_DESC_F_WRITE, .next = 0 },
	};
	cr_assert(guest_mem_write(&d.m, IND_GPA + 3, tbl, sizeof(tbl)));
	set_desc(d.desc, 0, IND_GPA + 3, sizeof(tbl), VRING_DESC_F_INDIRECT, 0);
	drv_offer(&d, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 1, "error %s", virtq_error_text(d.q.error));
	cr_assert_eq(c.nr_readable, 1);
	cr_assert_eq(c.nr_writable, 1);
	cr_assert_eq(c.iov[1].iov_base, host(&d, BUF_GPA + 0x40));
	cr_assert_eq(c.writable_len, 16);
	drv_done(&d);
}

/* ---- used ring ----------------------------------------------------------- */

Test(virtq, push_is_invisible_until_publish)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	virtq_push(&d.q, 3, 100);
	cr_assert_eq(d.used->idx, 0, "pushed but not published");
	cr_assert_eq(d.used->ring[0].id, 3);
	cr_assert_eq(d.used->ring[0].len, 100);
	virtq_push(&d.q, 5, 200);
	cr_assert_eq(d.used->idx, 0);
	virtq_publish(&d.q);
	cr_assert_eq(d.used->idx, 2);
	cr_assert_eq(d.used->ring[1].id, 5);
	cr_assert_eq(d.used->ring[1].len, 200);
	virtq_publish(&d.q);
	cr_assert_eq(d.used->idx, 2, "publishing nothing new changes nothing");
	drv_done(&d);
}

Test(virtq, pop_push_round_trip_returns_the_head)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 4, false, false);
	set_desc(d.desc, 2, BUF_GPA, 8, VRING_DESC_F_NEXT, 3);
	set_desc(d.desc, 3, BUF_GPA + 8, 64, VRING_DESC_F_WRITE, 0);
	for (int round = 0; round < 10; round++) {
		drv_offer(&d, 2);
		cr_assert_eq(virtq_pop(&d.q, &c), 1);
		virtq_push(&d.q, c.head, 42 + (uint32_t)round);
		virtq_publish(&d.q);
		cr_assert_eq(d.used->idx, round + 1);
		cr_assert_eq(d.used->ring[round & 3].id, 2);
		cr_assert_eq(d.used->ring[round & 3].len, 42 + (uint32_t)round);
	}
	drv_done(&d);
}

Test(virtq, indices_wrap_past_65535)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	drv_start_at(&d, 65530);
	for (uint16_t i = 0; i < 8; i++)
		set_desc(d.desc, i, BUF_GPA + 0x100ull * i, 16, VRING_DESC_F_WRITE, 0);

	/* 12 chains in two rounds: avail 65530 -> 6, crossing 65535 -> 0 */
	uint16_t slot_expect = 65530;
	for (int round = 0; round < 2; round++) {
		for (uint16_t i = 0; i < 6; i++)
			drv_offer(&d, (uint16_t)((round * 6 + i) & 7));
		cr_assert_eq(virtq_pending(&d.q), 6);
		for (uint16_t i = 0; i < 6; i++) {
			cr_assert_eq(virtq_pop(&d.q, &c), 1, "error %s",
				     virtq_error_text(d.q.error));
			cr_assert_eq(c.head, (round * 6 + i) & 7);
			cr_assert_eq(c.iov[0].iov_base, host(&d, BUF_GPA + 0x100ull * c.head));
			virtq_push(&d.q, c.head, 1000u + c.head);
		}
		cr_assert_eq(virtq_pending(&d.q), 0);
		cr_assert_eq(virtq_pop(&d.q, &c), 0);
		virtq_publish(&d.q);
		for (uint16_t i = 0; i < 6; i++, slot_expect++) {
			uint16_t head = (uint16_t)((round * 6 + i) & 7);
			cr_assert_eq(d.used->ring[slot_expect & 7].id, head, "slot %u",
				     slot_expect & 7);
			cr_assert_eq(d.used->ring[slot_expect & 7].len, 1000u + head);
		}
		cr_assert_eq(d.used->idx, slot_expect);
	}
	cr_assert_eq(d.used->idx, 6);
	cr_assert_eq(d.q.last_avail, 6);
	cr_assert_eq(d.q.next_used, 6);
	cr_assert_eq(d.q.error, VIRTQ_OK);
	drv_done(&d);
}

/* Found by the virtq fuzzer: an avail index moved back behind what the
 * device had popped (but within size of what it had used) passed the check,
 * and the device popped the same entries again, more chains than the queue
 * has, until last_avail wrapped round to the index. */
Test(virtq, rejects_an_avail_index_moved_back_behind_what_was_popped)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 4, false, false);
	for (uint16_t i = 0; i < 4; i++) {
		set_desc(d.desc, i, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
		drv_offer(&d, i);
	}
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	d.avail->idx = 2;   /* back behind last_avail (3), nothing used yet */
	expect_broken(&d, VIRTQ_ERR_AVAIL_IDX);
	cr_assert_eq(d.q.last_avail, 3, "nothing popped past the index");
	drv_done(&d);

	/* Moving back to exactly what was popped is an empty ring, not an error. */
	drv_init(&d, 4, false, false);
	for (uint16_t i = 0; i < 4; i++) {
		set_desc(d.desc, i, BUF_GPA, 8, VRING_DESC_F_WRITE, 0);
		drv_offer(&d, i);
	}
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	d.avail->idx = 1;
	cr_assert_eq(virtq_pop(&d.q, &c), 0);
	cr_assert_eq(d.q.error, VIRTQ_OK);
	drv_done(&d);
}

Test(virtq, full_ring_across_the_wrap_is_not_an_avail_idx_error)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	drv_start_at(&d, 65532);
	for (uint16_t i = 0; i < 8; i++) {
		set_desc(d.desc, i, BUF_GPA, 16, 0, 0);
		drv_offer(&d, i);
	}
	cr_assert_eq(d.avail->idx, 4);
	cr_assert_eq(virtq_pending(&d.q), 8);
	for (uint16_t i = 0; i < 8; i++) {
		cr_assert_eq(virtq_pop(&d.q, &c), 1);
		cr_assert_eq(c.head, i);
	}
	cr_assert_eq(virtq_pop(&d.q, &c), 0);
	d.avail->idx = (uint16_t)(d.avail->idx + 9);
	expect_broken(&d, VIRTQ_ERR_AVAIL_IDX);
	drv_done(&d);
}

/* ---- EVENT_IDX ------------------------------------------------------------ */

Test(virtq, need_event_handles_16_bit_wrap)
{
	static const struct {
		uint16_t event, new_idx, old;
		bool want;
	} cases[] = {
		{ 0, 1, 0, true },              /* moved past the event */
		{ 0, 0, 0, false },             /* nothing moved */
		{ 1, 1, 0, false },             /* not yet past the event */
		{ 3, 10, 3, true },             /* event == old: crossed */
		{ 9, 10, 3, true },             /* event == new - 1: crossed */
		{ 10, 10, 3, false },           /* event == new: not yet */
		{ 2, 10, 3, false },            /* event before old: already signalled */
		{ 65535, 1, 65534, true },      /* crossing the wrap */
		{ 65535, 0, 65534, true },
		{ 0, 1, 65535, true },
		{ 65534, 1, 65535, false },     /* event just before old, across wrap */
		{ 2, 1, 65535, false },         /* event ahead of new, across wrap */
		{ 1, 1, 65535, false },
		{ 65535, 65535, 65534, false },
		{ 65534, 65535, 65534, true },
		{ 32768, 32769, 32767, true },
		{ 10, 50, 60000, true },        /* big jump across the wrap covering event */
		{ 100, 50, 60000, false },      /* ... and one not covering it */
		{ 50, 50, 60000, false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(virtq_need_event(cases[i].event, cases[i].new_idx, cases[i].old),
			     cases[i].want, "event=%u new=%u old=%u: want %d", cases[i].event,
			     cases[i].new_idx, cases[i].old, cases[i].want);
}

static void push_publish(struct drv *d, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		virtq_push(&d->q, 0, 0);
	virtq_publish(&d->q);
}

Test(virtq, should_signal_with_event_idx_follows_used_event)
{
	struct drv d;
	drv_init(&d, 16, true, false);
	*d.used_event = 100;                       /* far ahead: would not fire */
	push_publish(&d, 1);                       /* used idx 1 */
	cr_assert(virtq_should_signal(&d.q), "the first signal is always sent");
	*d.used_event = 5;                         /* interrupt once entry 5 is used */
	push_publish(&d, 2);                       /* 1 -> 3 */
	cr_assert_not(virtq_should_signal(&d.q));
	push_publish(&d, 2);                       /* 3 -> 5: entry 5 not yet used */
	cr_assert_not(virtq_should_signal(&d.q));
	push_publish(&d, 1);                       /* 5 -> 6: crosses */
	cr_assert(virtq_should_signal(&d.q));
	push_publish(&d, 1);                       /* 6 -> 7: already signalled for 5 */
	cr_assert_not(virtq_should_signal(&d.q));
	cr_assert_not(virtq_should_signal(&d.q), "nothing new");
	*d.used_event = 7;
	push_publish(&d, 3);                       /* 7 -> 10 covers 7 */
	cr_assert(virtq_should_signal(&d.q));
	/* the signal was recorded: the same used_event does not fire again */
	push_publish(&d, 3);
	cr_assert_not(virtq_should_signal(&d.q));
	/* NO_INTERRUPT is ignored under EVENT_IDX */
	d.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	*d.used_event = 13;
	push_publish(&d, 1);
	cr_assert(virtq_should_signal(&d.q));
	drv_done(&d);
}

Test(virtq, should_signal_with_event_idx_across_the_wrap)
{
	struct drv d;
	drv_init(&d, 8, true, false);
	drv_start_at(&d, 65533);
	push_publish(&d, 1);                       /* 65533 -> 65534 */
	cr_assert(virtq_should_signal(&d.q));
	*d.used_event = 65535;
	push_publish(&d, 3);                       /* 65534 -> 1 covers 65535 */
	cr_assert_eq(d.used->idx, 1);
	cr_assert(virtq_should_signal(&d.q));
	*d.used_event = 3;
	push_publish(&d, 2);                       /* 1 -> 3 */
	cr_assert_not(virtq_should_signal(&d.q));
	push_publish(&d, 1);                       /* 3 -> 4 */
	cr_assert(virtq_should_signal(&d.q));
	drv_done(&d);
}

Test(virtq, should_signal_without_event_idx_honours_no_interrupt)
{
	struct drv d;
	drv_init(&d, 8, false, false);
	push_publish(&d, 1);
	cr_assert(virtq_should_signal(&d.q));
	push_publish(&d, 1);
	cr_assert(virtq_should_signal(&d.q));
	d.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	push_publish(&d, 1);
	cr_assert_not(virtq_should_signal(&d.q));
	*d.used_event = 0;   /* used_event is meaningless without EVENT_IDX */
	cr_assert_not(virtq_should_signal(&d.q));
	d.avail->flags = 0;
	push_publish(&d, 1);
	cr_assert(virtq_should_signal(&d.q));
	drv_done(&d);
}

/* ---- kicks ----------------------------------------------------------------- */

Test(virtq, enable_kicks_with_event_idx_sets_avail_event_to_last_avail)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, true, false);
	for (uint16_t i = 0; i < 8; i++)
		set_desc(d.desc, i, BUF_GPA, 8, 0, 0);
	*d.avail_event = 0x5555;
	cr_assert_not(virtq_enable_kicks(&d.q), "nothing pending");
	cr_assert_eq(*d.avail_event, 0);
	cr_assert_eq(d.used->flags, 0);

	drv_offer(&d, 1);
	drv_offer(&d, 2);
	drv_offer(&d, 3);
	virtq_disable_kicks(&d.q);
	cr_assert_eq(d.used->flags, 0, "EVENT_IDX does not use NO_NOTIFY");
	cr_assert_eq(*d.avail_event, 0, "disable leaves avail_event behind");
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert(virtq_enable_kicks(&d.q), "buffers still pending");
	cr_assert_eq(*d.avail_event, 1);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_not(virtq_enable_kicks(&d.q));
	cr_assert_eq(*d.avail_event, 3);
	/* the guest's kick test now fires on its next buffer */
	cr_assert(virtq_need_event(*d.avail_event, 4, 3));
	drv_done(&d);
}

Test(virtq, enable_kicks_with_event_idx_across_the_wrap)
{
	struct drv d;
	drv_init(&d, 8, true, false);
	drv_start_at(&d, 65535);
	cr_assert_not(virtq_enable_kicks(&d.q));
	cr_assert_eq(*d.avail_event, 65535);
	set_desc(d.desc, 0, BUF_GPA, 8, 0, 0);
	drv_offer(&d, 0);
	cr_assert_eq(d.avail->idx, 0);
	cr_assert(virtq_enable_kicks(&d.q));
	cr_assert_eq(virtq_pending(&d.q), 1);
	drv_done(&d);
}

Test(virtq, kicks_without_event_idx_use_no_notify)
{
	struct drv d;
	struct guest_chain c;
	drv_init(&d, 8, false, false);
	set_desc(d.desc, 0, BUF_GPA, 8, 0, 0);
	*d.avail_event = 0x5555;
	virtq_disable_kicks(&d.q);
	cr_assert_eq(d.used->flags, VRING_USED_F_NO_NOTIFY);
	virtq_disable_kicks(&d.q);
	cr_assert_eq(d.used->flags, VRING_USED_F_NO_NOTIFY);
	cr_assert_not(virtq_enable_kicks(&d.q));
	cr_assert_eq(d.used->flags, 0);
	cr_assert_eq(*d.avail_event, 0x5555, "avail_event untouched without EVENT_IDX");

	virtq_disable_kicks(&d.q);
	drv_offer(&d, 0);
	cr_assert(virtq_enable_kicks(&d.q), "a buffer arrived while kicks were off");
	cr_assert_eq(d.used->flags, 0);
	cr_assert_eq(virtq_pop(&d.q, &c), 1);
	cr_assert_not(virtq_enable_kicks(&d.q));
	drv_done(&d);
}
