/* SPDX-License-Identifier: Apache-2.0 */
/* 16550A UART (COM1): guest output to a file descriptor, host input to the
 * guest, interrupts on an ISA IRQ of the in-kernel irqchip. */
#ifndef MINIVMM_DEVICES_SERIAL_H
#define MINIVMM_DEVICES_SERIAL_H

#include <stdbool.h>

#include "devices/bus.h"
#include "base/error.h"
#include "base/machine.h"

struct serial;

struct serial_config {
	int in_fd;          /* host input for the guest, -1 for none */
	int out_fd;         /* guest output, -1 to discard */
	bool raw_terminal;  /* put in_fd in raw mode if it is a terminal (restored at destroy) */
	unsigned gsi;       /* ISA IRQ, 4 for COM1 */
	/* The transmit register's port (0x3f8 for COM1), to have the machine
	 * queue the guest's transmitted bytes instead of exiting on each
	 * (machine_coalesce_pio) while that cannot be seen: no THR-empty
	 * interrupt enabled, no loopback. 0: every write exits. */
	uint16_t thr_port;
	/* Output that does not take bytes: the UART waits (the guest's
	 * vCPU with it) while out_fd is full, but never blocks in write():
	 * it gives up when *stopping becomes true, and after stall_ms
	 * without progress (0: no limit) it drops output until out_fd takes
	 * bytes again. An output that fails (EPIPE: the reader went away)
	 * is logged once and dropped for good. */
	unsigned stall_ms;
	const bool *stopping;   /* atomic, may be NULL */
	char out_name[96];      /* for those log lines: "serial output 'x.log'" */
};

int serial_create(struct serial **out, const struct serial_config *cfg, const struct machine *m,
		  struct vmm_err *err);

/* The bus device for the eight UART registers. */
struct bus_device serial_bus_device(struct serial *s);

/* Start / stop the thread that feeds host input to the guest. */
int serial_start_input(struct serial *s, struct vmm_err *err);
void serial_stop_input(struct serial *s);

/* Stops input, restores the terminal, frees. NULL is fine. */
void serial_destroy(struct serial *s);

#endif
