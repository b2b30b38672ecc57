/* Per-queue statistics of a virtio-net device, as a table or JSON. */
#include <inttypes.h>
#include <stdio.h>

#include "devices/virtio/net.h"

static uint64_t rd(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

/* The worker serving pair p, or NULL before DRIVER_OK. */
static const struct net_worker *vnet_worker_for(const struct virtio_net *n, unsigned p)
{
	for (unsigned w = 0; w < n->nr_workers; w++)
		for (unsigned i = 0; i < n->worker[w]->nr_qps; i++)
			if (n->worker[w]->qp[i] == &n->qp[p])
				return n->worker[w];
	return NULL;
}

static void print_table(struct virtio_net *n, FILE *out)
{
	fprintf(out, "net%u: %s %s, %u/%u queue pairs active, %u worker thread%s (%s)\n", n->index,
		n->backend->ops->kind, n->backend->ifname, n->active_pairs, n->nr_pairs, n->nr_workers,
		n->nr_workers == 1 ? "" : "s",
		n->cfg.engine == MINIVMM_ENGINE_EPOLL ? "epoll" : "io_uring");
	fprintf(out, "%-5s %10s %12s %10s %12s %8s %8s %8s %8s %7s %7s %-10s\n", "queue",
		"rx_frames", "rx_bytes", "tx_frames", "tx_bytes", "rx_kicks", "tx_kicks", "irqs",
		"rx_nobuf", "drops", "errors", "worker");
	for (unsigned p = 0; p < n->nr_pairs; p++) {
		const struct net_queue_stats *s = &n->qp[p].stats;
		const struct net_worker *w = vnet_worker_for(n, p);
		fprintf(out, "q%-4u %10" PRIu64 " %12" PRIu64 " %10" PRIu64 " %12" PRIu64 " %8" PRIu64
			" %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %7" PRIu64 " %7" PRIu64 " %-10s\n",
			p, rd(&s->rx_frames), rd(&s->rx_bytes), rd(&s->tx_frames), rd(&s->tx_bytes),
			rd(&s->rx_kicks), rd(&s->tx_kicks), rd(&s->irqs), rd(&s->rx_no_buffer),
			rd(&s->rx_dropped) + rd(&s->rx_filtered) + rd(&s->backend_drops),
			rd(&s->rx_errors) + rd(&s->tx_errors) + rd(&s->tx_dropped), w ? w->cfg.name : "-");
	}
	for (unsigned w = 0; w < n->nr_workers; w++) {
		struct net_worker_usage u;
		net_worker_usage(n->worker[w], &u);
		fprintf(out, "worker %-10s cpu %.3f s, %" PRIu64 " voluntary + %" PRIu64
			" involuntary context switches%s\n",
			n->worker[w]->cfg.name, (double)u.cpu_ns / 1e9, u.voluntary_switches,
			u.involuntary_switches,
			n->worker[w]->cfg.cpu >= 0 ? "" : " (not pinned)");
	}
}

static void print_json(struct virtio_net *n, FILE *out)
{
	fprintf(out, "{\"name\":\"net%u\",\"backend\":\"%s\",\"ifname\":\"%s\",\"engine\":\"%s\","
		"\"queue_pairs\":%u,\"active_pairs\":%u,\"link_up\":%s,\"queues\":[",
		n->index, n->backend->ops->kind, n->backend->ifname,
		n->cfg.engine == MINIVMM_ENGINE_EPOLL ? "epoll" : "uring", n->nr_pairs, n->active_pairs,
		n->link_up ? "true" : "false");
	for (unsigned p = 0; p < n->nr_pairs; p++) {
		const struct net_queue_stats *s = &n->qp[p].stats;
		const struct net_worker *w = vnet_worker_for(n, p);
		fprintf(out, "%s{\"queue\":%u,\"active\":%s,\"worker\":\"%s\",\"rx_frames\":%" PRIu64
			",\"rx_bytes\":%" PRIu64 ",\"tx_frames\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
			",\"rx_kicks\":%" PRIu64 ",\"tx_kicks\":%" PRIu64 ",\"irqs\":%" PRIu64
			",\"rx_no_buffer\":%" PRIu64 ",\"rx_dropped\":%" PRIu64 ",\"rx_filtered\":%" PRIu64
			",\"backend_drops\":%" PRIu64 ",\"rx_errors\":%" PRIu64 ",\"tx_errors\":%" PRIu64
			",\"tx_dropped\":%" PRIu64 ",\"rx_gso_cut\":%" PRIu64 "}",
			p ? "," : "", p, net_qp_active(&n->qp[p]) ? "true" : "false",
			w ? w->cfg.name : "", rd(&s->rx_frames), rd(&s->rx_bytes), rd(&s->tx_frames),
			rd(&s->tx_bytes), rd(&s->rx_kicks), rd(&s->tx_kicks), rd(&s->irqs),
			rd(&s->rx_no_buffer), rd(&s->rx_dropped), rd(&s->rx_filtered),
			rd(&s->backend_drops), rd(&s->rx_errors), rd(&s->tx_errors), rd(&s->tx_dropped), rd(&s->rx_gso_cut));
	}
	fprintf(out, "],\"workers\":[");
	for (unsigned w = 0; w < n->nr_workers; w++) {
		struct net_worker_usage u;
		net_worker_usage(n->worker[w], &u);
		char feat[96];
		net_uring_describe(n->worker[w], feat, sizeof(feat));
		fprintf(out, "%s{\"name\":\"%s\",\"cpu\":%d,\"queues\":%u,\"cpu_ns\":%" PRIu64
			",\"voluntary_switches\":%" PRIu64 ",\"involuntary_switches\":%" PRIu64
			",\"io_uring\":\"%s\"}",
			w ? "," : "", n->worker[w]->cfg.name, n->worker[w]->cfg.cpu,
			n->worker[w]->nr_qps, u.cpu_ns, u.voluntary_switches, u.involuntary_switches, feat);
	}
	fprintf(out, "],\"ctrl_commands\":%" PRIu64 ",\"ctrl_errors\":%" PRIu64 "}", rd(&n->ctrl_commands),
		rd(&n->ctrl_errors));
}

void virtio_net_print_stats(struct virtio_net *n, FILE *out, bool json, bool first)
{
	/* Workers may be starting or stopping: hold the device lock. */
	pthread_mutex_lock(&n->lock);
	/* The kernel's drop counters (packet sockets) reset when read: fold
	 * them into ours. Only this function writes backend_drops. */
	for (unsigned p = 0; p < n->nr_pairs; p++)
		NET_STAT_ADD(&n->qp[p], backend_drops, net_backend_take_drops(n->backend, p));
	if (json) {
		if (!first)
			fputc(',', out);
		print_json(n, out);
	} else {
		print_table(n, out);
	}
	pthread_mutex_unlock(&n->lock);
}
