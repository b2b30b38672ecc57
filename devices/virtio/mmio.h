/* SPDX-License-Identifier: Apache-2.0 */
/* virtio-mmio transport, version 2 (virtio 1.x, section 4.2).
 *
 * The transport knows registers, the status state machine, feature
 * negotiation and queue configuration; the device behind it (virtio-net)
 * knows its features, config space and what to do on DRIVER_OK and reset.
 *
 * Notifications never go through userspace: QueueNotify writes become one
 * eventfd per queue (KVM_IOEVENTFD with datamatch on the queue index), and
 * workers interrupt the guest through one irqfd per device. */
#ifndef MINIVMM_DEVICES_VIRTIO_MMIO_H
#define MINIVMM_DEVICES_VIRTIO_MMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/bus.h"
#include "base/error.h"
#include "base/machine.h"

#define VIRTIO_MMIO_MAX_QUEUES 64
#define VIRTIO_MMIO_VENDOR 0x4d4d564d   /* "MVMM" */

struct virtio_mmio;

/* What a device implements for the transport. */
struct virtio_device_ops {
	uint32_t device_id;
	uint64_t (*features)(void *dev);   /* offered, VERSION_1 included */
	void (*config_read)(void *dev, uint32_t off, uint8_t *data, unsigned len);
	void (*config_write)(void *dev, uint32_t off, const uint8_t *data, unsigned len);
	/* DRIVER_OK: start serving the queues with the acked features. An error
	 * makes the transport report NEEDS_RESET. */
	int (*activate)(void *dev, uint64_t features, struct vmm_err *err);
	/* Reset (status 0) or teardown: stop using guest memory before returning. */
	void (*reset)(void *dev);
};

/* A queue as the driver configured it. */
struct virtio_queue_config {
	uint16_t max_size;
	uint16_t size;
	bool ready;
	uint64_t desc, driver, device;   /* guest-physical ring addresses */
};

struct virtio_mmio {
	pthread_mutex_t lock;   /* register state; never taken by workers */
	const struct virtio_device_ops *ops;
	void *dev;
	const struct machine *machine;
	uint64_t base;
	unsigned gsi;

	unsigned nr_queues;
	struct virtio_queue_config queue[VIRTIO_MMIO_MAX_QUEUES];
	int kick_fd[VIRTIO_MMIO_MAX_QUEUES];
	int irq_fd;

	uint32_t status;              /* atomic: NEEDS_RESET is set by workers */
	uint32_t interrupt_status;    /* atomic: set by workers, acked by vCPUs */
	uint32_t config_generation;
	uint32_t device_features_sel;
	uint32_t driver_features_sel;
	uint64_t driver_features;
	uint32_t queue_sel;
	char last_error[160];         /* why NEEDS_RESET was set */
	/* Said once, the first time the guest's driver sets FAILED (its probe
	 * or set-up went wrong): what the machine knows that may explain it. */
	const char *failed_hint;
	bool failed_said;
};

/* Create the transport for a device with nr_queues queues of at most
 * max_queue_size entries, its window at `base` and interrupt on `gsi`:
 * registers the ioeventfds and the irqfd with KVM. */
int virtio_mmio_create(struct virtio_mmio **out, const struct machine *m, uint64_t base, unsigned gsi,
		       unsigned nr_queues, uint16_t max_queue_size,
		       const struct virtio_device_ops *ops, void *dev, struct vmm_err *err);
void virtio_mmio_destroy(struct virtio_mmio *t);

struct bus_device virtio_mmio_bus_device(struct virtio_mmio *t);

/* Called by workers after publishing used buffers the guest wants to hear
 * about: sets INT_VRING and signals the irqfd. Lock-free. */
void virtio_mmio_signal_used(struct virtio_mmio *t);

/* The device hit an error it cannot continue from (e.g. a malformed ring):
 * set NEEDS_RESET and raise a configuration interrupt. Lock-free. */
void virtio_mmio_set_needs_reset(struct virtio_mmio *t, const char *why);

/* The device changed its config space (e.g. link status). */
void virtio_mmio_config_changed(struct virtio_mmio *t);

static inline const struct virtio_queue_config *virtio_mmio_queue(const struct virtio_mmio *t,
								  unsigned q)
{
	return &t->queue[q];
}

/* The "virtio_mmio.device=" word Linux needs to find this device. */
void virtio_mmio_cmdline_word(const struct virtio_mmio *t, char *buf, size_t size);

#endif
