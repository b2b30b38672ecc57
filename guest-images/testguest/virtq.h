/* SPDX-License-Identifier: Apache-2.0 */
/* Split virtqueues (virtio 1.x, section 2.7) driven from CPL3 by polling,
 * with VIRTIO_F_EVENT_IDX notification suppression when negotiated.
 *
 * Rings live in guest RAM handed out by dma_alloc(): a bump allocator from
 * the end of the image, never freed (the guest runs one test and resets).
 * Guest-physical == guest-virtual (identity page tables), so a pointer is
 * also the address the device sees.
 *
 * Ordering on x86 (TSO): stores are seen in program order and loads are
 * not reordered with other loads, so publishing needs only a compiler
 * barrier; the one store->load pair that matters (our avail idx, then the
 * device's avail_event / used flags) gets a full fence. */
#ifndef TESTGUEST_VIRTQ_H
#define TESTGUEST_VIRTQ_H

#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_ring.h>

#define VIRTQ_MAX_SIZE 256

/* Physically contiguous, zeroed, `align`-aligned memory, or NULL once the
 * pool (end of image .. DMA_POOL_LIMIT) is exhausted. */
#define DMA_POOL_LIMIT (16ull << 20)    /* minivmm's smallest --mem */
void *dma_alloc(size_t size, size_t align);

struct virtq {
	uint16_t index;             /* queue index on the device */
	uint16_t num;               /* ring size, a power of two */
	int event_idx;              /* VIRTIO_F_EVENT_IDX negotiated */
	int want_irq;               /* ask the device for used-buffer interrupts */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	volatile uint16_t *used_event;  /* avail->ring[num]: ours */
	volatile uint16_t *avail_event; /* used->ring[num]: the device's */
	volatile uint32_t *notify;  /* the transport's QueueNotify register */
	uint16_t avail_idx;         /* next avail index (published or not) */
	uint16_t kick_old;          /* avail index at the last kick decision */
	uint16_t last_used;         /* next used entry to consume */
	uint64_t kicks;
	/* Free descriptor stack (used by queues that hand out descriptors in
	 * any order, e.g. TX). */
	uint16_t nfree;
	uint16_t free[VIRTQ_MAX_SIZE];
};

/* Allocate and zero the rings for `num` entries (power of two <= 256). */
int virtq_init(struct virtq *vq, uint16_t index, uint16_t num, int event_idx);
/* Zero the rings vq already has and start over (indices, counters, free
 * stack), keeping its memory, size and notify register: for a device reset
 * and a new bring-up without allocating again. */
void virtq_rewind(struct virtq *vq, int event_idx);

static inline void virtq_set_desc(struct virtq *vq, uint16_t id, const void *buf,
				  uint32_t len, uint16_t flags, uint16_t next)
{
	struct vring_desc *d = &vq->desc[id];

	d->addr = (uint64_t)(uintptr_t)buf;
	d->len = len;
	d->flags = flags;
	d->next = next;
}

/* Queue a chain head in the avail ring; not visible to the device until
 * virtq_publish(). */
static inline void virtq_push(struct virtq *vq, uint16_t head)
{
	vq->avail->ring[vq->avail_idx & (vq->num - 1)] = head;
	vq->avail_idx++;
}

/* Make everything pushed so far visible (descriptors and ring entries
 * first, then the index). */
static inline void virtq_publish(struct virtq *vq)
{
	__atomic_store_n(&vq->avail->idx, vq->avail_idx, __ATOMIC_RELEASE);
}

/* Publish, then kick QueueNotify if the device asked for it (avail_event
 * with EVENT_IDX, VRING_USED_F_NO_NOTIFY without). Returns 1 if kicked. */
int virtq_flush(struct virtq *vq);

/* Used entries the device has returned and we have not consumed. */
static inline uint16_t virtq_used_pending(const struct virtq *vq)
{
	return (uint16_t)(__atomic_load_n(&vq->used->idx, __ATOMIC_ACQUIRE) -
			  vq->last_used);
}

/* Consume the next used entry; only after virtq_used_pending() > 0. */
static inline struct vring_used_elem virtq_pop_used(struct virtq *vq)
{
	struct vring_used_elem e;

	e.id = vq->used->ring[vq->last_used & (vq->num - 1)].id;
	e.len = vq->used->ring[vq->last_used & (vq->num - 1)].len;
	vq->last_used++;
	return e;
}

/* Interrupt policy after consuming used entries: with want_irq, ask for an
 * interrupt at the next used entry (then re-check virtq_used_pending();
 * returns it); without, move used_event far from where the device is. */
uint16_t virtq_update_used_event(struct virtq *vq);

#endif
