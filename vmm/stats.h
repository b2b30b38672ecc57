/* SPDX-License-Identifier: Apache-2.0 */
/* The statistics of a VM as one snapshot, and its two forms: the --stats
 * table and the JSON line (docs/stats.md). A snapshot is plain data, so
 * the forms can be made (and tested) without a running VM. */
#ifndef MINIVMM_VMM_STATS_H
#define MINIVMM_VMM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "minivmm.h"
#include "base/error.h"

struct stats_net {
	struct minivmm_net_stats d;
	struct minivmm_queue_stats q[MINIVMM_MAX_QUEUE_PAIRS];
	struct minivmm_worker_stats w[MINIVMM_MAX_QUEUE_PAIRS];
};

struct stats_snapshot {
	uint64_t unix_ms;          /* CLOCK_REALTIME when it was taken */
	uint64_t uptime_ms;        /* since the VMM started (cfg.start_ns) */
	const char *version;       /* the build's release: "0.3.0+git8d0ca88" */
	const char *api_version;   /* "2.1" */
	/* the VM */
	const char *state;         /* "created", "running", "stopping", "stopped" */
	unsigned vcpus;
	uint64_t mem_bytes;
	bool exited;               /* stopped: exit_status is final */
	int exit_status;
	const char *stop_reason;   /* NULL until a stop was requested */
	/* the process */
	int pid;
	uint64_t process_cpu_ns;   /* CLOCK_PROCESS_CPUTIME_ID */
	/* the network devices (those whose counters could be read) */
	unsigned nr_nets;
	struct stats_net net[MINIVMM_MAX_NETS];
};

/* Fill *s from the VM, now. */
void stats_take(struct minivmm *vm, struct stats_snapshot *s);

/* The JSON object on one line, ending in '\n' (malloc'd; NULL: out of
 * memory). "net" is its first key: consumers match the prefix {"net":. */
char *stats_json_line(const struct stats_snapshot *s);

/* The table (malloc'd, *len bytes; NULL: out of memory). */
char *stats_table(const struct stats_snapshot *s, size_t *len);

/* Write the snapshot, as the JSON line or the table, to fd in one write(2)
 * (more only if the kernel takes part of it). 0 or a negative errno. */
int stats_write(int fd, const struct stats_snapshot *s, bool json, struct vmm_err *err);

/* "2026-12-04T10:11:12.345Z": RFC 3339, UTC, milliseconds (25 bytes with
 * the NUL). */
void stats_rfc3339(uint64_t unix_ms, char *buf, size_t size);

#endif
