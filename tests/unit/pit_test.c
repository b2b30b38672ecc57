/* SPDX-License-Identifier: Apache-2.0 */
/* The split machine's 8254: counted against a clock the test moves, through
 * the ports, the way guests calibrate their TSC against it. */
#include <criterion/criterion.h>
#include <string.h>

#include "devices/pit.h"

struct timer {
	struct pit pit;
	struct bus_device counters, speaker;
	struct machine ev;
	uint64_t now;     /* ns */
	int logs;
};

static uint64_t fake_now(void *o) { return ((struct timer *)o)->now; }
static void no_stop(void *o, int status, const char *reason) { (void)o; (void)status; (void)reason; }
static void count_log(void *o, const char *line) { (void)line; ((struct timer *)o)->logs++; }

static void timer_open(struct timer *t)
{
	memset(t, 0, sizeof(*t));
	t->now = 5000000000ull;   /* an arbitrary boot time */
	t->ev = (struct machine){ .opaque = t, .request_stop = no_stop, .log = count_log };
	pit_init(&t->pit, &t->ev, fake_now, t);
	t->counters = pit_counter_ports(&t->pit);
	t->speaker = pit_speaker_port(&t->pit);
}

static void out(struct timer *t, uint16_t port, uint8_t v)
{
	if (port == PIT_PORT_SPEAKER)
		t->speaker.write(t->speaker.opaque, 0, &v, 1);
	else
		t->counters.write(t->counters.opaque, port - PIT_PORT_BASE, &v, 1);
}

static uint8_t in(struct timer *t, uint16_t port)
{
	uint8_t v;
	if (port == PIT_PORT_SPEAKER)
		t->speaker.read(t->speaker.opaque, 0, &v, 1);
	else
		t->counters.read(t->counters.opaque, port - PIT_PORT_BASE, &v, 1);
	return v;
}

/* A control word for channel ch with LSB-then-MSB access, then its count. */
static void program(struct timer *t, unsigned ch, uint8_t cw, uint16_t count)
{
	out(t, 0x43, cw);
	out(t, (uint16_t)(0x40 + ch), (uint8_t)count);
	out(t, (uint16_t)(0x40 + ch), (uint8_t)(count >> 8));
}

/* Move the clock to just past the given number of input clock edges. */
static void advance_ticks(struct timer *t, uint64_t ticks)
{
	t->now += ticks * 1000000000ull / PIT_HZ + 1;
}

/* LSB then MSB: two statements, since the order of two calls within one
 * expression is unspecified (a sanitizer build swapped them). */
static uint16_t read_word(struct timer *t, unsigned ch)
{
	uint8_t lo = in(t, (uint16_t)(0x40 + ch));
	uint8_t hi = in(t, (uint16_t)(0x40 + ch));
	return (uint16_t)(lo | hi << 8);
}

static uint16_t latch_read(struct timer *t, unsigned ch)
{
	out(t, 0x43, (uint8_t)(ch << 6));   /* counter latch */
	return read_word(t, ch);
}

Test(pit, channel_2_out_rises_at_terminal_count_as_linux_pit_calibrate_tsc_waits_for_it)
{
	struct timer t;
	timer_open(&t);
	out(&t, 0x61, (uint8_t)((in(&t, 0x61) & ~0x02) | 0x01));   /* gate high, speaker off */
	program(&t, 2, 0xb0, 11932);                                /* ch2, lo/hi, mode 0: 10 ms */
	cr_assert_eq(in(&t, 0x61) & 0x20, 0, "OUT2 low while counting");
	advance_ticks(&t, 11931);
	cr_assert_eq(in(&t, 0x61) & 0x20, 0);
	advance_ticks(&t, 1);
	cr_assert_eq(in(&t, 0x61) & 0x20, 0x20, "OUT2 high at terminal count");
	advance_ticks(&t, 70000);
	cr_assert_eq(in(&t, 0x61) & 0x20, 0x20, "and it stays high in mode 0");
	pit_destroy(&t.pit);
}

Test(pit, a_low_gate_holds_channel_2_until_port_0x61_raises_it)
{
	struct timer t;
	timer_open(&t);
	program(&t, 2, 0xb0, 0x1000);                               /* ch2, lo/hi, mode 0 */
	advance_ticks(&t, 500);
	cr_assert_eq(latch_read(&t, 2), 0x1000, "gate 2 is low at reset: no counting");
	out(&t, 0x61, 0x01);
	advance_ticks(&t, 0x100);
	cr_assert_eq(latch_read(&t, 2), 0x1000 - 0x100);
	out(&t, 0x61, 0x00);
	advance_ticks(&t, 0x300);
	cr_assert_eq(latch_read(&t, 2), 0x1000 - 0x100, "mode 0 pauses while the gate is low");
	out(&t, 0x61, 0x01);
	advance_ticks(&t, 0x10);
	uint16_t v = latch_read(&t, 2);
	cr_assert(v <= 0x1000 - 0x10f && v >= 0x1000 - 0x111, "and goes on where it stopped: %#x", v);
	pit_destroy(&t.pit);
}

Test(pit, channel_0_in_mode_2_counts_down_and_reloads_as_the_test_guest_reads_it)
{
	struct timer t;
	timer_open(&t);
	program(&t, 0, 0x34, 0);                                    /* ch0, lo/hi, mode 2, 65536 */
	cr_assert_eq(t.logs, 1, "no IRQ0 under a split irqchip: told once");
	advance_ticks(&t, 1000);
	cr_assert_eq(latch_read(&t, 0), 65536 - 1000);
	advance_ticks(&t, 65536);
	cr_assert_eq(latch_read(&t, 0), 65536 - 1000, "reloaded after one period");
	program(&t, 0, 0x34, 100);
	cr_assert_eq(t.logs, 1, "once");
	for (int i = 0; i < 300; i++) {
		uint16_t v = latch_read(&t, 0);
		cr_assert(v >= 1 && v <= 100, "mode 2 reads 1..N, never 0: %u", v);
		advance_ticks(&t, 7);
	}
	pit_destroy(&t.pit);
}

Test(pit, stopping_channel_0_the_way_linux_does_says_nothing)
{
	struct timer t;
	timer_open(&t);
	program(&t, 0, 0x30, 0);                                    /* ch0, lo/hi, mode 0 */
	cr_assert_eq(t.logs, 0, "mode 0 with a count is how Linux stops the PIT's tick");
	program(&t, 0, 0x38, 100);                                  /* mode 4: Linux's one-shot */
	cr_assert_eq(t.logs, 1, "a one-shot clock event would need IRQ0");
	pit_destroy(&t.pit);
}

Test(pit, a_latched_count_holds_until_both_bytes_are_read)
{
	struct timer t;
	timer_open(&t);
	program(&t, 0, 0x34, 0x8000);
	advance_ticks(&t, 0x123);
	out(&t, 0x43, 0x00);
	advance_ticks(&t, 0x200);
	out(&t, 0x43, 0x00);                                        /* a second latch changes nothing */
	cr_assert_eq(in(&t, 0x40), (0x8000 - 0x123) & 0xff);
	advance_ticks(&t, 0x200);
	cr_assert_eq(in(&t, 0x40), (0x8000 - 0x123) >> 8);
	uint16_t live = read_word(&t, 0);
	cr_assert_eq(live, 0x8000 - 0x523, "then the reads are live again");
	pit_destroy(&t.pit);
}

Test(pit, msb_only_access_reads_and_writes_the_high_byte)
{
	struct timer t;
	timer_open(&t);
	out(&t, 0x61, 0x01);
	out(&t, 0x43, 0xa0);                                        /* ch2, MSB only, mode 0 */
	out(&t, 0x42, 0x40);                                        /* 0x4000 */
	advance_ticks(&t, 0x300);
	cr_assert_eq(in(&t, 0x42), 0x3d);
	cr_assert_eq(in(&t, 0x42), 0x3d, "no flip-flop with one-byte access");
	pit_destroy(&t.pit);
}

Test(pit, read_back_latches_status_then_count)
{
	struct timer t;
	timer_open(&t);
	out(&t, 0x43, 0x30);                                        /* ch0, lo/hi, mode 0 */
	out(&t, 0x43, 0xe2);                                        /* read-back ch0 status only */
	uint8_t st = in(&t, 0x40);
	cr_assert_eq(st, 0x40 | 0x30 | 0x00, "OUT low, null count, lo/hi, mode 0: %#x", st);
	out(&t, 0x40, 0x10);
	out(&t, 0x40, 0x00);                                        /* 16 */
	advance_ticks(&t, 20);
	out(&t, 0x43, 0xc2);                                        /* read-back ch0 status and count */
	cr_assert_eq(in(&t, 0x40), 0x80 | 0x30, "OUT high past terminal count, count loaded");
	uint16_t v = read_word(&t, 0);
	cr_assert_eq(v, (uint16_t)(16 - 20), "mode 0 counts on through zero: %#x", v);
	pit_destroy(&t.pit);
}

Test(pit, bcd_counts_wrap_at_10000)
{
	struct timer t;
	timer_open(&t);
	program(&t, 0, 0x35, 0x1000);                               /* ch0, lo/hi, mode 2, BCD 1000 */
	advance_ticks(&t, 1);
	cr_assert_eq(latch_read(&t, 0), 0x0999);
	advance_ticks(&t, 998);
	cr_assert_eq(latch_read(&t, 0), 0x0001);
	program(&t, 0, 0x31, 0);                                    /* mode 0, BCD, count 0 = 10000 */
	advance_ticks(&t, 10001);
	cr_assert_eq(latch_read(&t, 0), 0x9999, "through zero to 9999");
	pit_destroy(&t.pit);
}

Test(pit, mode_1_waits_for_the_gate_and_a_rising_gate_restarts_it)
{
	struct timer t;
	timer_open(&t);
	program(&t, 2, 0xb2, 100);                                  /* ch2, lo/hi, mode 1 */
	cr_assert_eq(in(&t, 0x61) & 0x20, 0x20, "OUT high until triggered");
	advance_ticks(&t, 50);
	out(&t, 0x61, 0x01);                                        /* trigger */
	advance_ticks(&t, 40);
	cr_assert_eq(in(&t, 0x61) & 0x20, 0, "low while the one-shot runs");
	cr_assert_eq(latch_read(&t, 2), 60);
	out(&t, 0x61, 0x00);
	out(&t, 0x61, 0x01);                                        /* retrigger */
	advance_ticks(&t, 10);
	cr_assert_eq(latch_read(&t, 2), 90);
	advance_ticks(&t, 90);
	cr_assert_eq(in(&t, 0x61) & 0x20, 0x20, "high again at terminal count");
	pit_destroy(&t.pit);
}

Test(pit, port_0x61_keeps_the_speaker_bit_and_toggles_refresh)
{
	struct timer t;
	timer_open(&t);
	out(&t, 0x61, 0x03);
	uint8_t a = in(&t, 0x61), b = in(&t, 0x61);
	cr_assert_eq(a & 0x03, 0x03);
	cr_assert_eq((a ^ b) & 0x10, 0x10, "bit 4 toggles from read to read");
	cr_assert_eq(in(&t, 0x43), 0xff, "the control word is write-only");
	pit_destroy(&t.pit);
}
