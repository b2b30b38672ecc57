/* SPDX-License-Identifier: Apache-2.0 */
/* Fuzz target: the userspace IOAPIC of --irqchip=split (devices/ioapic.c),
 * reached the way a vCPU reaches it: bus_access() on an MMIO bus holding its
 * 4 KiB window, with a fake KVM behind its ops (recording the routes it is
 * given and the pins it raises, failing the route update the input picks);
 * and, between accesses, what the rest of the VMM does: a device line going
 * up or down (any pin number, out of range too) and a LAPIC EOI
 * (KVM_EXIT_IOAPIC_EOI).
 *
 * The input is the ID and which route update fails, then a sequence of
 * operations: an MMIO read or write at a register or anywhere in and around
 * the window (width 1 to 8), a register programmed through REGSEL/WINDOW, a
 * line change, an EOI by exit or by the EOI register.
 *
 * Checked, against a model kept here from the spec (82093AA with the
 * version 0x20 EOI register) and not from the implementation: REGSEL keeps
 * 8 bits; only aligned 32-bit accesses reach a register, anything else
 * reads 0; VERSION reads 0x00170020, ID and ARB the ID's 4 bits; a
 * redirection entry reads back what the guest wrote in its writable bits,
 * Delivery Status 0 and Remote IRR only on a level pin; the ops are called
 * with the IOAPIC's lock held; every route handed over is the MSI of its
 * entry and a masked or ExtINT pin has none; after each operation the routes
 * KVM holds match the table unless an update failed; a raised pin is
 * unmasked and deliverable; an edge pin is raised once per rising edge and
 * never otherwise; a level pin is raised only with its line up and never
 * twice before its EOI; and an asserted, unmasked level pin is never left
 * undelivered (its Remote IRR is set). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "devices/bus.h"
#include "devices/ioapic.h"
#include "minivmm_abi.h"
#include "tests/fuzz/fuzz_common.h"

#define BASE   MINIVMM_IOAPIC_BASE
#define WINDOW MINIVMM_IOAPIC_SIZE

/* The spec's registers and redirection-entry bits (the 82093AA datasheet). */
#define REG_REGSEL   0x00
#define REG_WINDOW   0x10
#define REG_EOI      0x40
#define IDX_ID       0x00
#define IDX_VERSION  0x01
#define IDX_ARB      0x02
#define IDX_RTE0     0x10
#define ID_BITS      (0xfu << 24)
#define VERSION_REG  0x00170020u        /* 24 pins (max entry 23), version 0x20 */
#define RTE_VECTOR   0xffull
#define RTE_DELIVERY (7ull << 8)
#define RTE_EXTINT   (7ull << 8)
#define RTE_DELIVERY_STATUS (1ull << 12)
#define RTE_REMOTE_IRR (1ull << 14)
#define RTE_LEVEL    (1ull << 15)
#define RTE_MASKED   (1ull << 16)
#define RTE_WRITABLE (0xffull | (7ull << 8) | (1ull << 11) | (1ull << 13) | RTE_LEVEL | RTE_MASKED | \
		      (0xffull << 56))

struct model {
	struct ioapic io;
	uint32_t id;                   /* what ID reads */
	uint32_t regsel;
	uint64_t written[IOAPIC_PINS]; /* the guest's writable bits */
	uint32_t line;
	/* Fake KVM. */
	bool routed[IOAPIC_PINS];
	struct ioapic_msi msi[IOAPIC_PINS];
	unsigned route_calls, fail_route_call, route_failures;
	unsigned raises[IOAPIC_PINS];  /* during the current operation */
	bool awaiting_eoi[IOAPIC_PINS];
};

static struct model M;

static bool deliverable(uint64_t rte)
{
	return !(rte & RTE_MASKED) && (rte & RTE_DELIVERY) != RTE_EXTINT;
}

static void check_lock_held(void)
{
	FUZZ_CHECK(pthread_mutex_trylock(&M.io.lock) == EBUSY, "an op called without the IOAPIC's lock");
}

static void check_msi(unsigned n, uint64_t rte, const struct ioapic_msi *msi)
{
	FUZZ_CHECK((msi->address & ~(0xff000ull | 4)) == 0xfee00000ull, "pin %u: MSI address 0x%llx", n,
		   (unsigned long long)msi->address);
	FUZZ_CHECK(((msi->address >> 12) & 0xff) == (rte >> 56), "pin %u: destination", n);
	FUZZ_CHECK(!!(msi->address & 4) == !!(rte & (1ull << 11)), "pin %u: destination mode", n);
	FUZZ_CHECK((msi->data & 0xff) == (rte & RTE_VECTOR), "pin %u: vector", n);
	FUZZ_CHECK(((msi->data >> 8) & 7) == ((rte >> 8) & 7), "pin %u: delivery mode", n);
	FUZZ_CHECK(!!(msi->data & (1u << 15)) == !!(rte & RTE_LEVEL), "pin %u: trigger mode", n);
}

static int fake_set_routes(void *opaque, const bool routed[IOAPIC_PINS],
			   const struct ioapic_msi msi[IOAPIC_PINS])
{
	(void)opaque;
	check_lock_held();
	for (unsigned n = 0; n < IOAPIC_PINS; n++) {
		FUZZ_CHECK(routed[n] == deliverable(M.io.rte[n]), "pin %u (entry 0x%llx) %s a route", n,
			   (unsigned long long)M.io.rte[n], routed[n] ? "has" : "lacks");
		if (routed[n])
			check_msi(n, M.io.rte[n], &msi[n]);
	}
	if (++M.route_calls == M.fail_route_call) {
		M.route_failures++;
		return -ENOSPC;   /* KVM_SET_GSI_ROUTING refused: KVM keeps the old routes */
	}
	memcpy(M.routed, routed, sizeof(M.routed));
	memcpy(M.msi, msi, sizeof(M.msi));
	return 0;
}

static int fake_raise(void *opaque, unsigned pin)
{
	(void)opaque;
	check_lock_held();
	FUZZ_CHECK(pin < IOAPIC_PINS, "raised pin %u", pin);
	uint64_t rte = M.io.rte[pin];
	FUZZ_CHECK(deliverable(rte), "raised pin %u with entry 0x%llx", pin, (unsigned long long)rte);
	if (rte & RTE_LEVEL) {
		FUZZ_CHECK(M.line & (1u << pin), "level pin %u raised with its line down", pin);
		FUZZ_CHECK(!M.awaiting_eoi[pin], "level pin %u raised again before its EOI", pin);
		FUZZ_CHECK(rte & RTE_REMOTE_IRR, "level pin %u raised without Remote IRR", pin);
		M.awaiting_eoi[pin] = true;
	}
	M.raises[pin]++;
	if (fuzz_tracing())
		fprintf(stderr, "  raise pin %u (entry 0x%llx)\n", pin, (unsigned long long)rte);
	return 0;
}

/* ---- what the spec says each access sees ------------------------------------ */

static uint32_t expected_index_read(uint32_t idx)
{
	if (idx == IDX_ID || idx == IDX_ARB)
		return M.id;
	if (idx == IDX_VERSION)
		return VERSION_REG;
	if (idx < IDX_RTE0 || idx >= IDX_RTE0 + 2 * IOAPIC_PINS)
		return 0;
	uint64_t rte = M.written[(idx - IDX_RTE0) / 2];
	return (idx & 1) ? (uint32_t)(rte >> 32) : (uint32_t)rte;
}

static void check_read(uint64_t off, const uint8_t *buf, unsigned len)
{
	uint32_t want = 0;
	bool reg = len == 4 && (off == REG_REGSEL || off == REG_WINDOW);
	if (reg && off == REG_REGSEL)
		want = M.regsel;
	else if (reg)
		want = expected_index_read(M.regsel);
	uint32_t got = (uint32_t)bus_load_le(buf, len < 4 ? len : 4);
	uint32_t mask = len >= 4 ? 0xffffffffu : (1u << (8 * len)) - 1;
	if (reg && M.regsel >= IDX_RTE0 && M.regsel < IDX_RTE0 + 2 * IOAPIC_PINS) {
		/* Remote IRR is the IOAPIC's (on a level pin only); Delivery
		 * Status reads 0 (the fake KVM accepts every interrupt). */
		unsigned n = (M.regsel - IDX_RTE0) / 2;
		uint32_t irr = (M.regsel & 1) ? 0 : (uint32_t)RTE_REMOTE_IRR;
		FUZZ_CHECK(!(got & irr) || (M.written[n] & RTE_LEVEL), "pin %u: Remote IRR on an edge pin", n);
		FUZZ_CHECK(!(got & (uint32_t)RTE_DELIVERY_STATUS) || (M.regsel & 1),
			   "pin %u: Delivery Status set", n);
		got &= ~irr;
	}
	FUZZ_CHECK(got == (want & mask), "read of %u bytes at 0x%llx (REGSEL 0x%x): 0x%x, expected 0x%x", len,
		   (unsigned long long)off, M.regsel, got, want & mask);
	for (unsigned i = 4; i < len; i++)
		FUZZ_CHECK(buf[i] == 0, "byte %u of an 8-byte read at 0x%llx", i, (unsigned long long)off);
}

/* The model's side of a guest write that reached the IOAPIC. */
static void model_write(uint64_t off, const uint8_t *buf, unsigned len)
{
	if (len != 4)
		return;
	uint32_t v = (uint32_t)bus_load_le(buf, 4);
	if (off == REG_REGSEL) {
		M.regsel = v & 0xff;
	} else if (off == REG_WINDOW && M.regsel == IDX_ID) {
		M.id = v & ID_BITS;
	} else if (off == REG_WINDOW && M.regsel >= IDX_RTE0 && M.regsel < IDX_RTE0 + 2 * IOAPIC_PINS) {
		unsigned n = (M.regsel - IDX_RTE0) / 2;
		uint64_t w = (M.regsel & 1) ? ((uint64_t)v << 32) | (M.written[n] & 0xffffffffull)
					    : (M.written[n] & ~0xffffffffull) | v;
		M.written[n] = w & RTE_WRITABLE;
		if (!(w & RTE_LEVEL))
			M.awaiting_eoi[n] = false;   /* an edge pin waits for no EOI */
	}
}

/* An EOI of vector v ends the wait of every level pin using it. */
static void model_eoi(uint8_t v)
{
	if (fuzz_tracing())
		fprintf(stderr, "EOI vector 0x%x\n", v);
	for (unsigned n = 0; n < IOAPIC_PINS; n++)
		if ((M.written[n] & RTE_LEVEL) && (M.written[n] & RTE_VECTOR) == v)
			M.awaiting_eoi[n] = false;
}

/* ---- after every operation ---------------------------------------------------- */

static void check_state(void)
{
	for (unsigned n = 0; n < IOAPIC_PINS; n++) {
		uint64_t rte = M.io.rte[n];
		FUZZ_CHECK((rte & RTE_WRITABLE) == M.written[n], "pin %u: entry 0x%llx, the guest wrote 0x%llx",
			   n, (unsigned long long)rte, (unsigned long long)M.written[n]);
		if (deliverable(rte) && (rte & RTE_LEVEL) && (M.line & (1u << n)))
			FUZZ_CHECK(rte & RTE_REMOTE_IRR, "level pin %u asserted and unmasked but not delivered", n);
		if (M.route_failures == 0) {
			FUZZ_CHECK(M.routed[n] == deliverable(rte), "KVM's route of pin %u is stale", n);
			if (M.routed[n])
				check_msi(n, rte, &M.msi[n]);
		}
	}
	FUZZ_CHECK(pthread_mutex_trylock(&M.io.lock) == 0, "the IOAPIC's lock left held");
	pthread_mutex_unlock(&M.io.lock);
}

static void begin_op(void)
{
	memset(M.raises, 0, sizeof(M.raises));
}

/* A line change from a device model; pins beyond the chip are refused. */
static void line_op(unsigned pin, int level)
{
	bool rising = pin < IOAPIC_PINS && level && !(M.line & (1u << pin));
	uint64_t rte = pin < IOAPIC_PINS ? M.io.rte[pin] : 0;
	if (pin < IOAPIC_PINS)   /* the line is at its new level when the IOAPIC acts */
		M.line = level ? M.line | (1u << pin) : M.line & ~(1u << pin);
	if (fuzz_tracing())
		fprintf(stderr, "line %u -> %d (entry 0x%llx)\n", pin, level, (unsigned long long)rte);
	int rc = ioapic_set_irq(&M.io, pin, level);
	if (pin >= IOAPIC_PINS) {
		FUZZ_CHECK(rc == -EINVAL, "pin %u: ioapic_set_irq returned %d", pin, rc);
		return;
	}
	FUZZ_CHECK(rc == 0, "pin %u: ioapic_set_irq returned %d", pin, rc);
	if (!(rte & RTE_LEVEL))
		FUZZ_CHECK(M.raises[pin] == (unsigned)(rising && deliverable(rte)),
			   "edge pin %u (entry 0x%llx): %u raises for a %s", pin, (unsigned long long)rte,
			   M.raises[pin], rising ? "rising edge" : "line change without a rising edge");
}

static void mmio_op(struct bus *bus, uint8_t op, struct fz *in)
{
	static const unsigned widths[8] = { 4, 1, 2, 8, 3, 5, 6, 7 };
	static const uint16_t regs[] = { REG_REGSEL, REG_WINDOW, REG_EOI };
	bool write = op & 0x40;
	unsigned len = widths[op & 7];
	uint64_t off = (op & 8) ? regs[fz_u8(in) % 3] : (uint64_t)(fz_u16(in) % (WINDOW + 0x20));
	uint64_t addr = BASE + off - ((op & 0x10) ? 0x10 : 0);
	uint8_t buf[8] = { 0 };
	if (write) {
		size_t got;
		memcpy(buf, fz_take(in, len, &got), got);
	}
	bool inside = addr >= BASE && addr < BASE + WINDOW;
	if (write && inside && addr - BASE == REG_EOI && len == 4)
		model_eoi(buf[0]);   /* before: the IOAPIC may raise the pin again within the write */
	bool hit = bus_access(bus, addr, buf, len, write);
	if (fuzz_tracing())
		fprintf(stderr, "mmio %s %u bytes at +0x%llx: 0x%llx\n", write ? "write" : "read", len,
			(unsigned long long)(addr - BASE), (unsigned long long)bus_load_le(buf, len < 8 ? len : 8));
	FUZZ_CHECK(hit == inside, "bus dispatch at 0x%llx", (unsigned long long)addr);
	if (!hit)
		return;
	if (!write) {
		check_read(addr - BASE, buf, len);
		return;
	}
	model_write(addr - BASE, buf, len);
}

/* REGSEL then WINDOW, both aligned 32-bit: how a driver programs it. */
static void program_op(struct bus *bus, uint8_t op, struct fz *in)
{
	uint8_t idx = (op & 1) ? fz_u8(in) : (uint8_t)(fz_u8(in) % (IDX_RTE0 + 2 * IOAPIC_PINS + 2));
	uint8_t buf[4] = { idx, 0, 0, 0 };
	FUZZ_CHECK(bus_access(bus, BASE + REG_REGSEL, buf, 4, true), "REGSEL write");
	model_write(REG_REGSEL, buf, 4);
	uint32_t v = fz_u32(in);
	if (op & 2)
		v &= ~(uint32_t)RTE_MASKED;   /* reach unmasked entries often */
	bus_store_le(buf, 4, v);
	bool write = !(op & 4);
	FUZZ_CHECK(bus_access(bus, BASE + REG_WINDOW, buf, 4, write), "WINDOW access");
	if (fuzz_tracing())
		fprintf(stderr, "register 0x%x %s 0x%x\n", idx, write ? "<-" : "->", (uint32_t)bus_load_le(buf, 4));
	if (write)
		model_write(REG_WINDOW, buf, 4);
	else
		check_read(REG_WINDOW, buf, 4);
}

static void event_op(struct bus *bus, uint8_t op, struct fz *in)
{
	switch (op & 3) {
	case 0:
		line_op(fz_u8(in) % (IOAPIC_PINS + 2), !!(op & 4));
		break;
	case 1: {
		uint8_t v = fz_u8(in);
		model_eoi(v);
		ioapic_eoi(&M.io, v);
		break;
	}
	case 2:
		line_op(fz_u8(in), !!(op & 4));
		break;
	default: {
		uint8_t buf[4] = { fz_u8(in), 0, 0, 0 };
		model_eoi(buf[0]);
		FUZZ_CHECK(bus_access(bus, BASE + REG_EOI, buf, 4, true), "EOI write");
		break;
	}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_init(data, size);
	memset(&M, 0, sizeof(M));
	uint8_t shape = fz_u8(&in);
	unsigned id = shape & 0xf;
	M.fail_route_call = (shape & 0x10) ? fz_u8(&in) : 0;
	struct ioapic_ops ops = { .set_routes = fake_set_routes, .raise = fake_raise, .opaque = &M };
	ioapic_init(&M.io, &ops, id);
	M.id = (uint32_t)id << 24;
	for (unsigned n = 0; n < IOAPIC_PINS; n++)
		M.written[n] = RTE_MASKED;   /* reset: every pin masked */
	struct bus bus;
	bus_init(&bus, "mmio");
	struct bus_device dev = ioapic_bus_device(&M.io);
	FUZZ_CHECK(bus_add(&bus, BASE, WINDOW, &dev, NULL) == 0, "bus_add");
	check_state();
	while (!fz_empty(&in)) {
		uint8_t op = fz_u8(&in);
		begin_op();
		switch (op >> 6) {
		case 0:
		case 1:
			mmio_op(&bus, op, &in);
			break;
		case 2:
			program_op(&bus, op, &in);
			break;
		default:
			event_op(&bus, op, &in);
			break;
		}
		check_state();
	}
	ioapic_destroy(&M.io);
	return 0;
}
