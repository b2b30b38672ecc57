/* SPDX-License-Identifier: Apache-2.0 */
/* Error messages (base/error.c): always one line, whatever they quote. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "base/error.h"

Test(error, a_quoted_newline_is_escaped_so_the_message_stays_one_line)
{
	struct vmm_err e = { 0 };
	cr_assert_eq(vmm_err_set(&e, EINVAL, "unexpected argument '%s'", "a\nb"), -EINVAL);
	cr_assert_eq(e.code, EINVAL);
	cr_assert_str_eq(e.msg, "unexpected argument 'a\\nb'");
}

Test(error, control_characters_are_shown_as_escapes)
{
	struct vmm_err e = { 0 };
	vmm_err_set(&e, EINVAL, "%s", "tab\there\rcr \x1b[31mred\x7f");
	cr_assert_str_eq(e.msg, "tab\\there\\rcr \\x1b[31mred\\x7f");
	for (const char *p = e.msg; *p; p++)
		cr_assert((unsigned char)*p >= 0x20 && *p != 0x7f, "control character at %td", p - e.msg);
}

Test(error, system_errors_are_escaped_too)
{
	struct vmm_err e = { 0 };
	cr_assert_eq(vmm_err_sys(&e, ENOENT, "cannot open '%s'", "x\ny"), -ENOENT);
	cr_assert_str_eq(e.msg, "cannot open 'x\\ny': No such file or directory");
}

Test(error, escaping_at_the_end_of_the_buffer_truncates_instead_of_overflowing)
{
	struct vmm_err e = { 0 };
	char text[sizeof(e.msg) + 10];
	memset(text, '\n', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	vmm_err_set(&e, E2BIG, "%s", text);
	size_t len = strlen(e.msg);
	cr_assert_lt(len, sizeof(e.msg));
	cr_assert_eq(len % 2, 0, "no escape cut in half: %zu bytes", len);
	cr_assert_eq(len, sizeof(e.msg) - 2, "as many whole escapes as fit");
}

Test(error, plain_messages_are_unchanged_and_a_null_err_is_allowed)
{
	struct vmm_err e = { 0 };
	vmm_err_set(&e, EINVAL, "--mem: '%s' is not a size such as 256M or 1G", "12Q");
	cr_assert_str_eq(e.msg, "--mem: '12Q' is not a size such as 256M or 1G");
	cr_assert_eq(vmm_err_set(NULL, EPERM, "dropped"), -EPERM);
}
