/* SPDX-License-Identifier: Apache-2.0 */
/* Statistics of the embedding API: minivmm_net_stats() copies a device's
 * counters into the caller's structs at the caller's sizes, and the --stats
 * table and JSON printers are built on it. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/vm.h"

/* The first version's sizes: a caller compiled against an older header
 * can still be served, a smaller struct cannot. */
#define STATS_V1_NET_SIZE (offsetof(struct minivmm_net_stats, ctrl_errors) + sizeof(uint64_t))
#define STATS_V1_QUEUE_SIZE (offsetof(struct minivmm_queue_stats, rx_gso_cut) + sizeof(uint64_t))
#define STATS_V1_WORKER_SIZE sizeof(struct minivmm_worker_stats)

unsigned minivmm_net_count(const struct minivmm *vm)
{
	return vm->nr_nets;
}

/* Copy `have` bytes of the library's struct into a caller's struct of
 * `want` bytes: the prefix both know, zeroes for what only the caller knows. */
static void copy_sized(void *dst, size_t want, const void *src, size_t have)
{
	size_t n = want < have ? want : have;
	memcpy(dst, src, n);
	if (want > n)
		memset((char *)dst + n, 0, want - n);
}

int minivmm_net_stats(struct minivmm *vm, unsigned index, struct minivmm_net_stats *s)
{
	if (index >= vm->nr_nets || s->size < STATS_V1_NET_SIZE ||
	    (s->queues && s->queue_size < STATS_V1_QUEUE_SIZE) ||
	    (s->workers && s->worker_size < STATS_V1_WORKER_SIZE))
		return -EINVAL;
	struct minivmm_net_stats d = { 0 };
	struct minivmm_queue_stats q[VNET_MAX_PAIRS];
	struct minivmm_worker_stats w[VNET_MAX_PAIRS];
	virtio_net_stats(vm->net[index], &d, q, w);

	/* The caller's fields that say where things go stay as they are. */
	d.size = s->size;
	d.queue_size = s->queue_size;
	d.worker_size = s->worker_size;
	d.version = MINIVMM_STATS_VERSION;
	d.queues = s->queues;
	d.max_queues = s->queues ? s->max_queues : 0;
	d.workers = s->workers;
	d.max_workers = s->workers ? s->max_workers : 0;
	if (d.nr_queues > d.max_queues)
		d.nr_queues = d.max_queues;
	if (d.nr_worker_entries > d.max_workers)
		d.nr_worker_entries = d.max_workers;
	for (unsigned i = 0; i < d.nr_queues; i++)
		copy_sized((char *)s->queues + (size_t)i * s->queue_size, s->queue_size, &q[i], sizeof(q[i]));
	for (unsigned i = 0; i < d.nr_worker_entries; i++)
		copy_sized((char *)s->workers + (size_t)i * s->worker_size, s->worker_size, &w[i],
			   sizeof(w[i]));
	copy_sized(s, s->size, &d, sizeof(d));
	return 0;
}

/* ---- the --stats printers -------------------------------------------------- */

struct net_snapshot {
	struct minivmm_net_stats d;
	struct minivmm_queue_stats q[MINIVMM_MAX_QUEUE_PAIRS];
	struct minivmm_worker_stats w[MINIVMM_MAX_QUEUE_PAIRS];
};

static int net_snapshot(struct minivmm *vm, unsigned index, struct net_snapshot *n)
{
	minivmm_net_stats_init(&n->d, n->q, MINIVMM_MAX_QUEUE_PAIRS, n->w, MINIVMM_MAX_QUEUE_PAIRS);
	return minivmm_net_stats(vm, index, &n->d);
}

static void print_table(const struct net_snapshot *n, FILE *out)
{
	const struct minivmm_net_stats *d = &n->d;
	fprintf(out, "%s: %s %s, %u/%u queue pairs active, %u worker thread%s (%s)\n", d->name,
		d->backend, d->ifname, d->active_pairs, d->queue_pairs, d->nr_workers,
		d->nr_workers == 1 ? "" : "s", strcmp(d->engine, "epoll") == 0 ? "epoll" : "io_uring");
	fprintf(out, "%-5s %10s %12s %10s %12s %8s %8s %8s %8s %7s %7s %-10s\n", "queue",
		"rx_frames", "rx_bytes", "tx_frames", "tx_bytes", "rx_kicks", "tx_kicks", "irqs",
		"rx_nobuf", "drops", "errors", "worker");
	for (unsigned p = 0; p < d->nr_queues; p++) {
		const struct minivmm_queue_stats *q = &n->q[p];
		fprintf(out, "q%-4u %10" PRIu64 " %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %8" PRIu64
			" %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %7" PRIu64 " %7" PRIu64 " %-10s\n",
			q->queue, q->rx_frames, q->rx_bytes, q->tx_frames, q->tx_bytes, q->rx_kicks,
			q->tx_kicks, q->irqs, q->rx_no_buffer,
			q->rx_dropped + q->rx_filtered + q->backend_drops,
			q->rx_errors + q->tx_errors + q->tx_dropped, q->worker[0] ? q->worker : "-");
	}
	for (unsigned i = 0; i < d->nr_worker_entries; i++) {
		const struct minivmm_worker_stats *w = &n->w[i];
		fprintf(out, "worker %-10s cpu %.3f s, %" PRIu64 " voluntary + %" PRIu64
			" involuntary context switches%s\n",
			w->name, (double)w->cpu_ns / 1e9, w->voluntary_switches, w->involuntary_switches,
			w->cpu >= 0 ? "" : " (not pinned)");
	}
}

static void print_json(const struct net_snapshot *n, FILE *out)
{
	const struct minivmm_net_stats *d = &n->d;
	fprintf(out, "{\"name\":\"%s\",\"backend\":\"%s\",\"ifname\":\"%s\",\"engine\":\"%s\","
		"\"queue_pairs\":%u,\"active_pairs\":%u,\"link_up\":%s,\"queues\":[",
		d->name, d->backend, d->ifname, d->engine, d->queue_pairs, d->active_pairs,
		d->link_up ? "true" : "false");
	for (unsigned p = 0; p < d->nr_queues; p++) {
		const struct minivmm_queue_stats *q = &n->q[p];
		fprintf(out, "%s{\"queue\":%u,\"active\":%s,\"worker\":\"%s\",\"rx_frames\":%" PRIu64
			",\"rx_bytes\":%" PRIu64 ",\"tx_frames\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
			",\"rx_kicks\":%" PRIu64 ",\"tx_kicks\":%" PRIu64 ",\"irqs\":%" PRIu64
			",\"rx_no_buffer\":%" PRIu64 ",\"rx_dropped\":%" PRIu64 ",\"rx_filtered\":%" PRIu64
			",\"backend_drops\":%" PRIu64 ",\"rx_errors\":%" PRIu64 ",\"tx_errors\":%" PRIu64
			",\"tx_dropped\":%" PRIu64 ",\"rx_gso_cut\":%" PRIu64 ",\"rx_bounced\":%" PRIu64
			",\"tx_bounced\":%" PRIu64 "}",
			p ? "," : "", q->queue, q->active ? "true" : "false", q->worker, q->rx_frames,
			q->rx_bytes, q->tx_frames, q->tx_bytes, q->rx_kicks, q->tx_kicks, q->irqs,
			q->rx_no_buffer, q->rx_dropped, q->rx_filtered, q->backend_drops, q->rx_errors,
			q->tx_errors, q->tx_dropped, q->rx_gso_cut, q->rx_bounced, q->tx_bounced);
	}
	fprintf(out, "],\"workers\":[");
	for (unsigned i = 0; i < d->nr_worker_entries; i++) {
		const struct minivmm_worker_stats *w = &n->w[i];
		fprintf(out, "%s{\"name\":\"%s\",\"cpu\":%d,\"queues\":%u,\"cpu_ns\":%" PRIu64
			",\"voluntary_switches\":%" PRIu64 ",\"involuntary_switches\":%" PRIu64
			",\"io_uring\":\"%s\"}",
			i ? "," : "", w->name, w->cpu, w->queues, w->cpu_ns, w->voluntary_switches,
			w->involuntary_switches, w->io_uring);
	}
	fprintf(out, "],\"ctrl_commands\":%" PRIu64 ",\"ctrl_errors\":%" PRIu64 "}", d->ctrl_commands,
		d->ctrl_errors);
}

static void write_stats(struct minivmm *vm, FILE *out, int json)
{
	if (json)
		fputs("{\"net\":[", out);
	for (unsigned i = 0; i < vm->nr_nets; i++) {
		struct net_snapshot n;
		if (net_snapshot(vm, i, &n))
			continue;
		if (json) {
			if (i)
				fputc(',', out);
			print_json(&n, out);
		} else {
			print_table(&n, out);
		}
	}
	if (json)
		fputs("]}\n", out);
}

/* Composed in memory, then written at once: stderr is unbuffered, so
 * written piecewise the JSON line would reach the file in dozens of
 * writes, and a harness reading it right after SIGUSR1 could take half a
 * line for the whole. */
void minivmm_print_stats(struct minivmm *vm, FILE *out, int json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (mem) {
		write_stats(vm, mem, json);
		if (fclose(mem) == 0) {
			fwrite(text, 1, len, out);
			free(text);
			fflush(out);
			return;
		}
		free(text);
	}
	write_stats(vm, out, json); /* out of memory: piecewise, but printed */
	fflush(out);
}
