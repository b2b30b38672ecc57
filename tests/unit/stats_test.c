/* SPDX-License-Identifier: Apache-2.0 */
/* The statistics' forms (vmm/stats.c) from hand-made snapshots: the JSON
 * line parses back (jansson's own parser) with every name intact, has the
 * keys docs/stats.md promises, and a file gets one line per write. */
#include <criterion/criterion.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/stats.h"

/* One device with two queue pairs and one worker, named as given. */
static struct stats_snapshot *snapshot(const char *ifname)
{
	struct stats_snapshot *s = calloc(1, sizeof(*s));
	cr_assert_not_null(s);
	s->unix_ms = 1796386272345ull;
	s->uptime_ms = 12345;
	s->version = "abc1234-dirty";
	s->api_version = "2.1";
	s->state = "running";
	s->vcpus = 2;
	s->mem_bytes = 256ull << 20;
	s->pid = 4242;
	s->process_cpu_ns = 1500000000ull;
	s->nr_nets = 1;
	struct stats_net *n = &s->net[0];
	snprintf(n->d.name, sizeof(n->d.name), "net0");
	snprintf(n->d.backend, sizeof(n->d.backend), "tap");
	snprintf(n->d.ifname, sizeof(n->d.ifname), "%s", ifname);
	snprintf(n->d.engine, sizeof(n->d.engine), "uring");
	n->d.queue_pairs = 2;
	n->d.active_pairs = 2;
	n->d.link_up = 1;
	n->d.nr_workers = 1;
	n->d.nr_queues = 2;
	n->d.nr_worker_entries = 1;
	n->d.ctrl_commands = 3;
	for (unsigned i = 0; i < 2; i++) {
		n->q[i].queue = i;
		n->q[i].active = 1;
		snprintf(n->q[i].worker, sizeof(n->q[i].worker), "net0-w0");
		n->q[i].rx_frames = 1000 + i;
		n->q[i].tx_frames = 2000 + i;
		n->q[i].rx_no_buffer = 7;
	}
	snprintf(n->w[0].name, sizeof(n->w[0].name), "net0-w0");
	n->w[0].cpu = -1;
	n->w[0].queues = 2;
	n->w[0].cpu_ns = 99;
	snprintf(n->w[0].io_uring, sizeof(n->w[0].io_uring), "taskrun=defer \"quoted\"");
	return s;
}

static json_t *parse_line(const char *line)
{
	size_t len = strlen(line);
	cr_assert_gt(len, 1);
	cr_assert_eq(line[len - 1], '\n', "the line ends in a newline");
	cr_assert_null(memchr(line, '\n', len - 1), "and has no other: one line");
	json_error_t e;
	json_t *j = json_loads(line, 0, &e);
	cr_assert_not_null(j, "does not parse: %s (column %d): %s", e.text, e.column, line);
	return j;
}

static const char *str_at(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	cr_assert(json_is_string(v), "\"%s\" is a string", key);
	return json_string_value(v);
}

Test(stats, json_of_an_interface_named_with_quote_and_backslash_parses_back)
{
	struct stats_snapshot *s = snapshot("u\"x\\y");
	char *line = stats_json_line(s);
	cr_assert_not_null(line);
	json_t *j = parse_line(line);
	json_t *net = json_array_get(json_object_get(j, "net"), 0);
	cr_assert_str_eq(str_at(net, "ifname"), "u\"x\\y");
	json_t *w = json_array_get(json_object_get(net, "workers"), 0);
	cr_assert_str_eq(str_at(w, "io_uring"), "taskrun=defer \"quoted\"");
	json_decref(j);
	free(line);
	free(s);
}

Test(stats, a_name_that_is_not_utf8_gets_replacement_characters)
{
	/* An interface may be named with any bytes; JSON text is Unicode. */
	struct stats_snapshot *s = snapshot("a\xff" "b\xc3");
	char *line = stats_json_line(s);
	cr_assert_not_null(line, "a name that is not UTF-8 still makes a line");
	json_t *j = parse_line(line);
	json_t *net = json_array_get(json_object_get(j, "net"), 0);
	cr_assert_str_eq(str_at(net, "ifname"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	json_decref(j);
	free(line);

	/* Valid multi-byte UTF-8 stays as it is. */
	snprintf(s->net[0].d.ifname, sizeof(s->net[0].d.ifname), "t\xc3\xa9st");
	line = stats_json_line(s);
	j = parse_line(line);
	net = json_array_get(json_object_get(j, "net"), 0);
	cr_assert_str_eq(str_at(net, "ifname"), "t\xc3\xa9st");
	json_decref(j);
	free(line);
	free(s);
}

Test(stats, the_line_has_the_documented_keys)
{
	struct stats_snapshot *s = snapshot("t0");
	char *line = stats_json_line(s);
	cr_assert_not_null(line);
	/* Readers (bench/vm.py, tests/soak/account.py, tests/linux/run.sh)
	 * pick the line out by this prefix. */
	cr_assert(strncmp(line, "{\"net\":[", 8) == 0, "starts with {\"net\":[: %.40s", line);
	json_t *j = parse_line(line);
	static const char *const top[] = { "net", "timestamp", "unix_ms", "uptime_ms", "version",
					   "api_version", "vm", "process" };
	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++)
		cr_assert_not_null(json_object_get(j, top[i]), "key \"%s\"", top[i]);
	cr_assert_eq(json_object_size(j), sizeof(top) / sizeof(top[0]), "and no others");
	cr_assert_str_eq(str_at(j, "timestamp"), "2026-12-04T12:11:12.345Z");
	cr_assert_eq(json_integer_value(json_object_get(j, "unix_ms")), 1796386272345ll);
	cr_assert_eq(json_integer_value(json_object_get(j, "uptime_ms")), 12345);
	cr_assert_str_eq(str_at(j, "version"), "abc1234-dirty");
	cr_assert_str_eq(str_at(j, "api_version"), "2.1");

	json_t *vm = json_object_get(j, "vm");
	cr_assert_str_eq(str_at(vm, "state"), "running");
	cr_assert_eq(json_integer_value(json_object_get(vm, "vcpus")), 2);
	cr_assert_eq(json_integer_value(json_object_get(vm, "mem_bytes")), 256ll << 20);
	cr_assert(json_is_null(json_object_get(vm, "exit_status")), "no exit status while it runs");
	cr_assert(json_is_null(json_object_get(vm, "stop_reason")), "no stop reason while it runs");
	json_t *proc = json_object_get(j, "process");
	cr_assert_eq(json_integer_value(json_object_get(proc, "pid")), 4242);
	cr_assert_eq(json_integer_value(json_object_get(proc, "cpu_ns")), 1500000000ll);

	/* The device's keys as they were before jansson (consumers read them). */
	json_t *net = json_array_get(json_object_get(j, "net"), 0);
	static const char *const dev[] = { "name", "backend", "ifname", "engine", "queue_pairs",
					   "active_pairs", "link_up", "queues", "workers",
					   "ctrl_commands", "ctrl_errors" };
	for (size_t i = 0; i < sizeof(dev) / sizeof(dev[0]); i++)
		cr_assert_not_null(json_object_get(net, dev[i]), "device key \"%s\"", dev[i]);
	cr_assert(json_is_true(json_object_get(net, "link_up")));
	json_t *queues = json_object_get(net, "queues");
	cr_assert_eq(json_array_size(queues), 2);
	static const char *const qk[] = { "queue", "active", "worker", "rx_frames", "rx_bytes",
					  "tx_frames", "tx_bytes", "rx_kicks", "tx_kicks", "irqs",
					  "rx_no_buffer", "rx_dropped", "rx_filtered", "backend_drops",
					  "rx_errors", "tx_errors", "tx_dropped", "rx_gso_cut",
					  "rx_bounced", "tx_bounced" };
	json_t *q1 = json_array_get(queues, 1);
	for (size_t i = 0; i < sizeof(qk) / sizeof(qk[0]); i++)
		cr_assert_not_null(json_object_get(q1, qk[i]), "queue key \"%s\"", qk[i]);
	cr_assert_eq(json_integer_value(json_object_get(q1, "queue")), 1);
	cr_assert_eq(json_integer_value(json_object_get(q1, "rx_frames")), 1001);
	cr_assert_eq(json_integer_value(json_object_get(q1, "tx_frames")), 2001);
	cr_assert_eq(json_integer_value(json_object_get(q1, "rx_no_buffer")), 7);
	json_t *w = json_array_get(json_object_get(net, "workers"), 0);
	static const char *const wk[] = { "name", "cpu", "queues", "cpu_ns", "voluntary_switches",
					  "involuntary_switches", "io_uring" };
	for (size_t i = 0; i < sizeof(wk) / sizeof(wk[0]); i++)
		cr_assert_not_null(json_object_get(w, wk[i]), "worker key \"%s\"", wk[i]);
	cr_assert_eq(json_integer_value(json_object_get(w, "cpu")), -1);
	json_decref(j);
	free(line);
	free(s);
}

Test(stats, a_stopped_vm_has_its_exit_status_and_its_reason_on_one_line)
{
	struct stats_snapshot *s = snapshot("t0");
	s->state = "stopped";
	s->exited = true;
	s->exit_status = 4;
	/* A crash report spans lines and may quote anything. */
	s->stop_reason = "guest triple fault\nRIP=0x1000 \"x\"\\ \x01";
	char *line = stats_json_line(s);
	cr_assert_not_null(line);
	json_t *j = parse_line(line);
	json_t *vm = json_object_get(j, "vm");
	cr_assert_str_eq(str_at(vm, "state"), "stopped");
	cr_assert_eq(json_integer_value(json_object_get(vm, "exit_status")), 4);
	cr_assert_str_eq(str_at(vm, "stop_reason"), "guest triple fault\nRIP=0x1000 \"x\"\\ \x01");
	json_decref(j);
	free(line);
	free(s);
}

Test(stats, no_device_still_makes_a_line_and_a_table)
{
	struct stats_snapshot *s = snapshot("t0");
	s->nr_nets = 0;
	char *line = stats_json_line(s);
	cr_assert(strncmp(line, "{\"net\":[],", 10) == 0, "%s", line);
	json_decref(parse_line(line));
	free(line);
	size_t len;
	char *table = stats_table(s, &len);
	cr_assert_not_null(table);
	cr_assert_eq(strlen(table), len);
	cr_assert(strncmp(table, "vm: running, up 12.345 s, 2 vCPUs, 256 MiB", 42) == 0, "%s", table);
	free(table);
	free(s);
}

Test(stats, the_table_has_the_vm_line_then_each_device)
{
	struct stats_snapshot *s = snapshot("t0");
	size_t len;
	char *table = stats_table(s, &len);
	cr_assert_not_null(table);
	cr_assert(strstr(table, "vm: running, up 12.345 s, 2 vCPUs, 256 MiB, process CPU 1.500 s, "
			 "minivmm abc1234-dirty\n") == table, "%s", table);
	cr_assert_not_null(strstr(table, "\nnet0: tap t0, 2/2 queue pairs active, 1 worker thread (io_uring)\n"),
			   "%s", table);
	cr_assert_not_null(strstr(table, "\nq0 "), "%s", table);
	cr_assert_not_null(strstr(table, "\nq1 "), "%s", table);
	free(table);
	free(s);
}

/* A file opened as minivmm opens --stats-file: each call appends exactly
 * one line, and each line parses. */
Test(stats, a_file_gets_one_line_per_write)
{
	char path[] = "/tmp/minivmm-stats-test-XXXXXX";
	int tmp = mkstemp(path);
	cr_assert_geq(tmp, 0);
	close(tmp);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	struct stats_snapshot *s = snapshot("t0");
	struct vmm_err err = { 0 };
	for (unsigned i = 0; i < 3; i++) {
		s->uptime_ms = 1000 * i;
		cr_assert_eq(stats_write(fd, s, true, &err), 0, "%s", err.msg);
	}
	close(fd);

	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;
	while (getline(&line, &cap, f) > 0) {
		json_t *j = parse_line(line);
		cr_assert_eq(json_integer_value(json_object_get(j, "uptime_ms")), 1000 * n,
			     "line %u is the write %u", n, n);
		json_decref(j);
		n++;
	}
	free(line);
	fclose(f);
	unlink(path);
	cr_assert_eq(n, 3, "three writes, three lines (got %u)", n);
	free(s);
}

Test(stats, a_failed_write_is_an_error_with_a_message)
{
	struct stats_snapshot *s = snapshot("t0");
	struct vmm_err err = { 0 };
	cr_assert_eq(stats_write(-1, s, true, &err), -EBADF);
	cr_assert_not_null(strstr(err.msg, "cannot write the statistics"), "%s", err.msg);
	/* A pipe whose reader left: EPIPE (minivmm ignores SIGPIPE, and so
	 * does this test's process, which criterion forked for it). */
	signal(SIGPIPE, SIG_IGN);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	close(p[0]);
	cr_assert_eq(stats_write(p[1], s, false, &err), -EPIPE);
	close(p[1]);
	free(s);
}

Test(stats, rfc3339_is_utc_with_milliseconds)
{
	char buf[32];
	stats_rfc3339(0, buf, sizeof(buf));
	cr_assert_str_eq(buf, "1970-01-01T00:00:00.000Z");
	stats_rfc3339(951782400123ull, buf, sizeof(buf));
	cr_assert_str_eq(buf, "2000-02-29T00:00:00.123Z");
	stats_rfc3339(4102444799999ull, buf, sizeof(buf));
	cr_assert_str_eq(buf, "2099-12-31T23:59:59.999Z");
	stats_rfc3339(UINT64_MAX, buf, sizeof(buf));
	cr_assert_str_eq(buf, "9999-12-31T23:59:59.999Z", "four-digit years: the clock stops there");
}
