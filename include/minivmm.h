/* minivmm embedding API.
 *
 * A program links libminivmm.a, fills a struct minivmm_config, creates a VM
 * and runs it. Nothing here is global: several VMs may live in one process.
 * The minivmm command itself is a thin main() over this API. */
#ifndef MINIVMM_H
#define MINIVMM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum minivmm_serial_mode {
	MINIVMM_SERIAL_STDIO,   /* guest console on serial_out_fd, input from serial_in_fd */
	MINIVMM_SERIAL_NONE,    /* discard output, no input */
	MINIVMM_SERIAL_FILE,    /* output appended to serial_path, no input */
};

enum minivmm_net_backend {
	MINIVMM_NET_TAP,      /* a tap device, one fd (IFF_MULTI_QUEUE queue) per queue pair */
	MINIVMM_NET_PACKET,   /* AF_PACKET sockets bound to a host interface */
};

enum minivmm_net_engine {
	MINIVMM_ENGINE_URING, /* io_uring loop (default) */
	MINIVMM_ENGINE_EPOLL, /* epoll + readv/writev: the baseline */
};

/* System-call filters on the VMM's threads (docs/security.md). */
enum minivmm_seccomp {
	MINIVMM_SECCOMP_ON,   /* default: a thread making a call its list lacks kills the process */
	MINIVMM_SECCOMP_OFF,  /* no filters (one line says so) */
	MINIVMM_SECCOMP_LOG,  /* such calls are logged by the kernel (audit, dmesg) and allowed */
};

#define MINIVMM_MAX_NETS 8
#define MINIVMM_MAX_QUEUE_PAIRS 16

struct minivmm_net_config {
	enum minivmm_net_backend backend;
	char ifname[16];          /* tap name ("" creates one) or host interface */
	unsigned queues;          /* queue pairs, 1..MINIVMM_MAX_QUEUE_PAIRS */
	unsigned threads;         /* worker threads; 0 = one per queue pair */
	int cpus[MINIVMM_MAX_QUEUE_PAIRS];   /* worker i runs on cpus[i] */
	unsigned nr_cpus;         /* 0 = workers not pinned */
	unsigned char mac[6];
	int mac_set;              /* else a stable MAC is derived from the interface name */
	unsigned mtu;             /* advertised to the guest (VIRTIO_NET_F_MTU) */
	unsigned queue_size;      /* virtqueue size offered, power of two */
	enum minivmm_net_engine engine;
	unsigned poll_us;         /* busy-poll before blocking, microseconds */
	/* packet backend only */
	unsigned fanout;          /* PACKET_FANOUT_HASH (0), _LB (1), _CPU (2), _QM (5) */
	int rx_recv;              /* 0: TPACKET_V3 ring (default); 1: readv per frame */
	int qdisc_bypass;         /* PACKET_QDISC_BYPASS on transmit (default 1) */
};

struct minivmm_config {
	const char *kernel_path;     /* bzImage or PVH ELF (required) */
	const char *initrd_path;     /* NULL for none */
	const char *cmdline;         /* kernel command line; NULL for the default */
	unsigned ncpus;              /* vCPUs, 1..MINIVMM_MAX_CPUS */
	uint64_t mem_size;           /* bytes of guest RAM, multiple of 2 MiB */

	enum minivmm_serial_mode serial;
	const char *serial_path;     /* MINIVMM_SERIAL_FILE */
	int serial_in_fd;            /* MINIVMM_SERIAL_STDIO (default 0, -1 for none) */
	int serial_out_fd;           /* MINIVMM_SERIAL_STDIO (default 1) */

	struct minivmm_net_config net[MINIVMM_MAX_NETS];
	unsigned nr_nets;

	/* ACPI tables (RSDP, XSDT, FADT, MADT, DSDT with every virtio-mmio
	 * device) for kernels that find devices only through ACPI; 0 leaves
	 * the MP table and the cmdline entries alone. Default 1. */
	int acpi;

	/* vCPU i runs on vcpu_cpus[i] when nr_vcpu_cpus > 0. */
	int vcpu_cpus[64];
	unsigned nr_vcpu_cpus;

	/* Where informational lines go (boot time, warnings). NULL: stderr. */
	void (*log)(void *opaque, const char *line);
	void *log_opaque;

	/* Confinement (docs/security.md). seccomp: every thread of the VM
	 * installs the filter of its kind once set up, before it runs anything
	 * the guest drives. That includes the thread calling minivmm_run(), for
	 * the rest of its life: run the VM on a thread of its own. The log
	 * callback runs on confined threads and may only make the calls they
	 * allow (write, futex). Default MINIVMM_SECCOMP_ON.
	 * drop_caps: each thread then keeps only the capabilities its kind
	 * needs (none, but CAP_NET_ADMIN/CAP_NET_RAW where a backend is
	 * reopened). Default 0. */
	enum minivmm_seccomp seccomp;
	int drop_caps;

	/* CLOCK_MONOTONIC ns at which "the VMM started", for the boot timer;
	 * 0 means when minivmm_create() was called. */
	uint64_t start_ns;
};

#define MINIVMM_MAX_CPUS 64
#define MINIVMM_DEFAULT_MEM (256ull << 20)
#define MINIVMM_DEFAULT_CMDLINE "console=ttyS0 reboot=k panic=-1"

struct minivmm;

/* Fill cfg with defaults: 1 vCPU, 256 MiB, serial on stdio, no network. */
void minivmm_config_init(struct minivmm_config *cfg);

/* Defaults for one network device: tap, 1 queue pair, io_uring, MTU 1500. */
void minivmm_net_config_init(struct minivmm_net_config *net);

/* Print per-queue statistics of every network device: a table, or JSON. */
void minivmm_print_stats(struct minivmm *vm, FILE *out, int json);

/* Build the VM (KVM, memory, devices, kernel loaded) but do not run it.
 * On failure returns a negative errno and writes one line into errbuf. */
int minivmm_create(const struct minivmm_config *cfg, struct minivmm **vm,
		   char *errbuf, size_t errlen);

/* Run until the guest stops or minivmm_request_stop() is called. Returns the
 * exit status (see minivmm_abi.h: 0 reset/poweroff, odd = debug-exit,
 * 4 guest crash, 6 host error). Call once. */
int minivmm_run(struct minivmm *vm);

/* Ask a running VM to stop with `status`; safe from any thread or a signal
 * handling thread. The first stop request wins. */
void minivmm_request_stop(struct minivmm *vm, int status, const char *reason);

/* Why the VM stopped (may span several lines, e.g. registers of a crashed
 * vCPU); "" if it has not stopped. */
const char *minivmm_stop_reason(const struct minivmm *vm);

void minivmm_destroy(struct minivmm *vm);

/* Write the VM's flattened device tree (the DTB a PVH guest receives as a
 * boot module; docs/boot.md) to the file at path, replacing it. Returns 0,
 * or a negative errno with one line in errbuf. */
int minivmm_write_dtb(const struct minivmm *vm, const char *path, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
