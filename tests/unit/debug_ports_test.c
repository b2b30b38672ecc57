/* SPDX-License-Identifier: Apache-2.0 */
/* The debug-exit port's exit statuses: QEMU's (v << 1) | 1 for 0..63, one
 * reserved status above, never anything that looks like 128 + signal. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "devices/debug_ports.h"

Test(debug_exit, small_values_map_like_qemu)
{
	cr_assert_eq(debug_exit_status(0), 1);
	cr_assert_eq(debug_exit_status(5), 11);
	cr_assert_eq(debug_exit_status(0x10), 33);
	cr_assert_eq(debug_exit_status(63), 127);
}

Test(debug_exit, values_above_63_get_the_reserved_status)
{
	static const uint32_t big[] = { 64, 127, 128, 200, 0xffff, 0xffffffffu };
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		cr_assert_eq(debug_exit_status(big[i]), MINIVMM_EXIT_DEBUG_RANGE, "value %u", big[i]);
}

Test(debug_exit, every_status_fits_a_byte_and_is_no_signal_status)
{
	for (uint32_t v = 0; v < 4096; v++) {
		int s = debug_exit_status(v);
		cr_assert(s >= 0 && s < 128, "value %u gives %d", v, s);
	}
}

struct stop_record {
	int status;
	char reason[160];
};

static void record_stop(void *o, int status, const char *reason)
{
	struct stop_record *r = o;
	r->status = status;
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
}

static void no_log(void *o, const char *line) { (void)o; (void)line; }

Test(debug_exit, the_reason_says_out_of_range)
{
	struct stop_record r = { 0 };
	struct machine m = { .opaque = &r, .request_stop = record_stop, .log = no_log };
	struct debug_ports d;
	debug_ports_init(&d, &m, 0);
	struct bus_device dev = debug_exit_device(&d);
	uint8_t v[4] = { 128, 0, 0, 0 };
	dev.write(dev.opaque, 0, v, 4);
	cr_assert_eq(r.status, MINIVMM_EXIT_DEBUG_RANGE);
	cr_assert_str_eq(r.reason, "guest wrote 128 to the debug-exit port: debug-exit value out of range (0 to 63)");
	v[0] = 5;
	dev.write(dev.opaque, 0, v, 1);
	cr_assert_eq(r.status, 11);
	cr_assert_str_eq(r.reason, "guest wrote 5 to the debug-exit port");
}
