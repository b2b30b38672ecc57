/* SPDX-License-Identifier: Apache-2.0 */
/* Hardware-reduced ACPI sleep registers (ACPI 6.x section 4.8.3.7): the
 * guest powers off by writing SLP_EN | SLP_TYP(\_S5) to the sleep control
 * register; minivmm then stops the VM with status 0.
 *
 * One bus device covers both registers: sleep control at the base port,
 * sleep status at base + 1 (the FADT's SLEEP_CONTROL_REG and
 * SLEEP_STATUS_REG, 8 bits each, see boot/acpi.c). */
#ifndef MINIVMM_DEVICES_ACPI_PM_H
#define MINIVMM_DEVICES_ACPI_PM_H

#include <stdint.h>

#include "devices/bus.h"
#include "base/machine.h"

#define ACPI_PM_PORT        0x600   /* clear of COM1, i8042, debug-exit, boot timer */
#define ACPI_PM_PORT_LEN    2       /* control, status */

/* Sleep control register */
#define ACPI_SLEEP_SLP_TYP_SHIFT 2
#define ACPI_SLEEP_SLP_TYP_MASK  0x1c
#define ACPI_SLEEP_SLP_EN        0x20
/* Sleep status register */
#define ACPI_SLEEP_WAK_STS       0x80

struct acpi_pm {
	const struct machine *ev;
	uint8_t s5_slp_typ;   /* SLP_TYP that means "power off" (the DSDT's \_S5) */
};

/* s5_slp_typ is ACPI_S5_SLP_TYP from boot/acpi.h. */
void acpi_pm_init(struct acpi_pm *pm, const struct machine *ev, uint8_t s5_slp_typ);

/* The device for [ACPI_PM_PORT, ACPI_PM_PORT + ACPI_PM_PORT_LEN). No state
 * changes after init, so it needs no lock and no destroy. */
struct bus_device acpi_pm_device(struct acpi_pm *pm);

#endif
