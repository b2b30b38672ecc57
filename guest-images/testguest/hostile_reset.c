/* SPDX-License-Identifier: Apache-2.0 */
/* net-hostile kind reset-under-load: a correct driver at full rate that
 * resets the device (Status = 0) in the middle of its traffic, `cycles`
 * times. Each cycle brings the device up on the same rings and buffers,
 * sends UDP as fast as the ring takes it (like net-gen) while taking what
 * the host sends (it blasts from the `armed` line on; the first cycle
 * starts with the first frame that arrives, so a host slow to see the
 * line still loads every cycle), and after `cycle-ms` queues one more TX batch and writes Status = 0 with reads and
 * writes in flight. The reset must complete (Status reads 0 within 2 s);
 * afterwards the device must not write into the rings or buffers any more
 * (a read or write still in flight would land in memory the next cycle
 * uses); and a correct driver must never see NEEDS_RESET. */
#include "delay.h"
#include "hostile.h"
#include "hostile_int.h"
#include "io.h"
#include "lib.h"
#include "serial.h"
#include "sys.h"

#define TX_BATCH       64
#define POISON         0x5b
#define LATE_WRITE_US  5000         /* after the reset: nothing may change in this long */
#define GEN_PORT       9            /* discard */
#define FIRST_FRAME_US 10000000     /* the host's traffic must start within 10 s of `armed` */

/* Frames go to a MAC nobody has: the host drops them at once. */
static const uint8_t nobody[ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0xee };

struct load_stats {
	uint64_t tx, rx, needs_reset, late_writes;
};

static unsigned fill_tx(struct hostile *h, uint64_t *seq)
{
	struct vnet_pair *p = &h->net.pair[0];
	unsigned n = 0;
	uint16_t id;
	uint8_t *buf;

	while (n < TX_BATCH && (buf = vnet_tx_get(p, &id))) {
		unsigned size = ETH_ZLEN + (unsigned)(*seq * 97 % (ETH_FRAME_MAX - ETH_ZLEN + 1));
		unsigned plen = size - UDP_FRAME_HLEN;
		uint8_t *frame = buf + VNET_HDR_LEN;

		memset(buf, 0, VNET_HDR_LEN);
		np_udp_headers(frame, &h->self, nobody, h->peer_ip, GEN_PORT, GEN_PORT, plen);
		np_seq_fill(frame + UDP_FRAME_HLEN, plen, 0, *seq);
		vnet_tx_put(p, id, size);
		(*seq)++;
		n++;
	}
	vnet_tx_flush(p);
	return n;
}

static unsigned take_rx(struct hostile *h)
{
	struct vnet_pair *p = &h->net.pair[0];
	struct vnet_rx rx;
	unsigned n = 0;

	while (n < 64 && vnet_rx_next(p, &rx)) {
		vnet_rx_recycle(p, rx.id);
		n++;
	}
	if (n) {
		vnet_rx_flush(p);
		virtq_update_used_event(&p->rx);
	}
	return n;
}

/* After the reset: poison the used rings and the RX buffers, wait, and
 * look whether anything changed. */
static int late_writes(struct hostile *h)
{
	struct vnet_pair *p = &h->net.pair[0];
	size_t used_len = sizeof(uint16_t) * 3 + sizeof(struct vring_used_elem) * p->rx.num;
	size_t buf_len = (size_t)p->rx.num * VNET_BUF_SIZE;
	const uint8_t *areas[3] = { (uint8_t *)p->rx.used, (uint8_t *)p->tx.used, p->rxbuf };
	size_t lens[3] = { used_len, sizeof(uint16_t) * 3 + sizeof(struct vring_used_elem) * p->tx.num,
			   buf_len };

	for (unsigned a = 0; a < 3; a++)
		memset((void *)areas[a], POISON, lens[a]);
	delay_us(LATE_WRITE_US);
	for (unsigned a = 0; a < 3; a++)
		for (size_t i = 0; i < lens[a]; i++)
			if (areas[a][i] != POISON) {
				tg_printf("testguest: hostile %s: %s byte %lu is 0x%02x after the reset\n",
					  h->kind, a == 0 ? "RX used ring" : a == 1 ? "TX used ring" : "RX buffer",
					  (unsigned long)i, areas[a][i]);
				return 1;
			}
	return 0;
}

/* Until the host's first frame arrives (it starts blasting when it sees
 * the `armed` line; on a loaded machine that may take longer than all the
 * cycles). Returns the frames taken, 0 if none came in FIRST_FRAME_US. */
static unsigned wait_first_frame(struct hostile *h)
{
	uint64_t end = tsc_deadline_us(FIRST_FRAME_US);
	unsigned n;

	while (!(n = take_rx(h)))
		if (tsc_passed(end)) {
			tg_printf("testguest: hostile %s: no frame from the host within %llu s of armed\n",
				  h->kind, U(FIRST_FRAME_US / 1000000));
			break;
		}
	return n;
}

void hostile_reset_under_load(struct hostile *h)
{
	struct hostile_up_opts o = { .post_rx = 1, .quiet = 1 };
	struct load_stats st = { 0 };
	uint64_t seq = 0;

	hostile_up(h, &o);
	hostile_armed(h, "cycles %llu cycle-ms %llu", U(h->cycles), U(h->cycle_us / 1000));
	st.rx += wait_first_frame(h);
	for (uint64_t c = 0; c < h->cycles; c++) {
		uint64_t end, next_check = 0;

		if (c)
			hostile_up(h, &o);
		end = tsc_deadline_us(h->cycle_us);
		while (!tsc_passed(end)) {
			st.tx += fill_tx(h, &seq);
			st.rx += take_rx(h);
			vnet_tx_reclaim(&h->net.pair[0]);
			if (tsc_passed(next_check)) {
				if (hostile_needs_reset(h)) {
					st.needs_reset++;
					hostile_violation(h, "NEEDS_RESET under load in cycle %llu (a correct driver)",
							  U(c));
					break;
				}
				next_check = tsc_deadline_us(1000);
			}
		}
		/* In flight: a TX batch just queued, RX buffers posted. */
		st.tx += fill_tx(h, &seq);
		if (hostile_reset(h)) {
			tg_printf("testguest: hostile %s: Status did not read 0 within 2 s of the reset in cycle %llu\n",
				  h->kind, U(c));
			tg_exit(TG_EXIT_HOSTILE_RESET);
		}
		if (late_writes(h)) {
			st.late_writes++;
			hostile_violation(h, "the device wrote to guest memory after the reset in cycle %llu",
					  U(c));
		}
	}
	hostile_wait_needs_reset(h, 0);
	tg_printf("testguest: hostile %s cycles %llu tx %llu rx %llu needs-reset %llu late-writes %llu\n",
		  h->kind, U(h->cycles), U(st.tx), U(st.rx), U(st.needs_reset), U(st.late_writes));
}
