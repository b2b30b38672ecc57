/* SPDX-License-Identifier: Apache-2.0 */
/* What the libFuzzer targets share: reading the input, guest memory over
 * malloc'd buffers, the driver side of a split virtqueue with the checks a
 * device must pass, the ring ops virtio-net hands to the data path (the same
 * thin wrappers as devices/virtio/net.c, plus bookkeeping), a fake machine,
 * and an fd-leak check.
 *
 * Every check aborts on violation (FUZZ_CHECK), so libFuzzer records the
 * input as a crash. Harness state may be global: a fuzzer is one process
 * running one input at a time. */
#ifndef MINIVMM_TESTS_FUZZ_COMMON_H
#define MINIVMM_TESTS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/guest_chain.h"
#include "base/guest_mem.h"
#include "base/machine.h"
#include "boot/boot.h"
#include "devices/virtio/queue.h"
#include "net/queue_pair.h"

/* libFuzzer's entry points. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* ---- checks -------------------------------------------------------------- */

__attribute__((noreturn, format(printf, 4, 5)))
void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...);

#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
	} while (0)

/* FUZZ_TRACE set in the environment: targets say what happens (to read a
 * failing input's story when reproducing it). */
bool fuzz_tracing(void);

/* Every byte of [p, p+len) is 0 (a loop kept out of the instrumented
 * targets). */
bool fuzz_is_zero(const void *p, size_t len);

/* Remember the lowest free fd at the start of a run, and check at its end
 * that the run left no fd open and closed none it did not own (the lowest
 * free fd is the same again). Per run: libFuzzer itself opens fds between
 * runs (pipes to the symbolizer). */
void fuzz_fd_baseline(void);
void fuzz_fd_check(const char *what);

/* ---- reading the input ------------------------------------------------------ */

/* Bytes are taken from the front; an exhausted input reads as zeros. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline struct fz fz_init(const uint8_t *data, size_t size)
{
	return (struct fz){ data, size };
}

static inline bool fz_empty(const struct fz *f) { return f->n == 0; }
uint8_t fz_u8(struct fz *f);
uint16_t fz_u16(struct fz *f);
uint32_t fz_u32(struct fz *f);
uint64_t fz_u64(struct fz *f);
/* Up to `want` bytes; *got says how many there were. */
const uint8_t *fz_take(struct fz *f, size_t want, size_t *got);

/* ---- guest memory ------------------------------------------------------------ */

/* One or two RAM regions, each its own malloc of exactly its size, so that
 * AddressSanitizer reports any byte touched past either end (and a buffer
 * "spanning" two regions that are adjacent in guest-physical space). */
struct fuzz_guest {
	struct guest_mem mem;
	uint8_t *buf[GUEST_MEM_MAX_REGIONS];
	size_t size[GUEST_MEM_MAX_REGIONS];
};

/* The guest of the ring targets: FUZZ_MEM0 bytes of RAM at 0 or 1 MiB and,
 * as an input byte decides, FUZZ_MEM1 more right after it (adjacent in
 * guest-physical space, apart on the host: a buffer crossing the boundary
 * must be refused) or at 4 GiB. */
#define FUZZ_MEM0 0x4000
#define FUZZ_MEM1 0x1000
void fuzz_guest_for_rings(struct fuzz_guest *g, struct fz *in);

/* size1 0: one region. */
void fuzz_guest_init(struct fuzz_guest *g, uint64_t gpa0, size_t size0, uint64_t gpa1, size_t size1);
void fuzz_guest_free(struct fuzz_guest *g);
/* [p, p+len) lies inside one region's host buffer. */
bool fuzz_guest_holds(const struct fuzz_guest *g, const void *p, size_t len);
/* Where a host pointer into guest memory is: region and byte offset. */
bool fuzz_guest_locate(const struct fuzz_guest *g, const void *p, unsigned *region, size_t *off);

/* A guest-physical address from 16 input bits: the top bit picks region 1
 * (when there is one), the rest is an offset that may run past the end. */
uint64_t fuzz_guest_addr(const struct fuzz_guest *g, uint16_t sel);

/* ---- a split virtqueue: driver side and device-side checks --------------- */

#define FUZZ_MAX_HELD 512   /* chains popped and not yet returned, per queue */

struct fuzz_held {
	uint16_t head;
	bool returned;           /* pushed, dropped at the end of the step */
	bool keep_marks;         /* its head was held twice: which one came back
				  * is unknowable, so its buffers stay writable */
	uint32_t writable_len;
	unsigned nr_w;
	struct iovec w[GUEST_CHAIN_MAX_SEGS];
};

struct fuzz_vq {
	struct virtq q;            /* first: net/ gets &v->q as its ring pointer */
	struct fuzz_guest *g;
	const char *name;
	uint16_t size;
	uint64_t desc, avail, used;
	bool event_idx, indirect;
	bool live;                 /* virtq_init accepted the layout */
	uint16_t avail_idx;        /* the driver's next avail index */
	enum virtq_error error;    /* the first error seen: it must stick */

	/* Chains the device holds: every push must return one of them, with
	 * no more bytes than it could write. */
	struct fuzz_held *held;
	unsigned nr_held;
	bool chains_writable;      /* RX: the device may write a held chain's
				    * writable buffers (TX: never) */
	/* Per byte of guest memory: how many held chains may write it; and
	 * what the guest memory holds as far as the driver knows (its own
	 * writes and the device writes checked so far). */
	uint16_t *may_write[GUEST_MEM_MAX_REGIONS];
	uint8_t *shadow[GUEST_MEM_MAX_REGIONS];
	unsigned pops, pushes;
	unsigned unpublished;      /* pushes since the last publish */
	/* A device that asks for kicks again and again within one step is
	 * spinning: a healthy one pops a chain after each "work arrived", so
	 * it asks at most size + 1 times. on_spin, when set, is called
	 * instead of failing (to fuzz past a known bug). */
	unsigned kick_enables;     /* this step */
	void (*on_spin)(struct fuzz_vq *v);
};

/* FUZZ_SKIP_KNOWN_HANGS=1 in the environment: targets skip inputs that hit
 * a known, not yet fixed hang instead of failing on them. */
bool fuzz_skip_known_hangs(void);

/* Lay out a queue from the input (size, features, ring addresses, start
 * index) and virtq_init it; v->live says whether init accepted it. `slot`
 * (0 or 1) picks the bookkeeping storage of this queue. */
void fuzz_vq_setup(struct fuzz_vq *v, struct fuzz_guest *g, struct fz *in, unsigned slot,
		   const char *name);
void fuzz_vq_free(struct fuzz_vq *v);

/* One driver action (the guest writing its side of the ring or any memory),
 * chosen by op; false if op is not a driver op. */
bool fuzz_vq_driver_op(struct fuzz_vq *v, uint8_t op, struct fz *in);
#define FUZZ_DRIVER_OPS 8   /* ops 0 .. FUZZ_DRIVER_OPS-1 are driver ops */

/* A chain as virtq_pop must return it: counts and lengths agree, no empty
 * segment, every byte in guest memory, head in range. */
void fuzz_check_chain(const struct fuzz_vq *v, const struct guest_chain *c);

/* Bookkeeping around the device's calls (the ring ops below do this). */
void fuzz_vq_popped(struct fuzz_vq *v, const struct guest_chain *c, int rc);
void fuzz_vq_pushed(struct fuzz_vq *v, uint16_t head, uint32_t len);
void fuzz_vq_published(struct fuzz_vq *v);

/* The driver writing guest memory (every driver op goes through this, so
 * the shadow copy knows about it). */
void fuzz_vq_guest_write(struct fuzz_vq *v, uint64_t gpa, const void *src, size_t len);

/* Check that every byte that differs from the shadow copy was the device's
 * to write: its used ring, or a writable buffer of a chain it holds. */
void fuzz_vq_check_writes(struct fuzz_vq *v);

/* After each device step: when chains were given back, check the writes
 * made while they were held and let them go. Call fuzz_vq_check_writes()
 * once more at the end of the run. */
void fuzz_vq_end_step(struct fuzz_vq *v);

/* The ring ops virtio-net gives the data path (net.c's vnet_ring_ops), over
 * a struct fuzz_vq, with the bookkeeping above. */
extern const struct net_ring_ops fuzz_ring_ops;

/* ---- the loaders' world ---------------------------------------------------- */

/* A boot request and guest RAM from the first FUZZ_BOOT_PREFIX bytes of
 * the input; the image is the rest (so seeds are real files behind a small
 * prefix). Prefix: flags (low RAM size, RAM above 4 GiB, initrd, command
 * line, boot_load or the loader itself), vCPUs, initrd size / 64, RSDP. */
#define FUZZ_BOOT_PREFIX 8

struct fuzz_boot {
	struct fuzz_guest g;         /* buffers kept across runs (see .c) */
	struct boot_request req;
	bool via_boot_load;          /* boot_load() rather than the loader */
	const uint8_t *initrd;
	const uint8_t *image;
	size_t image_size;
};

/* false when the input is too short for the prefix. */
bool fuzz_boot_setup(struct fuzz_boot *b, const uint8_t *data, size_t size);
void fuzz_boot_free(struct fuzz_boot *b);
/* After a successful load: the command line is in place, whole, and no
 * longer than max_len. */
void fuzz_boot_check_cmdline(const struct fuzz_boot *b, size_t max_len);
/* [gpa, gpa+len) of guest RAM holds exactly these bytes. */
void fuzz_boot_check_bytes(const struct fuzz_boot *b, uint64_t gpa, const uint8_t *bytes,
			   size_t len, const char *what);

/* ---- a fake machine ------------------------------------------------------------ */

/* Records what KVM would hold: an ioeventfd or irqfd registered twice, or
 * still registered when the device is gone, fails a check; removing one
 * that is not registered gets -ENOENT, as from KVM. */
#define FUZZ_MACHINE_MAX_FDS 160
struct fuzz_machine {
	struct machine m;
	struct { uint64_t addr, datamatch; int fd; } ioeventfd[FUZZ_MACHINE_MAX_FDS];
	unsigned nr_ioeventfds;
	struct { int fd; unsigned gsi; } irqfd[8];
	unsigned nr_irqfds;
	unsigned calls;            /* registrations asked for so far */
	unsigned fail_call;        /* this one (1-based) fails; 0 none */
	unsigned stops, logs, irq_sets;
};

void fuzz_machine_init(struct fuzz_machine *f, unsigned fail_call);

#endif
