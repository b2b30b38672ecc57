/* SPDX-License-Identifier: Apache-2.0 */
/* QEMU's pvpanic device (QEMU docs/specs/pvpanic.rst): how a guest says it
 * panicked. One byte register: a read returns the events the device handles,
 * PVPANIC_PANICKED | PVPANIC_CRASH_LOADED (<misc/pvpanic.h>); the guest writes
 * the event when it panics, and either stops the VM with
 * MINIVMM_EXIT_GUEST_PANIC. Other bits (a newer guest's PVPANIC_SHUTDOWN,
 * which the device does not offer) are ignored.
 *
 * The same register sits on the ISA port MINIVMM_PORT_PVPANIC, which Linux
 * finds through the DSDT (_HID "QEMU0001"), and at MINIVMM_PVPANIC_MMIO_BASE,
 * which the device tree describes ("qemu,pvpanic-mmio", a 16-bit register
 * whose high byte is reserved and reads 0). */
#ifndef MINIVMM_DEVICES_PVPANIC_H
#define MINIVMM_DEVICES_PVPANIC_H

#include <misc/pvpanic.h>

#include "devices/bus.h"
#include "base/machine.h"

/* What a read of the register returns. */
#define PVPANIC_EVENTS (PVPANIC_PANICKED | PVPANIC_CRASH_LOADED)

struct pvpanic {
	const struct machine *ev;
};

void pvpanic_init(struct pvpanic *p, const struct machine *ev);

/* The register, for the port-I/O bus (1 byte) and the MMIO bus
 * (MINIVMM_PVPANIC_MMIO_SIZE bytes). No state changes after init, so it
 * needs no lock and no destroy. */
struct bus_device pvpanic_device(struct pvpanic *p);

#endif
