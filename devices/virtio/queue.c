/* SPDX-License-Identifier: Apache-2.0 */
/* Split virtqueue, device side. x86 is little-endian like virtio 1.x, so
 * ring fields are used as they are. */
#include "devices/virtio/queue.h"

#include <errno.h>
#include <string.h>

/* Ring sizes from the spec (2.7): descriptor table, driver area (avail ring
 * with used_event), device area (used ring with avail_event). */
static uint64_t desc_bytes(uint16_t size) { return 16ull * size; }
static uint64_t avail_bytes(uint16_t size) { return 6ull + 2ull * size; }
static uint64_t used_bytes(uint16_t size) { return 6ull + 8ull * size; }

int virtq_init(struct virtq *q, const struct guest_mem *mem, uint16_t size, uint64_t desc_gpa,
	       uint64_t avail_gpa, uint64_t used_gpa, bool event_idx, bool indirect,
	       struct vmm_err *err)
{
	memset(q, 0, sizeof(*q));
	if (size == 0 || size > VIRTQ_MAX_SIZE || (size & (size - 1)))
		return vmm_err_set(err, EINVAL, "queue size %u is not a power of two up to %u",
				   size, VIRTQ_MAX_SIZE);
	if (desc_gpa % 16 || avail_gpa % 2 || used_gpa % 4)
		return vmm_err_set(err, EINVAL, "misaligned ring addresses");
	void *desc = guest_mem_ptr(mem, desc_gpa, desc_bytes(size));
	void *avail = guest_mem_ptr(mem, avail_gpa, avail_bytes(size));
	void *used = guest_mem_ptr(mem, used_gpa, used_bytes(size));
	if (!desc || !avail || !used)
		return vmm_err_set(err, EFAULT, "ring outside guest memory");
	q->mem = mem;
	q->size = size;
	q->event_idx = event_idx;
	q->indirect = indirect;
	q->desc = desc;
	q->avail = avail;
	q->used = used;
	q->used_event = &q->avail->ring[size];
	q->avail_event = (volatile uint16_t *)&q->used->ring[size];
	/* The driver initialised the rings; start from its view of them. */
	q->last_avail = 0;
	q->next_used = 0;
	q->published_used = 0;
	q->used->flags = 0;
	/* The device area is ours: do not leave whatever the memory held
	 * (e.g. before a reset) as the guest's kick threshold. */
	*q->avail_event = 0;
	__atomic_store_n(&q->used->idx, 0, __ATOMIC_RELEASE);
	return 0;
}

static int virtq_fail(struct virtq *q, enum virtq_error e)
{
	if (q->error == VIRTQ_OK)
		q->error = e;
	return -1;
}

/* Append one buffer to the chain, enforcing readable-before-writable. */
static int chain_add(struct virtq *q, struct guest_chain *c, uint64_t addr, uint32_t len,
		     bool writable)
{
	if (len == 0)
		return 0;   /* legal but useless: skip it */
	void *p = guest_mem_ptr(q->mem, addr, len);
	if (!p)
		return virtq_fail(q, VIRTQ_ERR_DESC_ADDR);
	unsigned n = c->nr_readable + c->nr_writable;
	if (n == GUEST_CHAIN_MAX_SEGS)
		return virtq_fail(q, VIRTQ_ERR_TOO_LONG);
	if (!writable && c->nr_writable)
		return virtq_fail(q, VIRTQ_ERR_ORDER);
	uint64_t total = (uint64_t)c->readable_len + c->writable_len + len;
	if (total > UINT32_MAX)
		return virtq_fail(q, VIRTQ_ERR_TOO_LONG);
	c->iov[n].iov_base = p;
	c->iov[n].iov_len = len;
	if (writable) {
		c->nr_writable++;
		c->writable_len += len;
	} else {
		c->nr_readable++;
		c->readable_len += len;
	}
	return 0;
}

/* Walk the chain starting at `head`, following at most one indirect table.
 * Each table bounds the number of descriptors visited in it, so a cycle
 * ends as VIRTQ_ERR_LOOP. */
static int virtq_walk(struct virtq *q, uint16_t head, struct guest_chain *c)
{
	const volatile uint8_t *table = (const volatile uint8_t *)q->desc;
	uint32_t table_size = q->size;
	uint32_t idx = head;
	uint32_t visited = 0;
	bool in_indirect = false;

	memset(c, 0, offsetof(struct guest_chain, iov));
	c->head = head;
	for (;;) {
		if (++visited > table_size)
			return virtq_fail(q, VIRTQ_ERR_LOOP);
		/* Copy the descriptor once: the guest may rewrite it. An
		 * indirect table may sit at any address, so no aligned loads. */
		struct vring_desc d;
		memcpy(&d, (const uint8_t *)table + (size_t)idx * sizeof(d), sizeof(d));
		if (d.flags & VRING_DESC_F_INDIRECT) {
			if (!q->indirect || in_indirect || (d.flags & VRING_DESC_F_NEXT) ||
			    d.len == 0 || d.len % sizeof(struct vring_desc) ||
			    d.len / sizeof(struct vring_desc) > VIRTQ_MAX_SIZE)
				return virtq_fail(q, VIRTQ_ERR_INDIRECT);
			table = guest_mem_ptr(q->mem, d.addr, d.len);
			if (!table)
				return virtq_fail(q, VIRTQ_ERR_DESC_ADDR);
			table_size = d.len / sizeof(struct vring_desc);
			idx = 0;
			visited = 0;
			in_indirect = true;
			continue;
		}
		if (chain_add(q, c, d.addr, d.len, d.flags & VRING_DESC_F_WRITE) < 0)
			return -1;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		idx = d.next;
		if (idx >= table_size)
			return virtq_fail(q, VIRTQ_ERR_NEXT);
	}
}

uint16_t virtq_pending(struct virtq *q)
{
	uint16_t avail_idx = __atomic_load_n(&q->avail->idx, __ATOMIC_ACQUIRE);
	return (uint16_t)(avail_idx - q->last_avail);
}

int virtq_pop(struct virtq *q, struct guest_chain *chain)
{
	if (q->error)
		return -1;
	uint16_t avail_idx = __atomic_load_n(&q->avail->idx, __ATOMIC_ACQUIRE);
	if (avail_idx == q->last_avail)
		return 0;
	/* A driver has at most `size` chains outstanding (made available and
	 * not yet seen used). More means it jumped the index or re-posted a
	 * head we still hold. Count from the used index the guest can see: a
	 * chain pushed but not yet published is still ours, and a driver cannot
	 * have reused it (measuring from next_used let a device that holds
	 * every chain pop one re-posted head per push). Never trips on a
	 * correct driver. And the index never goes back behind what we popped:
	 * fewer outstanding than we took would have us pop old entries again
	 * and again (up to 65535 of them) until last_avail wrapped round to it
	 * (found by the virtq fuzzer). */
	uint16_t outstanding = (uint16_t)(avail_idx - q->published_used);
	uint16_t popped = (uint16_t)(q->last_avail - q->published_used);
	if (outstanding > q->size || outstanding < popped)
		return virtq_fail(q, VIRTQ_ERR_AVAIL_IDX);
	/* The acquire load of avail->idx orders the reads below after it. */
	uint16_t head = q->avail->ring[q->last_avail & (q->size - 1)];
	if (head >= q->size)
		return virtq_fail(q, VIRTQ_ERR_HEAD);
	if (virtq_walk(q, head, chain) < 0)
		return -1;
	q->last_avail++;
	return 1;
}

void virtq_push(struct virtq *q, uint16_t head, uint32_t len)
{
	volatile struct vring_used_elem *e = &q->used->ring[q->next_used & (q->size - 1)];
	e->id = head;
	e->len = len;
	q->next_used++;
}

void virtq_publish(struct virtq *q)
{
	/* Release: the guest must see the elements before the index. */
	__atomic_store_n(&q->used->idx, q->next_used, __ATOMIC_RELEASE);
	q->published_used = q->next_used;
}

bool virtq_should_signal(struct virtq *q)
{
	/* Order our used->idx store before reading the guest's used_event or
	 * flags (a store-load pair: needs a full fence on x86). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!q->event_idx)
		return !(q->avail->flags & VRING_AVAIL_F_NO_INTERRUPT);
	uint16_t old = q->signalled_used;
	uint16_t now = q->next_used;
	bool valid = q->signalled_used_valid;
	q->signalled_used = now;
	q->signalled_used_valid = true;
	return !valid || virtq_need_event(*q->used_event, now, old);
}

void virtq_disable_kicks(struct virtq *q)
{
	/* With EVENT_IDX, simply not moving avail_event forward suppresses
	 * kicks: the guest only kicks when it crosses that index. */
	if (!q->event_idx)
		q->used->flags |= VRING_USED_F_NO_NOTIFY;
}

bool virtq_enable_kicks(struct virtq *q)
{
	if (q->event_idx)
		*q->avail_event = q->last_avail;
	else
		q->used->flags &= (uint16_t)~VRING_USED_F_NO_NOTIFY;
	/* Our store must be visible before we re-read avail->idx, or the
	 * guest may add a buffer, see the old setting and not kick. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return virtq_pending(q) != 0;
}

const char *virtq_error_text(enum virtq_error e)
{
	switch (e) {
	case VIRTQ_OK: return "no error";
	case VIRTQ_ERR_AVAIL_IDX: return "more buffers available than the queue holds (index jumped, or a head re-posted while in use), or the index moved back";
	case VIRTQ_ERR_HEAD: return "chain head out of range";
	case VIRTQ_ERR_DESC_ADDR: return "buffer outside guest memory";
	case VIRTQ_ERR_NEXT: return "next descriptor out of range";
	case VIRTQ_ERR_LOOP: return "descriptor chain loops";
	case VIRTQ_ERR_TOO_LONG: return "descriptor chain too long";
	case VIRTQ_ERR_ORDER: return "device-readable descriptor after a writable one";
	case VIRTQ_ERR_INDIRECT: return "bad indirect descriptor table";
	}
	return "unknown error";
}
