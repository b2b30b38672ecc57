/* SPDX-License-Identifier: Apache-2.0 */
/* netpeer: the host-side UDP peer of the network integration tests.
 * netpeer.c parses the command line and prints results; netpeer_echo.c and
 * netpeer_stream.c run the subcommands. */
#ifndef NETPEER_H
#define NETPEER_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses. */
#define NP_EXIT_OK     0   /* every check passed */
#define NP_EXIT_FAIL   1   /* ran, but a check failed (loss, corruption, gaps, timeout) */
#define NP_EXIT_USAGE  2   /* bad command line */
#define NP_EXIT_SYSTEM 3   /* a socket call failed */

#define NP_MAX_FLOWS   256u

#define NP_MAX_GSO 16

struct np_opts {
	struct sockaddr_in dst;
	uint16_t port;
	uint64_t count;
	unsigned size_min, size_max;     /* Ethernet frame sizes */
	unsigned flows;                  /* 0 (count only): any flow below NP_MAX_FLOWS */
	unsigned window;
	uint64_t timeout_ms, loss_ms, wait_ms, idle_ms;
	uint64_t expect;                 /* 0: not given */
	uint64_t rate;                   /* datagrams per second, 0: unlimited */
	uint64_t first_seq;              /* send: every flow starts at this seq */
	uint64_t duration_ms;            /* send: stop after this long (0: --count only) */
	unsigned repeat;
	unsigned gso;                    /* echo-check: datagrams per UDP_SEGMENT send, 0/1: none */
	uint64_t drop_every, corrupt_every, dup_every;
	bool stop, allow_loss, json;
	const char *ready_file;
};

/* Results: `key=value` lines, or one JSON object with --json. */
struct np_report {
	FILE *out;
	bool json;
	unsigned n;
};

void report_begin(struct np_report *r, FILE *out, bool json);
void report_u64(struct np_report *r, const char *key, uint64_t v);
void report_f64(struct np_report *r, const char *key, double v);
void report_str(struct np_report *r, const char *key, const char *v);
void report_flow_u64(struct np_report *r, unsigned flow, const char *key, uint64_t v);
/* Prints result=ok|fail (and reason= when failing), closes the report and
 * returns the exit status for it. */
int report_end(struct np_report *r, const char *fail_reason);
/* A socket call failed: one line on stderr; returns NP_EXIT_SYSTEM. */
int np_sys_error(const char *what, int neg_errno);
/* Writes the local port to path (a test waits for the file to appear). */
int np_write_ready(const char *path, uint16_t port);

/* Ethernet frame size of datagram n (0, 1, 2, ... over all flows). */
unsigned np_frame_size(const struct np_opts *o, uint64_t n);

int np_echo_check(const struct np_opts *o);
int np_echo_server(const struct np_opts *o);
int np_count(const struct np_opts *o);
int np_send(const struct np_opts *o);
int np_stop(const struct np_opts *o);

#endif
