/* SPDX-License-Identifier: Apache-2.0 */
/* AF_XDP sockets: rings, UMEM registration, binding, closing. Plain system
 * calls on <linux/if_xdp.h>: libxdp's socket helpers tie the UMEM to the
 * first socket's descriptor and never close that one until the UMEM goes,
 * which would leave a queue's fill ring (holding guest buffers) with the
 * kernel after its worker stopped. */
#include "net/xdp.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int xsk_map_ring(int fd, const struct xdp_ring_offset *o, uint64_t pgoff, size_t entry,
			uint32_t n, struct xdp_ring *r)
{
	size_t len = o->desc + n * entry;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, (off_t)pgoff);
	if (m == MAP_FAILED)
		return -errno;
	*r = (struct xdp_ring){
		.producer = (uint32_t *)((uint8_t *)m + o->producer),
		.consumer = (uint32_t *)((uint8_t *)m + o->consumer),
		.flags = (uint32_t *)((uint8_t *)m + o->flags),
		.desc = (uint8_t *)m + o->desc,
		.size = n, .mask = n - 1, .map = m, .map_len = len,
	};
	return 0;
}

static void xsk_unmap_ring(struct xdp_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	memset(r, 0, sizeof(*r));
}

static int xsk_set_ring(int fd, int opt, uint32_t n)
{
	int v = (int)n;
	return n && setsockopt(fd, SOL_XDP, opt, &v, sizeof(v)) < 0 ? -errno : 0;
}

static int xsk_register_umem(int fd, const struct xsk_umem_spec *u, struct vmm_err *err)
{
	/* Zeroed: the kernel reads the struct at its own size and wants the
	 * fields it has and we do not (tx_metadata_len) zero. */
	struct xdp_umem_reg mr;
	memset(&mr, 0, sizeof(mr));
	mr.addr = (uint64_t)(uintptr_t)u->area;
	mr.len = u->len;
	mr.chunk_size = u->chunk_size;
	mr.headroom = u->headroom;
	mr.flags = XDP_UMEM_UNALIGNED_CHUNK_FLAG;
	if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)) == 0)
		return 0;
	int e = errno;
	unsigned long long mib = (unsigned long long)(u->len >> 20);
	if (e == ENOBUFS)
		return vmm_err_set(err, e, "xdp backend: pinning %llu MiB of guest RAM as the UMEM is over RLIMIT_MEMLOCK (raise ulimit -l, or give CAP_IPC_LOCK)", mib);
	if (e == EINVAL)
		return vmm_err_set(err, e, "xdp backend: the kernel refused a %llu MiB UMEM with unaligned %u-byte chunks (needs Linux 5.4 or later)", mib, u->chunk_size);
	if (e == ENOMEM || e == EFAULT)
		return vmm_err_sys(err, e, "xdp backend: pinning %llu MiB of guest RAM as the UMEM", mib);
	return vmm_err_sys(err, e, "xdp backend: registering the UMEM");
}

int xsk_create(struct xsk *s, const struct xsk_umem_spec *umem, const struct xsk_sizes *sz,
	       struct vmm_err *err)
{
	memset(s, 0, sizeof(*s));
	s->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		int e = errno;
		if (e == EPERM || e == EACCES)
			return vmm_err_set(err, e, "xdp backend: AF_XDP sockets need CAP_NET_RAW");
		if (e == EAFNOSUPPORT)
			return vmm_err_set(err, e, "xdp backend: this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)");
		return vmm_err_sys(err, e, "xdp backend: AF_XDP socket");
	}
	int rc = umem ? xsk_register_umem(s->fd, umem, err) : 0;
	if (rc == 0 && ((rc = xsk_set_ring(s->fd, XDP_UMEM_FILL_RING, sz->fill)) ||
			(rc = xsk_set_ring(s->fd, XDP_UMEM_COMPLETION_RING, sz->comp)) ||
			(rc = xsk_set_ring(s->fd, XDP_RX_RING, sz->rx)) ||
			(rc = xsk_set_ring(s->fd, XDP_TX_RING, sz->tx))))
		rc = vmm_err_sys(err, -rc, "xdp backend: setting up the socket's rings");
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	if (rc == 0 && getsockopt(s->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen) < 0)
		rc = vmm_err_sys(err, errno, "xdp backend: XDP_MMAP_OFFSETS");
	int m = 0;
	if (rc == 0 && sz->fill)
		m = xsk_map_ring(s->fd, &off.fr, XDP_UMEM_PGOFF_FILL_RING, sizeof(uint64_t), sz->fill, &s->fill);
	if (rc == 0 && m == 0 && sz->comp)
		m = xsk_map_ring(s->fd, &off.cr, XDP_UMEM_PGOFF_COMPLETION_RING, sizeof(uint64_t), sz->comp, &s->comp);
	if (rc == 0 && m == 0 && sz->rx)
		m = xsk_map_ring(s->fd, &off.rx, XDP_PGOFF_RX_RING, sizeof(struct xdp_desc), sz->rx, &s->rx);
	if (rc == 0 && m == 0 && sz->tx)
		m = xsk_map_ring(s->fd, &off.tx, XDP_PGOFF_TX_RING, sizeof(struct xdp_desc), sz->tx, &s->tx);
	if (rc == 0 && m)
		rc = vmm_err_sys(err, -m, "xdp backend: mapping the socket's rings");
	if (rc)
		xsk_close(s);
	return rc;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
	}
}

int xsk_bind(struct xsk *s, unsigned ifindex, unsigned q, int shared_fd, uint16_t flags,
	     struct vmm_err *err)
{
	struct sockaddr_xdp sx = { .sxdp_family = AF_XDP, .sxdp_ifindex = ifindex, .sxdp_queue_id = q };
	if (shared_fd >= 0) {
		sx.sxdp_flags = XDP_SHARED_UMEM;
		sx.sxdp_shared_umem_fd = (uint32_t)shared_fd;
	} else {
		sx.sxdp_flags = flags;
	}
	/* A failed bind leaves the socket ready for another try. */
	for (unsigned waited = 0;; waited++) {
		if (bind(s->fd, (struct sockaddr *)&sx, sizeof(sx)) == 0)
			return 0;
		if (errno != EBUSY || waited >= XSK_BIND_WAIT_MS)
			break;
		sleep_ms(1);
	}
	int e = errno;
	switch (e) {
	case EBUSY:
		return vmm_err_set(err, e, "xdp backend: queue %u is taken by another AF_XDP socket", q);
	case ENODEV:
		return vmm_err_set(err, e, "xdp backend: the interface is gone");
	case EOPNOTSUPP:
		return vmm_err_set(err, e, "xdp backend: queue %u refused zero-copy: the driver has no AF_XDP zero-copy support (xdp-zero-copy=off)", q);
	case EINVAL:
		if (shared_fd >= 0)
			return vmm_err_set(err, e, "xdp backend: queue %u cannot share the UMEM with queue sockets already bound (needs Linux 5.10 or later)", q);
		if (flags & XDP_ZEROCOPY)
			return vmm_err_set(err, e, "xdp backend: queue %u refused zero-copy with %s", q,
					   "these chunk sizes (the interface's MTU needs larger frames)");
		return vmm_err_set(err, e, "xdp backend: binding to queue %u refused (does the interface have that queue?)", q);
	default:
		return vmm_err_sys(err, e, "xdp backend: binding to queue %u", q);
	}
}

void xsk_close(struct xsk *s)
{
	xsk_unmap_ring(&s->fill);
	xsk_unmap_ring(&s->comp);
	xsk_unmap_ring(&s->rx);
	xsk_unmap_ring(&s->tx);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

uint64_t xsk_drops(int fd, uint64_t *invalid)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);
	memset(&st, 0, sizeof(st));
	if (invalid)
		*invalid = 0;
	if (fd < 0 || getsockopt(fd, SOL_XDP, XDP_STATISTICS, &st, &len) < 0)
		return 0;
	if (invalid)
		*invalid = st.rx_invalid_descs + st.tx_invalid_descs;
	/* rx_ring_full arrived with Linux 5.9's longer struct; the short one
	 * counts it inside rx_dropped. */
	return st.rx_dropped + (len >= sizeof(st) ? st.rx_ring_full : 0);
}
