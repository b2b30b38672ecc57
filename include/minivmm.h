/* minivmm embedding API.
 *
 * A program links libminivmm.a, fills a struct minivmm_config, creates a VM
 * and runs it. Nothing here is global: several VMs may live in one process.
 * The minivmm command itself is a thin main() over this API. */
#ifndef MINIVMM_H
#define MINIVMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum minivmm_serial_mode {
	MINIVMM_SERIAL_STDIO,   /* guest console on serial_out_fd, input from serial_in_fd */
	MINIVMM_SERIAL_NONE,    /* discard output, no input */
	MINIVMM_SERIAL_FILE,    /* output appended to serial_path, no input */
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

	/* Where informational lines go (boot time, warnings). NULL: stderr. */
	void (*log)(void *opaque, const char *line);
	void *log_opaque;

	/* CLOCK_MONOTONIC ns at which "the VMM started", for the boot timer;
	 * 0 means when minivmm_create() was called. */
	uint64_t start_ns;
};

#define MINIVMM_MAX_CPUS 64
#define MINIVMM_DEFAULT_MEM (256ull << 20)
#define MINIVMM_DEFAULT_CMDLINE "console=ttyS0 reboot=k panic=-1"

struct minivmm;

/* Fill cfg with defaults: 1 vCPU, 256 MiB, serial on stdio. */
void minivmm_config_init(struct minivmm_config *cfg);

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

#ifdef __cplusplus
}
#endif

#endif
