/* SPDX-License-Identifier: Apache-2.0 */
/* The Internet checksum written out the plain way (RFC 1071), for tests and
 * fuzz targets to check net/csum.c and net/gso.c against: deliberately not
 * the code under test. Big-endian field helpers come with it. */
#ifndef MINIVMM_TESTS_REF_CSUM_H
#define MINIVMM_TESTS_REF_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint16_t ref_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t ref_get32(const uint8_t *p) { return (uint32_t)ref_get16(p) << 16 | ref_get16(p + 2); }
static inline void ref_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }

/* Add len bytes at p to the 32-bit ones' complement sum s, 16 bits at a
 * time, an odd last byte as the high half of a word. */
static inline uint32_t ref_csum_add(uint32_t s, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += ref_get16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	return s;
}

static inline uint16_t ref_csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* A sum over data that includes a correct checksum folds to 0xffff. */
static inline bool ref_csum_ok(uint32_t s)
{
	return ref_csum_fold(s) == 0xffff;
}

#endif
