/* SPDX-License-Identifier: Apache-2.0 */
/* KVM's coalesced I/O ring: guest writes to a registered zone (here COM1's
 * transmit register) that KVM queues in a page shared with the VMM instead
 * of exiting to it each time (KVM_CAP_COALESCED_PIO). Whoever handles the
 * next exit, on any vCPU, first hands the queued writes to their devices in
 * order, so the guest can never see a device state that skips one. */
#ifndef MINIVMM_VMM_COALESCED_H
#define MINIVMM_VMM_COALESCED_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdint.h>

#include "devices/bus.h"

struct coalesced_ring {
	struct kvm_coalesced_mmio_ring *ring;   /* NULL: KVM has none, nothing to drain */
	uint32_t max;                           /* entries in the ring */
	pthread_mutex_t lock;                   /* one drainer at a time: KVM has one producer side */
	struct bus *pio, *mmio;
};

/* An empty ring (nothing to drain) for these buses. */
void coalesced_ring_init(struct coalesced_ring *c, struct bus *pio, struct bus *mmio);
/* The ring's page, page_size bytes (from a vCPU's kvm_run mapping, at the
 * page offset KVM_CHECK_EXTENSION(KVM_CAP_COALESCED_MMIO) returns). Before
 * any vCPU runs. */
void coalesced_ring_attach(struct coalesced_ring *c, void *ring_page, long page_size);
/* Deliver every queued write, oldest first; returns how many. Cheap when
 * the ring is empty. */
unsigned coalesced_ring_drain(struct coalesced_ring *c);
/* Forget the ring (its page goes with the vCPU's kvm_run mapping): drains
 * deliver nothing from now on. After every thread that drains is gone. */
void coalesced_ring_detach(struct coalesced_ring *c);
void coalesced_ring_destroy(struct coalesced_ring *c);

#endif
