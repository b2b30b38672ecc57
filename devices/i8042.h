/* SPDX-License-Identifier: Apache-2.0 */
/* Just enough of the i8042 keyboard controller for Linux: its probe gets
 * sensible answers, and "pulse reset" (0xfe to port 0x64, what reboot=k
 * does) stops the VM with status 0. No keyboard or mouse behind it. */
#ifndef MINIVMM_DEVICES_I8042_H
#define MINIVMM_DEVICES_I8042_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/bus.h"
#include "base/machine.h"

struct i8042 {
	pthread_mutex_t lock;
	const struct machine *ev;
	uint8_t ctr;            /* controller configuration ("command byte") */
	uint8_t pending_cmd;    /* command waiting for its data byte, 0 if none */
	uint8_t out_byte;
	bool out_full;
};

void i8042_init(struct i8042 *k, const struct machine *ev);
void i8042_destroy(struct i8042 *k);

/* Data port 0x60 and status/command port 0x64, registered separately:
 * 0x61 (the PIT's speaker port) sits between them. */
struct bus_device i8042_data_port(struct i8042 *k);
struct bus_device i8042_command_port(struct i8042 *k);

#endif
