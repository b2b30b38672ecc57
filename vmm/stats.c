/* SPDX-License-Identifier: Apache-2.0 */
/* Statistics of the embedding API: minivmm_net_stats() copies a device's
 * counters into the caller's structs at the caller's sizes; a snapshot of
 * the VM (vmm/stats.h) is built on it, and the --stats table and the JSON
 * line (through jansson; docs/stats.md) are made from a snapshot. */
#include "vmm/stats.h"
#include "vmm/api_args.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmm/version.h"
#include "vmm/vm.h"

/* The first version's sizes: a caller compiled against an older header
 * can still be served, a smaller struct cannot. */
#define STATS_V1_NET_SIZE (offsetof(struct minivmm_net_stats, ctrl_errors) + sizeof(uint64_t))
#define STATS_V1_QUEUE_SIZE (offsetof(struct minivmm_queue_stats, rx_gso_cut) + sizeof(uint64_t))
#define STATS_V1_WORKER_SIZE sizeof(struct minivmm_worker_stats)

unsigned minivmm_net_count(const struct minivmm *vm)
{
	return vm ? vm->nr_nets : 0;
}

/* Copy `have` bytes of the library's struct into a caller's struct of
 * `want` bytes: the prefix both know, zeroes for what only the caller knows. */
static void copy_sized(void *dst, size_t want, const void *src, size_t have)
{
	size_t n = want < have ? want : have;
	memcpy(dst, src, n);
	if (want > n)
		memset((char *)dst + n, 0, want - n);
}

int minivmm_net_stats(struct minivmm *vm, unsigned index, struct minivmm_net_stats *s)
{
	if (!vm || !s || index >= vm->nr_nets || s->size < STATS_V1_NET_SIZE ||
	    (s->queues && s->queue_size < STATS_V1_QUEUE_SIZE) ||
	    (s->workers && s->worker_size < STATS_V1_WORKER_SIZE))
		return -EINVAL;
	struct minivmm_net_stats d = { 0 };
	struct minivmm_queue_stats q[VNET_MAX_PAIRS];
	struct minivmm_worker_stats w[VNET_MAX_PAIRS];
	virtio_net_stats(vm->net[index], &d, q, w);

	/* The caller's fields that say where things go stay as they are. */
	d.size = s->size;
	d.queue_size = s->queue_size;
	d.worker_size = s->worker_size;
	d.version = MINIVMM_STATS_VERSION;
	d.queues = s->queues;
	d.max_queues = s->queues ? s->max_queues : 0;
	d.workers = s->workers;
	d.max_workers = s->workers ? s->max_workers : 0;
	if (d.nr_queues > d.max_queues)
		d.nr_queues = d.max_queues;
	if (d.nr_worker_entries > d.max_workers)
		d.nr_worker_entries = d.max_workers;
	for (unsigned i = 0; i < d.nr_queues; i++)
		copy_sized((char *)s->queues + (size_t)i * s->queue_size, s->queue_size, &q[i], sizeof(q[i]));
	for (unsigned i = 0; i < d.nr_worker_entries; i++)
		copy_sized((char *)s->workers + (size_t)i * s->worker_size, s->worker_size, &w[i],
			   sizeof(w[i]));
	copy_sized(s, s->size, &d, sizeof(d));
	return 0;
}

/* ---- the snapshot ------------------------------------------------------- */

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;
	if (clock_gettime(clk, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void stats_take(struct minivmm *vm, struct stats_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->unix_ms = clock_ns(CLOCK_REALTIME) / 1000000u;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	s->uptime_ms = now > vm->cfg.start_ns ? (now - vm->cfg.start_ns) / 1000000u : 0;
	s->version = version_build();
	s->api_version = version_api();

	/* Acquire: a finished run's exit status, a stop request's reason. */
	int run = __atomic_load_n(&vm->run_state, __ATOMIC_ACQUIRE);
	const char *reason = minivmm_stop_reason(vm);
	s->stop_reason = *reason ? reason : NULL;
	if (run == VM_FINISHED) {
		s->state = "stopped";
		s->exited = true;
		s->exit_status = vm->exit_status;
	} else if (run == VM_RUNNING) {
		s->state = vm_is_stopping(vm) ? "stopping" : minivmm_is_paused(vm) ? "paused" : "running";
	} else {
		s->state = "created";
	}
	s->vcpus = vm->ncpus;
	s->mem_bytes = vm->cfg.mem_size;
	s->pid = (int)getpid();
	s->process_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

	for (unsigned i = 0; i < vm->nr_nets && s->nr_nets < MINIVMM_MAX_NETS; i++) {
		struct stats_net *n = &s->net[s->nr_nets];
		minivmm_net_stats_init(&n->d, n->q, MINIVMM_MAX_QUEUE_PAIRS, n->w, MINIVMM_MAX_QUEUE_PAIRS);
		if (minivmm_net_stats(vm, i, &n->d) == 0)
			s->nr_nets++;
	}
}

/* ---- RFC 3339 ----------------------------------------------------------- */

/* Civil date of a day count since 1970-01-01 (Howard Hinnant's
 * civil_from_days): no time zone files, no locale, the same under any
 * thread's seccomp list. */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

void stats_rfc3339(uint64_t unix_ms, char *buf, size_t size)
{
	/* RFC 3339 has four-digit years: the clock stops at 9999's end. */
	if (unix_ms > 253402300799999ull)
		unix_ms = 253402300799999ull;
	uint64_t secs = unix_ms / 1000u;
	int64_t days = (int64_t)(secs / 86400u);
	unsigned rem = (unsigned)(secs % 86400u);
	int64_t y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	snprintf(buf, size, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", (unsigned)y, m, d, rem / 3600,
		 rem / 60 % 60, rem % 60, (unsigned)(unix_ms % 1000u));
}

/* ---- the JSON line --------------------------------------------------------- */

/* Bytes of the valid UTF-8 sequence at p (n bytes left), 0 if none starts
 * there: overlong forms, surrogates and code points above U+10FFFF are
 * not valid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* A JSON string of the text in s (at most max bytes, up to a NUL). JSON
 * strings are Unicode, and a name such as an interface's may be any
 * bytes: each byte that is not part of valid UTF-8 becomes U+FFFD. */
static json_t *json_text(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	json_t *j = json_stringn(s, n);
	if (j)
		return j;
	char *fixed = malloc(3 * n + 1);   /* U+FFFD is 3 bytes */
	if (!fixed)
		return NULL;
	size_t out = 0;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq((const unsigned char *)s + i, n - i);
		if (len) {
			memcpy(fixed + out, s + i, len);
			out += len;
			i += len;
		} else {
			memcpy(fixed + out, "\xef\xbf\xbd", 3);
			out += 3;
			i++;
		}
	}
	j = json_stringn(fixed, out);
	free(fixed);
	return j;
}

#define TEXT(field) json_text((field), sizeof(field))

/* Counters are unsigned 64-bit, JSON integers (jansson's) signed: a counter
 * cannot reach 2^63 in practice, but if it did it would stay at the top
 * rather than turn negative. */
static json_t *json_u64(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* Builds an object key by key; one failure (out of memory) fails it all. */
struct builder {
	json_t *obj;
	bool bad;
};

static void put(struct builder *b, const char *key, json_t *value)
{
	if (!b->obj || json_object_set_new(b->obj, key, value) < 0)
		b->bad = true;   /* set_new has freed value (a NULL one is refused) */
}

static json_t *done(struct builder *b)
{
	if (b->bad || !b->obj) {
		json_decref(b->obj);
		return NULL;
	}
	return b->obj;
}

static json_t *queue_json(const struct minivmm_queue_stats *q)
{
	struct builder b = { .obj = json_object() };
	put(&b, "queue", json_integer(q->queue));
	put(&b, "active", json_boolean(q->active));
	put(&b, "worker", TEXT(q->worker));
	put(&b, "rx_frames", json_u64(q->rx_frames));
	put(&b, "rx_bytes", json_u64(q->rx_bytes));
	put(&b, "tx_frames", json_u64(q->tx_frames));
	put(&b, "tx_bytes", json_u64(q->tx_bytes));
	put(&b, "rx_kicks", json_u64(q->rx_kicks));
	put(&b, "tx_kicks", json_u64(q->tx_kicks));
	put(&b, "irqs", json_u64(q->irqs));
	put(&b, "rx_no_buffer", json_u64(q->rx_no_buffer));
	put(&b, "rx_dropped", json_u64(q->rx_dropped));
	put(&b, "rx_filtered", json_u64(q->rx_filtered));
	put(&b, "backend_drops", json_u64(q->backend_drops));
	put(&b, "rx_errors", json_u64(q->rx_errors));
	put(&b, "tx_errors", json_u64(q->tx_errors));
	put(&b, "tx_dropped", json_u64(q->tx_dropped));
	put(&b, "rx_gso_cut", json_u64(q->rx_gso_cut));
	put(&b, "rx_bounced", json_u64(q->rx_bounced));
	put(&b, "tx_bounced", json_u64(q->tx_bounced));
	return done(&b);
}

static json_t *worker_json(const struct minivmm_worker_stats *w)
{
	struct builder b = { .obj = json_object() };
	put(&b, "name", TEXT(w->name));
	put(&b, "cpu", json_integer(w->cpu));
	put(&b, "queues", json_integer(w->queues));
	put(&b, "cpu_ns", json_u64(w->cpu_ns));
	put(&b, "voluntary_switches", json_u64(w->voluntary_switches));
	put(&b, "involuntary_switches", json_u64(w->involuntary_switches));
	put(&b, "io_uring", TEXT(w->io_uring));
	return done(&b);
}

/* Appends each item to an array; a NULL item (out of memory) fails it. */
static void append(json_t *array, json_t *item, bool *bad)
{
	if (!array || json_array_append_new(array, item) < 0)
		*bad = true;
}

static json_t *net_json(const struct stats_net *n)
{
	const struct minivmm_net_stats *d = &n->d;
	bool bad = false;
	json_t *queues = json_array(), *workers = json_array();
	for (unsigned p = 0; p < d->nr_queues && p < MINIVMM_MAX_QUEUE_PAIRS; p++)
		append(queues, queue_json(&n->q[p]), &bad);
	for (unsigned i = 0; i < d->nr_worker_entries && i < MINIVMM_MAX_QUEUE_PAIRS; i++)
		append(workers, worker_json(&n->w[i]), &bad);

	struct builder b = { .obj = json_object(), .bad = bad };
	put(&b, "name", TEXT(d->name));
	put(&b, "backend", TEXT(d->backend));
	put(&b, "ifname", TEXT(d->ifname));
	put(&b, "engine", TEXT(d->engine));
	put(&b, "queue_pairs", json_integer(d->queue_pairs));
	put(&b, "active_pairs", json_integer(d->active_pairs));
	put(&b, "link_up", json_boolean(d->link_up));
	put(&b, "link_set_down", json_boolean(d->link_set_down));
	put(&b, "queues", queues);
	put(&b, "workers", workers);
	put(&b, "ctrl_commands", json_u64(d->ctrl_commands));
	put(&b, "ctrl_errors", json_u64(d->ctrl_errors));
	put(&b, "rx_throttled", json_u64(d->rx_throttled));
	put(&b, "rx_throttled_ns", json_u64(d->rx_throttled_ns));
	put(&b, "tx_throttled", json_u64(d->tx_throttled));
	put(&b, "tx_throttled_ns", json_u64(d->tx_throttled_ns));
	return done(&b);
}

static json_t *vm_json(const struct stats_snapshot *s)
{
	struct builder b = { .obj = json_object() };
	put(&b, "state", json_string(s->state ? s->state : "created"));
	put(&b, "vcpus", json_integer(s->vcpus));
	put(&b, "mem_bytes", json_u64(s->mem_bytes));
	put(&b, "exit_status", s->exited ? json_integer(s->exit_status) : json_null());
	put(&b, "stop_reason", s->stop_reason ? json_text(s->stop_reason, SIZE_MAX) : json_null());
	return done(&b);
}

static json_t *stats_json(const struct stats_snapshot *s)
{
	bool bad = false;
	json_t *nets = json_array();
	for (unsigned i = 0; i < s->nr_nets && i < MINIVMM_MAX_NETS; i++)
		append(nets, net_json(&s->net[i]), &bad);
	char when[32];
	stats_rfc3339(s->unix_ms, when, sizeof(when));

	struct builder p = { .obj = json_object() };
	put(&p, "pid", json_integer(s->pid));
	put(&p, "cpu_ns", json_u64(s->process_cpu_ns));

	/* "net" first: the line has started {"net": since before the other
	 * keys, and readers pick it out by that prefix. */
	struct builder b = { .obj = json_object(), .bad = bad };
	put(&b, "net", nets);
	put(&b, "timestamp", json_string(when));
	put(&b, "unix_ms", json_u64(s->unix_ms));
	put(&b, "uptime_ms", json_u64(s->uptime_ms));
	put(&b, "version", json_text(s->version ? s->version : "", SIZE_MAX));
	put(&b, "api_version", json_text(s->api_version ? s->api_version : "", SIZE_MAX));
	put(&b, "vm", vm_json(s));
	put(&b, "process", done(&p));
	return done(&b);
}

char *stats_json_line(const struct stats_snapshot *s)
{
	json_t *j = stats_json(s);
	if (!j)
		return NULL;
	/* Compact: one line. Keys in the order they were set (jansson >= 2.8). */
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!text)
		return NULL;
	size_t len = strlen(text);
	char *line = malloc(len + 2);
	if (line) {
		memcpy(line, text, len);
		line[len] = '\n';
		line[len + 1] = '\0';
	}
	free(text);
	return line;
}

/* ---- the table ------------------------------------------------------------ */

static void print_vm_line(const struct stats_snapshot *s, FILE *out)
{
	fprintf(out, "vm: %s", s->state ? s->state : "created");
	if (s->exited)
		fprintf(out, " (exit status %d)", s->exit_status);
	fprintf(out, ", up %.3f s, %u vCPU%s, %" PRIu64 " MiB, process CPU %.3f s, minivmm %s\n",
		(double)s->uptime_ms / 1e3, s->vcpus, s->vcpus == 1 ? "" : "s", s->mem_bytes >> 20,
		(double)s->process_cpu_ns / 1e9, s->version ? s->version : "");
}

static void print_net_table(const struct stats_net *n, FILE *out)
{
	const struct minivmm_net_stats *d = &n->d;
	fprintf(out, "%s: %s %s, %u/%u queue pairs active, %u worker thread%s (%s)\n", d->name,
		d->backend, d->ifname, d->active_pairs, d->queue_pairs, d->nr_workers,
		d->nr_workers == 1 ? "" : "s", strcmp(d->engine, "epoll") == 0 ? "epoll" : "io_uring");
	fprintf(out, "%-5s %10s %12s %10s %12s %8s %8s %8s %8s %7s %7s %-10s\n", "queue",
		"rx_frames", "rx_bytes", "tx_frames", "tx_bytes", "rx_kicks", "tx_kicks", "irqs",
		"rx_nobuf", "drops", "errors", "worker");
	for (unsigned p = 0; p < d->nr_queues && p < MINIVMM_MAX_QUEUE_PAIRS; p++) {
		const struct minivmm_queue_stats *q = &n->q[p];
		fprintf(out, "q%-4u %10" PRIu64 " %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %8" PRIu64
			" %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %7" PRIu64 " %7" PRIu64 " %-10s\n",
			q->queue, q->rx_frames, q->rx_bytes, q->tx_frames, q->tx_bytes, q->rx_kicks,
			q->tx_kicks, q->irqs, q->rx_no_buffer,
			q->rx_dropped + q->rx_filtered + q->backend_drops,
			q->rx_errors + q->tx_errors + q->tx_dropped, q->worker[0] ? q->worker : "-");
	}
	for (unsigned i = 0; i < d->nr_worker_entries && i < MINIVMM_MAX_QUEUE_PAIRS; i++) {
		const struct minivmm_worker_stats *w = &n->w[i];
		fprintf(out, "worker %-10s cpu %.3f s, %" PRIu64 " voluntary + %" PRIu64
			" involuntary context switches%s\n",
			w->name, (double)w->cpu_ns / 1e9, w->voluntary_switches, w->involuntary_switches,
			w->cpu >= 0 ? "" : " (not pinned)");
	}
}

char *stats_table(const struct stats_snapshot *s, size_t *len)
{
	char *text = NULL;
	*len = 0;
	FILE *mem = open_memstream(&text, len);
	if (!mem)
		return NULL;
	print_vm_line(s, mem);
	for (unsigned i = 0; i < s->nr_nets && i < MINIVMM_MAX_NETS; i++)
		print_net_table(&s->net[i], mem);
	if (fclose(mem) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- writing ----------------------------------------------------------------- */

static char *stats_format(const struct stats_snapshot *s, bool json, size_t *len)
{
	if (!json)
		return stats_table(s, len);
	char *line = stats_json_line(s);
	*len = line ? strlen(line) : 0;
	return line;
}

int stats_write(int fd, const struct stats_snapshot *s, bool json, struct vmm_err *err)
{
	size_t len;
	char *text = stats_format(s, json, &len);
	if (!text)
		return vmm_err_set(err, ENOMEM, "statistics: out of memory");
	/* One write: a file opened with O_APPEND gets the line whole, even
	 * when several threads write to it. The loop only covers a kernel
	 * that takes part of it (a full disk, a pipe). */
	int rc = 0;
	for (size_t done_bytes = 0; done_bytes < len;) {
		ssize_t n = write(fd, text + done_bytes, len - done_bytes);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = vmm_err_sys(err, n < 0 ? errno : EIO, "cannot write the statistics");
			break;
		}
		done_bytes += (size_t)n;
	}
	free(text);
	return rc;
}

/* Composed in memory, then written at once: stderr is unbuffered, so
 * written piecewise the JSON line would reach the file in dozens of
 * writes, and a harness reading it right after SIGUSR1 could take half a
 * line for the whole. */
void minivmm_print_stats(struct minivmm *vm, FILE *out, int json)
{
	if (!vm || !out)
		return;
	struct stats_snapshot *s = malloc(sizeof(*s));
	if (!s)
		return;
	stats_take(vm, s);
	size_t len;
	char *text = stats_format(s, json != 0, &len);
	if (text) {
		fwrite(text, 1, len, out);
		fflush(out);
		free(text);
	}
	free(s);
}

int minivmm_write_stats(struct minivmm *vm, int fd, int json, char *errbuf, size_t errlen)
{
	API_REQUIRE(vm);
	struct vmm_err err = { 0 };
	struct stats_snapshot *s = malloc(sizeof(*s));
	int rc;
	if (!s) {
		rc = vmm_err_set(&err, ENOMEM, "statistics: out of memory");
	} else {
		stats_take(vm, s);
		rc = stats_write(fd, s, json != 0, &err);
		free(s);
	}
	if (rc < 0)
		api_errbuf(errbuf, errlen, "%s", err.msg);
	return rc;
}
