/* SPDX-License-Identifier: Apache-2.0 */
#include "delay.h"

#include "io.h"
#include "sys.h"

#define PIT_HZ        1193182u
#define PIT_CH0       0x40
#define PIT_CH2       0x42
#define PIT_CMD       0x43
#define PORT_61       0x61                   /* bit 0 gate 2, bit 1 speaker, bit 5 OUT2 */
#define CAL_TICKS     (PIT_HZ / 100)         /* 10 ms */
#define FALLBACK_HZ   3000000000ull  /* too high errs on the long side */
#define HZ_MIN        100000000ull
#define HZ_MAX        20000000000ull
#define PIT_STILL_READS 8

static uint64_t tsc_rate = FALLBACK_HZ;

static uint16_t pit_read_ch0(void)
{
	uint8_t lo, hi;

	outb(PIT_CMD, 0x00);                    /* latch channel 0 */
	lo = inb(PIT_CH0);
	hi = inb(PIT_CH0);
	return (uint16_t)(lo | hi << 8);
}

/* TSC rate measured against PIT channel 0 counting down in mode 2 (read
 * back with latch commands, so no speaker port 0x61 is needed and the IRQ,
 * masked at the PIC and IOAPIC anyway, does not matter). 0 when the PIT
 * does not count. */
uint64_t pit_measure(void)
{
	uint32_t elapsed = 0;
	uint16_t prev, now;
	uint64_t t0, t1;

	outb(PIT_CMD, 0x34);                    /* ch0, lo/hi, mode 2, binary */
	outb(PIT_CH0, 0);
	outb(PIT_CH0, 0);                       /* count 65536 */
	prev = pit_read_ch0();
	t0 = rdtsc();
	for (unsigned i = 0, still = 0; elapsed < CAL_TICKS; i++) {
		/* A counting PIT moves between two reads (each is three port
		 * exits); an absent one (--irqchip=split) reads the same. */
		if (i > 100000 || still > PIT_STILL_READS)
			return 0;                       /* not counting */
		now = pit_read_ch0();
		still = now == prev ? still + 1 : 0;
		elapsed += (uint16_t)(prev - now);      /* counts down, wraps */
		prev = now;
	}
	t1 = rdtsc();
	outb(PIT_CMD, 0x30);                    /* ch0 mode 0: one-shot, stops */
	outb(PIT_CH0, 0xff);
	outb(PIT_CH0, 0xff);
	return (t1 - t0) * PIT_HZ / elapsed;
}

/* Hypervisor timing leaf (KVM/QEMU, VMware), then Intel leaves 0x15/0x16,
 * read at CPL0 as a kernel reads them: under PVM a CPUID at CPL3 runs on
 * the host CPU and shows the host's hypervisor leaves, not the VMM's, and
 * the guest would then spend 10 ms calibrating against the PIT (or, with
 * no PIT, guess). On VMX/SVM both reach KVM and give the same answer. */
uint64_t tsc_cpuid_hz(void)
{
	uint32_t a, b, c, d, max;

	tg_cpuid_cpl0(0x40000000, 0, &max, &b, &c, &d);
	if (max >= 0x40000010 && max < 0x40000100) {
		tg_cpuid_cpl0(0x40000010, 0, &a, &b, &c, &d);
		if (a)
			return (uint64_t)a * 1000;
	}
	tg_cpuid_cpl0(0, 0, &max, &b, &c, &d);
	if (max >= 0x15) {
		tg_cpuid_cpl0(0x15, 0, &a, &b, &c, &d);
		if (a && b && c)
			return (uint64_t)c * b / a;
	}
	if (max >= 0x16) {
		tg_cpuid_cpl0(0x16, 0, &a, &b, &c, &d);
		if (a)
			return (uint64_t)a * 1000000;
	}
	return 0;
}

/* One run of the TSC rate the way Linux's pit_calibrate_tsc() takes it:
 * channel 2 in mode 0 behind port 0x61's gate, OUT2 polled until terminal
 * count. The count starts somewhere within the MSB write and OUT2 rises
 * between the last poll that saw it low and the first that sees it high;
 * *spread is how many TSC cycles those two windows leave unknown (a host
 * that preempts the vCPU there widens them). 0 when OUT2 never rises. */
static uint64_t pit_ch2_run(uint64_t *spread)
{
	uint64_t s0, s1, low, high;
	unsigned i = 0;

	outb(PORT_61, (uint8_t)((inb(PORT_61) & ~0x02) | 0x01));   /* gate on, speaker off */
	outb(PIT_CMD, 0xb0);                    /* ch2, lo/hi, mode 0, binary */
	outb(PIT_CH2, CAL_TICKS & 0xff);
	s0 = rdtsc();
	outb(PIT_CH2, CAL_TICKS >> 8);          /* counting starts */
	s1 = rdtsc();
	low = high = s1;
	while (!(inb(PORT_61) & 0x20)) {
		if (++i > 1000000)
			return 0;
		low = high;
		high = rdtsc();
	}
	high = rdtsc();
	outb(PORT_61, inb(PORT_61) & ~0x01);   /* gate off */
	*spread = (s1 - s0) + (high - low);
	return ((low + high) / 2 - (s0 + s1) / 2) * PIT_HZ / CAL_TICKS;
}

/* The run with the narrowest windows of up to five, done once they are
 * under 0.1 % of the interval. */
uint64_t pit_measure_ch2(void)
{
	uint64_t best = 0, best_spread = ~0ull;

	for (int run = 0; run < 5; run++) {
		uint64_t spread = 0, hz = pit_ch2_run(&spread);
		if (!hz)
			return 0;
		if (spread < best_spread) {
			best = hz;
			best_spread = spread;
		}
		if (best_spread * 1000 < hz / 100)   /* 10 ms of TSC cycles is hz / 100 */
			break;
	}
	return best;
}

static int sane(uint64_t hz)
{
	return hz >= HZ_MIN && hz <= HZ_MAX;
}

void delay_init(void)
{
	/* A frequency the hypervisor or CPU states costs nothing; measuring
	 * against the PIT takes milliseconds of port exits. */
	uint64_t hz = tsc_cpuid_hz();

	if (!sane(hz))
		hz = pit_measure();
	if (!sane(hz))
		hz = FALLBACK_HZ;
	tsc_rate = hz;
}

uint64_t tsc_hz(void)
{
	return tsc_rate;
}

uint64_t tsc_deadline_us(uint64_t us)
{
	return rdtsc() + us * (tsc_rate / 1000000);
}

int tsc_passed(uint64_t deadline)
{
	return (int64_t)(rdtsc() - deadline) >= 0;
}

void delay_us(uint64_t us)
{
	uint64_t end = tsc_deadline_us(us);

	while (!tsc_passed(end))
		cpu_pause();
}
