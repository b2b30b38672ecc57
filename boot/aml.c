/* SPDX-License-Identifier: Apache-2.0 */
/* AML encoding, from ACPI 6.x section 20.2 (grammar) and 6.4 (resource
 * descriptors). Opcodes are named after the grammar's terms. */
#include "boot/aml.h"

#include <string.h>

#define AML_ZERO_OP      0x00
#define AML_ONE_OP       0x01
#define AML_NAME_OP      0x08
#define AML_BYTE_PREFIX  0x0a
#define AML_WORD_PREFIX  0x0b
#define AML_DWORD_PREFIX 0x0c
#define AML_STRING_PREFIX 0x0d
#define AML_QWORD_PREFIX 0x0e
#define AML_SCOPE_OP     0x10
#define AML_BUFFER_OP    0x11
#define AML_PACKAGE_OP   0x12
#define AML_DUAL_NAME_PREFIX  0x2e
#define AML_MULTI_NAME_PREFIX 0x2f
#define AML_ROOT_CHAR    0x5c
#define AML_EXT_OP_PREFIX 0x5b
#define AML_DEVICE_OP    0x82   /* after AML_EXT_OP_PREFIX */

/* Resource descriptor tags. */
#define RES_IRQ_NOFLAGS  0x22   /* small item 0x04, length 2 */
#define RES_IO           0x47   /* small item 0x08, length 7 */
#define RES_END_TAG      0x79   /* small item 0x0f, length 1 */
#define RES_MEMORY32_FIXED 0x86 /* large item 0x06 */
#define RES_EXT_INTERRUPT  0x89 /* large item 0x09 */

#define EXT_INT_CONSUMER   0x01
#define EXT_INT_EDGE       0x02
#define EXT_INT_ACTIVE_LOW 0x04

void aml_init(struct aml_buf *b, uint8_t *data, size_t cap)
{
	*b = (struct aml_buf){ .data = data, .cap = cap };
}

void aml_bytes(struct aml_buf *b, const void *p, size_t n)
{
	if (b->failed || n > b->cap - b->len) {
		b->failed = true;
		return;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void aml_byte(struct aml_buf *b, uint8_t v)
{
	aml_bytes(b, &v, 1);
}

static void aml_le(struct aml_buf *b, uint64_t v, unsigned n)
{
	uint8_t tmp[8];
	for (unsigned i = 0; i < n; i++)
		tmp[i] = (uint8_t)(v >> (8 * i));
	aml_bytes(b, tmp, n);
}

/* Insert n bytes at offset `at` (at <= len), moving what follows. */
static void aml_insert(struct aml_buf *b, size_t at, const uint8_t *p, size_t n)
{
	if (b->failed || at > b->len || n > b->cap - b->len) {
		b->failed = true;
		return;
	}
	memmove(b->data + at + n, b->data + at, b->len - at);
	memcpy(b->data + at, p, n);
	b->len += n;
}

void aml_integer(struct aml_buf *b, uint64_t v)
{
	if (v == 0) {
		aml_byte(b, AML_ZERO_OP);
	} else if (v == 1) {
		aml_byte(b, AML_ONE_OP);
	} else if (v <= 0xff) {
		aml_byte(b, AML_BYTE_PREFIX);
		aml_le(b, v, 1);
	} else if (v <= 0xffff) {
		aml_byte(b, AML_WORD_PREFIX);
		aml_le(b, v, 2);
	} else if (v <= 0xffffffffu) {
		aml_byte(b, AML_DWORD_PREFIX);
		aml_le(b, v, 4);
	} else {
		aml_byte(b, AML_QWORD_PREFIX);
		aml_le(b, v, 8);
	}
}

void aml_string(struct aml_buf *b, const char *s)
{
	aml_byte(b, AML_STRING_PREFIX);
	aml_bytes(b, s, strlen(s) + 1);   /* ASCII, NUL-terminated */
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

uint32_t aml_eisaid_value(const char *id)
{
	if (strlen(id) != 7)
		return 0;
	uint32_t v = 0;
	/* Three letters, 5 bits each ('A' = 1), below a reserved zero bit... */
	for (int i = 0; i < 3; i++) {
		if (id[i] < 'A' || id[i] > 'Z')
			return 0;
		v |= (uint32_t)(id[i] - 0x40) << (26 - 5 * i);
	}
	/* ...then four hex digits of product id and revision. */
	for (int i = 0; i < 4; i++) {
		int d = hex_digit(id[3 + i]);
		if (d < 0)
			return 0;
		v |= (uint32_t)d << (12 - 4 * i);
	}
	/* Stored most significant byte first. */
	return __builtin_bswap32(v);
}

void aml_eisaid(struct aml_buf *b, const char *id)
{
	uint32_t v = aml_eisaid_value(id);
	if (v == 0) {
		b->failed = true;
		return;
	}
	aml_byte(b, AML_DWORD_PREFIX);   /* always a DWord, as iasl writes it */
	aml_le(b, v, 4);
}

static bool name_char_ok(char c, bool first)
{
	return (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

void aml_name_string(struct aml_buf *b, const char *path)
{
	if (*path == '\\') {
		aml_byte(b, AML_ROOT_CHAR);
		path++;
	}
	uint8_t segs[8][4];
	unsigned n = 0;
	while (*path) {
		size_t l = strcspn(path, ".");
		if (l == 0 || l > 4 || n == 8) {
			b->failed = true;
			return;
		}
		for (size_t i = 0; i < 4; i++) {
			char c = i < l ? path[i] : '_';
			if (!name_char_ok(c, i == 0)) {
				b->failed = true;
				return;
			}
			segs[n][i] = (uint8_t)c;
		}
		n++;
		path += l;
		if (*path == '.' && *++path == '\0') {
			b->failed = true;   /* trailing dot */
			return;
		}
	}
	if (n == 0) {
		aml_byte(b, AML_ZERO_OP);   /* NullName */
		return;
	}
	if (n == 2) {
		aml_byte(b, AML_DUAL_NAME_PREFIX);
	} else if (n > 2) {
		aml_byte(b, AML_MULTI_NAME_PREFIX);
		aml_byte(b, (uint8_t)n);
	}
	aml_bytes(b, segs, 4 * n);
}

void aml_name(struct aml_buf *b, const char *path)
{
	aml_byte(b, AML_NAME_OP);
	aml_name_string(b, path);
}

/* PkgLength counts itself: the encoded length is contents + its own size.
 * One byte holds up to 63; longer ones put the byte count - 1 in bits 7:6
 * of the first byte, the low nibble in bits 3:0, then whole bytes. */
unsigned aml_pkglength_size(size_t contents)
{
	if (contents + 1 <= 0x3f)
		return 1;
	if (contents + 2 <= 0xfff)
		return 2;
	if (contents + 3 <= 0xfffff)
		return 3;
	if (contents + 4 <= 0xfffffff)
		return 4;
	return 0;
}

unsigned aml_pkglength_encode(size_t contents, uint8_t out[4])
{
	unsigned n = aml_pkglength_size(contents);
	if (n == 0)
		return 0;
	size_t total = contents + n;
	if (n == 1) {
		out[0] = (uint8_t)total;
		return 1;
	}
	out[0] = (uint8_t)(((n - 1) << 6) | (total & 0xf));
	for (unsigned i = 1; i < n; i++)
		out[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
	return n;
}

void aml_pkg_close(struct aml_buf *b, size_t token)
{
	if (b->failed || token > b->len) {
		b->failed = true;
		return;
	}
	uint8_t enc[4];
	unsigned n = aml_pkglength_encode(b->len - token, enc);
	if (n == 0) {
		b->failed = true;
		return;
	}
	aml_insert(b, token, enc, n);
}

size_t aml_scope_open(struct aml_buf *b, const char *path)
{
	aml_byte(b, AML_SCOPE_OP);
	size_t token = b->len;
	aml_name_string(b, path);
	return token;
}

size_t aml_device_open(struct aml_buf *b, const char *name)
{
	aml_byte(b, AML_EXT_OP_PREFIX);
	aml_byte(b, AML_DEVICE_OP);
	size_t token = b->len;
	aml_name_string(b, name);
	return token;
}

size_t aml_package_open(struct aml_buf *b, uint8_t nr_elements)
{
	aml_byte(b, AML_PACKAGE_OP);
	size_t token = b->len;
	aml_byte(b, nr_elements);
	return token;
}

size_t aml_resource_template_open(struct aml_buf *b)
{
	aml_byte(b, AML_BUFFER_OP);
	return b->len;
}

void aml_resource_template_close(struct aml_buf *b, size_t token)
{
	/* End Tag; checksum 0 means "treat as correct" (what iasl emits). */
	aml_byte(b, RES_END_TAG);
	aml_byte(b, 0);
	if (b->failed || token > b->len) {
		b->failed = true;
		return;
	}
	/* Buffer := BufferOp PkgLength BufferSize ByteList: insert the size. */
	uint8_t size_enc[9];
	struct aml_buf sz;
	aml_init(&sz, size_enc, sizeof(size_enc));
	aml_integer(&sz, b->len - token);
	aml_insert(b, token, size_enc, sz.len);
	aml_pkg_close(b, token);
}

void aml_res_memory32_fixed(struct aml_buf *b, uint32_t base, uint32_t len, bool writable)
{
	aml_byte(b, RES_MEMORY32_FIXED);
	aml_le(b, 9, 2);                /* length of what follows */
	aml_byte(b, writable ? 1 : 0);
	aml_le(b, base, 4);
	aml_le(b, len, 4);
}

void aml_res_io(struct aml_buf *b, uint16_t base, uint8_t len)
{
	aml_byte(b, RES_IO);
	aml_byte(b, 1);                 /* decodes 16 address bits */
	aml_le(b, base, 2);             /* minimum base */
	aml_le(b, base, 2);             /* maximum base: fixed */
	aml_byte(b, 1);                 /* alignment */
	aml_byte(b, len);
}

void aml_res_irq_noflags(struct aml_buf *b, unsigned irq)
{
	if (irq > 15) {
		b->failed = true;
		return;
	}
	aml_byte(b, RES_IRQ_NOFLAGS);
	aml_le(b, 1u << irq, 2);        /* mask of ISA IRQs */
}

void aml_res_interrupt(struct aml_buf *b, uint32_t gsi, bool edge, bool active_low)
{
	aml_byte(b, RES_EXT_INTERRUPT);
	aml_le(b, 6, 2);                /* flags, count, one interrupt number */
	aml_byte(b, (uint8_t)(EXT_INT_CONSUMER | (edge ? EXT_INT_EDGE : 0) |
			      (active_low ? EXT_INT_ACTIVE_LOW : 0)));   /* exclusive */
	aml_byte(b, 1);
	aml_le(b, gsi, 4);
}
