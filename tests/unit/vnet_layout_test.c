/* SPDX-License-Identifier: Apache-2.0 */
/* virtio-net queue layout (rx0, tx0, rx1, tx1, ..., ctrl) and how queue
 * pairs are dealt out to worker threads. */
#include <criterion/criterion.h>

#include "devices/virtio/net.h"

Test(vnet_layout, queue_indices_interleave_rx_and_tx_with_ctrl_last)
{
	for (unsigned p = 0; p < VNET_MAX_PAIRS; p++) {
		cr_assert_eq(vnet_rx_queue(p), 2 * p);
		cr_assert_eq(vnet_tx_queue(p), 2 * p + 1);
	}
	for (unsigned n = 1; n <= VNET_MAX_PAIRS; n++) {
		cr_assert_eq(vnet_ctrl_queue(n), 2 * n, "%u pairs", n);
		cr_assert_eq(vnet_ctrl_queue(n), vnet_tx_queue(n - 1) + 1, "ctrl right after the last tx");
	}
	cr_assert_eq(vnet_ctrl_queue(VNET_MAX_PAIRS) + 1, VNET_MAX_QUEUES);
}

/* Check the assignment of `pairs` pairs to `workers` workers. */
static void check_deal(unsigned pairs, unsigned threads, unsigned workers)
{
	unsigned first[VNET_MAX_PAIRS + 4], count[VNET_MAX_PAIRS + 4] = { 0 };
	unsigned prev = 0;
	for (unsigned p = 0; p < pairs; p++) {
		unsigned w = vnet_worker_of_pair(p, pairs, threads);
		cr_assert_lt(w, workers, "N=%u M=%u: pair %u to worker %u", pairs, threads, p, w);
		if (p > 0)
			cr_assert(w == prev || w == prev + 1,
				  "N=%u M=%u: pair %u to worker %u after worker %u (not contiguous)",
				  pairs, threads, p, w, prev);
		else
			cr_assert_eq(w, 0, "N=%u M=%u: pair 0 to worker %u", pairs, threads, w);
		if (count[w]++ == 0)
			first[w] = p;
		prev = w;
	}
	unsigned min = ~0u, max = 0, total = 0;
	for (unsigned w = 0; w < workers; w++) {
		cr_assert_gt(count[w], 0, "N=%u M=%u: worker %u serves nothing", pairs, threads, w);
		cr_assert_eq(first[w] + count[w], w + 1 < workers ? first[w + 1] : pairs,
			     "N=%u M=%u: worker %u's range", pairs, threads, w);
		min = count[w] < min ? count[w] : min;
		max = count[w] > max ? count[w] : max;
		total += count[w];
	}
	cr_assert_eq(total, pairs, "every pair served exactly once");
	cr_assert_leq(max - min, 1, "N=%u M=%u: sizes from %u to %u", pairs, threads, min, max);
}

Test(vnet_layout, every_worker_gets_a_contiguous_balanced_range)
{
	for (unsigned n = 1; n <= 16; n++)
		for (unsigned m = 1; m <= n; m++)
			check_deal(n, m, m);
}

Test(vnet_layout, per_queue_threads_give_one_pair_per_worker)
{
	for (unsigned n = 1; n <= 16; n++) {
		for (unsigned p = 0; p < n; p++) {
			cr_assert_eq(vnet_worker_of_pair(p, n, 0), p, "threads=0");
			cr_assert_eq(vnet_worker_of_pair(p, n, n), p, "threads=N");
			cr_assert_eq(vnet_worker_of_pair(p, n, n + 1), p, "threads>N");
			cr_assert_eq(vnet_worker_of_pair(p, n, 16), p, "threads=16");
		}
		check_deal(n, 0, n);
	}
}

Test(vnet_layout, examples)
{
	/* 16 pairs on 3 workers: 6, 5, 5 or 5, 5, 6 - contiguous either way. */
	unsigned w3[16];
	for (unsigned p = 0; p < 16; p++)
		w3[p] = vnet_worker_of_pair(p, 16, 3);
	cr_assert_eq(w3[0], 0);
	cr_assert_eq(w3[15], 2);
	/* 4 pairs on 2 workers: {0,1} and {2,3}. */
	cr_assert_eq(vnet_worker_of_pair(0, 4, 2), 0);
	cr_assert_eq(vnet_worker_of_pair(1, 4, 2), 0);
	cr_assert_eq(vnet_worker_of_pair(2, 4, 2), 1);
	cr_assert_eq(vnet_worker_of_pair(3, 4, 2), 1);
	/* One worker takes everything. */
	for (unsigned p = 0; p < 16; p++)
		cr_assert_eq(vnet_worker_of_pair(p, 16, 1), 0);
}
