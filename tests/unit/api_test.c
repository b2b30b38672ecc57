/* SPDX-License-Identifier: Apache-2.0 */
/* The API socket (vmm/api.h): the endpoints over fake operations, then the
 * HTTP server on a real Unix socket, with well- and ill-behaved clients. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/api.h"

struct fake {
	int paused, shutdowns;
	bool link_down[2];
	struct minivmm_rate_limit rx, tx;
	unsigned sets;
};

static int f_pause(void *o, char *why, size_t len)
{
	struct fake *f = o;
	if (f->paused) {
		snprintf(why, len, "the VM is paused already");
		return 409;
	}
	f->paused = 1;
	return 0;
}

static int f_resume(void *o, char *why, size_t len)
{
	struct fake *f = o;
	if (!f->paused) {
		snprintf(why, len, "the VM is not paused");
		return 409;
	}
	f->paused = 0;
	return 0;
}

static int f_shutdown(void *o, char *why, size_t len)
{
	(void)why;
	(void)len;
	((struct fake *)o)->shutdowns++;
	return 0;
}

static unsigned f_net_count(void *o)
{
	(void)o;
	return 2;
}

static int f_get(void *o, unsigned index, struct minivmm_rate_limit *rx, struct minivmm_rate_limit *tx)
{
	struct fake *f = o;
	(void)index;
	*rx = f->rx;
	*tx = f->tx;
	return 0;
}

static int f_set(void *o, unsigned index, const struct minivmm_rate_limit *rx, const struct minivmm_rate_limit *tx,
		 char *why, size_t len)
{
	struct fake *f = o;
	(void)index;
	if (tx && tx->bandwidth.size && !tx->bandwidth.refill_time_ms) {
		snprintf(why, len, "net0 tx-bw: size without refill time");
		return 400;
	}
	if (rx)
		f->rx = *rx;
	if (tx)
		f->tx = *tx;
	f->sets++;
	return 0;
}

static json_t *f_info(void *o)
{
	return json_pack("{s:s}", "state", ((struct fake *)o)->paused ? "Paused" : "Running");
}

static json_t *f_counters(void *o)
{
	struct fake *f = o;
	json_t *net = json_array();
	for (unsigned k = 0; k < 2; k++)
		json_array_append_new(net, json_pack("{s:s+, s:b, s:b, s:[{s:i, s:i}]}", "name", "net",
						     k ? "1" : "0", "link_up", !f->link_down[k], "link_set_down",
						     f->link_down[k], "queues", "queue", 0, "rx_frames", 10 + k));
	return json_pack("{s:o}", "net", net);
}

static int f_set_link(void *o, unsigned index, bool up, char *why, size_t len)
{
	struct fake *f = o;
	if (f->link_down[index] == !up) {
		snprintf(why, len, "net%u's link is %s already", index, up ? "up" : "set down");
		return 409;
	}
	f->link_down[index] = !up;
	return 0;
}

static struct fake fk;
static const struct api_ops fake_ops = {
	.opaque = &fk, .info = f_info, .counters = f_counters, .pause = f_pause, .resume = f_resume,
	.shutdown = f_shutdown, .net_count = f_net_count, .get_rate_limit = f_get, .set_rate_limit = f_set,
	.set_link = f_set_link,
};

static int call(const char *method, const char *url, const char *body, char **out)
{
	return api_handle(&fake_ops, method, url, body, body ? strlen(body) : 0, out);
}

Test(api, ping_info_and_actions)
{
	memset(&fk, 0, sizeof(fk));
	char *out;
	cr_assert_eq(call("GET", "/api/v1/vmm.ping", NULL, &out), 200);
	cr_assert_not_null(strstr(out, "\"version\""), "%s", out);
	free(out);
	cr_assert_eq(call("PUT", "/api/v1/vm.pause", NULL, &out), 204);
	cr_assert_null(out);
	cr_assert_eq(call("GET", "/api/v1/vm.info", NULL, &out), 200);
	cr_assert_str_eq(out, "{\"state\":\"Paused\"}");
	free(out);
	cr_assert_eq(call("PUT", "/api/v1/vm.pause", NULL, &out), 409);
	cr_assert_str_eq(out, "{\"error\":\"the VM is paused already\"}");
	free(out);
	cr_assert_eq(call("PUT", "/api/v1/vm.resume", NULL, &out), 204);
	cr_assert_eq(call("PUT", "/api/v1/vm.reboot", NULL, &out), 501, "no reboot operation given");
	free(out);
	cr_assert_eq(fk.shutdowns, 0);
	cr_assert_eq(call("PUT", "/api/v1/vm.shutdown", NULL, &out), 204);
	cr_assert_eq(fk.shutdowns, 1);
}

Test(api, wrong_paths_and_methods_are_4xx_with_one_json_line)
{
	char *out;
	cr_assert_eq(call("GET", "/", NULL, &out), 404);
	free(out);
	cr_assert_eq(call("GET", "/api/v1/vm.nothing", NULL, &out), 404);
	cr_assert_str_eq(out, "{\"error\":\"no such endpoint: /api/v1/vm.nothing\"}");
	free(out);
	cr_assert_eq(call("GET", "/api/v1/vm.shutdown", NULL, &out), 405, "a GET never stops the VM");
	free(out);
	cr_assert_eq(fk.shutdowns, 0);
	cr_assert_eq(call("PUT", "/api/v1/vmm.ping", NULL, &out), 405);
	free(out);
	cr_assert_eq(call("DELETE", "/api/v1/vm.net/0/rate-limit", NULL, &out), 405);
	free(out);
	cr_assert_eq(call("GET", "/api/v1/vm.net/2/rate-limit", NULL, &out), 404, "two devices: 0 and 1");
	free(out);
	cr_assert_eq(call("GET", "/api/v1/vm.net/99999999999999/rate-limit", NULL, &out), 404);
	free(out);
	cr_assert_eq(call("GET", "/api/v1/vm.net/0/rate-limitx", NULL, &out), 404);
	free(out);
	/* What the client sent is quoted as printable ASCII (the fuzz target's
	 * repro-url-not-utf8: jansson refused the line, the 404 had no body). */
	cr_assert_eq(call("GET", "/api/v1/vm.n\xfft/2\n", NULL, &out), 404);
	cr_assert_str_eq(out, "{\"error\":\"no such endpoint: /api/v1/vm.n?t/2?\"}");
	free(out);
}

Test(api, rate_limits_get_and_put_as_firecracker_names_them)
{
	memset(&fk, 0, sizeof(fk));
	char *out;
	cr_assert_eq(call("PUT", "/api/v1/vm.net/1/rate-limit",
			  "{\"tx_rate_limiter\":{\"bandwidth\":{\"size\":125000,\"refill_time\":100},"
			  "\"ops\":{\"size\":500,\"one_time_burst\":50,\"refill_time\":100}}}", &out), 204);
	cr_assert_eq(fk.tx.bandwidth.size, 125000u);
	cr_assert_eq(fk.tx.bandwidth.refill_time_ms, 100u);
	cr_assert_eq(fk.tx.ops.one_time_burst, 50u);
	cr_assert_eq(call("GET", "/api/v1/vm.net/1/rate-limit", NULL, &out), 200);
	json_t *j = json_loads(out, 0, NULL);
	free(out);
	cr_assert_not_null(j);
	json_int_t size = 0;
	cr_assert_eq(json_unpack(j, "{s:{s:{s:I}}}", "tx_rate_limiter", "bandwidth", "size", &size), 0);
	cr_assert_eq(size, 125000);
	json_decref(j);

	static const char *const bad[] = {
		"", "{", "[]", "{\"rx_rate_limiter\":1}", "{\"rx_rate_limiter\":{\"bandwidth\":{\"size\":-1}}}",
		"{\"rx_rate_limiter\":{\"bandwidth\":{\"size\":1,\"sise\":2}}}", "{\"other\":{}}", "{}",
		"{\"tx_rate_limiter\":{\"bandwidth\":{\"size\":1}}}", "{\"rx_rate_limiter\":{},\"rx_rate_limiter\":{}}",
		"{\"rx_rate_limiter\":{\"bandwidth\":{\"size\":1.5}}}",
	};
	unsigned sets = fk.sets;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int st = call("PUT", "/api/v1/vm.net/0/rate-limit", bad[i], &out);
		cr_assert_eq(st, 400, "'%s': %d", bad[i], st);
		cr_assert_not_null(out);
		cr_assert_eq(strncmp(out, "{\"error\":\"", 10), 0, "%s", out);
		cr_assert_null(strchr(out, '\n'), "one line");
		free(out);
	}
	cr_assert_eq(fk.sets, sets, "nothing set by a refused request");
}

Test(api, a_device_s_link_down_and_up_and_its_counters)
{
	memset(&fk, 0, sizeof(fk));
	char *out;
	cr_assert_eq(call("GET", "/api/v1/vm.net/1/link", NULL, &out), 200);
	cr_assert_str_eq(out, "{\"up\":true,\"set_down\":false}");
	free(out);
	cr_assert_eq(call("PUT", "/api/v1/vm.net/1/link", "{\"up\":false}", &out), 204);
	cr_assert(fk.link_down[1] && !fk.link_down[0]);
	cr_assert_eq(call("GET", "/api/v1/vm.net/1/link", NULL, &out), 200);
	cr_assert_str_eq(out, "{\"up\":false,\"set_down\":true}");
	free(out);
	cr_assert_eq(call("PUT", "/api/v1/vm.net/1/link", "{\"up\":false}", &out), 409);
	cr_assert_str_eq(out, "{\"error\":\"net1's link is set down already\"}");
	free(out);
	static const char *const bad[] = { "", "{}", "{\"up\":1}", "{\"up\":true,\"x\":1}", "[true]",
					   "{\"up\":\"yes\"}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(call("PUT", "/api/v1/vm.net/0/link", bad[i], &out), 400, "'%s'", bad[i]);
		cr_assert_eq(strncmp(out, "{\"error\":\"", 10), 0, "%s", out);
		free(out);
	}
	cr_assert(!fk.link_down[0], "nothing set by a refused request");
	cr_assert_eq(call("PUT", "/api/v1/vm.net/1/link", "{\"up\":true}", &out), 204);
	cr_assert(!fk.link_down[1]);
	cr_assert_eq(call("PUT", "/api/v1/vm.net/2/link", "{\"up\":true}", &out), 404);
	free(out);
	cr_assert_eq(call("DELETE", "/api/v1/vm.net/0/link", NULL, &out), 405);
	free(out);

	cr_assert_eq(call("GET", "/api/v1/vm.net/1/counters", NULL, &out), 200);
	json_t *j = json_loads(out, 0, NULL);
	free(out);
	const char *name = NULL;
	int frames = 0;
	cr_assert_eq(json_unpack(j, "{s:s, s:[{s:i}]}", "name", &name, "queues", "rx_frames", &frames), 0);
	cr_assert_str_eq(name, "net1");
	cr_assert_eq(frames, 11, "device 1's own queues");
	json_decref(j);
	cr_assert_eq(call("PUT", "/api/v1/vm.net/1/counters", NULL, &out), 405);
	free(out);
	cr_assert_eq(call("GET", "/api/v1/vm.net/7/counters", NULL, &out), 404);
	free(out);
}

/* ---- over the socket ------------------------------------------------------------ */

static char sock_path[108];

static struct api_server *start(void)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/minivmm-api-test.%d", (int)getpid());
	unlink(sock_path);
	struct api_server *s;
	struct vmm_err err = { 0 };
	cr_assert_eq(api_server_open(&s, sock_path, (gid_t)-1, &fake_ops, &err), 0, "%s", err.msg);
	cr_assert_eq(api_server_run(s, NULL, &err), 0, "%s", err.msg);
	return s;
}

static int connect_api(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
	return fd;
}

/* Send req, read the answer until the server closes or timeout_ms passes. */
static void exchange(int fd, const char *req, size_t len, char *ans, size_t size, int timeout_ms)
{
	size_t off = 0;
	while (off < len) {
		ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	size_t got = 0;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		ssize_t n = recv(fd, ans + got, size - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (strstr(ans, "\r\n\r\n") && (strstr(ans, "Content-Length: 0") || strchr(strstr(ans, "\r\n\r\n") + 4, '}')))
			break;
	}
	ans[got] = '\0';
}

Test(api_socket, private_socket_answers_and_survives_bad_clients, .timeout = 60)
{
	memset(&fk, 0, sizeof(fk));
	struct api_server *s = start();
	struct stat st;
	cr_assert_eq(stat(sock_path, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	char ans[4096];

	int fd = connect_api();
	static const char ping[] = "GET /api/v1/vmm.ping HTTP/1.1\r\nHost: localhost\r\n\r\n";
	exchange(fd, ping, strlen(ping), ans, sizeof(ans), 5000);
	cr_assert_eq(strncmp(ans, "HTTP/1.1 200", 12), 0, "%s", ans);
	cr_assert_not_null(strstr(ans, "application/json"));
	close(fd);

	/* garbage */
	fd = connect_api();
	static const char junk[] = "\x01\x02 not http at all\r\n\r\n";
	exchange(fd, junk, sizeof(junk) - 1, ans, sizeof(ans), 5000);
	cr_assert_eq(strncmp(ans, "HTTP/1.1 400", 12), 0, "garbage: %s", ans);
	close(fd);

	/* a header larger than the server keeps */
	fd = connect_api();
	static char big[64 * 1024];
	int n = snprintf(big, sizeof(big), "GET /api/v1/vmm.ping HTTP/1.1\r\nHost: x\r\nX-Big: ");
	memset(big + n, 'a', sizeof(big) - (size_t)n - 8);
	memcpy(big + sizeof(big) - 8, "\r\n\r\n\0\0\0", 8);
	exchange(fd, big, strlen(big), ans, sizeof(ans), 5000);
	cr_assert(strncmp(ans, "HTTP/1.1 431", 12) == 0 || strncmp(ans, "HTTP/1.1 413", 12) == 0 || ans[0] == '\0',
		  "huge header: %.40s", ans);
	close(fd);

	/* a body larger than 16 KiB */
	fd = connect_api();
	static char body_req[40 * 1024];
	n = snprintf(body_req, sizeof(body_req),
		     "PUT /api/v1/vm.net/0/rate-limit HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", 32 * 1024);
	memset(body_req + n, ' ', 32 * 1024);
	exchange(fd, body_req, (size_t)n + 32 * 1024, ans, sizeof(ans), 5000);
	cr_assert_eq(strncmp(ans, "HTTP/1.1 413", 12), 0, "big body: %.60s", ans);
	close(fd);

	/* a client that sends half a request and goes away, and one that
	 * stays silent: neither keeps the others out */
	int gone = connect_api();
	static const char half[] = "PUT /api/v1/vm.pau";
	cr_assert_eq(send(gone, half, sizeof(half) - 1, MSG_NOSIGNAL), (ssize_t)(sizeof(half) - 1));
	close(gone);
	int silent = connect_api();
	fd = connect_api();
	static const char pause[] = "PUT /api/v1/vm.pause HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
	exchange(fd, pause, strlen(pause), ans, sizeof(ans), 5000);
	cr_assert_eq(strncmp(ans, "HTTP/1.1 204", 12), 0, "beside a silent client: %s", ans);
	cr_assert_eq(fk.paused, 1);
	close(fd);
	close(silent);
	cr_assert_eq(fk.shutdowns, 0, "nothing a client sent stopped the VM");

	api_server_stop(s);
	cr_assert_neq(stat(sock_path, &st), 0, "the socket file is removed");
}

Test(api_socket, an_existing_path_is_refused_and_left_alone)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/minivmm-api-test-exists.%d", (int)getpid());
	FILE *f = fopen(sock_path, "w");
	cr_assert_not_null(f);
	fclose(f);
	struct api_server *s;
	struct vmm_err err = { 0 };
	cr_assert_lt(api_server_open(&s, sock_path, (gid_t)-1, &fake_ops, &err), 0);
	cr_assert_not_null(strstr(err.msg, "exists"), "%s", err.msg);
	struct stat st;
	cr_assert_eq(stat(sock_path, &st), 0, "still there");
	cr_assert(S_ISREG(st.st_mode));
	unlink(sock_path);
}
