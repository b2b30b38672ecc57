/* SPDX-License-Identifier: Apache-2.0 */
/* Token-bucket rate limiting of a device's direction (net/rate_limit.h). */
#include "net/rate_limit.h"

#include <string.h>

#define NS_PER_MS 1000000ull

static bool bucket_limits(const struct minivmm_token_bucket *c)
{
	return c->size && c->refill_time_ms;
}

bool rate_limit_active(const struct minivmm_rate_limit *cfg)
{
	return bucket_limits(&cfg->bandwidth) || bucket_limits(&cfg->ops);
}

static void bucket_init(struct token_bucket *b, const struct minivmm_token_bucket *c, uint64_t now_ns)
{
	memset(b, 0, sizeof(*b));
	b->cfg = *c;
	/* tokens stays an int64_t: a size past 2^62 is as good as none. */
	if (b->cfg.size > (1ull << 62))
		b->cfg.size = 1ull << 62;
	if (b->cfg.refill_time_ms > (1ull << 40))
		b->cfg.refill_time_ms = 1ull << 40;
	b->tokens = (int64_t)b->cfg.size;
	b->burst = c->one_time_burst;
	b->last_ns = now_ns;
}

/* Tokens come at size per refill time, counted to the nanosecond with the
 * remainder carried, so none is lost however often it is asked. */
static void bucket_refill(struct token_bucket *b, uint64_t now_ns)
{
	if (!bucket_limits(&b->cfg) || now_ns <= b->last_ns)
		return;
	unsigned __int128 denom = (unsigned __int128)b->cfg.refill_time_ms * NS_PER_MS;
	unsigned __int128 q = (unsigned __int128)(now_ns - b->last_ns) * b->cfg.size + b->rem;
	unsigned __int128 add = q / denom;
	b->last_ns = now_ns;
	__int128 room = (__int128)b->cfg.size - b->tokens;
	if ((__int128)add >= room) {
		b->tokens = (int64_t)b->cfg.size;
		b->rem = 0;
	} else {
		b->tokens += (int64_t)add;
		b->rem = (uint64_t)(q % denom);
	}
}

uint64_t token_bucket_wait(struct token_bucket *b, uint64_t now_ns)
{
	if (!bucket_limits(&b->cfg))
		return 0;
	bucket_refill(b, now_ns);
	if (b->tokens > 0 || b->burst > 0)
		return 0;
	/* One token more than owed: ceil((need * denom - rem) / size) ns. */
	unsigned __int128 denom = (unsigned __int128)b->cfg.refill_time_ms * NS_PER_MS;
	unsigned __int128 need = (unsigned __int128)(1 - (__int128)b->tokens) * denom - b->rem;
	unsigned __int128 ns = (need + b->cfg.size - 1) / b->cfg.size;
	if (ns == 0)
		ns = 1;
	return ns > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)ns;
}

void token_bucket_take(struct token_bucket *b, uint64_t n)
{
	if (!bucket_limits(&b->cfg))
		return;
	uint64_t from_burst = n < b->burst ? n : b->burst;
	b->burst -= from_burst;
	n -= from_burst;
	/* What is owed is paid back before the next frame goes; a debt past
	 * 2^62 (no frame is that large) is capped rather than wrapped. */
	if (n > (uint64_t)INT64_MAX / 2 || b->tokens - (int64_t)n < INT64_MIN / 2)
		b->tokens = INT64_MIN / 2;
	else
		b->tokens -= (int64_t)n;
}

void rate_limit_init(struct rate_limit *rl, const struct minivmm_rate_limit *cfg, uint64_t now_ns)
{
	memset(rl, 0, sizeof(*rl));
	pthread_mutex_init(&rl->lock, NULL);
	bucket_init(&rl->bytes, &cfg->bandwidth, now_ns);
	bucket_init(&rl->ops, &cfg->ops, now_ns);
	rl->active = rate_limit_active(cfg);
}

void rate_limit_destroy(struct rate_limit *rl)
{
	pthread_mutex_destroy(&rl->lock);
}

void rate_limit_set(struct rate_limit *rl, const struct minivmm_rate_limit *cfg, uint64_t now_ns)
{
	pthread_mutex_lock(&rl->lock);
	bucket_init(&rl->bytes, &cfg->bandwidth, now_ns);
	bucket_init(&rl->ops, &cfg->ops, now_ns);
	/* Tags of the old limit's time mean nothing in the new one's. */
	rl->vtime = 0;
	memset(rl->user, 0, sizeof(rl->user));
	if (rl->waiting) {
		rl->waiting = false;
		if (now_ns > rl->wait_since_ns)
			rl->stats.throttled_ns += now_ns - rl->wait_since_ns;
	}
	__atomic_store_n(&rl->active, rate_limit_active(cfg), __ATOMIC_RELEASE);
	__atomic_add_fetch(&rl->gen, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&rl->lock);
}

unsigned rate_limit_gen(const struct rate_limit *rl)
{
	return rl ? __atomic_load_n(&rl->gen, __ATOMIC_ACQUIRE) : 0;
}

void rate_limit_get(struct rate_limit *rl, struct minivmm_rate_limit *cfg)
{
	pthread_mutex_lock(&rl->lock);
	cfg->bandwidth = rl->bytes.cfg;
	cfg->ops = rl->ops.cfg;
	pthread_mutex_unlock(&rl->lock);
}

/* The budget n tokens of bucket b take: ns of its refill. */
static uint64_t bucket_cost_ns(const struct token_bucket *b, uint64_t n)
{
	if (!bucket_limits(&b->cfg))
		return 0;
	unsigned __int128 ns = (unsigned __int128)n * b->cfg.refill_time_ms * NS_PER_MS / b->cfg.size;
	return ns > UINT64_MAX / 4 ? UINT64_MAX / 4 : (uint64_t)ns;
}

/* With the lock held: the pair waits from now on (for throttled_ns). */
static void note_waiting(struct rate_limit *rl, uint64_t now_ns)
{
	rl->stats.throttled++;
	if (!rl->waiting) {
		rl->waiting = true;
		rl->wait_since_ns = now_ns;
	}
}

/* With the lock held and tokens there: 0 if pair u may take them, else how
 * long to let a waiting pair that is further behind go first. */
static uint64_t fair_wait(struct rate_limit *rl, unsigned u, uint64_t now_ns)
{
	uint64_t until = 0;
	for (unsigned q = 0; q < RATE_LIMIT_MAX_USERS; q++) {
		const struct rate_limit_user *o = &rl->user[q];
		if (q == u || o->waiting_until_ns <= now_ns || o->tag + RATE_LIMIT_QUANTUM_NS >= rl->user[u].tag)
			continue;
		/* q waits, and is behind: it goes when its wait ends. */
		uint64_t end = o->waiting_until_ns - RATE_LIMIT_GRACE_NS;
		if (end > until)
			until = end;
	}
	if (!until)
		return 0;
	return (until > now_ns ? until - now_ns : 0) + RATE_LIMIT_YIELD_NS;
}

uint64_t rate_limit_wait(struct rate_limit *rl, unsigned user, uint64_t now_ns)
{
	if (!__atomic_load_n(&rl->active, __ATOMIC_ACQUIRE))
		return 0;
	unsigned u = user % RATE_LIMIT_MAX_USERS;
	pthread_mutex_lock(&rl->lock);
	struct rate_limit_user *me = &rl->user[u];
	/* Back after a pause (neither waiting nor asking): idle time banks
	 * nothing. */
	if (me->waiting_until_ns <= now_ns && me->asked_ns + RATE_LIMIT_GRACE_NS < now_ns && me->tag < rl->vtime)
		me->tag = rl->vtime;
	me->asked_ns = now_ns;
	uint64_t wb = token_bucket_wait(&rl->bytes, now_ns);
	uint64_t wo = token_bucket_wait(&rl->ops, now_ns);
	uint64_t w = wb > wo ? wb : wo;
	if (!w)
		w = fair_wait(rl, u, now_ns);
	if (w) {
		note_waiting(rl, now_ns);
		me->waiting_until_ns = now_ns + w + RATE_LIMIT_GRACE_NS;
	} else {
		me->waiting_until_ns = 0;
		if (rl->waiting) {
			rl->waiting = false;
			if (now_ns > rl->wait_since_ns)
				rl->stats.throttled_ns += now_ns - rl->wait_since_ns;
		}
	}
	pthread_mutex_unlock(&rl->lock);
	return w;
}

void rate_limit_charge(struct rate_limit *rl, unsigned user, uint64_t bytes, uint64_t ops, uint64_t now_ns)
{
	if (!__atomic_load_n(&rl->active, __ATOMIC_ACQUIRE))
		return;
	unsigned u = user % RATE_LIMIT_MAX_USERS;
	pthread_mutex_lock(&rl->lock);
	bucket_refill(&rl->bytes, now_ns);
	bucket_refill(&rl->ops, now_ns);
	token_bucket_take(&rl->bytes, bytes);
	token_bucket_take(&rl->ops, ops);
	struct rate_limit_user *me = &rl->user[u];
	if (me->tag > rl->vtime)
		rl->vtime = me->tag;
	uint64_t cb = bucket_cost_ns(&rl->bytes, bytes), co = bucket_cost_ns(&rl->ops, ops);
	uint64_t cost = cb > co ? cb : co;
	me->tag = me->tag > UINT64_MAX / 2 - cost ? UINT64_MAX / 2 : me->tag + cost;
	pthread_mutex_unlock(&rl->lock);
}

void rate_limit_stats(struct rate_limit *rl, uint64_t now_ns, struct rate_limit_stats *out)
{
	pthread_mutex_lock(&rl->lock);
	*out = rl->stats;
	if (rl->waiting && now_ns > rl->wait_since_ns)
		out->throttled_ns += now_ns - rl->wait_since_ns;
	pthread_mutex_unlock(&rl->lock);
}
