/* SPDX-License-Identifier: Apache-2.0 */
#include "devices/ioapic.h"

#include <errno.h>
#include <string.h>

/* Memory-mapped registers (offsets in the window). */
#define IOAPIC_REGSEL   0x00
#define IOAPIC_WINDOW   0x10
#define IOAPIC_EOI      0x40    /* version 0x20 and later */

/* Indirect registers (through REGSEL/WINDOW). */
#define IOAPIC_REG_ID       0x00
#define IOAPIC_REG_VERSION  0x01
#define IOAPIC_REG_ARB      0x02
#define IOAPIC_REG_RTE0     0x10    /* pin n: 0x10 + 2n (low), 0x11 + 2n (high) */

#define IOAPIC_ID_SHIFT     24
#define IOAPIC_ID_MASK      (0xfu << IOAPIC_ID_SHIFT)

/* Redirection entry fields. */
#define RTE_VECTOR          0xffull
#define RTE_DELIVERY_SHIFT  8
#define RTE_DELIVERY_MASK   (7ull << RTE_DELIVERY_SHIFT)
#define RTE_DELIVERY_EXTINT 7
#define RTE_DEST_LOGICAL    (1ull << 11)
#define RTE_DELIVERY_STATUS (1ull << 12)
#define RTE_POLARITY_LOW    (1ull << 13)
#define RTE_REMOTE_IRR      (1ull << 14)
#define RTE_LEVEL           (1ull << 15)
#define RTE_MASKED          (1ull << 16)
#define RTE_DEST_SHIFT      56
/* What the guest may write: Delivery Status and Remote IRR are the
 * IOAPIC's own. */
#define RTE_WRITABLE        (RTE_VECTOR | RTE_DELIVERY_MASK | RTE_DEST_LOGICAL | RTE_POLARITY_LOW | \
			     RTE_LEVEL | RTE_MASKED | (0xffull << RTE_DEST_SHIFT))

/* MSI address and data (Intel SDM vol. 3, 11.11). */
#define MSI_ADDRESS_BASE       0xfee00000ull
#define MSI_ADDR_DEST_SHIFT    12
#define MSI_ADDR_DEST_LOGICAL  (1ull << 2)
#define MSI_DATA_DELIVERY_SHIFT 8
#define MSI_DATA_LEVEL_TRIGGER (1u << 15)

bool ioapic_rte_to_msi(uint64_t rte, struct ioapic_msi *msi)
{
	unsigned delivery = (unsigned)((rte & RTE_DELIVERY_MASK) >> RTE_DELIVERY_SHIFT);
	if ((rte & RTE_MASKED) || delivery == RTE_DELIVERY_EXTINT)
		return false;
	msi->address = MSI_ADDRESS_BASE | ((rte >> RTE_DEST_SHIFT) << MSI_ADDR_DEST_SHIFT) |
		       ((rte & RTE_DEST_LOGICAL) ? MSI_ADDR_DEST_LOGICAL : 0);
	msi->data = (uint32_t)(rte & RTE_VECTOR) | (delivery << MSI_DATA_DELIVERY_SHIFT) |
		    ((rte & RTE_LEVEL) ? MSI_DATA_LEVEL_TRIGGER : 0);
	return true;
}

/* 0xf is the broadcast ID of the serial APIC bus. */
#define IOAPIC_LAST_UNIQUE_ID 0xeu

unsigned ioapic_id_for_cpus(unsigned ncpus)
{
	return ncpus <= IOAPIC_LAST_UNIQUE_ID ? ncpus : 0;
}

void ioapic_init(struct ioapic *io, const struct ioapic_ops *ops, unsigned id)
{
	memset(io, 0, sizeof(*io));
	pthread_mutex_init(&io->lock, NULL);
	io->ops = *ops;
	io->id = (id << IOAPIC_ID_SHIFT) & IOAPIC_ID_MASK;
	/* Reset state: every pin masked (edge, fixed, vector 0). */
	for (unsigned n = 0; n < IOAPIC_PINS; n++)
		io->rte[n] = RTE_MASKED;
}

void ioapic_destroy(struct ioapic *io)
{
	pthread_mutex_destroy(&io->lock);
}

static void ioapic_push_routes(struct ioapic *io)
{
	bool routed[IOAPIC_PINS];
	struct ioapic_msi msi[IOAPIC_PINS];
	memset(msi, 0, sizeof(msi));
	for (unsigned n = 0; n < IOAPIC_PINS; n++)
		routed[n] = ioapic_rte_to_msi(io->rte[n], &msi[n]);
	if (io->ops.set_routes(io->ops.opaque, routed, msi) < 0)
		io->route_errors++;
}

/* Deliver pin n if its line asks for it: a level-triggered pin once per
 * EOI while asserted (Remote IRR holds the rest back). */
static void ioapic_service_level(struct ioapic *io, unsigned n)
{
	uint64_t rte = io->rte[n];
	if (!(rte & RTE_LEVEL) || (rte & (RTE_MASKED | RTE_REMOTE_IRR)) || !(io->line & (1u << n)))
		return;
	struct ioapic_msi unused;
	if (!ioapic_rte_to_msi(rte, &unused))
		return;
	io->rte[n] |= RTE_REMOTE_IRR;
	io->ops.raise(io->ops.opaque, n);
}

int ioapic_set_irq(struct ioapic *io, unsigned pin, int level)
{
	if (pin >= IOAPIC_PINS)
		return -EINVAL;
	pthread_mutex_lock(&io->lock);
	uint32_t bit = 1u << pin;
	bool rising = level && !(io->line & bit);
	io->line = level ? io->line | bit : io->line & ~bit;
	uint64_t rte = io->rte[pin];
	if (rte & RTE_LEVEL) {
		ioapic_service_level(io, pin);
	} else if (rising && !(rte & RTE_MASKED)) {
		/* An edge on a masked pin is lost, as on the chip. */
		struct ioapic_msi unused;
		if (ioapic_rte_to_msi(rte, &unused))
			io->ops.raise(io->ops.opaque, pin);
	}
	pthread_mutex_unlock(&io->lock);
	return 0;
}

static void ioapic_eoi_locked(struct ioapic *io, uint8_t vector)
{
	for (unsigned n = 0; n < IOAPIC_PINS; n++) {
		if ((io->rte[n] & RTE_VECTOR) != vector || !(io->rte[n] & RTE_LEVEL))
			continue;
		io->rte[n] &= ~RTE_REMOTE_IRR;
		ioapic_service_level(io, n);
	}
}

void ioapic_eoi(struct ioapic *io, uint8_t vector)
{
	pthread_mutex_lock(&io->lock);
	ioapic_eoi_locked(io, vector);
	pthread_mutex_unlock(&io->lock);
}

static uint32_t ioapic_read_reg(const struct ioapic *io, uint32_t reg)
{
	switch (reg) {
	case IOAPIC_REG_ID:
	case IOAPIC_REG_ARB:
		return io->id;
	case IOAPIC_REG_VERSION:
		return IOAPIC_VERSION | ((IOAPIC_PINS - 1) << 16);
	default:
		break;
	}
	if (reg < IOAPIC_REG_RTE0 || reg >= IOAPIC_REG_RTE0 + 2 * IOAPIC_PINS)
		return 0;   /* reserved registers read as zero */
	uint64_t rte = io->rte[(reg - IOAPIC_REG_RTE0) / 2];
	return (reg & 1) ? (uint32_t)(rte >> 32) : (uint32_t)rte;
}

static void ioapic_write_rte(struct ioapic *io, unsigned n, bool high, uint32_t v)
{
	uint64_t old = io->rte[n];
	uint64_t wanted = high ? ((uint64_t)v << 32) | (old & 0xffffffffull)
			       : (old & ~0xffffffffull) | v;
	uint64_t rte = (old & ~RTE_WRITABLE) | (wanted & RTE_WRITABLE);
	if (!(rte & RTE_LEVEL))
		rte &= ~RTE_REMOTE_IRR;   /* an edge pin has no EOI to wait for */
	io->rte[n] = rte;
	if (rte != old)
		ioapic_push_routes(io);
	/* Unmasking a level pin whose line is up delivers it now. */
	ioapic_service_level(io, n);
}

static void ioapic_write_reg(struct ioapic *io, uint32_t reg, uint32_t v)
{
	if (reg == IOAPIC_REG_ID) {
		io->id = v & IOAPIC_ID_MASK;
		return;
	}
	if (reg >= IOAPIC_REG_RTE0 && reg < IOAPIC_REG_RTE0 + 2 * IOAPIC_PINS)
		ioapic_write_rte(io, (reg - IOAPIC_REG_RTE0) / 2, reg & 1, v);
	/* VERSION, ARB and the reserved registers are read-only. */
}

/* Only aligned 32-bit accesses reach a register, as on the chip; anything
 * else reads as zero and is dropped. */
static void ioapic_mmio_read(void *opaque, uint64_t off, uint8_t *data, unsigned len)
{
	struct ioapic *io = opaque;
	uint32_t v = 0;
	pthread_mutex_lock(&io->lock);
	if (len == 4 && off == IOAPIC_REGSEL)
		v = io->regsel;
	else if (len == 4 && off == IOAPIC_WINDOW)
		v = ioapic_read_reg(io, io->regsel);
	pthread_mutex_unlock(&io->lock);
	memset(data, 0, len);
	bus_store_le(data, len < 4 ? len : 4, v);
}

static void ioapic_mmio_write(void *opaque, uint64_t off, const uint8_t *data, unsigned len)
{
	struct ioapic *io = opaque;
	if (len != 4)
		return;
	uint32_t v = (uint32_t)bus_load_le(data, 4);
	pthread_mutex_lock(&io->lock);
	if (off == IOAPIC_REGSEL)
		io->regsel = v & 0xff;
	else if (off == IOAPIC_WINDOW)
		ioapic_write_reg(io, io->regsel, v);
	else if (off == IOAPIC_EOI)
		ioapic_eoi_locked(io, (uint8_t)v);
	pthread_mutex_unlock(&io->lock);
}

struct bus_device ioapic_bus_device(struct ioapic *io)
{
	return (struct bus_device){ .name = "ioapic", .opaque = io,
				    .read = ioapic_mmio_read, .write = ioapic_mmio_write };
}
