#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "devices/serial.h"

struct uart {
	struct serial *s;
	struct bus_device dev;
	struct machine ev;
	int irq_level;   /* what the UART last drove its line to */
	int pipe_out[2];
};

static void no_stop(void *o, int status, const char *reason) { (void)o; (void)status; (void)reason; }
static void no_log(void *o, const char *line) { (void)o; (void)line; }

static int record_irq(void *o, unsigned gsi, int level)
{
	struct uart *u = o;
	cr_assert_eq(gsi, 4u);
	u->irq_level = level;
	return 0;
}

static void uart_open(struct uart *u)
{
	memset(u, 0, sizeof(*u));
	cr_assert_eq(pipe(u->pipe_out), 0);
	u->ev = (struct machine){ .opaque = u, .request_stop = no_stop, .log = no_log,
				  .set_irq = record_irq };
	struct serial_config cfg = { .in_fd = -1, .out_fd = u->pipe_out[1], .gsi = 4 };
	cr_assert_eq(serial_create(&u->s, &cfg, &u->ev, NULL), 0);
	u->dev = serial_bus_device(u->s);
}

static void uart_close(struct uart *u)
{
	serial_destroy(u->s);
	close(u->pipe_out[0]);
	close(u->pipe_out[1]);
}

static uint8_t rd(struct uart *u, unsigned reg)
{
	uint8_t v;
	u->dev.read(u->dev.opaque, reg, &v, 1);
	return v;
}

static void wr(struct uart *u, unsigned reg, uint8_t v)
{
	u->dev.write(u->dev.opaque, reg, &v, 1);
}

Test(serial, transmit_reaches_output_and_thr_stays_empty)
{
	struct uart u;
	uart_open(&u);
	wr(&u, 0, 'h');
	wr(&u, 0, 'i');
	char buf[2];
	cr_assert_eq(read(u.pipe_out[0], buf, 2), 2);
	cr_assert_eq(buf[0], 'h');
	cr_assert_eq(buf[1], 'i');
	cr_assert_eq(rd(&u, 5) & 0x60, 0x60, "THRE and TEMT always set");
	uart_close(&u);
}

Test(serial, scratch_and_divisor_latch)
{
	struct uart u;
	uart_open(&u);
	wr(&u, 7, 0xa5);
	cr_assert_eq(rd(&u, 7), 0xa5);
	wr(&u, 3, 0x80);       /* DLAB */
	wr(&u, 0, 0x01);
	wr(&u, 1, 0x02);
	cr_assert_eq(rd(&u, 0), 0x01);
	cr_assert_eq(rd(&u, 1), 0x02);
	wr(&u, 3, 0x03);       /* 8N1, DLAB off */
	cr_assert_eq(rd(&u, 1), 0x00, "IER untouched by divisor writes");
	uart_close(&u);
}

Test(serial, loopback_as_linux_8250_probe_expects)
{
	struct uart u;
	uart_open(&u);
	wr(&u, 4, 0x10 | 0x0a);   /* loop, OUT2, RTS */
	cr_assert_eq(rd(&u, 6) & 0xf0, 0x90, "DCD|CTS");
	wr(&u, 0, 'x');
	cr_assert_eq(rd(&u, 5) & 1, 1, "data ready in loopback");
	cr_assert_eq(rd(&u, 0), 'x');
	cr_assert_eq(rd(&u, 5) & 1, 0);
	wr(&u, 4, 0);
	cr_assert_eq(rd(&u, 6) & 0xb0, 0xb0, "modem lines up when not looping");
	uart_close(&u);
}

Test(serial, thre_interrupt_raised_on_enable_and_cleared_by_iir_read)
{
	struct uart u;
	uart_open(&u);
	cr_assert_eq(rd(&u, 2) & 0x0f, 0x01, "no interrupt pending");
	cr_assert_eq(u.irq_level, 0);
	wr(&u, 1, 0x02);                     /* enable THRI */
	cr_assert_eq(u.irq_level, 1, "the line goes up with the pending THRE");
	cr_assert_eq(rd(&u, 2) & 0x0f, 0x02, "THRE pending");
	cr_assert_eq(rd(&u, 2) & 0x0f, 0x01, "IIR read acknowledged it");
	cr_assert_eq(u.irq_level, 0, "and the line went down");
	wr(&u, 0, 'a');
	cr_assert_eq(rd(&u, 2) & 0x0f, 0x02, "pending again after a transmit");
	wr(&u, 2, 0x01);                     /* FIFO on */
	cr_assert_eq(rd(&u, 2) & 0xc0, 0xc0);
	uart_close(&u);
}

Test(serial, received_data_interrupt_has_priority)
{
	struct uart u;
	uart_open(&u);
	wr(&u, 4, 0x10);                     /* loopback feeds the receiver */
	wr(&u, 1, 0x03);                     /* RDI + THRI */
	wr(&u, 0, 'z');
	cr_assert_eq(rd(&u, 2) & 0x0f, 0x04, "RDI first");
	cr_assert_eq(rd(&u, 0), 'z');
	cr_assert_eq(rd(&u, 2) & 0x0f, 0x02, "then THRE");
	uart_close(&u);
}
