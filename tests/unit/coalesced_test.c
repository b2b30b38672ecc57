/* SPDX-License-Identifier: Apache-2.0 */
/* KVM's coalesced I/O ring, as the vCPU loop drains it: every queued write
 * reaches its bus in order, the ring's `first` follows, nothing else moves. */
#include <criterion/criterion.h>
#include <string.h>

#include "vmm/coalesced.h"

#define PAGE 4096

struct recorder {
	char seen[1024];
	unsigned n;
	uint64_t last_off;
};

static void rec_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct recorder *r = opaque;
	for (unsigned i = 0; i < len && r->n < sizeof(r->seen); i++)
		r->seen[r->n++] = (char)data[i];
	r->last_off = off;
}

struct fixture {
	_Alignas(8) uint8_t page[PAGE];
	struct kvm_coalesced_mmio_ring *ring;
	struct bus pio, mmio;
	struct recorder pio_rec, mmio_rec;
	struct coalesced_ring c;
};

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->ring = (struct kvm_coalesced_mmio_ring *)f->page;
	bus_init(&f->pio, "pio");
	bus_init(&f->mmio, "mmio");
	struct bus_device p = { .name = "uart", .opaque = &f->pio_rec, .write = rec_write };
	struct bus_device m = { .name = "dev", .opaque = &f->mmio_rec, .write = rec_write };
	cr_assert_eq(bus_add(&f->pio, 0x3f8, 8, &p, NULL), 0);
	cr_assert_eq(bus_add(&f->mmio, 0xd0000000, 0x1000, &m, NULL), 0);
	coalesced_ring_init(&f->c, &f->pio, &f->mmio);
	coalesced_ring_attach(&f->c, f->page, PAGE);
}

static uint32_t ring_max(void)
{
	return (PAGE - sizeof(struct kvm_coalesced_mmio_ring)) / sizeof(struct kvm_coalesced_mmio);
}

/* What KVM does: fill the entry at `last`, then move `last`. */
static void kvm_queue(struct fixture *f, uint64_t addr, const char *bytes, unsigned len, bool pio)
{
	uint32_t last = f->ring->last;
	struct kvm_coalesced_mmio *e = &f->ring->coalesced_mmio[last];
	e->phys_addr = addr;
	e->len = len;
	e->pio = pio;
	memcpy(e->data, bytes, len);
	f->ring->last = (last + 1) % ring_max();
}

Test(coalesced, queued_writes_reach_their_devices_in_order)
{
	static struct fixture f;
	setup(&f);
	const char *msg = "hello\r\n";
	for (const char *p = msg; *p; p++)
		kvm_queue(&f, 0x3f8, p, 1, true);
	kvm_queue(&f, 0xd0000050, "\x01\x00\x00\x00", 4, false);
	coalesced_ring_drain(&f.c);
	cr_assert_eq(f.pio_rec.n, 7);
	cr_assert_eq(memcmp(f.pio_rec.seen, msg, 7), 0);
	cr_assert_eq(f.pio_rec.last_off, 0, "THR is offset 0 of the UART");
	cr_assert_eq(f.mmio_rec.n, 4);
	cr_assert_eq(f.mmio_rec.last_off, 0x50);
	cr_assert_eq(f.ring->first, f.ring->last, "the ring is empty again");
	coalesced_ring_destroy(&f.c);
}

Test(coalesced, the_ring_wraps_around)
{
	static struct fixture f;
	setup(&f);
	uint32_t max = ring_max();
	f.ring->first = f.ring->last = max - 2;
	kvm_queue(&f, 0x3f8, "a", 1, true);
	kvm_queue(&f, 0x3f8, "b", 1, true);
	kvm_queue(&f, 0x3f8, "c", 1, true);
	cr_assert_eq(f.ring->last, 1u);
	coalesced_ring_drain(&f.c);
	cr_assert_eq(f.pio_rec.n, 3);
	cr_assert_eq(memcmp(f.pio_rec.seen, "abc", 3), 0);
	cr_assert_eq(f.ring->first, 1u);
	coalesced_ring_destroy(&f.c);
}

Test(coalesced, an_empty_or_missing_ring_delivers_nothing)
{
	static struct fixture f;
	setup(&f);
	coalesced_ring_drain(&f.c);
	cr_assert_eq(f.pio_rec.n, 0);
	struct coalesced_ring none;
	coalesced_ring_init(&none, &f.pio, &f.mmio);   /* KVM without a ring */
	coalesced_ring_drain(&none);
	coalesced_ring_drain(NULL);
	coalesced_ring_destroy(&none);
	coalesced_ring_destroy(&f.c);
}

Test(coalesced, entries_with_impossible_lengths_are_skipped)
{
	static struct fixture f;
	setup(&f);
	kvm_queue(&f, 0x3f8, "x", 1, true);
	f.ring->coalesced_mmio[0].len = 0;
	kvm_queue(&f, 0x3f8, "y", 1, true);
	f.ring->coalesced_mmio[1].len = 200;
	kvm_queue(&f, 0x3f8, "z", 1, true);
	coalesced_ring_drain(&f.c);
	cr_assert_eq(f.pio_rec.n, 1);
	cr_assert_eq(f.pio_rec.seen[0], 'z');
	cr_assert_eq(f.ring->first, f.ring->last);
	coalesced_ring_destroy(&f.c);
}
