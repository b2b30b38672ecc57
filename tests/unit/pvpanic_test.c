/* SPDX-License-Identifier: Apache-2.0 */
/* The pvpanic register: what it offers, which events stop the VM and with
 * what, and that the other bits and bytes do nothing. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "devices/pvpanic.h"
#include "minivmm_abi.h"

struct stops {
	unsigned n;
	int status;
	char reason[160];
};

static void record_stop(void *o, int status, const char *reason)
{
	struct stops *s = o;
	s->n++;
	s->status = status;
	snprintf(s->reason, sizeof(s->reason), "%s", reason);
}

static void no_log(void *o, const char *line)
{
	(void)o;
	(void)line;
}

struct fixture {
	struct stops stops;
	struct machine m;
	struct pvpanic p;
	struct bus_device dev;
};

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	f->m = (struct machine){ .opaque = &f->stops, .request_stop = record_stop, .log = no_log };
	pvpanic_init(&f->p, &f->m);
	f->dev = pvpanic_device(&f->p);
}

static void write_byte(struct fixture *f, uint64_t off, uint8_t v)
{
	f->dev.write(f->dev.opaque, off, &v, 1);
}

Test(pvpanic, reads_the_events_it_handles_like_qemu)
{
	struct fixture f;
	setup(&f);
	uint8_t b = 0;
	f.dev.read(f.dev.opaque, 0, &b, 1);
	cr_expect_eq(b, PVPANIC_PANICKED | PVPANIC_CRASH_LOADED);
	cr_expect_eq(b, 3, "QEMU's pvpanic reads 3 (panicked, crash loaded)");
	/* The MMIO form's high byte is reserved, a wider read sees the
	 * events in its low byte only. */
	uint8_t wide[4] = { 0xff, 0xff, 0xff, 0xff };
	f.dev.read(f.dev.opaque, 0, wide, 4);
	cr_expect_eq(bus_load_le(wide, 4), 3);
	b = 0xff;
	f.dev.read(f.dev.opaque, 1, &b, 1);
	cr_expect_eq(b, 0);
	cr_expect_eq(f.stops.n, 0, "reads stop nothing");
}

/* One event byte stops the VM once, with the panic status and REASON. */
static void expect_event_stops(uint8_t event, const char *reason)
{
	struct fixture f;
	setup(&f);
	write_byte(&f, 0, event);
	cr_expect_eq(f.stops.n, 1);
	cr_expect_eq(f.stops.status, MINIVMM_EXIT_GUEST_PANIC);
	cr_expect_str_eq(f.stops.reason, reason);
}

Test(pvpanic, panicked_stops_with_the_panic_status)
{
	expect_event_stops(PVPANIC_PANICKED, "guest panicked (pvpanic)");
}

Test(pvpanic, crash_loaded_stops_with_the_panic_status)
{
	expect_event_stops(PVPANIC_CRASH_LOADED, "guest panicked (pvpanic: crash kernel loaded)");
}

Test(pvpanic, wide_writes_carry_the_event_in_the_low_byte)
{
	struct fixture f;
	setup(&f);
	uint8_t w[2] = { PVPANIC_PANICKED, 0 };
	f.dev.write(f.dev.opaque, 0, w, 2);
	cr_expect_eq(f.stops.n, 1);
	cr_expect_eq(f.stops.status, MINIVMM_EXIT_GUEST_PANIC);
}

Test(pvpanic, other_bits_and_bytes_stop_nothing)
{
	struct fixture f;
	setup(&f);
	write_byte(&f, 0, 0);
	write_byte(&f, 0, 1u << 2);      /* a newer guest's PVPANIC_SHUTDOWN: not offered */
	write_byte(&f, 0, 0xf8);
	write_byte(&f, 1, PVPANIC_PANICKED);   /* the reserved high byte */
	uint8_t w[2] = { 0, PVPANIC_PANICKED };
	f.dev.write(f.dev.opaque, 0, w, 2);
	cr_expect_eq(f.stops.n, 0);
}

Test(pvpanic, the_status_is_none_of_the_others)
{
	static const int others[] = { MINIVMM_EXIT_OK, MINIVMM_EXIT_USAGE, MINIVMM_EXIT_GUEST_CRASH,
				      MINIVMM_EXIT_HOST_ERROR, MINIVMM_EXIT_DEBUG_RANGE };
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		cr_expect_neq(MINIVMM_EXIT_GUEST_PANIC, others[i]);
	cr_expect_eq(MINIVMM_EXIT_GUEST_PANIC % 2, 0, "debug-exit statuses are odd");
	cr_expect_lt(MINIVMM_EXIT_GUEST_PANIC, MINIVMM_EXIT_SIGNAL_BASE);
}
