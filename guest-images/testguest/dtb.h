/* SPDX-License-Identifier: Apache-2.0 */
/* A minimal reader for the flattened device tree (DTB) minivmm hands PVH
 * guests as a boot module named "dtb": enough to list the virtio-mmio
 * devices. The guest cannot link libfdt, and although the VMM wrote the
 * blob, every offset and length in it is checked before use. */
#ifndef TESTGUEST_DTB_H
#define TESTGUEST_DTB_H

#include <stdint.h>

#include "pvh.h"

struct dtb_mmio_dev {
	uint64_t base;
	uint64_t size;
	unsigned irq;     /* first cell of `interrupts`: the IOAPIC pin */
};

/* The module whose cmdline is "dtb", inside the identity-mapped 4 GiB:
 * 1 and *blob / *size set, or 0 when there is none. */
int dtb_find_module(const struct hvm_start_info *si, const uint8_t **blob, uint64_t *size);

/* Every node with "virtio,mmio" in its compatible list, in tree order, its
 * reg read with the parent's #address-cells / #size-cells. Returns the
 * number found (at most max are stored), or -1 with *why saying what is
 * wrong with the blob (header, token, bounds, a device without reg or
 * interrupts, more than max devices). */
int dtb_virtio_mmio(const uint8_t *blob, uint64_t avail, struct dtb_mmio_dev *out, unsigned max,
		    const char **why);

#endif
