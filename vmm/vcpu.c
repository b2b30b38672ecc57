/* SPDX-License-Identifier: Apache-2.0 */
#include "vmm/vcpu.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "boot/cpu_x86.h"
#include "devices/ioapic.h"
#include "minivmm_abi.h"
#include "vmm/config.h"

static void vcpu_kick_handler(int sig)
{
	(void)sig;   /* its only job is to interrupt KVM_RUN */
}

int vcpu_install_kick_handler(int sig, struct vmm_err *err)
{
	char name[32];
	config_signal_name(sig, name, sizeof(name));
	struct sigaction old;
	if (sigaction(sig, NULL, &old) < 0)
		return vmm_err_sys(err, errno, "sigaction for the vCPU kick signal %s", name);
	bool plain = !(old.sa_flags & SA_SIGINFO);
	if (plain && old.sa_handler == vcpu_kick_handler)
		return 0;
	if (!plain || (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))
		return vmm_err_set(err, EBUSY,
				   "the vCPU kick signal %s already has a handler in this process: choose another kick_signal",
				   name);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vcpu_kick_handler;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the point is for the ioctl to return. */
	if (sigaction(sig, &sa, NULL) < 0)
		return vmm_err_sys(err, errno, "sigaction for the vCPU kick signal %s", name);
	return 0;
}

void vcpu_thread_signal_mask(sigset_t *set)
{
	sigfillset(set);
	static const int synchronous[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };
	for (size_t i = 0; i < sizeof(synchronous) / sizeof(synchronous[0]); i++)
		sigdelset(set, synchronous[i]);
}

int vcpu_create(struct vcpu *v, const struct vcpu_context *ctx, unsigned index, int pin_cpu,
		struct vmm_err *err)
{
	memset(v, 0, sizeof(*v));
	v->ctx = ctx;
	v->index = index;
	v->pin_cpu = pin_cpu;
	v->fd = ioctl(ctx->vm_fd, KVM_CREATE_VCPU, index);
	if (v->fd < 0) {
		v->fd = -1;
		return vmm_err_sys(err, errno, "KVM_CREATE_VCPU %u", index);
	}
	void *run = mmap(NULL, (size_t)ctx->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (run == MAP_FAILED)
		return vmm_err_sys(err, errno, "mmap of vCPU %u's kvm_run", index);
	v->run = run;

	int rc = cpu_x86_set_cpuid(v->fd, ctx->cpuid, ctx->tsc_deadline_timer, index, ctx->ncpus, err);
	if (rc == 0)
		rc = cpu_x86_set_msrs(v->fd, ctx->cpuid, ctx->msrs, err);
	if (rc == 0)
		rc = cpu_x86_set_fpu(v->fd, err);
	if (rc == 0)
		rc = cpu_x86_set_lapic(v->fd, err);
	return rc;
}

/* ---- crash reports ----------------------------------------------------- */

static void seg_line(char *buf, size_t size, size_t *pos, const char *name,
		    const struct kvm_segment *s)
{
	if (*pos < size)
		*pos += snprintf(buf + *pos, size - *pos,
				 "  %-3s sel=0x%04x base=0x%016llx limit=0x%08x type=%u dpl=%u l=%u db=%u p=%u\n",
				 name, s->selector, (unsigned long long)s->base, s->limit, s->type,
				 s->dpl, s->l, s->db, s->present);
}

/* "what happened" followed by the vCPU's registers, for the stop reason. */
static void vcpu_describe_crash(struct vcpu *v, const char *what, char *buf, size_t size)
{
	size_t pos = (size_t)snprintf(buf, size, "vCPU %u: %s\n", v->index, what);
	struct kvm_regs r;
	struct kvm_sregs s;
	if (ioctl(v->fd, KVM_GET_REGS, &r) < 0 || ioctl(v->fd, KVM_GET_SREGS, &s) < 0) {
		if (pos < size)
			snprintf(buf + pos, size - pos, "  (registers unavailable: %s)", strerror(errno));
		return;
	}
	if (pos < size)
		pos += snprintf(buf + pos, size - pos,
			"  rip=0x%016llx rsp=0x%016llx rflags=0x%08llx\n"
			"  rax=0x%016llx rbx=0x%016llx rcx=0x%016llx rdx=0x%016llx\n"
			"  rsi=0x%016llx rdi=0x%016llx rbp=0x%016llx\n"
			"  cr0=0x%08llx cr2=0x%016llx cr3=0x%016llx cr4=0x%08llx efer=0x%llx\n",
			(unsigned long long)r.rip, (unsigned long long)r.rsp, (unsigned long long)r.rflags,
			(unsigned long long)r.rax, (unsigned long long)r.rbx, (unsigned long long)r.rcx,
			(unsigned long long)r.rdx, (unsigned long long)r.rsi, (unsigned long long)r.rdi,
			(unsigned long long)r.rbp, (unsigned long long)s.cr0, (unsigned long long)s.cr2,
			(unsigned long long)s.cr3, (unsigned long long)s.cr4, (unsigned long long)s.efer);
	seg_line(buf, size, &pos, "cs", &s.cs);
	seg_line(buf, size, &pos, "ss", &s.ss);
	seg_line(buf, size, &pos, "tr", &s.tr);
	if (pos < size)
		pos += snprintf(buf + pos, size - pos, "  gdt=0x%llx/0x%x idt=0x%llx/0x%x",
				(unsigned long long)s.gdt.base, s.gdt.limit,
				(unsigned long long)s.idt.base, s.idt.limit);
	if (pos >= size && size > 0)
		buf[size - 1] = '\0';
}

static void vcpu_stop_vm(struct vcpu *v, int status, const char *reason)
{
	machine_stop(v->ctx->machine, status, reason);
}

static void vcpu_crash(struct vcpu *v, const char *what)
{
	char text[VCPU_CRASH_REPORT];
	vcpu_describe_crash(v, what, text, sizeof(text));
	vcpu_stop_vm(v, MINIVMM_EXIT_GUEST_CRASH, text);
}

/* ---- exits ---------------------------------------------------------------- */

static void vcpu_handle_io(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;
	/* String I/O (rep ins/outs) arrives as `count` consecutive items. */
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size)
		bus_access(v->ctx->pio, run->io.port, data, run->io.size, is_write);
}

static void vcpu_handle_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	unsigned len = run->mmio.len <= sizeof(run->mmio.data) ? run->mmio.len : sizeof(run->mmio.data);
	bus_access(v->ctx->mmio, run->mmio.phys_addr, run->mmio.data, len, run->mmio.is_write);
}

static void vcpu_handle_system_event(struct vcpu *v)
{
	switch (v->run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vcpu_stop_vm(v, MINIVMM_EXIT_OK, "guest powered off");
		break;
	case KVM_SYSTEM_EVENT_RESET:
		vcpu_stop_vm(v, MINIVMM_EXIT_OK, "guest reset");
		break;
	default:
		vcpu_crash(v, "guest crash (KVM_EXIT_SYSTEM_EVENT)");
		break;
	}
}

/* Returns false when the vCPU must stop running. */
static bool vcpu_handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	char what[160];
	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		vcpu_handle_io(v);
		return true;
	case KVM_EXIT_MMIO:
		vcpu_handle_mmio(v);
		return true;
	case KVM_EXIT_INTR:
		return true;
	case KVM_EXIT_IOAPIC_EOI:
		/* Split irqchip only: a level-triggered IOAPIC vector was EOI'd. */
		if (v->ctx->ioapic)
			ioapic_eoi(v->ctx->ioapic, run->eoi.vector);
		return true;
	case KVM_EXIT_SHUTDOWN:
		vcpu_crash(v, "guest triple fault (KVM_EXIT_SHUTDOWN)");
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		vcpu_handle_system_event(v);
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(what, sizeof(what), "KVM could not enter the guest (KVM_EXIT_FAIL_ENTRY, reason 0x%llx)",
			 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		vcpu_crash(v, what);
		return false;
	case KVM_EXIT_INTERNAL_ERROR:
		snprintf(what, sizeof(what), "KVM internal error (suberror %u)", run->internal.suberror);
		vcpu_crash(v, what);
		return false;
	case KVM_EXIT_HLT:
		/* Only without an in-kernel LAPIC, which we always have. */
		vcpu_crash(v, "guest halted with no way to wake up (KVM_EXIT_HLT)");
		return false;
	default:
		snprintf(what, sizeof(what), "unexpected exit reason %u", run->exit_reason);
		vcpu_crash(v, what);
		return false;
	}
}

/* Paused: out of KVM_RUN until resumed or stopped. What KVM queued of the
 * console goes out first, so the output stands complete while paused. */
static void vcpu_park(struct vcpu *v)
{
	struct vcpu_pause *p = v->ctx->pause;
	coalesced_ring_drain(v->ctx->coalesced);
	pthread_mutex_lock(&p->lock);
	p->parked++;
	pthread_cond_broadcast(&p->cond);
	while (__atomic_load_n(&p->paused, __ATOMIC_ACQUIRE) && !__atomic_load_n(v->ctx->stopping, __ATOMIC_ACQUIRE))
		pthread_cond_wait(&p->cond, &p->lock);
	p->parked--;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	/* The kick that brought it here may have set immediate_exit after
	 * KVM_RUN returned: clear it, or the next run returns at once. */
	__atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_RELEASE);
}

static void *vcpu_thread_main(void *arg)
{
	struct vcpu *v = arg;
	char name[16];
	snprintf(name, sizeof(name), "vcpu%u", v->index);
	pthread_setname_np(pthread_self(), name);

	/* Started with everything blocked (vcpu_start); only the kick gets
	 * through. SIGPIPE stays blocked: a console write to a closed pipe
	 * returns EPIPE to the serial device instead of killing the process. */
	sigset_t kick;
	sigemptyset(&kick);
	sigaddset(&kick, v->ctx->kick_signal);
	pthread_sigmask(SIG_UNBLOCK, &kick, NULL);

	/* Before the guest runs: from here on the guest drives this thread. */
	struct vmm_err err = { 0 };
	if (confine_enter(v->ctx->confine, CONFINE_VCPU, &err) < 0) {
		char what[sizeof(err.msg) + 32];
		snprintf(what, sizeof(what), "vCPU %u: %s", v->index, err.msg);
		vcpu_stop_vm(v, MINIVMM_EXIT_HOST_ERROR, what);
		return NULL;
	}

	while (!__atomic_load_n(v->ctx->stopping, __ATOMIC_ACQUIRE)) {
		if (v->ctx->pause && __atomic_load_n(&v->ctx->pause->paused, __ATOMIC_ACQUIRE)) {
			vcpu_park(v);
			continue;
		}
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			char what[128];
			snprintf(what, sizeof(what), "KVM_RUN failed: %s", strerror(errno));
			vcpu_stop_vm(v, MINIVMM_EXIT_HOST_ERROR, what);
			break;
		}
		/* Writes KVM queued (on any vCPU) come before this exit. */
		coalesced_ring_drain(v->ctx->coalesced);
		if (!vcpu_handle_exit(v))
			break;
	}
	return NULL;
}

int vcpu_start(struct vcpu *v, struct vmm_err *err)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	if (v->pin_cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(v->pin_cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	}
	/* The thread inherits the mask it is created with. */
	sigset_t all, old;
	vcpu_thread_signal_mask(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&v->thread, &attr, vcpu_thread_main, v);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		return vmm_err_sys(err, rc, "cannot start the thread of vCPU %u", v->index);
	v->thread_started = true;
	return 0;
}

void vcpu_kick(struct vcpu *v)
{
	if (!v->thread_started)
		return;
	/* immediate_exit covers the window before the thread enters KVM_RUN;
	 * the signal covers a thread already inside it. */
	__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_RELEASE);
	pthread_kill(v->thread, v->ctx->kick_signal);
}

void vcpu_join(struct vcpu *v)
{
	if (v->thread_started) {
		pthread_join(v->thread, NULL);
		v->thread_started = false;
	}
}

void vcpu_destroy(struct vcpu *v)
{
	if (v->run)
		munmap(v->run, (size_t)v->ctx->run_size);
	if (v->fd >= 0)
		close(v->fd);
	v->run = NULL;
	v->fd = -1;
}
