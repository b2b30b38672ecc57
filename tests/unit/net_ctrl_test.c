/* SPDX-License-Identifier: Apache-2.0 */
/* virtio-net control commands (vnet_ctrl_handle): the tests build command
 * chains by hand, split over segments as a driver may, against a device
 * with a fake backend that records what it is asked to do. */
#include <criterion/criterion.h>
#include <linux/virtio_net.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio/net.h"
#include "net/tap.h"

#define F(bit) (1ull << (bit))

struct fake_backend {
	unsigned offload_calls;
	unsigned offloads;
	bool active[NET_BACKEND_MAX_QUEUES];
};

static struct fake_backend fb;

static int fb_set_offload(struct net_backend *b, unsigned offloads, struct vmm_err *err)
{
	(void)b;
	(void)err;
	fb.offload_calls++;
	fb.offloads = offloads;
	return 0;
}

static int fb_set_queue_active(struct net_backend *b, unsigned q, bool active, struct vmm_err *err)
{
	(void)b;
	(void)err;
	fb.active[q] = active;
	return 0;
}

static const struct net_backend_ops fake_backend_ops = {
	.kind = "fake", .set_offload = fb_set_offload, .set_queue_active = fb_set_queue_active,
};

static struct net_backend fake_backend;

static const uint8_t dev_mac[6] = { 0x02, 0x4d, 1, 2, 3, 4 };

/* An activated device with `pairs` pairs, all usable, and these features. */
static struct virtio_net *make_net(unsigned pairs, uint64_t features)
{
	memset(&fb, 0, sizeof(fb));
	struct virtio_net *n = calloc(1, sizeof(*n));
	cr_assert(n);
	pthread_mutex_init(&n->lock, NULL);
	n->nr_pairs = pairs;
	n->usable_pairs = pairs;
	n->active_pairs = 1;
	n->activated = true;
	n->features = features;
	n->backend = &fake_backend;
	n->backend->ops = &fake_backend_ops;
	n->backend->nr_queues = pairs;
	for (unsigned p = 0; p < pairs; p++) {
		n->qp[p].tx.kick_fd = -1;   /* the workers' wake-up: nobody listens */
	}
	memcpy(n->mac, dev_mac, 6);
	memcpy(n->filter.mac, dev_mac, 6);
	n->filter.promisc = true;
	return n;
}

static void free_net(struct virtio_net *n)
{
	pthread_mutex_destroy(&n->lock);
	free(n);
}

/* A chain holding `cmd` (class, command, data) split after each of the
 * `cuts` offsets, then a one-byte ack buffer unless no_ack. */
struct cmd_chain {
	struct guest_chain c;
	uint8_t bytes[512];
	uint8_t ack;
};

static void build(struct cmd_chain *cc, const uint8_t *cmd, size_t len, const size_t *cuts,
		  unsigned nr_cuts, bool no_ack)
{
	memset(cc, 0, sizeof(*cc));
	cr_assert_leq(len, sizeof(cc->bytes));
	memcpy(cc->bytes, cmd, len);
	size_t from = 0;
	for (unsigned i = 0; i <= nr_cuts; i++) {
		size_t to = i < nr_cuts ? cuts[i] : len;
		cc->c.iov[cc->c.nr_readable].iov_base = cc->bytes + from;
		cc->c.iov[cc->c.nr_readable].iov_len = to - from;
		cc->c.nr_readable++;
		cc->c.readable_len += (uint32_t)(to - from);
		from = to;
	}
	cc->ack = 0xee;
	if (!no_ack) {
		cc->c.iov[cc->c.nr_readable] = (struct iovec){ &cc->ack, 1 };
		cc->c.nr_writable = 1;
		cc->c.writable_len = 1;
	}
}

static uint8_t handle(struct virtio_net *n, const uint8_t *cmd, size_t len)
{
	struct cmd_chain cc;
	build(&cc, cmd, len, NULL, 0, false);
	cr_assert_eq(vnet_ctrl_handle(n, &cc.c), 1, "one byte (the ack) written");
	return cc.ack;
}

Test(net_ctrl, promisc_off_and_on_is_acked_and_sets_the_filter)
{
	struct virtio_net *n = make_net(1, 0);
	const uint8_t off[] = { VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, 0 };
	const uint8_t on[] = { VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, 1 };
	cr_assert_eq(handle(n, off, sizeof(off)), VIRTIO_NET_OK);
	cr_assert(!n->filter.promisc);
	cr_assert_eq(handle(n, on, sizeof(on)), VIRTIO_NET_OK);
	cr_assert(n->filter.promisc);
	cr_assert_eq(n->ctrl_commands, 2);
	cr_assert_eq(n->ctrl_errors, 0);
	free_net(n);
}

Test(net_ctrl, a_command_split_over_one_byte_segments_reads_as_one)
{
	struct virtio_net *n = make_net(1, 0);
	const uint8_t cmd[] = { VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_ADDR_SET,
				0x02, 0, 0, 0, 0, 0x99 };
	size_t cuts[sizeof(cmd) - 1];
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		cuts[i] = i + 1;
	struct cmd_chain cc;
	build(&cc, cmd, sizeof(cmd), cuts, sizeof(cuts) / sizeof(cuts[0]), false);
	cr_assert_eq(vnet_ctrl_handle(n, &cc.c), 1);
	cr_assert_eq(cc.ack, VIRTIO_NET_OK);
	cr_assert_eq(n->mac[5], 0x99);
	cr_assert_eq(memcmp(n->filter.mac, n->mac, 6), 0, "the filter follows the new MAC");
	free_net(n);
}

Test(net_ctrl, a_multicast_mac_address_is_refused)
{
	struct virtio_net *n = make_net(1, 0);
	const uint8_t cmd[] = { VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_ADDR_SET, 0x01, 0, 0, 0, 0, 1 };
	cr_assert_eq(handle(n, cmd, sizeof(cmd)), VIRTIO_NET_ERR);
	cr_assert_eq(memcmp(n->mac, dev_mac, 6), 0, "MAC unchanged");
	cr_assert_eq(n->ctrl_errors, 1);
	free_net(n);
}

Test(net_ctrl, mac_tables_are_taken_only_when_both_parse_exactly)
{
	struct virtio_net *n = make_net(1, 0);
	/* 1 unicast entry, 2 multicast entries */
	uint8_t good[2 + 4 + 6 + 4 + 12] = { VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, 1 };
	good[6] = 0x02;
	good[12] = 2;
	good[16] = 0x01;
	good[22] = 0x33;
	cr_assert_eq(handle(n, good, sizeof(good)), VIRTIO_NET_OK);
	cr_assert_eq(n->filter.nr_uc, 1);
	cr_assert_eq(n->filter.nr_mc, 2);

	uint8_t trailing[sizeof(good) + 1];
	memcpy(trailing, good, sizeof(good));
	trailing[sizeof(good)] = 0;
	n->filter.nr_uc = n->filter.nr_mc = 0;
	cr_assert_eq(handle(n, trailing, sizeof(trailing)), VIRTIO_NET_ERR, "a byte after the tables");
	cr_assert_eq(n->filter.nr_uc + n->filter.nr_mc, 0, "nothing taken from a bad command");

	uint8_t too_many[2 + 4] = { VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, 0xff, 0xff,
				    0xff, 0xff };
	cr_assert_eq(handle(n, too_many, sizeof(too_many)), VIRTIO_NET_ERR);
	free_net(n);
}

Test(net_ctrl, vq_pairs_set_needs_mq_and_a_count_in_range)
{
	struct virtio_net *plain = make_net(4, 0);
	const uint8_t two[] = { VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 2, 0 };
	cr_assert_eq(handle(plain, two, sizeof(two)), VIRTIO_NET_ERR, "MQ not negotiated");
	cr_assert_eq(plain->active_pairs, 1);
	free_net(plain);

	struct virtio_net *n = make_net(4, F(VIRTIO_NET_F_MQ));
	cr_assert_eq(handle(n, two, sizeof(two)), VIRTIO_NET_OK);
	cr_assert_eq(n->active_pairs, 2);
	cr_assert(fb.active[0] && fb.active[1] && !fb.active[2] && !fb.active[3]);
	const uint8_t zero[] = { VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 0, 0 };
	const uint8_t five[] = { VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 5, 0 };
	cr_assert_eq(handle(n, zero, sizeof(zero)), VIRTIO_NET_ERR);
	cr_assert_eq(handle(n, five, sizeof(five)), VIRTIO_NET_ERR);
	cr_assert_eq(n->active_pairs, 2, "a refused count changes nothing");
	free_net(n);
}

Test(net_ctrl, guest_offloads_must_have_been_negotiated)
{
	struct virtio_net *n = make_net(1, F(VIRTIO_NET_F_GUEST_CSUM));
	uint8_t csum[2 + 8] = { VIRTIO_NET_CTRL_GUEST_OFFLOADS, VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET,
				1u << VIRTIO_NET_F_GUEST_CSUM };
	cr_assert_eq(handle(n, csum, sizeof(csum)), VIRTIO_NET_OK);
	cr_assert_eq(fb.offloads, TAP_OFFLOAD_CSUM);
	uint8_t tso4[2 + 8] = { VIRTIO_NET_CTRL_GUEST_OFFLOADS, VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET,
				1u << VIRTIO_NET_F_GUEST_TSO4 };
	cr_assert_eq(handle(n, tso4, sizeof(tso4)), VIRTIO_NET_ERR);
	cr_assert_eq(fb.offload_calls, 1, "the backend is not asked for what was refused");
	free_net(n);
}

/* A guest that turned TSO off (Linux does for XDP) keeps it off when the
 * backend is reopened after its interface came back (net_link.c). */
Test(net_ctrl, guest_offloads_set_is_kept_for_a_reopened_backend)
{
	uint64_t acked = F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4);
	struct virtio_net *n = make_net(1, acked);
	n->guest_offloads = acked;   /* as DRIVER_OK leaves it */
	uint8_t csum[2 + 8] = { VIRTIO_NET_CTRL_GUEST_OFFLOADS, VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET,
				1u << VIRTIO_NET_F_GUEST_CSUM };
	cr_assert_eq(handle(n, csum, sizeof(csum)), VIRTIO_NET_OK);
	cr_assert_eq(n->guest_offloads, F(VIRTIO_NET_F_GUEST_CSUM));
	cr_assert_eq(n->features, acked, "the negotiated features do not change");
	free_net(n);
}

/* The workers read what RX frames may carry from each pair's word: a guest
 * that turned TSO off gets no GSO frame the tap queued before it did. */
static unsigned rx_offloads_seen_by_backend;
static struct virtio_net *net_under_test;

static int fb_set_offload_seeing_pair0(struct net_backend *b, unsigned offloads, struct vmm_err *err)
{
	rx_offloads_seen_by_backend = net_qp_rx_offloads(&net_under_test->qp[0]);
	return fb_set_offload(b, offloads, err);
}

Test(net_ctrl, guest_offloads_set_reaches_every_pair_narrowed_before_the_backend_changes)
{
	uint64_t acked = F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO6);
	struct virtio_net *n = make_net(2, acked);
	n->guest_offloads = acked;
	vnet_publish_rx_offloads(n, acked);
	const struct net_backend_ops ops = { .kind = "fake", .set_offload = fb_set_offload_seeing_pair0 };
	n->backend->ops = &ops;
	net_under_test = n;
	uint8_t tso6[2 + 8] = { VIRTIO_NET_CTRL_GUEST_OFFLOADS, VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET,
				1u << VIRTIO_NET_F_GUEST_CSUM, 1u << (VIRTIO_NET_F_GUEST_TSO6 - 8) };
	cr_assert_eq(handle(n, tso6, sizeof(tso6)), VIRTIO_NET_OK);
	cr_assert_eq(rx_offloads_seen_by_backend, NET_RX_CSUM | NET_RX_TSO6,
		     "TSO4 is off for the workers before the backend is asked");
	for (unsigned p = 0; p < 2; p++)
		cr_assert_eq(net_qp_rx_offloads(&n->qp[p]), NET_RX_CSUM | NET_RX_TSO6, "pair %u", p);
	uint8_t all[2 + 8] = { VIRTIO_NET_CTRL_GUEST_OFFLOADS, VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET,
			       (1u << VIRTIO_NET_F_GUEST_CSUM) | (1u << VIRTIO_NET_F_GUEST_TSO4),
			       1u << (VIRTIO_NET_F_GUEST_TSO6 - 8) };
	cr_assert_eq(handle(n, all, sizeof(all)), VIRTIO_NET_OK);
	cr_assert_eq(rx_offloads_seen_by_backend, NET_RX_CSUM | NET_RX_TSO6,
		     "TSO4 comes back only once the backend gives it");
	cr_assert_eq(net_qp_rx_offloads(&n->qp[1]), NET_RX_CSUM | NET_RX_TSO4 | NET_RX_TSO6);
	n->backend->ops = &fake_backend_ops;
	free_net(n);
}

Test(net_ctrl, a_chain_without_a_writable_byte_is_served_and_pushed_with_length_0)
{
	struct virtio_net *n = make_net(1, 0);
	const uint8_t cmd[] = { VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, 0 };
	struct cmd_chain cc;
	build(&cc, cmd, sizeof(cmd), NULL, 0, true);
	cr_assert_eq(vnet_ctrl_handle(n, &cc.c), 0);
	cr_assert_eq(cc.ack, 0xee, "nothing written");
	cr_assert(!n->filter.promisc, "the command still applies");
	free_net(n);
}

Test(net_ctrl, short_unknown_and_oversized_commands_are_refused)
{
	struct virtio_net *n = make_net(1, 0);
	const uint8_t one[] = { VIRTIO_NET_CTRL_RX };
	const uint8_t unknown[] = { 0x7f, 0, 0 };
	cr_assert_eq(handle(n, one, sizeof(one)), VIRTIO_NET_ERR, "shorter than the header");
	cr_assert_eq(handle(n, unknown, sizeof(unknown)), VIRTIO_NET_ERR, "unknown class");

	/* 4097 readable bytes: more than one command may hold. */
	static uint8_t big[4097];
	big[0] = VIRTIO_NET_CTRL_RX;
	big[1] = VIRTIO_NET_CTRL_RX_PROMISC;
	uint8_t ack = 0;
	struct guest_chain c = { .nr_readable = 2, .nr_writable = 1 };
	c.iov[0] = (struct iovec){ big, 4096 };
	c.iov[1] = (struct iovec){ big + 4096, 1 };
	c.iov[2] = (struct iovec){ &ack, 1 };
	cr_assert_eq(vnet_ctrl_handle(n, &c), 1);
	cr_assert_eq(ack, VIRTIO_NET_ERR);
	cr_assert(n->filter.promisc, "unchanged");
	free_net(n);
}
