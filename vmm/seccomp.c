/* SPDX-License-Identifier: Apache-2.0 */
/* The allow-lists, as one table, and their compilation with libseccomp.
 *
 * Each rule names a system call, the kinds of thread that may make it, the
 * arguments it may have, when the configuration needs it, and why. A
 * thread's list is every rule naming its kind. Threads started through the
 * spawner (base/spawn.h) run under its filter as well as their own, so every
 * rule of a worker or of the control thread is the spawner's too: filters
 * only stack, and a call passes only if every filter on the thread allows it.
 *
 * Arguments: a filter sees the six registers of a call, never the memory
 * they point to, so paths, struct ifreq, io_uring_params and clone3's
 * arguments cannot be checked; numbers can (ioctl requests, socket
 * families, protocol levels and options, mmap protections, prctl options).
 * 32-bit arguments are compared on their low half, as the kernel reads them. */
#include "vmm/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <linux/if_tun.h>
#include <linux/if_xdp.h>
#include <linux/io_uring.h>
#include <linux/kvm.h>
#include <linux/sockios.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef PACKET_VNET_HDR_SZ
#define PACKET_VNET_HDR_SZ 24   /* Linux 6.2+, as in net/packet.c */
#endif

#define ETH_P_ALL_BE __builtin_bswap16(0x0003)   /* htons(ETH_P_ALL), as a constant */

/* ---- the table ----------------------------------------------------------- */

#define R(role) (1u << (role))
#define RL_MAIN     R(CONFINE_MAIN)
#define RL_SIGNALS  R(CONFINE_SIGNALS)
#define RL_VCPU     R(CONFINE_VCPU)
#define RL_SERIAL   R(CONFINE_SERIAL)
#define RL_SPAWNER  R(CONFINE_SPAWNER)
#define RL_WORKER   R(CONFINE_NET_WORKER)
#define RL_CTRL     R(CONFINE_NET_CTRL)
#define RL_LINK     R(CONFINE_NET_LINK)
#define RL_HELPER   R(CONFINE_NET_HELPER)
#define RL_API      R(CONFINE_API)
#define RL_ALL      SECCOMP_ALL_ROLES

/* When a rule is needed: any of these (0: always). */
enum {
	W_NET = 1 << 0,
	W_TAP = 1 << 1,
	W_PACKET = 1 << 2,
	W_PACKET_MQ = 1 << 3,
	W_URING = 1 << 4,
	W_EPOLL = 1 << 5,
	W_DROP_CAPS = 1 << 6,
	W_TTY = 1 << 7,
	W_XDP = 1 << 8,
	W_XDP_MQ = 1 << 9,
	W_XDP_ZC = 1 << 10,
	W_SPLIT_IRQCHIP = 1 << 11,
	W_TAP_HOST = 1 << 12,
	W_API = 1 << 13,
};

static const char *const when_names[] = {
	"a network device", "tap", "packet", "packet, queues > 1", "engine=uring", "engine=epoll",
	"--drop-caps", "--serial stdio", "xdp", "xdp, queues > 1", "xdp, xdp-zero-copy=on",
	"--irqchip=split", "tap, ip= or bridge=", "--api-socket",
};

enum arg_kind {
	A_ONE_OF,      /* (arg & 0xffffffff) is one of vals */
	A_CLEAR,       /* none of the bits vals[0] */
	A_SET,         /* all of the bits vals[0] */
	A_PID,         /* the VMM's pid */
	A_KICK,        /* the vCPU kick signal */
	A_TTY,         /* the terminal the guest's console reads (serial_in_fd) */
	A_API_DIR,     /* the API socket's directory (api_dir_fd) */
};

#define MAX_ALTS 12
struct rule_arg {
	unsigned char idx;
	unsigned char kind;
	unsigned char nvals;
	const char *label;      /* the argument, for people: "request" */
	const char *text;       /* the values as written in the source */
	uint64_t vals[MAX_ALTS];
};

struct seccomp_rule {
	const char *name;
	int nr;
	unsigned roles;
	unsigned when;
	unsigned nargs;
	struct rule_arg args[3];
	bool enosys;            /* answered with ENOSYS instead of allowed */
	const char *why;
};

#define NVALS(...) (sizeof((uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t))
/* The text is taken before expansion: "KVM_RUN", not its number. */
#define ONE_OF_T(i, lbl, txt, ...) { .idx = (i), .kind = A_ONE_OF, .nvals = NVALS(__VA_ARGS__), \
				     .label = lbl, .text = txt, .vals = { __VA_ARGS__ } }
#define ONE_OF(i, lbl, ...) ONE_OF_T(i, lbl, #__VA_ARGS__, __VA_ARGS__)
#define CLEAR(i, lbl, bits) { .idx = (i), .kind = A_CLEAR, .nvals = 1, .label = lbl, .text = #bits, \
			      .vals = { (bits) } }
#define SET(i, lbl, bits)   { .idx = (i), .kind = A_SET, .nvals = 1, .label = lbl, .text = #bits, \
			      .vals = { (bits) } }
#define PID(i)              { .idx = (i), .kind = A_PID, .nvals = 1, .label = "tgid", \
			      .text = "the VMM's pid" }
#define KICK(i)             { .idx = (i), .kind = A_KICK, .nvals = 1, .label = "sig", \
			      .text = "the vCPU kick signal" }
#define API_DIR(i)          { .idx = (i), .kind = A_API_DIR, .nvals = 1, .label = "dirfd", \
			      .text = "the API socket's directory" }
#define TTY(i)              { .idx = (i), .kind = A_TTY, .nvals = 1, .label = "fd", \
			      .text = "the console's terminal" }

#define SYS(x) .name = #x, .nr = SCMP_SYS(x)
#define ARGS(...) .nargs = sizeof((struct rule_arg[]){ __VA_ARGS__ }) / sizeof(struct rule_arg), \
		  .args = { __VA_ARGS__ }
#define IOCTL(r, w, why_, ...) { SYS(ioctl), .roles = (r), .when = (w), \
				 ARGS(ONE_OF_T(1, "request", #__VA_ARGS__, __VA_ARGS__)), .why = why_ }

/* Opening a packet socket the way net/packet.c does (packet_open_queue). */
#define PACKET_SOCKET_RULES(r, w) \
	{ SYS(socket), .roles = (r), .when = (w), \
	  ARGS(ONE_OF(0, "domain", AF_PACKET), ONE_OF(1, "type", SOCK_RAW | SOCK_CLOEXEC), \
	       ONE_OF(2, "protocol", ETH_P_ALL_BE)), \
	  .why = "a packet socket for a queue" }, \
	{ SYS(setsockopt), .roles = (r), .when = (w), \
	  ARGS(ONE_OF(1, "level", SOL_PACKET), \
	       ONE_OF(2, "option", PACKET_VNET_HDR, PACKET_VNET_HDR_SZ, PACKET_QDISC_BYPASS, \
		      PACKET_IGNORE_OUTGOING, PACKET_VERSION, PACKET_RX_RING, PACKET_ADD_MEMBERSHIP, \
		      PACKET_FANOUT)), \
	  .why = "vnet headers, TPACKET_V3 ring, promiscuous mode, fanout group" }, \
	{ SYS(setsockopt), .roles = (r), .when = (w), \
	  ARGS(ONE_OF(1, "level", SOL_SOCKET), ONE_OF(2, "option", SO_RCVBUFFORCE, SO_RCVBUF)), \
	  .why = "receive buffer for rx=recv" }, \
	{ SYS(getsockopt), .roles = (r), .when = (w), \
	  ARGS(ONE_OF(1, "level", SOL_PACKET), ONE_OF(2, "option", PACKET_FANOUT)), \
	  .why = "the fanout group id the kernel picked" }, \
	{ SYS(bind), .roles = (r), .when = (w), .why = "bind the socket to the interface" }

/* Making, binding and closing an AF_XDP socket the way net/xdp_socket.c
 * does (xsk_create, xsk_bind, xsk_close); its rings are mapped MAP_SHARED
 * and never executable, which every thread's mmap rule already allows. */
#define XSK_SOCKET_RULES(r, w, what) \
	{ SYS(socket), .roles = (r), .when = (w), \
	  ARGS(ONE_OF(0, "domain", AF_XDP), ONE_OF(1, "type", SOCK_RAW | SOCK_CLOEXEC), \
	       ONE_OF(2, "protocol", 0)), \
	  .why = "an AF_XDP socket: " what }, \
	{ SYS(setsockopt), .roles = (r), .when = (w), \
	  ARGS(ONE_OF(1, "level", SOL_XDP), \
	       ONE_OF(2, "option", XDP_UMEM_REG, XDP_UMEM_FILL_RING, XDP_UMEM_COMPLETION_RING, XDP_RX_RING, \
		      XDP_TX_RING)), \
	  .why = "its UMEM and rings" }, \
	{ SYS(getsockopt), .roles = (r), .when = (w), \
	  ARGS(ONE_OF(1, "level", SOL_XDP), ONE_OF(2, "option", XDP_MMAP_OFFSETS, XDP_STATISTICS)), \
	  .why = "where its rings are mapped; its drop counters before it closes" }, \
	{ SYS(bind), .roles = (r), .when = (w), .why = "bind it to the interface's queue" }

static const struct seccomp_rule rules[] = {
	/* ---- every thread: the C library's own needs ---- */
	{ SYS(futex), .roles = RL_ALL, .why = "mutexes, condition variables, pthread_join" },
	{ SYS(exit), .roles = RL_ALL, .why = "the thread ends" },
	{ SYS(rt_sigprocmask), .roles = RL_ALL, .why = "glibc blocks signals while a thread starts and ends" },
	{ SYS(rt_sigreturn), .roles = RL_ALL, .why = "return from a signal handler (the vCPU kick)" },
	{ SYS(restart_syscall), .roles = RL_ALL, .why = "a call interrupted by a signal resumes" },
	{ SYS(sched_yield), .roles = RL_ALL, .why = "glibc's lock back-off" },
	{ SYS(getpid), .roles = RL_ALL, .why = "glibc (pthread_kill, abort)" },
	{ SYS(gettid), .roles = RL_ALL, .why = "workers record their thread id for statistics" },
	{ SYS(clock_gettime), .roles = RL_ALL, .why = "time, when the vDSO cannot answer (thread CPU clocks)" },
	{ SYS(clock_nanosleep), .roles = RL_ALL, .why = "short pauses (a worker draining its ring)" },
	{ SYS(mmap), .roles = RL_ALL, ARGS(CLEAR(2, "prot", PROT_EXEC)),
	  .why = "malloc, thread stacks, rings; never executable" },
	{ SYS(mprotect), .roles = RL_ALL, ARGS(CLEAR(2, "prot", PROT_EXEC)),
	  .why = "malloc arenas grow, stack guard pages; never executable" },
	{ SYS(munmap), .roles = RL_ALL, .why = "free, rings and guest memory unmapped" },
	{ SYS(mremap), .roles = RL_ALL, .why = "realloc of large blocks" },
	{ SYS(brk), .roles = RL_ALL, .why = "malloc" },
	{ SYS(madvise), .roles = RL_ALL, ARGS(ONE_OF(2, "advice", MADV_DONTNEED)),
	  .why = "free and thread exit give memory back" },
	{ SYS(write), .roles = RL_ALL,
	  .why = "log lines to stderr; eventfd signals (interrupts, kicks, stop requests); guest console" },
	{ SYS(tgkill), .roles = RL_ALL, ARGS(PID(0), ONE_OF(2, "sig", SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE)),
	  .why = "abort(), and the minivmm command's crash handler re-raising the signal: the process dies of it, not of a filter" },
	{ SYS(ioctl), .roles = RL_ALL, .when = W_TTY, ARGS(TTY(0), ONE_OF(1, "request", TCSETS)),
	  .why = "restore the terminal: at exit (main), and from the minivmm command's crash handler on any thread" },

	/* ---- main: waits for the VM to stop, stops its threads, tears it down ---- */
	{ SYS(exit_group), .roles = RL_MAIN, .why = "the process ends" },
	{ SYS(tgkill), .roles = RL_MAIN | RL_API, ARGS(PID(0), KICK(2)),
	  .why = "kick each vCPU out of KVM_RUN when the VM stops (main) or pauses (vm.pause)" },
	{ SYS(tgkill), .roles = RL_MAIN, ARGS(PID(0), ONE_OF(2, "sig", SIGTERM)),
	  .why = "the minivmm command wakes its signal thread to end it" },
	IOCTL(RL_MAIN | RL_SIGNALS, 0, "stdio asks whether stdout/stderr is a terminal", TCGETS),
	/* The tap backend undoes ip=/bridge= on an operator's tap as it is
	 * destroyed, on the rtnetlink socket it opened at set-up (libmnl). */
	{ SYS(sendto), .roles = RL_MAIN, .when = W_TAP_HOST, ARGS(ONE_OF(3, "flags", 0)),
	  .why = "at teardown, rtnetlink requests that take off what ip= or bridge= did to an operator's tap, on the socket opened at set-up" },
	{ SYS(recvmsg), .roles = RL_MAIN, .when = W_TAP_HOST, ARGS(ONE_OF(2, "flags", 0)),
	  .why = "the kernel's answers to them" },
	{ SYS(newfstatat), .roles = RL_MAIN | RL_SIGNALS | RL_HELPER | RL_API, .why = "stdio buffers, fopen, opendir" },
	{ SYS(fstat), .roles = RL_MAIN | RL_SIGNALS | RL_HELPER | RL_API, .why = "stdio buffers, fopen, opendir" },
	{ SYS(lseek), .roles = RL_MAIN | RL_SIGNALS | RL_HELPER | RL_API, .why = "fclose of a file read in part" },
	{ SYS(openat), .roles = RL_MAIN | RL_SIGNALS | RL_API, ARGS(CLEAR(2, "flags", O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)),
	  .why = "statistics read /proc/self/task/<tid>/status, and jansson /dev/urandom once for its hash seed (read-only)" },
	{ SYS(getsockopt), .roles = RL_MAIN | RL_SIGNALS | RL_API, .when = W_PACKET,
	  ARGS(ONE_OF(1, "level", SOL_PACKET), ONE_OF(2, "option", PACKET_STATISTICS)),
	  .why = "packet sockets' drop counters for statistics" },
	{ SYS(getsockopt), .roles = RL_MAIN | RL_SIGNALS | RL_API, .when = W_XDP,
	  ARGS(ONE_OF(1, "level", SOL_XDP), ONE_OF(2, "option", XDP_STATISTICS)),
	  .why = "AF_XDP sockets' drop counters for statistics, and before the drain sockets close at teardown" },
	{ SYS(read), .roles = RL_MAIN | RL_SIGNALS | RL_VCPU | RL_SERIAL | RL_CTRL | RL_LINK | RL_HELPER | RL_API,
	  .why = "eventfds (stop requests, kicks), /proc and sysfs, serial input" },
	{ SYS(close), .roles = RL_MAIN | RL_SIGNALS | RL_VCPU | RL_WORKER | RL_CTRL | RL_LINK | RL_HELPER | RL_API,
	  .why = "fds of stopped workers, closed queues and sockets, teardown" },

	/* ---- api: the API socket's HTTP server (vmm/api.c, libmicrohttpd):
	 * it accepts on the socket made at start and talks to its clients;
	 * its endpoints read statistics as the signal thread does ---- */
	{ SYS(accept4), .roles = RL_API, ARGS(ONE_OF(3, "flags", SOCK_CLOEXEC | SOCK_NONBLOCK)),
	  .why = "a client of the API socket" },
	{ SYS(epoll_wait), .roles = RL_API, .why = "libmicrohttpd waits on its clients" },
	{ SYS(epoll_ctl), .roles = RL_API, .why = "libmicrohttpd watches a client" },
	{ SYS(recvfrom), .roles = RL_API, .why = "a client's request" },
	{ SYS(sendto), .roles = RL_API, .why = "the answer" },
	{ SYS(sendmsg), .roles = RL_API, .why = "the answer's header and body at once" },
	{ SYS(shutdown), .roles = RL_API, .why = "a client's connection ends" },
	{ SYS(fcntl), .roles = RL_API, ARGS(ONE_OF(1, "command", F_GETFL, F_SETFL, F_GETFD, F_SETFD)),
	  .why = "libmicrohttpd makes a client's socket non-blocking and close-on-exec" },
	{ SYS(setsockopt), .roles = RL_API, ARGS(ONE_OF(1, "level", SOL_SOCKET, IPPROTO_TCP)),
	  .why = "libmicrohttpd's socket options on a client (it tries the TCP ones on any socket)" },

	{ SYS(unlinkat), .roles = RL_MAIN, .when = W_API, ARGS(API_DIR(0), ONE_OF(2, "flags", 0)),
	  .why = "at exit, remove the API socket from the directory it was made in (opened at start)" },

	/* ---- signals: the minivmm command's watcher ---- */
	{ SYS(rt_sigtimedwait), .roles = RL_SIGNALS, .why = "sigwait for SIGINT, SIGTERM, SIGHUP, SIGUSR1" },

	/* ---- vCPUs: KVM_RUN, and the devices' register emulation ---- */
	IOCTL(RL_VCPU, 0, "run the guest; its registers for a crash report", KVM_RUN, KVM_GET_REGS,
	      KVM_GET_SREGS),
	IOCTL(RL_VCPU | RL_SERIAL, 0, "the UART's interrupt line", KVM_IRQ_LINE),
	IOCTL(RL_VCPU, W_SPLIT_IRQCHIP, "the guest's IOAPIC redirection entries, as KVM's MSI routes",
	      KVM_SET_GSI_ROUTING),
	IOCTL(RL_VCPU | RL_CTRL | RL_LINK, W_TAP, "guest offloads at DRIVER_OK and GUEST_OFFLOADS_SET",
	      TUNSETOFFLOAD),
	IOCTL(RL_MAIN | RL_HELPER, W_TAP, "attach and detach tap queues (VQ_PAIRS_SET, reset; the helper for the others)",
	      TUNSETQUEUE),
	{ SYS(eventfd2), .roles = RL_VCPU | RL_CTRL | RL_LINK, .when = W_NET,
	  .why = "a worker's stop eventfd, made by the thread that starts it (VQ_PAIRS_SET restarts workers on a packet device and with threads=auto)" },

	/* ---- serial: the console's transmit queue ---- */
	IOCTL(RL_SERIAL, 0, "COM1's transmit register queued in KVM's coalesced ring or not, as the guest's IER and MCR writes allow",
	      KVM_REGISTER_COALESCED_MMIO, KVM_UNREGISTER_COALESCED_MMIO),

	/* ---- serial, control, link: waiting ---- */
	{ SYS(poll), .roles = RL_MAIN | RL_VCPU | RL_SERIAL | RL_CTRL | RL_LINK | RL_API,
	  .why = "wait for input, a kick or a stop request; the console's output to take a byte (vCPU)" },

	/* ---- the spawner, and what its threads do before they confine themselves ---- */
	{ SYS(clone), .roles = RL_SPAWNER, ARGS(SET(0, "flags", CLONE_VM | CLONE_THREAD | CLONE_SIGHAND)),
	  .why = "pthread_create: threads only, never a new process" },
	{ SYS(openat), .roles = RL_VCPU | RL_SERIAL | RL_WORKER | RL_CTRL, .enosys = true,
	  .why = "glibc's free() opens /proc/sys/vm/overcommit_memory the first time a thread's arena "
		 "shrinks (e.g. a device reset frees its queues' buffers on a vCPU): refused, malloc "
		 "shrinks with MADV_DONTNEED instead; opening anything else fails the same way" },
	{ SYS(clone3), .roles = RL_SPAWNER, .enosys = true,
	  .why = "its flags are in memory, out of a filter's sight: ENOSYS makes glibc use clone" },
	{ SYS(set_robust_list), .roles = RL_SPAWNER, .why = "a new thread registers its robust futexes" },
	{ SYS(rseq), .roles = RL_SPAWNER, .why = "a new thread registers its restartable sequences" },
	{ SYS(sched_setaffinity), .roles = RL_SPAWNER, .why = "pthread_create applies the thread's CPUs" },
	{ SYS(prctl), .roles = RL_SPAWNER, ARGS(ONE_OF(0, "option", PR_SET_NAME, PR_SET_NO_NEW_PRIVS)),
	  .why = "a new thread names itself, then confines itself" },
	{ SYS(seccomp), .roles = RL_SPAWNER, ARGS(ONE_OF(0, "operation", SECCOMP_SET_MODE_FILTER)),
	  .why = "a new thread installs its own filter (it can only narrow this one)" },
	{ SYS(capget), .roles = RL_SPAWNER, .when = W_DROP_CAPS, .why = "a new thread drops capabilities" },
	{ SYS(capset), .roles = RL_SPAWNER, .when = W_DROP_CAPS, .why = "a new thread drops capabilities" },
	{ SYS(prctl), .roles = RL_SPAWNER, .when = W_DROP_CAPS, ARGS(ONE_OF(0, "option", PR_CAP_AMBIENT)),
	  .why = "a new thread clears its ambient capabilities" },
	{ SYS(io_uring_register), .roles = RL_SPAWNER, .when = W_URING,
	  ARGS(ONE_OF(1, "opcode", IORING_REGISTER_PROBE, IORING_REGISTER_FILES, IORING_REGISTER_BUFFERS,
		      IORING_REGISTER_ENABLE_RINGS, IORING_UNREGISTER_FILES, IORING_UNREGISTER_BUFFERS)),
	  .why = "a worker probes the ops of the ring the helper made it (disabled, restricted), registers its fixed files and buffers, enables it; unregisters them as it stops" },
	{ SYS(epoll_create1), .roles = RL_SPAWNER, .when = W_EPOLL, .why = "a worker makes its epoll set" },
	{ SYS(fcntl), .roles = RL_SPAWNER, .when = W_NET, ARGS(ONE_OF(1, "command", F_GETFL, F_SETFL)),
	  .why = "a worker makes its backend fd non-blocking" },

	/* ---- queue workers: the data path ---- */
	{ SYS(io_uring_enter), .roles = RL_WORKER, .when = W_URING,
	  .why = "submit and reap; the operations themselves are not seen by seccomp (see below)" },
	{ SYS(io_uring_register), .roles = RL_WORKER, .when = W_URING,
	  ARGS(ONE_OF(1, "opcode", IORING_UNREGISTER_FILES, IORING_UNREGISTER_BUFFERS)),
	  .why = "a stopping worker gives its fixed files and buffers back at once (the tap queue is free when minivmm exits), not when the kernel tears the ring down later" },
	{ SYS(epoll_wait), .roles = RL_WORKER, .when = W_EPOLL, .why = "wait for kicks and the backend" },
	{ SYS(epoll_ctl), .roles = RL_WORKER, .when = W_EPOLL, .why = "watch the backend only while reading" },
	{ SYS(readv), .roles = RL_WORKER, .when = W_NET,
	  .why = "a frame from the backend into guest buffers (epoll; io_uring where RWF_NOWAIT is refused)" },
	{ SYS(writev), .roles = RL_WORKER, .when = W_EPOLL, .why = "a guest frame to the backend" },
	{ SYS(read), .roles = RL_WORKER, .when = W_EPOLL, .why = "clear a kick eventfd" },
	{ SYS(getsockopt), .roles = RL_WORKER, .when = W_NET,
	  ARGS(ONE_OF(1, "level", SOL_SOCKET), ONE_OF(2, "option", SO_ERROR)),
	  .why = "what a backend fd that polled an error has to say" },
	{ SYS(getrusage), .roles = RL_WORKER, ARGS(ONE_OF(0, "who", RUSAGE_THREAD)),
	  .why = "the thread's CPU time, kept when it ends" },
	{ SYS(sendto), .roles = RL_WORKER, .when = W_XDP,
	  ARGS(ONE_OF(2, "len", 0), ONE_OF(3, "flags", MSG_DONTWAIT)),
	  .why = "an AF_XDP socket's TX wake-up: the kernel sends what is on its TX ring (no data passes)" },
	{ SYS(recvfrom), .roles = RL_WORKER, .when = W_XDP,
	  ARGS(ONE_OF(2, "len", 0), ONE_OF(3, "flags", MSG_DONTWAIT)),
	  .why = "an AF_XDP socket's fill-ring wake-up (no data passes)" },
	{ SYS(getsockopt), .roles = RL_WORKER, .when = W_XDP,
	  ARGS(ONE_OF(1, "level", SOL_XDP), ONE_OF(2, "option", XDP_STATISTICS)),
	  .why = "its socket's drop counters, kept when it closes it" },
	IOCTL(RL_MAIN, W_XDP_MQ,
	      "put back the RSS indirection table the helper spread over the queues in use, on the socket the backend keeps for it (drivers that have one). The ethtool command is in memory, out of the filter's sight",
	      SIOCETHTOOL),

	/* ---- the device's helper (net/helper.h): every step of a backend that
	 * makes, binds or steers a socket once the VM runs, for the threads
	 * that may not: VQ_PAIRS_SET, DRIVER_OK and reset steering queues
	 * (vCPU, control), an xdp worker's queue socket as it starts and the
	 * zero-copy probe as it stops, an interface that came back (link) ---- */
	{ SYS(io_uring_setup), .roles = RL_HELPER, .when = W_URING,
	  .why = "a worker's ring, made disabled (IORING_SETUP_R_DISABLED) so that nothing runs on it before it is restricted" },
	{ SYS(io_uring_register), .roles = RL_HELPER, .when = W_URING,
	  ARGS(ONE_OF(1, "opcode", IORING_REGISTER_RESTRICTIONS)),
	  .why = "limit it to the engine's operations before the worker gets it (the worker cannot loosen them: they are registered once)" },
	{ SYS(access), .roles = RL_HELPER, .when = W_TAP, .why = "is /sys/class/net/<tap> there?" },
	{ SYS(openat), .roles = RL_HELPER, .when = W_TAP, ARGS(CLEAR(2, "flags", O_CREAT | O_TRUNC)),
	  .why = "/dev/net/tun to attach to the tap again, and the tap's sysfs flags and queues (nothing created)" },
	{ SYS(getdents64), .roles = RL_HELPER, .when = W_TAP, .why = "count the tap's queues in sysfs" },
	IOCTL(RL_HELPER, W_TAP, "attach to the tap again, and only to one an operator made (IFF_PERSIST)", TUNSETIFF,
	      TUNSETVNETHDRSZ, TUNGETIFF),
	{ SYS(socket), .roles = RL_HELPER, .when = W_PACKET | W_XDP,
	  ARGS(ONE_OF(0, "domain", AF_UNIX, AF_INET), ONE_OF(1, "type", SOCK_DGRAM | SOCK_CLOEXEC),
	       ONE_OF(2, "protocol", 0)),
	  .why = "a socket to ask about the interface (if_nametoindex, SIOCGIFFLAGS)" },
	IOCTL(RL_HELPER, W_PACKET | W_XDP, "the interface's index, state, MTU and link type", SIOCGIFINDEX,
	      SIOCGIFFLAGS, SIOCGIFHWADDR, SIOCGIFMTU),
	/* packet: VQ_PAIRS_SET closes the sockets of the queues it switches
	 * off and opens them again when they come back (a fanout group cannot
	 * skip a member); an interface that came back gets new ones. */
	PACKET_SOCKET_RULES(RL_HELPER, W_PACKET),
	/* xdp: a worker's queue socket (made, bound, put in the XSKMAP); a
	 * queue not in use gets a drain socket (own 4 KiB UMEM, no buffers:
	 * its frames are dropped and counted); the RSS table spread over the
	 * queues in use; an interface that came back gets a new link to the
	 * program loaded at set-up (xdp_prog_relink), every queue is probed
	 * again. The map's fd is the only BPF object the process holds open,
	 * and no call that opens others (BPF_*_GET_FD_BY_ID, BPF_OBJ_GET,
	 * loading) is allowed. */
	IOCTL(RL_HELPER, W_XDP, "the interface's queues, driver and RSS table (ethtool); the command is in memory, out of the filter's sight", SIOCETHTOOL),
	XSK_SOCKET_RULES(RL_HELPER, W_XDP, "a worker's queue socket, a drain socket, a probe of a queue"),
	{ SYS(bpf), .roles = RL_HELPER, .when = W_XDP, ARGS(ONE_OF(0, "cmd", BPF_LINK_CREATE, BPF_MAP_UPDATE_ELEM)),
	  .why = "a socket in the XSKMAP; attach the loaded XDP program to an interface that came back (a BPF link)" },
};

#define NR_RULES (sizeof(rules) / sizeof(rules[0]))

/* ---- which rules apply --------------------------------------------------- */

static unsigned needs_mask(const struct confine_needs *n)
{
	return (n->net ? W_NET : 0) | (n->tap ? W_TAP : 0) | (n->packet ? W_PACKET : 0) |
	       (n->packet_mq ? W_PACKET_MQ : 0) | (n->uring ? W_URING : 0) |
	       (n->epoll ? W_EPOLL : 0) | (n->drop_caps ? W_DROP_CAPS : 0) |
	       (n->terminal_fd >= 0 ? W_TTY : 0) | (n->xdp ? W_XDP : 0) |
	       (n->xdp_mq ? W_XDP_MQ : 0) | (n->xdp_zero_copy ? W_XDP_ZC : 0) |
	       (n->split_irqchip ? W_SPLIT_IRQCHIP : 0) | (n->tap_host ? W_TAP_HOST : 0) |
	       (n->api_dir_fd >= 0 ? W_API : 0);
}

/* The spawner's threads run under its filter too: it allows all they do. */
static unsigned rule_roles(const struct seccomp_rule *r)
{
	return r->roles & (RL_WORKER | RL_CTRL) ? r->roles | RL_SPAWNER : r->roles;
}

static bool rule_applies(const struct seccomp_rule *r, enum confine_role role, unsigned mask)
{
	return (rule_roles(r) & R(role)) && (r->when == 0 || (r->when & mask));
}

void confine_needs_from_config(const struct minivmm_config *cfg, int kick_signal,
			       struct confine_needs *n)
{
	memset(n, 0, sizeof(*n));
	n->kick_signal = kick_signal;
	n->pid = getpid();
	n->drop_caps = cfg->drop_caps;
	n->split_irqchip = cfg->irqchip == MINIVMM_IRQCHIP_SPLIT;
	n->terminal_fd = cfg->serial == MINIVMM_SERIAL_STDIO ? cfg->serial_in_fd : -1;
	n->api_dir_fd = -1;   /* the minivmm command's to set */
	for (unsigned i = 0; i < cfg->nr_nets && i < MINIVMM_MAX_NETS; i++) {
		const struct minivmm_net_config *net = &cfg->net[i];
		n->net = true;
		if (net->backend == MINIVMM_NET_PACKET) {
			n->packet = true;
			n->packet_mq |= net->queues > 1;
			n->packet_recv |= net->rx_recv != 0;
		} else if (net->backend == MINIVMM_NET_XDP) {
			n->xdp = true;
			n->xdp_mq |= net->queues > 1;
			n->xdp_zero_copy |= net->xdp_zero_copy != 0;
		} else {
			n->tap = true;
			n->tap_host |= net->ip[0] || net->bridge[0];
		}
		if (net->engine == MINIVMM_ENGINE_EPOLL)
			n->epoll = true;
		else
			n->uring = true;
	}
}

/* ---- compilation ------------------------------------------------------------ */

static struct scmp_arg_cmp arg_cmp(const struct rule_arg *a, unsigned alt, const struct confine_needs *n)
{
	switch (a->kind) {
	case A_CLEAR:
		return (struct scmp_arg_cmp){ a->idx, SCMP_CMP_MASKED_EQ, a->vals[0], 0 };
	case A_SET:
		return (struct scmp_arg_cmp){ a->idx, SCMP_CMP_MASKED_EQ, a->vals[0], a->vals[0] };
	case A_PID:
		return (struct scmp_arg_cmp){ a->idx, SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)n->pid };
	case A_KICK:
		return (struct scmp_arg_cmp){ a->idx, SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)n->kick_signal };
	case A_API_DIR:
		return (struct scmp_arg_cmp){ a->idx, SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)n->api_dir_fd };
	case A_TTY:
		return (struct scmp_arg_cmp){ a->idx, SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)n->terminal_fd };
	default:
		return (struct scmp_arg_cmp){ a->idx, SCMP_CMP_MASKED_EQ, 0xffffffffu,
					      (uint32_t)a->vals[alt] };
	}
}

/* One libseccomp rule per value of the (at most one) argument with
 * alternatives; they are ORed, the arguments of each ANDed. */
static int add_rule(scmp_filter_ctx ctx, const struct seccomp_rule *r, const struct confine_needs *n)
{
	unsigned alts = 1, multi = 0;
	for (unsigned i = 0; i < r->nargs; i++) {
		if (r->args[i].nvals > 1) {
			if (alts > 1)
				return -EINVAL;   /* the table allows one list per rule */
			alts = r->args[i].nvals;
			multi = i;
		}
	}
	uint32_t action = r->enosys ? SCMP_ACT_ERRNO(ENOSYS) : SCMP_ACT_ALLOW;
	for (unsigned v = 0; v < alts; v++) {
		struct scmp_arg_cmp cmp[3];
		for (unsigned i = 0; i < r->nargs; i++)
			cmp[i] = arg_cmp(&r->args[i], i == multi ? v : 0, n);
		int rc = seccomp_rule_add_array(ctx, action, r->nr, r->nargs, cmp);
		/* The spawner gets a worker's and the control thread's rules,
		 * which may be the same: once is enough. */
		if (rc < 0 && rc != -EEXIST)
			return rc;
	}
	return 0;
}

/* The compiled program, read back from libseccomp (which writes it to an fd). */
static int export_prog(scmp_filter_ctx ctx, struct sock_fprog *out)
{
	int fd = memfd_create("minivmm-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = seccomp_export_bpf(ctx, fd);
	off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
	if (rc == 0 && (size <= 0 || size % (off_t)sizeof(struct sock_filter) ||
			size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS))
		rc = -E2BIG;
	struct sock_filter *insns = rc == 0 ? malloc((size_t)size) : NULL;
	if (rc == 0 && !insns)
		rc = -ENOMEM;
	if (rc == 0 && pread(fd, insns, (size_t)size, 0) != size)
		rc = -EIO;
	close(fd);
	if (rc) {
		free(insns);
		return rc;
	}
	out->filter = insns;
	out->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	return 0;
}

static int build_role(enum confine_role role, const struct confine_needs *n, uint32_t deny,
		      struct sock_fprog *out, struct vmm_err *err)
{
	scmp_filter_ctx ctx = seccomp_init(deny);
	if (!ctx)
		return vmm_err_set(err, ENOMEM, "seccomp: cannot start the %s list", confine_role_name(role));
	/* Another architecture's calls (int 0x80, x32) never pass; no_new_privs
	 * is confine_enter's job; a binary tree keeps long lists quick. */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
#ifdef MINIVMM_SANITIZED
	/* Sanitizer builds run VMs without filters (seccomp_effective_mode),
	 * but the unit tests install them: what the runtime does in every
	 * thread. It sets up and tears down an alternate signal stack at
	 * thread start and exit, and looks at it before every call to a
	 * noreturn function. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sigaltstack), 0);
	/* ASan finds a new thread's stack with pthread_getattr_np(), which
	 * asks for the thread's CPUs. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_getaffinity), 0);
	/* Its shadow memory is kept off huge pages (MADV_NOHUGEPAGE). */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(madvise), 0);
#endif
	unsigned mask = needs_mask(n);
	for (unsigned i = 0; rc == 0 && i < NR_RULES; i++) {
		if (!rule_applies(&rules[i], role, mask))
			continue;
		rc = add_rule(ctx, &rules[i], n);
		if (rc)
			rc = vmm_err_set(err, -rc, "seccomp: the %s list: rule for %s refused (%s)",
					 confine_role_name(role), rules[i].name, strerror(-rc));
	}
	if (rc == 0) {
		rc = export_prog(ctx, out);
		if (rc)
			rc = vmm_err_set(err, -rc, "seccomp: cannot compile the %s list: %s",
					 confine_role_name(role), strerror(-rc));
	}
	seccomp_release(ctx);
	return rc;
}

int seccomp_lists_build(struct confine *c, const struct confine_needs *n, enum minivmm_seccomp mode,
		  unsigned roles, struct vmm_err *err)
{
	uint32_t deny = mode == MINIVMM_SECCOMP_LOG ? SCMP_ACT_LOG : SCMP_ACT_KILL_PROCESS;
	for (unsigned r = 0; r < CONFINE_ROLES; r++) {
		c->prog[r] = (struct sock_fprog){ 0 };
		if (!(roles & R(r)))
			continue;
		int rc = build_role((enum confine_role)r, n, deny, &c->prog[r], err);
		if (rc) {
			seccomp_lists_free(c);
			return rc;
		}
	}
	return 0;
}

enum minivmm_seccomp seccomp_effective_mode(enum minivmm_seccomp asked)
{
#ifdef MINIVMM_SANITIZED
	(void)asked;
	return MINIVMM_SECCOMP_OFF;
#else
	return asked;
#endif
}

void seccomp_lists_free(struct confine *c)
{
	for (unsigned r = 0; r < CONFINE_ROLES; r++) {
		free(c->prog[r].filter);
		c->prog[r] = (struct sock_fprog){ 0 };
	}
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

unsigned seccomp_lists_count(enum confine_role role, const struct confine_needs *n, int *nrs,
			       unsigned max)
{
	int all[NR_RULES];
	unsigned count = 0;
	unsigned mask = needs_mask(n);
	for (unsigned i = 0; i < NR_RULES; i++) {
		if (!rule_applies(&rules[i], role, mask) || rules[i].enosys)
			continue;
		bool seen = false;
		for (unsigned j = 0; j < count && !seen; j++)
			seen = all[j] == rules[i].nr;
		if (!seen)
			all[count++] = rules[i].nr;
	}
	qsort(all, count, sizeof(all[0]), cmp_int);
	for (unsigned i = 0; i < count && i < max; i++)
		nrs[i] = all[i];
	return count;
}

/* ---- the table for people ------------------------------------------------ */

static void print_when(FILE *out, unsigned when)
{
	if (!when) {
		fputs("always", out);
		return;
	}
	const char *sep = "";
	for (unsigned b = 0; b < sizeof(when_names) / sizeof(when_names[0]); b++) {
		if (when & (1u << b)) {
			fprintf(out, "%s%s", sep, when_names[b]);
			sep = " or ";
		}
	}
}

/* Table cells: a '|' of "A | B" would end the cell. */
static void print_cell(FILE *out, const char *text)
{
	for (; *text; text++) {
		if (*text == '|')
			fputc('\\', out);
		fputc(*text, out);
	}
}

static void print_args(FILE *out, const struct seccomp_rule *r)
{
	if (r->enosys) {
		fputs("(fails with ENOSYS)", out);
		return;
	}
	if (!r->nargs) {
		fputs("any", out);
		return;
	}
	for (unsigned i = 0; i < r->nargs; i++) {
		const struct rule_arg *a = &r->args[i];
		fprintf(out, "%s%s ", i ? "; " : "", a->label);
		switch (a->kind) {
		case A_CLEAR: fputs("without ", out); break;
		case A_SET: fputs("with ", out); break;
		case A_ONE_OF: fputs(a->nvals > 1 ? "one of " : "= ", out); break;
		default: fputs("= ", out); break;
		}
		print_cell(out, a->text);
	}
}

void seccomp_lists_print(FILE *out)
{
	struct confine_needs all = { .net = true, .tap = true, .packet = true, .packet_mq = true,
				     .uring = true, .epoll = true, .drop_caps = true, .xdp = true,
				     .xdp_mq = true, .xdp_zero_copy = true, .tap_host = true };
	struct confine_needs tap_uring = { .net = true, .tap = true, .uring = true, .api_dir_fd = -1 };
	for (unsigned role = 0; role < CONFINE_ROLES; role++) {
		unsigned most = seccomp_lists_count(role, &all, NULL, 0);
		unsigned typical = seccomp_lists_count(role, &tap_uring, NULL, 0);
		fprintf(out, "#### %s: %u system calls at most, %u with one tap device and engine=uring\n\n",
			confine_role_name(role), most, typical);
		fputs("| system call | arguments | needed with | why |\n|---|---|---|---|\n", out);
		for (unsigned i = 0; i < NR_RULES; i++) {
			if (!(rule_roles(&rules[i]) & R(role)))
				continue;
			fprintf(out, "| %s | ", rules[i].name);
			print_args(out, &rules[i]);
			fputs(" | ", out);
			print_when(out, rules[i].when);
			fprintf(out, " | %s%s |\n", rules[i].why,
				role == CONFINE_SPAWNER && !(rules[i].roles & RL_SPAWNER)
					? " (for the threads it starts)" : "");
		}
		fputs("\n", out);
	}
}
