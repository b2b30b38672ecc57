/* SPDX-License-Identifier: Apache-2.0 */
#include "cmdline.h"

#include "lib.h"

static char raw_copy[CMDLINE_MAX];
static char words_buf[CMDLINE_MAX];
static struct cmdline_word words[CMDLINE_MAX_WORDS];
static unsigned nwords;

void cmdline_init(const char *raw)
{
	size_t n = raw ? strlen(raw) : 0;
	char *p = words_buf;

	if (n >= CMDLINE_MAX)
		n = CMDLINE_MAX - 1;
	memcpy(raw_copy, raw ? raw : "", n);
	raw_copy[n] = '\0';
	memcpy(words_buf, raw_copy, n + 1);
	nwords = 0;

	while (*p) {
		char *eq;

		while (*p == ' ' || *p == '\t' || *p == '\n')
			*p++ = '\0';
		if (!*p || nwords == CMDLINE_MAX_WORDS)
			break;
		words[nwords].key = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		if (*p)
			*p++ = '\0';
		eq = strchr(words[nwords].key, '=');
		if (eq) {
			*eq = '\0';
			words[nwords].value = eq + 1;
		} else {
			words[nwords].value = "";
		}
		nwords++;
	}
}

const char *cmdline_raw(void)
{
	return raw_copy;
}

unsigned cmdline_count(void)
{
	return nwords;
}

const struct cmdline_word *cmdline_word(unsigned i)
{
	return i < nwords ? &words[i] : NULL;
}

int cmdline_find(const char *key, unsigned from)
{
	for (unsigned i = from; i < nwords; i++)
		if (!strcmp(words[i].key, key))
			return (int)i;
	return -1;
}

const char *cmdline_get(const char *key, const char *def)
{
	int i = cmdline_find(key, 0);

	return i < 0 ? def : words[i].value;
}

int cmdline_get_u64(const char *key, uint64_t def, uint64_t *out)
{
	const char *v = cmdline_get(key, NULL);

	if (!v) {
		*out = def;
		return 1;
	}
	return parse_u64(v, out) ? -1 : 0;
}
