/* SPDX-License-Identifier: Apache-2.0 */
#include "net/addr_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ADDR_TABLE_MAX (1u << 24)

static unsigned slot_of(const struct addr_table *t, uint64_t key)
{
	/* Fibonacci hashing: buffer addresses share their low bits (chunk
	 * alignment) and differ in the middle ones; the multiply mixes them
	 * into the top bits, which we keep. */
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 40) & t->mask;
}

int addr_table_init(struct addr_table *t, unsigned max_entries)
{
	memset(t, 0, sizeof(*t));
	if (max_entries == 0 || max_entries > ADDR_TABLE_MAX)
		return -EINVAL;
	unsigned slots = 1;
	while (slots < 2 * max_entries)
		slots <<= 1;
	t->key = malloc(slots * sizeof(t->key[0]));
	t->val = malloc(slots * sizeof(t->val[0]));
	if (!t->key || !t->val) {
		addr_table_free(t);
		return -ENOMEM;
	}
	memset(t->key, 0xff, slots * sizeof(t->key[0]));   /* ADDR_TABLE_EMPTY */
	t->mask = slots - 1;
	t->limit = max_entries;
	return 0;
}

void addr_table_free(struct addr_table *t)
{
	free(t->key);
	free(t->val);
	memset(t, 0, sizeof(*t));
}

/* The slot holding key, or the empty slot where its probe ends. The table
 * is never full (count <= half the slots), so the probe ends. */
static unsigned probe(const struct addr_table *t, uint64_t key)
{
	unsigned i = slot_of(t, key);
	while (t->key[i] != ADDR_TABLE_EMPTY && t->key[i] != key)
		i = (i + 1) & t->mask;
	return i;
}

bool addr_table_insert(struct addr_table *t, uint64_t key, uint32_t val)
{
	if (key == ADDR_TABLE_EMPTY || addr_table_full(t))
		return false;
	unsigned i = probe(t, key);
	if (t->key[i] == key)
		return false;
	t->key[i] = key;
	t->val[i] = val;
	t->count++;
	return true;
}

bool addr_table_has(const struct addr_table *t, uint64_t key)
{
	return t->key && key != ADDR_TABLE_EMPTY && t->key[probe(t, key)] == key;
}

/* Empty slot i and move back any later entry of the run whose home slot
 * lies at or before i, so every remaining key is still found by probe(). */
static void remove_at(struct addr_table *t, unsigned i)
{
	unsigned j = i;
	for (;;) {
		t->key[i] = ADDR_TABLE_EMPTY;
		for (;;) {
			j = (j + 1) & t->mask;
			if (t->key[j] == ADDR_TABLE_EMPTY) {
				t->count--;
				return;
			}
			unsigned home = slot_of(t, t->key[j]);
			/* Can j's entry move to i? Only if its home is not in (i, j]. */
			bool in_between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
			if (!in_between)
				break;
		}
		t->key[i] = t->key[j];
		t->val[i] = t->val[j];
		i = j;
	}
}

bool addr_table_take(struct addr_table *t, uint64_t key, uint32_t *val)
{
	if (!t->key || key == ADDR_TABLE_EMPTY)
		return false;
	unsigned i = probe(t, key);
	if (t->key[i] != key)
		return false;
	*val = t->val[i];
	remove_at(t, i);
	return true;
}

bool addr_table_take_any(struct addr_table *t, uint64_t *key, uint32_t *val)
{
	if (!t->count)
		return false;
	for (unsigned i = 0; i <= t->mask; i++) {
		if (t->key[i] != ADDR_TABLE_EMPTY) {
			*key = t->key[i];
			*val = t->val[i];
			remove_at(t, i);
			return true;
		}
	}
	return false;
}
