/* 16550A UART. Transmission is instantaneous (the transmitter is always
 * empty), so THRE/TEMT are always set and a THR-empty interrupt is pending
 * again right after every write, which is what Linux's 8250 driver expects. */
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

	bool out_regular;      /* a regular file: writes never wait */
	bool out_broken;       /* a write failed: output is dropped for good */
	bool out_stalled;      /* nobody read for stall_ms: dropped until they do */
	bool stall_logged;

	bool terminal_saved;
	struct termios saved_termios;
	bool escape_pending;

	int stop_fd;           /* eventfd: tells the input thread to leave */
	bool stopping;
	bool input_running;
	pthread_t input_thread;
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

/* One byte of guest output. Never blocks in write(): a 1-byte write after
 * POLLOUT does not (pipes, terminals), and a descriptor we opened is
 * O_NONBLOCK anyway. So a vCPU printing to an output that is full waits
 * here, interruptibly, rather than in the kernel forever. */
static void serial_output(struct serial *s, uint8_t byte)
{
	if (s->cfg.out_fd < 0 || s->out_broken)
		return;
	if (!s->out_regular && !serial_out_wait(s))
		return;
	for (;;) {
		ssize_t n = write(s->cfg.out_fd, &byte, 1);
		if (n == 1) {
			s->out_stalled = false;
			return;
		}
		if (n < 0 && errno == EINTR && !serial_vm_stopping(s))
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (serial_out_wait(s))
				continue;
			return;
		}
		if (n < 0 && errno == EINTR)
			return;   /* the VM is stopping: drop the byte */
		/* EPIPE (the reader went away; SIGPIPE is blocked in vCPU
		 * threads or ignored), EIO, ENOSPC: once is enough. */
		s->out_broken = true;
		char what[160];
		snprintf(what, sizeof(what), "%s; guest console output is dropped from now on",
			 n < 0 ? strerror(errno) : "nothing written");
		serial_log(s, what);
		return;
	}
}

static void serial_transmit(struct serial *s, uint8_t byte)
{
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

static void *serial_input_main(void *arg)
{
	struct serial *s = arg;
	pthread_setname_np(pthread_self(), "serial-in");
	struct vmm_err err = { 0 };
	if (confine_enter(s->ev->confine, CONFINE_SERIAL_IN, &err) < 0) {
		char why[sizeof(err.msg) + 32];
		snprintf(why, sizeof(why), "serial input: %s", err.msg);
		machine_stop(s->ev, MINIVMM_EXIT_HOST_ERROR, why);
		return NULL;
	}
	bool input_open = true;
	for (;;) {
		struct pollfd fds[2] = { { .fd = s->stop_fd, .events = POLLIN },
					 { .fd = s->cfg.in_fd, .events = POLLIN } };
		if (poll(fds, input_open ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (fds[0].revents)
			break;
		if (!(fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;

		pthread_mutex_lock(&s->lock);
		while (s->rx_count == RX_FIFO_SIZE && !s->stopping)
			pthread_cond_wait(&s->rx_space, &s->lock);
		unsigned room = RX_FIFO_SIZE - s->rx_count;
		bool stopping = s->stopping;
		pthread_mutex_unlock(&s->lock);
		if (stopping)
			break;

		uint8_t buf[RX_FIFO_SIZE];
		ssize_t n = read(s->cfg.in_fd, buf, room);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			input_open = false;   /* EOF: keep running, stop reading */
			continue;
		}
		pthread_mutex_lock(&s->lock);
		for (ssize_t i = 0; i < n; i++)
			if (serial_filter_escape(s, buf[i]))
				serial_rx_push(s, buf[i]);
		serial_update_irq(s);
		pthread_mutex_unlock(&s->lock);
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
	if (s->cfg.in_fd < 0 || s->input_running)
		return 0;
	serial_make_terminal_raw(s);
	int rc = pthread_create(&s->input_thread, NULL, serial_input_main, s);
	if (rc)
		return vmm_err_sys(err, rc, "cannot start the serial input thread");
	s->input_running = true;
	return 0;
}

void serial_stop_input(struct serial *s)
{
	if (s->input_running) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_broadcast(&s->rx_space);
		pthread_mutex_unlock(&s->lock);
		uint64_t one = 1;
		if (write(s->stop_fd, &one, sizeof(one)) < 0) {
			/* eventfd writes only fail on overflow; the thread is
			 * already being told to stop. */
		}
		pthread_join(s->input_thread, NULL);
		s->input_running = false;
	}
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
	if (s->stop_fd < 0) {
		int e = errno;
		free(s);
		return vmm_err_sys(err, e, "eventfd for the serial port");
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->rx_space, NULL);
	*out = s;
	return 0;
}

void serial_destroy(struct serial *s)
{
	if (!s)
		return;
	serial_stop_input(s);
	close(s->stop_fd);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->rx_space);
	free(s);
}
