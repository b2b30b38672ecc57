/* SPDX-License-Identifier: Apache-2.0 */
/* net-hostile kind ctrl-garbage: bad commands on the control queue.
 *
 * The device comes up with the control queue (CTRL_VQ, CTRL_RX, MQ when
 * offered, INDIRECT_DESC) and queue pair 0 with RX buffers posted. Each
 * command below goes out alone; the device may answer VIRTIO_NET_ERR,
 * return the chain unused or report NEEDS_RESET (then the guest resets and
 * brings the device up again), but must not answer garbage with
 * VIRTIO_NET_OK, stay silent, write into the device-readable parts or
 * past the length it reports. After each one a valid command must be
 * answered VIRTIO_NET_OK and an echo request to the peer must come back
 * (the data queues keep working). */
#include "delay.h"
#include "hostile.h"
#include "hostile_int.h"
#include "io.h"
#include "lib.h"
#include "serial.h"
#include "sys.h"

#define ANSWER_WAIT_US  1000000
#define PING_WAIT_US    400000      /* a loaded host answers late */
#define PING_TRIES      5
#define SENTINEL        0xee        /* ack bytes before the device writes them */
#define BIG             65536
#define MANY            100         /* data descriptors of many-descs (> 64 segments) */

struct ctrl_area {
	uint8_t hdr[64];
	uint8_t data[BIG + 64];
	uint8_t ack[BIG];
	struct vring_desc table[MANY + 8];
};

/* Descriptors of one command, linked with NEXT in the order added. */
struct chain {
	struct vring_desc *t;
	uint16_t n, max;
};

struct ctx {
	struct hostile *h;
	struct virtq *q;
	struct ctrl_area *a;
	uint8_t valid_class, valid_cmd;
	uint16_t valid_len;             /* data bytes of the valid command */
	int indirect;
	uint32_t ack_len;               /* writable ack bytes of the last command */
};

enum outcome { O_OK, O_ERR, O_OTHER_ACK, O_UNUSED, O_NEEDS_RESET, O_NO_ANSWER, O_SKIPPED };

static const char *const outcome_names[] = {
	[O_OK] = "ok", [O_ERR] = "err", [O_OTHER_ACK] = "other-ack", [O_UNUSED] = "unused",
	[O_NEEDS_RESET] = "needs-reset", [O_NO_ANSWER] = "no-answer", [O_SKIPPED] = "skipped",
};

static void add(struct chain *c, const void *addr, uint32_t len, uint16_t flags)
{
	if (c->n == c->max)
		return;
	c->t[c->n] = (struct vring_desc){ (uint64_t)(uintptr_t)addr, len,
					  (uint16_t)(flags | VRING_DESC_F_NEXT), (uint16_t)(c->n + 1) };
	c->n++;
}

static struct chain direct(struct ctx *x)
{
	return (struct chain){ x->q->desc, 0, x->q->num };
}

static struct chain in_table(struct ctx *x)
{
	return (struct chain){ x->a->table, 0, MANY + 8 };
}

/* Close the chain (no NEXT on the last) and make it available as head 0;
 * a chain in the indirect table goes behind one INDIRECT descriptor. */
static void submit(struct ctx *x, struct chain *c)
{
	if (c->n)
		c->t[c->n - 1].flags &= (uint16_t)~VRING_DESC_F_NEXT;
	if (c->t == x->a->table)
		virtq_set_desc(x->q, 0, x->a->table, c->n * (uint32_t)sizeof(struct vring_desc),
			       VRING_DESC_F_INDIRECT, 0);
	virtq_push(x->q, 0);
	hostile_kick(x->q);
}

static void set_hdr(struct ctx *x, uint8_t class, uint8_t cmd)
{
	x->a->hdr[0] = class;
	x->a->hdr[1] = cmd;
}

/* The valid command's header and data, in a chain of its own or `c`. */
static void add_valid(struct ctx *x, struct chain *c, uint32_t ack_len)
{
	set_hdr(x, x->valid_class, x->valid_cmd);
	memset(x->a->data, 0, 2);
	x->a->data[0] = 1;              /* PROMISC on / 1 queue pair */
	add(c, x->a->hdr, 2, 0);
	add(c, x->a->data, x->valid_len, 0);
	add(c, x->a->ack, ack_len, VRING_DESC_F_WRITE);
	x->ack_len = ack_len;
}

/* ---- the commands ---------------------------------------------------------- */

static int b_valid(struct ctx *x)
{
	struct chain c = direct(x);

	add_valid(x, &c, 1);
	submit(x, &c);
	return 1;
}

/* hdr{class, cmd} + `len` data bytes + a 1-byte writable ack. */
static void plain(struct ctx *x, uint8_t class, uint8_t cmd, uint32_t len)
{
	struct chain c = direct(x);

	set_hdr(x, class, cmd);
	add(&c, x->a->hdr, 2, 0);
	if (len)
		add(&c, x->a->data, len, 0);
	add(&c, x->a->ack, 1, VRING_DESC_F_WRITE);
	x->ack_len = 1;
	submit(x, &c);
}

static int b_short_header(struct ctx *x)
{
	struct chain c = direct(x);

	set_hdr(x, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC);
	add(&c, x->a->hdr, 1, 0);
	add(&c, x->a->ack, 1, VRING_DESC_F_WRITE);
	x->ack_len = 1;
	submit(x, &c);
	return 1;
}

static int b_header_only(struct ctx *x)
{
	plain(x, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, 0);
	return 1;
}

static int b_ack_only(struct ctx *x)
{
	struct chain c = direct(x);

	add(&c, x->a->ack, 1, VRING_DESC_F_WRITE);
	x->ack_len = 1;
	submit(x, &c);
	return 1;
}

static int b_zero_lengths(struct ctx *x)
{
	struct chain c = direct(x);

	set_hdr(x, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC);
	add(&c, x->a->hdr, 0, 0);
	add(&c, x->a->data, 0, 0);
	add(&c, x->a->ack, 1, VRING_DESC_F_WRITE);
	x->ack_len = 1;
	submit(x, &c);
	return 1;
}

static int b_long_64k(struct ctx *x)
{
	x->a->data[0] = 1;
	plain(x, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, BIG);
	return 1;
}

static int b_many_descs(struct ctx *x)
{
	struct chain c;

	if (x->q->num >= MANY + 2)
		c = direct(x);
	else if (x->indirect)
		c = in_table(x);
	else
		return 0;
	set_hdr(x, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC);
	add(&c, x->a->hdr, 2, 0);
	for (unsigned i = 0; i < MANY; i++)
		add(&c, x->a->data + i, 1, 0);
	add(&c, x->a->ack, 1, VRING_DESC_F_WRITE);
	x->ack_len = 1;
	submit(x, &c);
	return 1;
}

static int b_bad_class(struct ctx *x) { plain(x, 0xff, 0, 1); return 1; }
static int b_bad_rx_cmd(struct ctx *x) { plain(x, VIRTIO_NET_CTRL_RX, 0x7f, 1); return 1; }
static int b_bad_mac_cmd(struct ctx *x) { plain(x, VIRTIO_NET_CTRL_MAC, 0xff, 6); return 1; }
static int b_bad_mq_cmd(struct ctx *x) { plain(x, VIRTIO_NET_CTRL_MQ, 0xff, 2); return 1; }

static int b_mq_pairs(struct ctx *x, uint16_t pairs)
{
	memcpy(x->a->data, &pairs, 2);
	plain(x, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 2);
	return 1;
}
static int b_mq_pairs_0(struct ctx *x) { return b_mq_pairs(x, 0); }
static int b_mq_pairs_max(struct ctx *x) { return b_mq_pairs(x, 0xffff); }

static int b_mac_table_huge(struct ctx *x)
{
	memset(x->a->data, 0xff, 4);    /* le32 entries = 0xffffffff, nothing after */
	plain(x, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, 4);
	return 1;
}

static int b_offloads_all(struct ctx *x)
{
	memset(x->a->data, 0xff, 8);    /* every offload bit, negotiated or not */
	plain(x, VIRTIO_NET_CTRL_GUEST_OFFLOADS, VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET, 8);
	return 1;
}

static int b_promisc_2_bytes(struct ctx *x)
{
	x->a->data[0] = 1;
	x->a->data[1] = 1;
	plain(x, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, 2);
	return 1;
}

static int b_no_ack(struct ctx *x)
{
	struct chain c = direct(x);

	add_valid(x, &c, 1);
	c.t[c.n - 1].flags &= (uint16_t)~VRING_DESC_F_WRITE;   /* the ack is readable too */
	x->ack_len = 0;
	submit(x, &c);
	return 1;
}

static int b_ack_first(struct ctx *x)
{
	struct chain c = direct(x);

	add(&c, x->a->ack, 1, VRING_DESC_F_WRITE);
	set_hdr(x, x->valid_class, x->valid_cmd);
	x->a->data[0] = 1;
	add(&c, x->a->hdr, 2, 0);
	add(&c, x->a->data, x->valid_len, 0);
	x->ack_len = 1;
	submit(x, &c);
	return 1;
}

static int b_desc_outside_ram(struct ctx *x)
{
	struct chain c = direct(x);

	add(&c, (const void *)(uintptr_t)OUTSIDE_RAM, 2, 0);
	add(&c, x->a->data, x->valid_len, 0);
	add(&c, x->a->ack, 1, VRING_DESC_F_WRITE);
	x->ack_len = 1;
	submit(x, &c);
	return 1;
}

/* Legal but unusual framings of the valid command: must be answered OK
 * (a device must not assume how a driver splits a message, spec 2.6.4). */
static int b_split_valid(struct ctx *x)
{
	struct chain c = direct(x);

	set_hdr(x, x->valid_class, x->valid_cmd);
	memset(x->a->data, 0, 2);
	x->a->data[0] = 1;
	add(&c, x->a->hdr, 1, 0);
	add(&c, x->a->hdr + 1, 1, 0);
	for (unsigned i = 0; i < x->valid_len; i++)
		add(&c, x->a->data + i, 1, 0);
	add(&c, x->a->ack, 1, VRING_DESC_F_WRITE);
	x->ack_len = 1;
	submit(x, &c);
	return 1;
}

static int b_big_ack(struct ctx *x)
{
	struct chain c = direct(x);

	add_valid(x, &c, BIG);
	submit(x, &c);
	return 1;
}

static int b_indirect_valid(struct ctx *x)
{
	struct chain c = in_table(x);

	if (!x->indirect)
		return 0;
	add_valid(x, &c, 1);
	submit(x, &c);
	return 1;
}

static const struct cmd {
	const char *name;
	int expect_ok;
	int (*build)(struct ctx *x);    /* 0: cannot be staged here */
} cmds[] = {
	{ "short-header", 0, b_short_header },
	{ "header-only", 0, b_header_only },
	{ "ack-only", 0, b_ack_only },
	{ "zero-lengths", 0, b_zero_lengths },
	{ "long-64k", 0, b_long_64k },
	{ "bad-class", 0, b_bad_class },
	{ "bad-rx-cmd", 0, b_bad_rx_cmd },
	{ "bad-mac-cmd", 0, b_bad_mac_cmd },
	{ "bad-mq-cmd", 0, b_bad_mq_cmd },
	{ "mq-pairs-0", 0, b_mq_pairs_0 },
	{ "mq-pairs-max", 0, b_mq_pairs_max },
	{ "mac-table-huge", 0, b_mac_table_huge },
	{ "offloads-all", 0, b_offloads_all },
	{ "promisc-2-bytes", 0, b_promisc_2_bytes },
	{ "no-ack", 0, b_no_ack },
	{ "split-valid", 1, b_split_valid },
	{ "big-ack", 1, b_big_ack },
	{ "indirect-valid", 1, b_indirect_valid },
	{ "many-descs", 0, b_many_descs },
	{ "ack-first", 0, b_ack_first },
	{ "desc-outside-ram", 0, b_desc_outside_ram },
};

/* ---- running them ---------------------------------------------------------- */

static uint32_t area_sum(const struct ctrl_area *a)
{
	return np_csum_add(np_csum_add(0, a->hdr, sizeof(a->hdr)), a->data, sizeof(a->data));
}

static enum outcome await(struct ctx *x, uint32_t *len)
{
	uint64_t end = tsc_deadline_us(ANSWER_WAIT_US);

	*len = 0;
	while (!tsc_passed(end)) {
		if (virtq_used_pending(x->q)) {
			struct vring_used_elem e = virtq_pop_used(x->q);
			uint8_t ack = __atomic_load_n(&x->a->ack[0], __ATOMIC_ACQUIRE);

			virtq_update_used_event(x->q);
			*len = e.len;
			if (!x->ack_len || ack == SENTINEL)
				return O_UNUSED;
			return ack == VIRTIO_NET_OK ? O_OK : ack == VIRTIO_NET_ERR ? O_ERR : O_OTHER_ACK;
		}
		if (hostile_needs_reset(x->h))
			return O_NEEDS_RESET;
		cpu_pause();
	}
	return O_NO_ANSWER;
}

/* One command: build, wait for the answer, check what the device wrote. */
static enum outcome run_cmd(struct ctx *x, const char *name, int (*build)(struct ctx *x))
{
	struct ctrl_area *a = x->a;
	uint32_t before, len;
	enum outcome o;

	memset(a->ack, SENTINEL, sizeof(a->ack));
	x->ack_len = 0;
	if (!build(x)) {
		tg_printf("testguest: ctrl %s -> skipped (queue size %u, indirect %d)\n", name,
			  x->q->num, x->indirect);
		return O_SKIPPED;
	}
	before = area_sum(a);
	o = await(x, &len);
	if (area_sum(a) != before)
		hostile_violation(x->h, "ctrl %s: the device wrote into the device-readable part", name);
	for (uint32_t i = len > 0 ? len : (o == O_OK || o == O_ERR ? 1 : 0); i < sizeof(a->ack); i++)
		if (a->ack[i] != SENTINEL) {
			hostile_violation(x->h, "ctrl %s: ack byte %u written, used len %u", name, i, len);
			break;
		}
	if (o == O_OTHER_ACK)
		tg_printf("testguest: ctrl %s -> ack 0x%02x len %u\n", name, a->ack[0], len);
	else
		tg_printf("testguest: ctrl %s -> %s len %u\n", name, outcome_names[o], len);
	return o;
}

static void bring_up(struct hostile *h)
{
	struct hostile_up_opts o = { .extra = F(VIRTIO_RING_F_INDIRECT_DESC), .ctrl = 1,
				     .post_rx = 1, .quiet = 1 };

	hostile_up(h, &o);
	if (!h->net.has_ctrl) {
		tg_printf("testguest: hostile %s: no control queue (offered 0x%llx)\n", h->kind,
			  U(h->net.offered));
		tg_exit(TG_EXIT_HOSTILE_SETUP);
	}
}

/* An echo request to the peer comes back: the data queues work. */
static int data_path_ok(struct hostile *h, uint16_t *seq)
{
	for (unsigned t = 0; t < PING_TRIES; t++) {
		uint16_t s = (*seq)++;

		if (hostile_ping_send(h, s) && hostile_ping_wait(h, s, PING_WAIT_US))
			return 1;
	}
	return 0;
}

void hostile_ctrl_garbage(struct hostile *h)
{
	static struct ctx x;
	unsigned count[O_SKIPPED + 1] = { 0 }, valid = 0, valid_ok = 0, pings = 0, pings_ok = 0;
	uint16_t seq = 0;

	bring_up(h);
	x.h = h;
	x.q = &h->net.ctrl;
	x.indirect = vnet_has(&h->net, VIRTIO_RING_F_INDIRECT_DESC);
	x.a = dma_alloc(sizeof(*x.a), 64);
	if (!x.a) {
		tg_printf("testguest: hostile %s: no memory for the commands\n", h->kind);
		tg_exit(TG_EXIT_HOSTILE_SETUP);
	}
	if (vnet_has(&h->net, VIRTIO_NET_F_CTRL_RX)) {
		x.valid_class = VIRTIO_NET_CTRL_RX;
		x.valid_cmd = VIRTIO_NET_CTRL_RX_PROMISC;
		x.valid_len = 1;
	} else if (vnet_has(&h->net, VIRTIO_NET_F_MQ)) {
		x.valid_class = VIRTIO_NET_CTRL_MQ;
		x.valid_cmd = VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET;
		x.valid_len = 2;
	} else {
		tg_printf("testguest: hostile %s: neither CTRL_RX nor MQ: no valid command to check with\n",
			  h->kind);
		tg_exit(TG_EXIT_HOSTILE_SETUP);
	}
	hostile_armed(h, "commands %u ctrl-queue %u size %u indirect %d valid %u/%u",
		      (unsigned)ARRAY_SIZE(cmds), x.q->index, x.q->num, x.indirect, x.valid_class,
		      x.valid_cmd);
	for (unsigned i = 0; i <= ARRAY_SIZE(cmds); i++) {
		/* Before the first command and after each: a valid one. */
		enum outcome o;

		valid++;
		o = run_cmd(&x, "valid", b_valid);
		if (o == O_OK)
			valid_ok++;
		else
			hostile_violation(h, "valid command %s after %s", outcome_names[o],
					  i ? cmds[i - 1].name : "the bring-up");
		if (o == O_NEEDS_RESET || o == O_NO_ANSWER)
			bring_up(h);
		pings++;
		if (data_path_ok(h, &seq))
			pings_ok++;
		else
			hostile_violation(h, "no echo reply from the peer after %s",
					  i ? cmds[i - 1].name : "the bring-up");
		if (i == ARRAY_SIZE(cmds))
			break;
		o = run_cmd(&x, cmds[i].name, cmds[i].build);
		count[o]++;
		if (cmds[i].expect_ok && o != O_OK && o != O_SKIPPED)
			hostile_violation(h, "ctrl %s (a legal command) -> %s", cmds[i].name, outcome_names[o]);
		if (!cmds[i].expect_ok && (o == O_OK || o == O_OTHER_ACK || o == O_NO_ANSWER))
			hostile_violation(h, "ctrl %s (garbage) -> %s", cmds[i].name, outcome_names[o]);
		if (o == O_NEEDS_RESET || o == O_NO_ANSWER)
			bring_up(h);
	}
	hostile_wait_needs_reset(h, 0);
	tg_printf("testguest: hostile %s commands %u ok %u err %u unused %u needs-reset %u no-answer %u skipped %u valid-ok %u/%u ping %u/%u\n",
		  h->kind, (unsigned)ARRAY_SIZE(cmds), count[O_OK], count[O_ERR], count[O_UNUSED],
		  count[O_NEEDS_RESET], count[O_NO_ANSWER], count[O_SKIPPED], valid_ok, valid,
		  pings_ok, pings);
}
