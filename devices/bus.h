/* SPDX-License-Identifier: Apache-2.0 */
/* Port-I/O and MMIO buses: map an address range to a device's handlers.
 *
 * Devices are added while the VM is being built, before any vCPU runs; after
 * that the bus is read-only, so vCPU threads look it up without locking.
 * Handlers run on the vCPU thread that made the access; a device that is
 * also touched by other threads does its own locking. */
#ifndef MINIVMM_DEVICES_BUS_H
#define MINIVMM_DEVICES_BUS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct bus_device {
	const char *name;
	void *opaque;
	/* offset is relative to the range base; len is 1, 2, 4 or 8. */
	void (*read)(void *opaque, uint64_t offset, uint8_t *data, unsigned len);
	void (*write)(void *opaque, uint64_t offset, const uint8_t *data, unsigned len);
};

struct bus_range {
	uint64_t base;
	uint64_t len;
	struct bus_device dev;
};

#define BUS_MAX_RANGES 64

struct bus {
	const char *name;   /* "pio" or "mmio", for messages */
	struct bus_range range[BUS_MAX_RANGES];   /* sorted by base, disjoint */
	unsigned nr;
	uint64_t unhandled;  /* accesses that hit no device */
};

void bus_init(struct bus *bus, const char *name);

/* Add [base, base+len); refuses overlaps with an existing range. */
int bus_add(struct bus *bus, uint64_t base, uint64_t len, const struct bus_device *dev,
	    struct vmm_err *err);

/* Dispatch one access. Returns false when no device claims the address: a
 * read then yields all-ones (as on an empty ISA/PCI bus), a write is dropped. */
bool bus_access(struct bus *bus, uint64_t addr, uint8_t *data, unsigned len, bool is_write);

/* Little-endian helpers for handlers. */
static inline uint64_t bus_load_le(const uint8_t *data, unsigned len)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < len && i < 8; i++)
		v |= (uint64_t)data[i] << (8 * i);
	return v;
}

static inline void bus_store_le(uint8_t *data, unsigned len, uint64_t v)
{
	for (unsigned i = 0; i < len && i < 8; i++)
		data[i] = (uint8_t)(v >> (8 * i));
}

#endif
