/* SPDX-License-Identifier: Apache-2.0 */
#include "devices/pvpanic.h"

#include <string.h>

#include "minivmm_abi.h"

void pvpanic_init(struct pvpanic *p, const struct machine *ev)
{
	p->ev = ev;
}

/* Byte 0 is the register; anything above it (the MMIO form's reserved high
 * byte, a wider access) reads 0. */
static void pvpanic_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	(void)opaque;
	memset(data, 0, len);
	if (off == 0 && len > 0)
		data[0] = PVPANIC_EVENTS;
}

/* Only byte 0 carries an event (Linux writes one byte; a wider write's low
 * byte is the register). The first stop request wins, so a guest that resets
 * after reporting its panic (panic=N) still exits with the panic status. */
static void pvpanic_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct pvpanic *p = opaque;
	if (off != 0 || len == 0)
		return;
	uint8_t event = data[0];
	if (event & PVPANIC_PANICKED)
		machine_stop(p->ev, MINIVMM_EXIT_GUEST_PANIC, "guest panicked (pvpanic)");
	else if (event & PVPANIC_CRASH_LOADED)
		machine_stop(p->ev, MINIVMM_EXIT_GUEST_PANIC,
			     "guest panicked (pvpanic: crash kernel loaded)");
}

struct bus_device pvpanic_device(struct pvpanic *p)
{
	return (struct bus_device){ .name = "pvpanic", .opaque = p,
				    .read = pvpanic_read, .write = pvpanic_write };
}
