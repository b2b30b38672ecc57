/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel command line assembly.
 *
 * The VMM builds the line word by word (the user's --cmdline, then entries
 * such as "virtio_mmio.device=4K@0xd0000000:5" for each device) in a fixed
 * buffer; the loader then copies it into guest memory at BOOT_CMDLINE_ADDR,
 * checking it against the kernel's own limit (bzImage cmdline_size). */
#ifndef MINIVMM_BOOT_CMDLINE_H
#define MINIVMM_BOOT_CMDLINE_H

#include <stddef.h>
#include <stdint.h>

#include "boot/boot.h"
#include "base/error.h"
#include "base/guest_mem.h"

struct cmdline {
	char buf[BOOT_CMDLINE_MAX];   /* always NUL-terminated */
	size_t len;                   /* strlen(buf) */
};

void cmdline_init(struct cmdline *cl);

/* Append word (which may itself hold several space-separated words, such as
 * the user's --cmdline) after one space. NULL or "" is a no-op. Fails with
 * E2BIG, leaving the line unchanged, when the result would not fit. */
int cmdline_append(struct cmdline *cl, const char *word, struct vmm_err *err);

/* cmdline_append() of a formatted word. */
int cmdline_appendf(struct cmdline *cl, struct vmm_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline const char *cmdline_str(const struct cmdline *cl)
{
	return cl->buf;
}

/* Copy cmdline (NULL means "") with its NUL to guest address gpa. max_len is
 * the longest line the kernel accepts, without the NUL (bzImage
 * cmdline_size); longer lines fail with E2BIG. */
int cmdline_write(const struct guest_mem *mem, uint64_t gpa, const char *cmdline,
		  size_t max_len, struct vmm_err *err);

#endif
