/* SPDX-License-Identifier: Apache-2.0 */
/* Command line assembly and its copy into guest memory. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "boot/cmdline.h"

Test(cmdline, append_separates_words_with_one_space)
{
	struct cmdline cl;
	struct vmm_err err = { 0 };
	cmdline_init(&cl);
	cr_expect_str_eq(cmdline_str(&cl), "");
	cr_assert_eq(cmdline_append(&cl, "console=ttyS0 quiet", &err), 0, "%s", err.msg);
	cr_assert_eq(cmdline_append(&cl, NULL, &err), 0);
	cr_assert_eq(cmdline_append(&cl, "", &err), 0);
	cr_assert_eq(cmdline_appendf(&cl, &err, "virtio_mmio.device=4K@0x%lx:%d", 0xd0000000UL, 5), 0,
		     "%s", err.msg);
	cr_expect_str_eq(cmdline_str(&cl), "console=ttyS0 quiet virtio_mmio.device=4K@0xd0000000:5");
	cr_expect_eq(cl.len, strlen(cl.buf));
}

Test(cmdline, append_fills_the_buffer_exactly)
{
	struct cmdline cl;
	struct vmm_err err = { 0 };
	static char word[BOOT_CMDLINE_MAX];
	memset(word, 'a', BOOT_CMDLINE_MAX - 3);
	word[BOOT_CMDLINE_MAX - 3] = '\0';
	cmdline_init(&cl);
	cr_assert_eq(cmdline_append(&cl, "b", &err), 0);
	cr_assert_eq(cmdline_append(&cl, word, &err), 0, "%s", err.msg);
	cr_expect_eq(cl.len, BOOT_CMDLINE_MAX - 1);
	cr_expect_eq(cl.buf[BOOT_CMDLINE_MAX - 1], '\0');
}

Test(cmdline, append_rejects_overflow_and_keeps_the_line)
{
	struct cmdline cl;
	struct vmm_err err = { 0 };
	static char word[BOOT_CMDLINE_MAX];
	memset(word, 'a', BOOT_CMDLINE_MAX - 2);
	word[BOOT_CMDLINE_MAX - 2] = '\0';
	cmdline_init(&cl);
	cr_assert_eq(cmdline_append(&cl, "b", &err), 0);
	cr_expect_eq(cmdline_append(&cl, word, &err), -E2BIG);
	cr_expect_str_eq(err.msg, "kernel command line too long: adding 4095 bytes to 1 exceeds 4095");
	cr_expect_str_eq(cmdline_str(&cl), "b");
}

Test(cmdline, write_copies_line_and_nul_into_guest)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 2 << 20, &err), 0, "%s", err.msg);
	memset(guest_mem_ptr(&mem, BOOT_CMDLINE_ADDR, 16), 'x', 16);
	cr_assert_eq(cmdline_write(&mem, BOOT_CMDLINE_ADDR, "root=/dev/vda", 255, &err), 0, "%s",
		     err.msg);
	cr_expect_str_eq((const char *)guest_mem_ptr(&mem, BOOT_CMDLINE_ADDR, 14), "root=/dev/vda");
	cr_assert_eq(cmdline_write(&mem, BOOT_CMDLINE_ADDR, NULL, 255, &err), 0);
	cr_expect_str_eq((const char *)guest_mem_ptr(&mem, BOOT_CMDLINE_ADDR, 1), "");
	guest_mem_destroy(&mem);
}

Test(cmdline, write_enforces_the_kernel_limit)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 2 << 20, &err), 0, "%s", err.msg);
	cr_expect_eq(cmdline_write(&mem, BOOT_CMDLINE_ADDR, "0123456789", 9, &err), -E2BIG);
	cr_expect_str_eq(err.msg, "kernel command line is 10 bytes, the kernel accepts at most 9");
	cr_expect_eq(cmdline_write(&mem, BOOT_CMDLINE_ADDR, "0123456789", 10, &err), 0);
	guest_mem_destroy(&mem);
}

Test(cmdline, write_refuses_addresses_outside_ram)
{
	struct guest_mem mem;
	struct vmm_err err = { 0 };
	cr_assert_eq(guest_mem_init(&mem, 2 << 20, &err), 0, "%s", err.msg);
	cr_expect_eq(cmdline_write(&mem, (2 << 20) - 2, "abc", 255, &err), -EFAULT);
	guest_mem_destroy(&mem);
}
