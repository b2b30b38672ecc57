/* SPDX-License-Identifier: Apache-2.0 */
/* Token buckets (net/rate_limit.h), on a simulated clock. */
#include <criterion/criterion.h>

#include "net/rate_limit.h"

#define MS 1000000ull
#define S  1000000000ull

/* A queue that always has frames of `frame` bytes, asking before each batch
 * of `batch` and charging after it, for `secs` of simulated time from t=0.
 * Returns the bytes that went through; *waits counts the waits. */
static uint64_t saturate(struct rate_limit *rl, uint64_t frame, unsigned batch, uint64_t secs, unsigned *waits)
{
	uint64_t t = 0, sent = 0;
	unsigned w = 0;
	while (t < secs * S) {
		uint64_t wait = rate_limit_wait(rl, 0, t);
		if (wait) {
			cr_assert_gt(wait, 0u);
			w++;
			t += wait;
			continue;
		}
		rate_limit_charge(rl, 0, frame * batch, batch, t);
		sent += frame * batch;
		t += 1000;   /* the batch took 1 us */
	}
	if (waits)
		*waits = w;
	return sent;
}

static struct minivmm_rate_limit bytes_only(uint64_t size, uint64_t burst, uint64_t refill_ms)
{
	return (struct minivmm_rate_limit){ .bandwidth = { .size = size, .one_time_burst = burst,
						       .refill_time_ms = refill_ms } };
}

Test(rate_limit, ten_megabits_over_five_seconds_is_ten_megabits)
{
	struct rate_limit rl;
	struct minivmm_rate_limit c = bytes_only(125000, 0, 100);   /* 1.25 MB/s */
	rate_limit_init(&rl, &c, 0);
	unsigned waits;
	uint64_t sent = saturate(&rl, 1514, 32, 5, &waits);
	/* 5 s at 1.25 MB/s, plus the full bucket at the start, plus at most one batch owed */
	double want = 5 * 1250000.0 + 125000;
	cr_assert(sent >= want * 0.995 && sent <= want + 1514 * 32, "sent %llu, want %.0f",
		  (unsigned long long)sent, want);
	cr_assert_gt(waits, 10u);
	struct rate_limit_stats st;
	rate_limit_stats(&rl, 5 * S, &st);
	cr_assert_eq(st.throttled, waits);
	cr_assert_gt(st.throttled_ns, 4 * S, "throttled most of the time: %llu ns", (unsigned long long)st.throttled_ns);
	rate_limit_destroy(&rl);
}

Test(rate_limit, operations_bucket_limits_frames_per_second)
{
	struct rate_limit rl;
	struct minivmm_rate_limit c = { .ops = { .size = 500, .refill_time_ms = 100 } };   /* 5 k ops/s */
	rate_limit_init(&rl, &c, 0);
	uint64_t sent = saturate(&rl, 64, 1, 5, NULL);
	uint64_t frames = sent / 64;
	cr_assert(frames >= 25000 && frames <= 25000 + 500 + 1, "%llu frames", (unsigned long long)frames);
	rate_limit_destroy(&rl);
}

/* The one-time burst goes first and is not refilled. */
Test(rate_limit, one_time_burst_is_spent_once)
{
	struct rate_limit rl;
	struct minivmm_rate_limit c = bytes_only(1000, 100000, 1000);   /* 1000 B/s */
	rate_limit_init(&rl, &c, 0);
	uint64_t sent = saturate(&rl, 100, 1, 10, NULL);
	cr_assert(sent >= 100000 + 1000 + 10 * 1000 - 100 && sent <= 100000 + 1000 + 10 * 1000 + 100,
		  "sent %llu", (unsigned long long)sent);
	rate_limit_destroy(&rl);
}

/* A bucket smaller than one frame slows the queue to its rate, it never
 * stops it: each frame goes once the debt of the last is paid. */
Test(rate_limit, a_bucket_smaller_than_a_frame_never_stalls)
{
	struct rate_limit rl;
	struct minivmm_rate_limit c = bytes_only(100, 0, 1);   /* 100 kB/s */
	rate_limit_init(&rl, &c, 0);
	uint64_t sent = saturate(&rl, 1500, 1, 10, NULL);
	cr_assert(sent >= 990000 && sent <= 1000000 + 1500 + 100, "sent %llu", (unsigned long long)sent);
	rate_limit_destroy(&rl);
}

/* Firecracker #6212: a debt paid back in under a millisecond was a wait of
 * 0 ms, which disarmed its timer for good. Here a wait is never 0 while
 * the queue must wait, and it is the time the debt takes, in ns. */
Test(rate_limit, a_wait_under_a_millisecond_is_not_zero)
{
	struct token_bucket b;
	struct rate_limit rl;
	struct minivmm_rate_limit c = bytes_only(4095, 0, 1);
	rate_limit_init(&rl, &c, 0);
	b = rl.bytes;
	cr_assert_eq(token_bucket_wait(&b, 0), 0u);
	token_bucket_take(&b, 4096);
	uint64_t w = token_bucket_wait(&b, 0);
	cr_assert(w > 0 && w <= MS, "wait %llu ns", (unsigned long long)w);
	cr_assert_gt(token_bucket_wait(&b, w - 1), 0u, "not before");
	cr_assert_eq(token_bucket_wait(&b, w), 0u, "and then it goes");
	rate_limit_destroy(&rl);
}

/* Asked every nanosecond, a bucket refills as fast as asked once a second:
 * the remainder of each division is carried. */
Test(rate_limit, refill_loses_nothing_to_rounding)
{
	struct rate_limit rl;
	struct minivmm_rate_limit c = bytes_only(3, 0, 7);   /* 3 tokens per 7 ms */
	rate_limit_init(&rl, &c, 0);
	struct token_bucket b = rl.bytes;
	token_bucket_take(&b, 3);
	struct token_bucket once = b;
	for (uint64_t t = 1; t <= 14 * MS; t += 997)
		token_bucket_wait(&b, t);
	token_bucket_wait(&b, 14 * MS);
	token_bucket_wait(&once, 14 * MS);
	cr_assert_eq(b.tokens, once.tokens);
	cr_assert_eq(b.tokens, 3, "full again after two refill times");
	rate_limit_destroy(&rl);
}

Test(rate_limit, zero_size_or_refill_time_limits_nothing)
{
	struct rate_limit rl;
	struct minivmm_rate_limit none = { 0 }, no_time = bytes_only(100, 0, 0), no_size = bytes_only(0, 0, 100);
	cr_assert_not(rate_limit_active(&none));
	cr_assert_not(rate_limit_active(&no_time));
	cr_assert_not(rate_limit_active(&no_size));
	rate_limit_init(&rl, &no_time, 0);
	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(rate_limit_wait(&rl, 0, (uint64_t)i), 0u);
		rate_limit_charge(&rl, 0, 1u << 20, 1, (uint64_t)i);
	}
	rate_limit_destroy(&rl);
}

/* A live change starts from a full bucket of the new size, and the new
 * rate holds from then on. */
Test(rate_limit, a_live_change_takes_effect_at_once)
{
	struct rate_limit rl;
	struct minivmm_rate_limit slow = bytes_only(1000, 0, 1000), fast = bytes_only(100000, 0, 100);
	rate_limit_init(&rl, &slow, 0);
	rate_limit_charge(&rl, 0, 5000, 5, 0);
	cr_assert_gt(rate_limit_wait(&rl, 0, 1 * MS), 1 * S, "in debt at 1 kB/s");
	rate_limit_set(&rl, &fast, 2 * MS);
	cr_assert_eq(rate_limit_wait(&rl, 0, 2 * MS), 0u);
	struct minivmm_rate_limit got;
	rate_limit_get(&rl, &got);
	cr_assert_eq(got.bandwidth.size, 100000u);
	cr_assert_eq(got.bandwidth.refill_time_ms, 100u);
	rate_limit_destroy(&rl);
}

/* Huge values neither overflow nor wrap: a 2^64 size or refill time, a
 * frame charged far beyond the bucket. */
Test(rate_limit, extreme_values_stay_in_range)
{
	struct rate_limit rl;
	struct minivmm_rate_limit c = bytes_only(UINT64_MAX, UINT64_MAX, UINT64_MAX);
	rate_limit_init(&rl, &c, 0);
	cr_assert_eq(rate_limit_wait(&rl, 0, 0), 0u);
	rate_limit_charge(&rl, 0, UINT64_MAX, UINT64_MAX, 0);
	rate_limit_charge(&rl, 0, UINT64_MAX, UINT64_MAX, 0);
	uint64_t w = rate_limit_wait(&rl, 0, UINT64_MAX / 4);
	cr_assert_leq(w, UINT64_MAX / 2);
	rate_limit_set(&rl, &(struct minivmm_rate_limit){ .bandwidth = { .size = 1, .refill_time_ms = 1 } }, 0);
	rate_limit_charge(&rl, 0, UINT64_MAX, 0, 0);
	cr_assert_gt(rate_limit_wait(&rl, 0, 1), 0u);
	rate_limit_destroy(&rl);
}

/* Pairs that each come back exactly when told (a worker's timer), the
 * same pair always first when two come back at once (equal timer expiries
 * fire in the order they were armed): from t=start_ns[u] on, pair u always
 * has frames. n[u] counts what each sent in `secs`. */
static void contend(struct rate_limit *rl, unsigned users, const uint64_t *start_ns, uint64_t secs, uint64_t *n)
{
	uint64_t next[4];
	for (unsigned u = 0; u < users; u++) {
		next[u] = start_ns[u];
		n[u] = 0;
	}
	for (;;) {
		unsigned u = 0;
		for (unsigned k = 1; k < users; k++)
			if (next[k] < next[u])
				u = k;
		uint64_t t = next[u];
		if (t >= secs * S)
			break;
		for (;;) {
			uint64_t w = rate_limit_wait(rl, u, t);
			if (w) {
				next[u] = t + w;
				break;
			}
			rate_limit_charge(rl, u, 1514, 1, t);
			n[u]++;
		}
	}
}

/* Pair 0 always first at each refill: it still gets no more than its share,
 * and a pair that starts late banks nothing for the time it was idle. */
Test(rate_limit, pairs_take_turns_whoever_comes_back_first)
{
	struct rate_limit rl;
	struct minivmm_rate_limit ops = { .ops = { .size = 50, .refill_time_ms = 50 } };   /* 1000/s */
	rate_limit_init(&rl, &ops, 0);
	uint64_t n[4];
	contend(&rl, 2, (uint64_t[]){ 0, 0 }, 2, n);
	cr_assert(n[0] + n[1] >= 2040 && n[0] + n[1] <= 2060, "%llu frames", (unsigned long long)(n[0] + n[1]));
	cr_assert(n[0] <= n[1] + 60 && n[1] <= n[0] + 60, "shares %llu and %llu", (unsigned long long)n[0],
		  (unsigned long long)n[1]);
	rate_limit_destroy(&rl);

	/* Four pairs, bytes (10 Mbit/s of 1514-byte frames: 825/s), pair 3
	 * idle for the first second: over the next second it gets a quarter,
	 * not the second's worth it "missed". */
	struct minivmm_rate_limit bw = bytes_only(125000, 0, 100);
	rate_limit_init(&rl, &bw, 0);
	contend(&rl, 4, (uint64_t[]){ 0, 0, 0, 1 * S }, 2, n);
	uint64_t total = n[0] + n[1] + n[2] + n[3];
	cr_assert(total >= 1600 && total <= 1760, "%llu frames", (unsigned long long)total);
	cr_assert(n[3] >= 180 && n[3] <= 240, "the late pair sent %llu in its second (a quarter: 206)",
		  (unsigned long long)n[3]);
	rate_limit_destroy(&rl);
}
