/* SPDX-License-Identifier: Apache-2.0 */
/* Polled 16550 UART on COM1. Output lines are serialised across vCPUs by a
 * spinlock; the raw functions skip it (exception path at CPL0). */
#ifndef TESTGUEST_SERIAL_H
#define TESTGUEST_SERIAL_H

#include <stdarg.h>
#include <stddef.h>

void serial_init(void);
void serial_putc_raw(char c);
void serial_write_raw(const char *s, size_t n);
/* Blocking polled receive of one byte. */
char serial_getc(void);

/* Print under the serial lock; one call should be one whole line. */
void tg_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tg_vprintf(const char *fmt, va_list ap);

#endif
