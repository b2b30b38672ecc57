/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel command line from hvm_start_info: space-separated words, each
 * `key=value` or a bare `key` (value ""). Every word is kept, including ones
 * the guest does not know (e.g. virtio_mmio.device=...), for later users. */
#ifndef TESTGUEST_CMDLINE_H
#define TESTGUEST_CMDLINE_H

#include <stdint.h>

#define CMDLINE_MAX       4096
#define CMDLINE_MAX_WORDS 64

struct cmdline_word {
	const char *key;
	const char *value;
};

/* Copy and split the command line (NULL or "" means empty). */
void cmdline_init(const char *raw);
const char *cmdline_raw(void);
unsigned cmdline_count(void);
const struct cmdline_word *cmdline_word(unsigned i);
/* Index of the first word with this key at or after `from`, or -1. */
int cmdline_find(const char *key, unsigned from);
/* Value of the first word with this key, or def. */
const char *cmdline_get(const char *key, const char *def);
/* Numeric value of key: 1 if absent (def used), 0 if parsed, -1 if bad. */
int cmdline_get_u64(const char *key, uint64_t def, uint64_t *out);

#endif
