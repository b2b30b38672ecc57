/* SPDX-License-Identifier: Apache-2.0 */
/* Split virtqueues (virtio 1.x, section 2.7), device side.
 *
 * The rings live in guest memory, which the guest may change at any moment:
 * every index is read once into a local and validated, every descriptor
 * address goes through guest_mem_ptr(), chains are walked with loop and
 * length limits. Any violation marks the queue broken (the transport then
 * reports NEEDS_RESET); it never crashes the VMM.
 *
 * One thread owns a queue's device side at a time (the worker serving it);
 * the functions here do no locking. */
#ifndef MINIVMM_DEVICES_VIRTIO_QUEUE_H
#define MINIVMM_DEVICES_VIRTIO_QUEUE_H

#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/guest_chain.h"
#include "base/guest_mem.h"

#define VIRTQ_MAX_SIZE 1024

enum virtq_error {
	VIRTQ_OK = 0,
	VIRTQ_ERR_AVAIL_IDX,      /* more than size chains outstanding (avail idx - used idx),
				   * or avail idx back behind what was popped */
	VIRTQ_ERR_HEAD,           /* head index >= size */
	VIRTQ_ERR_DESC_ADDR,      /* buffer outside guest RAM or overflowing */
	VIRTQ_ERR_NEXT,           /* next index out of range */
	VIRTQ_ERR_LOOP,           /* more descriptors than the table holds */
	VIRTQ_ERR_TOO_LONG,       /* more than GUEST_CHAIN_MAX_SEGS segments */
	VIRTQ_ERR_ORDER,          /* readable after writable */
	VIRTQ_ERR_INDIRECT,       /* bad indirect table (size, nesting, feature) */
};

struct virtq {
	const struct guest_mem *mem;
	uint16_t size;                    /* power of two */
	bool event_idx;                   /* VIRTIO_RING_F_EVENT_IDX negotiated */
	bool indirect;                    /* VIRTIO_RING_F_INDIRECT_DESC negotiated */
	volatile struct vring_desc *desc;
	volatile struct vring_avail *avail;
	volatile struct vring_used *used;
	volatile uint16_t *used_event;    /* in the avail ring, after ring[size] */
	volatile uint16_t *avail_event;   /* in the used ring, after ring[size] */

	uint16_t last_avail;              /* next avail ring slot to consume */
	uint16_t next_used;               /* shadow used idx: pushed, maybe not published */
	uint16_t published_used;          /* used idx the guest can see (last publish) */
	uint16_t signalled_used;          /* used idx when we last signalled */
	bool signalled_used_valid;
	enum virtq_error error;           /* first error; the queue is dead once set */
};

/* Validate the ring addresses (alignment, inside RAM) and reset indices. */
int virtq_init(struct virtq *q, const struct guest_mem *mem, uint16_t size, uint64_t desc_gpa,
	       uint64_t avail_gpa, uint64_t used_gpa, bool event_idx, bool indirect,
	       struct vmm_err *err);

/* Next available chain: 1 and *chain filled, 0 if none, -1 if the ring is
 * malformed (q->error says why; the queue stays broken). */
int virtq_pop(struct virtq *q, struct guest_chain *chain);

/* Number of chains the guest has made available and we have not popped. */
uint16_t virtq_pending(struct virtq *q);

/* Put a used element (not yet visible to the guest). */
void virtq_push(struct virtq *q, uint16_t head, uint32_t len);

/* Make pushed elements visible: store-release of used->idx. */
void virtq_publish(struct virtq *q);

/* After publish: does the guest want an interrupt for what we published
 * since the last signal? (used_event with EVENT_IDX, else NO_INTERRUPT.)
 * Records the signal when it returns true. */
bool virtq_should_signal(struct virtq *q);

/* Ask the guest not to kick us (we are busy and will look anyway). */
void virtq_disable_kicks(struct virtq *q);

/* Ask the guest to kick us on new buffers. Returns true if buffers arrived
 * meanwhile (then the caller must keep working: a kick may not come). */
bool virtq_enable_kicks(struct virtq *q);

const char *virtq_error_text(enum virtq_error e);

/* EVENT_IDX rule: should an event be sent when the index moves from old to
 * new_idx, given the other side asked for one at event_idx? (spec 2.7.10) */
static inline bool virtq_need_event(uint16_t event_idx, uint16_t new_idx, uint16_t old)
{
	return (uint16_t)(new_idx - event_idx - 1) < (uint16_t)(new_idx - old);
}

#endif
