/* SPDX-License-Identifier: Apache-2.0 */
/* LD_PRELOAD shim for the integration tests: one line for every
 * KVM_IOEVENTFD and KVM_IRQFD minivmm makes ("ioeventfd assign",
 * "ioeventfd deassign", "irqfd assign", "irqfd deassign"), appended to the
 * file MINIVMM_TEST_KVM_LOG names. The file is opened at the first of them
 * (minivmm makes it while building the VM, before any seccomp filter, and
 * after closing the descriptors it inherited); each line is one write(2).
 * A test tool, not part of minivmm: it keeps its log fd in a static. */
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*ioctl_fn)(int, unsigned long, ...);

static int log_fd = -1;
static ioctl_fn real_ioctl;

__attribute__((constructor)) static void kvm_fd_log_init(void)
{
	real_ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
}

static void say(const char *line)
{
	const char *path = getenv("MINIVMM_TEST_KVM_LOG");
	if (log_fd < 0 && path)
		log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd >= 0 && write(log_fd, line, strlen(line)) < 0) {
		/* Nothing to do: the test sees a line missing. */
	}
}

int ioctl(int fd, unsigned long request, ...);
int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (arg && request == KVM_IOEVENTFD) {
		const struct kvm_ioeventfd *io = arg;
		say(io->flags & KVM_IOEVENTFD_FLAG_DEASSIGN ? "ioeventfd deassign\n" : "ioeventfd assign\n");
	} else if (arg && request == KVM_IRQFD) {
		const struct kvm_irqfd *irq = arg;
		say(irq->flags & KVM_IRQFD_FLAG_DEASSIGN ? "irqfd deassign\n" : "irqfd assign\n");
	}
	return real_ioctl(fd, request, arg);
}
