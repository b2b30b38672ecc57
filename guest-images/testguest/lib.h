/* SPDX-License-Identifier: Apache-2.0 */
/* Freestanding C library subset: memory/string functions the compiler may
 * call, number parsing and a small printf family. */
#ifndef TESTGUEST_LIB_H
#define TESTGUEST_LIB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);

/* Parse an unsigned number (decimal, or hex with 0x). Returns 0 and sets
 * *out on success, -1 if s is empty, not a number or has trailing junk. */
int parse_u64(const char *s, uint64_t *out);

/* Formats: %% %c %s %d %i %u %x %p, with l/ll/z length modifiers, '0' flag
 * and a field width. Always NUL-terminates (when size > 0); returns the
 * length the output would have had. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
