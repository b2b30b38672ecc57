/* SPDX-License-Identifier: Apache-2.0 */
/* netpeer: command line, help and result printing. See usage_text below. */
#include "netpeer.h"
#include "udp_flows.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum np_cmd {
	CMD_ECHO_CHECK  = 1 << 0,
	CMD_COUNT       = 1 << 1,
	CMD_SEND        = 1 << 2,
	CMD_STOP        = 1 << 3,
	CMD_ECHO_SERVER = 1 << 4,
	CMD_ALL         = 0x1f,
};

static const struct {
	const char *name;
	enum np_cmd cmd;
	int (*run)(const struct np_opts *o);
	const char *syntax;
} commands[] = {
	{ "echo-check", CMD_ECHO_CHECK, np_echo_check,
	  "netpeer echo-check --dst IP --port P [--count N] [--sizes MIN-MAX] [--flows K]\n"
	  "                   [--window W] [--timeout-ms T] [--loss-ms L] [--wait-ms W]\n"
	  "                   [--gso K] [--allow-loss] [--stop] [--json]" },
	{ "count", CMD_COUNT, np_count,
	  "netpeer count --port P [--expect N] [--flows F] [--timeout-ms T] [--idle-ms I]\n"
	  "              [--ready-file PATH] [--json]" },
	{ "send", CMD_SEND, np_send,
	  "netpeer send --dst IP --port P --count N|--duration-ms D [--size FRAME|MIN-MAX]\n"
	  "             [--flows K] [--rate PPS] [--first-seq S] [--timeout-ms T] [--stop] [--json]" },
	{ "stop", CMD_STOP, np_stop,
	  "netpeer stop --dst IP --port P [--repeat R]" },
	{ "echo-server", CMD_ECHO_SERVER, np_echo_server,
	  "netpeer echo-server --port P [--timeout-ms T] [--ready-file PATH] [--drop-every N]\n"
	  "                    [--corrupt-every N] [--dup-every N] [--json]" },
};

static const char usage_text[] =
	"The host-side UDP peer of minivmm's network tests.\n"
	"\n"
	"Datagrams carry struct minivmm_net_seq_hdr (include/minivmm_abi.h) at payload\n"
	"offset 0 and a pattern derived from (flow, seq) after it. Frame sizes are\n"
	"Ethernet sizes, 60-1514: UDP payload = frame - 42. Flow k is the k-th source\n"
	"socket (its own source port). The stop datagram's payload is \"MINIVMM-STOP\".\n"
	"\n"
	"  echo-check   send N datagrams (frame sizes cycling MIN..MAX, at most W in flight)\n"
	"               to an echo peer and check every echo byte for byte.\n"
	"               Defaults: --count 1000 --sizes 60-1514 --flows 1 --window 32\n"
	"               --timeout-ms 30000 --loss-ms 1000 (an echo later than that is lost\n"
	"               for the window; it is still counted if it arrives before the end).\n"
	"               --wait-ms W first probes every 100 ms until the peer answers.\n"
	"               --gso K sends K datagrams per send with UDP_SEGMENT (GSO: one\n"
	"               64 KiB-class frame on a veth); needs --flows 1 and one --size.\n"
	"  count        receive on port P, check sequence numbers per flow; stops at --expect\n"
	"               distinct datagrams, after --idle-ms (default 2000) of silence once\n"
	"               something arrived, on a stop datagram, or at --timeout-ms (30000).\n"
	"  send         send N seq-numbered datagrams (N/K per flow), sendmmsg batches,\n"
	"               paced to --rate PPS when given. Default --size 60; gives up\n"
	"               after --timeout-ms (30000) if the socket stays full. --first-seq S\n"
	"               continues the sequence of an earlier send to the same receiver.\n"
	"               --duration-ms D sends for D ms (and at most --count if given),\n"
	"               the flows in turn, a batch each; the timeout then counts after D.\n"
	"  stop         send the stop datagram --repeat times (default 3), 50 ms apart,\n"
	"               each from its own source port (spread over a device's queues).\n"
	"  echo-server  echo every datagram to its sender until a stop datagram or\n"
	"               --timeout-ms (default 60000); --drop/corrupt/dup-every N spoil\n"
	"               every N-th datagram to test the checkers.\n"
	"\n"
	"Output: key=value lines ending with result=ok|fail (and reason=... on failure),\n"
	"or one JSON object with --json. --stop sends the stop datagram at the end.\n"
	"Exit status: 0 ok, 1 a check failed, 2 bad usage, 3 a socket call failed.\n";

static void usage(FILE *out)
{
	fputs("Usage:\n", out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %s\n", commands[i].syntax);
	fputs("  netpeer --help\n\n", out);
	fputs(usage_text, out);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("netpeer: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return NP_EXIT_USAGE;
}

/* ---- option values ------------------------------------------------------ */

static bool parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end || x < min || x > max)
		return false;
	*v = x;
	return true;
}

static bool parse_sizes(const char *s, unsigned *lo, unsigned *hi)
{
	char buf[32];
	const char *dash = strchr(s, '-');
	uint64_t a, b;

	if (!dash)
		return parse_u64(s, UDPF_FRAME_MIN, UDPF_FRAME_MAX, &a) && (*lo = *hi = (unsigned)a, true);
	if ((size_t)(dash - s) >= sizeof(buf))
		return false;
	memcpy(buf, s, (size_t)(dash - s));
	buf[dash - s] = '\0';
	if (!parse_u64(buf, UDPF_FRAME_MIN, UDPF_FRAME_MAX, &a) ||
	    !parse_u64(dash + 1, UDPF_FRAME_MIN, UDPF_FRAME_MAX, &b) || a > b)
		return false;
	*lo = (unsigned)a;
	*hi = (unsigned)b;
	return true;
}

enum opt_id {
	O_DST, O_PORT, O_COUNT, O_SIZES, O_FLOWS, O_WINDOW, O_TIMEOUT, O_LOSS, O_WAIT,
	O_IDLE, O_EXPECT, O_RATE, O_REPEAT, O_DROP, O_CORRUPT, O_DUP, O_STOP,
	O_ALLOW_LOSS, O_JSON, O_READY, O_FIRST_SEQ, O_GSO, O_DURATION,
};

static const struct {
	const char *name;
	enum opt_id id;
	unsigned cmds;
	bool has_value;
} options[] = {
	{ "--dst",           O_DST,        CMD_ECHO_CHECK | CMD_SEND | CMD_STOP, true },
	{ "--port",          O_PORT,       CMD_ALL, true },
	{ "--count",         O_COUNT,      CMD_ECHO_CHECK | CMD_SEND, true },
	{ "--sizes",         O_SIZES,      CMD_ECHO_CHECK | CMD_SEND, true },
	{ "--size",          O_SIZES,      CMD_ECHO_CHECK | CMD_SEND, true },
	{ "--flows",         O_FLOWS,      CMD_ECHO_CHECK | CMD_SEND | CMD_COUNT, true },
	{ "--window",        O_WINDOW,     CMD_ECHO_CHECK, true },
	{ "--gso",           O_GSO,        CMD_ECHO_CHECK, true },
	{ "--timeout-ms",    O_TIMEOUT,    CMD_ECHO_CHECK | CMD_COUNT | CMD_SEND | CMD_ECHO_SERVER, true },
	{ "--loss-ms",       O_LOSS,       CMD_ECHO_CHECK, true },
	{ "--wait-ms",       O_WAIT,       CMD_ECHO_CHECK, true },
	{ "--idle-ms",       O_IDLE,       CMD_COUNT, true },
	{ "--expect",        O_EXPECT,     CMD_COUNT, true },
	{ "--rate",          O_RATE,       CMD_SEND, true },
	{ "--first-seq",     O_FIRST_SEQ,  CMD_SEND, true },
	{ "--duration-ms",   O_DURATION,   CMD_SEND, true },
	{ "--repeat",        O_REPEAT,     CMD_STOP, true },
	{ "--drop-every",    O_DROP,       CMD_ECHO_SERVER, true },
	{ "--corrupt-every", O_CORRUPT,    CMD_ECHO_SERVER, true },
	{ "--dup-every",     O_DUP,        CMD_ECHO_SERVER, true },
	{ "--ready-file",    O_READY,      CMD_COUNT | CMD_ECHO_SERVER, true },
	{ "--stop",          O_STOP,       CMD_ECHO_CHECK | CMD_SEND, false },
	{ "--allow-loss",    O_ALLOW_LOSS, CMD_ECHO_CHECK, false },
	{ "--json",          O_JSON,       CMD_ALL & ~CMD_STOP, false },
};

#define DAY_MS (24ull * 3600 * 1000)

/* Stores one option value; returns false (with the message printed) if bad. */
static bool set_option(struct np_opts *o, enum opt_id id, const char *name, const char *val)
{
	uint64_t v = 0;
	bool ok = true;
	const char *what = "a number";

	switch (id) {
	case O_DST:
		ok = udpf_parse_ipv4(val, &o->dst) == 0;
		what = "an IPv4 address";
		break;
	case O_PORT:
		ok = parse_u64(val, 1, 65535, &v);
		o->port = (uint16_t)v;
		what = "a port (1-65535)";
		break;
	case O_SIZES:
		ok = parse_sizes(val, &o->size_min, &o->size_max);
		what = "a frame size or MIN-MAX range within 60-1514";
		break;
	case O_FLOWS:
		ok = parse_u64(val, 1, NP_MAX_FLOWS, &v);
		o->flows = (unsigned)v;
		what = "a flow count (1-256)";
		break;
	case O_WINDOW:
		ok = parse_u64(val, 1, 1u << 20, &v);
		o->window = (unsigned)v;
		what = "a window (1-1048576)";
		break;
	case O_GSO:
		ok = parse_u64(val, 1, NP_MAX_GSO, &v);
		o->gso = (unsigned)v;
		what = "a segment count (1-16)";
		break;
	case O_REPEAT:
		ok = parse_u64(val, 1, 1000, &v);
		o->repeat = (unsigned)v;
		what = "a repeat count (1-1000)";
		break;
	case O_COUNT:   ok = parse_u64(val, 1, 1ull << 32, &o->count); break;
	case O_EXPECT:  ok = parse_u64(val, 1, UINT64_MAX, &o->expect); break;
	case O_RATE:    ok = parse_u64(val, 1, 1ull << 32, &o->rate); break;
	case O_FIRST_SEQ: ok = parse_u64(val, 0, 1ull << 48, &o->first_seq); break;
	case O_TIMEOUT: ok = parse_u64(val, 1, DAY_MS, &o->timeout_ms); what = "a time in ms"; break;
	case O_LOSS:    ok = parse_u64(val, 1, DAY_MS, &o->loss_ms); what = "a time in ms"; break;
	case O_WAIT:    ok = parse_u64(val, 1, DAY_MS, &o->wait_ms); what = "a time in ms"; break;
	case O_IDLE:    ok = parse_u64(val, 1, DAY_MS, &o->idle_ms); what = "a time in ms"; break;
	case O_DURATION: ok = parse_u64(val, 1, DAY_MS, &o->duration_ms); what = "a time in ms"; break;
	case O_DROP:    ok = parse_u64(val, 1, UINT64_MAX, &o->drop_every); break;
	case O_CORRUPT: ok = parse_u64(val, 1, UINT64_MAX, &o->corrupt_every); break;
	case O_DUP:     ok = parse_u64(val, 1, UINT64_MAX, &o->dup_every); break;
	case O_READY:   o->ready_file = val; break;
	case O_STOP:       o->stop = true; break;
	case O_ALLOW_LOSS: o->allow_loss = true; break;
	case O_JSON:       o->json = true; break;
	}
	if (!ok)
		usage_error("%s: '%s' is not %s", name, val, what);
	return ok;
}

static void set_defaults(struct np_opts *o, enum np_cmd cmd)
{
	memset(o, 0, sizeof(*o));
	o->count = 1000;
	o->size_min = cmd == CMD_ECHO_CHECK ? UDPF_FRAME_MIN : 60;
	o->size_max = cmd == CMD_ECHO_CHECK ? UDPF_FRAME_MAX : 60;
	o->flows = cmd == CMD_COUNT ? 0 : 1;
	o->window = 32;
	o->timeout_ms = cmd == CMD_ECHO_SERVER ? 60000 : 30000;
	o->loss_ms = 1000;
	o->idle_ms = 2000;
	o->repeat = 3;
}

static int parse_args(int argc, char **argv, enum np_cmd cmd, const char *cmd_name,
		      struct np_opts *o)
{
	unsigned seen = 0;   /* bit per opt_id */

	set_defaults(o, cmd);
	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i];
		size_t k;

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			usage(stdout);
			exit(NP_EXIT_OK);
		}
		for (k = 0; k < sizeof(options) / sizeof(options[0]); k++)
			if (strcmp(arg, options[k].name) == 0)
				break;
		if (k == sizeof(options) / sizeof(options[0]))
			return usage_error(strncmp(arg, "-", 1) == 0 ? "%s: unknown option '%s'"
				: "%s: unexpected argument '%s'", cmd_name, arg);
		if (!(options[k].cmds & cmd))
			return usage_error("%s: option '%s' does not apply", cmd_name, arg);
		if (options[k].has_value && i + 1 >= argc)
			return usage_error("%s needs a value", arg);
		if (!set_option(o, options[k].id, arg, options[k].has_value ? argv[i + 1] : NULL))
			return NP_EXIT_USAGE;
		seen |= 1u << options[k].id;
		i += options[k].has_value;
	}
	if ((cmd & (CMD_ECHO_CHECK | CMD_SEND | CMD_STOP)) && !(seen & (1u << O_DST)))
		return usage_error("%s: --dst IP is required", cmd_name);
	if (!(seen & (1u << O_PORT)))
		return usage_error("%s: --port P is required", cmd_name);
	if (cmd == CMD_SEND && !(seen & (1u << O_COUNT)) && !(seen & (1u << O_DURATION)))
		return usage_error("%s: --count N or --duration-ms D is required", cmd_name);
	if (cmd == CMD_SEND && !(seen & (1u << O_COUNT)))
		o->count = UINT64_MAX / 2;   /* --duration-ms alone: no count limit */
	if (o->count < o->flows && (cmd & (CMD_ECHO_CHECK | CMD_SEND)))
		return usage_error("%s: --count %" PRIu64 " is less than --flows %u",
				   cmd_name, o->count, o->flows);
	if (o->gso > 1 && (o->flows != 1 || o->size_min != o->size_max))
		return usage_error("%s: --gso needs --flows 1 and one --size (UDP_SEGMENT cuts equal datagrams)",
				   cmd_name);
	if (o->gso > 1 && o->window < o->gso)
		return usage_error("%s: --window %u is smaller than --gso %u", cmd_name, o->window, o->gso);
	o->dst.sin_port = htons(o->port);
	return NP_EXIT_OK;
}

/* ---- results ------------------------------------------------------------ */

void report_begin(struct np_report *r, FILE *out, bool json)
{
	r->out = out;
	r->json = json;
	r->n = 0;
	if (json)
		fputc('{', out);
}

static void report_key(struct np_report *r, const char *key)
{
	if (r->json)
		fprintf(r->out, "%s\"%s\": ", r->n ? ", " : "", key);
	else
		fprintf(r->out, "%s=", key);
	r->n++;
}

static void report_eol(struct np_report *r)
{
	if (!r->json)
		fputc('\n', r->out);
}

void report_u64(struct np_report *r, const char *key, uint64_t v)
{
	report_key(r, key);
	fprintf(r->out, "%" PRIu64, v);
	report_eol(r);
}

void report_f64(struct np_report *r, const char *key, double v)
{
	report_key(r, key);
	fprintf(r->out, "%.1f", v);
	report_eol(r);
}

void report_str(struct np_report *r, const char *key, const char *v)
{
	report_key(r, key);
	if (r->json) {
		fputc('"', r->out);
		for (const char *p = v; *p; p++)
			fprintf(r->out, (*p == '"' || *p == '\\') ? "\\%c" : "%c", *p);
		fputc('"', r->out);
	} else {
		fputs(v, r->out);
	}
	report_eol(r);
}

void report_flow_u64(struct np_report *r, unsigned flow, const char *key, uint64_t v)
{
	char name[64];

	snprintf(name, sizeof(name), "flow%u_%s", flow, key);
	report_u64(r, name, v);
}

int report_end(struct np_report *r, const char *fail_reason)
{
	report_str(r, "result", fail_reason ? "fail" : "ok");
	if (fail_reason)
		report_str(r, "reason", fail_reason);
	if (r->json)
		fputs("}\n", r->out);
	fflush(r->out);
	return fail_reason ? NP_EXIT_FAIL : NP_EXIT_OK;
}

int np_sys_error(const char *what, int neg_errno)
{
	fprintf(stderr, "netpeer: %s: %s\n", what, strerror(-neg_errno));
	return NP_EXIT_SYSTEM;
}

int np_write_ready(const char *path, uint16_t port)
{
	char tmp[4096], text[16];
	int fd, len = snprintf(text, sizeof(text), "%u\n", port);

	/* Write then rename, so a waiting test never sees an empty file. */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, (size_t)len) != len || close(fd) != 0 || rename(tmp, path) != 0)
		return -errno;
	return 0;
}

unsigned np_frame_size(const struct np_opts *o, uint64_t n)
{
	return o->size_min + (unsigned)(n % (o->size_max - o->size_min + 1));
}

int main(int argc, char **argv)
{
	struct np_opts o;
	int rc;

	if (argc < 2)
		return usage_error("missing subcommand (see netpeer --help)");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return NP_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		rc = parse_args(argc, argv, commands[i].cmd, commands[i].name, &o);
		return rc != NP_EXIT_OK ? rc : commands[i].run(&o);
	}
	return usage_error("unknown subcommand '%s' (see netpeer --help)", argv[1]);
}
