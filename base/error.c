#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int vmm_err_set(struct vmm_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
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
		err->code = code;
	}
	return -code;
}
