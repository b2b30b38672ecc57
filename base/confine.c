/* SPDX-License-Identifier: Apache-2.0 */
#include "base/confine.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const role_names[CONFINE_ROLES] = {
	[CONFINE_MAIN] = "main",
	[CONFINE_SIGNALS] = "signals",
	[CONFINE_VCPU] = "vcpu",
	[CONFINE_SERIAL] = "serial",
	[CONFINE_SPAWNER] = "spawner",
	[CONFINE_NET_WORKER] = "net-worker",
	[CONFINE_NET_CTRL] = "net-ctrl",
	[CONFINE_NET_LINK] = "net-link",
	[CONFINE_NET_HELPER] = "net-helper",
	[CONFINE_API] = "api",
};

const char *confine_role_name(enum confine_role role)
{
	return (unsigned)role < CONFINE_ROLES ? role_names[role] : "?";
}

/* glibc has no capget/capset wrappers; the raw calls work per thread. */
static int caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	return (int)syscall(SYS_capget, &hdr, data);
}

static int caps_set(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	return (int)syscall(SYS_capset, &hdr, data);
}

/* Keep only `keep`. The bounding set first, while CAP_SETPCAP may still be
 * ours (a thread started by one that already dropped it inherits a bounding
 * set that is already small enough); then ambient; then permitted,
 * effective and inheritable, which is what the kernel checks. */
static int confine_caps(enum confine_role role, uint64_t keep, struct vmm_err *err)
{
	struct __user_cap_data_struct data[2];
	if (caps_get(data) < 0)
		return vmm_err_sys(err, errno, "%s thread: capget", confine_role_name(role));
	uint64_t permitted = data[0].permitted | (uint64_t)data[1].permitted << 32;
	uint64_t effective = data[0].effective | (uint64_t)data[1].effective << 32;
	if (effective & (1ull << CAP_SETPCAP)) {
		/* Capabilities are numbered without gaps up to the kernel's
		 * last one; past it PR_CAPBSET_DROP says EINVAL. */
		for (unsigned cap = 0; cap < 64; cap++) {
			if (keep & (1ull << cap))
				continue;
			if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
				if (errno == EINVAL)
					break;
				return vmm_err_sys(err, errno, "%s thread: dropping capability %u from the bounding set",
						   confine_role_name(role), cap);
			}
		}
	}
	/* EINVAL: a kernel without ambient capabilities (before 4.3) has none to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return vmm_err_sys(err, errno, "%s thread: clearing ambient capabilities", confine_role_name(role));
	permitted &= keep;
	for (int i = 0; i < 2; i++) {
		data[i].permitted = (uint32_t)(permitted >> (32 * i));
		data[i].effective = data[i].permitted;
		data[i].inheritable = 0;
	}
	if (caps_set(data) < 0)
		return vmm_err_sys(err, errno, "%s thread: capset", confine_role_name(role));
	return 0;
}

static int confine_filter(const struct confine *c, enum confine_role role, struct vmm_err *err)
{
	const struct sock_fprog *prog = &c->prog[role];
	if (prog->len == 0 || !prog->filter)
		return vmm_err_set(err, EINVAL, "%s thread: no seccomp filter was built for it",
				   confine_role_name(role));
	/* Required for a filter without CAP_SYS_ADMIN, and what makes the
	 * filter stick: nothing can gain privileges through execve. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return vmm_err_sys(err, errno, "%s thread: PR_SET_NO_NEW_PRIVS", confine_role_name(role));
	/* No SECCOMP_FILTER_FLAG_TSYNC: the filter is this thread's alone. */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
		return vmm_err_sys(err, errno, "%s thread: installing its seccomp filter", confine_role_name(role));
	return 0;
}

int confine_enter(const struct confine *c, enum confine_role role, struct vmm_err *err)
{
	if (!c)
		return 0;
	if ((unsigned)role >= CONFINE_ROLES)
		return vmm_err_set(err, EINVAL, "no such kind of thread (%d)", (int)role);
	if (c->drop_caps) {
		int rc = confine_caps(role, c->keep_caps[role], err);
		if (rc)
			return rc;
	}
	return c->filters ? confine_filter(c, role, err) : 0;
}
