/* SPDX-License-Identifier: Apache-2.0 */
/* Busy-polling before a worker sleeps, fixed or adaptive (poll-us=auto).
 *
 * Sleeping in the kernel and being woken costs a few microseconds and a
 * context switch per wake-up; spinning costs a core. poll-us=N spins up to N
 * microseconds after every pass. poll-us=auto spins only while it pays: the
 * window opens when work keeps arriving soon after the worker went to sleep
 * or while it spun, doubles while spinning keeps finding work and halves
 * each time it finds none, down to not spinning at all. An idle VM therefore
 * costs nothing, a busy one takes no wake-ups. */
#ifndef MINIVMM_NET_WORKER_POLL_H
#define MINIVMM_NET_WORKER_POLL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "net/worker.h"

#define NET_POLL_AUTO_MAX_NS 50000ull   /* never spin longer than this */
#define NET_POLL_AUTO_MIN_NS 2000ull    /* below this, stop spinning */

struct net_poll_window {
	bool automatic;
	uint64_t fixed_ns;      /* poll-us=N */
	uint64_t spin_ns;       /* auto: the current window, 0 = do not spin */
	bool worked;            /* the last pass moved frames */
	uint64_t spins, spins_found;   /* for the statistics */
};

static inline uint64_t net_poll_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void net_poll_window_init(struct net_poll_window *p, unsigned poll_us)
{
	*p = (struct net_poll_window){ .automatic = poll_us == NET_POLL_AUTO,
				       .fixed_ns = poll_us == NET_POLL_AUTO ? 0 : (uint64_t)poll_us * 1000 };
}

static inline void net_poll_window_note(struct net_poll_window *p, bool worked)
{
	p->worked = worked;
}

/* Spin before sleeping? Fixed: whenever a window is set. Auto: right after
 * a pass that did work, while the window is open. */
static inline bool net_poll_window_wanted(const struct net_poll_window *p)
{
	return p->automatic ? p->worked && p->spin_ns : p->fixed_ns != 0;
}

/* Start spinning: until when. */
static inline uint64_t net_poll_window_start(struct net_poll_window *p)
{
	p->spins++;
	return net_poll_now_ns() + (p->automatic ? p->spin_ns : p->fixed_ns);
}

static inline void net_poll_window_end(struct net_poll_window *p, bool found)
{
	p->spins_found += found;
	if (!p->automatic)
		return;
	if (found)
		p->spin_ns = p->spin_ns * 2 > NET_POLL_AUTO_MAX_NS ? NET_POLL_AUTO_MAX_NS : p->spin_ns * 2;
	else if ((p->spin_ns /= 2) < NET_POLL_AUTO_MIN_NS)
		p->spin_ns = 0;
}

/* After a sleep of slept_ns that ended with work: had we spun that long we
 * would not have slept; open the window to twice that if it is short. */
static inline void net_poll_window_slept(struct net_poll_window *p, uint64_t slept_ns, bool worked)
{
	if (!p->automatic || !worked || slept_ns >= NET_POLL_AUTO_MAX_NS)
		return;
	uint64_t want = 2 * slept_ns < NET_POLL_AUTO_MIN_NS ? NET_POLL_AUTO_MIN_NS : 2 * slept_ns;
	if (want > NET_POLL_AUTO_MAX_NS)
		want = NET_POLL_AUTO_MAX_NS;
	if (want > p->spin_ns)
		p->spin_ns = want;
}

#endif
