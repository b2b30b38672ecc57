/* SPDX-License-Identifier: Apache-2.0 */
/* 16550A UART. Transmission is instantaneous (the transmitter is always
 * empty), so THRE/TEMT are always set and a THR-empty interrupt is pending
 * again right after every write, which is what Linux's 8250 driver expects.
 *
 * Output is buffered, because every byte already costs the guest two exits
 * (the LSR poll and the THR write) and a write() per byte on top of those
 * was a third of a console byte's cost nested. The buffer goes out, in
 * order, at each newline, when it is full, when the guest writes IER (Linux
 * ends every console message and every burst of tty output with one), when
 * the VM stops (serial_stop_input, serial_destroy), and at the latest
 * FLUSH_DELAY_MS after its first byte (the serial thread), so a prompt
 * without a newline still shows at once to a person.
 *
 * Once a guest has printed a few lines with the THR interrupt off, KVM
 * queues its transmits in the coalesced ring instead of exiting on each
 * (machine_coalesce_pio). A queued byte reaches the UART at the next exit
 * of any vCPU, and a guest that prints and then polls memory may not exit
 * for seconds: while the queue is on, the serial thread drains it every
 * DRAIN_MS, so console bytes reach the output within DRAIN_MS plus one
 * write whatever the guest does next. Turning the queue on or off changes
 * KVM's I/O bus, which costs an SRCU grace period (5-10 ms here): the
 * serial thread does it, never a vCPU, and turns the queue off again after
 * IDLE_OFF_MS without a queued byte, so an idle guest costs no wake-ups. */
#include "devices/serial.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/confine.h"
#include "minivmm_abi.h"

/* Register offsets (DLAB selects the divisor latch at 0 and 1). */
enum { UART_RBR_THR = 0, UART_IER = 1, UART_IIR_FCR = 2, UART_LCR = 3,
       UART_MCR = 4, UART_LSR = 5, UART_MSR = 6, UART_SCR = 7 };

#define IER_RDI   0x01   /* received data available */
#define IER_THRI  0x02   /* transmitter holding register empty */
#define IER_MSI   0x08   /* modem status */
#define IIR_NONE  0x01
#define IIR_THRI  0x02
#define IIR_RDI   0x04
#define IIR_MSI   0x00
#define IIR_FIFO  0xc0
#define FCR_FIFO_ENABLE 0x01
#define FCR_CLEAR_RX    0x02
#define LCR_DLAB  0x80
#define LSR_DR    0x01
#define LSR_THRE  0x20
#define LSR_TEMT  0x40
#define MCR_DTR   0x01
#define MCR_RTS   0x02
#define MCR_OUT1  0x04
#define MCR_OUT2  0x08
#define MCR_LOOP  0x10
#define MSR_CTS   0x10
#define MSR_DSR   0x20
#define MSR_RI    0x40
#define MSR_DCD   0x80

#define RX_FIFO_SIZE 256
#define ESCAPE_CHAR  0x01   /* Ctrl-A, as in QEMU: Ctrl-A x quits */
#define OUT_WAIT_SLICE_MS 50   /* how often a waiting write looks at `stopping` */
#define OUT_BUF_SIZE 4096      /* guest output not yet written */
/* One write() after POLLOUT never blocks for this much on a pipe (PIPE_BUF
 * is atomic and POLLOUT means a free page) nor on a terminal (n_tty wakes
 * writers with room for 256 bytes). */
#define OUT_CHUNK 256
#define FLUSH_DELAY_MS 5
/* Transmits with queueing allowed but off before it is turned on, at start
 * and after each stop. A guest that prints a few lines and exits gains less
 * than the registration costs (~20 us an exit on this PVM host, so 256 of
 * them are about one grace period; a Linux console prints kilobytes with
 * IER clear and gets its queue after a few lines). Linux's tty output also
 * turns the THR interrupt on and off per burst. */
#define COALESCE_AFTER 256
/* While the queue is on, the serial thread delivers it this often: the
 * bound on how long a queued console byte waits. */
#define DRAIN_MS 4
/* The queue goes off after this long without a queued byte. */
#define IDLE_OFF_MS 1000

struct serial {
	pthread_mutex_t lock;
	pthread_cond_t rx_space;
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	bool thr_interrupt_pending;
	uint8_t rx[RX_FIFO_SIZE];
	unsigned rx_head, rx_count;
	int irq_level;

	struct serial_config cfg;
	const struct machine *ev;

	uint8_t out_buf[OUT_BUF_SIZE];
	size_t out_len;
	bool flush_armed;      /* the serial thread flushes within FLUSH_DELAY_MS */
	int flush_fd;          /* eventfd: arms the serial thread's deferred flush */

	/* KVM queues THR writes (cfg.thr_port) while nothing can tell. The
	 * register model decides (coalesce_wanted) and wakes the serial
	 * thread (zone_fd), which has KVM do it (coalescing). */
	bool coalesce_wanted;
	bool coalescing;             /* KVM queues now; the serial thread's */
	bool coalesce_unavailable;   /* the machine cannot: never asked again */
	unsigned quiet_transmits;    /* transmits since coalescing was last allowed */
	int zone_fd;                 /* eventfd: coalesce_wanted changed */

	bool out_regular;      /* a regular file: writes never wait */
	bool out_broken;       /* a write failed: output is dropped for good */
	bool out_stalled;      /* nobody read for stall_ms: dropped until they do */
	bool stall_logged;

	bool terminal_saved;
	struct termios saved_termios;
	bool escape_pending;

	int stop_fd;           /* eventfd: tells the serial thread to leave */
	bool stopping;
	bool thread_running;
	pthread_t thread;
};

/* ---- register model (called with lock held) ------------------------- */

static uint8_t serial_pending_iir(const struct serial *s)
{
	if ((s->ier & IER_RDI) && s->rx_count)
		return IIR_RDI;
	if ((s->ier & IER_THRI) && s->thr_interrupt_pending)
		return IIR_THRI;
	return IIR_NONE;
}

static void serial_update_irq(struct serial *s)
{
	int level = serial_pending_iir(s) != IIR_NONE;
	if (level != s->irq_level) {
		s->irq_level = level;
		machine_set_irq(s->ev, s->cfg.gsi, level);
	}
}

static void serial_rx_push(struct serial *s, uint8_t byte)
{
	if (s->rx_count == RX_FIFO_SIZE)
		return;   /* overrun: the byte is lost, as on real hardware */
	s->rx[(s->rx_head + s->rx_count) % RX_FIFO_SIZE] = byte;
	s->rx_count++;
}

static uint8_t serial_rx_pop(struct serial *s)
{
	if (!s->rx_count)
		return 0;
	uint8_t b = s->rx[s->rx_head];
	s->rx_head = (s->rx_head + 1) % RX_FIFO_SIZE;
	s->rx_count--;
	pthread_cond_signal(&s->rx_space);
	return b;
}

static uint8_t serial_modem_status(const struct serial *s)
{
	if (!(s->mcr & MCR_LOOP))
		return MSR_DCD | MSR_DSR | MSR_CTS;
	/* Loopback wires the modem outputs back to the inputs; Linux's 8250
	 * probe checks exactly this. */
	uint8_t msr = 0;
	if (s->mcr & MCR_DTR)
		msr |= MSR_DSR;
	if (s->mcr & MCR_RTS)
		msr |= MSR_CTS;
	if (s->mcr & MCR_OUT1)
		msr |= MSR_RI;
	if (s->mcr & MCR_OUT2)
		msr |= MSR_DCD;
	return msr;
}

static bool serial_vm_stopping(const struct serial *s)
{
	return s->cfg.stopping && __atomic_load_n(s->cfg.stopping, __ATOMIC_ACQUIRE);
}

static void serial_log(struct serial *s, const char *what)
{
	char line[512];   /* out_name (96) + what (160) fit */
	snprintf(line, sizeof(line), "%s: %s", s->cfg.out_name[0] ? s->cfg.out_name : "serial output",
		 what);
	machine_log(s->ev, line);
}

/* Wait until out_fd can take a byte without blocking. False: give up on
 * this byte (the VM is stopping, or the output is stalled). */
static bool serial_out_wait(struct serial *s)
{
	unsigned waited = 0;
	for (;;) {
		struct pollfd p = { .fd = s->cfg.out_fd, .events = POLLOUT };
		int slice = s->out_stalled ? 0 : OUT_WAIT_SLICE_MS;
		int n = poll(&p, 1, slice);
		if (n > 0 || (n < 0 && errno != EINTR))
			return true;   /* writable, or an error write() will name */
		if (s->out_stalled || serial_vm_stopping(s))
			return false;
		if (n == 0)
			waited += (unsigned)slice;
		if (s->cfg.stall_ms && waited >= s->cfg.stall_ms) {
			s->out_stalled = true;
			if (!s->stall_logged) {
				s->stall_logged = true;
				serial_log(s, "nobody is reading it; guest console output is dropped until they do");
			}
			return false;
		}
	}
}

/* Write out the buffered output. Never blocks in write(): a write of at
 * most OUT_CHUNK bytes after POLLOUT does not (pipes, terminals), and a
 * descriptor we opened is O_NONBLOCK anyway. So a vCPU printing to an
 * output that is full waits here, interruptibly, rather than in the kernel
 * forever. Output that cannot go out (stopping, stalled, broken) is
 * dropped. Called with the lock held. */
static void serial_flush_locked(struct serial *s)
{
	size_t done = 0;
	while (done < s->out_len && !s->out_broken) {
		if (!s->out_regular && !serial_out_wait(s))
			break;
		size_t n = s->out_len - done;
		if (!s->out_regular && n > OUT_CHUNK)
			n = OUT_CHUNK;
		ssize_t w = write(s->cfg.out_fd, s->out_buf + done, n);
		if (w > 0) {
			done += (size_t)w;
			s->out_stalled = false;
			continue;
		}
		if (w < 0 && errno == EINTR && !serial_vm_stopping(s))
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (s->out_regular || serial_vm_stopping(s))
				break;   /* the VM is stopping: drop the rest */
			continue;    /* serial_out_wait decides */
		}
		/* EPIPE (the reader went away; SIGPIPE is blocked in vCPU
		 * threads or ignored), EIO, ENOSPC: once is enough. */
		s->out_broken = true;
		char what[160];
		snprintf(what, sizeof(what), "%s; guest console output is dropped from now on",
			 w < 0 ? strerror(errno) : "nothing written");
		serial_log(s, what);
	}
	s->out_len = 0;
}

/* Have the serial thread flush within FLUSH_DELAY_MS (once per buffer). */
static void serial_arm_flush(struct serial *s)
{
	if (s->flush_armed || !s->thread_running)
		return;
	s->flush_armed = true;
	uint64_t one = 1;
	if (write(s->flush_fd, &one, sizeof(one)) < 0) {
		/* Only on counter overflow: the thread has been told already. */
	}
}

/* One byte of guest output, into the buffer. */
static void serial_output(struct serial *s, uint8_t byte)
{
	if (s->cfg.out_fd < 0 || s->out_broken)
		return;
	s->out_buf[s->out_len++] = byte;
	/* Stalled (nobody reads): each byte is dropped at once unless the
	 * output takes bytes again, which the flush finds out without waiting. */
	if (byte == '\n' || s->out_len == OUT_BUF_SIZE || s->out_stalled)
		serial_flush_locked(s);
	else
		serial_arm_flush(s);
}

/* A queued THR write changes nothing the guest can see before its next
 * access, which exits and so delivers the queue first, as long as it raises
 * no interrupt (THRI off) and does not feed the receiver (no loopback). */
static bool serial_coalescing_allowed(const struct serial *s)
{
	return !(s->ier & IER_THRI) && !(s->mcr & MCR_LOOP);
}

/* After a register access (lock held): ask the serial thread to stop
 * queueing as soon as it would show, and to queue again after
 * COALESCE_AFTER transmits once it would not. The vCPU never waits for it:
 * until the thread has switched, writes keep exiting (or are queued and
 * delivered by the thread, which drains right after switching off). */
static void serial_update_coalescing(struct serial *s)
{
	if (!s->cfg.thr_port || s->coalesce_unavailable)
		return;
	bool allowed = serial_coalescing_allowed(s);
	if (!allowed)
		s->quiet_transmits = 0;
	bool want = allowed && s->quiet_transmits >= COALESCE_AFTER;
	if (want == s->coalesce_wanted)
		return;
	s->coalesce_wanted = want;
	uint64_t one = 1;
	if (write(s->zone_fd, &one, sizeof(one)) < 0) {
		/* Only on counter overflow: the thread has been told already. */
	}
}

static void serial_transmit(struct serial *s, uint8_t byte)
{
	if (s->quiet_transmits < COALESCE_AFTER)
		s->quiet_transmits++;
	if (s->mcr & MCR_LOOP)
		serial_rx_push(s, byte);
	else
		serial_output(s, byte);
	s->thr_interrupt_pending = true;
}

static uint8_t serial_read_reg(struct serial *s, unsigned reg)
{
	switch (reg) {
	case UART_RBR_THR:
		return (s->lcr & LCR_DLAB) ? s->dll : serial_rx_pop(s);
	case UART_IER:
		return (s->lcr & LCR_DLAB) ? s->dlm : s->ier;
	case UART_IIR_FCR: {
		uint8_t iir = serial_pending_iir(s);
		if (iir == IIR_THRI)
			s->thr_interrupt_pending = false;   /* reading IIR acknowledges THRE */
		return iir | ((s->fcr & FCR_FIFO_ENABLE) ? IIR_FIFO : 0);
	}
	case UART_LCR:
		return s->lcr;
	case UART_MCR:
		return s->mcr;
	case UART_LSR:
		return LSR_THRE | LSR_TEMT | (s->rx_count ? LSR_DR : 0);
	case UART_MSR:
		return serial_modem_status(s);
	default:
		return s->scr;
	}
}

static void serial_write_reg(struct serial *s, unsigned reg, uint8_t v)
{
	switch (reg) {
	case UART_RBR_THR:
		if (s->lcr & LCR_DLAB)
			s->dll = v;
		else
			serial_transmit(s, v);
		break;
	case UART_IER:
		if (s->lcr & LCR_DLAB) {
			s->dlm = v;
		} else {
			/* The end of a burst of output (see the top). */
			if (s->out_len)
				serial_flush_locked(s);
			/* Enabling THRI while the transmitter is empty raises it. */
			if ((v & IER_THRI) && !(s->ier & IER_THRI))
				s->thr_interrupt_pending = true;
			s->ier = v & 0x0f;
		}
		break;
	case UART_IIR_FCR:
		s->fcr = v & 0xc9;
		if (v & FCR_CLEAR_RX) {
			s->rx_count = 0;
			pthread_cond_signal(&s->rx_space);
		}
		break;
	case UART_LCR:
		s->lcr = v;
		break;
	case UART_MCR:
		s->mcr = v & 0x1f;
		break;
	case UART_SCR:
		s->scr = v;
		break;
	default:
		break;   /* LSR and MSR are read-only */
	}
}

static void serial_bus_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	struct serial *s = opaque;
	pthread_mutex_lock(&s->lock);
	memset(data, 0, len);
	data[0] = serial_read_reg(s, off & 7);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

static void serial_bus_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct serial *s = opaque;
	(void)len;
	pthread_mutex_lock(&s->lock);
	serial_write_reg(s, off & 7, data[0]);
	serial_update_irq(s);
	serial_update_coalescing(s);
	pthread_mutex_unlock(&s->lock);
}

struct bus_device serial_bus_device(struct serial *s)
{
	return (struct bus_device){ .name = "serial", .opaque = s,
				    .read = serial_bus_read, .write = serial_bus_write };
}

/* ---- host input ------------------------------------------------------ */

/* Ctrl-A x stops the VM, Ctrl-A Ctrl-A sends one Ctrl-A. Only when the
 * input is a terminal in raw mode, where Ctrl-C belongs to the guest. */
static bool serial_filter_escape(struct serial *s, uint8_t byte)
{
	if (!s->terminal_saved)
		return true;
	if (s->escape_pending) {
		s->escape_pending = false;
		if (byte == 'x' || byte == 'X') {
			machine_stop(s->ev, 0, "terminated by Ctrl-A x");
			return false;
		}
		return byte == ESCAPE_CHAR;
	}
	if (byte == ESCAPE_CHAR) {
		s->escape_pending = true;
		return false;
	}
	return true;
}

static uint64_t serial_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Host input into the RX FIFO; false when the thread must leave. */
static bool serial_take_input(struct serial *s, bool *input_open)
{
	pthread_mutex_lock(&s->lock);
	while (s->rx_count == RX_FIFO_SIZE && !s->stopping)
		pthread_cond_wait(&s->rx_space, &s->lock);
	unsigned room = RX_FIFO_SIZE - s->rx_count;
	bool stopping = s->stopping;
	pthread_mutex_unlock(&s->lock);
	if (stopping)
		return false;

	uint8_t buf[RX_FIFO_SIZE];
	ssize_t n = read(s->cfg.in_fd, buf, room);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		*input_open = false;   /* EOF: keep running, stop reading */
		return true;
	}
	pthread_mutex_lock(&s->lock);
	for (ssize_t i = 0; i < n; i++)
		if (serial_filter_escape(s, buf[i]))
			serial_rx_push(s, buf[i]);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return true;
}

/* Have KVM queue the transmits, or stop, as the register model wants (on
 * the serial thread: each switch waits for a grace period). Nothing while
 * the VM stops: closing the VM removes the queue. */
static void serial_switch_coalescing(struct serial *s, uint64_t now, uint64_t *last_queued)
{
	pthread_mutex_lock(&s->lock);
	bool want = s->coalesce_wanted;
	bool skip = want == s->coalescing || s->stopping;
	pthread_mutex_unlock(&s->lock);
	if (skip || serial_vm_stopping(s))
		return;
	int rc = machine_coalesce_pio(s->ev, s->cfg.thr_port, 1, want);
	pthread_mutex_lock(&s->lock);
	if (rc == 0) {
		s->coalescing = want;
	} else if (want) {
		s->coalesce_unavailable = true;   /* e.g. -EOPNOTSUPP: every write exits */
		s->coalesce_wanted = false;
	}
	/* A failed unregistration leaves it on; the next wake-up retries. */
	pthread_mutex_unlock(&s->lock);
	*last_queued = now;
	/* Writes queued before KVM stopped queueing, if it did. */
	if (!want)
		machine_drain_queued(s->ev);
}

/* While KVM queues: deliver what it queued and write it out now; after
 * IDLE_OFF_MS without a queued byte, ask for the queue to go. */
static void serial_drain(struct serial *s, uint64_t now, uint64_t *last_queued)
{
	unsigned n = machine_drain_queued(s->ev);
	pthread_mutex_lock(&s->lock);
	if (n) {
		*last_queued = now;
		if (s->out_len)
			serial_flush_locked(s);
	} else if (now - *last_queued >= IDLE_OFF_MS && s->coalesce_wanted) {
		s->coalesce_wanted = false;
		s->quiet_transmits = 0;
	}
	pthread_mutex_unlock(&s->lock);
}

static void serial_read_eventfd(int fd)
{
	uint64_t count;
	if (read(fd, &count, sizeof(count)) < 0) {
		/* EAGAIN: nothing to read after all. */
	}
}

/* The serial thread: host input for the guest, the deferred flush of guest
 * output that no newline or IER write sent out (serial_arm_flush), and the
 * transmit queue (serial_switch_coalescing, serial_drain). */
static void *serial_thread_main(void *arg)
{
	struct serial *s = arg;
	pthread_setname_np(pthread_self(), "serial");
	struct vmm_err err = { 0 };
	if (confine_enter(s->ev->confine, CONFINE_SERIAL, &err) < 0) {
		char why[sizeof(err.msg) + 32];
		snprintf(why, sizeof(why), "serial thread: %s", err.msg);
		machine_stop(s->ev, MINIVMM_EXIT_HOST_ERROR, why);
		return NULL;
	}
	bool input_open = s->cfg.in_fd >= 0;
	uint64_t flush_at = 0;      /* 0: not armed */
	uint64_t drain_at = 0;      /* 0: KVM does not queue */
	uint64_t last_queued = 0;   /* when the queue last had a byte, or went on */
	for (;;) {
		struct pollfd fds[4] = { { .fd = s->stop_fd, .events = POLLIN },
					 { .fd = s->flush_fd, .events = POLLIN },
					 { .fd = s->zone_fd, .events = POLLIN },
					 { .fd = s->cfg.in_fd, .events = POLLIN } };
		uint64_t next = flush_at && (!drain_at || flush_at < drain_at) ? flush_at : drain_at;
		int timeout = -1;
		if (next) {
			uint64_t now = serial_now_ms();
			timeout = now >= next ? 0 : (int)(next - now);
		}
		int n = poll(fds, input_open ? 4 : 3, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[0].revents)
			break;
		uint64_t now = serial_now_ms();
		if (fds[1].revents & POLLIN) {
			serial_read_eventfd(s->flush_fd);
			if (!flush_at)
				flush_at = now + FLUSH_DELAY_MS;
		}
		if (fds[2].revents & POLLIN) {
			serial_read_eventfd(s->zone_fd);
			serial_switch_coalescing(s, now, &last_queued);
		}
		pthread_mutex_lock(&s->lock);
		bool queued = s->coalescing;
		pthread_mutex_unlock(&s->lock);
		if (!queued) {
			drain_at = 0;
		} else if (!drain_at || now >= drain_at) {
			if (drain_at)
				serial_drain(s, now, &last_queued);
			drain_at = now + DRAIN_MS;
			pthread_mutex_lock(&s->lock);
			bool off = !s->coalesce_wanted;
			pthread_mutex_unlock(&s->lock);
			if (off)   /* idle: switched off here, not in a wake-up */
				serial_switch_coalescing(s, now, &last_queued);
		}
		if (flush_at && serial_now_ms() >= flush_at) {
			pthread_mutex_lock(&s->lock);
			if (s->out_len)
				serial_flush_locked(s);
			s->flush_armed = false;
			pthread_mutex_unlock(&s->lock);
			flush_at = 0;
		}
		if (input_open && (fds[3].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !serial_take_input(s, &input_open))
			break;
	}
	return NULL;
}

static void serial_make_terminal_raw(struct serial *s)
{
	if (!s->cfg.raw_terminal || s->cfg.in_fd < 0 || !isatty(s->cfg.in_fd))
		return;
	if (tcgetattr(s->cfg.in_fd, &s->saved_termios) < 0)
		return;
	struct termios raw = s->saved_termios;
	/* Input raw (keys go to the guest, Ctrl-C included); output keeps
	 * OPOST so a guest printing bare '\n' still reads well. */
	raw.c_iflag &= ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
	raw.c_lflag &= ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(s->cfg.in_fd, TCSANOW, &raw) == 0)
		s->terminal_saved = true;
}

int serial_start_input(struct serial *s, struct vmm_err *err)
{
	if ((s->cfg.in_fd < 0 && s->cfg.out_fd < 0 && !s->cfg.thr_port) || s->thread_running)
		return 0;
	if (s->cfg.in_fd >= 0)
		serial_make_terminal_raw(s);
	pthread_mutex_lock(&s->lock);
	s->stopping = false;
	int rc = pthread_create(&s->thread, NULL, serial_thread_main, s);
	s->thread_running = rc == 0;
	pthread_mutex_unlock(&s->lock);
	if (rc)
		return vmm_err_sys(err, rc, "cannot start the serial thread");
	return 0;
}

void serial_stop_input(struct serial *s)
{
	if (s->thread_running) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_broadcast(&s->rx_space);
		pthread_mutex_unlock(&s->lock);
		uint64_t one = 1;
		if (write(s->stop_fd, &one, sizeof(one)) < 0) {
			/* eventfd writes only fail on overflow; the thread is
			 * already being told to stop. */
		}
		pthread_join(s->thread, NULL);
		s->thread_running = false;
	}
	/* Whatever the guest wrote last goes out before the VM's own lines. */
	pthread_mutex_lock(&s->lock);
	if (s->out_len)
		serial_flush_locked(s);
	s->flush_armed = false;
	pthread_mutex_unlock(&s->lock);
	if (s->terminal_saved) {
		tcsetattr(s->cfg.in_fd, TCSANOW, &s->saved_termios);
		s->terminal_saved = false;
	}
}

int serial_create(struct serial **out, const struct serial_config *cfg, const struct machine *ev,
		  struct vmm_err *err)
{
	struct serial *s = calloc(1, sizeof(*s));
	if (!s)
		return vmm_err_set(err, ENOMEM, "out of memory for the serial port");
	s->cfg = *cfg;
	s->ev = ev;
	struct stat st;
	s->out_regular = cfg->out_fd >= 0 && fstat(cfg->out_fd, &st) == 0 && S_ISREG(st.st_mode);
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	s->flush_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->zone_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0 || s->flush_fd < 0 || s->zone_fd < 0) {
		int e = errno;
		if (s->stop_fd >= 0)
			close(s->stop_fd);
		if (s->flush_fd >= 0)
			close(s->flush_fd);
		if (s->zone_fd >= 0)
			close(s->zone_fd);
		free(s);
		return vmm_err_sys(err, e, "eventfd for the serial port");
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->rx_space, NULL);
	/* Reset state (IER clear, no loopback): the queue is allowed, and is
	 * asked for once the guest has shown that it prints more than a few
	 * lines (quiet_transmits starts at 0). */
	*out = s;
	return 0;
}

void serial_destroy(struct serial *s)
{
	if (!s)
		return;
	serial_stop_input(s);
	close(s->stop_fd);
	close(s->flush_fd);
	close(s->zone_fd);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->rx_space);
	free(s);
}
