/* SPDX-License-Identifier: Apache-2.0 */
#include "virtio_mmio.h"

#include "cmdline.h"
#include "dtb.h"
#include "io.h"
#include "lib.h"
#include "serial.h"

uint32_t vmmio_read(const struct vmmio_dev *d, uint32_t reg)
{
	return mmio_read32(d->base + reg);
}

void vmmio_write(const struct vmmio_dev *d, uint32_t reg, uint32_t v)
{
	mmio_write32(d->base + reg, v);
}

/* Device config space allows 8/16/32-bit accesses of natural alignment. */
uint8_t vmmio_config8(const struct vmmio_dev *d, uint32_t off)
{
	return *(volatile uint8_t *)(d->base + VIRTIO_MMIO_CONFIG + off);
}

uint16_t vmmio_config16(const struct vmmio_dev *d, uint32_t off)
{
	return *(volatile uint16_t *)(d->base + VIRTIO_MMIO_CONFIG + off);
}

/* Number with an optional K/M/G suffix; *end gets the rest. */
static int parse_num(const char *s, int allow_suffix, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	unsigned base = 10, digits = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (;; s++, digits++) {
		unsigned c = (unsigned char)*s, dv;

		if (c >= '0' && c <= '9')
			dv = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			dv = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			dv = c - 'A' + 10;
		else
			break;
		if (v > (UINT64_MAX - dv) / base)
			return -1;
		v = v * base + dv;
	}
	if (!digits)
		return -1;
	if (allow_suffix) {
		unsigned shift = 0;

		switch (*s) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		}
		if (shift) {
			if (v > (UINT64_MAX >> shift))
				return -1;
			v <<= shift;
			s++;
		}
	}
	*out = v;
	*end = s;
	return 0;
}

/* Registers up to the config space at least, 4-byte aligned, below 4 GiB
 * (our page tables map only that); an 8-bit interrupt line. */
static int window_ok(uint64_t base, uint64_t size, uint64_t irq)
{
	return size >= VIRTIO_MMIO_CONFIG && base < 0x100000000ull &&
	       size <= 0x100000000ull - base && !(base & 3) && irq <= 255;
}

int vmmio_parse_word(const char *s, struct vmmio_dev *out)
{
	uint64_t size, base, irq;

	memset(out, 0, sizeof(*out));
	if (parse_num(s, 1, &size, &s) || *s++ != '@' ||
	    parse_num(s, 0, &base, &s) || *s++ != ':' ||
	    parse_num(s, 0, &irq, &s) || (*s && *s != ':'))
		return -1;
	if (!window_ok(base, size, irq))
		return -1;
	out->base = (uintptr_t)base;
	out->size = size;
	out->irq = (unsigned)irq;
	return 0;
}

/* The virtio-mmio windows, found once: from the device tree module when
 * the VMM passed one (minivmm), else from the cmdline words (QEMU microvm,
 * which has no device tree on x86). One console line says which. */
static struct {
	int done;
	int bad_word;                 /* a cmdline word did not parse */
	unsigned n;
	struct vmmio_dev dev[VMMIO_MAX_WINDOWS];
} windows;

/* 1 when the DTB module gave the list (possibly empty), 0 to fall back. */
static int windows_from_dtb(void)
{
	const uint8_t *blob;
	uint64_t size;
	struct dtb_mmio_dev d[VMMIO_MAX_WINDOWS];
	const char *why = "";

	if (!tg_start_info || !dtb_find_module(tg_start_info, &blob, &size))
		return 0;
	int n = dtb_virtio_mmio(blob, size, d, VMMIO_MAX_WINDOWS, &why);

	for (int i = 0; i < n && !*why; i++)
		if (!window_ok(d[i].base, d[i].size, d[i].irq))
			why = "a virtio-mmio window the guest cannot map";
	if (n < 0 || *why) {
		tg_printf("testguest: dtb at 0x%lx (%lu bytes) unusable: %s\n",
			  (unsigned long)(uintptr_t)blob, (unsigned long)size, why);
		return 0;
	}
	for (int i = 0; i < n; i++)
		windows.dev[i] = (struct vmmio_dev){ .base = (uintptr_t)d[i].base, .size = d[i].size,
						     .irq = d[i].irq };
	windows.n = (unsigned)n;
	return 1;
}

static void windows_from_cmdline(void)
{
	for (int i = cmdline_find("virtio_mmio.device", 0); i >= 0;
	     i = cmdline_find("virtio_mmio.device", (unsigned)i + 1)) {
		const char *w = cmdline_word((unsigned)i)->value;

		if (windows.n == VMMIO_MAX_WINDOWS)
			break;
		if (vmmio_parse_word(w, &windows.dev[windows.n])) {
			tg_printf("testguest: bad virtio_mmio.device=%s\n", w);
			windows.bad_word = 1;
			return;
		}
		windows.n++;
	}
}

static void windows_discover(int verbose)
{
	const char *source = "dtb";

	if (windows.done)
		return;
	windows.done = 1;
	if (!windows_from_dtb()) {
		source = "cmdline";
		windows_from_cmdline();
	}
	tg_printf("testguest: virtio-mmio source %s devices %u\n", source, windows.n);
	for (unsigned i = 0; verbose && i < windows.n; i++)
		tg_printf("testguest: virtio-mmio window %u base 0x%lx size 0x%lx irq %u\n", i,
			  (unsigned long)windows.dev[i].base, (unsigned long)windows.dev[i].size,
			  windows.dev[i].irq);
}

int vmmio_find(uint32_t device_id, struct vmmio_dev *out, int verbose)
{
	windows_discover(verbose);
	if (windows.bad_word)
		return VMMIO_BAD_WORD;
	for (unsigned i = 0; i < windows.n; i++) {
		struct vmmio_dev d = windows.dev[i];

		if (vmmio_read(&d, VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC) {
			if (verbose)
				tg_printf("testguest: virtio-mmio 0x%lx: no magic\n",
					  (unsigned long)d.base);
			continue;
		}
		d.device_id = vmmio_read(&d, VIRTIO_MMIO_DEVICE_ID);
		d.version = vmmio_read(&d, VIRTIO_MMIO_VERSION);
		if (verbose)
			tg_printf("testguest: virtio-mmio 0x%lx irq %u: version %u device %u\n",
				  (unsigned long)d.base, d.irq, d.version, d.device_id);
		if (d.device_id != device_id)
			continue;
		*out = d;
		return d.version == 2 ? VMMIO_FOUND : VMMIO_LEGACY;
	}
	return VMMIO_NONE;
}

static void set_status(const struct vmmio_dev *d, uint32_t bits)
{
	vmmio_write(d, VIRTIO_MMIO_STATUS, vmmio_read(d, VIRTIO_MMIO_STATUS) | bits);
}

void vmmio_begin(const struct vmmio_dev *d)
{
	vmmio_write(d, VIRTIO_MMIO_STATUS, 0);
	/* Reset completes when status reads 0 (bounded). */
	for (unsigned i = 0; i < 1000 && vmmio_read(d, VIRTIO_MMIO_STATUS); i++)
		cpu_pause();
	set_status(d, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	set_status(d, VIRTIO_CONFIG_S_DRIVER);
}

uint64_t vmmio_device_features(const struct vmmio_dev *d)
{
	uint64_t f;

	vmmio_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	f = (uint64_t)vmmio_read(d, VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	vmmio_write(d, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	return f | vmmio_read(d, VIRTIO_MMIO_DEVICE_FEATURES);
}

int vmmio_set_features(const struct vmmio_dev *d, uint64_t features)
{
	vmmio_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	vmmio_write(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(features >> 32));
	vmmio_write(d, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	vmmio_write(d, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)features);
	set_status(d, VIRTIO_CONFIG_S_FEATURES_OK);
	if (!(vmmio_read(d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK)) {
		vmmio_fail(d);
		return -1;
	}
	return 0;
}

int vmmio_queue_setup(const struct vmmio_dev *d, struct virtq *vq,
		      uint16_t index, uint16_t want, int event_idx)
{
	uint32_t max;
	uint16_t num = 1;

	vmmio_write(d, VIRTIO_MMIO_QUEUE_SEL, index);
	if (vmmio_read(d, VIRTIO_MMIO_QUEUE_READY))
		return -1;
	max = vmmio_read(d, VIRTIO_MMIO_QUEUE_NUM_MAX);
	if (!max)
		return -1;
	while ((uint32_t)num * 2 <= max && num * 2 <= want)
		num *= 2;
	if (virtq_init(vq, index, num, event_idx))
		return -1;
	vq->notify = (volatile uint32_t *)(d->base + VIRTIO_MMIO_QUEUE_NOTIFY);
	return vmmio_queue_program(d, vq);
}

int vmmio_queue_program(const struct vmmio_dev *d, const struct virtq *vq)
{
	uint64_t a;

	vmmio_write(d, VIRTIO_MMIO_QUEUE_SEL, vq->index);
	if (vmmio_read(d, VIRTIO_MMIO_QUEUE_READY) ||
	    vmmio_read(d, VIRTIO_MMIO_QUEUE_NUM_MAX) < vq->num)
		return -1;
	vmmio_write(d, VIRTIO_MMIO_QUEUE_NUM, vq->num);
	a = (uint64_t)(uintptr_t)vq->desc;
	vmmio_write(d, VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)a);
	vmmio_write(d, VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(a >> 32));
	a = (uint64_t)(uintptr_t)vq->avail;
	vmmio_write(d, VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)a);
	vmmio_write(d, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, (uint32_t)(a >> 32));
	a = (uint64_t)(uintptr_t)vq->used;
	vmmio_write(d, VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)a);
	vmmio_write(d, VIRTIO_MMIO_QUEUE_USED_HIGH, (uint32_t)(a >> 32));
	vmmio_write(d, VIRTIO_MMIO_QUEUE_READY, 1);
	return 0;
}

void vmmio_driver_ok(const struct vmmio_dev *d)
{
	set_status(d, VIRTIO_CONFIG_S_DRIVER_OK);
}

void vmmio_fail(const struct vmmio_dev *d)
{
	set_status(d, VIRTIO_CONFIG_S_FAILED);
}
