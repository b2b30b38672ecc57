/* SPDX-License-Identifier: Apache-2.0 */
/* rawnet: the AF_XDP ceilings. A plain AF_XDP socket in copy mode on one
 * interface queue with its own UMEM: what minivmm's xdp backend (whose UMEM is
 * guest RAM) is measured against. libxdp sets up the rings; for xdp-rx it
 * also loads its default program, which redirects the queue to the socket. */
#include "rawnet.h"

#include <errno.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>

#define XF_FRAME_SIZE 2048u
#define XF_FRAMES     4096u
#define XF_RING       2048u

struct xdp_ctx {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	uint8_t *area;
	uint64_t free_addr[XF_FRAMES];   /* xdp-tx: UMEM frames not in flight */
	unsigned nfree;
};

/* The libraries' warnings only: their info lines ("skipping unrecognized
 * data section", "falling back to a single program") are not ours to show,
 * and a failure is reported by the caller with its errno. */
static int libbpf_warnings(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static int libxdp_quiet(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static void xdp_close(struct xdp_ctx *x)
{
	if (x->xsk)
		xsk_socket__delete(x->xsk);   /* detaches libxdp's program with the last socket */
	if (x->umem)
		xsk_umem__delete(x->umem);
	if (x->area)
		munmap(x->area, (size_t)XF_FRAMES * XF_FRAME_SIZE);
}

static int xdp_open(const struct rn_opts *o, struct xdp_ctx *x, bool rx)
{
	size_t size = (size_t)XF_FRAMES * XF_FRAME_SIZE;
	libbpf_set_print(libbpf_warnings);
	libxdp_set_print(libxdp_quiet);
	x->area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->area == MAP_FAILED) {
		x->area = NULL;
		rn_fail(o, errno, "UMEM area");
		return -errno;
	}
	struct xsk_umem_config ucfg = { .fill_size = XF_FRAMES, .comp_size = XF_RING,
					.frame_size = XF_FRAME_SIZE, .frame_headroom = 0 };
	int rc = xsk_umem__create(&x->umem, x->area, size, &x->fill, &x->comp, &ucfg);
	if (rc) {
		x->umem = NULL;
		rn_fail(o, -rc, "xsk_umem__create");
		return rc;
	}
	struct xsk_socket_config scfg = {
		.rx_size = XF_RING, .tx_size = XF_RING,
		/* a transmit-only socket needs no program on the interface */
		.libxdp_flags = rx ? 0 : XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.xdp_flags = o->skb_mode ? XDP_FLAGS_SKB_MODE : 0,
		.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP,
	};
	rc = xsk_socket__create(&x->xsk, o->dev, o->queue, x->umem, rx ? &x->rx : NULL,
				rx ? NULL : &x->tx, &scfg);
	if (rc) {
		x->xsk = NULL;
		rn_fail(o, -rc, "AF_XDP socket on %s queue %u (copy mode%s)", o->dev, o->queue,
			o->skb_mode ? ", generic XDP" : "");
		return rc;
	}
	return 0;
}

static void xdp_drops(struct xdp_ctx *x, struct rn_result *r)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);
	if (getsockopt(xsk_socket__fd(x->xsk), SOL_XDP, XDP_STATISTICS, &st, &len) == 0)
		r->drops += st.rx_dropped + st.rx_ring_full + st.rx_fill_ring_empty_descs;
}

/* ---- transmit ------------------------------------------------------------------ */

static void xdp_reap(struct xdp_ctx *x, struct rn_result *r)
{
	uint32_t idx;
	unsigned n = xsk_ring_cons__peek(&x->comp, XF_RING, &idx);
	for (unsigned i = 0; i < n; i++)
		x->free_addr[x->nfree++] = *xsk_ring_cons__comp_addr(&x->comp, idx + i);
	xsk_ring_cons__release(&x->comp, n);
	r->frames += n;                 /* a frame counts once the kernel is done with it */
}

int rn_xdp_tx(const struct rn_opts *o, struct rn_result *r)
{
	struct rn_opts f;
	struct xdp_ctx *x = calloc(1, sizeof(*x));
	int rc = x ? rn_frame_opts(o, &f) : -ENOMEM;
	if (!rc)
		rc = xdp_open(o, x, false);
	if (rc) {
		if (x)
			xdp_close(x);
		free(x);
		return rc;
	}
	for (unsigned i = 0; i < XF_FRAMES; i++)
		x->free_addr[x->nfree++] = (uint64_t)i * XF_FRAME_SIZE;
	uint64_t built = 0;
	int fd = xsk_socket__fd(x->xsk);
	r->t_start_ns = rn_now_ns();
	while (!rn_should_stop(o, r)) {
		unsigned n = rn_burst(o, r);
		if (n > x->nfree)
			n = x->nfree;
		uint32_t idx;
		if (n && (n = xsk_ring_prod__reserve(&x->tx, n, &idx))) {
			for (unsigned i = 0; i < n; i++) {
				uint64_t addr = x->free_addr[--x->nfree];
				struct xdp_desc *d = xsk_ring_prod__tx_desc(&x->tx, idx + i);
				d->addr = addr;
				d->len = (uint32_t)rn_frame_build(&f, x->area + addr, built++);
				r->bytes += d->len;
			}
			xsk_ring_prod__submit(&x->tx, n);
		} else {
			r->errors++;            /* ring or UMEM full: wait for completions */
		}
		/* copy mode sends only when told, a bounded batch per call */
		if (xsk_ring_prod__needs_wakeup(&x->tx) &&
		    sendto(fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
		    errno != EBUSY && errno != ENOBUFS && errno != ENETDOWN) {
			rc = -errno;
			rn_fail(o, errno, "sendto (AF_XDP kick)");
			break;
		}
		xdp_reap(x, r);
		rn_pace(o, r);
	}
	r->t_end_ns = rn_now_ns();
	xdp_close(x);
	free(x);
	return rc;
}

/* ---- receive -------------------------------------------------------------------- */

/* Give frames back to the kernel. The kernel publishes how far it has read
 * the fill ring lazily (in batches), so there may be less room than frames it
 * has taken: what does not fit waits in free_addr for the next round. */
static void xdp_refill(struct xdp_ctx *x)
{
	uint32_t idx;
	unsigned n = x->nfree ? xsk_ring_prod__reserve(&x->fill, x->nfree, &idx) : 0;
	if (!n)
		n = x->nfree ? xsk_ring_prod__reserve(&x->fill, 1, &idx) : 0;
	for (unsigned i = 0; i < n; i++)
		*xsk_ring_prod__fill_addr(&x->fill, idx + i) = x->free_addr[--x->nfree];
	if (n)
		xsk_ring_prod__submit(&x->fill, n);
}

int rn_xdp_rx(const struct rn_opts *o, struct rn_result *r)
{
	struct xdp_ctx *x = calloc(1, sizeof(*x));
	int rc = x ? xdp_open(o, x, true) : -ENOMEM;
	if (rc) {
		if (x)
			xdp_close(x);
		free(x);
		return rc;
	}
	for (unsigned i = 0; i < XF_FRAMES; i++)
		x->free_addr[x->nfree++] = (uint64_t)i * XF_FRAME_SIZE;
	xdp_refill(x);
	int fd = xsk_socket__fd(x->xsk);
	rn_ready(o);
	r->t_start_ns = rn_now_ns();
	for (;;) {
		uint32_t idx;
		unsigned n = xsk_ring_cons__peek(&x->rx, 64, &idx);
		if (!n) {
			xdp_refill(x);
			if (xsk_ring_prod__needs_wakeup(&x->fill))
				recvfrom(fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
			if (!rn_reader_wait(o, r, fd))
				break;
			continue;
		}
		for (unsigned i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&x->rx, idx + i);
			/* the chunk, without the headroom offset the kernel added */
			x->free_addr[x->nfree++] = d->addr & ~(uint64_t)(XF_FRAME_SIZE - 1);
			rn_reader_count(r, xsk_umem__get_data(x->area, d->addr), d->len);
		}
		xsk_ring_cons__release(&x->rx, n);
		xdp_refill(x);
		if (rn_reader_done(o, r))
			break;
	}
	r->t_end_ns = rn_now_ns();
	xdp_drops(x, r);
	xdp_close(x);
	free(x);
	return rc;
}
