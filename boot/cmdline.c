/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel command line: assembled in a fixed buffer, copied into the guest. */
#include "boot/cmdline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cmdline_init(struct cmdline *cl)
{
	cl->buf[0] = '\0';
	cl->len = 0;
}

int cmdline_append(struct cmdline *cl, const char *word, struct vmm_err *err)
{
	if (!word || !*word)
		return 0;
	size_t wlen = strlen(word);
	size_t sep = cl->len ? 1 : 0;
	/* Room needed: separator, word and the NUL, all within the buffer.
	 * Written as a subtraction so a huge wlen cannot wrap. */
	if (wlen > sizeof(cl->buf) - 1 - cl->len - sep)
		return vmm_err_set(err, E2BIG,
				   "kernel command line too long: adding %zu bytes to %zu exceeds %zu",
				   wlen + sep, cl->len, sizeof(cl->buf) - 1);
	if (sep)
		cl->buf[cl->len++] = ' ';
	memcpy(cl->buf + cl->len, word, wlen + 1);
	cl->len += wlen;
	return 0;
}

int cmdline_appendf(struct cmdline *cl, struct vmm_err *err, const char *fmt, ...)
{
	char word[BOOT_CMDLINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(word, sizeof(word), fmt, ap);
	va_end(ap);
	if (n < 0)
		return vmm_err_set(err, EINVAL, "cannot format command line word '%s'", fmt);
	if ((size_t)n >= sizeof(word))
		return vmm_err_set(err, E2BIG, "kernel command line word too long (%d bytes)", n);
	return cmdline_append(cl, word, err);
}

int cmdline_write(const struct guest_mem *mem, uint64_t gpa, const char *cmdline,
		  size_t max_len, struct vmm_err *err)
{
	if (!cmdline)
		cmdline = "";
	size_t len = strlen(cmdline);
	if (max_len > BOOT_CMDLINE_MAX - 1)
		max_len = BOOT_CMDLINE_MAX - 1;   /* the guest buffer's own size */
	if (len > max_len)
		return vmm_err_set(err, E2BIG,
				   "kernel command line is %zu bytes, the kernel accepts at most %zu",
				   len, max_len);
	if (!guest_mem_write(mem, gpa, cmdline, len + 1))
		return vmm_err_set(err, EFAULT, "command line at 0x%llx is outside guest RAM",
				   (unsigned long long)gpa);
	return 0;
}
