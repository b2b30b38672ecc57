/* SPDX-License-Identifier: Apache-2.0 */
/* virtio-mmio transport, version 2 (virtio 1.x, section 4.2) only.
 *
 * Devices are found in the device tree the VMM passes as the PVH module
 * named "dtb" (minivmm; dtb.c), or, when there is none or it is unusable,
 * through the Linux-style command line words the VMM appends,
 * `virtio_mmio.device=<size>@<base>:<irq>` (size with an optional K/M/G
 * suffix, base in hex with 0x or decimal, irq decimal; an optional trailing
 * `:<id>` is ignored), as under QEMU microvm. The first lookup prints
 * `testguest: virtio-mmio source dtb|cmdline devices <n>`. Windows with
 * DeviceID 0 (QEMU microvm's empty slots) or a bad magic are skipped. Every register access is an exit
 * to the VMM (~28 us under PVM): none of this is on a hot path except the
 * QueueNotify kick, which the queues throttle. */
#ifndef TESTGUEST_VIRTIO_MMIO_H
#define TESTGUEST_VIRTIO_MMIO_H

#include <stdint.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>

#include "virtq.h"

#define VIRTIO_MMIO_MAGIC 0x74726976    /* "virt" */
#define VMMIO_MAX_WINDOWS 32            /* windows the guest keeps */

struct vmmio_dev {
	uintptr_t base;
	uint64_t size;
	unsigned irq;
	uint32_t device_id;
	uint32_t version;
};

enum vmmio_find_result {
	VMMIO_FOUND = 0,
	VMMIO_NONE = -1,            /* no window with that DeviceID */
	VMMIO_LEGACY = -2,          /* found, but Version 1: unsupported */
	VMMIO_BAD_WORD = -3,        /* a virtio_mmio.device= word did not parse */
};

/* Parse "<size>@<base>:<irq>[:<id>]". 0 or -1. */
int vmmio_parse_word(const char *s, struct vmmio_dev *out);
/* First device with this DeviceID among the windows (device tree or
 * cmdline, found on the first call). For
 * VMMIO_LEGACY, *out says which window. */
int vmmio_find(uint32_t device_id, struct vmmio_dev *out, int verbose);

uint32_t vmmio_read(const struct vmmio_dev *d, uint32_t reg);
void vmmio_write(const struct vmmio_dev *d, uint32_t reg, uint32_t v);
uint8_t vmmio_config8(const struct vmmio_dev *d, uint32_t off);
uint16_t vmmio_config16(const struct vmmio_dev *d, uint32_t off);

/* Reset, then ACKNOWLEDGE | DRIVER. */
void vmmio_begin(const struct vmmio_dev *d);
uint64_t vmmio_device_features(const struct vmmio_dev *d);
/* Write the driver features, set FEATURES_OK and check that it stuck:
 * 0, or -1 (the device refused the subset; FAILED is set). */
int vmmio_set_features(const struct vmmio_dev *d, uint64_t features);
/* Set up queue vq->index with at most `want` entries (rounded down to the
 * device's QueueNumMax and a power of two): allocates the rings (see
 * virtq_init), programs QueueNum/Desc/Driver/Device and QueueReady. 0 or
 * -1 (queue missing, already live, or out of memory). */
int vmmio_queue_setup(const struct vmmio_dev *d, struct virtq *vq,
		      uint16_t index, uint16_t want, int event_idx);
/* Program queue vq->index with the rings vq already has (after
 * virtq_rewind, to bring a device up again on the same memory). 0 or -1
 * (queue live, or smaller than vq->num). */
int vmmio_queue_program(const struct vmmio_dev *d, const struct virtq *vq);
void vmmio_driver_ok(const struct vmmio_dev *d);
void vmmio_fail(const struct vmmio_dev *d);

#endif
