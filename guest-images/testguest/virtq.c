/* SPDX-License-Identifier: Apache-2.0 */
#include "virtq.h"

#include "io.h"
#include "lib.h"

extern char _end[];             /* linker script: end of the image */

static uintptr_t dma_next;

void *dma_alloc(size_t size, size_t align)
{
	uintptr_t p;

	if (!dma_next)
		dma_next = (uintptr_t)_end;
	p = (dma_next + align - 1) & ~(uintptr_t)(align - 1);
	if (p + size > DMA_POOL_LIMIT || p + size < p)
		return NULL;
	dma_next = p + size;
	/* No memset: the pool is never reused and guest RAM starts zeroed, so
	 * this memory is zero, and writing it would make the host allocate
	 * buffers nobody has used yet (an idle VM's resident memory). */
	return (void *)p;
}

int virtq_init(struct virtq *vq, uint16_t index, uint16_t num, int event_idx)
{
	/* Each part on its own page(s): the device writes the used ring, we
	 * write the others; no false sharing between them. */
	size_t dsz = sizeof(struct vring_desc) * num;
	size_t asz = sizeof(uint16_t) * (3 + num);
	size_t usz = sizeof(uint16_t) * 3 + sizeof(struct vring_used_elem) * num;

	if (!num || num > VIRTQ_MAX_SIZE || (num & (num - 1)))
		return -1;
	memset(vq, 0, sizeof(*vq));
	vq->index = index;
	vq->num = num;
	vq->event_idx = event_idx;
	vq->desc = dma_alloc(dsz, 4096);
	vq->avail = dma_alloc(asz, 4096);
	vq->used = dma_alloc(usz, 4096);
	if (!vq->desc || !vq->avail || !vq->used)
		return -1;
	vq->used_event = &vq->avail->ring[num];
	vq->avail_event = (volatile uint16_t *)&vq->used->ring[num];
	/* Start quiet: no interrupts until someone sets want_irq. */
	virtq_update_used_event(vq);
	return 0;
}

void virtq_rewind(struct virtq *vq, int event_idx)
{
	uint16_t index = vq->index, num = vq->num;
	struct vring_desc *desc = vq->desc;
	struct vring_avail *avail = vq->avail;
	struct vring_used *used = vq->used;
	volatile uint32_t *notify = vq->notify;

	memset(desc, 0, sizeof(struct vring_desc) * num);
	memset(avail, 0, sizeof(uint16_t) * (3 + num));
	memset(used, 0, sizeof(uint16_t) * 3 + sizeof(struct vring_used_elem) * num);
	memset(vq, 0, sizeof(*vq));
	vq->index = index;
	vq->num = num;
	vq->event_idx = event_idx;
	vq->desc = desc;
	vq->avail = avail;
	vq->used = used;
	vq->used_event = &avail->ring[num];
	vq->avail_event = (volatile uint16_t *)&used->ring[num];
	vq->notify = notify;
	virtq_update_used_event(vq);
}

int virtq_flush(struct virtq *vq)
{
	uint16_t old = vq->kick_old, new = vq->avail_idx;
	int need;

	if (old == new)
		return 0;
	virtq_publish(vq);
	/* Store (avail->idx) -> load (avail_event / used->flags): the device
	 * may have written its side just before seeing our index, so a full
	 * fence; then read its wish exactly once. */
	mb();
	if (vq->event_idx)
		need = vring_need_event(*vq->avail_event, new, old);
	else
		need = !(__atomic_load_n(&vq->used->flags, __ATOMIC_RELAXED) &
			 VRING_USED_F_NO_NOTIFY);
	vq->kick_old = new;
	if (!need)
		return 0;
	*vq->notify = vq->index;        /* QueueNotify: the queue index */
	vq->kicks++;
	return 1;
}

uint16_t virtq_update_used_event(struct virtq *vq)
{
	if (!vq->event_idx) {
		/* The flag is only a hint for the device, so no re-check race
		 * to close for suppression; for interrupts it is 0. */
		vq->avail->flags = vq->want_irq ? 0 : VRING_AVAIL_F_NO_INTERRUPT;
		if (!vq->want_irq)
			return 0;
		mb();
		return virtq_used_pending(vq);
	}
	if (!vq->want_irq) {
		/* Half the index space away: the device (at most num entries
		 * ahead of us) cannot reach it before our next update. */
		*vq->used_event = (uint16_t)(vq->last_used + 0x8000);
		return 0;
	}
	/* Interrupt when the device writes used entry last_used. It may have
	 * done so already before seeing used_event: re-check after a fence. */
	*vq->used_event = vq->last_used;
	mb();
	return virtq_used_pending(vq);
}
