/* SPDX-License-Identifier: Apache-2.0 */
/* virtio-net: feature set, config space, activation on DRIVER_OK (virtqueues
 * validated, queue pairs handed to workers), reset, VQ_PAIRS_SET. */
#include "devices/virtio/net.h"

#include <errno.h>
#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "net/datapath.h"
#include "net/helper.h"
#include "net/packet.h"
#include "net/rate_limit.h"
#include "net/tap.h"

#define F(bit) (1ull << (bit))

/* Everything this device offers; MQ only with several pairs. */
static uint64_t vnet_offered_features(const struct virtio_net *n)
{
	uint64_t f = F(VIRTIO_F_VERSION_1) | F(VIRTIO_RING_F_EVENT_IDX) |
		     F(VIRTIO_RING_F_INDIRECT_DESC) |
		     F(VIRTIO_NET_F_MAC) | F(VIRTIO_NET_F_MTU) | F(VIRTIO_NET_F_STATUS) |
		     F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) |
		     F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_HOST_ECN) |
		     F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO6) |
		     F(VIRTIO_NET_F_GUEST_ECN) | F(VIRTIO_NET_F_MRG_RXBUF) |
		     F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_CTRL_RX) |
		     F(VIRTIO_NET_F_CTRL_MAC_ADDR) | F(VIRTIO_NET_F_CTRL_GUEST_OFFLOADS);
	if (n->nr_pairs > 1)
		f |= F(VIRTIO_NET_F_MQ);
	/* Offer only what the backend can carry towards the guest. */
	if (!n->backend->guest_gso)
		f &= ~(F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN));
	/* No partial checksums either way: no checksum offload and no TSO
	 * (which needs it) in either direction. */
	if (!n->backend->csum_offload)
		f &= ~(F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_HOST_TSO4) |
		       F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_HOST_ECN) | F(VIRTIO_NET_F_GUEST_TSO4) |
		       F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN));
	return f;
}

static uint64_t vnet_features(void *dev)
{
	return vnet_offered_features(dev);
}

/* ---- config space --------------------------------------------------------- */

static void vnet_config_bytes(const struct virtio_net *n, struct virtio_net_config *c)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->mac, n->mac, 6);
	c->status = n->link_up && !n->link_set_down ? VIRTIO_NET_S_LINK_UP : 0;
	c->max_virtqueue_pairs = (uint16_t)n->nr_pairs;
	c->mtu = n->mtu;
}

static void vnet_config_read(void *dev, uint32_t off, uint8_t *data, unsigned len)
{
	struct virtio_net *n = dev;
	struct virtio_net_config c;
	pthread_mutex_lock(&n->lock);
	vnet_config_bytes(n, &c);
	pthread_mutex_unlock(&n->lock);
	if (off < sizeof(c) && len <= sizeof(c) - off)
		memcpy(data, (uint8_t *)&c + off, len);
}

static void vnet_config_write(void *dev, uint32_t off, const uint8_t *data, unsigned len)
{
	/* VIRTIO 1.x: the MAC is written through the control queue
	 * (CTRL_MAC_ADDR), never through config space. Ignore writes. */
	(void)dev;
	(void)off;
	(void)data;
	(void)len;
}

/* ---- rings, as the data path sees them ----------------------------------- */

static int ring_pop(void *r, struct guest_chain *c) { return virtq_pop(r, c); }
static void ring_push(void *r, uint16_t head, uint32_t len) { virtq_push(r, head, len); }
static void ring_publish(void *r) { virtq_publish(r); }
static bool ring_should_signal(void *r) { return virtq_should_signal(r); }
static void ring_disable_kicks(void *r) { virtq_disable_kicks(r); }
static bool ring_enable_kicks(void *r) { return virtq_enable_kicks(r); }
static uint16_t ring_pending(void *r) { return virtq_pending(r); }
static const char *ring_error(void *r) { return virtq_error_text(((struct virtq *)r)->error); }

static bool vnet_rx_accept(void *opaque, const uint8_t *dst)
{
	struct virtio_net *n = opaque;
	return vnet_filter_accepts(&n->filter, dst);
}

static const struct net_ring_ops vnet_ring_ops = {
	.pop = ring_pop, .push = ring_push, .publish = ring_publish,
	.should_signal = ring_should_signal, .disable_kicks = ring_disable_kicks,
	.enable_kicks = ring_enable_kicks, .pending = ring_pending, .error = ring_error,
};

static void vnet_signal(void *opaque)
{
	struct virtio_net *n = opaque;
	virtio_mmio_signal_used(n->transport);
}

/* Every line a guest can cause (ring errors, failed activations, the data
 * path's complaints) passes the device's limiter: a guest that breaks its
 * device, resets it and breaks it again in a loop would otherwise write a
 * few lines per cycle, and a new DRIVER_OK makes new per-queue limiters. */
#define VNET_LOG_BURST        5
#define VNET_LOG_INTERVAL_NS  1000000000ull

void vnet_say(struct virtio_net *n, const char *line)
{
	unsigned held;
	if (!log_limit_take(&n->log_limit, log_limit_now_ns(), &held))
		return;
	char full[720];
	if (held)
		snprintf(full, sizeof(full), "net%u: %s (%u more lines like it held back)", n->index, line, held);
	else
		snprintf(full, sizeof(full), "net%u: %s", n->index, line);
	machine_log(n->ev, full);
}

static void vnet_log(void *opaque, const char *line)
{
	vnet_say(opaque, line);
}

static void vnet_fail(void *opaque, const char *why)
{
	struct virtio_net *n = opaque;
	char line[600];
	snprintf(line, sizeof(line), "guest ring error (%s): device needs reset", why);
	vnet_say(n, line);
	virtio_mmio_set_needs_reset(n->transport, why);
}

static void vnet_host_fail(void *opaque, const char *why)
{
	struct virtio_net *n = opaque;
	char line[700];
	snprintf(line, sizeof(line), "net%u: host failure: %s", n->index, why);
	machine_stop(n->ev, MINIVMM_EXIT_HOST_ERROR, line);
}

/* ---- activation ------------------------------------------------------------- */

unsigned vnet_worker_of_pair(unsigned pair, unsigned pairs, unsigned threads)
{
	if (threads == 0 || threads >= pairs)
		return pair;
	/* Worker w gets pairs [w*pairs/threads, (w+1)*pairs/threads). */
	return (unsigned)(((unsigned long)pair * threads) / pairs);
}

static uint32_t vnet_rx_frame_max(const struct virtio_net *n, uint64_t features)
{
	bool gso = features & (F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO6));
	/* Ethernet header + VLAN tag + MTU, or a whole 64 KiB GSO frame. */
	uint32_t frame = gso ? 65550 : 14 + 4 + n->mtu;
	return (uint32_t)sizeof(struct virtio_net_hdr_v1) + frame;
}

static int vnet_setup_queue(struct virtio_net *n, unsigned q, uint64_t features,
			    struct vmm_err *err)
{
	const struct virtio_queue_config *c = virtio_mmio_queue(n->transport, q);
	if (!c->ready)
		return vmm_err_set(err, EINVAL, "queue %u not ready at DRIVER_OK", q);
	struct vmm_err e = { 0 };
	if (virtq_init(&n->vq[q], n->mem, c->size, c->desc, c->driver, c->device,
		       features & F(VIRTIO_RING_F_EVENT_IDX),
		       features & F(VIRTIO_RING_F_INDIRECT_DESC), &e) < 0)
		return vmm_err_set(err, EINVAL, "queue %u: %s", q, e.msg);
	return 0;
}

/* The NET_RX_* bits for these GUEST_* features. */
static unsigned vnet_rx_offloads(uint64_t features)
{
	return (features & F(VIRTIO_NET_F_GUEST_CSUM) ? NET_RX_CSUM : 0) |
	       (features & F(VIRTIO_NET_F_GUEST_TSO4) ? NET_RX_TSO4 : 0) |
	       (features & F(VIRTIO_NET_F_GUEST_TSO6) ? NET_RX_TSO6 : 0) |
	       (features & F(VIRTIO_NET_F_GUEST_ECN) ? NET_RX_ECN : 0);
}

void vnet_publish_rx_offloads(struct virtio_net *n, uint64_t features)
{
	for (unsigned p = 0; p < n->nr_pairs; p++)
		net_qp_set_rx_offloads(&n->qp[p], vnet_rx_offloads(features));
}

static void vnet_setup_pair(struct virtio_net *n, unsigned p, uint64_t features)
{
	struct net_queue_pair *qp = &n->qp[p];
	struct net_queue_stats kept = qp->stats;   /* counters survive a reset */
	bool paused = qp->paused;
	memset(qp, 0, sizeof(*qp));
	qp->stats = kept;
	/* The operator's state survives the guest's: a driver that resets
	 * its device finds the link as it was set and the VM as paused. */
	qp->paused = paused;
	qp->link_down = n->link_set_down;
	qp->index = p;
	qp->guest = &n->guest;
	qp->rx = (struct net_ring){ .ring = &n->vq[vnet_rx_queue(p)],
				    .kick_fd = n->transport->kick_fd[vnet_rx_queue(p)] };
	qp->tx = (struct net_ring){ .ring = &n->vq[vnet_tx_queue(p)],
				    .kick_fd = n->transport->kick_fd[vnet_tx_queue(p)] };
	qp->io = &n->backend->io[p];
	qp->vnet_hdr_len = sizeof(struct virtio_net_hdr_v1);
	qp->rx_frame_max = vnet_rx_frame_max(n, features);
	qp->mrg_rxbuf = features & F(VIRTIO_NET_F_MRG_RXBUF);
	qp->rx_offloads = vnet_rx_offloads(features);
	qp->rx_ring_size = n->vq[vnet_rx_queue(p)].size;
	qp->active = false;
	/* Every pair shares the device's budget; an unlimited limiter costs
	 * an atomic load per frame and can be given a limit live. */
	qp->rx_limit = &n->rx_limit;
	qp->tx_limit = &n->tx_limit;
}

static int vnet_create_datapaths(struct virtio_net *n, unsigned pairs, struct vmm_err *err)
{
	for (unsigned p = 0; p < pairs; p++) {
		n->qp[p].dp = dp_queue_create(&n->qp[p]);
		if (!n->qp[p].dp)
			return vmm_err_set(err, ENOMEM, "out of memory for queue pair %u", p);
	}
	return 0;
}

static void vnet_free_datapaths(struct virtio_net *n)
{
	for (unsigned p = 0; p < n->nr_pairs; p++) {
		dp_queue_free(n->qp[p].dp);
		n->qp[p].dp = NULL;
	}
}

static bool vnet_threads_auto(const struct virtio_net *n)
{
	return n->cfg.threads == MINIVMM_THREADS_AUTO;
}

/* How many pairs get workers and how many workers they get. threads=auto
 * (the default): the active pairs only, over no more workers than the host
 * has cores left after the vCPUs (busy workers on the vCPUs' cores only
 * fight them), or one per CPU of a cpus= list; VQ_PAIRS_SET redistributes
 * (vnet_set_active_pairs restarts them). */
static void vnet_worker_shape(const struct virtio_net *n, unsigned usable_pairs, unsigned *pairs,
			      unsigned *threads)
{
	if (vnet_threads_auto(n)) {
		/* CPUs listed for the workers (cpus=) say how many may run. */
		unsigned most = n->cfg.nr_cpus ? n->cfg.nr_cpus : n->auto_workers;
		*pairs = n->active_pairs < usable_pairs ? n->active_pairs : usable_pairs;
		*threads = *pairs < most ? *pairs : most;
		return;
	}
	*pairs = usable_pairs;
	*threads = n->cfg.threads && n->cfg.threads < usable_pairs ? n->cfg.threads : usable_pairs;
}

static struct net_worker_config vnet_worker_config(const struct virtio_net *n, unsigned w)
{
	return (struct net_worker_config){
		.engine = n->cfg.engine == MINIVMM_ENGINE_EPOLL ? NET_ENGINE_EPOLL : NET_ENGINE_URING,
		.poll_us = n->cfg.poll_us == MINIVMM_POLL_AUTO ? NET_POLL_AUTO : n->cfg.poll_us,
		.uring = { .no_fixed_files = !n->cfg.uring_fixed_files,
			   .no_defer_taskrun = !n->cfg.uring_defer_taskrun,
			   .fixed_buffers = n->cfg.uring_fixed_buffers, .mem = n->mem },
		.cpu = w < n->cfg.nr_cpus ? n->cfg.cpus[w] : -1,
		.unpinned = n->unpinned,
		.confine = n->ev->confine,
		.spawner = n->ev->spawner,
		.backend = n->backend,
	};
}

int vnet_start_workers(struct virtio_net *n, unsigned usable_pairs, struct vmm_err *err)
{
	unsigned pairs, threads;
	vnet_worker_shape(n, usable_pairs, &pairs, &threads);
	for (unsigned w = 0; w < threads; w++) {
		struct net_queue_pair *mine[VNET_MAX_PAIRS];
		unsigned count = 0;
		for (unsigned p = 0; p < pairs; p++)
			if (vnet_worker_of_pair(p, pairs, threads < pairs ? threads : 0) == w)
				mine[count++] = &n->qp[p];
		struct net_worker_config wc = vnet_worker_config(n, w);
		if (threads == pairs)
			snprintf(wc.name, sizeof(wc.name), "net%u-q%u", (uint8_t)n->index, (uint8_t)w);
		else
			snprintf(wc.name, sizeof(wc.name), "net%u-w%u", (uint8_t)n->index, (uint8_t)w);
		int rc = net_worker_start(&n->worker[w], &wc, mine, count, err);
		if (rc)
			return rc;
		n->nr_workers = w + 1;
	}
	return 0;
}

void vnet_stop_workers(struct virtio_net *n)
{
	for (unsigned w = 0; w < n->nr_workers; w++) {
		net_worker_stop(n->worker[w]);
		n->worker[w] = NULL;
	}
	n->nr_workers = 0;
}

/* Wake every worker so it notices a change of active pairs. A spurious
 * kick on a TX queue is harmless: the worker just finds nothing new. */
static void vnet_poke_workers(struct virtio_net *n)
{
	uint64_t one = 1;
	for (unsigned p = 0; p < n->nr_pairs; p++)
		if (write(n->qp[p].tx.kick_fd, &one, sizeof(one)) < 0) {
		}
}

static void vnet_log_error(struct virtio_net *n, const char *what, const struct vmm_err *e)
{
	char line[600];
	snprintf(line, sizeof(line), "%s: %s", what, e->msg);
	vnet_say(n, line);
}

/* Steer the backend to pairs [0, k) and mark them active. The backend first,
 * so no frame lands on a pair being shut. With a backend that swaps fds to
 * steer, no worker may be running. */
static void vnet_steer(struct virtio_net *n, unsigned k)
{
	for (unsigned p = 0; p < n->nr_pairs; p++) {
		struct vmm_err e = { 0 };
		if (net_backend_set_queue_active(n->backend, p, p < k, &e) < 0)
			vnet_log_error(n, "cannot steer the backend", &e);
		__atomic_store_n(&n->qp[p].active, p < k && n->activated, __ATOMIC_RELEASE);
	}
	n->active_pairs = k;
}

int vnet_set_active_pairs(struct virtio_net *n, unsigned k)
{
	if (k < 1 || k > n->nr_pairs || (n->activated && k > n->usable_pairs))
		return -EINVAL;
	/* A backend that swaps fds to steer (packet sockets) needs its workers
	 * stopped meanwhile; their queue state lives on in qp->dp. */
	bool restart = n->activated && k != n->active_pairs &&
		       (n->backend->ops->restart_to_steer || vnet_threads_auto(n));
	if (restart)
		vnet_stop_workers(n);
	vnet_steer(n, k);
	if (restart) {
		struct vmm_err e = { 0 };
		if (vnet_start_workers(n, n->usable_pairs, &e) < 0) {
			vnet_log_error(n, "cannot restart queue workers", &e);
			virtio_mmio_set_needs_reset(n->transport, e.msg);
		}
		/* The ack follows this: the pairs in use must serve by then (an
		 * xdp queue's socket bound and in the XSKMAP), or the first
		 * frames the host sends to them pass the XDP program and are
		 * lost uncounted. A start that failed is reported by its worker.
		 * Bounded: a paced start waits its turn at most (net/xdp.h). */
		for (unsigned w = 0; w < n->nr_workers; w++)
			(void)net_worker_wait_started(n->worker[w]);
	} else if (n->activated) {
		vnet_poke_workers(n);
	}
	return 0;
}

/* A driver may set up fewer pairs than offered (spec 5.1.5): the pairs
 * usable are those up to the first one it left unready. Pair 0 must be. */
static unsigned vnet_ready_pairs(const struct virtio_net *n, unsigned offered)
{
	unsigned p = 0;
	while (p < offered && virtio_mmio_queue(n->transport, vnet_rx_queue(p))->ready &&
	       virtio_mmio_queue(n->transport, vnet_tx_queue(p))->ready)
		p++;
	return p;
}

static int vnet_activate_locked(struct virtio_net *n, uint64_t features, struct vmm_err *err)
{
	if (n->activated)
		return 0;   /* the transport activates once per reset; be sure */
	unsigned pairs = vnet_ready_pairs(n, (features & F(VIRTIO_NET_F_MQ)) ? n->nr_pairs : 1);
	/* A driver may leave queues it does not use unset (Linux's virtio core
	 * skips queues it has no name for, and QEMU accepts it): a control
	 * queue negotiated but never made ready is simply not served. */
	bool ctrl = (features & F(VIRTIO_NET_F_CTRL_VQ)) &&
		    virtio_mmio_queue(n->transport, vnet_ctrl_queue(n->nr_pairs))->ready;
	if (pairs == 0)
		return vmm_err_set(err, EINVAL, "queue pair 0 not ready at DRIVER_OK");
	int rc = 0;
	for (unsigned p = 0; p < pairs && rc == 0; p++) {
		rc = vnet_setup_queue(n, vnet_rx_queue(p), features, err);
		if (rc == 0)
			rc = vnet_setup_queue(n, vnet_tx_queue(p), features, err);
	}
	if (rc == 0 && ctrl)
		rc = vnet_setup_queue(n, vnet_ctrl_queue(n->nr_pairs), features, err);
	if (rc)
		return rc;

	rc = n->backend->ops->set_offload(n->backend, tap_offloads_from_features(features), err);
	if (rc)
		return rc;
	n->features = n->guest_offloads = features;
	n->usable_pairs = pairs;
	for (unsigned p = 0; p < pairs; p++)
		vnet_setup_pair(n, p, features);
	rc = vnet_create_datapaths(n, pairs, err);
	if (rc)
		return rc;
	/* After DRIVER_OK (and after every reset) only the first pair carries
	 * traffic until VQ_PAIRS_SET says otherwise (spec 5.1.6.5.5). Steered
	 * before the workers start: they take the backend's fds as they are. */
	n->activated = true;
	vnet_steer(n, 1);
	rc = vnet_start_workers(n, pairs, err);
	if (rc == 0 && ctrl)
		rc = vnet_ctrl_start(n, err);
	if (rc) {
		vnet_ctrl_stop(n);
		vnet_stop_workers(n);
		vnet_free_datapaths(n);
		n->activated = false;
		vnet_steer(n, 1);
		return rc;
	}
	return 0;
}

static int vnet_activate(void *dev, uint64_t features, struct vmm_err *err)
{
	struct virtio_net *n = dev;
	pthread_mutex_lock(&n->lock);
	int rc = vnet_activate_locked(n, features, err);
	pthread_mutex_unlock(&n->lock);
	if (rc)
		vnet_log_error(n, "cannot start (device needs reset)", err);
	return rc;
}

static void vnet_reset(void *dev)
{
	struct virtio_net *n = dev;
	/* The control thread takes n->lock for VQ_PAIRS_SET: stop it first. */
	vnet_ctrl_stop(n);
	pthread_mutex_lock(&n->lock);
	vnet_stop_workers(n);
	vnet_free_datapaths(n);
	n->activated = false;
	n->features = n->guest_offloads = 0;
	/* The reset before the device is destroyed: the backend is closed
	 * next, so there is nothing to steer (and an xdp backend would open
	 * drain sockets on the main thread, whose seccomp list has no socket). */
	if (!n->destroying)
		vnet_set_active_pairs(n, 1);
	memset(&n->filter, 0, sizeof(n->filter));
	memcpy(n->filter.mac, n->mac, 6);
	n->filter.promisc = true;   /* until the driver configures filtering */
	pthread_mutex_unlock(&n->lock);
}

static const struct virtio_device_ops vnet_ops = {
	.device_id = 1,   /* VIRTIO_ID_NET */
	.features = vnet_features,
	.config_read = vnet_config_read,
	.config_write = vnet_config_write,
	.activate = vnet_activate,
	.reset = vnet_reset,
};

/* ---- creation ----------------------------------------------------------------- */

/* A locally administered MAC that stays the same for the same interface
 * name and device index across runs (FNV-1a of both). */
static void vnet_stable_mac(const char *ifname, unsigned index, uint8_t mac[6])
{
	uint32_t h = 2166136261u;
	for (const char *p = ifname; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	h = (h ^ index) * 16777619u;
	mac[0] = 0x02;   /* locally administered, unicast */
	mac[1] = 0x4d;   /* 'M' */
	mac[2] = (uint8_t)(h >> 24);
	mac[3] = (uint8_t)(h >> 16);
	mac[4] = (uint8_t)(h >> 8);
	mac[5] = (uint8_t)h;
}

static void vnet_rate_limit_init(struct virtio_net *n, const struct minivmm_net_config *cfg)
{
	uint64_t now = dp_now_ns();
	rate_limit_init(&n->rx_limit, &cfg->rx_limit, now);
	rate_limit_init(&n->tx_limit, &cfg->tx_limit, now);
}

/* Wake every pair's worker as a guest kick would (it then sees what
 * changed: a pause, a new rate limit). With n->lock held. */
static void vnet_kick_pairs_locked(struct virtio_net *n)
{
	uint64_t one = 1;
	for (unsigned p = 0; n->activated && p < n->nr_pairs; p++) {
		int fds[2] = { n->qp[p].rx.kick_fd, n->qp[p].tx.kick_fd };
		for (int d = 0; d < 2; d++)
			if (fds[d] >= 0 && write(fds[d], &one, sizeof(one)) < 0) {
				/* full: it wakes anyway */
			}
	}
}

void virtio_net_set_rate_limit(struct virtio_net *n, const struct minivmm_rate_limit *rx,
			       const struct minivmm_rate_limit *tx)
{
	uint64_t now = dp_now_ns();
	if (rx)
		rate_limit_set(&n->rx_limit, rx, now);
	if (tx)
		rate_limit_set(&n->tx_limit, tx, now);
	/* A pair waiting out a debt of the old limits asks the new ones now:
	 * its worker wakes as on a kick, sees the limiter changed, and goes on. */
	pthread_mutex_lock(&n->lock);
	vnet_kick_pairs_locked(n);
	pthread_mutex_unlock(&n->lock);
}

int virtio_net_set_link(struct virtio_net *n, bool up)
{
	pthread_mutex_lock(&n->lock);
	if (n->link_set_down == !up) {
		pthread_mutex_unlock(&n->lock);
		return -EALREADY;
	}
	n->link_set_down = !up;
	for (unsigned p = 0; p < n->nr_pairs; p++)
		__atomic_store_n(&n->qp[p].link_down, !up, __ATOMIC_RELEASE);
	/* Up: RX waits for no kick from the guest, its buffers are there. */
	vnet_kick_pairs_locked(n);
	pthread_mutex_unlock(&n->lock);
	virtio_mmio_config_changed(n->transport);
	return 0;
}

int virtio_net_pause(struct virtio_net *n, bool pause, unsigned wait_ms)
{
	pthread_mutex_lock(&n->lock);
	for (unsigned p = 0; p < n->nr_pairs; p++)
		__atomic_store_n(&n->qp[p].paused, pause, __ATOMIC_RELEASE);
	vnet_kick_pairs_locked(n);
	/* Under the lock: no worker is started or stopped meanwhile (the
	 * link thread waits), and the workers need it for nothing. */
	int rc = 0;
	for (unsigned waited = 0; pause && n->activated; waited++) {
		bool all = true;
		for (unsigned i = 0; i < n->nr_workers && all; i++)
			all = net_worker_is_paused(n->worker[i]);
		if (all)
			break;
		if (waited >= wait_ms) {
			rc = -ETIMEDOUT;
			break;
		}
		struct timespec ms = { .tv_nsec = 1000000 };
		nanosleep(&ms, NULL);
	}
	pthread_mutex_unlock(&n->lock);
	return rc;
}

void virtio_net_get_rate_limit(struct virtio_net *n, struct minivmm_rate_limit *rx, struct minivmm_rate_limit *tx)
{
	if (rx)
		rate_limit_get(&n->rx_limit, rx);
	if (tx)
		rate_limit_get(&n->tx_limit, tx);
}

int virtio_net_create(struct virtio_net **out, unsigned index, const struct minivmm_net_config *cfg,
		      struct net_backend *backend, const struct machine *ev,
		      const struct guest_mem *mem, uint64_t mmio_base, unsigned gsi,
		      unsigned auto_workers, struct vmm_err *err)
{
	*out = NULL;
	struct virtio_net *n = calloc(1, sizeof(*n));
	if (!n) {
		net_backend_destroy(backend);
		return vmm_err_set(err, ENOMEM, "out of memory for net%u", index);
	}
	pthread_mutex_init(&n->lock, NULL);
	log_limit_init(&n->log_limit, VNET_LOG_BURST, VNET_LOG_INTERVAL_NS);
	vnet_rate_limit_init(n, cfg);
	n->index = index;
	n->cfg = *cfg;
	n->mem = mem;
	n->ev = ev;
	n->nr_pairs = cfg->queues;
	n->mtu = (uint16_t)cfg->mtu;
	n->ctrl_stop_fd = -1;
	n->filter.promisc = true;
	if (sched_getaffinity(0, sizeof(n->unpinned), &n->unpinned) < 0) {
		CPU_ZERO(&n->unpinned);
		for (int c = 0; c < CPU_SETSIZE; c++)
			CPU_SET(c, &n->unpinned);
	}
	n->guest = (struct net_guest){ .ops = &vnet_ring_ops, .opaque = n,
				       .signal = vnet_signal, .fail = vnet_fail, .host_fail = vnet_host_fail,
				       .rx_accept = vnet_rx_accept, .backend_lost = vnet_backend_lost,
				       .log = vnet_log };
	n->link_wake_fd = n->link_stop_fd = -1;
	n->backend = backend;
	n->auto_workers = auto_workers ? auto_workers : 1;
	*out = n;

	int rc = 0;
	if (cfg->engine == MINIVMM_ENGINE_URING) {
		rc = net_uring_probe(err);
		if (rc)
			return rc;
	}
	if (cfg->mac_set)
		memcpy(n->mac, cfg->mac, 6);
	else
		vnet_stable_mac(n->backend->ifname, index, n->mac);
	memcpy(n->filter.mac, n->mac, 6);

	n->ctrl_stop_fd = eventfd(0, EFD_CLOEXEC);
	if (n->ctrl_stop_fd < 0)
		return vmm_err_sys(err, errno, "eventfd for net%u's control queue", index);
	unsigned queues = 2 * n->nr_pairs + 1;
	rc = virtio_mmio_create(&n->transport, ev, mmio_base, gsi, queues,
				(uint16_t)cfg->queue_size, &vnet_ops, n, err);
	if (rc)
		return rc;
	/* From here on the backend's privileged steps are its helper's. */
	rc = net_helper_start(n->backend, ev, index, &n->unpinned, err);
	if (rc)
		return rc;
	/* Until the guest negotiates MQ only the first pair is steered to. */
	vnet_set_active_pairs(n, 1);
	rc = vnet_link_start(n, err);
	if (rc)
		return rc;
	char line[360];
	const char *detail = n->backend->detail;
	snprintf(line, sizeof(line), "net%u: %s %s%s, %u queue pair%s, MAC %02x:%02x:%02x:%02x:%02x:%02x%s%s%s",
		 index, n->backend->ops->kind, n->backend->ifname, n->backend->created ? " (created)" : "",
		 n->nr_pairs, n->nr_pairs > 1 ? "s" : "", n->mac[0], n->mac[1], n->mac[2], n->mac[3],
		 n->mac[4], n->mac[5], detail[0] ? " (" : "", detail, detail[0] ? ")" : "");
	machine_log(ev, line);
	return 0;
}

void virtio_net_destroy(struct virtio_net *n)
{
	if (!n)
		return;
	vnet_link_stop(n);   /* it may restart workers: before the reset */
	n->destroying = true;
	if (n->transport)
		virtio_mmio_destroy(n->transport);   /* resets the device first */
	else
		vnet_reset(n);
	net_helper_stop(n->backend);   /* no worker, control or link thread is left to ask it */
	net_backend_destroy(n->backend);
	if (n->ctrl_stop_fd >= 0)
		close(n->ctrl_stop_fd);
	pthread_mutex_destroy(&n->lock);
	log_limit_destroy(&n->log_limit);
	rate_limit_destroy(&n->rx_limit);
	rate_limit_destroy(&n->tx_limit);
	free(n);
}
