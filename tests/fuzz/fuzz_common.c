/* SPDX-License-Identifier: Apache-2.0 */
/* Shared pieces of the libFuzzer targets (see fuzz_common.h). */
#include "tests/fuzz/fuzz_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- checks -------------------------------------------------------------- */

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\nfuzz check failed at %s:%d: %s: ", file, line, cond);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

bool fuzz_is_zero(const void *p, size_t len)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

static int lowest_free_fd = -1;

static int fuzz_lowest_free_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	FUZZ_CHECK(fd >= 0, "cannot open /dev/null: %s", strerror(errno));
	close(fd);
	return fd;
}

void fuzz_fd_baseline(void)
{
	lowest_free_fd = fuzz_lowest_free_fd();
}

void fuzz_fd_check(const char *what)
{
	int fd = fuzz_lowest_free_fd();
	FUZZ_CHECK(fd == lowest_free_fd, "%s: the lowest free fd is %d, it was %d before: an fd %s",
		   what, fd, lowest_free_fd, fd > lowest_free_fd ? "leaked" : "was closed twice");
}

/* ---- reading the input ------------------------------------------------------ */

uint8_t fz_u8(struct fz *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

uint16_t fz_u16(struct fz *f)
{
	uint16_t lo = fz_u8(f);
	return (uint16_t)(lo | (uint16_t)fz_u8(f) << 8);
}

uint32_t fz_u32(struct fz *f)
{
	uint32_t lo = fz_u16(f);
	return lo | (uint32_t)fz_u16(f) << 16;
}

uint64_t fz_u64(struct fz *f)
{
	uint64_t lo = fz_u32(f);
	return lo | (uint64_t)fz_u32(f) << 32;
}

const uint8_t *fz_take(struct fz *f, size_t want, size_t *got)
{
	const uint8_t *p = f->p;
	*got = want < f->n ? want : f->n;
	f->p += *got;
	f->n -= *got;
	return p;
}

/* ---- guest memory ------------------------------------------------------------ */

void fuzz_guest_init(struct fuzz_guest *g, uint64_t gpa0, size_t size0, uint64_t gpa1, size_t size1)
{
	memset(g, 0, sizeof(*g));
	uint64_t gpa[2] = { gpa0, gpa1 };
	size_t size[2] = { size0, size1 };
	for (unsigned i = 0; i < 2 && size[i]; i++) {
		g->buf[i] = calloc(1, size[i]);
		FUZZ_CHECK(g->buf[i], "out of memory for %zu bytes of guest memory", size[i]);
		g->size[i] = size[i];
		g->mem.region[i] = (struct guest_mem_region){ .gpa = gpa[i], .size = size[i],
							      .host = g->buf[i] };
		g->mem.nr_regions = i + 1;
		g->mem.ram_size += size[i];
	}
}

void fuzz_guest_for_rings(struct fuzz_guest *g, struct fz *in)
{
	uint8_t m = fz_u8(in);
	uint64_t gpa0 = (m & 1) ? 0x100000 : 0;
	uint64_t gpa1 = (m & 2) ? gpa0 + FUZZ_MEM0 : GUEST_MMIO_HOLE_END;
	fuzz_guest_init(g, gpa0, FUZZ_MEM0, gpa1, (m & 4) ? FUZZ_MEM1 : 0);
}

void fuzz_guest_free(struct fuzz_guest *g)
{
	for (unsigned i = 0; i < GUEST_MEM_MAX_REGIONS; i++)
		free(g->buf[i]);
	memset(g, 0, sizeof(*g));
}

bool fuzz_guest_locate(const struct fuzz_guest *g, const void *p, unsigned *region, size_t *off)
{
	uintptr_t a = (uintptr_t)p;
	for (unsigned i = 0; i < g->mem.nr_regions; i++) {
		uintptr_t b = (uintptr_t)g->buf[i];
		if (a >= b && a - b < g->size[i]) {
			*region = i;
			*off = a - b;
			return true;
		}
	}
	return false;
}

bool fuzz_guest_holds(const struct fuzz_guest *g, const void *p, size_t len)
{
	unsigned r;
	size_t off;
	return len && fuzz_guest_locate(g, p, &r, &off) && len <= g->size[r] - off;
}

uint64_t fuzz_guest_addr(const struct fuzz_guest *g, uint16_t sel)
{
	unsigned r = (sel & 0x8000) && g->mem.nr_regions > 1 ? 1 : 0;
	return g->mem.region[r].gpa + (sel & 0x7fff);
}

/* ---- a split virtqueue --------------------------------------------------------- */

static struct fuzz_held held_pool[2][FUZZ_MAX_HELD];

/* used ring: flags, idx, ring[size], avail_event */
static uint64_t used_bytes(uint16_t size) { return 6ull + 8ull * size; }

void fuzz_vq_setup(struct fuzz_vq *v, struct fuzz_guest *g, struct fz *in, unsigned slot,
		   const char *name)
{
	memset(v, 0, sizeof(*v));
	v->g = g;
	v->name = name;
	v->held = held_pool[slot & 1];
	for (unsigned i = 0; i < g->mem.nr_regions; i++) {
		v->may_write[i] = calloc(g->size[i], sizeof(uint16_t));
		v->shadow[i] = malloc(g->size[i]);
		FUZZ_CHECK(v->may_write[i] && v->shadow[i], "out of memory");
	}

	uint8_t b = fz_u8(in);
	v->event_idx = b & 0x10;
	v->indirect = b & 0x20;
	/* Mostly valid sizes (1 .. 256); now and then anything at all. */
	v->size = (b & 0x80) ? fz_u16(in) : (uint16_t)(1u << ((b & 0xf) % 9));
	if (b & 0x40) {
		/* Raw addresses: what virtq_init must refuse or survive. */
		v->desc = fz_u64(in);
		v->avail = fz_u64(in);
		v->used = fz_u64(in);
	} else {
		/* The standard layout (desc, avail, used back to back, used
		 * 4-aligned) somewhere in region 0. */
		v->desc = g->mem.region[0].gpa + 16ull * fz_u8(in);
		v->avail = v->desc + 16ull * v->size;
		v->used = (v->avail + 6 + 2ull * v->size + 3) & ~3ull;
	}
	uint16_t start = fz_u16(in);
	v->live = virtq_init(&v->q, &g->mem, v->size, v->desc, v->avail, v->used, v->event_idx,
			     v->indirect, NULL) == 0;
	if (v->live) {
		/* Both sides start at `start` (any index is reachable by running
		 * long enough): the device's shadow indices and the published
		 * ones. */
		v->q.last_avail = v->q.next_used = v->q.published_used = start;
		v->q.used->idx = start;
		v->q.avail->idx = start;
		v->avail_idx = start;
	}
	for (unsigned i = 0; i < g->mem.nr_regions; i++)
		memcpy(v->shadow[i], g->buf[i], g->size[i]);
}

void fuzz_vq_free(struct fuzz_vq *v)
{
	for (unsigned i = 0; i < GUEST_MEM_MAX_REGIONS; i++) {
		free(v->may_write[i]);
		free(v->shadow[i]);
	}
	memset(v, 0, sizeof(*v));
}

void fuzz_vq_guest_write(struct fuzz_vq *v, uint64_t gpa, const void *src, size_t len)
{
	uint8_t *p = guest_mem_ptr(&v->g->mem, gpa, len);
	unsigned r;
	size_t off;
	if (!p || !fuzz_guest_locate(v->g, p, &r, &off))
		return;   /* outside RAM: dropped */
	memcpy(v->shadow[r] + off, src, len);
	/* Release: like a driver's store of avail->idx after the ring entry. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(p, src, len);
}

static void put_desc(struct fuzz_vq *v, uint64_t gpa, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	struct vring_desc d = { .addr = addr, .len = len, .flags = flags, .next = next };
	fuzz_vq_guest_write(v, gpa, &d, sizeof(d));
}

static void set_avail_idx(struct fuzz_vq *v, uint16_t idx)
{
	v->avail_idx = idx;
	fuzz_vq_guest_write(v, v->avail + 2, &idx, 2);
}

static void offer(struct fuzz_vq *v, uint16_t head)
{
	fuzz_vq_guest_write(v, v->avail + 4 + 2ull * (v->avail_idx & (v->size - 1)), &head, 2);
	set_avail_idx(v, (uint16_t)(v->avail_idx + 1));
}

/* A well-formed chain in one step (what a real driver posts), so the fuzzer
 * reaches deep states quickly: n segments of input-chosen lengths, the last
 * nw device-writable, in the descriptor table or in an indirect table. */
static void make_chain(struct fuzz_vq *v, struct fz *in)
{
	uint8_t b = fz_u8(in);
	unsigned n = 1 + (b & 7);
	unsigned nw = (b >> 3) & 7;
	bool indirect = b & 0x40;
	nw = nw > n ? n : nw;
	uint16_t head = (uint16_t)(fz_u8(in) & (v->size - 1));
	uint64_t data = fuzz_guest_addr(v->g, fz_u16(in));
	uint64_t table = indirect ? fuzz_guest_addr(v->g, fz_u16(in)) & ~15ull : 0;
	for (unsigned i = 0; i < n; i++) {
		uint32_t len = 1u + fz_u8(in);
		uint16_t flags = (i + 1 < n ? VRING_DESC_F_NEXT : 0) |
				 (i >= n - nw ? VRING_DESC_F_WRITE : 0);
		uint16_t idx = indirect ? (uint16_t)i : (uint16_t)((head + i) & (v->size - 1));
		uint16_t next = indirect ? (uint16_t)(i + 1) : (uint16_t)((head + i + 1) & (v->size - 1));
		uint64_t at = indirect ? table + 16ull * i : v->desc + 16ull * idx;
		put_desc(v, at, data, len, flags, next);
		data += len;
	}
	if (indirect)
		put_desc(v, v->desc + 16ull * head, table, 16 * n, VRING_DESC_F_INDIRECT, 0);
	offer(v, head);
}

bool fuzz_vq_driver_op(struct fuzz_vq *v, uint8_t op, struct fz *in)
{
	if (op >= FUZZ_DRIVER_OPS)
		return false;
	if (op == 5) {   /* poke any byte of guest memory */
		uint64_t gpa = fuzz_guest_addr(v->g, fz_u16(in));
		uint8_t val = fz_u8(in);
		fuzz_vq_guest_write(v, gpa, &val, 1);
		return true;
	}
	if (!v->live) {
		return true;
	}
	switch (op) {
	case 0: {   /* descriptor i of the table */
		uint16_t i = (uint16_t)(fz_u8(in) & (v->size - 1));
		uint64_t addr = fuzz_guest_addr(v->g, fz_u16(in));
		uint16_t len = fz_u16(in);
		uint8_t flags = fz_u8(in);
		put_desc(v, v->desc + 16ull * i, addr, len, flags, fz_u8(in));
		break;
	}
	case 1: {   /* a descriptor anywhere (indirect tables), any address */
		uint64_t at = fuzz_guest_addr(v->g, fz_u16(in));
		uint64_t addr = fz_u64(in);
		uint32_t len = fz_u32(in);
		uint16_t flags = fz_u16(in);
		put_desc(v, at, addr, len, flags, fz_u16(in));
		break;
	}
	case 2:   /* make a head available (any value: >= size is an error) */
		offer(v, fz_u16(in));
		break;
	case 3:
		make_chain(v, in);
		break;
	case 4:   /* move avail->idx anywhere */
		set_avail_idx(v, fz_u16(in));
		break;
	case 6: {
		uint16_t flags = fz_u16(in);
		fuzz_vq_guest_write(v, v->avail, &flags, 2);
		break;
	}
	case 7: {
		uint16_t event = fz_u16(in);
		fuzz_vq_guest_write(v, v->avail + 4 + 2ull * v->size, &event, 2);
		break;
	}
	}
	return true;
}

void fuzz_check_chain(const struct fuzz_vq *v, const struct guest_chain *c)
{
	unsigned n = (unsigned)c->nr_readable + c->nr_writable;
	FUZZ_CHECK(n <= GUEST_CHAIN_MAX_SEGS, "%s: chain of %u segments", v->name, n);
	FUZZ_CHECK(c->head < v->size, "%s: head %u of a %u-entry queue", v->name, c->head, v->size);
	uint64_t rlen = 0, wlen = 0;
	for (unsigned i = 0; i < n; i++) {
		FUZZ_CHECK(c->iov[i].iov_len > 0, "%s: empty segment %u", v->name, i);
		FUZZ_CHECK(fuzz_guest_holds(v->g, c->iov[i].iov_base, c->iov[i].iov_len),
			   "%s: segment %u (%zu bytes) is not inside guest memory", v->name, i,
			   c->iov[i].iov_len);
		if (i < c->nr_readable)
			rlen += c->iov[i].iov_len;
		else
			wlen += c->iov[i].iov_len;
	}
	FUZZ_CHECK(rlen == c->readable_len && wlen == c->writable_len,
		   "%s: lengths %u/%u, segments add up to %llu/%llu", v->name, c->readable_len,
		   c->writable_len, (unsigned long long)rlen, (unsigned long long)wlen);
}

/* Count the held chains that may write each byte of guest memory. */
static void mark_writable(struct fuzz_vq *v, const struct fuzz_held *h, int delta)
{
	for (unsigned i = 0; i < h->nr_w; i++) {
		unsigned r;
		size_t off;
		if (!fuzz_guest_locate(v->g, h->w[i].iov_base, &r, &off))
			continue;
		for (size_t b = 0; b < h->w[i].iov_len; b++)
			v->may_write[r][off + b] = (uint16_t)(v->may_write[r][off + b] + delta);
	}
}

/* FUZZ_TRACE=1: print what the device does with each queue (to read a
 * crash's story when reproducing it). */
bool fuzz_tracing(void)
{
	static int on = -1;
	if (on < 0)
		on = getenv("FUZZ_TRACE") != NULL;
	return on;
}

static void trace_chain(const struct fuzz_vq *v, const struct guest_chain *c)
{
	fprintf(stderr, "%s: pop head %u, %u readable (%u bytes), %u writable (%u bytes):", v->name,
		c->head, c->nr_readable, c->readable_len, c->nr_writable, c->writable_len);
	for (unsigned i = 0; i < (unsigned)c->nr_readable + c->nr_writable; i++) {
		unsigned r;
		size_t off;
		if (fuzz_guest_locate(v->g, c->iov[i].iov_base, &r, &off))
			fprintf(stderr, " %c%u:0x%zx+%zu", i < c->nr_readable ? 'r' : 'w', r, off,
				c->iov[i].iov_len);
	}
	fputc('\n', stderr);
}

void fuzz_vq_popped(struct fuzz_vq *v, const struct guest_chain *c, int rc)
{
	if (fuzz_tracing()) {
		if (rc > 0)
			trace_chain(v, c);
		else
			fprintf(stderr, "%s: pop -> %d (%s)\n", v->name, rc, virtq_error_text(v->q.error));
	}
	FUZZ_CHECK(rc >= -1 && rc <= 1, "%s: virtq_pop returned %d", v->name, rc);
	if (rc < 0) {
		FUZZ_CHECK(v->q.error != VIRTQ_OK, "%s: pop failed without an error", v->name);
		if (v->error == VIRTQ_OK)
			v->error = v->q.error;
		FUZZ_CHECK(v->q.error == v->error, "%s: error changed from %d to %d", v->name,
			   v->error, v->q.error);
		return;
	}
	FUZZ_CHECK(v->error == VIRTQ_OK && v->q.error == VIRTQ_OK,
		   "%s: a broken queue (%s) returned %d from pop", v->name,
		   virtq_error_text(v->error), rc);
	if (rc == 0)
		return;
	v->pops++;
	fuzz_check_chain(v, c);
	unsigned holding = 0;
	for (unsigned i = 0; i < v->nr_held; i++)
		holding += !v->held[i].returned;
	FUZZ_CHECK(holding < v->size && v->nr_held < FUZZ_MAX_HELD,
		   "%s: the device holds more chains than its %u-entry queue has", v->name, v->size);
	struct fuzz_held *h = &v->held[v->nr_held++];
	h->head = c->head;
	h->returned = false;
	h->keep_marks = false;
	h->writable_len = c->writable_len;
	h->nr_w = c->nr_writable;
	memcpy(h->w, &c->iov[c->nr_readable], c->nr_writable * sizeof(struct iovec));
	if (v->chains_writable)
		mark_writable(v, h, +1);
}

void fuzz_vq_pushed(struct fuzz_vq *v, uint16_t head, uint32_t len)
{
	if (fuzz_tracing())
		fprintf(stderr, "%s: push head %u len %u\n", v->name, head, len);
	/* The guest may post one head twice: take the held chain with that
	 * head that has the least room for len (best fit leaves the others
	 * for later pushes whenever any assignment would). */
	struct fuzz_held *best = NULL;
	unsigned matches = 0;
	uint32_t most = 0;
	for (unsigned i = 0; i < v->nr_held; i++) {
		struct fuzz_held *h = &v->held[i];
		if (h->returned || h->head != head)
			continue;
		matches++;
		most = h->writable_len > most ? h->writable_len : most;
		if (h->writable_len >= len && (!best || h->writable_len < best->writable_len))
			best = h;
	}
	FUZZ_CHECK(matches, "%s: pushed head %u, which the device does not hold", v->name, head);
	FUZZ_CHECK(best, "%s: pushed head %u with %u bytes written, it has %u writable",
		   v->name, head, len, most);
	best->returned = true;
	best->keep_marks = matches > 1;
	v->pushes++;
	v->unpublished++;
}

void fuzz_vq_published(struct fuzz_vq *v)
{
	/* Returned chains are dropped at the end of the step. */
	v->unpublished = 0;
}

/* A byte the device may write: its used ring (with avail_event and flags),
 * or a writable buffer of a chain it holds or held during the step. */
static bool may_write(const struct fuzz_vq *v, unsigned r, size_t off)
{
	if (v->may_write[r][off])
		return true;
	if (!v->live)
		return false;
	const uint8_t *used = (const uint8_t *)v->q.used;
	const uint8_t *p = v->g->buf[r] + off;
	return p >= used && (size_t)(p - used) < used_bytes(v->size);
}

void fuzz_vq_check_writes(struct fuzz_vq *v)
{
	for (unsigned r = 0; r < v->g->mem.nr_regions; r++) {
		if (memcmp(v->shadow[r], v->g->buf[r], v->g->size[r]) == 0)
			continue;
		for (size_t off = 0; off < v->g->size[r]; off++) {
			/* Whole blocks first: most of memory is unchanged, and
			 * libc's memcmp is much faster than a byte loop. */
			if (off % 256 == 0) {
				size_t n = v->g->size[r] - off < 256 ? v->g->size[r] - off : 256;
				if (memcmp(v->shadow[r] + off, v->g->buf[r] + off, n) == 0) {
					off += n - 1;
					continue;
				}
			}
			if (v->shadow[r][off] == v->g->buf[r][off])
				continue;
			FUZZ_CHECK(may_write(v, r, off),
				   "%s: the device wrote guest byte 0x%zx of region %u (0x%02x -> 0x%02x), "
				   "outside its used ring and the writable buffers it holds",
				   v->name, off, r, v->shadow[r][off], v->g->buf[r][off]);
			v->shadow[r][off] = v->g->buf[r][off];
		}
	}
}

bool fuzz_skip_known_hangs(void)
{
	const char *e = getenv("FUZZ_SKIP_KNOWN_HANGS");
	return e && strcmp(e, "1") == 0;
}

void fuzz_vq_end_step(struct fuzz_vq *v)
{
	v->kick_enables = 0;
	bool returned = false;
	for (unsigned i = 0; i < v->nr_held && !returned; i++)
		returned = v->held[i].returned;
	if (!returned)
		return;
	/* Check what was written while those chains were held, then they are
	 * the guest's again. */
	fuzz_vq_check_writes(v);
	unsigned kept = 0;
	for (unsigned i = 0; i < v->nr_held; i++) {
		if (v->held[i].returned) {
			if (v->chains_writable && !v->held[i].keep_marks)
				mark_writable(v, &v->held[i], -1);
			continue;
		}
		if (kept != i)
			v->held[kept] = v->held[i];
		kept++;
	}
	v->nr_held = kept;
}

/* ---- the data path's ring ops ---------------------------------------------------- */

/* net.c's wrappers, one line each, plus the bookkeeping. */
static int ring_pop(void *r, struct guest_chain *c)
{
	int rc = virtq_pop(r, c);
	fuzz_vq_popped(r, c, rc);
	return rc;
}

static void ring_push(void *r, uint16_t head, uint32_t len)
{
	fuzz_vq_pushed(r, head, len);
	virtq_push(r, head, len);
}

static void ring_publish(void *r)
{
	virtq_publish(r);
	fuzz_vq_published(r);
}

static bool ring_should_signal(void *r) { return virtq_should_signal(r); }
static void ring_disable_kicks(void *r) { virtq_disable_kicks(r); }
static bool ring_enable_kicks(void *r)
{
	struct fuzz_vq *v = r;
	if (++v->kick_enables > 2u * v->size + 8) {
		if (v->on_spin)
			v->on_spin(v);
		FUZZ_CHECK(false, "%s: kicks enabled %u times in one step with %u chains pending: "
			   "the data path spins instead of waiting", v->name, v->kick_enables,
			   virtq_pending(&v->q));
	}
	return virtq_enable_kicks(r);
}
static uint16_t ring_pending(void *r) { return virtq_pending(r); }
static const char *ring_error(void *r) { return virtq_error_text(((struct virtq *)r)->error); }

const struct net_ring_ops fuzz_ring_ops = {
	.pop = ring_pop, .push = ring_push, .publish = ring_publish,
	.should_signal = ring_should_signal, .disable_kicks = ring_disable_kicks,
	.enable_kicks = ring_enable_kicks, .pending = ring_pending, .error = ring_error,
};

/* ---- the loaders' world ---------------------------------------------------- */

/* Low RAM sizes to choose from: just past 1 MiB, 3, 4 and 8 MiB; 2 MiB at
 * 4 GiB when asked. The buffers are allocated once, each of exactly its
 * size (ASan still sees a byte past the end), and not cleared between
 * runs: loaders only write. */
static const size_t boot_low_sizes[4] = { 0x100000 + 0x10000, 3u << 20, 4u << 20, 8u << 20 };
#define BOOT_HIGH_SIZE (2u << 20)
static uint8_t *boot_low[4], *boot_high, *boot_initrd;
#define BOOT_INITRD_MAX (0xffffu * 64)

static const char *boot_cmdline(unsigned which)
{
	static char long_ok[BOOT_CMDLINE_MAX], too_long[BOOT_CMDLINE_MAX + 1];
	if (!long_ok[0]) {
		memset(long_ok, 'a', sizeof(long_ok) - 1);
		memset(too_long, 'b', sizeof(too_long) - 1);
	}
	switch (which & 3) {
	case 0: return "";
	case 1: return "console=ttyS0 reboot=k panic=-1 virtio_mmio.device=4K@0xd0000000:5";
	case 2: return long_ok;      /* the longest a guest buffer holds */
	default: return too_long;    /* one byte more */
	}
}

bool fuzz_boot_setup(struct fuzz_boot *b, const uint8_t *data, size_t size)
{
	memset(b, 0, sizeof(*b));
	if (size < FUZZ_BOOT_PREFIX)
		return false;
	uint8_t flags = data[0];
	unsigned low = flags & 3;
	if (!boot_low[low]) {
		boot_low[low] = malloc(boot_low_sizes[low]);
		FUZZ_CHECK(boot_low[low], "out of memory");
	}
	if (!boot_high) {
		boot_high = malloc(BOOT_HIGH_SIZE);
		FUZZ_CHECK(boot_high, "out of memory");
	}
	struct guest_mem *m = &b->g.mem;
	m->region[0] = (struct guest_mem_region){ 0, boot_low_sizes[low], boot_low[low] };
	m->nr_regions = 1;
	b->g.buf[0] = boot_low[low];
	b->g.size[0] = boot_low_sizes[low];
	if (flags & 4) {
		m->region[1] = (struct guest_mem_region){ GUEST_MMIO_HOLE_END, BOOT_HIGH_SIZE, boot_high };
		m->nr_regions = 2;
		b->g.buf[1] = boot_high;
		b->g.size[1] = BOOT_HIGH_SIZE;
	}
	m->ram_size = boot_low_sizes[low] + (flags & 4 ? BOOT_HIGH_SIZE : 0);

	b->via_boot_load = flags & 0x40;
	b->image = data + FUZZ_BOOT_PREFIX;
	b->image_size = size - FUZZ_BOOT_PREFIX;
	b->req.kernel = b->image;
	b->req.kernel_size = b->image_size;
	b->req.kernel_name = "fuzz.img";
	b->req.cmdline = boot_cmdline(flags >> 4);
	b->req.ncpus = data[1];
	/* The initrd ends where its buffer ends (ASan sees a read past it);
	 * the buffer is made once, at the largest size. */
	size_t initrd_size = ((size_t)data[2] | (size_t)data[3] << 8) * 64;
	if (!boot_initrd) {
		boot_initrd = malloc(BOOT_INITRD_MAX);
		FUZZ_CHECK(boot_initrd, "out of memory");
		for (size_t i = 0; i < BOOT_INITRD_MAX; i++)
			boot_initrd[i] = (uint8_t)(i * 131 + 7);
	}
	if ((flags & 8) && initrd_size) {
		b->initrd = boot_initrd + BOOT_INITRD_MAX - initrd_size;
		b->req.initrd = b->initrd;
		b->req.initrd_size = initrd_size;
	}
	uint32_t rsdp;
	memcpy(&rsdp, data + 4, 4);
	b->req.rsdp_addr = rsdp;
	return true;
}

void fuzz_boot_free(struct fuzz_boot *b)
{
	memset(b, 0, sizeof(*b));
}

void fuzz_boot_check_bytes(const struct fuzz_boot *b, uint64_t gpa, const uint8_t *bytes,
			   size_t len, const char *what)
{
	if (!len)
		return;
	const uint8_t *p = guest_mem_ptr(&b->g.mem, gpa, len);
	FUZZ_CHECK(p, "%s [0x%llx, +0x%zx) is not guest RAM", what, (unsigned long long)gpa, len);
	FUZZ_CHECK(memcmp(p, bytes, len) == 0, "%s at 0x%llx is not what was loaded (clobbered?)", what,
		   (unsigned long long)gpa);
}

void fuzz_boot_check_cmdline(const struct fuzz_boot *b, size_t max_len)
{
	size_t len = strlen(b->req.cmdline);
	FUZZ_CHECK(len <= max_len, "loaded a %zu-byte command line, the kernel takes %zu", len, max_len);
	fuzz_boot_check_bytes(b, BOOT_CMDLINE_ADDR, (const uint8_t *)b->req.cmdline, len + 1,
			      "command line");
}

/* ---- a fake machine ------------------------------------------------------------- */

static void fm_stop(void *o, int status, const char *reason)
{
	struct fuzz_machine *f = o;
	(void)status;
	FUZZ_CHECK(reason && !strchr(reason, '\n'), "stop reason is not one line");
	f->stops++;
}

static void fm_log(void *o, const char *line)
{
	struct fuzz_machine *f = o;
	FUZZ_CHECK(line && !strchr(line, '\n'), "log line is not one line: '%s'", line);
	f->logs++;
}

static int fm_set_irq(void *o, unsigned gsi, int level)
{
	struct fuzz_machine *f = o;
	(void)gsi;
	FUZZ_CHECK(level == 0 || level == 1, "irq level %d", level);
	f->irq_sets++;
	return 0;
}

/* Registration can fail (KVM out of ioeventfd slots): the chosen call does. */
static int fm_ioeventfd(void *o, uint64_t addr, unsigned len, uint64_t datamatch, int fd, bool assign)
{
	struct fuzz_machine *f = o;
	FUZZ_CHECK(len == 4 && fd >= 0, "ioeventfd len %u fd %d", len, fd);
	unsigned i = 0;
	while (i < f->nr_ioeventfds &&
	       !(f->ioeventfd[i].addr == addr && f->ioeventfd[i].datamatch == datamatch))
		i++;
	if (!assign) {
		if (i == f->nr_ioeventfds || f->ioeventfd[i].fd != fd)
			return -ENOENT;
		f->ioeventfd[i] = f->ioeventfd[--f->nr_ioeventfds];
		return 0;
	}
	FUZZ_CHECK(i == f->nr_ioeventfds, "ioeventfd for 0x%llx/%llu registered twice",
		   (unsigned long long)addr, (unsigned long long)datamatch);
	if (++f->calls == f->fail_call)
		return -ENOSPC;
	FUZZ_CHECK(f->nr_ioeventfds < FUZZ_MACHINE_MAX_FDS, "too many ioeventfds");
	f->ioeventfd[f->nr_ioeventfds].addr = addr;
	f->ioeventfd[f->nr_ioeventfds].datamatch = datamatch;
	f->ioeventfd[f->nr_ioeventfds].fd = fd;
	f->nr_ioeventfds++;
	return 0;
}

static int fm_irqfd(void *o, int fd, unsigned gsi, bool assign)
{
	struct fuzz_machine *f = o;
	FUZZ_CHECK(fd >= 0, "irqfd fd %d", fd);
	unsigned i = 0;
	while (i < f->nr_irqfds && !(f->irqfd[i].fd == fd && f->irqfd[i].gsi == gsi))
		i++;
	if (!assign) {
		if (i == f->nr_irqfds)
			return -ENOENT;
		f->irqfd[i] = f->irqfd[--f->nr_irqfds];
		return 0;
	}
	FUZZ_CHECK(i == f->nr_irqfds, "irqfd %d for GSI %u registered twice", fd, gsi);
	if (++f->calls == f->fail_call)
		return -ENOSPC;
	FUZZ_CHECK(f->nr_irqfds < 8, "too many irqfds");
	f->irqfd[f->nr_irqfds].fd = fd;
	f->irqfd[f->nr_irqfds].gsi = gsi;
	f->nr_irqfds++;
	return 0;
}

void fuzz_machine_init(struct fuzz_machine *f, unsigned fail_call)
{
	memset(f, 0, sizeof(*f));
	f->fail_call = fail_call;
	f->m = (struct machine){ .opaque = f, .request_stop = fm_stop, .log = fm_log,
				 .set_irq = fm_set_irq, .ioeventfd = fm_ioeventfd, .irqfd = fm_irqfd };
}
