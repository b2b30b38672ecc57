/* SPDX-License-Identifier: Apache-2.0 */
/* A device's rate limiter for one direction: two token buckets, one of
 * bytes and one of frames (operations), as Firecracker's and Cloud
 * Hypervisor's are configured: each has a size (what it holds when full),
 * a one-time burst (extra tokens at the start, never refilled) and a refill
 * time (from empty to full). A bucket with size 0 or refill time 0 limits
 * nothing.
 *
 * A queue asks rate_limit_wait() before it takes a frame: 0 means go, else
 * how long until the limiter lets it (it stops servicing the queue and
 * comes back then: the guest sees back-pressure, nothing is dropped). What
 * went through is charged afterwards with rate_limit_charge(). A frame
 * never waits for more tokens than the bucket has left: while there are any
 * at all it goes, and what it takes beyond them is owed, paid back by the
 * refill before the next one goes. So a bucket smaller than one frame, or
 * one refilled in under a millisecond, slows a queue to its rate and never
 * stops it, and over any long time the rate is the configured one.
 *
 * Every queue pair of a device shares its limiter (a lock, taken only
 * while it limits something: an unlimited one costs an atomic load per
 * frame, so a device may be given a limit live). The time is given by the caller
 * (CLOCK_MONOTONIC ns), so the arithmetic is tested without sleeping.
 *
 * Pairs share it fairly whichever worker thread serves them: each pair
 * (a "user", its index) has a tag, the budget its frames took (in ns of
 * the limit's time: what the binding bucket needs to refill it). A pair
 * that finds tokens but is more than RATE_LIMIT_QUANTUM_NS ahead of a pair
 * that is waiting for the limiter lets that one go first: it waits until
 * the other's wait is over, and a little more. A pair that starts waiting
 * after a pause starts from the tag of the last frame that went, so idle
 * time banks nothing. Without this, the worker whose timer happens to fire
 * first takes every token a refill brings. */
#ifndef MINIVMM_NET_RATE_LIMIT_H
#define MINIVMM_NET_RATE_LIMIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "minivmm.h"

/* A bucket's and a limiter's configuration are the embedding API's
 * (minivmm.h): struct minivmm_token_bucket (size, one_time_burst,
 * refill_time_ms; size or refill time 0: no limit) and struct
 * minivmm_rate_limit (bandwidth: bytes, ops: frames). */
struct token_bucket {
	struct minivmm_token_bucket cfg;
	int64_t tokens;            /* below 0: owed by a frame larger than what was left */
	uint64_t burst;            /* what is left of the one-time burst */
	uint64_t last_ns;          /* refilled up to here */
	uint64_t rem;              /* refill remainder, in token * ns units */
};

/* Pairs sharing one limiter (a device's queue pairs); a user index is
 * taken modulo this. */
#define RATE_LIMIT_MAX_USERS 16
/* How far (ns of the limit's time) a pair may get ahead of a waiting one. */
#define RATE_LIMIT_QUANTUM_NS 2000000ull
/* A waiting pair counts as waiting this long past its wait (an epoll
 * worker comes back up to a millisecond late). */
#define RATE_LIMIT_GRACE_NS 2000000ull
/* A pair that lets another go first comes back this long after the other's
 * wait ends. */
#define RATE_LIMIT_YIELD_NS 100000ull

struct rate_limit_user {
	uint64_t tag;              /* budget its frames took, ns of the limit's time */
	uint64_t waiting_until_ns; /* waiting for the limiter until then (+ grace) */
	uint64_t asked_ns;         /* when it last asked */
};

struct rate_limit_stats {
	uint64_t throttled;        /* times a queue found it empty and had to wait */
	uint64_t throttled_ns;     /* time some queue of the device waited */
};

struct rate_limit {
	bool active;               /* atomic: limits anything (else wait and charge return at once) */
	unsigned gen;              /* atomic: bumped by each rate_limit_set */
	pthread_mutex_t lock;
	struct token_bucket bytes, ops;
	bool waiting;              /* a queue is waiting (for throttled_ns) */
	uint64_t wait_since_ns;
	struct rate_limit_stats stats;
	uint64_t vtime;            /* the tag of the last frame that went */
	struct rate_limit_user user[RATE_LIMIT_MAX_USERS];
};

/* A limiter as configured, full (and with its one-time bursts), at now_ns. */
void rate_limit_init(struct rate_limit *rl, const struct minivmm_rate_limit *cfg, uint64_t now_ns);
void rate_limit_destroy(struct rate_limit *rl);

/* Change the configuration live: each bucket starts full again with the
 * new size and burst (as Firecracker's PATCH does). */
void rate_limit_set(struct rate_limit *rl, const struct minivmm_rate_limit *cfg, uint64_t now_ns);
void rate_limit_get(struct rate_limit *rl, struct minivmm_rate_limit *cfg);

/* Changes so far: a queue told to wait under an older generation asks
 * again at once (a live change takes effect without waiting out the old
 * debt). NULL: 0. */
unsigned rate_limit_gen(const struct rate_limit *rl);

/* Does it limit anything? */
bool rate_limit_active(const struct minivmm_rate_limit *cfg);

/* Does rl limit anything now (NULL: no)? One atomic load: the data path
 * asks this per frame before it reads the clock for wait and charge, so
 * an unlimited device costs no more than that. */
static inline bool rate_limit_on(const struct rate_limit *rl)
{
	return rl && __atomic_load_n(&rl->active, __ATOMIC_ACQUIRE);
}

/* 0: pair `user` may take frames now; else the ns until it may (at least
 * 1). */
uint64_t rate_limit_wait(struct rate_limit *rl, unsigned user, uint64_t now_ns);

/* Frames and bytes of pair `user` that went through. */
void rate_limit_charge(struct rate_limit *rl, unsigned user, uint64_t bytes, uint64_t ops, uint64_t now_ns);

void rate_limit_stats(struct rate_limit *rl, uint64_t now_ns, struct rate_limit_stats *out);

/* The pure bucket (for the tests): refill it up to now_ns, then 0 if it has
 * tokens, else the ns until it has one. */
uint64_t token_bucket_wait(struct token_bucket *b, uint64_t now_ns);
void token_bucket_take(struct token_bucket *b, uint64_t n);

#endif
