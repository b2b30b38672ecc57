/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <string.h>

#include "devices/bus.h"

struct recorder {
	uint64_t last_off;
	uint8_t last_val;
	int reads, writes;
};

static void rec_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	struct recorder *r = opaque;
	r->reads++;
	r->last_off = off;
	memset(data, 0x5a, len);
}

static void rec_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct recorder *r = opaque;
	(void)len;
	r->writes++;
	r->last_off = off;
	r->last_val = data[0];
}

static struct bus_device rec_dev(struct recorder *r, const char *name)
{
	return (struct bus_device){ .name = name, .opaque = r, .read = rec_read, .write = rec_write };
}

Test(bus, dispatches_with_offset_relative_to_base)
{
	struct bus b;
	struct recorder r1 = { 0 }, r2 = { 0 };
	bus_init(&b, "test");
	struct bus_device d1 = rec_dev(&r1, "one"), d2 = rec_dev(&r2, "two");
	cr_assert_eq(bus_add(&b, 0x3f8, 8, &d1, NULL), 0);
	cr_assert_eq(bus_add(&b, 0x60, 1, &d2, NULL), 0);
	uint8_t v = 0x42;
	cr_assert(bus_access(&b, 0x3fd, &v, 1, true));
	cr_assert_eq(r1.writes, 1);
	cr_assert_eq(r1.last_off, 5);
	cr_assert_eq(r1.last_val, 0x42);
	cr_assert(bus_access(&b, 0x60, &v, 1, false));
	cr_assert_eq(r2.reads, 1);
	cr_assert_eq(v, 0x5a);
}

Test(bus, unclaimed_read_is_all_ones_and_counted)
{
	struct bus b;
	bus_init(&b, "test");
	uint8_t v[4] = { 0 };
	cr_assert_not(bus_access(&b, 0x80, v, 4, false));
	cr_assert_eq(v[0] & v[1] & v[2] & v[3], 0xff);
	cr_assert_eq(b.unhandled, 1);
}

Test(bus, refuses_overlaps_and_empty_ranges)
{
	struct bus b;
	struct recorder r = { 0 };
	struct vmm_err e = { 0 };
	bus_init(&b, "test");
	struct bus_device d = rec_dev(&r, "dev");
	cr_assert_eq(bus_add(&b, 0x100, 0x10, &d, &e), 0);
	cr_assert_lt(bus_add(&b, 0x10f, 1, &d, &e), 0);
	cr_assert(strstr(e.msg, "overlaps"));
	cr_assert_lt(bus_add(&b, 0xf8, 0x10, &d, &e), 0);
	cr_assert_lt(bus_add(&b, 0x200, 0, &d, &e), 0);
	cr_assert_lt(bus_add(&b, ~0ull - 1, 4, &d, &e), 0);
	cr_assert_eq(bus_add(&b, 0x110, 1, &d, &e), 0);   /* adjacent is fine */
	cr_assert_eq(bus_add(&b, 0xff, 1, &d, &e), 0);
}

Test(bus, finds_every_range_among_many)
{
	struct bus b;
	struct recorder r[40];
	bus_init(&b, "test");
	memset(r, 0, sizeof(r));
	/* Insert out of order; the bus keeps them sorted. */
	for (int i = 39; i >= 0; i--) {
		struct bus_device d = rec_dev(&r[i], "dev");
		cr_assert_eq(bus_add(&b, 0x1000 * (uint64_t)i, 0x100, &d, NULL), 0);
	}
	for (int i = 0; i < 40; i++) {
		uint8_t v = (uint8_t)i;
		cr_assert(bus_access(&b, 0x1000 * (uint64_t)i + 0xff, &v, 1, true));
		cr_assert_eq(r[i].writes, 1);
		cr_assert_eq(r[i].last_off, 0xff);
		cr_assert_not(bus_access(&b, 0x1000 * (uint64_t)i + 0x100, &v, 1, true));
	}
}
