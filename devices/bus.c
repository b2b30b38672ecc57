/* SPDX-License-Identifier: Apache-2.0 */
#include "devices/bus.h"

#include <errno.h>
#include <string.h>

void bus_init(struct bus *bus, const char *name)
{
	memset(bus, 0, sizeof(*bus));
	bus->name = name;
}

int bus_add(struct bus *bus, uint64_t base, uint64_t len, const struct bus_device *dev,
	    struct vmm_err *err)
{
	if (len == 0 || base + len < base)
		return vmm_err_set(err, EINVAL, "%s bus: bad range for %s", bus->name, dev->name);
	if (bus->nr == BUS_MAX_RANGES)
		return vmm_err_set(err, ENOSPC, "%s bus: too many devices (adding %s)", bus->name,
				   dev->name);
	unsigned pos = 0;
	while (pos < bus->nr && bus->range[pos].base < base)
		pos++;
	/* Sorted and disjoint: only the neighbours can overlap. */
	if (pos > 0) {
		const struct bus_range *prev = &bus->range[pos - 1];
		if (prev->base + prev->len > base)
			return vmm_err_set(err, EBUSY, "%s bus: %s at 0x%llx overlaps %s", bus->name,
					   dev->name, (unsigned long long)base, prev->dev.name);
	}
	if (pos < bus->nr && base + len > bus->range[pos].base)
		return vmm_err_set(err, EBUSY, "%s bus: %s at 0x%llx overlaps %s", bus->name,
				   dev->name, (unsigned long long)base, bus->range[pos].dev.name);
	memmove(&bus->range[pos + 1], &bus->range[pos], (bus->nr - pos) * sizeof(bus->range[0]));
	bus->range[pos] = (struct bus_range){ .base = base, .len = len, .dev = *dev };
	bus->nr++;
	return 0;
}

static struct bus_range *bus_find(struct bus *bus, uint64_t addr)
{
	unsigned lo = 0, hi = bus->nr;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		struct bus_range *r = &bus->range[mid];
		if (addr < r->base)
			hi = mid;
		else if (addr - r->base >= r->len)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

bool bus_access(struct bus *bus, uint64_t addr, uint8_t *data, unsigned len, bool is_write)
{
	struct bus_range *r = bus_find(bus, addr);
	if (!r) {
		if (!is_write)
			memset(data, 0xff, len);
		__atomic_add_fetch(&bus->unhandled, 1, __ATOMIC_RELAXED);
		return false;
	}
	uint64_t off = addr - r->base;
	if (is_write) {
		if (r->dev.write)
			r->dev.write(r->dev.opaque, off, data, len);
	} else if (r->dev.read) {
		r->dev.read(r->dev.opaque, off, data, len);
	} else {
		memset(data, 0xff, len);
	}
	return true;
}
