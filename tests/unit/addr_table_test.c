/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "net/addr_table.h"

Test(addr_table, finds_what_was_inserted_and_forgets_what_was_taken)
{
	struct addr_table t;
	cr_assert_eq(addr_table_init(&t, 4), 0);
	cr_assert(addr_table_insert(&t, 0x1000, 1));
	cr_assert(addr_table_insert(&t, 0x2000, 2));
	cr_assert_not(addr_table_insert(&t, 0x1000, 9), "a key is in the table once");
	cr_assert(addr_table_has(&t, 0x2000));
	uint32_t v = 0;
	cr_assert(addr_table_take(&t, 0x1000, &v));
	cr_assert_eq(v, 1);
	cr_assert_not(addr_table_take(&t, 0x1000, &v), "taken twice");
	cr_assert_not(addr_table_has(&t, 0x1000));
	cr_assert_eq(t.count, 1);
	addr_table_free(&t);
}

Test(addr_table, holds_at_most_its_capacity)
{
	struct addr_table t;
	cr_assert_eq(addr_table_init(&t, 3), 0);
	for (uint64_t k = 1; k <= 3; k++)
		cr_assert(addr_table_insert(&t, k * 2048, (uint32_t)k));
	cr_assert(addr_table_full(&t));
	cr_assert_not(addr_table_insert(&t, 99 * 2048, 99));
	cr_assert_not(addr_table_insert(&t, ADDR_TABLE_EMPTY, 1), "the empty marker is not a key");
	addr_table_free(&t);
	cr_assert_lt(addr_table_init(&t, 0), 0);
}

/* Many inserts and removals in random order, against a plain array: a
 * removal in the middle of a probe run must not lose the keys after it. */
Test(addr_table, random_inserts_and_removals_match_a_reference)
{
	enum { N = 1000, KEYS = 3000 };
	struct addr_table t;
	cr_assert_eq(addr_table_init(&t, N), 0);
	static uint32_t ref[KEYS];   /* 0: absent, else value */
	srand(7);
	for (unsigned step = 0; step < 200000; step++) {
		unsigned k = (unsigned)rand() % KEYS;
		/* Keys that collide a lot: chunk-aligned, close together. */
		uint64_t key = 0x100000ull + (uint64_t)k * 2048;
		if (rand() & 1) {
			bool ok = addr_table_insert(&t, key, step + 1);
			if (ref[k] || t.count > N)
				cr_assert_not(ok);
			else if (ok)
				ref[k] = step + 1;
			else
				cr_assert(addr_table_full(&t), "insert refused with room left");
		} else {
			uint32_t v;
			bool ok = addr_table_take(&t, key, &v);
			cr_assert_eq(ok, ref[k] != 0, "step %u key %u", step, k);
			if (ok)
				cr_assert_eq(v, ref[k]);
			ref[k] = 0;
		}
	}
	unsigned left = 0;
	for (unsigned k = 0; k < KEYS; k++)
		if (ref[k]) {
			cr_assert(addr_table_has(&t, 0x100000ull + (uint64_t)k * 2048));
			left++;
		}
	cr_assert_eq(t.count, left);
	uint64_t key;
	uint32_t v;
	while (addr_table_take_any(&t, &key, &v))
		left--;
	cr_assert_eq(left, 0);
	cr_assert_eq(t.count, 0);
	addr_table_free(&t);
}
