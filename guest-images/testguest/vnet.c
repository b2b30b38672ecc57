/* SPDX-License-Identifier: Apache-2.0 */
#include "vnet.h"

#include <stddef.h>

#include <linux/virtio_ids.h>

#include "cmdline.h"
#include "delay.h"
#include "io.h"
#include "lib.h"
#include "serial.h"

#define F(bit) (1ull << (bit))

/* What we accept when offered. CSUM/GUEST_CSUM only with offload=1; no
 * TSO/UFO/GSO, so every frame fits one 2048-byte buffer. */
#define VNET_FEATURES (F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC) | \
		       F(VIRTIO_NET_F_MTU) | F(VIRTIO_NET_F_STATUS) | \
		       F(VIRTIO_RING_F_EVENT_IDX) | F(VIRTIO_NET_F_MRG_RXBUF) | \
		       F(VIRTIO_NET_F_MQ) | F(VIRTIO_NET_F_CTRL_VQ))
#define VNET_OFFLOADS (F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM))

/* Control command in DMA memory: header, data and ack in three
 * descriptors (device-readable, device-readable, device-writable). */
struct vnet_ctrl_cmd {
	struct virtio_net_ctrl_hdr hdr;
	uint16_t pairs;
	uint8_t ack;
} __attribute__((packed));

static struct vnet_ctrl_cmd *ctrl_cmd;

/* The guard pattern at byte k of a pair's RX area: position-dependent, so
 * a frame written one place off does not match it by chance. */
static uint8_t guard_byte(uint32_t k)
{
	return (uint8_t)(0xa5 ^ (k * 7) ^ (k >> 8));
}

int vnet_rx_guard_broken(const struct vnet_pair *p, uint16_t id, long *off, uint8_t *got,
			 uint8_t *want)
{
	uint32_t slot = (uint32_t)id * p->rx_stride;
	for (uint32_t k = 0; k < p->rx_stride; k++) {
		if (k >= p->rx_off && k < p->rx_off + p->rx_len)
			continue;
		if (p->rxbuf[slot + k] != guard_byte(slot + k)) {
			*off = (long)k - (long)p->rx_off;
			*got = p->rxbuf[slot + k];
			*want = guard_byte(slot + k);
			return 1;
		}
	}
	return 0;
}

static int setup_pair(struct vnet *n, unsigned i)
{
	struct vnet_pair *p = &n->pair[i];
	int ev = vnet_has(n, VIRTIO_RING_F_EVENT_IDX);

	p->index = i;
	p->mrg = vnet_has(n, VIRTIO_NET_F_MRG_RXBUF);
	if (vmmio_queue_setup(&n->dev, &p->rx, (uint16_t)(2 * i), VNET_QUEUE_SIZE, ev) ||
	    vmmio_queue_setup(&n->dev, &p->tx, (uint16_t)(2 * i + 1), VNET_QUEUE_SIZE, ev))
		return -1;
	if (n->rxbuf) {
		p->rx_len = n->rxbuf;
		p->rx_off = VNET_GUARD;
		p->rx_stride = (n->rxbuf + 2 * VNET_GUARD + 63) & ~63u;
	} else {
		p->rx_len = p->rx_stride = VNET_BUF_SIZE;
		p->rx_off = 0;
	}
	p->rxbuf = dma_alloc((size_t)p->rx.num * p->rx_stride, 4096);
	p->txbuf = dma_alloc((size_t)p->tx.num * VNET_BUF_SIZE, 4096);
	if (!p->rxbuf || !p->txbuf)
		return -1;
	if (n->rxbuf)
		for (uint32_t k = 0; k < p->rx.num * p->rx_stride; k++)
			p->rxbuf[k] = guard_byte(k);
	/* Fixed descriptor <-> buffer mapping; headers start zeroed. */
	for (uint16_t d = 0; d < p->rx.num; d++)
		virtq_set_desc(&p->rx, d, p->rxbuf + (uint32_t)d * p->rx_stride + p->rx_off,
			       p->rx_len, VRING_DESC_F_WRITE, 0);
	for (uint16_t d = 0; d < p->tx.num; d++) {
		virtq_set_desc(&p->tx, d, vnet_tx_buf(p, d), 0, 0, 0);
		p->tx.free[p->tx.nfree++] = (uint16_t)(p->tx.num - 1 - d);
	}
	return 0;
}

void vnet_rx_guard_check(struct vnet_pair *p, uint16_t id)
{
	long off;
	uint8_t got, want;

	if (!p->rx_off)
		return;
	p->guard_checks++;
	if (vnet_rx_guard_broken(p, id, &off, &got, &want) && !p->guard_broken++) {
		p->guard_id = id;
		p->guard_off = off;
		p->guard_got = got;
		p->guard_want = want;
	}
}

int vnet_init(struct vnet *n, unsigned npairs, int offload, int verbose)
{
	struct vmmio_dev *d = &n->dev;
	uint64_t want = VNET_FEATURES | (offload ? VNET_OFFLOADS : 0);
	int r;

	memset(n, 0, sizeof(*n));
	uint64_t rxbuf = 0;
	if (cmdline_get_u64("rxbuf", 0, &rxbuf) < 0 || (rxbuf && (rxbuf < VNET_RXBUF_MIN || rxbuf > VNET_BUF_SIZE))) {
		tg_printf("testguest: bad rxbuf=%s (%u to %u bytes)\n", cmdline_get("rxbuf", ""),
			  VNET_RXBUF_MIN, VNET_BUF_SIZE);
		return TG_EXIT_NET_SETUP;
	}
	n->rxbuf = (unsigned)rxbuf;
	r = vmmio_find(VIRTIO_ID_NET, d, verbose);
	if (r == VMMIO_NONE) {
		tg_printf("testguest: no virtio-net device (in the device tree or virtio_mmio.device=...)\n");
		return TG_EXIT_NET_NO_DEVICE;
	}
	if (r == VMMIO_LEGACY) {
		tg_printf("testguest: virtio-net at 0x%lx is virtio-mmio version %u; only version 2 is supported\n",
			  (unsigned long)d->base, d->version);
		return TG_EXIT_NET_DEVICE;
	}
	if (r != VMMIO_FOUND)
		return TG_EXIT_NET_DEVICE;

	vmmio_begin(d);
	n->offered = vmmio_device_features(d);
	if (!(n->offered & F(VIRTIO_F_VERSION_1))) {
		tg_printf("testguest: virtio-net does not offer VERSION_1 (features 0x%llx)\n",
			  (unsigned long long)n->offered);
		vmmio_fail(d);
		return TG_EXIT_NET_DEVICE;
	}
	n->features = n->offered & want;
	/* ctrl=unset: negotiate the control queue but never set it up, as a
	 * driver may (the device must still work, without it). */
	int ctrl_unset = strcmp(cmdline_get("ctrl", ""), "unset") == 0;
	/* MQ needs the control queue to be usable. */
	if (!(n->features & F(VIRTIO_NET_F_CTRL_VQ)) || ctrl_unset)
		n->features &= ~F(VIRTIO_NET_F_MQ);
	if (vmmio_set_features(d, n->features)) {
		tg_printf("testguest: virtio-net refused features 0x%llx (FEATURES_OK did not stick)\n",
			  (unsigned long long)n->features);
		return TG_EXIT_NET_SETUP;
	}

	if (vnet_has(n, VIRTIO_NET_F_MAC)) {
		/* Six byte reads: re-read if the config generation moved. */
		uint32_t gen;

		do {
			gen = vmmio_read(d, VIRTIO_MMIO_CONFIG_GENERATION);
			for (unsigned i = 0; i < sizeof(n->mac); i++)
				n->mac[i] = vmmio_config8(d, (uint32_t)(offsetof(struct virtio_net_config, mac) + i));
		} while (gen != vmmio_read(d, VIRTIO_MMIO_CONFIG_GENERATION));
	} else {
		static const uint8_t def_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };

		memcpy(n->mac, def_mac, sizeof(n->mac));
	}
	n->max_pairs = vnet_has(n, VIRTIO_NET_F_MQ) ?
		vmmio_config16(d, offsetof(struct virtio_net_config, max_virtqueue_pairs)) : 1;
	n->mtu = vnet_has(n, VIRTIO_NET_F_MTU) ?
		vmmio_config16(d, offsetof(struct virtio_net_config, mtu)) : 1500;
	n->link_status = vnet_has(n, VIRTIO_NET_F_STATUS) ?
		vmmio_config16(d, offsetof(struct virtio_net_config, status)) : VIRTIO_NET_S_LINK_UP;
	if (!n->max_pairs)
		n->max_pairs = 1;

	tg_printf("testguest: virtio-net at 0x%lx irq %u mac %02x:%02x:%02x:%02x:%02x:%02x features 0x%llx of 0x%llx max-pairs %u mtu %u link %s\n",
		  (unsigned long)d->base, d->irq, n->mac[0], n->mac[1], n->mac[2],
		  n->mac[3], n->mac[4], n->mac[5], (unsigned long long)n->features,
		  (unsigned long long)n->offered, n->max_pairs, n->mtu,
		  (n->link_status & VIRTIO_NET_S_LINK_UP) ? "up" : "down");

	if (npairs > n->max_pairs || npairs > VNET_MAX_PAIRS) {
		tg_printf("testguest: queues=%u but the device has %u queue pairs%s (guest limit %u)\n",
			  npairs, n->max_pairs,
			  vnet_has(n, VIRTIO_NET_F_MQ) ? "" : " (no MQ)", VNET_MAX_PAIRS);
		vmmio_fail(d);
		return TG_EXIT_NET_SETUP;
	}
	for (unsigned i = 0; i < npairs; i++) {
		if (setup_pair(n, i)) {
			tg_printf("testguest: virtio-net queue pair %u setup failed\n", i);
			vmmio_fail(d);
			return TG_EXIT_NET_SETUP;
		}
	}
	n->npairs = npairs;
	if (vnet_has(n, VIRTIO_NET_F_CTRL_VQ) && ctrl_unset)
		tg_printf("testguest: control queue negotiated and left unset (ctrl=unset)\n");
	if (vnet_has(n, VIRTIO_NET_F_CTRL_VQ) && !ctrl_unset) {
		uint16_t idx = vnet_has(n, VIRTIO_NET_F_MQ) ? (uint16_t)(2 * n->max_pairs) : 2;

		ctrl_cmd = dma_alloc(sizeof(*ctrl_cmd), 64);
		if (!ctrl_cmd ||
		    vmmio_queue_setup(d, &n->ctrl, idx, 16, vnet_has(n, VIRTIO_RING_F_EVENT_IDX))) {
			tg_printf("testguest: virtio-net control queue %u setup failed\n", idx);
			vmmio_fail(d);
			return TG_EXIT_NET_SETUP;
		}
		n->has_ctrl = 1;
	}
	vmmio_driver_ok(d);
	if (vmmio_read(d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET) {
		tg_printf("testguest: virtio-net wants a reset right after DRIVER_OK\n");
		return TG_EXIT_NET_SETUP;
	}
	return 0;
}

int vnet_ctrl_mq(struct vnet *n, unsigned pairs)
{
	struct virtq *q = &n->ctrl;
	uint64_t end;

	if (!n->has_ctrl)
		return -1;
	ctrl_cmd->hdr.class = VIRTIO_NET_CTRL_MQ;
	ctrl_cmd->hdr.cmd = VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET;
	ctrl_cmd->pairs = (uint16_t)pairs;
	ctrl_cmd->ack = 0xff;
	virtq_set_desc(q, 0, &ctrl_cmd->hdr, sizeof(ctrl_cmd->hdr), VRING_DESC_F_NEXT, 1);
	virtq_set_desc(q, 1, &ctrl_cmd->pairs, sizeof(ctrl_cmd->pairs), VRING_DESC_F_NEXT, 2);
	virtq_set_desc(q, 2, &ctrl_cmd->ack, sizeof(ctrl_cmd->ack), VRING_DESC_F_WRITE, 0);
	virtq_push(q, 0);
	virtq_flush(q);
	end = tsc_deadline_us(2000000);
	while (!virtq_used_pending(q)) {
		if (tsc_passed(end))
			return -1;
		cpu_pause();
	}
	virtq_pop_used(q);
	virtq_update_used_event(q);
	return __atomic_load_n(&ctrl_cmd->ack, __ATOMIC_ACQUIRE) == VIRTIO_NET_OK ? 0 : 1;
}

/* irq_status: the status bits an interrupt handler has seen (NULL when the
 * guest polls). */
int vnet_link_poll(struct vnet *n, const volatile uint32_t *irq_status)
{
	const struct vmmio_dev *d = &n->dev;
	uint32_t isr, gen, gen2;
	uint16_t status;

	if (!vnet_has(n, VIRTIO_NET_F_STATUS))
		return 0;
	isr = vmmio_read(d, VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG;
	if (isr)
		vmmio_write(d, VIRTIO_MMIO_INTERRUPT_ACK, isr);
	n->config_irqs += !!((isr | (irq_status ? *irq_status : 0)) & VIRTIO_MMIO_INT_CONFIG);
	do {
		gen = vmmio_read(d, VIRTIO_MMIO_CONFIG_GENERATION);
		status = vmmio_config16(d, offsetof(struct virtio_net_config, status));
		gen2 = vmmio_read(d, VIRTIO_MMIO_CONFIG_GENERATION);
	} while (gen != gen2);
	if ((status & VIRTIO_NET_S_LINK_UP) == (n->link_status & VIRTIO_NET_S_LINK_UP))
		return 0;
	/* The device changes its config space, then raises the interrupt: the
	 * status can be read new while the ISR read above was still the old
	 * one. Give the interrupt a moment before saying whether it came. */
	for (uint64_t end = tsc_deadline_us(100000); !n->config_irqs && !tsc_passed(end);) {
		isr = vmmio_read(d, VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG;
		if (isr)
			vmmio_write(d, VIRTIO_MMIO_INTERRUPT_ACK, isr);
		n->config_irqs += !!((isr | (irq_status ? *irq_status : 0)) & VIRTIO_MMIO_INT_CONFIG);
		cpu_pause();
	}
	tg_printf("testguest: link %s status 0x%x config-irq %u gen %u\n",
		  (status & VIRTIO_NET_S_LINK_UP) ? "up" : "down", status,
		  n->config_irqs ? 1u : 0u, gen);
	n->link_status = status;
	n->config_irqs = 0;
	return 1;
}

void vnet_rx_post_all(struct vnet_pair *p)
{
	for (uint16_t d = 0; d < p->rx.num; d++)
		virtq_push(&p->rx, d);
	virtq_flush(&p->rx);
}

int vnet_rx_next(struct vnet_pair *p, struct vnet_rx *out)
{
	uint16_t avail_before = p->rx.avail_idx;
	int got = 0;

	while (!got && virtq_used_pending(&p->rx)) {
		struct vring_used_elem e = virtq_pop_used(&p->rx);
		uint8_t *buf;
		uint16_t nbufs;

		if (e.id >= p->rx.num) {        /* device bug: nothing to recycle */
			p->rx_errors++;
			continue;
		}
		vnet_rx_guard_check(p, (uint16_t)e.id);
		/* A pair set up elsewhere (hostile.c) has the plain layout. */
		uint32_t stride = p->rx_stride ? p->rx_stride : VNET_BUF_SIZE;
		uint32_t len = p->rx_len ? p->rx_len : VNET_BUF_SIZE;
		buf = p->rxbuf + e.id * stride + p->rx_off;
		out->hdr = (struct virtio_net_hdr_v1 *)buf;
		nbufs = e.len >= VNET_HDR_LEN ? out->hdr->num_buffers : 0;
		out->id = (uint16_t)e.id;
		if (e.len < VNET_HDR_LEN || e.len > len ||
		    (p->mrg && nbufs != 1)) {
			/* Frames never exceed one buffer here (no GSO); drop a
			 * merged one with all its buffers (bounded wait: the
			 * device publishes them together). */
			p->rx_errors++;
			virtq_push(&p->rx, (uint16_t)e.id);
			for (unsigned k = 1; p->mrg && k < nbufs; k++) {
				uint64_t end = tsc_deadline_us(100000);

				while (!virtq_used_pending(&p->rx) && !tsc_passed(end))
					cpu_pause();
				if (!virtq_used_pending(&p->rx))
					break;
				e = virtq_pop_used(&p->rx);
				if (e.id < p->rx.num) {
					vnet_rx_guard_check(p, (uint16_t)e.id);
					virtq_push(&p->rx, (uint16_t)e.id);
				}
			}
			continue;
		}
		out->frame = buf + VNET_HDR_LEN;
		out->len = e.len - VNET_HDR_LEN;
		out->id = (uint16_t)e.id;
		got = 1;
	}
	/* The buffers of frames dropped here go back to the device at once
	 * (published, and a kick if it asked for one): a caller only
	 * publishes what it recycled itself, and one that got no frame would
	 * leave them unpublished, until the ring ran dry. */
	if (p->rx.avail_idx != avail_before)
		virtq_flush(&p->rx);
	return got;
}

unsigned vnet_tx_reclaim(struct vnet_pair *p)
{
	unsigned n = 0;

	while (virtq_used_pending(&p->tx)) {
		struct vring_used_elem e = virtq_pop_used(&p->tx);

		if (e.id < p->tx.num && p->tx.nfree < p->tx.num)
			p->tx.free[p->tx.nfree++] = (uint16_t)e.id;
		n++;
	}
	if (n)
		virtq_update_used_event(&p->tx);
	return n;
}

uint8_t *vnet_tx_get(struct vnet_pair *p, uint16_t *id)
{
	if (!p->tx.nfree)
		vnet_tx_reclaim(p);
	if (!p->tx.nfree)
		return NULL;
	*id = p->tx.free[--p->tx.nfree];
	return vnet_tx_buf(p, *id);
}

uint8_t *vnet_tx_begin(struct vnet_pair *p, uint16_t *id, uint64_t wait_us)
{
	uint8_t *buf = vnet_tx_get(p, id);

	if (!buf) {
		uint64_t end = tsc_deadline_us(wait_us);

		vnet_tx_flush(p);
		while (!(buf = vnet_tx_get(p, id)) && !tsc_passed(end))
			cpu_pause();
		if (!buf)
			return NULL;
	}
	memset(buf, 0, VNET_HDR_LEN);
	return buf + VNET_HDR_LEN;
}
