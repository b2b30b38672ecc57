/* SPDX-License-Identifier: Apache-2.0 */
#include "devices/acpi_pm.h"

#include <stdio.h>
#include <string.h>

#include "minivmm_abi.h"

void acpi_pm_init(struct acpi_pm *pm, const struct machine *ev, uint8_t s5_slp_typ)
{
	memset(pm, 0, sizeof(*pm));
	pm->ev = ev;
	pm->s5_slp_typ = s5_slp_typ;
}

static void acpi_pm_sleep_control(struct acpi_pm *pm, uint8_t v)
{
	if (!(v & ACPI_SLEEP_SLP_EN))
		return;
	unsigned typ = (v & ACPI_SLEEP_SLP_TYP_MASK) >> ACPI_SLEEP_SLP_TYP_SHIFT;
	if (typ == pm->s5_slp_typ) {
		machine_stop(pm->ev, MINIVMM_EXIT_OK, "guest powered off (ACPI S5)");
		return;
	}
	/* Only \_S5 is advertised: anything else is a confused guest. */
	char line[80];
	snprintf(line, sizeof(line), "ACPI: guest asked for sleep type %u, ignored", typ);
	machine_log(pm->ev, line);
}

/* Reads: the control register reads 0 (SLP_EN is write-only) and the status
 * register never shows WAK_STS (nothing wakes a powered-off guest), so a
 * guest polling for wake-up after its S5 write spins until the VM stops,
 * as on hardware that lost power. */
static void acpi_pm_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	(void)opaque;
	(void)off;
	memset(data, 0, len);
}

/* Byte by byte, so a 16-bit access covering both registers works too.
 * Writes to the status register (WAK_STS is write-1-to-clear) have nothing
 * to clear. */
static void acpi_pm_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct acpi_pm *pm = opaque;
	for (unsigned i = 0; i < len; i++)
		if (off + i == 0)
			acpi_pm_sleep_control(pm, data[i]);
}

struct bus_device acpi_pm_device(struct acpi_pm *pm)
{
	return (struct bus_device){ .name = "acpi-pm", .opaque = pm,
				    .read = acpi_pm_read, .write = acpi_pm_write };
}
