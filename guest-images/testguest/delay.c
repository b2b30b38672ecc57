#include "delay.h"

#include "io.h"
#include "sys.h"

#define PIT_HZ        1193182u
#define PIT_CH0       0x40
#define PIT_CMD       0x43
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
static uint64_t pit_measure(void)
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
static uint64_t cpuid_hz(void)
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

static int sane(uint64_t hz)
{
	return hz >= HZ_MIN && hz <= HZ_MAX;
}

void delay_init(void)
{
	/* A frequency the hypervisor or CPU states costs nothing; measuring
	 * against the PIT takes milliseconds of port exits. */
	uint64_t hz = cpuid_hz();

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
