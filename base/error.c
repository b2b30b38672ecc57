/* SPDX-License-Identifier: Apache-2.0 */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message is one line whatever it quotes: a user's argument, a file name
 * or a guest's string may hold a newline or an escape sequence, which would
 * split the line (or drive the terminal) where main() prints it. Control
 * characters are written as C escapes instead (\n, \t, \x1b), as far as
 * the buffer goes. */
static void err_one_line(struct vmm_err *err)
{
	char out[sizeof(err->msg)];
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)err->msg; *p; p++) {
		char esc[5];
		if (*p >= 0x20 && *p != 0x7f) {
			esc[0] = (char)*p;
			esc[1] = '\0';
		} else if (*p == '\n' || *p == '\t' || *p == '\r') {
			esc[0] = '\\';
			esc[1] = *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
			esc[2] = '\0';
		} else {
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
		}
		size_t n = strlen(esc);
		if (n > sizeof(out) - 1 - o)
			break;   /* truncated, like any message too long for the buffer */
		memcpy(out + o, esc, n);
		o += n;
	}
	out[o] = '\0';
	memcpy(err->msg, out, o + 1);
}

int vmm_err_set(struct vmm_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err_one_line(err);
		err->code = code;
	}
	return -code;
}

int vmm_err_sys(struct vmm_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		size_t used = n < 0 ? 0 : (size_t)n;
		if (used < sizeof(err->msg))
			snprintf(err->msg + used, sizeof(err->msg) - used, ": %s", strerror(code));
		err_one_line(err);
		err->code = code;
	}
	return -code;
}
