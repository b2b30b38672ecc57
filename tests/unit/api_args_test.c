/* SPDX-License-Identifier: Apache-2.0 */
/* Every public function of libminivmm given NULL where it needs a pointer:
 * an error (-EINVAL and a line naming the argument) or nothing, never a
 * crash. None of these calls reaches /dev/kvm. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "minivmm.h"

Test(api_args, create_with_null_cfg_or_out_says_which)
{
	char e[128] = "";
	struct minivmm *vm = (struct minivmm *)&e;   /* must be cleared */
	cr_assert_eq(minivmm_create(NULL, &vm, e, sizeof(e)), -EINVAL);
	cr_assert_null(vm);
	cr_assert_str_eq(e, "minivmm_create: cfg is NULL");
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	cr_assert_eq(minivmm_create(&cfg, NULL, e, sizeof(e)), -EINVAL);
	cr_assert_str_eq(e, "minivmm_create: out is NULL");
	cr_assert_eq(minivmm_create(NULL, NULL, NULL, 0), -EINVAL);
	cr_assert_eq(minivmm_create(NULL, NULL, NULL, 64), -EINVAL, "a NULL errbuf with a length");
}

Test(api_args, validate_with_null_cfg)
{
	char e[128] = "";
	cr_assert_eq(minivmm_config_validate(NULL, e, sizeof(e)), -EINVAL);
	cr_assert_str_eq(e, "minivmm_config_validate: cfg is NULL");
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	cr_assert_eq(minivmm_config_validate(&cfg, NULL, 64), -EINVAL, "no kernel, and nowhere to say so");
}

Test(api_args, init_functions_ignore_null)
{
	minivmm_config_init(NULL);
	minivmm_net_config_init(NULL);
}

Test(api_args, functions_on_a_null_vm)
{
	char e[128] = "";
	cr_assert_eq(minivmm_run(NULL), -EINVAL);
	cr_assert_eq(minivmm_start(NULL, e, sizeof(e)), -EINVAL);
	cr_assert_str_eq(e, "minivmm_start: vm is NULL");
	minivmm_stop(NULL);
	minivmm_request_stop(NULL, 3, "x");
	cr_assert_eq(minivmm_wait(NULL), -EINVAL);
	cr_assert_str_eq(minivmm_stop_reason(NULL), "");
	minivmm_destroy(NULL);
	cr_assert_eq(minivmm_net_count(NULL), 0);
	struct minivmm_net_stats s;
	minivmm_net_stats_init(&s, NULL, 0, NULL, 0);
	cr_assert_eq(minivmm_net_stats(NULL, 0, &s), -EINVAL);
	cr_assert_eq(minivmm_net_stats(NULL, 0, NULL), -EINVAL);
	minivmm_print_stats(NULL, stdout, 1);
	cr_assert_eq(minivmm_write_stats(NULL, 1, 1, e, sizeof(e)), -EINVAL);
	cr_assert_str_eq(e, "minivmm_write_stats: vm is NULL");
	cr_assert_eq(minivmm_write_dtb(NULL, "/nonexistent/x.dtb", e, sizeof(e)), -EINVAL);
	cr_assert_str_eq(e, "minivmm_write_dtb: vm is NULL");
}

Test(api_args, cpuid_dump_without_a_stream)
{
	char e[128] = "";
	cr_assert_eq(minivmm_cpuid_dump(NULL, MINIVMM_CPUID_DUMP_GUEST, 1, e, sizeof(e)), -EINVAL);
	cr_assert_str_eq(e, "minivmm_cpuid_dump: out is NULL");
}
