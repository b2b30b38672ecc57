/* SPDX-License-Identifier: Apache-2.0 */
/* Error reporting for library code: a negative errno plus a message.
 *
 * Library functions never print and never exit; they fill a struct vmm_err
 * and return the negative errno, so that main() (or an embedding program)
 * decides what to print and how to stop. */
#ifndef MINIVMM_BASE_ERROR_H
#define MINIVMM_BASE_ERROR_H

#include <stddef.h>

struct vmm_err {
	int code;        /* positive errno value, 0 when no error was set */
	char msg[512];   /* one line, no trailing newline: control characters
			  * in what it quotes are shown escaped (\n, \x1b) */
};

/* Record an error and return -code, so callers can write
 *   return vmm_err_set(err, EINVAL, "bad thing %d", x);
 * err may be NULL (the message is then dropped). */
int vmm_err_set(struct vmm_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Same, with ": strerror(code)" appended. */
int vmm_err_sys(struct vmm_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
