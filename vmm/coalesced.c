/* SPDX-License-Identifier: Apache-2.0 */
#include "vmm/coalesced.h"

#include <string.h>

void coalesced_ring_init(struct coalesced_ring *c, struct bus *pio, struct bus *mmio)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	c->pio = pio;
	c->mmio = mmio;
}

void coalesced_ring_attach(struct coalesced_ring *c, void *ring_page, long page_size)
{
	if (!ring_page || page_size <= (long)sizeof(struct kvm_coalesced_mmio_ring))
		return;
	/* KVM_COALESCED_MMIO_MAX, with the kernel's page size. */
	c->max = (uint32_t)(((size_t)page_size - sizeof(struct kvm_coalesced_mmio_ring)) /
			    sizeof(struct kvm_coalesced_mmio));
	c->ring = ring_page;
}

unsigned coalesced_ring_drain(struct coalesced_ring *c)
{
	struct kvm_coalesced_mmio_ring *r = c ? c->ring : NULL;
	if (!r || __atomic_load_n(&r->first, __ATOMIC_RELAXED) ==
		  __atomic_load_n(&r->last, __ATOMIC_ACQUIRE))
		return 0;
	unsigned delivered = 0;
	pthread_mutex_lock(&c->lock);
	for (;;) {
		uint32_t first = __atomic_load_n(&r->first, __ATOMIC_RELAXED);
		/* Acquire: the entry KVM wrote before moving `last` is visible. */
		uint32_t last = __atomic_load_n(&r->last, __ATOMIC_ACQUIRE);
		if (first == last || first >= c->max || last >= c->max)
			break;   /* empty, or indices KVM never writes */
		struct kvm_coalesced_mmio e = r->coalesced_mmio[first];
		if (e.len >= 1 && e.len <= sizeof(e.data))
			bus_access(e.pio ? c->pio : c->mmio, e.phys_addr, e.data, e.len, true);
		/* Release, after the device saw the write: a vCPU that finds the
		 * ring empty without the lock knows its writes were delivered. */
		__atomic_store_n(&r->first, (first + 1) % c->max, __ATOMIC_RELEASE);
		delivered++;
	}
	pthread_mutex_unlock(&c->lock);
	return delivered;
}

void coalesced_ring_detach(struct coalesced_ring *c)
{
	pthread_mutex_lock(&c->lock);
	c->ring = NULL;
	pthread_mutex_unlock(&c->lock);
}

void coalesced_ring_destroy(struct coalesced_ring *c)
{
	pthread_mutex_destroy(&c->lock);
	c->ring = NULL;
}
