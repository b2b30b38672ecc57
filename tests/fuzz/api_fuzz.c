/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the API socket's request path (vmm/api.c api_handle), what
 * a client controls once libmicrohttpd has parsed its HTTP: the method, the
 * URL and the body.
 *
 * The input: its first byte picks the method (GET, PUT, POST, DELETE, or
 * the bytes up to the first NUL as a method of their own), then the URL up
 * to the next NUL, then the body (any bytes, NULs included). The
 * operations are fakes that accept every value, so every path to them is
 * reached.
 *
 * Checked: nothing crashes; the status is 200, 204 or a 4xx/5xx; 204 has
 * no body and every other answer is one line of JSON, an object, with an
 * "error" string exactly when the status is an error; nothing but
 * vm.shutdown by PUT reaches the shutdown operation, and only the
 * rate-limit PUT sets limits, within what JSON's integers can say. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_common.h"
#include "vmm/api.h"

static int shutdowns, sets;

static int f_ok(void *o, char *why, size_t len)
{
	(void)o;
	(void)why;
	(void)len;
	return 0;
}

static int f_shutdown(void *o, char *why, size_t len)
{
	(void)o;
	(void)why;
	(void)len;
	shutdowns++;
	return 0;
}

static unsigned f_count(void *o)
{
	(void)o;
	return 3;
}

static int f_get(void *o, unsigned index, struct minivmm_rate_limit *rx, struct minivmm_rate_limit *tx)
{
	(void)o;
	FUZZ_CHECK(index < 3, "get_rate_limit of device %u", index);
	memset(rx, 0, sizeof(*rx));
	memset(tx, 0, sizeof(*tx));
	return 0;
}

static int f_set(void *o, unsigned index, const struct minivmm_rate_limit *rx, const struct minivmm_rate_limit *tx,
		 char *why, size_t len)
{
	(void)o;
	(void)why;
	(void)len;
	FUZZ_CHECK(index < 3, "set_rate_limit of device %u", index);
	FUZZ_CHECK(rx || tx, "set_rate_limit with nothing to set");
	sets++;
	return 0;
}

static json_t *f_json(void *o)
{
	(void)o;
	return json_object();
}

static const struct api_ops ops = {
	.info = f_json, .counters = f_json, .pause = f_ok, .resume = f_ok, .shutdown = f_shutdown, .reboot = f_ok,
	.net_count = f_count, .get_rate_limit = f_get, .set_rate_limit = f_set,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "PUT", "POST", "DELETE" };
	char method[64] = "";
	const uint8_t *p = data, *end = data + size;
	if (size == 0)
		return 0;
	if (*p < 4) {
		snprintf(method, sizeof(method), "%s", methods[*p]);
		p++;
	} else {
		size_t n = 0;
		while (p < end && *p && n < sizeof(method) - 1)
			method[n++] = (char)*p++;
		if (p < end)
			p++;
	}
	char *url = calloc(1, (size_t)(end - p) + 1);
	size_t ulen = 0;
	while (p < end && *p)
		url[ulen++] = (char)*p++;
	if (p < end)
		p++;
	size_t blen = (size_t)(end - p);
	char *body = malloc(blen + 1);
	memcpy(body, p, blen);
	body[blen] = '\0';

	int before_shutdowns = shutdowns, before_sets = sets;
	char *out = NULL;
	int st = api_handle(&ops, method, url, body, blen, &out);
	FUZZ_CHECK(st == 200 || st == 204 || (st >= 400 && st < 600), "status %d", st);
	if (st == 204) {
		FUZZ_CHECK(!out, "204 with a body");
	} else {
		FUZZ_CHECK(out, "status %d without a body", st);
		FUZZ_CHECK(!strchr(out, '\n'), "more than one line: %s", out);
		json_t *j = json_loads(out, 0, NULL);
		FUZZ_CHECK(j && json_is_object(j), "not a JSON object: %s", out);
		json_t *e = json_object_get(j, "error");
		FUZZ_CHECK((st >= 400) == (e && json_is_string(e)), "status %d, error %s", st, out);
		json_decref(j);
	}
	if (shutdowns != before_shutdowns)
		FUZZ_CHECK(strcmp(method, "PUT") == 0 && strcmp(url, "/api/v1/vm.shutdown") == 0,
			   "%s %s stopped the VM", method, url);
	if (sets != before_sets)
		FUZZ_CHECK(strcmp(method, "PUT") == 0 && strstr(url, "/rate-limit"), "%s %s set limits", method, url);
	free(out);
	free(url);
	free(body);
	return 0;
}
