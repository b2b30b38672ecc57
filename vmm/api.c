/* SPDX-License-Identifier: Apache-2.0 */
/* The API socket (vmm/api.h, docs/api.md). */
#include "vmm/api.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "vmm/version.h"

#define API_PREFIX        "/api/v1/"
#define API_BODY_MAX      (16 * 1024)   /* a request body; more is 413 */
#define API_CONNECTIONS   4             /* clients at once; more wait in the listen backlog */
#define API_TIMEOUT_S     10            /* a client idle this long is dropped (a slow one) */
#define API_CONN_MEMORY   (16 * 1024)   /* a request's line and headers; more is 431 */

/* ---- answers ------------------------------------------------------------- */

static int answer_json(json_t *j, int status, char **out)
{
	*out = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	if (!*out) {
		*out = strdup("{\"error\":\"cannot make the answer\"}");
		return 500;
	}
	return status;
}

static int answer_error(int status, char **out, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int answer_error(int status, char **out, const char *fmt, ...)
{
	char line[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* It may quote what the client sent: printable ASCII only, so it is
	 * valid UTF-8 for JSON and safe for a terminal. */
	for (char *c = line; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			*c = '?';
	return answer_json(json_pack("{s:s}", "error", line), status, out);
}

/* ---- rate limits as JSON (Firecracker's names) ------------------------------- */

static json_t *bucket_json(const struct minivmm_token_bucket *b)
{
	return json_pack("{s:I, s:I, s:I}", "size", (json_int_t)b->size, "one_time_burst",
			 (json_int_t)b->one_time_burst, "refill_time", (json_int_t)b->refill_time_ms);
}

static json_t *limit_json(const struct minivmm_rate_limit *l)
{
	return json_pack("{s:o, s:o}", "bandwidth", bucket_json(&l->bandwidth), "ops", bucket_json(&l->ops));
}

/* A bucket object: every key optional (0), none unknown, none negative. */
static int bucket_from_json(json_t *j, struct minivmm_token_bucket *b, const char *what, char *why, size_t len)
{
	json_int_t size = 0, burst = 0, refill = 0;
	json_error_t e;
	if (!j)
		return 0;
	if (json_unpack_ex(j, &e, JSON_STRICT, "{s?I, s?I, s?I}", "size", &size, "one_time_burst", &burst,
			   "refill_time", &refill) < 0) {
		snprintf(why, len, "%s: %s", what, e.text);
		return 400;
	}
	if (size < 0 || burst < 0 || refill < 0) {
		snprintf(why, len, "%s: negative values are not a bucket", what);
		return 400;
	}
	*b = (struct minivmm_token_bucket){ .size = (uint64_t)size, .one_time_burst = (uint64_t)burst,
					    .refill_time_ms = (uint64_t)refill };
	return 0;
}

static int limit_from_json(json_t *j, struct minivmm_rate_limit *l, const char *what, char *why, size_t len)
{
	json_t *bw = NULL, *ops = NULL;
	json_error_t e;
	memset(l, 0, sizeof(*l));
	if (json_unpack_ex(j, &e, JSON_STRICT, "{s?o, s?o}", "bandwidth", &bw, "ops", &ops) < 0) {
		snprintf(why, len, "%s: %s", what, e.text);
		return 400;
	}
	char sub[64];
	snprintf(sub, sizeof(sub), "%s.bandwidth", what);
	int rc = bucket_from_json(bw, &l->bandwidth, sub, why, len);
	snprintf(sub, sizeof(sub), "%s.ops", what);
	return rc ? rc : bucket_from_json(ops, &l->ops, sub, why, len);
}

/* ---- the endpoints --------------------------------------------------------- */

static int ep_rate_limit(const struct api_ops *ops, bool put, unsigned index, const char *body, size_t blen,
			 char **out)
{
	if (!ops->net_count || index >= ops->net_count(ops->opaque))
		return answer_error(404, out, "no network device %u", index);
	if (!put) {
		struct minivmm_rate_limit rx, tx;
		if (ops->get_rate_limit(ops->opaque, index, &rx, &tx) < 0)
			return answer_error(500, out, "cannot read the rate limits of device %u", index);
		return answer_json(json_pack("{s:o, s:o}", "rx_rate_limiter", limit_json(&rx), "tx_rate_limiter",
					     limit_json(&tx)), 200, out);
	}
	json_error_t e;
	json_t *j = json_loadb(body ? body : "", blen, JSON_REJECT_DUPLICATES, &e);
	if (!j)
		return answer_error(400, out, "the body is not JSON: %s", e.text);
	json_t *jrx = NULL, *jtx = NULL;
	if (json_unpack_ex(j, &e, JSON_STRICT, "{s?o, s?o}", "rx_rate_limiter", &jrx, "tx_rate_limiter", &jtx) < 0) {
		json_decref(j);
		return answer_error(400, out, "%s", e.text);
	}
	struct minivmm_rate_limit rx, tx;
	char why[200] = "";
	int rc = jrx ? limit_from_json(jrx, &rx, "rx_rate_limiter", why, sizeof(why)) : 0;
	if (!rc && jtx)
		rc = limit_from_json(jtx, &tx, "tx_rate_limiter", why, sizeof(why));
	json_decref(j);
	if (rc)
		return answer_error(rc, out, "%s", why);
	if (!jrx && !jtx)
		return answer_error(400, out, "neither rx_rate_limiter nor tx_rate_limiter given");
	rc = ops->set_rate_limit(ops->opaque, index, jrx ? &rx : NULL, jtx ? &tx : NULL, why, sizeof(why));
	if (rc)
		return answer_error(rc, out, "%s", why);
	*out = NULL;
	return 204;
}

/* Device `index`'s object of vm.counters (its queues, workers, link). */
static int ep_net_counters(const struct api_ops *ops, unsigned index, char **out)
{
	if (!ops->net_count || index >= ops->net_count(ops->opaque))
		return answer_error(404, out, "no network device %u", index);
	json_t *all = ops->counters ? ops->counters(ops->opaque) : NULL;
	json_t *dev = json_array_get(json_object_get(all, "net"), index);
	json_incref(dev);
	json_decref(all);
	if (!dev)
		return answer_error(500, out, "cannot read the counters of device %u", index);
	return answer_json(dev, 200, out);
}

static int ep_link(const struct api_ops *ops, bool put, unsigned index, const char *body, size_t blen, char **out)
{
	if (!ops->net_count || index >= ops->net_count(ops->opaque))
		return answer_error(404, out, "no network device %u", index);
	if (!put) {
		json_t *all = ops->counters ? ops->counters(ops->opaque) : NULL;
		json_t *dev = json_array_get(json_object_get(all, "net"), index);
		json_t *up = json_object_get(dev, "link_up"), *set_down = json_object_get(dev, "link_set_down");
		int rc = json_is_boolean(up) && json_is_boolean(set_down) ?
				 answer_json(json_pack("{s:b, s:b}", "up", json_is_true(up), "set_down",
						       json_is_true(set_down)), 200, out) :
				 answer_error(500, out, "cannot read the link of device %u", index);
		json_decref(all);
		return rc;
	}
	json_error_t e;
	json_t *j = json_loadb(body ? body : "", blen, JSON_REJECT_DUPLICATES, &e);
	if (!j)
		return answer_error(400, out, "the body is not JSON: %s", e.text);
	int up = 0;
	int bad = json_unpack_ex(j, &e, JSON_STRICT, "{s:b}", "up", &up);
	json_decref(j);
	if (bad < 0)
		return answer_error(400, out, "%s (the body is {\"up\": true} or {\"up\": false})", e.text);
	if (!ops->set_link)
		return answer_error(501, out, "setting the link is not available here");
	char why[200] = "";
	int rc = ops->set_link(ops->opaque, index, up, why, sizeof(why));
	if (rc)
		return answer_error(rc, out, "%s", why);
	*out = NULL;
	return 204;
}

typedef int (*action_fn)(void *opaque, char *why, size_t len);

static int ep_action(const struct api_ops *ops, action_fn fn, const char *name, char **out)
{
	char why[200] = "";
	if (!fn)
		return answer_error(501, out, "%s is not available here", name);
	int rc = fn(ops->opaque, why, sizeof(why));
	if (rc)
		return answer_error(rc, out, "%s", why);
	*out = NULL;
	return 204;
}

int api_handle(const struct api_ops *ops, const char *method, const char *url, const char *body, size_t len,
	       char **out)
{
	*out = NULL;
	bool get = strcmp(method, "GET") == 0, put = strcmp(method, "PUT") == 0;
	if (strncmp(url, API_PREFIX, strlen(API_PREFIX)) != 0)
		return answer_error(404, out, "no such endpoint: the API is under " API_PREFIX);
	const char *ep = url + strlen(API_PREFIX);
	static const struct {
		const char *name;
		bool put;
	} table[] = {
		{ "vmm.ping", false }, { "vm.info", false }, { "vm.counters", false }, { "vm.pause", true },
		{ "vm.resume", true }, { "vm.shutdown", true }, { "vm.reboot", true },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(ep, table[i].name) != 0)
			continue;
		if (table[i].put ? !put : !get)
			return answer_error(405, out, "%s takes %s, not %s", table[i].name, table[i].put ? "PUT" : "GET",
					    method);
		switch (i) {
		case 0:
			return answer_json(json_pack("{s:s, s:s}", "build_version", minivmm_version(), "version",
						     minivmm_version()), 200, out);
		case 1:
			return answer_json(ops->info ? ops->info(ops->opaque) : json_object(), 200, out);
		case 2:
			return answer_json(ops->counters ? ops->counters(ops->opaque) : json_object(), 200, out);
		case 3:
			return ep_action(ops, ops->pause, "vm.pause", out);
		case 4:
			return ep_action(ops, ops->resume, "vm.resume", out);
		case 5:
			return ep_action(ops, ops->shutdown, "vm.shutdown", out);
		default:
			return ep_action(ops, ops->reboot, "vm.reboot", out);
		}
	}
	/* vm.net/<index>/{rate-limit,link,counters} */
	unsigned index = 0;
	const char *p = ep;
	if (strncmp(p, "vm.net/", 7) == 0 && p[7] >= '0' && p[7] <= '9') {
		p += 7;
		while (*p >= '0' && *p <= '9' && index < 1000)
			index = index * 10 + (unsigned)(*p++ - '0');
		if (strcmp(p, "/rate-limit") == 0) {
			if (!get && !put)
				return answer_error(405, out, "rate-limit takes GET or PUT, not %s", method);
			return ep_rate_limit(ops, put, index, body, len, out);
		}
		if (strcmp(p, "/link") == 0) {
			if (!get && !put)
				return answer_error(405, out, "link takes GET or PUT, not %s", method);
			return ep_link(ops, put, index, body, len, out);
		}
		if (strcmp(p, "/counters") == 0) {
			if (!get)
				return answer_error(405, out, "counters takes GET, not %s", method);
			return ep_net_counters(ops, index, out);
		}
	}
	return answer_error(404, out, "no such endpoint: %s", url);
}

/* ---- HTTP ------------------------------------------------------------------ */

struct api_server {
	struct MHD_Daemon *d;
	int listen_fd, stop_fd, dir_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *base;   /* the file's name in dir_fd */
	pthread_t thread;
	bool running;
	struct api_ops ops;
	const struct confine *confine;
};

struct api_request {
	char body[API_BODY_MAX];
	size_t len;
	bool too_large;
};

static enum MHD_Result respond(struct MHD_Connection *c, int status, char *json)
{
	size_t len = json ? strlen(json) : 0;
	struct MHD_Response *r = MHD_create_response_from_buffer(len, json ? json : (void *)"", MHD_RESPMEM_MUST_COPY);
	free(json);
	if (!r)
		return MHD_NO;
	if (len)
		MHD_add_response_header(r, "Content-Type", "application/json");
	enum MHD_Result rc = MHD_queue_response(c, (unsigned)status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
				  const char *version, const char *data, size_t *data_size, void **req)
{
	struct api_server *s = cls;
	(void)version;
	if (!*req) {
		struct api_request *r = calloc(1, sizeof(*r));
		if (!r)
			return MHD_NO;
		*req = r;
		return MHD_YES;
	}
	struct api_request *r = *req;
	if (*data_size) {
		if (r->len + *data_size > sizeof(r->body) - 1)
			r->too_large = true;
		else {
			memcpy(r->body + r->len, data, *data_size);
			r->len += *data_size;
		}
		*data_size = 0;
		return MHD_YES;
	}
	char *json = NULL;
	int status = r->too_large ? answer_error(413, &json, "a request body is at most %d bytes", API_BODY_MAX)
				  : api_handle(&s->ops, method, url, r->body, r->len, &json);
	return respond(c, status, json);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **req, enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	free(*req);
	*req = NULL;
}

static void *api_main(void *arg)
{
	struct api_server *s = arg;
	pthread_setname_np(pthread_self(), "api");
	struct vmm_err err = { 0 };
	if (confine_enter(s->confine, CONFINE_API, &err) < 0) {
		fprintf(stderr, "minivmm: API socket: %s: not served\n", err.msg);
		return NULL;   /* stop_daemon is left to api_server_stop, unconfined or not */
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
	int mhd_fd = info ? info->epoll_fd : -1;
	for (;;) {
		MHD_UNSIGNED_LONG_LONG to = 0;
		int timeout = MHD_get_timeout(s->d, &to) == MHD_YES ? (to > 1000 ? 1000 : (int)to) : 1000;
		struct pollfd p[3] = { { .fd = s->stop_fd, .events = POLLIN }, { .fd = s->listen_fd, .events = POLLIN },
				       { .fd = mhd_fd, .events = POLLIN } };
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents & POLLIN) {
			struct sockaddr_un sa;
			socklen_t len = sizeof(sa);
			int fd = accept4(s->listen_fd, (struct sockaddr *)&sa, &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
			if (fd >= 0)
				MHD_add_connection(s->d, fd, (struct sockaddr *)&sa, len);   /* closes it on failure */
		}
		MHD_run(s->d);
	}
	/* Here, under this thread's list (shutdown, close of its clients),
	 * not on the thread that stops it. */
	MHD_stop_daemon(s->d);
	s->d = NULL;
	return NULL;
}

int api_server_open(struct api_server **out, const char *path, gid_t gid, const struct api_ops *ops,
		    struct vmm_err *err)
{
	*out = NULL;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (!*path || path[strlen(path) - 1] == '/')
		return vmm_err_set(err, EINVAL, "--api-socket: '%s' names no file", path);
	if (strlen(path) >= sizeof(sa.sun_path))
		return vmm_err_set(err, ENAMETOOLONG, "--api-socket: '%s' is longer than a Unix socket path may be (%zu)",
				   path, sizeof(sa.sun_path) - 1);
	struct api_server *s = calloc(1, sizeof(*s));
	if (!s)
		return vmm_err_set(err, ENOMEM, "out of memory for the API socket");
	s->ops = *ops;
	s->stop_fd = s->dir_fd = -1;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	char *slash = strrchr(s->path, '/');
	s->base = slash ? slash + 1 : s->path;
	int rc = 0;
	if (slash) {
		*slash = '\0';
		s->dir_fd = open(slash == s->path ? "/" : s->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		*slash = '/';
	} else {
		s->dir_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (s->dir_fd < 0) {
		rc = vmm_err_sys(err, errno, "--api-socket %s: its directory", path);
		free(s);
		return rc;
	}
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->listen_fd < 0) {
		rc = vmm_err_sys(err, errno, "--api-socket: socket");
		goto fail;
	}
	/* Bound, made private, and only then listening: no one connects in
	 * between, when the file still has the umask's mode. */
	if (bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		rc = vmm_err_sys(err, errno, errno == EADDRINUSE ? "--api-socket %s: it exists (remove a stale one)"
								 : "--api-socket %s",
				 path);
		close(s->listen_fd);
		s->listen_fd = -1;
		goto fail;
	}
	if (fchmodat(s->dir_fd, s->base, gid == (gid_t)-1 ? 0600 : 0660, 0) < 0 ||
	    (gid != (gid_t)-1 && fchownat(s->dir_fd, s->base, (uid_t)-1, gid, 0) < 0)) {
		rc = vmm_err_sys(err, errno, "--api-socket %s: cannot set its mode or group", path);
		goto fail_unlink;
	}
	if (listen(s->listen_fd, 16) < 0) {
		rc = vmm_err_sys(err, errno, "--api-socket %s: listen", path);
		goto fail_unlink;
	}
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	s->d = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET | MHD_USE_EPOLL | MHD_USE_SUPPRESS_DATE_NO_CLOCK, 0, NULL,
				NULL, on_request, s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)API_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)API_TIMEOUT_S, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)API_CONN_MEMORY, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
	if (s->stop_fd < 0 || !s->d) {
		rc = vmm_err_set(err, ENOMEM, "--api-socket %s: cannot start the HTTP server", path);
		goto fail_unlink;
	}
	*out = s;
	return 0;
fail_unlink:
	unlinkat(s->dir_fd, s->base, 0);
fail:
	if (s->d)
		MHD_stop_daemon(s->d);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	close(s->dir_fd);
	free(s);
	return rc;
}

int api_server_dir_fd(const struct api_server *s)
{
	return s ? s->dir_fd : -1;
}

int api_server_run(struct api_server *s, const struct confine *c, struct vmm_err *err)
{
	s->confine = c;
	int rc = pthread_create(&s->thread, NULL, api_main, s);
	if (rc)
		return vmm_err_sys(err, rc, "cannot start the API thread");
	s->running = true;
	return 0;
}

void api_server_stop(struct api_server *s)
{
	if (!s)
		return;
	if (s->running) {
		uint64_t one = 1;
		if (write(s->stop_fd, &one, sizeof(one)) < 0) {
			/* only on overflow */
		}
		pthread_join(s->thread, NULL);
	}
	if (s->d)
		MHD_stop_daemon(s->d);   /* never served: no client to shut down */
	close(s->listen_fd);
	close(s->stop_fd);
	unlinkat(s->dir_fd, s->base, 0);
	close(s->dir_fd);
	free(s);
}
