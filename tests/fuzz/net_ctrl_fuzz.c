/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: virtio-net control commands (devices/virtio/net_ctrl.c,
 * vnet_ctrl_handle) and the RX filter they set (vnet_filter_accepts).
 *
 * The input is the device's state (pairs, usable pairs, negotiated
 * features, activated or not) and then command chains: class, command and
 * payload of any length (past the 4 KiB a command may hold, too), the
 * readable part cut into segments where the input says (one-byte ones
 * included), no, one or several writable segments; in between, frames'
 * destination MACs put to the filter.
 *
 * Checked: the answer is the spec's (a small model of each command below)
 * and is written into the first writable byte only, nothing else of the
 * chain is touched, the used length is 1 or 0; the device's MAC stays
 * unicast and the filter follows it; MAC tables stay within their size;
 * active pairs stay in range and the backend is steered to exactly them;
 * offloads asked of the backend were negotiated; the filter's decisions
 * follow its state; the counters add up. */
#include <errno.h>
#include <linux/virtio_net.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/net.h"
#include "net/tap.h"
#include "tests/fuzz/fuzz_common.h"

#define F(bit) (1ull << (bit))
#define GUEST_OFFLOAD_BITS (F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4) | \
			    F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN) | \
			    F(VIRTIO_NET_F_GUEST_UFO))
#define MAX_COMMAND 4096

/* ---- a fake backend ----------------------------------------------------- */

static struct {
	bool active[NET_BACKEND_MAX_QUEUES];
	unsigned offloads, offload_calls;
	bool fail_offload;
} fb;

static int fb_set_offload(struct net_backend *b, unsigned offloads, struct vmm_err *err)
{
	(void)b;
	fb.offload_calls++;
	if (fb.fail_offload)
		return vmm_err_set(err, EINVAL, "fake backend refuses offloads");
	fb.offloads = offloads;
	return 0;
}

static int fb_set_queue_active(struct net_backend *b, unsigned q, bool active, struct vmm_err *err)
{
	(void)err;
	FUZZ_CHECK(q < b->nr_queues, "steering queue %u of %u", q, b->nr_queues);
	fb.active[q] = active;
	return 0;
}

static const struct net_backend_ops fake_backend_ops = {
	.kind = "fake", .set_offload = fb_set_offload, .set_queue_active = fb_set_queue_active,
};

static struct net_backend fake_backend;

/* ---- the spec, as a model ------------------------------------------------- */

static bool model_mac_tables(const uint8_t *d, size_t len)
{
	size_t off = 0;
	for (int t = 0; t < 2; t++) {
		if (len - off < 4)
			return false;
		uint32_t n;
		memcpy(&n, d + off, 4);
		off += 4;
		if (n > VNET_MAC_TABLE_MAX || (uint64_t)n * 6 > len - off)
			return false;
		off += (size_t)n * 6;
	}
	return off == len;
}

/* Would this command be acked VIRTIO_NET_OK? */
static bool model_ok(const struct virtio_net *n, const uint8_t *cmd, size_t len)
{
	if (len < 2 || len > MAX_COMMAND)
		return false;
	const uint8_t *d = cmd + 2;
	size_t dlen = len - 2;
	switch (cmd[0]) {
	case VIRTIO_NET_CTRL_RX:
		return dlen == 1 && (cmd[1] == VIRTIO_NET_CTRL_RX_PROMISC ||
				     cmd[1] == VIRTIO_NET_CTRL_RX_ALLMULTI);
	case VIRTIO_NET_CTRL_MAC:
		if (cmd[1] == VIRTIO_NET_CTRL_MAC_ADDR_SET)
			return dlen == 6 && !(d[0] & 1);
		return cmd[1] == VIRTIO_NET_CTRL_MAC_TABLE_SET && model_mac_tables(d, dlen);
	case VIRTIO_NET_CTRL_MQ: {
		if (cmd[1] != VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET || dlen != 2 ||
		    !(n->features & F(VIRTIO_NET_F_MQ)))
			return false;
		unsigned k = (unsigned)d[0] | (unsigned)d[1] << 8;
		return k >= 1 && k <= n->nr_pairs && (!n->activated || k <= n->usable_pairs);
	}
	case VIRTIO_NET_CTRL_GUEST_OFFLOADS: {
		if (cmd[1] != VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET || dlen != 8)
			return false;
		uint64_t want;
		memcpy(&want, d, 8);
		return !(want & ~(n->features & GUEST_OFFLOAD_BITS)) && !fb.fail_offload;
	}
	default:
		return false;
	}
}

/* ---- state checks ----------------------------------------------------------- */

static void check_device(const struct virtio_net *n)
{
	const struct vnet_rx_filter *f = &n->filter;
	FUZZ_CHECK(!(f->seq & 1), "filter left mid-update (seq %u)", f->seq);
	FUZZ_CHECK(f->nr_uc <= VNET_MAC_TABLE_MAX && f->nr_mc <= VNET_MAC_TABLE_MAX,
		   "MAC tables of %u and %u entries", f->nr_uc, f->nr_mc);
	FUZZ_CHECK(!(n->mac[0] & 1), "the device's MAC became multicast");
	FUZZ_CHECK(memcmp(f->mac, n->mac, 6) == 0, "the filter's MAC is not the device's");
	FUZZ_CHECK(n->active_pairs >= 1 && n->active_pairs <= n->nr_pairs &&
		   (!n->activated || n->active_pairs <= n->usable_pairs),
		   "%u active pairs of %u (%u usable)", n->active_pairs, n->nr_pairs, n->usable_pairs);
	for (unsigned p = 0; p < n->nr_pairs; p++) {
		FUZZ_CHECK(fb.active[p] == (p < n->active_pairs), "backend queue %u steered %s", p,
			   fb.active[p] ? "on" : "off");
		FUZZ_CHECK(n->qp[p].active == (p < n->active_pairs && n->activated),
			   "pair %u active flag", p);
	}
	FUZZ_CHECK(!(fb.offloads & ~tap_offloads_from_features(n->features & GUEST_OFFLOAD_BITS)),
		   "backend offloads 0x%x beyond what was negotiated", fb.offloads);
}

/* What the filter must decide, from its state. */
static void check_filter(struct virtio_net *n, const uint8_t dst[6])
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const struct vnet_rx_filter *f = &n->filter;
	bool ok = vnet_filter_accepts(&n->filter, dst);
	if (f->promisc)
		FUZZ_CHECK(ok, "promiscuous but refused");
	else if (memcmp(dst, bcast, 6) == 0)
		FUZZ_CHECK(ok == !f->nobcast, "broadcast");
	else if (memcmp(dst, f->mac, 6) == 0 && !f->nouni)
		FUZZ_CHECK(ok, "refused a frame for the device's own MAC");
	else if ((dst[0] & 1) && f->allmulti && !f->nomulti)
		FUZZ_CHECK(ok, "all-multicast but refused a multicast frame");
}

/* ---- one command chain ------------------------------------------------------- */

/* Every segment is its own allocation of exactly its size: ASan reports a
 * byte read or written past any of them. */
struct chain {
	struct guest_chain c;
	uint8_t *seg[GUEST_CHAIN_MAX_SEGS];
	uint8_t *orig[GUEST_CHAIN_MAX_SEGS];
};

static void chain_add(struct chain *ch, const uint8_t *bytes, size_t len, bool writable)
{
	unsigned i = ch->c.nr_readable + ch->c.nr_writable;
	ch->seg[i] = malloc(len);
	ch->orig[i] = malloc(len);
	FUZZ_CHECK(ch->seg[i] && ch->orig[i], "out of memory");
	memcpy(ch->seg[i], bytes, len);
	memcpy(ch->orig[i], bytes, len);
	ch->c.iov[i] = (struct iovec){ ch->seg[i], len };
	if (writable) {
		ch->c.nr_writable++;
		ch->c.writable_len += (uint32_t)len;
	} else {
		ch->c.nr_readable++;
		ch->c.readable_len += (uint32_t)len;
	}
}

static void chain_free(struct chain *ch)
{
	for (unsigned i = 0; i < ch->c.nr_readable + ch->c.nr_writable; i++) {
		free(ch->seg[i]);
		free(ch->orig[i]);
	}
}

static uint8_t cmd_buf[MAX_COMMAND + 512];

static void one_command(struct virtio_net *n, struct fz *in)
{
	uint8_t shape = fz_u8(in);
	/* The command: header and payload from the input; "long" ones are
	 * padded out past what a command may hold. */
	size_t plen = fz_u8(in);
	size_t got;
	cmd_buf[0] = fz_u8(in);
	cmd_buf[1] = fz_u8(in);
	const uint8_t *p = fz_take(in, plen, &got);
	memcpy(cmd_buf + 2, p, got);
	size_t len = 2 + got;
	if (shape & 0x80) {
		size_t pad = MAX_COMMAND - 8 + (shape & 0xf);   /* around the limit */
		memset(cmd_buf + len, 0, pad);
		len += pad;
	}
	if ((shape & 0x60) == 0x60)
		len = len > 1 ? 1 : len;   /* shorter than the header */

	struct chain ch;
	memset(&ch, 0, sizeof(ch));
	/* Readable part cut at input-chosen sizes (at least one byte each, as
	 * virtq_pop gives them); one-byte segments when asked. */
	size_t off = 0;
	unsigned max_read = GUEST_CHAIN_MAX_SEGS - 4;
	while (off < len) {
		size_t seg = (shape & 0x10) ? 1 : 1 + fz_u8(in) % 16;
		if (ch.c.nr_readable == max_read - 1 || fz_empty(in) || seg > len - off)
			seg = len - off;
		chain_add(&ch, cmd_buf + off, seg, false);
		off += seg;
	}
	unsigned nw = shape & 3;   /* 0 to 3 writable segments */
	for (unsigned i = 0; i < nw; i++) {
		uint8_t wbuf[8];
		memset(wbuf, 0xa5, sizeof(wbuf));
		chain_add(&ch, wbuf, 1 + fz_u8(in) % 8, true);
	}

	bool expect_ok = model_ok(n, cmd_buf, len);
	uint64_t commands = n->ctrl_commands, errors = n->ctrl_errors;
	uint32_t used = vnet_ctrl_handle(n, &ch.c);

	FUZZ_CHECK(used == (nw ? 1u : 0u), "used length %u with %u writable segments", used, nw);
	for (unsigned i = 0; i < ch.c.nr_readable + ch.c.nr_writable; i++) {
		size_t from = (i == ch.c.nr_readable) ? 1 : 0;   /* the ack byte */
		FUZZ_CHECK(memcmp(ch.seg[i] + from, ch.orig[i] + from, ch.c.iov[i].iov_len - from) == 0,
			   "segment %u of the chain was modified", i);
	}
	if (nw) {
		uint8_t ack = ch.seg[ch.c.nr_readable][0];
		FUZZ_CHECK(ack == VIRTIO_NET_OK || ack == VIRTIO_NET_ERR, "ack 0x%x", ack);
		FUZZ_CHECK((ack == VIRTIO_NET_OK) == expect_ok,
			   "class %u command %u, %zu bytes: acked %s, the spec says %s", cmd_buf[0],
			   cmd_buf[1], len, ack == VIRTIO_NET_OK ? "OK" : "ERR", expect_ok ? "OK" : "ERR");
	}
	FUZZ_CHECK(n->ctrl_commands == commands + 1, "commands counted %llu -> %llu",
		   (unsigned long long)commands, (unsigned long long)n->ctrl_commands);
	FUZZ_CHECK(n->ctrl_errors == errors + !expect_ok, "errors counted wrongly");
	chain_free(&ch);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_init(data, size);
	static struct virtio_net n;
	memset(&n, 0, sizeof(n));
	memset(&fb, 0, sizeof(fb));
	pthread_mutex_init(&n.lock, NULL);

	uint8_t shape = fz_u8(&in);
	n.nr_pairs = 1 + shape % VNET_MAX_PAIRS;
	n.activated = shape & 0x80;
	n.usable_pairs = 1 + fz_u8(&in) % n.nr_pairs;
	n.features = fz_u64(&in);
	fb.fail_offload = shape & 0x40;
	n.backend = &fake_backend;
	memset(&fake_backend, 0, sizeof(fake_backend));
	n.backend->ops = &fake_backend_ops;
	n.backend->nr_queues = n.nr_pairs;
	for (unsigned p = 0; p < n.nr_pairs; p++) {
		n.qp[p].tx.kick_fd = -1;   /* the workers' wake-up: nobody listens here */
	}
	static const uint8_t mac[6] = { 0x02, 0x4d, 0x00, 0x11, 0x22, 0x33 };
	memcpy(n.mac, mac, 6);
	memcpy(n.filter.mac, mac, 6);
	n.filter.promisc = true;
	/* As after DRIVER_OK: only the first pair carries traffic. */
	FUZZ_CHECK(vnet_set_active_pairs(&n, 1) == 0, "one pair refused");
	check_device(&n);

	while (!fz_empty(&in)) {
		if (fz_u8(&in) & 1) {
			uint8_t dst[6];
			size_t got;
			memset(dst, 0, sizeof(dst));
			memcpy(dst, fz_take(&in, 6, &got), got);
			check_filter(&n, dst);
			continue;
		}
		one_command(&n, &in);
		check_device(&n);
	}
	pthread_mutex_destroy(&n.lock);
	return 0;
}
