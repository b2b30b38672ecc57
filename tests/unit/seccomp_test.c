/* SPDX-License-Identifier: Apache-2.0 */
/* The allow-lists (vmm/seccomp.c), the capability plan (vmm/caps.c) and
 * confine_enter() (base/confine.c). A filter cannot be taken off again, so
 * every test that installs one does it in a forked child, whose fate (exit
 * status, or the signal that killed it) the parent checks; the child leaves
 * with the raw exit system call, which every list allows. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/if_tun.h>
#include <linux/io_uring.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/confine.h"
#include "base/spawn.h"
#include "net/host_link.h"
#include "net/tap.h"
#include "vmm/caps.h"
#include "vmm/seccomp.h"

static struct confine_needs tap_uring(void)
{
	return (struct confine_needs){ .net = true, .tap = true, .uring = true,
				       .kick_signal = SIGRTMIN + 1, .pid = getpid() };
}

static struct confine built(const struct confine_needs *n, enum minivmm_seccomp mode)
{
	struct confine c = { .filters = true };
	struct vmm_err err = { 0 };
	cr_assert_eq(seccomp_lists_build(&c, n, mode, SECCOMP_ALL_ROLES, &err), 0, "%s", err.msg);
	return c;
}

/* Not _Noreturn: ASan would then call its no-return hook first, which
 * makes a system call of its own. */
static void child_exit(int code)
{
	syscall(SYS_exit, code);
}

/* Fork; the child confines itself as `role` (unless role < 0) and runs fn,
 * then exits 0. Returns the child's wait status. */
static int in_child(const struct confine *c, int role, void (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct vmm_err err = { 0 };
		if (role >= 0 && confine_enter(c, (enum confine_role)role, &err) < 0)
			child_exit(100);
		fn();
		child_exit(0);
	}
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return status;
}

#define KILLED_BY_SIGSYS(st) (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
#define EXITED_WITH(st, code) (WIFEXITED(st) && WEXITSTATUS(st) == (code))

static const char *status_text(int st)
{
	static char buf[64];
	if (WIFSIGNALED(st))
		snprintf(buf, sizeof(buf), "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		snprintf(buf, sizeof(buf), "exited %d", WEXITSTATUS(st));
	return buf;
}

/* ---- the lists ----------------------------------------------------------- */

static struct confine_needs needs_of(unsigned bits)
{
	return (struct confine_needs){
		.net = bits != 0, .tap = bits & 1, .packet = bits & 2, .packet_mq = (bits & 6) == 6,
		.uring = bits & 8, .epoll = bits & 16, .drop_caps = bits & 32,
		.kick_signal = SIGRTMIN + 1, .pid = getpid(),
	};
}

Test(seccomp, every_list_builds_in_every_configuration_and_mode)
{
	for (unsigned bits = 0; bits < 64; bits++) {
		struct confine_needs n = needs_of(bits);
		for (int mode = 0; mode < 2; mode++) {
			struct confine c = built(&n, mode ? MINIVMM_SECCOMP_LOG : MINIVMM_SECCOMP_ON);
			for (unsigned r = 0; r < CONFINE_ROLES; r++) {
				cr_assert_gt(c.prog[r].len, 10u, "%s list (needs %#x)", confine_role_name(r), bits);
				cr_assert_leq(c.prog[r].len, 4096u);
				cr_assert_gt(seccomp_lists_count(r, &n, NULL, 0), 15u);
			}
			seccomp_lists_free(&c);
			cr_assert_null(c.prog[CONFINE_VCPU].filter);
		}
	}
}

static bool has(enum confine_role role, const struct confine_needs *n, int nr)
{
	int nrs[128];
	unsigned count = seccomp_lists_count(role, n, nrs, 128);
	cr_assert_leq(count, 128u);
	for (unsigned i = 0; i < count; i++)
		if (nrs[i] == nr)
			return true;
	return false;
}

/* Filters only stack: a thread the spawner starts can make a call only if
 * the spawner's list has it too. */
Test(seccomp, the_spawner_allows_every_call_of_the_threads_it_starts)
{
	for (unsigned bits = 0; bits < 64; bits++) {
		struct confine_needs n = needs_of(bits);
		int nrs[128];
		for (int role = CONFINE_NET_WORKER; role <= CONFINE_NET_CTRL; role++) {
			unsigned count = seccomp_lists_count(role, &n, nrs, 128);
			for (unsigned i = 0; i < count; i++)
				cr_assert(has(CONFINE_SPAWNER, &n, nrs[i]), "%s makes syscall %d, the spawner lacks it (needs %#x)",
					  confine_role_name(role), nrs[i], bits);
		}
	}
}

/* What the threads facing the guest must never be able to do, in any
 * configuration: start threads or processes, make or set up rings, make
 * sockets, open files, run programs. (A worker's io_uring_register is on
 * its list for unregistering only: arguments_are_checked_not_only_the_call.) */
Test(seccomp, guest_facing_threads_cannot_spawn_open_or_exec)
{
	const int never[] = { SYS_clone, SYS_clone3, SYS_fork, SYS_vfork, SYS_execve, SYS_execveat,
			      SYS_io_uring_setup, SYS_io_uring_register, SYS_socket, SYS_open,
			      SYS_openat, SYS_connect, SYS_ptrace, SYS_process_vm_writev, SYS_bpf,
			      SYS_seccomp, SYS_prctl, SYS_capset, SYS_mount, SYS_kill };
	const enum confine_role facing[] = { CONFINE_VCPU, CONFINE_NET_WORKER, CONFINE_SERIAL };
	for (unsigned bits = 0; bits < 64; bits++) {
		struct confine_needs n = needs_of(bits);
		for (unsigned r = 0; r < sizeof(facing) / sizeof(facing[0]); r++)
			for (unsigned i = 0; i < sizeof(never) / sizeof(never[0]); i++)
				cr_assert(!has(facing[r], &n, never[i]) ||
						  (facing[r] == CONFINE_NET_WORKER && never[i] == SYS_io_uring_register),
					  "%s may make syscall %d (needs %#x)", confine_role_name(facing[r]), never[i], bits);
	}
	struct confine_needs n = needs_of(63);
	cr_assert(!has(CONFINE_NET_CTRL, &n, SYS_openat), "the control thread opens no files");
	cr_assert(!has(CONFINE_NET_CTRL, &n, SYS_clone), "nor starts threads itself");
	cr_assert(!has(CONFINE_MAIN, &n, SYS_socket), "main opens no sockets");
	cr_assert(!has(CONFINE_NET_LINK, &n, SYS_clone), "the link thread starts workers through the spawner");
}

/* Every configuration, tap, packet and xdp (one queue or several, copy or
 * zero copy, either engine): only the helper makes, binds or steers a
 * socket, attaches to a tap or touches a BPF object; the threads a guest
 * drives (vCPU, worker, control), the link thread a network event wakes
 * and the spawner that starts them make none of those calls and keep no
 * capability. (On 82a73b8 the vCPU and control thread of an xdp device
 * with several queues kept CAP_NET_ADMIN and could make AF_XDP sockets.) */
Test(seccomp, only_the_helper_makes_sockets_or_keeps_capabilities)
{
	const int privileged[] = { SYS_socket, SYS_bind, SYS_bpf, SYS_setsockopt, SYS_access,
				   SYS_getdents64, SYS_connect, SYS_io_uring_setup };
	const enum confine_role others[] = { CONFINE_VCPU, CONFINE_NET_WORKER, CONFINE_NET_CTRL,
					     CONFINE_NET_LINK, CONFINE_SPAWNER, CONFINE_SERIAL, CONFINE_SIGNALS };
	for (unsigned bits = 0; bits < 64 * 8; bits++) {
		struct confine_needs n = needs_of(bits & 63);
		n.xdp = bits & 64;
		n.xdp_mq = n.xdp && (bits & 128);
		n.xdp_zero_copy = n.xdp && (bits & 256);
		n.net |= n.xdp;
		n.packet_recv = n.packet && (bits & 128);
		n.drop_caps = true;
		struct confine c = { 0 };
		caps_plan(&c, &n);
		for (unsigned r = 0; r < sizeof(others) / sizeof(others[0]); r++) {
			cr_assert_eq(c.keep_caps[others[r]], 0u, "%s keeps %#llx (needs %#x)",
				     confine_role_name(others[r]), (unsigned long long)c.keep_caps[others[r]], bits);
			for (unsigned i = 0; i < sizeof(privileged) / sizeof(privileged[0]); i++)
				cr_assert(!has(others[r], &n, privileged[i]), "%s may make syscall %d (needs %#x)",
					  confine_role_name(others[r]), privileged[i], bits);
		}
		bool backend = n.tap || n.packet || n.xdp;
		cr_assert_eq(c.keep_caps[CONFINE_NET_HELPER] != 0, backend, "needs %#x", bits);
		cr_assert_eq(has(CONFINE_NET_HELPER, &n, SYS_socket), n.packet || n.xdp, "needs %#x", bits);
		cr_assert_eq(has(CONFINE_NET_HELPER, &n, SYS_bpf), n.xdp, "needs %#x", bits);
		cr_assert_eq(has(CONFINE_NET_HELPER, &n, SYS_io_uring_setup), n.uring, "rings for the workers (needs %#x)", bits);
		cr_assert(!has(CONFINE_NET_HELPER, &n, SYS_clone) && !has(CONFINE_NET_HELPER, &n, SYS_execve), "needs %#x", bits);
	}
}

Test(seccomp, lists_follow_the_configuration)
{
	struct confine_needs tap = tap_uring(), pkt = needs_of(2 | 4 | 16);
	cr_assert(has(CONFINE_NET_WORKER, &tap, SYS_io_uring_enter));
	cr_assert(!has(CONFINE_NET_WORKER, &tap, SYS_epoll_wait), "epoll only with engine=epoll");
	cr_assert(has(CONFINE_NET_WORKER, &pkt, SYS_epoll_wait));
	cr_assert(!has(CONFINE_NET_WORKER, &pkt, SYS_io_uring_enter));
	cr_assert(!has(CONFINE_NET_HELPER, &tap, SYS_bind), "no sockets for a tap device");
	cr_assert(has(CONFINE_NET_HELPER, &pkt, SYS_bind), "VQ_PAIRS_SET reopens packet sockets");
	cr_assert(!has(CONFINE_NET_CTRL, &pkt, SYS_bind), "through the helper");
	cr_assert(has(CONFINE_NET_HELPER, &tap, SYS_openat), "a tap is reopened through /dev/net/tun");
	cr_assert(!has(CONFINE_NET_HELPER, &pkt, SYS_openat));
	cr_assert(!has(CONFINE_NET_LINK, &tap, SYS_openat), "the link thread asks the helper");
	cr_assert(!has(CONFINE_SPAWNER, &tap, SYS_capset), "capset only with --drop-caps");
	cr_assert(!has(CONFINE_SPAWNER, &tap, SYS_io_uring_setup), "the helper makes the workers' rings");
	cr_assert(has(CONFINE_NET_HELPER, &tap, SYS_io_uring_setup));
}

/* Undoing ip=/bridge= at teardown: main, and only main, gains the
 * rtnetlink calls on the socket opened at set-up, and opens none. */
Test(seccomp, a_tap_with_ip_or_bridge_adds_only_mains_netlink_calls)
{
	struct confine_needs tap = tap_uring(), host = tap_uring();
	host.tap_host = true;
	cr_assert(!has(CONFINE_MAIN, &tap, SYS_sendto));
	cr_assert(!has(CONFINE_MAIN, &tap, SYS_recvmsg));
	cr_assert(has(CONFINE_MAIN, &host, SYS_sendto));
	cr_assert(has(CONFINE_MAIN, &host, SYS_recvmsg));
	cr_assert(!has(CONFINE_MAIN, &host, SYS_socket), "the socket is made at set-up");
	for (unsigned r = 0; r < CONFINE_ROLES; r++)
		if (r != CONFINE_MAIN)
			cr_assert_eq(seccomp_lists_count(r, &host, NULL, 0), seccomp_lists_count(r, &tap, NULL, 0),
				     "%s", confine_role_name(r));
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	minivmm_net_config_init(&cfg.net[0]);
	cfg.nr_nets = 1;
	struct confine_needs n;
	confine_needs_from_config(&cfg, SIGRTMIN + 1, &n);
	cr_assert_not(n.tap_host);
	snprintf(cfg.net[0].bridge, sizeof(cfg.net[0].bridge), "br0");
	confine_needs_from_config(&cfg, SIGRTMIN + 1, &n);
	cr_assert(n.tap_host);
}

/* The xdp backend's calls (docs/xdp.md) are on the lists of the threads that
 * make them, in the configurations that need them, and no others: a worker
 * only wakes its socket (zero-length sendto/recvfrom) unless in zero-copy
 * mode; only the threads that steer several queues make drain sockets; main
 * never makes one; the lists build in every combination. */
Test(seccomp, xdp_adds_its_calls_only_where_they_are_made)
{
	for (unsigned bits = 0; bits < 8; bits++) {
		struct confine_needs x = { .net = true, .xdp = true, .xdp_mq = bits & 1, .xdp_zero_copy = bits & 2,
					   .uring = !(bits & 4), .epoll = bits & 4, .terminal_fd = -1,
					   .kick_signal = SIGRTMIN + 1, .pid = getpid() };
		struct confine c = built(&x, MINIVMM_SECCOMP_ON);
		for (unsigned r = 0; r < CONFINE_ROLES; r++)
			cr_assert_gt(c.prog[r].len, 10u, "%s list (xdp %#x)", confine_role_name(r), bits);
		seccomp_lists_free(&c);
		cr_assert(has(CONFINE_NET_WORKER, &x, SYS_sendto) && has(CONFINE_NET_WORKER, &x, SYS_recvfrom));
		cr_assert(!has(CONFINE_NET_WORKER, &x, SYS_socket), "the helper makes a worker's socket (xdp %#x)", bits);
		cr_assert(!has(CONFINE_NET_WORKER, &x, SYS_bpf), "a running worker touches no BPF object");
		cr_assert(!has(CONFINE_SPAWNER, &x, SYS_socket) && !has(CONFINE_SPAWNER, &x, SYS_bpf),
			  "a starting worker asks the helper for its socket");
		cr_assert(!has(CONFINE_VCPU, &x, SYS_socket) && !has(CONFINE_VCPU, &x, SYS_bpf), "xdp %#x", bits);
		cr_assert(!has(CONFINE_NET_CTRL, &x, SYS_bind), "xdp %#x", bits);
		cr_assert(has(CONFINE_NET_HELPER, &x, SYS_bpf) && has(CONFINE_NET_HELPER, &x, SYS_socket) &&
			  has(CONFINE_NET_HELPER, &x, SYS_bind), "the helper makes, binds and maps sockets");
		cr_assert(!has(CONFINE_MAIN, &x, SYS_socket) && !has(CONFINE_MAIN, &x, SYS_bpf),
			  "main makes no socket, touches no BPF object (xdp %#x)", bits);
		cr_assert(!has(CONFINE_SERIAL, &x, SYS_socket));
		for (int role = CONFINE_NET_WORKER; role <= CONFINE_NET_CTRL; role++) {
			int nrs[128];
			unsigned count = seccomp_lists_count(role, &x, nrs, 128);
			for (unsigned i = 0; i < count; i++)
				cr_assert(has(CONFINE_SPAWNER, &x, nrs[i]), "%s makes syscall %d, the spawner lacks it (xdp %#x)",
					  confine_role_name(role), nrs[i], bits);
		}
	}
	struct confine_needs tap = tap_uring();
	cr_assert(!has(CONFINE_NET_WORKER, &tap, SYS_sendto), "no xdp, no socket wake-ups");
	cr_assert(!has(CONFINE_SPAWNER, &tap, SYS_bpf));
}

/* docs/security.md carries the table as minivmm --seccomp-list prints it. */
Test(seccomp, the_security_doc_shows_the_lists_as_built)
{
	char *printed = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&printed, &len);
	cr_assert_not_null(m);
	seccomp_lists_print(m);
	fclose(m);
	FILE *f = fopen(UNIT_DATA_DIR "/../../../docs/security.md", "r");
	cr_assert_not_null(f, "docs/security.md");
	static char doc[256 * 1024];
	size_t n = fread(doc, 1, sizeof(doc) - 1, f);
	fclose(f);
	doc[n] = '\0';
	cr_assert_not_null(strstr(doc, printed),
			   "docs/security.md does not hold the lists as built: update it with `minivmm --seccomp-list`");
	free(printed);
}

/* ---- filters at work -------------------------------------------------------- */

static void make_a_socket(void)
{
	syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
	child_exit(1);   /* not reached: the filter kills us */
}

static void *sleep_then_exit_7(void *arg)
{
	(void)arg;
	sleep(3);
	_exit(7);
}

static struct confine worker_confine;
static void confine_as_worker_then_forbidden(void)
{
	struct vmm_err err = { 0 };
	if (confine_enter(&worker_confine, CONFINE_NET_WORKER, &err) < 0)
		child_exit(100);
	make_a_socket();
}

Test(seccomp, a_forbidden_call_in_a_worker_kills_the_whole_process, .timeout = 10)
{
	struct confine_needs n = tap_uring();
	worker_confine = built(&n, MINIVMM_SECCOMP_ON);
	int st = in_child(NULL, -1, make_a_socket);
	cr_assert(EXITED_WITH(st, 1), "unconfined, the socket call returns: %s", status_text(st));
	/* Confined: the worker's filter on the calling thread only. Another
	 * thread would keep the process alive if only the caller died (it
	 * exits 7 after 3 s): SECCOMP_RET_KILL_PROCESS takes them all. */
	fflush(NULL);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, sleep_then_exit_7, NULL) != 0)
			child_exit(101);
		confine_as_worker_then_forbidden();
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(KILLED_BY_SIGSYS(st), "expected death by SIGSYS, got: %s", status_text(st));
	seccomp_lists_free(&worker_confine);
}

static void worker_calls(void)
{
	int efd = eventfd(0, EFD_CLOEXEC);   /* made before: workers get theirs from their creator */
	if (efd < 0)
		child_exit(102);
	struct vmm_err err = { 0 };
	if (confine_enter(&worker_confine, CONFINE_NET_WORKER, &err) < 0)
		child_exit(100);
	uint64_t one = 1;
	if (write(efd, &one, sizeof(one)) != sizeof(one))
		child_exit(2);
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		child_exit(3);
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		child_exit(4);
	int soerr = 0;
	socklen_t len = sizeof(soerr);
	if (getsockopt(efd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 || errno != ENOTSOCK)
		child_exit(5);
	void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || munmap(p, 1 << 20) < 0)
		child_exit(6);
	free(malloc(1 << 20));
	if (close(efd) < 0)
		child_exit(7);
}

Test(seccomp, a_worker_may_make_the_calls_of_its_list, .timeout = 10)
{
	struct confine_needs n = tap_uring();
	worker_confine = built(&n, MINIVMM_SECCOMP_ON);
	int st = in_child(NULL, -1, worker_calls);
	cr_assert(EXITED_WITH(st, 0), "%s", status_text(st));
	seccomp_lists_free(&worker_confine);
}

static void getrusage_self(void) { struct rusage ru; getrusage(RUSAGE_SELF, &ru); }
static void mmap_exec(void) { mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); }
static void io_uring_setup_call(void)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	syscall(SYS_io_uring_setup, 4, &p);
}
static void io_uring_register_files(void) { syscall(SYS_io_uring_register, -1, IORING_REGISTER_FILES, NULL, 0); }
static void io_uring_enable_rings(void) { syscall(SYS_io_uring_register, -1, IORING_REGISTER_ENABLE_RINGS, NULL, 0); }
static void io_uring_unregister(void)
{
	/* On no ring: the call is made and fails (the filter let it through). */
	if (syscall(SYS_io_uring_register, -1, IORING_UNREGISTER_FILES, NULL, 0) == 0)
		child_exit(2);
	if (syscall(SYS_io_uring_register, -1, IORING_UNREGISTER_BUFFERS, NULL, 0) == 0)
		child_exit(3);
}
static void kvm_run_on_no_fd(void)
{
	if (ioctl(-1, KVM_RUN, 0) == 0 || errno != EBADF)
		child_exit(2);
	/* The kernel reads the request as 32 bits; so does the filter. */
	if (syscall(SYS_ioctl, -1, 0xffffffff00000000ul | KVM_RUN, 0) == 0 || errno != EBADF)
		child_exit(3);
}
static void kvm_create_vm(void) { ioctl(-1, KVM_CREATE_VM, 0); }
/* What glibc's free() does the first time a thread's arena shrinks. */
static void open_overcommit(void)
{
	if (open("/proc/sys/vm/overcommit_memory", O_RDONLY | O_CLOEXEC) >= 0 || errno != ENOSYS)
		child_exit(2);
}
static void tunsetiff(void) { ioctl(-1, TUNSETIFF, 0); }
static void start_a_thread(void)
{
	pthread_t t;
	pthread_create(&t, NULL, sleep_then_exit_7, NULL);
	child_exit(2);
}

#if MINIVMM_HOSTNET
/* The teardown of a tap given ip=, as the minivmm command's main thread
 * runs it: confined as main, in a namespace of the child's own. With the
 * tap's rules the undo completes (the address is gone); without them the
 * first request kills the process. */
static struct confine main_confine;
static struct host_link *undo_nl;
static struct host_link_undo undo_rec;
static struct host_addr undo_addr;

static void set_up_a_tap_with_ip(void)
{
	/* Its own sysfs too: net/tap.c looks there for the tap. */
	if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("sysfs", "/sys", "sysfs", 0, NULL) < 0)
		child_exit(90);
	struct vmm_err err = { 0 };
	char name[IFNAMSIZ];
	int fd = tap_open_queue("sc0", false, name, &err);
	if (fd < 0 || ioctl(fd, TUNSETPERSIST, 1) < 0)
		child_exit(91);
	close(fd);
	struct host_link_setup s = { .has_addr = true };
	if (host_addr_parse("10.9.0.1/24", &s.addr, &err) < 0 || host_link_open(&undo_nl, &err) < 0 ||
	    host_link_apply(undo_nl, "sc0", &s, &undo_rec, &err) < 0)
		child_exit(92);
	undo_addr = s.addr;
}

static void undo_as_main(void)
{
	set_up_a_tap_with_ip();
	struct vmm_err err = { 0 };
	if (confine_enter(&main_confine, CONFINE_MAIN, &err) < 0)
		child_exit(100);
	unsigned ifindex = undo_rec.ifindex;
	if (host_link_revert(undo_nl, &undo_rec, &err) < 0)
		child_exit(93);
	if (host_link_has_addr(undo_nl, ifindex, &undo_addr, &err) != 0)
		child_exit(94);
	host_link_close(undo_nl);
}

Test(seccomp, main_undoes_a_taps_ip_under_its_list, .timeout = 10)
{
	struct confine_needs n = tap_uring();
	n.tap_host = true;
	main_confine = built(&n, MINIVMM_SECCOMP_ON);
	int st = in_child(NULL, -1, undo_as_main);
	cr_assert(EXITED_WITH(st, 0), "%s", status_text(st));
	seccomp_lists_free(&main_confine);

	n.tap_host = false;
	main_confine = built(&n, MINIVMM_SECCOMP_ON);
	st = in_child(NULL, -1, undo_as_main);
	cr_assert(KILLED_BY_SIGSYS(st), "without ip=/bridge= main may not: %s", status_text(st));
	seccomp_lists_free(&main_confine);
}
#endif

/* Calls on a list only with some arguments: the others kill. */
Test(seccomp, arguments_are_checked_not_only_the_call, .timeout = 20)
{
	struct confine_needs n = tap_uring();
	struct confine c = built(&n, MINIVMM_SECCOMP_ON);
	int st;
	st = in_child(&c, CONFINE_NET_WORKER, getrusage_self);
	cr_assert(KILLED_BY_SIGSYS(st), "getrusage(RUSAGE_SELF) in a worker: %s", status_text(st));
	st = in_child(&c, CONFINE_NET_WORKER, mmap_exec);
	cr_assert(KILLED_BY_SIGSYS(st), "executable mmap: %s", status_text(st));
	st = in_child(&c, CONFINE_NET_WORKER, io_uring_setup_call);
	cr_assert(KILLED_BY_SIGSYS(st), "io_uring_setup in a running worker: %s", status_text(st));
	st = in_child(&c, CONFINE_NET_WORKER, io_uring_register_files);
	cr_assert(KILLED_BY_SIGSYS(st), "IORING_REGISTER_FILES in a running worker: %s", status_text(st));
	st = in_child(&c, CONFINE_NET_WORKER, io_uring_enable_rings);
	cr_assert(KILLED_BY_SIGSYS(st), "IORING_REGISTER_ENABLE_RINGS in a running worker: %s", status_text(st));
	st = in_child(&c, CONFINE_NET_WORKER, io_uring_unregister);
	cr_assert(EXITED_WITH(st, 0), "a stopping worker unregisters its files and buffers: %s", status_text(st));
	st = in_child(&c, CONFINE_VCPU, kvm_run_on_no_fd);
	cr_assert(EXITED_WITH(st, 0), "KVM_RUN in a vCPU: %s", status_text(st));
	st = in_child(&c, CONFINE_VCPU, kvm_create_vm);
	cr_assert(KILLED_BY_SIGSYS(st), "KVM_CREATE_VM in a vCPU: %s", status_text(st));
	st = in_child(&c, CONFINE_VCPU, tunsetiff);
	cr_assert(KILLED_BY_SIGSYS(st), "TUNSETIFF in a vCPU: %s", status_text(st));
	st = in_child(&c, CONFINE_VCPU, open_overcommit);
	cr_assert(EXITED_WITH(st, 0), "openat in a vCPU fails (ENOSYS), as glibc's malloc expects: %s",
		  status_text(st));
	st = in_child(&c, CONFINE_VCPU, start_a_thread);
	cr_assert(KILLED_BY_SIGSYS(st), "a vCPU starting a thread: %s", status_text(st));
	st = in_child(&c, CONFINE_NET_LINK, tunsetiff);
	cr_assert(KILLED_BY_SIGSYS(st), "TUNSETIFF in the link thread: %s", status_text(st));
	st = in_child(&c, CONFINE_NET_CTRL, tunsetiff);
	cr_assert(KILLED_BY_SIGSYS(st), "TUNSETIFF in the control thread: %s", status_text(st));
	st = in_child(&c, CONFINE_NET_HELPER, tunsetiff);
	cr_assert(EXITED_WITH(st, 0), "TUNSETIFF in the helper: %s", status_text(st));
	seccomp_lists_free(&c);
}

Test(seccomp, log_mode_lets_a_forbidden_call_through, .timeout = 10)
{
	struct confine_needs n = tap_uring();
	struct confine c = built(&n, MINIVMM_SECCOMP_LOG);
	int st = in_child(&c, CONFINE_NET_WORKER, getrusage_self);
	cr_assert(EXITED_WITH(st, 0), "%s", status_text(st));
	seccomp_lists_free(&c);
}

/* ---- stacking: the spawner and the threads it starts -------------------------- */

static struct confine stack_confine;
static int helper_ring = -1;   /* made disabled and restricted, as the device's helper does */
enum spawned { SPAWN_OK, SPAWN_THEN_FORBIDDEN, SPAWN_MAKING_A_RING };

static void *worker_like_thread(void *arg)
{
	/* What a uring worker does before it confines itself, under the
	 * spawner's filter: name itself, enable the ring the helper made it. */
	pthread_setname_np(pthread_self(), "net9-q0");
	if ((intptr_t)arg == SPAWN_MAKING_A_RING) {
		/* Not on the spawner's list: rings are the helper's to make. */
		struct io_uring_params p;
		memset(&p, 0, sizeof(p));
		syscall(SYS_io_uring_setup, 4, &p);
		return (void *)5;
	}
	int ring = helper_ring;
	if (syscall(SYS_io_uring_register, ring, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
		return (void *)2;
	struct vmm_err err = { 0 };
	if (confine_enter(&stack_confine, CONFINE_NET_WORKER, &err) < 0)
		return (void *)3;
	close(ring);
	if ((intptr_t)arg == SPAWN_THEN_FORBIDDEN) {
		/* Allowed by the spawner's list, not by a worker's: the two
		 * filters stack, so this kills the process. */
		fcntl(0, F_GETFL);
		return (void *)4;
	}
	return NULL;
}

static void spawn_a_worker(enum spawned what)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_R_DISABLED;
	helper_ring = (int)syscall(SYS_io_uring_setup, 4, &p);
	struct io_uring_restriction res = { .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = IORING_OP_READ };
	if (helper_ring < 0 || syscall(SYS_io_uring_register, helper_ring, IORING_REGISTER_RESTRICTIONS, &res, 1) < 0)
		child_exit(102);
	struct spawner *s;
	struct vmm_err err = { 0 };
	if (spawner_start(&s, &stack_confine, &err) < 0)
		child_exit(100);
	pthread_t t;
	if (spawner_create_thread(s, &t, NULL, worker_like_thread, (void *)(intptr_t)what) != 0)
		child_exit(101);
	void *ret;
	pthread_join(t, &ret);
	spawner_stop(s);
	child_exit((int)(intptr_t)ret);
}

static void spawn_a_worker_ok(void) { spawn_a_worker(SPAWN_OK); }
static void spawn_a_worker_then_forbidden(void) { spawn_a_worker(SPAWN_THEN_FORBIDDEN); }
static void spawn_a_worker_making_a_ring(void) { spawn_a_worker(SPAWN_MAKING_A_RING); }

Test(seccomp, a_thread_the_spawner_starts_sets_up_under_its_filter_then_narrows_it, .timeout = 10)
{
	struct confine_needs n = tap_uring();
	stack_confine = built(&n, MINIVMM_SECCOMP_ON);
	int st = in_child(NULL, -1, spawn_a_worker_ok);
	cr_assert(EXITED_WITH(st, 0), "worker set-up under the spawner's filter: %s", status_text(st));
	st = in_child(NULL, -1, spawn_a_worker_then_forbidden);
	cr_assert(KILLED_BY_SIGSYS(st), "a spawner-only call in a confined worker: %s", status_text(st));
	st = in_child(NULL, -1, spawn_a_worker_making_a_ring);
	cr_assert(KILLED_BY_SIGSYS(st), "io_uring_setup under the spawner's filter: %s", status_text(st));
	seccomp_lists_free(&stack_confine);
}

/* ---- capabilities ----------------------------------------------------------- */

Test(caps, only_the_helper_keeps_capabilities)
{
	struct confine c = { 0 };
	struct confine_needs tap = tap_uring();
	caps_plan(&c, &tap);
	for (unsigned r = 0; r < CONFINE_ROLES; r++)
		cr_assert_eq(c.keep_caps[r], r == CONFINE_NET_HELPER ? 1ull << CAP_NET_ADMIN : 0,
			     "%s keeps %#llx", confine_role_name(r), (unsigned long long)c.keep_caps[r]);
	struct confine_needs pkt = needs_of(2 | 4 | 8);
	caps_plan(&c, &pkt);
	cr_assert_eq(c.keep_caps[CONFINE_NET_HELPER], 1ull << CAP_NET_RAW);
	cr_assert_eq(c.keep_caps[CONFINE_NET_CTRL], 0u, "VQ_PAIRS_SET reopens sockets through the helper");
	cr_assert_eq(c.keep_caps[CONFINE_SPAWNER], 0u);
	pkt.packet_recv = true;
	caps_plan(&c, &pkt);
	cr_assert_eq(c.keep_caps[CONFINE_NET_HELPER], (1ull << CAP_NET_RAW) | (1ull << CAP_NET_ADMIN),
		     "SO_RCVBUFFORCE for rx=recv");
}

Test(caps, xdp_helper_keeps_what_its_sockets_and_program_need)
{
	struct confine c = { 0 };
	struct confine_needs x = { .net = true, .xdp = true, .xdp_mq = true, .xdp_zero_copy = true, .uring = true };
	const uint64_t xsk = (1ull << CAP_NET_RAW) | (1ull << CAP_IPC_LOCK), admin = 1ull << CAP_NET_ADMIN;
	caps_plan(&c, &x);
	for (unsigned r = 0; r < CONFINE_ROLES; r++)
		cr_assert_eq(c.keep_caps[r], r == CONFINE_NET_HELPER ? xsk | admin : 0,
			     "%s keeps %#llx", confine_role_name(r), (unsigned long long)c.keep_caps[r]);
}

static uint64_t effective_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &hdr, d) < 0)
		child_exit(110);
	return d[0].effective | (uint64_t)d[1].effective << 32;
}

static uint64_t caps_before;
static struct confine caps_confine;
static void drop_to_net_raw(void)
{
	caps_before = effective_caps();
	struct vmm_err err = { 0 };
	if (confine_enter(&caps_confine, CONFINE_NET_LINK, &err) < 0)
		child_exit(100);
	uint64_t want = caps_before & (1ull << CAP_NET_RAW);
	if (effective_caps() != want)
		child_exit(2);
	if (prctl(PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) != 0)
		child_exit(3);   /* gone from the bounding set too (we had CAP_SETPCAP as root) */
	if (caps_before & (1ull << CAP_NET_RAW)) {
		int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
		if (fd < 0)
			child_exit(4);   /* the capability kept works */
		close(fd);
	}
}

Test(caps, confine_enter_keeps_only_the_listed_capabilities, .timeout = 10)
{
	caps_confine = (struct confine){ .drop_caps = true };
	caps_confine.keep_caps[CONFINE_NET_LINK] = 1ull << CAP_NET_RAW;
	cr_assert_eq(geteuid(), 0u, "this test drops root's capabilities: it must run as root");
	int st = in_child(NULL, -1, drop_to_net_raw);
	cr_assert(EXITED_WITH(st, 0), "%s", status_text(st));
}
