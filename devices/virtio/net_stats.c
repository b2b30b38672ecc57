/* SPDX-License-Identifier: Apache-2.0 */
/* Statistics of a virtio-net device, into the structs of the embedding API
 * (minivmm.h). vmm/stats.c copies them out to the caller and prints the
 * --stats table and JSON from them. */
#include <stdio.h>
#include <string.h>

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

static void vnet_queue_stats(const struct virtio_net *n, unsigned p, struct minivmm_queue_stats *q)
{
	const struct net_queue_stats *s = &n->qp[p].stats;
	const struct net_worker *w = vnet_worker_for(n, p);
	memset(q, 0, sizeof(*q));
	q->queue = p;
	q->active = net_qp_active(&n->qp[p]);
	snprintf(q->worker, sizeof(q->worker), "%s", w ? w->cfg.name : "");
	q->rx_frames = rd(&s->rx_frames);
	q->rx_bytes = rd(&s->rx_bytes);
	q->tx_frames = rd(&s->tx_frames);
	q->tx_bytes = rd(&s->tx_bytes);
	q->rx_kicks = rd(&s->rx_kicks);
	q->tx_kicks = rd(&s->tx_kicks);
	q->irqs = rd(&s->irqs);
	q->rx_no_buffer = rd(&s->rx_no_buffer);
	q->rx_dropped = rd(&s->rx_dropped);
	q->rx_filtered = rd(&s->rx_filtered);
	q->backend_drops = rd(&s->backend_drops);
	q->rx_errors = rd(&s->rx_errors);
	q->tx_errors = rd(&s->tx_errors);
	q->tx_dropped = rd(&s->tx_dropped);
	q->rx_gso_cut = rd(&s->rx_gso_cut);
	q->rx_bounced = rd(&s->rx_bounced);
	q->tx_bounced = rd(&s->tx_bounced);
}

static void vnet_worker_stats(const struct net_worker *nw, struct minivmm_worker_stats *w)
{
	struct net_worker_usage u;
	net_worker_usage(nw, &u);
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", nw->cfg.name);
	w->cpu = nw->cfg.cpu;
	w->queues = nw->nr_qps;
	w->cpu_ns = u.cpu_ns;
	w->voluntary_switches = u.voluntary_switches;
	w->involuntary_switches = u.involuntary_switches;
	net_uring_describe(nw, w->io_uring, sizeof(w->io_uring));
}

void virtio_net_stats(struct virtio_net *n, struct minivmm_net_stats *d,
		      struct minivmm_queue_stats q[VNET_MAX_PAIRS],
		      struct minivmm_worker_stats w[VNET_MAX_PAIRS])
{
	/* Workers may be starting or stopping: hold the device lock. */
	pthread_mutex_lock(&n->lock);
	/* The kernel's drop counters (packet sockets) reset when read: fold
	 * them into ours. Only this function writes backend_drops. */
	for (unsigned p = 0; p < n->nr_pairs; p++)
		NET_STAT_ADD(&n->qp[p], backend_drops, net_backend_take_drops(n->backend, p));
	d->index = n->index;
	snprintf(d->name, sizeof(d->name), "net%u", n->index);
	snprintf(d->backend, sizeof(d->backend), "%s", n->backend->ops->kind);
	snprintf(d->ifname, sizeof(d->ifname), "%s", n->backend->ifname);
	snprintf(d->engine, sizeof(d->engine), "%s",
		 n->cfg.engine == MINIVMM_ENGINE_EPOLL ? "epoll" : "uring");
	d->queue_pairs = n->nr_pairs;
	d->active_pairs = n->active_pairs;
	d->nr_workers = n->nr_workers;
	d->link_up = n->link_up && !n->link_set_down;
	d->link_set_down = n->link_set_down;
	d->nr_queues = n->nr_pairs;
	for (unsigned p = 0; p < n->nr_pairs; p++)
		vnet_queue_stats(n, p, &q[p]);
	d->nr_worker_entries = n->nr_workers;
	for (unsigned i = 0; i < n->nr_workers; i++)
		vnet_worker_stats(n->worker[i], &w[i]);
	d->ctrl_commands = rd(&n->ctrl_commands);
	d->ctrl_errors = rd(&n->ctrl_errors);
	struct rate_limit_stats rl;
	uint64_t now = dp_now_ns();
	rate_limit_stats(&n->rx_limit, now, &rl);
	d->rx_throttled = rl.throttled;
	d->rx_throttled_ns = rl.throttled_ns;
	rate_limit_stats(&n->tx_limit, now, &rl);
	d->tx_throttled = rl.throttled;
	d->tx_throttled_ns = rl.throttled_ns;
	pthread_mutex_unlock(&n->lock);
}
