/* SPDX-License-Identifier: Apache-2.0 */
/* A rate limit for log lines a guest can cause. A guest that breaks its
 * device, resets it and breaks it again in a loop must not be able to fill
 * the host's log: every such line of a device passes one limiter, which
 * lets a burst through and then one line per interval, and says how many
 * it held back on the next line it lets through. Thread-safe (workers,
 * vCPU threads and the link thread log through the same device). */
#ifndef MINIVMM_BASE_LOG_LIMIT_H
#define MINIVMM_BASE_LOG_LIMIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct log_limit {
	pthread_mutex_t lock;
	uint64_t interval_ns;
	uint64_t burst_ns;          /* burst × interval */
	uint64_t next_ns;           /* theoretical arrival time (GCRA) */
	unsigned suppressed;        /* held back since the last line let through */
};

void log_limit_init(struct log_limit *l, unsigned burst, uint64_t interval_ns);
void log_limit_destroy(struct log_limit *l);

/* May a line go out now? If so, *suppressed is how many were held back
 * before it (then reset); if not, the line is counted as held back. */
bool log_limit_take(struct log_limit *l, uint64_t now_ns, unsigned *suppressed);

/* The same bucket as a pace for an action that must happen, only not too
 * often: takes the next slot and returns how long to wait for it (0: now).
 * Never refuses; calls that come faster than the rate wait longer. */
uint64_t log_limit_pace(struct log_limit *l, uint64_t now_ns);
/* Give back a slot log_limit_pace took for an action that then did not
 * happen, so that those queued behind it move up. */
void log_limit_unpace(struct log_limit *l);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t log_limit_now_ns(void);

#endif
