/* SPDX-License-Identifier: Apache-2.0 */
/* "Did you mean": the bounded edit distance and the nearest name in a
 * table (vmm/suggest.h), as unknown options and --net keys use them. */
#include <criterion/criterion.h>
#include <string.h>

#include "vmm/suggest.h"

Test(suggest, distance_counts_each_edit_once)
{
	cr_assert_eq(suggest_distance("cpus", "cpus", 3), 0);
	cr_assert_eq(suggest_distance("cpu", "cpus", 3), 1, "insertion");
	cr_assert_eq(suggest_distance("queuess", "queues", 3), 1, "deletion");
	cr_assert_eq(suggest_distance("mtv", "mtu", 3), 1, "substitution");
	cr_assert_eq(suggest_distance("cpsu", "cpus", 3), 1, "a swap of neighbours is one edit");
	cr_assert_eq(suggest_distance("kern", "kernel", 3), 2);
	cr_assert_eq(suggest_distance("", "mac", 3), 3);
	cr_assert_eq(suggest_distance("drop_caps", "drop-caps", 3), 1);
}

Test(suggest, distance_stops_past_the_bound)
{
	cr_assert_eq(suggest_distance("kern", "kernel", 1), 2, "bound + 1 when it is more");
	cr_assert_eq(suggest_distance("abcdef", "uvwxyz", 2), 3);
	cr_assert_eq(suggest_distance("x", "qdisc-bypass", 3), 4, "lengths alone rule it out");
	/* A long word costs nothing: its length differs by more than the bound. */
	char longword[4096];
	memset(longword, 'a', sizeof(longword) - 1);
	longword[sizeof(longword) - 1] = '\0';
	cr_assert_eq(suggest_distance(longword, "queues", 3), 4);
	cr_assert_eq(suggest_distance("queues", "a-name-longer-than-the-thirty-two-we-keep", 100), 101);
}

static const struct named {
	const char *name;
	int other;
} names[] = {
	{ "queues", 1 }, { "queue-size", 2 }, { "mem", 3 }, { "mem-overcommit", 4 }, { "cpus", 5 },
	{ "rx", 6 },
};

static const char *nearest(const char *word)
{
	return suggest_nearest(word, names, sizeof(names) / sizeof(names[0]), sizeof(names[0]));
}

Test(suggest, nearest_name_in_a_table_of_structs)
{
	cr_assert_str_eq(nearest("queue"), "queues", "the first at the smallest distance");
	cr_assert_str_eq(nearest("queue_size"), "queue-size");
	cr_assert_str_eq(nearest("cpu"), "cpus");
	cr_assert_str_eq(nearest("mme"), "mem");
	cr_assert_str_eq(nearest("tx"), "rx");
	cr_assert_str_eq(nearest("mem-over"), "mem-overcommit", "too far to edit, but a prefix of one name");
	cr_assert_null(nearest("que"), "a prefix of two names, close to none");
	cr_assert_null(nearest("speed"));
	cr_assert_null(nearest(""));
	cr_assert_null(nearest("xyz"), "short words get one edit, not three");
}
