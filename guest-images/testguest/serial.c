/* SPDX-License-Identifier: Apache-2.0 */
#include "serial.h"

#include "io.h"
#include "lib.h"
#include "minivmm_abi.h"

#define COM1     MINIVMM_PORT_COM1
#define REG_DATA 0      /* THR / RBR; divisor low with DLAB */
#define REG_IER  1      /* divisor high with DLAB */
#define REG_FCR  2
#define REG_LCR  3
#define REG_MCR  4
#define REG_LSR  5
#define LSR_DR   0x01
#define LSR_THRE 0x20

static volatile int serial_lock;

void serial_init(void)
{
	outb(COM1 + REG_IER, 0x00);     /* no interrupts: we poll */
	outb(COM1 + REG_LCR, 0x80);     /* DLAB */
	outb(COM1 + REG_DATA, 0x01);    /* 115200 baud */
	outb(COM1 + REG_IER, 0x00);
	outb(COM1 + REG_LCR, 0x03);     /* 8N1 */
	outb(COM1 + REG_FCR, 0x07);     /* FIFOs on and cleared */
	outb(COM1 + REG_MCR, 0x03);     /* DTR, RTS; OUT2 off: no IRQ */
}

void serial_putc_raw(char c)
{
	/* Bounded: a missing UART reads 0xff (THRE set) anyway. */
	for (unsigned i = 0; i < 1000000; i++) {
		if (inb(COM1 + REG_LSR) & LSR_THRE)
			break;
		cpu_pause();
	}
	outb(COM1 + REG_DATA, (uint8_t)c);
}

/* Every port access is a VM exit (tens of microseconds on some hosts), so
 * output goes in FIFO-sized bursts: one LSR check, then up to 16 bytes with
 * one string instruction (the 16550A's transmit FIFO takes 16 once THRE is
 * set). A VMM handles the whole `rep outsb` in one exit. */
#define TX_FIFO 16

static void outsb(uint16_t port, const char *s, size_t n)
{
	__asm__ volatile("rep outsb" : "+S"(s), "+c"(n) : "d"(port) : "memory");
}

void serial_write_raw(const char *s, size_t n)
{
	while (n) {
		for (unsigned i = 0; i < 1000000; i++) {
			if (inb(COM1 + REG_LSR) & LSR_THRE)
				break;
			cpu_pause();
		}
		size_t chunk = n < TX_FIFO ? n : TX_FIFO;
		outsb(COM1 + REG_DATA, s, chunk);
		s += chunk;
		n -= chunk;
	}
}

char serial_getc(void)
{
	while (!(inb(COM1 + REG_LSR) & LSR_DR))
		cpu_pause();
	return (char)inb(COM1 + REG_DATA);
}

static void lock(void)
{
	while (__atomic_exchange_n(&serial_lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&serial_lock, __ATOMIC_RELAXED))
			cpu_pause();
}

static void unlock(void)
{
	__atomic_store_n(&serial_lock, 0, __ATOMIC_RELEASE);
}

void tg_vprintf(const char *fmt, va_list ap)
{
	char buf[256];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	lock();
	serial_write_raw(buf, (size_t)n);
	unlock();
}

void tg_printf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tg_vprintf(fmt, ap);
	va_end(ap);
}
