/* SPDX-License-Identifier: Apache-2.0 */
/* What a device may ask of the machine it sits in, without knowing the VM
 * or KVM.
 *
 * Devices (serial, i8042, debug-exit, ACPI PM, virtio) get one of these at
 * creation: they can stop the VM with an exit status, log a line through the
 * embedding program's sink, drive an interrupt line, and have KVM turn guest
 * writes into eventfd signals and eventfd signals into interrupts. vmm/
 * implements it over KVM; unit tests and fuzzers implement it with fakes. */
#ifndef MINIVMM_BASE_MACHINE_H
#define MINIVMM_BASE_MACHINE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

struct confine;
struct spawner;

struct machine {
	void *opaque;
	/* Stop the VM; the first request wins. reason is one line. */
	void (*request_stop)(void *opaque, int status, const char *reason);
	/* One line of information for the user (no trailing newline). */
	void (*log)(void *opaque, const char *line);
	/* Drive interrupt line `gsi` to `level` (0 or 1). Returns 0 or -errno. */
	int (*set_irq)(void *opaque, unsigned gsi, int level);
	/* (Un)register: a `len`-byte guest write of `datamatch` to the
	 * guest-physical `addr` signals eventfd `fd` instead of exiting. */
	int (*ioeventfd)(void *opaque, uint64_t addr, unsigned len, uint64_t datamatch, int fd,
			 bool assign);
	/* (Un)register: each signal on eventfd `fd` raises interrupt `gsi`. */
	int (*irqfd)(void *opaque, int fd, unsigned gsi, bool assign);
	/* (Un)register: guest writes to ports [port, port+len) are queued
	 * instead of exiting each time, and reach the device, in order,
	 * before the next exit (on any vCPU) is handled or the VM stops.
	 * For a register whose writes have no effect the guest could see
	 * before its next access to the device. -EOPNOTSUPP: KVM cannot. */
	int (*coalesce_pio)(void *opaque, uint16_t port, unsigned len, bool assign);
	/* Deliver the writes queued so far (coalesce_pio) to their devices,
	 * in order, now; returns how many. Not with a device's lock held:
	 * the device's own handler takes it. */
	unsigned (*drain_queued)(void *opaque);
	/* How the devices' threads confine themselves (base/confine.h), and
	 * the thread that starts threads for confined ones (base/spawn.h).
	 * NULL: not confined, threads started directly (tests, fakes). */
	const struct confine *confine;
	struct spawner *spawner;
};

static inline void machine_stop(const struct machine *m, int status, const char *reason)
{
	m->request_stop(m->opaque, status, reason);
}

static inline void machine_log(const struct machine *m, const char *line)
{
	m->log(m->opaque, line);
}

static inline int machine_set_irq(const struct machine *m, unsigned gsi, int level)
{
	return m->set_irq ? m->set_irq(m->opaque, gsi, level) : 0;
}

static inline int machine_ioeventfd(const struct machine *m, uint64_t addr, unsigned len,
				    uint64_t datamatch, int fd, bool assign)
{
	return m->ioeventfd ? m->ioeventfd(m->opaque, addr, len, datamatch, fd, assign) : 0;
}

static inline int machine_irqfd(const struct machine *m, int fd, unsigned gsi, bool assign)
{
	return m->irqfd ? m->irqfd(m->opaque, fd, gsi, assign) : 0;
}

static inline int machine_coalesce_pio(const struct machine *m, uint16_t port, unsigned len, bool assign)
{
	return m->coalesce_pio ? m->coalesce_pio(m->opaque, port, len, assign) : -EOPNOTSUPP;
}

static inline unsigned machine_drain_queued(const struct machine *m)
{
	return m->drain_queued ? m->drain_queued(m->opaque) : 0;
}

#endif
