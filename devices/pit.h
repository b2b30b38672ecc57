/* SPDX-License-Identifier: Apache-2.0 */
/* The 8254 programmable interval timer of a split-irqchip machine, where
 * KVM models only the LAPICs (--irqchip=split): its three counters count
 * down at 1.193182 MHz from the host's monotonic clock, with the 8254's
 * modes 0-5, latch and read-back commands and the binary and BCD counts,
 * and port 0x61 gives channel 2's gate and OUT, so a guest can measure its
 * TSC against channel 0 or 2 as Linux's and the test guest's calibrations
 * do when they have no other source of the rate.
 *
 * It raises no interrupt: IRQ0 is not wired (a guest under KVM takes its
 * ticks from the LAPIC timer and its clock from kvm-clock; one that needs
 * the PIT's tick is told so once, and runs with --irqchip=kernel, where
 * KVM's PIT serves these ports instead of this one). */
#ifndef MINIVMM_DEVICES_PIT_H
#define MINIVMM_DEVICES_PIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/machine.h"
#include "devices/bus.h"

#define PIT_HZ 1193182u
#define PIT_PORT_BASE 0x40      /* channels 0-2 at 0x40-0x42, control word at 0x43 */
#define PIT_PORT_COUNT 4
#define PIT_PORT_SPEAKER 0x61   /* NMI status and control: gate 2, speaker, OUT2 */

struct pit_channel {
	uint8_t mode;            /* 0-5 */
	uint8_t access;          /* 1 LSB, 2 MSB, 3 LSB then MSB */
	bool bcd;
	uint32_t reload;         /* 1..0x10000 binary, 1..10000 BCD (0 written = the maximum) */
	bool loaded;             /* a whole count was written since the control word */
	bool running;            /* counting: loaded, and triggered in modes 1 and 5 */
	uint64_t start_ns;       /* when the count (re)started */
	uint64_t paused_ticks;   /* gate low in modes 0, 2, 3, 4: the ticks counted so far */
	bool paused;
	bool gate;
	bool write_msb_next;     /* access 3: the next count write is the MSB */
	uint8_t write_lsb;
	bool read_msb_next;      /* access 3: the next live read is the MSB */
	unsigned latched_bytes;  /* bytes of `latch` still to read: 0, 1 or 2 */
	bool latch_msb_next;
	uint16_t latch;
	bool status_latched;
	uint8_t status;
};

struct pit {
	pthread_mutex_t lock;
	const struct machine *ev;
	uint64_t (*now_ns)(void *opaque);   /* the clock; NULL: CLOCK_MONOTONIC */
	void *clock_opaque;
	struct pit_channel ch[3];
	bool speaker_data;       /* port 0x61 bit 1, kept and read back */
	bool refresh;            /* port 0x61 bit 4, toggled by each read */
	bool irq0_told;
};

/* now_ns NULL: the host's CLOCK_MONOTONIC (tests pass their own clock). */
void pit_init(struct pit *p, const struct machine *ev, uint64_t (*now_ns)(void *), void *clock_opaque);
void pit_destroy(struct pit *p);

/* Ports 0x40-0x43 and port 0x61, registered separately: the i8042's data
 * port 0x60 sits between them. */
struct bus_device pit_counter_ports(struct pit *p);
struct bus_device pit_speaker_port(struct pit *p);

#endif
