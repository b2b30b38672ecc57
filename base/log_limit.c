/* SPDX-License-Identifier: Apache-2.0 */
/* Generic cell rate algorithm: one timestamp says when the bucket is empty. */
#include "base/log_limit.h"

#include <time.h>

void log_limit_init(struct log_limit *l, unsigned burst, uint64_t interval_ns)
{
	pthread_mutex_init(&l->lock, NULL);
	l->interval_ns = interval_ns;
	l->burst_ns = (uint64_t)(burst ? burst : 1) * interval_ns;
	l->next_ns = 0;
	l->suppressed = 0;
}

void log_limit_destroy(struct log_limit *l)
{
	pthread_mutex_destroy(&l->lock);
}

bool log_limit_take(struct log_limit *l, uint64_t now_ns, unsigned *suppressed)
{
	pthread_mutex_lock(&l->lock);
	uint64_t tat = l->next_ns > now_ns ? l->next_ns : now_ns;
	bool ok = tat + l->interval_ns <= now_ns + l->burst_ns;
	if (ok) {
		l->next_ns = tat + l->interval_ns;
		*suppressed = l->suppressed;
		l->suppressed = 0;
	} else {
		l->suppressed++;
	}
	pthread_mutex_unlock(&l->lock);
	return ok;
}

uint64_t log_limit_pace(struct log_limit *l, uint64_t now_ns)
{
	pthread_mutex_lock(&l->lock);
	uint64_t tat = l->next_ns > now_ns ? l->next_ns : now_ns;
	uint64_t allowed_at = tat + l->interval_ns > l->burst_ns ? tat + l->interval_ns - l->burst_ns : 0;
	l->next_ns = tat + l->interval_ns;
	pthread_mutex_unlock(&l->lock);
	return allowed_at > now_ns ? allowed_at - now_ns : 0;
}

void log_limit_unpace(struct log_limit *l)
{
	pthread_mutex_lock(&l->lock);
	l->next_ns = l->next_ns > l->interval_ns ? l->next_ns - l->interval_ns : 0;
	pthread_mutex_unlock(&l->lock);
}

uint64_t log_limit_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
