/* SPDX-License-Identifier: Apache-2.0 */
#include "devices/pit.h"

#include <string.h>

#include "base/log_limit.h"

/* Control word (port 0x43). */
#define CW_SELECT(v)    (((v) >> 6) & 3)    /* 3: read-back */
#define CW_ACCESS(v)    (((v) >> 4) & 3)    /* 0: counter latch */
#define CW_MODE(v)      (((v) >> 1) & 7)    /* 6 and 7 are modes 2 and 3 */
#define CW_BCD          0x01
#define SELECT_READ_BACK 3
#define ACCESS_LATCH    0
#define ACCESS_LSB      1
#define ACCESS_MSB      2
#define ACCESS_WORD     3
/* Read-back command: the bits are active low. */
#define RB_NO_COUNT     0x20
#define RB_NO_STATUS    0x10
#define RB_CHANNEL(i)   (0x02 << (i))
/* Status byte. */
#define ST_OUT          0x80
#define ST_NULL_COUNT   0x40

/* Port 0x61. */
#define P61_GATE2       0x01
#define P61_SPEAKER     0x02
#define P61_REFRESH     0x10
#define P61_OUT2        0x20

#define NS_PER_S 1000000000ull

static uint64_t pit_now(struct pit *p)
{
	return p->now_ns ? p->now_ns(p->clock_opaque) : log_limit_now_ns();
}

void pit_init(struct pit *p, const struct machine *ev, uint64_t (*now_ns)(void *), void *clock_opaque)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	p->ev = ev;
	p->now_ns = now_ns;
	p->clock_opaque = clock_opaque;
	for (unsigned i = 0; i < 3; i++) {
		p->ch[i].access = ACCESS_WORD;
		p->ch[i].reload = 0x10000;
		p->ch[i].gate = i != 2;   /* channel 2's gate is port 0x61 bit 0, low at reset */
	}
}

void pit_destroy(struct pit *p)
{
	pthread_mutex_destroy(&p->lock);
}

/* ---- counting ------------------------------------------------------------ */

static uint64_t ns_to_ticks(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * PIT_HZ / NS_PER_S);
}

static uint64_t ticks_to_ns(uint64_t ticks)
{
	return (uint64_t)((unsigned __int128)ticks * NS_PER_S / PIT_HZ);
}

static uint32_t modulus(const struct pit_channel *c)
{
	return c->bcd ? 10000 : 0x10000;
}

/* Input clock edges counted since the count started. */
static uint64_t elapsed_ticks(struct pit *p, const struct pit_channel *c)
{
	if (!c->running)
		return 0;
	if (c->paused)
		return c->paused_ticks;
	return ns_to_ticks(pit_now(p) - c->start_ns);
}

/* The counting element after d ticks, as a number (not yet BCD-coded).
 * Modes 0, 1, 4 and 5 count through zero and on from the maximum; 2
 * reloads on reaching 1 (it never reads 0); 3 counts down by two and
 * reloads, twice per period. */
static uint32_t count_after(const struct pit_channel *c, uint64_t d)
{
	uint32_t n = c->reload, m = modulus(c);
	switch (c->mode) {
	case 2:
		return n - (uint32_t)(d % n);
	case 3:
		return n - (uint32_t)((2 * d) % n);
	default:
		return (uint32_t)((n + m - d % m) % m);
	}
}

/* OUT after d ticks of a running count. */
static bool out_after(const struct pit_channel *c, uint64_t d)
{
	uint32_t n = c->reload;
	switch (c->mode) {
	case 0:                                   /* high at terminal count, and stays */
	case 1:                                   /* low from the trigger to terminal count */
		return d >= n;
	case 2:
		return d % n != n - 1;            /* low for the one clock before each reload */
	case 3:
		return d % n < (n + 1) / 2;       /* high for the first half of each period */
	default:
		return d != n;                    /* 4, 5: a one-clock low strobe */
	}
}

/* Modes 1 and 5 count from a rising gate, not from the count's write, and
 * a low gate does not stop them. */
static bool gate_triggered(const struct pit_channel *c)
{
	return c->mode == 1 || c->mode == 5;
}

static bool channel_out(struct pit *p, const struct pit_channel *c)
{
	if (!c->running)
		return c->mode != 0;              /* mode 0 sets OUT low with the control word */
	return out_after(c, elapsed_ticks(p, c));
}

static uint16_t to_bcd(uint32_t v)
{
	return (uint16_t)((v / 1000 % 10) << 12 | (v / 100 % 10) << 8 | (v / 10 % 10) << 4 | (v % 10));
}

static uint32_t from_bcd(uint16_t v)
{
	/* Digits above 9 are the guest's own mistake: taken at face value. */
	return (v >> 12 & 15) * 1000u + (v >> 8 & 15) * 100u + (v >> 4 & 15) * 10u + (v & 15);
}

/* What a read of the counter would show now, coded as programmed. */
static uint16_t channel_value(struct pit *p, const struct pit_channel *c)
{
	uint32_t v = c->running ? count_after(c, elapsed_ticks(p, c)) : c->reload;
	v %= modulus(c);                        /* the maximum count reads as 0 */
	return c->bcd ? to_bcd(v) : (uint16_t)v;
}

static void channel_start(struct pit *p, struct pit_channel *c)
{
	c->running = true;
	c->paused = !c->gate && !gate_triggered(c);
	c->paused_ticks = 0;
	c->start_ns = pit_now(p);
}

/* Modes 0, 2, 3 and 4 count only while the gate is high; a rising gate
 * starts modes 1 and 5 and restarts 1, 2, 3 and 5 from the initial count. */
static void channel_set_gate(struct pit *p, struct pit_channel *c, bool gate)
{
	if (gate == c->gate)
		return;
	if (!gate && c->running && !c->paused && !gate_triggered(c)) {
		c->paused_ticks = elapsed_ticks(p, c);
		c->paused = true;
	}
	c->gate = gate;
	if (!gate || !c->loaded)
		return;
	if (c->mode == 0 || c->mode == 4) {
		if (c->running && c->paused) {
			c->start_ns = pit_now(p) - ticks_to_ns(c->paused_ticks);
			c->paused = false;
		}
	} else {
		channel_start(p, c);
	}
}

/* ---- the guest's side ---------------------------------------------------- */

static void channel_latch(struct pit *p, struct pit_channel *c)
{
	if (c->latched_bytes)
		return;                         /* a latch holds until it is read */
	c->latch = channel_value(p, c);
	c->latched_bytes = c->access == ACCESS_WORD ? 2 : 1;
	c->latch_msb_next = c->access == ACCESS_MSB;
}

static void channel_latch_status(struct pit *p, struct pit_channel *c)
{
	if (c->status_latched)
		return;
	c->status = (uint8_t)((channel_out(p, c) ? ST_OUT : 0) | (c->loaded ? 0 : ST_NULL_COUNT) |
			      c->access << 4 | c->mode << 1 | (c->bcd ? CW_BCD : 0));
	c->status_latched = true;
}

/* Under a split irqchip nothing raises IRQ0: told once, when the guest
 * starts channel 0 in a mode that ticks (2, 3) or strobes (4), as a PIT
 * clock-event device does. Not for mode 0: Linux loads it with a count to
 * stop the PIT, and it is the usual mode for a one-shot measurement. */
static void tell_no_irq0(struct pit *p)
{
	if (p->irq0_told || !p->ev)
		return;
	p->irq0_told = true;
	machine_log(p->ev, "PIT: channel 0 counts but raises no IRQ0 with --irqchip=split "
			   "(use --irqchip=kernel for a guest that needs the PIT's tick)");
}

static void channel_program(struct pit *p, unsigned i, uint8_t cw)
{
	struct pit_channel *c = &p->ch[i];
	unsigned mode = CW_MODE(cw);
	c->mode = (uint8_t)(mode > 5 ? mode - 4 : mode);
	c->access = (uint8_t)CW_ACCESS(cw);
	c->bcd = cw & CW_BCD;
	c->loaded = c->running = c->paused = false;
	c->write_msb_next = c->read_msb_next = false;
	c->latched_bytes = 0;
	c->status_latched = false;
}

static void write_control(struct pit *p, uint8_t cw)
{
	unsigned sel = CW_SELECT(cw);
	if (sel == SELECT_READ_BACK) {
		for (unsigned i = 0; i < 3; i++) {
			if (!(cw & RB_CHANNEL(i)))
				continue;
			if (!(cw & RB_NO_STATUS))
				channel_latch_status(p, &p->ch[i]);
			if (!(cw & RB_NO_COUNT))
				channel_latch(p, &p->ch[i]);
		}
	} else if (CW_ACCESS(cw) == ACCESS_LATCH) {
		channel_latch(p, &p->ch[sel]);
	} else {
		channel_program(p, sel, cw);
	}
}

static void channel_load(struct pit *p, unsigned i, uint16_t written)
{
	struct pit_channel *c = &p->ch[i];
	uint32_t n = c->bcd ? from_bcd(written) : written;
	if (n == 0)
		n = modulus(c);
	c->reload = n;
	c->loaded = true;
	if (gate_triggered(c))
		return;                         /* used from the gate's next rising edge */
	channel_start(p, c);
	if (i == 0 && c->mode >= 2)
		tell_no_irq0(p);
}

static void write_counter(struct pit *p, unsigned i, uint8_t v)
{
	struct pit_channel *c = &p->ch[i];
	switch (c->access) {
	case ACCESS_LSB:
		channel_load(p, i, v);
		break;
	case ACCESS_MSB:
		channel_load(p, i, (uint16_t)(v << 8));
		break;
	default:
		if (!c->write_msb_next) {
			c->write_lsb = v;
			c->write_msb_next = true;
			if (c->mode == 0)
				c->running = false;   /* mode 0 stops counting at the first byte */
		} else {
			c->write_msb_next = false;
			channel_load(p, i, (uint16_t)(c->write_lsb | v << 8));
		}
		break;
	}
}

static uint8_t read_counter(struct pit *p, unsigned i)
{
	struct pit_channel *c = &p->ch[i];
	if (c->status_latched) {
		c->status_latched = false;
		return c->status;
	}
	if (c->latched_bytes) {
		uint8_t b = (uint8_t)(c->latch_msb_next ? c->latch >> 8 : c->latch);
		c->latch_msb_next = !c->latch_msb_next;
		c->latched_bytes--;
		return b;
	}
	uint16_t v = channel_value(p, c);
	switch (c->access) {
	case ACCESS_LSB:
		return (uint8_t)v;
	case ACCESS_MSB:
		return (uint8_t)(v >> 8);
	default: {
		uint8_t b = (uint8_t)(c->read_msb_next ? v >> 8 : v);
		c->read_msb_next = !c->read_msb_next;
		return b;
	}
	}
}

static void counter_ports_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	struct pit *p = opaque;
	memset(data, 0, len);
	pthread_mutex_lock(&p->lock);
	data[0] = off < 3 ? read_counter(p, (unsigned)off) : 0xff;   /* 0x43 is write-only */
	pthread_mutex_unlock(&p->lock);
}

static void counter_ports_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct pit *p = opaque;
	(void)len;
	pthread_mutex_lock(&p->lock);
	if (off == 3)
		write_control(p, data[0]);
	else
		write_counter(p, (unsigned)off, data[0]);
	pthread_mutex_unlock(&p->lock);
}

static void speaker_port_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	struct pit *p = opaque;
	(void)off;
	memset(data, 0, len);
	pthread_mutex_lock(&p->lock);
	p->refresh = !p->refresh;   /* old BIOS delay loops wait for this to toggle */
	data[0] = (uint8_t)((p->ch[2].gate ? P61_GATE2 : 0) | (p->speaker_data ? P61_SPEAKER : 0) |
			    (p->refresh ? P61_REFRESH : 0) | (channel_out(p, &p->ch[2]) ? P61_OUT2 : 0));
	pthread_mutex_unlock(&p->lock);
}

static void speaker_port_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct pit *p = opaque;
	(void)off;
	(void)len;
	pthread_mutex_lock(&p->lock);
	p->speaker_data = data[0] & P61_SPEAKER;
	channel_set_gate(p, &p->ch[2], data[0] & P61_GATE2);
	pthread_mutex_unlock(&p->lock);
}

struct bus_device pit_counter_ports(struct pit *p)
{
	return (struct bus_device){ .name = "pit", .opaque = p,
				    .read = counter_ports_read, .write = counter_ports_write };
}

struct bus_device pit_speaker_port(struct pit *p)
{
	return (struct bus_device){ .name = "pit-port61", .opaque = p,
				    .read = speaker_port_read, .write = speaker_port_write };
}
