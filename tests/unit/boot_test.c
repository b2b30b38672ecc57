/* SPDX-License-Identifier: Apache-2.0 */
/* The loaders' words for too little RAM (boot/boot.c): sizes in MiB and
 * the --mem that would do, computed from the numbers the check used. */
#include <criterion/criterion.h>
#include <errno.h>

#include "boot/boot.h"
#include "minivmm.h"

#define MiB (1ull << 20)

static const char *mib(uint64_t bytes)
{
	static char buf[32];
	boot_format_mib(bytes, buf, sizeof(buf));
	return buf;
}

Test(boot, sizes_in_mib_round_up_to_a_tenth)
{
	cr_assert_str_eq(mib(0), "0 MiB");
	cr_assert_str_eq(mib(64 * MiB), "64 MiB");
	cr_assert_str_eq(mib(44 * MiB + 1), "44.1 MiB", "a byte more is more");
	cr_assert_str_eq(mib(MiB / 2), "0.5 MiB");
	cr_assert_str_eq(mib(1), "0.1 MiB");
	cr_assert_str_eq(mib(2 * MiB - 1), "2 MiB", "1.99...: up to the next whole MiB");
	cr_assert_str_eq(mib(3ull << 30), "3072 MiB");
	cr_assert_str_eq(mib(UINT64_MAX), "17592186044416 MiB");
}

Test(boot, advice_is_the_smallest_mem_the_validator_takes)
{
	struct vmm_err e = { 0 };
	cr_assert_eq(boot_err_ram(&e, ENOMEM, "k", 64 * MiB + 1, "", 64 * MiB, GUEST_MMIO_HOLE_START,
				  "the MMIO hole"), -ENOMEM);
	cr_assert_eq(e.code, ENOMEM);
	cr_assert_str_eq(e.msg, "k needs RAM up to 64.1 MiB; the guest has 64 MiB: use --mem 66M or more",
			 "rounded up to a multiple of 2M");
	boot_err_ram(&e, ENOMEM, "k", 65 * MiB, " (x)", 64 * MiB, GUEST_MMIO_HOLE_START, "the MMIO hole");
	cr_assert_str_eq(e.msg, "k needs RAM up to 65 MiB (x); the guest has 64 MiB: use --mem 66M or more");
	boot_err_ram(&e, ENOMEM, "k", 5 * MiB, "", 4 * MiB, GUEST_MMIO_HOLE_START, "the MMIO hole");
	cr_assert_str_eq(e.msg, "k needs RAM up to 5 MiB; the guest has 4 MiB: use --mem 16M or more",
			 "never below MINIVMM_MIN_MEM");
	boot_err_ram(&e, ENOMEM, "k", GUEST_MMIO_HOLE_START, "", 64 * MiB, GUEST_MMIO_HOLE_START, "the MMIO hole");
	cr_assert_str_eq(e.msg, "k needs RAM up to 3072 MiB; the guest has 64 MiB: use --mem 3072M or more",
			 "up to the hole itself is still RAM");
}

Test(boot, advice_past_the_limit_says_no_mem_helps)
{
	struct vmm_err e = { 0 };
	boot_err_ram(&e, ENOMEM, "k", GUEST_MMIO_HOLE_START + 1, "", 64 * MiB, GUEST_MMIO_HOLE_START,
		     "the MMIO hole");
	cr_assert_str_eq(e.msg, "k needs RAM up to 3072.1 MiB; that is past the MMIO hole at 3072 MiB: "
				"no --mem can give it");
	cr_assert_eq(boot_err_initrd_ram(&e, 30 * MiB, 20 * MiB, 50 * MiB, 64 * MiB, 48 * MiB,
					 "the kernel's initrd_addr_max"), -E2BIG);
	cr_assert_str_eq(e.msg, "initrd of 30 MiB needs RAM up to 50 MiB next to the kernel (up to 20 MiB); "
				"that is past the kernel's initrd_addr_max at 48 MiB: no --mem can give it");
}
