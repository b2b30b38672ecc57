/* SPDX-License-Identifier: Apache-2.0 */
/* virtio-net control queue (spec 5.1.6.5), served by its own thread so a
 * slow command never stalls a data worker: RX mode, MAC table and address,
 * multiqueue pairs, guest offloads. And the RX filter those commands set. */
#include <errno.h>
#include <linux/virtio_net.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/confine.h"
#include "base/spawn.h"
#include "devices/virtio/net.h"
#include "net/tap.h"

#define CTRL_MAX_COMMAND 4096   /* bytes of one command (header + data) */

/* ---- RX filter --------------------------------------------------------- */

/* Workers read the filter for every frame while the control thread may
 * change it: a sequence lock (seq odd while a change is being written). Its
 * fields are read with acquire loads (plain loads on x86) so the reader's
 * loads stay between its two looks at seq, and written with atomic stores
 * between two full-barrier increments of seq: the races are ones the C11
 * memory model (and ThreadSanitizer) accept. */
#define FLT_LOAD(x)     __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define FLT_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static void filter_begin_write(struct vnet_rx_filter *f)
{
	__atomic_add_fetch(&f->seq, 1, __ATOMIC_SEQ_CST);
}

static void filter_end_write(struct vnet_rx_filter *f)
{
	__atomic_add_fetch(&f->seq, 1, __ATOMIC_SEQ_CST);
}

static void filter_store_mac(uint8_t *dst, const uint8_t *src)
{
	for (int i = 0; i < 6; i++)
		FLT_STORE(dst[i], src[i]);
}

static bool filter_mac_is(const uint8_t *entry, const uint8_t *mac)
{
	for (int i = 0; i < 6; i++)
		if (FLT_LOAD(entry[i]) != mac[i])
			return false;
	return true;
}

static bool mac_in(const uint8_t (*table)[6], unsigned n, const uint8_t *mac)
{
	if (n > VNET_MAC_TABLE_MAX)
		n = VNET_MAC_TABLE_MAX;   /* a torn count: seq makes us look again */
	for (unsigned i = 0; i < n; i++)
		if (filter_mac_is(table[i], mac))
			return true;
	return false;
}

static bool filter_decide(struct vnet_rx_filter *f, const uint8_t *dst)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	if (FLT_LOAD(f->promisc))
		return true;
	if (memcmp(dst, bcast, 6) == 0)
		return !FLT_LOAD(f->nobcast);
	if (dst[0] & 1)
		return !FLT_LOAD(f->nomulti) &&
		       (FLT_LOAD(f->allmulti) || mac_in(f->mc, FLT_LOAD(f->nr_mc), dst));
	return !FLT_LOAD(f->nouni) &&
	       (FLT_LOAD(f->alluni) || filter_mac_is(f->mac, dst) || mac_in(f->uc, FLT_LOAD(f->nr_uc), dst));
}

bool vnet_filter_accepts(struct vnet_rx_filter *f, const uint8_t *dst)
{
	for (;;) {
		unsigned s = __atomic_load_n(&f->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;   /* a change is being written: a few stores long */
		bool ok = filter_decide(f, dst);
		if (__atomic_load_n(&f->seq, __ATOMIC_ACQUIRE) == s)
			return ok;
	}
}

/* ---- commands ------------------------------------------------------------- */

static uint8_t ctrl_rx_mode(struct virtio_net *n, uint8_t cmd, const uint8_t *data, size_t len)
{
	if (len != 1)
		return VIRTIO_NET_ERR;
	bool on = data[0] != 0;
	struct vnet_rx_filter *f = &n->filter;
	filter_begin_write(f);
	uint8_t ack = VIRTIO_NET_OK;
	switch (cmd) {
	case VIRTIO_NET_CTRL_RX_PROMISC: FLT_STORE(f->promisc, on); break;
	case VIRTIO_NET_CTRL_RX_ALLMULTI: FLT_STORE(f->allmulti, on); break;
	/* The next four belong to CTRL_RX_EXTRA, which we do not offer. */
	default: ack = VIRTIO_NET_ERR; break;
	}
	filter_end_write(f);
	return ack;
}

/* Two tables back to back: { le32 entries; u8 macs[entries][6]; } x 2. */
static int ctrl_parse_mac_table(const uint8_t *data, size_t len, size_t *off, uint8_t (*out)[6],
				unsigned *count)
{
	uint32_t entries;
	if (len - *off < 4)
		return -1;
	memcpy(&entries, data + *off, 4);
	*off += 4;
	if (entries > VNET_MAC_TABLE_MAX || (size_t)entries * 6 > len - *off)
		return -1;
	memcpy(out, data + *off, (size_t)entries * 6);
	*off += (size_t)entries * 6;
	*count = entries;
	return 0;
}

static uint8_t ctrl_mac(struct virtio_net *n, uint8_t cmd, const uint8_t *data, size_t len)
{
	struct vnet_rx_filter *f = &n->filter;
	if (cmd == VIRTIO_NET_CTRL_MAC_ADDR_SET) {
		if (len != 6 || (data[0] & 1))
			return VIRTIO_NET_ERR;
		pthread_mutex_lock(&n->lock);
		memcpy(n->mac, data, 6);
		pthread_mutex_unlock(&n->lock);
		filter_begin_write(f);
		filter_store_mac(f->mac, data);
		filter_end_write(f);
		return VIRTIO_NET_OK;
	}
	if (cmd != VIRTIO_NET_CTRL_MAC_TABLE_SET)
		return VIRTIO_NET_ERR;
	uint8_t uc[VNET_MAC_TABLE_MAX][6], mc[VNET_MAC_TABLE_MAX][6];
	unsigned nr_uc, nr_mc;
	size_t off = 0;
	if (ctrl_parse_mac_table(data, len, &off, uc, &nr_uc) < 0 ||
	    ctrl_parse_mac_table(data, len, &off, mc, &nr_mc) < 0 || off != len)
		return VIRTIO_NET_ERR;
	filter_begin_write(f);
	for (unsigned i = 0; i < nr_uc; i++)
		filter_store_mac(f->uc[i], uc[i]);
	for (unsigned i = 0; i < nr_mc; i++)
		filter_store_mac(f->mc[i], mc[i]);
	FLT_STORE(f->nr_uc, nr_uc);
	FLT_STORE(f->nr_mc, nr_mc);
	filter_end_write(f);
	return VIRTIO_NET_OK;
}

static uint8_t ctrl_mq(struct virtio_net *n, uint8_t cmd, const uint8_t *data, size_t len)
{
	if (cmd != VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET || len != 2)
		return VIRTIO_NET_ERR;
	uint16_t pairs;
	memcpy(&pairs, data, 2);
	pthread_mutex_lock(&n->lock);
	bool mq = n->features & (1ull << VIRTIO_NET_F_MQ);
	int rc = mq ? vnet_set_active_pairs(n, pairs) : -EINVAL;
	pthread_mutex_unlock(&n->lock);
	return rc == 0 ? VIRTIO_NET_OK : VIRTIO_NET_ERR;
}

static uint8_t ctrl_offloads(struct virtio_net *n, uint8_t cmd, const uint8_t *data, size_t len)
{
	const uint64_t guest_bits = (1ull << VIRTIO_NET_F_GUEST_CSUM) |
				    (1ull << VIRTIO_NET_F_GUEST_TSO4) |
				    (1ull << VIRTIO_NET_F_GUEST_TSO6) |
				    (1ull << VIRTIO_NET_F_GUEST_ECN) | (1ull << VIRTIO_NET_F_GUEST_UFO);
	if (cmd != VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET || len != 8)
		return VIRTIO_NET_ERR;
	uint64_t want;
	memcpy(&want, data, 8);
	pthread_mutex_lock(&n->lock);
	uint8_t ack = VIRTIO_NET_ERR;
	/* Only offloads that are GUEST_* bits and were negotiated. */
	if (!(want & ~(n->features & guest_bits))) {
		/* The workers narrow to what both settings allow before the
		 * backend changes, so a frame it queued under the old ones is
		 * cut or finished in the VMM, never passed on; they widen only
		 * once the backend has changed. */
		vnet_publish_rx_offloads(n, n->guest_offloads & want);
		struct vmm_err e = { 0 };
		if (n->backend->ops->set_offload(n->backend, tap_offloads_from_features(want), &e) == 0) {
			n->guest_offloads = want;
			ack = VIRTIO_NET_OK;
		}
		vnet_publish_rx_offloads(n, n->guest_offloads);
	}
	pthread_mutex_unlock(&n->lock);
	return ack;
}

static uint8_t ctrl_dispatch(struct virtio_net *n, const uint8_t *cmd, size_t len)
{
	if (len < sizeof(struct virtio_net_ctrl_hdr))
		return VIRTIO_NET_ERR;
	const uint8_t *data = cmd + 2;
	size_t dlen = len - 2;
	switch (cmd[0]) {
	case VIRTIO_NET_CTRL_RX: return ctrl_rx_mode(n, cmd[1], data, dlen);
	case VIRTIO_NET_CTRL_MAC: return ctrl_mac(n, cmd[1], data, dlen);
	case VIRTIO_NET_CTRL_MQ: return ctrl_mq(n, cmd[1], data, dlen);
	case VIRTIO_NET_CTRL_GUEST_OFFLOADS: return ctrl_offloads(n, cmd[1], data, dlen);
	default: return VIRTIO_NET_ERR;
	}
}

/* Gather the readable part of a chain (header + data) into buf. */
static size_t ctrl_gather(const struct guest_chain *c, uint8_t *buf, size_t size)
{
	size_t off = 0;
	for (unsigned i = 0; i < c->nr_readable; i++) {
		size_t take = c->iov[i].iov_len;
		if (take > size - off)
			return SIZE_MAX;
		memcpy(buf + off, c->iov[i].iov_base, take);
		off += take;
	}
	return off;
}

uint32_t vnet_ctrl_handle(struct virtio_net *n, const struct guest_chain *c)
{
	uint8_t cmd[CTRL_MAX_COMMAND];
	size_t len = ctrl_gather(c, cmd, sizeof(cmd));
	uint8_t ack = len == SIZE_MAX ? VIRTIO_NET_ERR : ctrl_dispatch(n, cmd, len);
	__atomic_add_fetch(&n->ctrl_commands, 1, __ATOMIC_RELAXED);   /* read by the stats printer */
	if (ack != VIRTIO_NET_OK)
		__atomic_add_fetch(&n->ctrl_errors, 1, __ATOMIC_RELAXED);
	if (!c->nr_writable)
		return 0;
	/* The ack is the first byte the device may write; virtq_pop hands out
	 * no empty segments, so it exists. */
	*(uint8_t *)c->iov[c->nr_readable].iov_base = ack;
	return 1;
}

/* Serve every pending command. Returns false if the ring is broken. */
static bool ctrl_serve(struct virtio_net *n, struct virtq *q)
{
	struct guest_chain c;
	int rc;
again:
	while ((rc = virtq_pop(q, &c)) > 0)
		virtq_push(q, c.head, vnet_ctrl_handle(n, &c));
	/* Drained: ask for the next kick, then look once more (a command
	 * added before the guest saw our request would get no kick). */
	if (rc == 0 && virtq_enable_kicks(q))
		goto again;
	virtq_publish(q);
	if (virtq_should_signal(q))
		virtio_mmio_signal_used(n->transport);
	if (rc < 0) {
		char line[160];
		snprintf(line, sizeof(line), "control queue: %s", virtq_error_text(q->error));
		vnet_say(n, line);
		virtio_mmio_set_needs_reset(n->transport, virtq_error_text(q->error));
		return false;
	}
	return true;
}

static void *ctrl_thread_main(void *arg)
{
	struct virtio_net *n = arg;
	char name[16];
	snprintf(name, sizeof(name), "net%u-ctrl", (uint8_t)n->index);
	pthread_setname_np(pthread_self(), name);
	struct virtq *q = &n->vq[vnet_ctrl_queue(n->nr_pairs)];
	int kick = n->transport->kick_fd[vnet_ctrl_queue(n->nr_pairs)];
	/* Before the first command: the guest writes them. */
	struct vmm_err err = { 0 };
	if (confine_enter(n->ev->confine, CONFINE_NET_CTRL, &err) < 0) {
		char line[sizeof(err.msg) + 40];
		snprintf(line, sizeof(line), "net%u: control queue: %s", n->index, err.msg);
		machine_log(n->ev, line);
		virtio_mmio_set_needs_reset(n->transport, err.msg);
		return NULL;
	}
	bool ok = ctrl_serve(n, q);   /* commands queued before we started */
	while (ok) {
		struct pollfd fds[2] = { { .fd = n->ctrl_stop_fd, .events = POLLIN },
					 { .fd = kick, .events = POLLIN } };
		if (poll(fds, 2, -1) < 0)
			continue;
		if (fds[0].revents)
			break;
		uint64_t v;
		if (read(kick, &v, sizeof(v)) < 0)
			continue;
		ok = ctrl_serve(n, q);
	}
	return NULL;
}

int vnet_ctrl_start(struct virtio_net *n, struct vmm_err *err)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	/* Started from a vCPU thread: do not inherit its pinning. */
	pthread_attr_setaffinity_np(&attr, sizeof(n->unpinned), &n->unpinned);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	/* Not pthread_create: this runs on a confined vCPU thread (base/spawn.h). */
	int rc = spawner_create_thread(n->ev->spawner, &n->ctrl_thread, &attr, ctrl_thread_main, n);
	pthread_attr_destroy(&attr);
	if (rc)
		return vmm_err_sys(err, rc, "cannot start net%u's control thread", n->index);
	n->ctrl_running = true;
	return 0;
}

void vnet_ctrl_stop(struct virtio_net *n)
{
	if (!n->ctrl_running)
		return;
	uint64_t one = 1, v;
	if (write(n->ctrl_stop_fd, &one, sizeof(one)) < 0) {
	}
	pthread_join(n->ctrl_thread, NULL);
	/* Leave the eventfd at zero for the next start. */
	if (read(n->ctrl_stop_fd, &v, sizeof(v)) < 0) {
	}
	n->ctrl_running = false;
}
