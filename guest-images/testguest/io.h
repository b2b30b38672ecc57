/* SPDX-License-Identifier: Apache-2.0 */
/* CPU and device access helpers: port I/O (allowed at CPL3 through the TSS
 * I/O bitmap), MMIO, TSC, pause, atomics. */
#ifndef TESTGUEST_IO_H
#define TESTGUEST_IO_H

#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint8_t mmio_read8(uintptr_t addr)
{
	return *(volatile uint8_t *)addr;
}

static inline void mmio_write8(uintptr_t addr, uint8_t v)
{
	*(volatile uint8_t *)addr = v;
}

static inline uint32_t mmio_read32(uintptr_t addr)
{
	return *(volatile uint32_t *)addr;
}

static inline void mmio_write32(uintptr_t addr, uint32_t v)
{
	*(volatile uint32_t *)addr = v;
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpu_pause(void)
{
	__asm__ volatile("pause" ::: "memory");
}

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b,
			 uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
			 : "a"(leaf), "c"(sub));
}

static inline void barrier(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Full fence; a locked op works at CPL3 and orders everything. */
static inline void mb(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif
