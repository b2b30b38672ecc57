/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

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
	memset(u, 0, sizeof(*u));   /* irq_level starts at 0, as the UART's line does */
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
	wr(&u, 0, '\n');
	char buf[3];
	cr_assert_eq(read(u.pipe_out[0], buf, 3), 3);
	cr_assert_eq(memcmp(buf, "hi\n", 3), 0);
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

/* ---- an output that does not take bytes -------------------------------------
 * The vCPU writing to the UART must never hang in write(): a reader that
 * went away is logged once and output dropped; a reader that stops reading
 * holds the guest back only until stall_ms or until the VM stops. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

struct out_uart {
	struct serial *s;
	struct bus_device dev;
	struct machine ev;
	int logs;
	char last_log[256];
	bool stopping;
};

static void count_log(void *o, const char *line)
{
	struct out_uart *u = o;
	u->logs++;
	snprintf(u->last_log, sizeof(u->last_log), "%s", line);
}

static void out_uart_open(struct out_uart *u, int out_fd, unsigned stall_ms)
{
	memset(u, 0, sizeof(*u));
	u->ev = (struct machine){ .opaque = u, .request_stop = no_stop, .log = count_log };
	struct serial_config cfg = { .in_fd = -1, .out_fd = out_fd, .gsi = 4, .stall_ms = stall_ms,
				     .stopping = &u->stopping, .out_name = "serial output 'test'" };
	cr_assert_eq(serial_create(&u->s, &cfg, &u->ev, NULL), 0);
	u->dev = serial_bus_device(u->s);
}

static void out_put(struct out_uart *u, uint8_t c)
{
	u->dev.write(u->dev.opaque, 0, &c, 1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fill a pipe so that the next write would block. */
static void fill_pipe(int w)
{
	int flags = fcntl(w, F_GETFL);
	fcntl(w, F_SETFL, flags | O_NONBLOCK);
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	while (write(w, buf, sizeof(buf)) > 0)
		;
	while (write(w, buf, 1) > 0)
		;
	cr_assert_eq(errno, EAGAIN);
	fcntl(w, F_SETFL, flags);
}

Test(serial, output_to_a_reader_that_went_away_is_logged_once_then_dropped)
{
	/* As in the library's vCPU threads: SIGPIPE blocked, EPIPE returned. */
	sigset_t pipe_sig;
	sigemptyset(&pipe_sig);
	sigaddset(&pipe_sig, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_sig, NULL);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	close(p[0]);
	struct out_uart u;
	out_uart_open(&u, p[1], 0);
	for (int i = 0; i < 10; i++) {
		out_put(&u, 'a');
		out_put(&u, '\n');
	}
	cr_assert_eq(u.logs, 1, "logged %d times", u.logs);
	cr_assert_str_eq(u.last_log, "serial output 'test': Broken pipe; guest console output is dropped from now on");
	serial_destroy(u.s);
	close(p[1]);
}

Test(serial, a_reader_that_does_not_read_stalls_output_for_stall_ms_only)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	fill_pipe(p[1]);
	struct out_uart u;
	out_uart_open(&u, p[1], 200);
	out_put(&u, 'a');   /* buffered */
	double t0 = now_s();
	out_put(&u, '\n');  /* written out: waits */
	double waited = now_s() - t0;
	cr_assert(waited >= 0.15 && waited < 2.0, "waited %.3f s", waited);
	cr_assert_eq(u.logs, 1);
	cr_assert(strstr(u.last_log, "nobody is reading it"), "%s", u.last_log);
	/* Stalled: further bytes are dropped at once, and not logged again. */
	t0 = now_s();
	for (int i = 0; i < 100; i++)
		out_put(&u, 'b');
	cr_assert_lt(now_s() - t0, 0.5);
	cr_assert_eq(u.logs, 1);
	/* The reader catches up: output flows again. */
	char buf[65536];
	cr_assert_gt(read(p[0], buf, sizeof(buf)), 0);
	out_put(&u, 'c');
	int flags = fcntl(p[0], F_GETFL);
	fcntl(p[0], F_SETFL, flags | O_NONBLOCK);
	ssize_t n, last = -1;
	char c = 0;
	while ((n = read(p[0], &c, 1)) == 1)
		last = c;
	cr_assert_eq(last, 'c', "the byte written after the reader caught up arrived");
	serial_destroy(u.s);
	close(p[0]);
	close(p[1]);
}

static void *stop_after_100ms(void *arg)
{
	struct out_uart *u = arg;
	usleep(100 * 1000);
	__atomic_store_n(&u->stopping, true, __ATOMIC_RELEASE);
	return NULL;
}

Test(serial, a_full_output_without_stall_limit_gives_up_when_the_vm_stops)
{
	int p[2];
	cr_assert_eq(pipe(p), 0);
	fill_pipe(p[1]);   /* blocking descriptor, like a program's stdout */
	struct out_uart u;
	out_uart_open(&u, p[1], 0);
	pthread_t t;
	pthread_create(&t, NULL, stop_after_100ms, &u);
	double t0 = now_s();
	out_put(&u, '\n');
	double waited = now_s() - t0;
	pthread_join(t, NULL);
	cr_assert(waited >= 0.05 && waited < 2.0, "waited %.3f s", waited);
	cr_assert_eq(u.logs, 0, "backpressure is not an error: %s", u.last_log);
	serial_destroy(u.s);
	close(p[0]);
	close(p[1]);
}

Test(serial, a_regular_file_takes_output_directly)
{
	char path[] = "/tmp/minivmm-serial-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	unlink(path);
	struct out_uart u;
	out_uart_open(&u, fd, 200);
	out_put(&u, 'o');
	out_put(&u, 'k');
	out_put(&u, '\n');
	char buf[4] = "";
	cr_assert_eq(pread(fd, buf, 3, 0), 3);
	cr_assert_str_eq(buf, "ok\n");
	serial_destroy(u.s);
	close(fd);
}

/* ---- buffered output ----------------------------------------------------
 * Output goes out in order at a newline, a full buffer, an IER write, the
 * VM's stop, and within a few ms after its first byte otherwise. */

/* Bytes in the pipe right now (non-blocking read). */
static ssize_t drain(int fd, char *buf, size_t size)
{
	int flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	ssize_t total = 0, n;
	while ((size_t)total < size && (n = read(fd, buf + total, size - (size_t)total)) > 0)
		total += n;
	fcntl(fd, F_SETFL, flags);
	return total;
}

static void put_str(struct uart *u, const char *str)
{
	for (; *str; str++)
		wr(u, 0, (uint8_t)*str);
}

Test(serial, output_waits_for_a_newline_then_goes_out_in_order)
{
	struct uart u;
	uart_open(&u);
	char buf[64];
	put_str(&u, "ab");
	cr_assert_eq(drain(u.pipe_out[0], buf, sizeof(buf)), 0, "a partial line stays buffered");
	put_str(&u, "c\nde");
	cr_assert_eq(drain(u.pipe_out[0], buf, sizeof(buf)), 4);
	cr_assert_eq(memcmp(buf, "abc\n", 4), 0);
	uart_close(&u);
}

Test(serial, an_ier_write_sends_a_partial_line)
{
	struct uart u;
	uart_open(&u);
	char buf[64];
	put_str(&u, "login: ");
	wr(&u, 1, 0x01);   /* Linux's console restores IER after each message */
	cr_assert_eq(drain(u.pipe_out[0], buf, sizeof(buf)), 7);
	cr_assert_eq(memcmp(buf, "login: ", 7), 0);
	uart_close(&u);
}

Test(serial, a_full_buffer_goes_out_without_a_newline)
{
	struct uart u;
	uart_open(&u);
	static char buf[8192];
	for (int i = 0; i < 5000; i++)
		wr(&u, 0, (uint8_t)('a' + i % 26));
	ssize_t n = drain(u.pipe_out[0], buf, sizeof(buf));
	cr_assert_eq(n, 4096, "one full buffer out, %zd", n);
	for (int i = 0; i < 4096; i++)
		cr_assert_eq(buf[i], 'a' + i % 26, "byte %d in order", i);
	uart_close(&u);
}

Test(serial, a_partial_line_goes_out_within_a_few_ms)
{
	struct uart u;
	uart_open(&u);
	cr_assert_eq(serial_start_input(u.s, NULL), 0, "the serial thread runs the deferred flush");
	double t0 = now_s();
	put_str(&u, "$ ");
	struct pollfd p = { .fd = u.pipe_out[0], .events = POLLIN };
	cr_assert_eq(poll(&p, 1, 2000), 1, "the prompt arrived");
	double took = now_s() - t0;
	char buf[8];
	cr_assert_eq(drain(u.pipe_out[0], buf, sizeof(buf)), 2);
	cr_assert_eq(memcmp(buf, "$ ", 2), 0);
	cr_assert_lt(took, 0.5, "took %.3f s", took);
	/* Armed again for the next partial line. */
	put_str(&u, "x");
	cr_assert_eq(poll(&p, 1, 2000), 1);
	cr_assert_eq(drain(u.pipe_out[0], buf, sizeof(buf)), 1);
	serial_stop_input(u.s);
	uart_close(&u);
}

Test(serial, what_is_left_goes_out_when_the_vm_stops)
{
	struct uart u;
	uart_open(&u);
	char buf[64];
	put_str(&u, "last words");
	serial_stop_input(u.s);   /* the VM's stop, with or without a thread */
	cr_assert_eq(drain(u.pipe_out[0], buf, sizeof(buf)), 10);
	cr_assert_eq(memcmp(buf, "last words", 10), 0);
	put_str(&u, "!");
	serial_destroy(u.s);      /* and its teardown */
	cr_assert_eq(drain(u.pipe_out[0], buf, sizeof(buf)), 1);
	cr_assert_eq(buf[0], '!');
	close(u.pipe_out[0]);
	close(u.pipe_out[1]);
}

/* ---- queued transmits (machine_coalesce_pio) ---------------------------
 * KVM may queue THR writes only while nothing the guest can see depends on
 * each: no THR-empty interrupt, no loopback. The serial thread switches the
 * queue (each switch waits for a grace period, which a vCPU must not) and
 * drains it every few milliseconds, so the fake machine below is called
 * from that thread: its fields are read and written atomically. */

struct coal_uart {
	struct serial *s;
	struct bus_device dev;
	struct machine ev;
	int calls;      /* coalesce_pio calls */
	bool on;
	uint16_t port;
	int answer;     /* what the machine says: 0 or -EOPNOTSUPP */
	int drains;     /* drain_queued calls */
	int pending;    /* bytes "queued" for the next drain */
};

static int record_coalesce(void *o, uint16_t port, unsigned len, bool assign)
{
	struct coal_uart *u = o;
	cr_assert_eq(len, 1u, "only the transmit register");
	__atomic_store_n(&u->port, port, __ATOMIC_SEQ_CST);
	if (u->answer == 0)
		__atomic_store_n(&u->on, assign, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&u->calls, 1, __ATOMIC_SEQ_CST);
	return u->answer;
}

static unsigned record_drain(void *o)
{
	struct coal_uart *u = o;
	__atomic_add_fetch(&u->drains, 1, __ATOMIC_SEQ_CST);
	return (unsigned)__atomic_exchange_n(&u->pending, 0, __ATOMIC_SEQ_CST);
}

static int ignore_irq(void *o, unsigned gsi, int level) { (void)o; (void)gsi; (void)level; return 0; }

static void coal_open(struct coal_uart *u, int answer, uint16_t thr_port)
{
	memset(u, 0, sizeof(*u));
	u->answer = answer;
	u->ev = (struct machine){ .opaque = u, .request_stop = no_stop, .log = no_log,
				  .set_irq = ignore_irq, .coalesce_pio = record_coalesce,
				  .drain_queued = record_drain };
	struct serial_config cfg = { .in_fd = -1, .out_fd = -1, .gsi = 4, .thr_port = thr_port };
	cr_assert_eq(serial_create(&u->s, &cfg, &u->ev, NULL), 0);
	cr_assert_eq(serial_start_input(u->s, NULL), 0, "the serial thread switches and drains the queue");
	u->dev = serial_bus_device(u->s);
}

static void coal_wr(struct coal_uart *u, unsigned reg, uint8_t v)
{
	u->dev.write(u->dev.opaque, reg, &v, 1);
}

static void coal_print(struct coal_uart *u, int n)
{
	for (int i = 0; i < n; i++)
		coal_wr(u, 0, 'a');
}

static bool coal_on(struct coal_uart *u) { return __atomic_load_n(&u->on, __ATOMIC_SEQ_CST); }
static int coal_calls(struct coal_uart *u) { return __atomic_load_n(&u->calls, __ATOMIC_SEQ_CST); }

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The serial thread has made the switch: within a second (it is asked at
 * once; the wait is for a loaded machine). */
static bool coal_becomes(struct coal_uart *u, bool on)
{
	for (int i = 0; i < 1000 && coal_on(u) != on; i++)
		sleep_ms(1);
	return coal_on(u) == on;
}

/* No switch: given 50 ms, the thread has made none. */
static bool coal_stays(struct coal_uart *u, bool on)
{
	sleep_ms(50);
	return coal_on(u) == on;
}

Test(serial, transmits_are_queued_once_the_guest_has_printed_a_few_lines)
{
	struct coal_uart u;
	coal_open(&u, 0, 0x3f8);
	cr_assert(coal_stays(&u, false), "not at reset: a guest that prints a line and exits gains less "
		  "than the grace period its registration costs");
	cr_assert_eq(coal_calls(&u), 0);
	coal_print(&u, 255);
	cr_assert(coal_stays(&u, false));
	coal_print(&u, 1);
	cr_assert(coal_becomes(&u, true), "queued after 256 transmits with IER clear");
	cr_assert_eq(__atomic_load_n(&u.port, __ATOMIC_SEQ_CST), 0x3f8);
	coal_wr(&u, 1, 0x01);   /* RDI only: a transmit still raises nothing */
	cr_assert(coal_stays(&u, true));
	cr_assert_eq(coal_calls(&u), 1);
	serial_destroy(u.s);
}

Test(serial, enabling_the_thr_interrupt_stops_queueing_at_once)
{
	struct coal_uart u;
	coal_open(&u, 0, 0x3f8);
	coal_print(&u, 256);
	cr_assert(coal_becomes(&u, true));
	coal_wr(&u, 1, 0x02);
	cr_assert(coal_becomes(&u, false), "each transmit must now raise THRE in time");
	coal_wr(&u, 1, 0x00);
	cr_assert(coal_stays(&u, false), "not again right away: tty output toggles THRI per burst");
	coal_print(&u, 255);
	cr_assert(coal_stays(&u, false));
	coal_print(&u, 1);
	cr_assert(coal_becomes(&u, true), "again after 256 transmits with THRI off");
	cr_assert_eq(coal_calls(&u), 3);
	serial_destroy(u.s);
}

Test(serial, queued_bytes_are_delivered_within_milliseconds_whatever_the_guest_does)
{
	struct coal_uart u;
	coal_open(&u, 0, 0x3f8);
	coal_print(&u, 256);
	cr_assert(coal_becomes(&u, true));
	/* The guest now polls memory: no exit. Its queued bytes still go. */
	__atomic_store_n(&u.pending, 5, __ATOMIC_SEQ_CST);
	int i = 0;
	while (__atomic_load_n(&u.pending, __ATOMIC_SEQ_CST) && i++ < 1000)
		sleep_ms(1);
	cr_assert_eq(__atomic_load_n(&u.pending, __ATOMIC_SEQ_CST), 0, "the serial thread drained the queue");
	/* DRAIN_MS is 4: 100 ms is ~25 drains, at least a few on a loaded machine. */
	int before = __atomic_load_n(&u.drains, __ATOMIC_SEQ_CST);
	sleep_ms(100);
	int during = __atomic_load_n(&u.drains, __ATOMIC_SEQ_CST) - before;
	cr_assert(during >= 3 && during <= 40, "%d drains in 100 ms", during);
	serial_destroy(u.s);
}

Test(serial, an_idle_queue_is_turned_off_and_stops_waking_the_thread)
{
	struct coal_uart u;
	coal_open(&u, 0, 0x3f8);
	coal_print(&u, 256);
	cr_assert(coal_becomes(&u, true));
	/* IDLE_OFF_MS (1 s) without a queued byte. */
	for (int i = 0; i < 3000 && coal_on(&u); i++)
		sleep_ms(1);
	cr_assert_not(coal_on(&u), "off after a second without a queued byte");
	int drains = __atomic_load_n(&u.drains, __ATOMIC_SEQ_CST);
	sleep_ms(50);
	cr_assert_eq(__atomic_load_n(&u.drains, __ATOMIC_SEQ_CST), drains, "no drains while off");
	coal_print(&u, 256);
	cr_assert(coal_becomes(&u, true), "on again after another 256 quiet transmits");
	serial_destroy(u.s);
}

Test(serial, loopback_stops_queueing)
{
	struct coal_uart u;
	coal_open(&u, 0, 0x3f8);
	coal_print(&u, 256);
	cr_assert(coal_becomes(&u, true));
	coal_wr(&u, 4, 0x10);
	cr_assert(coal_becomes(&u, false), "a looped-back byte shows in LSR and may interrupt");
	serial_destroy(u.s);
}

Test(serial, a_machine_that_cannot_queue_is_asked_once)
{
	struct coal_uart u;
	coal_open(&u, -EOPNOTSUPP, 0x3f8);
	coal_print(&u, 256);
	for (int i = 0; i < 1000 && coal_calls(&u) == 0; i++)
		sleep_ms(1);
	coal_wr(&u, 1, 0x02);
	coal_wr(&u, 1, 0x00);
	coal_print(&u, 600);
	sleep_ms(50);
	cr_assert_eq(coal_calls(&u), 1);
	serial_destroy(u.s);
	coal_open(&u, 0, 0);    /* no THR port: never */
	coal_print(&u, 600);
	sleep_ms(50);
	cr_assert_eq(coal_calls(&u), 0);
	serial_destroy(u.s);
}
