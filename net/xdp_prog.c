/* SPDX-License-Identifier: Apache-2.0 */
/* The XDP program: libxdp's default XSK program (xsk_def_xdp_prog.o,
 * embedded in libxdp), which sends a frame received on queue q to the
 * socket at index q of its XSKMAP and passes the rest to the host stack:
 *
 *	return bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_PASS);
 *
 * libxdp finds and opens it; libbpf loads it and attaches it to the
 * interface through a BPF link, so it goes away with the process however
 * the process ends (a program attached by netlink outlives a kill -9 and
 * would keep the next start from attaching). Not through libxdp's
 * multi-program dispatcher: that pins its programs in a bpffs, which hosts
 * often do not mount and `ip netns exec` hides, and it would let other
 * programs run before ours, and a program that adds metadata in front of a
 * frame (bpf_xdp_adjust_meta) would have the kernel copy that metadata in
 * front of the guest's buffer, outside it. So the interface must have no
 * XDP program, and gets only ours. */
#include "net/xdp.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <xdp/libxdp.h>

/* libbpf and libxdp print warnings to stderr through a process-wide
 * callback; a library must not, and one error line is what the user gets.
 * A silent one is put in around our calls and the caller's put back (an
 * embedding program's own libbpf use on another thread at the same moment
 * would lose its messages meanwhile). */
static int xdp_quiet_bpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static int xdp_quiet_xdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

struct xdp_quiet {
	libbpf_print_fn_t bpf;
	libxdp_print_fn_t xdp;
};

static struct xdp_quiet xdp_quiet_begin(void)
{
	return (struct xdp_quiet){ .bpf = libbpf_set_print(xdp_quiet_bpf),
				   .xdp = libxdp_set_print(xdp_quiet_xdp) };
}

static void xdp_quiet_end(struct xdp_quiet q)
{
	libbpf_set_print(q.bpf);
	libxdp_set_print(q.xdp);
}

static int xdp_prog_load(struct xdp_prog *p, unsigned map_entries, struct vmm_err *err)
{
	p->prog = xdp_program__find_file("xsk_def_xdp_prog.o", NULL, NULL);
	long e = libxdp_get_error(p->prog);
	if (e) {
		p->prog = NULL;
		return vmm_err_sys(err, (int)-e, "xdp backend: libxdp's default XSK program");
	}
	struct bpf_object *obj = xdp_program__bpf_obj(p->prog);
	struct bpf_map *map = obj ? bpf_object__find_map_by_name(obj, "xsks_map") : NULL;
	struct bpf_program *prog = obj ? bpf_object__find_program_by_name(obj, "xsk_def_prog") : NULL;
	if (!map || !prog)
		return vmm_err_set(err, ENOENT, "xdp backend: libxdp's XSK program has no xsks_map or xsk_def_prog");
	int rc = bpf_map__set_max_entries(map, map_entries);
	if (rc == 0)
		rc = bpf_object__load(obj);
	if (rc == -EPERM || rc == -EACCES)
		return vmm_err_set(err, -rc, "xdp backend: loading the XDP program needs CAP_BPF and CAP_NET_ADMIN (or CAP_SYS_ADMIN)");
	if (rc)
		return vmm_err_sys(err, -rc, "xdp backend: loading libxdp's XSK program");
	p->prog_fd = bpf_program__fd(prog);
	p->map_fd = bpf_map__fd(map);
	return 0;
}

/* Anything attached already, in any mode? */
static int xdp_prog_refuse_existing(unsigned ifindex, const char *ifname, struct vmm_err *err)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	if (bpf_xdp_query((int)ifindex, 0, &q) < 0 || q.attach_mode == XDP_ATTACHED_NONE)
		return 0;
	uint32_t id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	return vmm_err_set(err, EBUSY,
			   "xdp backend: interface '%s' already has an XDP program (id %u): minivmm attaches its own and needs the interface to itself (ip link set %s xdp off)",
			   ifname, id, ifname);
}

static int xdp_prog_try_attach(struct xdp_prog *p, unsigned ifindex, uint32_t mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, o, .flags = mode);
	int fd = bpf_link_create(p->prog_fd, (int)ifindex, BPF_XDP, &o);
	if (fd < 0)
		return fd;
	p->link_fd = fd;
	p->mode = mode;
	return 0;
}

/* A link to the loaded program on p->ifindex: native, else generic unless
 * native_only. */
static int xdp_prog_link(struct xdp_prog *p, const char *ifname, bool native_only, struct vmm_err *err)
{
	/* Native first: veth's native XDP also keeps each frame on the
	 * queue its peer sent it on (generic XDP on a veth reports
	 * queue t - 1 for the peer's TX queue t, measured). */
	int native = xdp_prog_try_attach(p, p->ifindex, XDP_FLAGS_DRV_MODE);
	int generic = native && !native_only ? xdp_prog_try_attach(p, p->ifindex, XDP_FLAGS_SKB_MODE) : native;
	if (!native || !generic)
		return 0;
	int e = native == -EPERM || generic == -EPERM ? EPERM : -generic;
	if (e == EPERM)
		return vmm_err_set(err, e, "xdp backend: attaching an XDP program to '%s' needs CAP_NET_ADMIN", ifname);
	if (e == EBUSY)
		return vmm_err_set(err, e,
				   "xdp backend: interface '%s' already has an XDP program: minivmm attaches its own and needs the interface to itself (ip link set %s xdp off)",
				   ifname, ifname);
	if (native_only)
		return vmm_err_sys(err, -native, "xdp backend: interface '%s' takes no native XDP program (zero-copy needs one)", ifname);
	return vmm_err_sys(err, e, "xdp backend: interface '%s' takes no XDP program (native: %s; generic)",
			   ifname, strerror(-native));
}

int xdp_prog_attach(struct xdp_prog *p, unsigned ifindex, const char *ifname, unsigned map_entries,
		    bool native_only, struct vmm_err *err)
{
	memset(p, 0, sizeof(*p));
	p->prog_fd = p->map_fd = p->link_fd = -1;
	p->ifindex = ifindex;
	struct xdp_quiet quiet = xdp_quiet_begin();
	int rc = xdp_prog_refuse_existing(ifindex, ifname, err);
	if (rc == 0)
		rc = xdp_prog_load(p, map_entries, err);
	if (rc == 0)
		rc = xdp_prog_link(p, ifname, native_only, err);
	xdp_quiet_end(quiet);
	if (rc)
		xdp_prog_detach(p);
	return rc;
}

int xdp_prog_relink(struct xdp_prog *p, unsigned ifindex, const char *ifname, bool native_only,
		    struct vmm_err *err)
{
	xdp_prog_unlink(p);
	if (p->prog_fd < 0)
		return vmm_err_set(err, EINVAL, "xdp backend: no XDP program loaded to attach to '%s'", ifname);
	p->ifindex = ifindex;
	return xdp_prog_link(p, ifname, native_only, err);
}

void xdp_prog_unlink(struct xdp_prog *p)
{
	if (p->link_fd >= 0)
		close(p->link_fd);   /* the last reference to the link: detached */
	p->link_fd = -1;
	p->mode = 0;
}

int xdp_prog_set_socket(const struct xdp_prog *p, unsigned q, int fd, struct vmm_err *err)
{
	uint32_t key = q;
	if (bpf_map_update_elem(p->map_fd, &key, &fd, BPF_ANY) == 0)
		return 0;
	return vmm_err_sys(err, errno, "xdp backend: putting queue %u's socket in the XSKMAP", q);
}

void xdp_prog_detach(struct xdp_prog *p)
{
	struct xdp_quiet quiet = xdp_quiet_begin();
	xdp_prog_unlink(p);
	if (p->prog)
		xdp_program__close(p->prog);   /* closes the program and its map */
	p->prog = NULL;
	p->prog_fd = p->map_fd = -1;
	xdp_quiet_end(quiet);
}
