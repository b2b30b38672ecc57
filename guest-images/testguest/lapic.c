/* SPDX-License-Identifier: Apache-2.0 */
#include "lapic.h"

#include "delay.h"
#include "io.h"
#include "layout.h"
#include "minivmm_abi.h"

#define LAPIC_ID       0x020
#define LAPIC_EOI      0x0b0
#define LAPIC_SVR      0x0f0
#define LAPIC_ICR_LO   0x300
#define LAPIC_ICR_HI   0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT0     0x350
#define LAPIC_TMICT    0x380
#define LAPIC_TDCR     0x3e0

#define TDCR_DIV1      0xb

#define ICR_INIT       0x00000500
#define ICR_STARTUP    0x00000600
#define ICR_PENDING    0x00001000
#define ICR_ASSERT     0x00004000

static uint32_t rd(uint32_t reg)
{
	return mmio_read32(MINIVMM_LAPIC_BASE + reg);
}

static void wr(uint32_t reg, uint32_t v)
{
	mmio_write32(MINIVMM_LAPIC_BASE + reg, v);
}

void lapic_init(void)
{
	wr(LAPIC_SVR, 0x100 | TG_SPURIOUS_VECTOR);
}

uint32_t lapic_id(void)
{
	return rd(LAPIC_ID) >> 24;
}

void lapic_eoi(void)
{
	wr(LAPIC_EOI, 0);
}

void lapic_timer_oneshot(uint8_t vector, uint32_t count)
{
	wr(LAPIC_TDCR, TDCR_DIV1);
	wr(LAPIC_LVT_TIMER, vector);    /* one-shot, unmasked */
	wr(LAPIC_TMICT, count);
}

void lapic_timer_stop(void)
{
	wr(LAPIC_TMICT, 0);
}

static void send_ipi(uint32_t apic_id, uint32_t cmd)
{
	wr(LAPIC_ICR_HI, apic_id << 24);
	wr(LAPIC_ICR_LO, cmd);
	for (unsigned i = 0; i < 1000 && (rd(LAPIC_ICR_LO) & ICR_PENDING); i++)
		cpu_pause();
}

void lapic_start_ap(uint32_t apic_id, uint8_t sipi_vector)
{
	/* KVM's APIC needs none of the 10 ms / 200 us of real hardware, but
	 * short delays keep the sequence right on other implementations. */
	send_ipi(apic_id, ICR_INIT | ICR_ASSERT);
	delay_us(1000);
	send_ipi(apic_id, ICR_STARTUP | sipi_vector);
	delay_us(200);
	send_ipi(apic_id, ICR_STARTUP | sipi_vector);
}
