/* SPDX-License-Identifier: Apache-2.0 */
/* What every public function (include/minivmm.h) does with its caller's
 * arguments: a pointer it needs that is NULL is an error the caller is told
 * about, never a crash. */
#ifndef VMM_API_ARGS_H
#define VMM_API_ARGS_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* One line into the caller's errbuf (NULL or 0 bytes long: nowhere). */
__attribute__((format(printf, 3, 4))) static inline void api_errbuf(char *errbuf, size_t errlen,
								     const char *fmt, ...)
{
	if (!errbuf || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

/* In a function with errbuf/errlen: return -EINVAL, saying so, if ARG is
 * NULL. */
#define API_REQUIRE(arg)                                                                 \
	do {                                                                             \
		if (!(arg)) {                                                            \
			api_errbuf(errbuf, errlen, "%s: " #arg " is NULL", __func__);    \
			return -EINVAL;                                                  \
		}                                                                        \
	} while (0)

#endif
