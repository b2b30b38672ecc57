/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>

#include "base/log_limit.h"

#define S 1000000000ull

Test(log_limit, lets_a_burst_through_then_one_per_interval)
{
	struct log_limit l;
	unsigned held = 99;
	log_limit_init(&l, 3, S);
	uint64_t t = 100 * S;
	for (int i = 0; i < 3; i++)
		cr_assert(log_limit_take(&l, t, &held), "line %d of the burst", i);
	cr_assert_eq(held, 0);
	for (int i = 0; i < 50; i++)
		cr_assert(!log_limit_take(&l, t + (uint64_t)i * 1000, &held), "a flood is held back");
	cr_assert(!log_limit_take(&l, t + S / 2, &held));
	cr_assert(log_limit_take(&l, t + S, &held), "one more after an interval");
	cr_assert_eq(held, 51, "and it says how many were held back");
	cr_assert(!log_limit_take(&l, t + S + 1, &held));
	log_limit_destroy(&l);
}

Test(log_limit, a_quiet_spell_refills_the_burst)
{
	struct log_limit l;
	unsigned held;
	log_limit_init(&l, 2, S);
	cr_assert(log_limit_take(&l, 0, &held));
	cr_assert(log_limit_take(&l, 0, &held));
	cr_assert(!log_limit_take(&l, 0, &held));
	cr_assert(log_limit_take(&l, 10 * S, &held));
	cr_assert(log_limit_take(&l, 10 * S, &held));
	cr_assert(!log_limit_take(&l, 10 * S, &held));
	log_limit_destroy(&l);
}

Test(log_limit, pace_lets_a_burst_go_at_once_then_spaces_the_rest)
{
	struct log_limit l;
	log_limit_init(&l, 3, 100);
	uint64_t t = 1000;
	for (int i = 0; i < 3; i++)
		cr_assert_eq(log_limit_pace(&l, t), 0, "call %d of the burst waits", i);
	cr_assert_eq(log_limit_pace(&l, t), 100, "the fourth waits one interval");
	cr_assert_eq(log_limit_pace(&l, t), 200, "the fifth two: each reserves its own slot");
	cr_assert_eq(log_limit_pace(&l, t + 200), 100, "a caller that waited for its slot still queues behind the others");
	cr_assert_eq(log_limit_pace(&l, t + 10000), 0, "a quiet spell refills the burst");
	cr_assert_eq(log_limit_pace(&l, t + 10000), 0);
	cr_assert_eq(log_limit_pace(&l, t + 10000), 0);
	cr_assert_eq(log_limit_pace(&l, t + 10000), 100);
	log_limit_destroy(&l);
}

Test(log_limit, a_slot_given_back_moves_the_queue_up)
{
	struct log_limit l;
	log_limit_init(&l, 1, 100);
	cr_assert_eq(log_limit_pace(&l, 1000), 0);
	cr_assert_eq(log_limit_pace(&l, 1000), 100);
	cr_assert_eq(log_limit_pace(&l, 1000), 200);
	log_limit_unpace(&l);
	log_limit_unpace(&l);
	cr_assert_eq(log_limit_pace(&l, 1000), 100, "two abandoned waits no longer count");
	log_limit_destroy(&l);
}
