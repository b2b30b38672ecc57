/* SPDX-License-Identifier: Apache-2.0 */
/* "Did you mean ...?": the name in a table nearest to what the user typed,
 * for unknown options (vmm/cli.c) and unknown --net keys (vmm/net_config.c).
 *
 * Header-only, like base/guest_mem.h's accessors: both users are the
 * program's own sources (the Makefile's PROG_SRCS), which link with none of
 * libminivmm's internals, and a new .c file under vmm/ would be built into
 * the library instead. */
#ifndef MINIVMM_VMM_SUGGEST_H
#define MINIVMM_VMM_SUGGEST_H

#include <stddef.h>
#include <string.h>

/* Longer names are never suggested (ours are at most 16 characters). */
#define SUGGEST_MAX_NAME 32

/* Edit distance between a and b (insertions, deletions, substitutions and
 * swaps of two neighbours, each 1: the optimal-string-alignment form of
 * Damerau-Levenshtein), or bound + 1 as soon as it is known to be more than
 * bound. Cost O(bound * strlen(b)) at most, whatever the length of a. */
static inline unsigned suggest_distance(const char *a, const char *b, unsigned bound)
{
	size_t la = strlen(a), lb = strlen(b);
	if (lb > SUGGEST_MAX_NAME || (la > lb ? la - lb : lb - la) > bound)
		return bound + 1;
	/* Three rows of the table: row i - 2, row i - 1 and row i. */
	unsigned rows[3][SUGGEST_MAX_NAME + 1];
	unsigned *before = rows[0], *prev = rows[1], *cur = rows[2];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		unsigned row_min = cur[0];
		for (size_t j = 1; j <= lb; j++) {
			unsigned d = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    before[j - 2] + 1 < d)
				d = before[j - 2] + 1;
			cur[j] = d;
			if (d < row_min)
				row_min = d;
		}
		/* No cell of a later row is below this row's smallest (a swap
		 * reaches back two rows, but costs as much as the substitution
		 * through the row between). */
		if (row_min > bound)
			return bound + 1;
		unsigned *spare = before;
		before = prev;
		prev = cur;
		cur = spare;
	}
	return prev[lb] <= bound ? prev[lb] : bound + 1;
}

/* The name in table (count entries of stride bytes, each starting with a
 * const char *name) nearest to word: the first at the smallest distance
 * within 1 edit for words of up to 3 characters, 2 up to 6, else 3; or,
 * with none that close, the only name that word begins ("mem-over" for
 * mem-overcommit). NULL when there is none. */
static inline const char *suggest_nearest(const char *word, const void *table, size_t count,
					  size_t stride)
{
	size_t len = strlen(word);
	unsigned bound = len <= 3 ? 1 : len <= 6 ? 2 : 3;
	const char *best = NULL, *prefix_of = NULL;
	unsigned best_d = bound + 1, prefixes = 0;
	for (size_t i = 0; i < count; i++) {
		const char *name = *(const char *const *)(const void *)((const char *)table + i * stride);
		unsigned d = suggest_distance(word, name, bound);
		if (d < best_d) {
			best_d = d;
			best = name;
		}
		if (len && strncmp(name, word, len) == 0) {
			prefix_of = name;
			prefixes++;
		}
	}
	if (best)
		return best;
	return prefixes == 1 ? prefix_of : NULL;
}

#endif
