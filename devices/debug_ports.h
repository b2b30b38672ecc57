/* SPDX-License-Identifier: Apache-2.0 */
/* Two tiny guest-to-VMM signalling ports:
 *  - debug exit (MINIVMM_PORT_DEBUG_EXIT): QEMU isa-debug-exit semantics, a
 *    write of v stops the VM with status (v << 1) | 1, for v up to
 *    MINIVMM_DEBUG_EXIT_MAX; anything larger stops it with
 *    MINIVMM_EXIT_DEBUG_RANGE (it would not fit in an exit status);
 *  - boot timer (MINIVMM_PORT_BOOT_TIMER): the guest writes
 *    MINIVMM_BOOT_TIMER_UP when it is up; the VMM logs the time since it
 *    started. */
#ifndef MINIVMM_DEVICES_DEBUG_PORTS_H
#define MINIVMM_DEVICES_DEBUG_PORTS_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/bus.h"
#include "base/machine.h"
#include "minivmm_abi.h"

struct debug_ports {
	const struct machine *ev;
	uint64_t start_ns;          /* CLOCK_MONOTONIC when the VMM started */
	uint64_t guest_up_ns;       /* when the guest said it is up, 0 if not yet */
};

void debug_ports_init(struct debug_ports *d, const struct machine *ev, uint64_t start_ns);

struct bus_device debug_exit_device(struct debug_ports *d);
struct bus_device boot_timer_device(struct debug_ports *d);

/* Status the debug-exit port produces for a guest value: QEMU's for 0..63,
 * one reserved status above (QEMU's (v << 1) | 1 would be truncated to 8
 * bits by the exit status, or read as "killed by signal"). */
static inline int debug_exit_status(uint32_t value)
{
	if (value > MINIVMM_DEBUG_EXIT_MAX)
		return MINIVMM_EXIT_DEBUG_RANGE;
	return (int)((value << 1) | 1);
}

#endif
