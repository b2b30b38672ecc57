/* SPDX-License-Identifier: Apache-2.0 */
/* A tiny AML byte-code writer: just what minivmm's DSDT needs.
 *
 * AML (ACPI spec 6.x, chapter 20) is a prefix byte code: most objects are an
 * opcode, a PkgLength giving the size of what follows, then the contents.
 * The writer appends to a caller-provided buffer; an object with a PkgLength
 * is opened, filled, then closed, and the close inserts the PkgLength once
 * the size is known. Running out of room (or a malformed name) sets `failed` and stops
 * writing, so callers check once at the end instead of after every call. */
#ifndef MINIVMM_BOOT_AML_H
#define MINIVMM_BOOT_AML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct aml_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool failed;     /* a write did not fit or a name was malformed:
			  * the contents are unusable */
};

void aml_init(struct aml_buf *b, uint8_t *data, size_t cap);
void aml_bytes(struct aml_buf *b, const void *p, size_t n);

/* Data objects. aml_integer picks the shortest encoding (Zero, One, Byte,
 * Word, DWord or QWord constant). */
void aml_integer(struct aml_buf *b, uint64_t v);
void aml_string(struct aml_buf *b, const char *s);
/* EisaId("PNP0501"): the compressed 32-bit EISA id, as a DWord constant. */
void aml_eisaid(struct aml_buf *b, const char *id);
uint32_t aml_eisaid_value(const char *id);   /* 0 if id is malformed */

/* A NameString: optional leading '\' (root), then NameSegs separated by
 * '.', each 1-4 characters of [A-Z0-9_] padded with '_' (e.g. "\\_SB",
 * "_S5", "VR00"). */
void aml_name_string(struct aml_buf *b, const char *path);

/* Name(path, <object written next>) */
void aml_name(struct aml_buf *b, const char *path);

/* Objects with a PkgLength. Each _open returns a token for its _close. */
size_t aml_scope_open(struct aml_buf *b, const char *path);
size_t aml_device_open(struct aml_buf *b, const char *name);
size_t aml_package_open(struct aml_buf *b, uint8_t nr_elements);
void aml_pkg_close(struct aml_buf *b, size_t token);

/* ResourceTemplate(): a Buffer of resource descriptors ended by an End Tag.
 * The descriptors go between _open and _close. */
size_t aml_resource_template_open(struct aml_buf *b);
void aml_resource_template_close(struct aml_buf *b, size_t token);

/* Resource descriptors (ACPI 6.x section 6.4). */
void aml_res_memory32_fixed(struct aml_buf *b, uint32_t base, uint32_t len, bool writable);
void aml_res_io(struct aml_buf *b, uint16_t base, uint8_t len);   /* Decode16, fixed base */
void aml_res_irq_noflags(struct aml_buf *b, unsigned irq);         /* ISA IRQ 0-15: edge, high */
/* Extended Interrupt: one GSI, consumer, edge or level, active high or low,
 * exclusive. */
void aml_res_interrupt(struct aml_buf *b, uint32_t gsi, bool edge, bool active_low);

/* Encoded size of a PkgLength covering `contents` bytes after it (1-4),
 * and the encoder itself; exposed for the unit tests. */
unsigned aml_pkglength_size(size_t contents);
unsigned aml_pkglength_encode(size_t contents, uint8_t out[4]);

#endif
