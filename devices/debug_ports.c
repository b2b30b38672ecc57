/* SPDX-License-Identifier: Apache-2.0 */
#include "devices/debug_ports.h"

#include <stdio.h>
#include <time.h>

#include "minivmm_abi.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void debug_ports_init(struct debug_ports *d, const struct machine *ev, uint64_t start_ns)
{
	d->ev = ev;
	d->start_ns = start_ns;
	d->guest_up_ns = 0;
}

static void debug_exit_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct debug_ports *d = opaque;
	(void)off;
	uint32_t value = (uint32_t)bus_load_le(data, len > 4 ? 4 : len);
	char reason[128];
	if (value > MINIVMM_DEBUG_EXIT_MAX)
		snprintf(reason, sizeof(reason),
			 "guest wrote %u to the debug-exit port: debug-exit value out of range (0 to %d)",
			 value, MINIVMM_DEBUG_EXIT_MAX);
	else
		snprintf(reason, sizeof(reason), "guest wrote %u to the debug-exit port", value);
	machine_stop(d->ev, debug_exit_status(value), reason);
}

static void boot_timer_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct debug_ports *d = opaque;
	(void)off;
	if (bus_load_le(data, len) != MINIVMM_BOOT_TIMER_UP)
		return;
	uint64_t up = now_ns();
	uint64_t expected = 0;
	/* Only the first "I am up" counts, whichever vCPU sends it. */
	if (!__atomic_compare_exchange_n(&d->guest_up_ns, &expected, up, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	char line[96];
	snprintf(line, sizeof(line), "boot time: %.3f ms from VMM start to guest up",
		 (double)(up - d->start_ns) / 1e6);
	machine_log(d->ev, line);
}

struct bus_device debug_exit_device(struct debug_ports *d)
{
	return (struct bus_device){ .name = "debug-exit", .opaque = d, .write = debug_exit_write };
}

struct bus_device boot_timer_device(struct debug_ports *d)
{
	return (struct bus_device){ .name = "boot-timer", .opaque = d, .write = boot_timer_write };
}
