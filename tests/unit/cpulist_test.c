/* SPDX-License-Identifier: Apache-2.0 */
/* CPU lists ("0-3", "2,4,6"): syntax only. Whether the CPUs may be used is
 * the validator's (config_test.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "vmm/cpulist.h"

#define MAX 8

static int parse(const char *text, int *cpus, struct vmm_err *e)
{
	memset(cpus, 0xff, MAX * sizeof(int));
	return cpulist_parse(text, cpus, MAX, e);
}

static void expect_list(const char *text, const int *want, int n)
{
	int cpus[MAX];
	struct vmm_err e = { 0 };
	cr_assert_eq(parse(text, cpus, &e), n, "'%s': %s", text, e.msg);
	for (int i = 0; i < n; i++)
		cr_assert_eq(cpus[i], want[i], "'%s' entry %d: %d, wanted %d", text, i, cpus[i], want[i]);
}

static void expect_error(const char *text, int code, const char *msg_part)
{
	int cpus[MAX];
	struct vmm_err e = { 0 };
	cr_assert_eq(parse(text, cpus, &e), -code, "'%s' should be refused", text);
	cr_assert_eq(e.code, code);
	cr_assert(strstr(e.msg, msg_part), "'%s': message '%s' lacks '%s'", text, e.msg, msg_part);
}

Test(cpulist, single_cpu)
{
	expect_list("0", (int[]){ 0 }, 1);
	expect_list("10", (int[]){ 10 }, 1);
}

Test(cpulist, range)
{
	expect_list("0-3", (int[]){ 0, 1, 2, 3 }, 4);
	expect_list("5-5", (int[]){ 5 }, 1);
}

Test(cpulist, comma_list)
{
	expect_list("2,4,6", (int[]){ 2, 4, 6 }, 3);
}

Test(cpulist, ranges_and_singles_mixed)
{
	expect_list("0-1,3", (int[]){ 0, 1, 3 }, 3);
	expect_list("6-7,0-1,10", (int[]){ 6, 7, 0, 1, 10 }, 5);
}

Test(cpulist, order_written_is_preserved)
{
	expect_list("3,1,2", (int[]){ 3, 1, 2 }, 3);
	expect_list("7,0-2", (int[]){ 7, 0, 1, 2 }, 4);
}

Test(cpulist, exactly_max_cpus_fit)
{
	expect_list("0-7", (int[]){ 0, 1, 2, 3, 4, 5, 6, 7 }, MAX);
}

Test(cpulist, empty_list_refused)
{
	expect_error("", EINVAL, "empty");
}

Test(cpulist, malformed_lists_refused)
{
	const char *bad[] = { "3-1", "a", "1,,2", "1-", "-1", ",1", "1-a", "1 ", " 1", "1;2",
			      "0x1", "1-2-3", "99999999999999999999", "1,", "4096" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(bad[i], EINVAL, "not a CPU list");
}

Test(cpulist, any_cpu_number_up_to_4095_parses)
{
	/* Existence is checked later, against the process's affinity. */
	expect_list("4095", (int[]){ 4095 }, 1);
	expect_list("8,16", (int[]){ 8, 16 }, 2);
}

Test(cpulist, more_than_max_refused)
{
	expect_error("0-7,10", E2BIG, "more than 8 CPUs");
	expect_error("0,1,2,3,4,5,6,7,0", E2BIG, "more than 8");
}
