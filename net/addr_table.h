/* SPDX-License-Identifier: Apache-2.0 */
/* A fixed-capacity map from buffer addresses to small values, for a
 * backend that hands buffers to the kernel by address and gets the address
 * back, in any order, when the kernel is done (AF_XDP's fill/RX and
 * TX/completion rings). Open addressing with linear probing; a removal
 * shifts later entries back, so there are no tombstones and every lookup
 * ends at the first empty slot. At most max_entries at once, in a table
 * twice that size rounded up to a power of two. Not thread-safe: one
 * worker owns it. */
#ifndef MINIVMM_NET_ADDR_TABLE_H
#define MINIVMM_NET_ADDR_TABLE_H

#include <stdbool.h>
#include <stdint.h>

struct addr_table {
	uint64_t *key;     /* ADDR_TABLE_EMPTY: a free slot */
	uint32_t *val;
	unsigned mask;     /* slots - 1 */
	unsigned count;
	unsigned limit;    /* max_entries */
};

#define ADDR_TABLE_EMPTY UINT64_MAX   /* never a buffer address */

/* 0, or -ENOMEM / -EINVAL (max_entries 0 or above 1 << 24). */
int addr_table_init(struct addr_table *t, unsigned max_entries);
void addr_table_free(struct addr_table *t);

/* Add key -> val. False if key is already there or the table is full. */
bool addr_table_insert(struct addr_table *t, uint64_t key, uint32_t val);

/* Remove key, its value in *val. False if absent. */
bool addr_table_take(struct addr_table *t, uint64_t key, uint32_t *val);

bool addr_table_has(const struct addr_table *t, uint64_t key);

static inline bool addr_table_full(const struct addr_table *t)
{
	return t->count >= t->limit;
}

/* Remove some entry (for emptying the table at the end). False if empty. */
bool addr_table_take_any(struct addr_table *t, uint64_t *key, uint32_t *val);

#endif
