/* SPDX-License-Identifier: Apache-2.0 */
/* two_vms: two VMs at once in one process, each with its own tap and
 * console file (docs/embedding.md).
 *
 *   two_vms KERNEL TAP0 CONSOLE0 TAP1 CONSOLE1
 *
 * With the project's test guest each VM is an echo server: VM k answers at
 * 10.0.<k+1>.2 (give TAPk the address 10.0.<k+1>.1/24) and ends when it
 * receives netpeer's stop datagram. The program waits for both and exits
 * 0 if both ended with status 0.
 *
 *   cc -o two_vms two_vms.c $(pkg-config --cflags --libs minivmm)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <minivmm.h>

struct vm_slot {
	const char *name;          /* "vm0" */
	char cmdline[128];
	struct minivmm *vm;
};

/* Each VM's log lines carry its name: the opaque pointer tells them apart. */
static void log_line(void *opaque, const char *line)
{
	const struct vm_slot *s = opaque;
	printf("two_vms: %s: %s\n", s->name, line);
	fflush(stdout);
}

static void vm_stopped(void *opaque, int status, const char *reason)
{
	const struct vm_slot *s = opaque;
	printf("two_vms: %s stopped: status %d (%s)\n", s->name, status, reason);
	fflush(stdout);
}

static int create(struct vm_slot *s, unsigned k, const char *kernel, const char *tap,
		  const char *console)
{
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	cfg.kernel_path = kernel;
	snprintf(s->cmdline, sizeof(s->cmdline), "test=net-echo ip=10.0.%u.2 secs=120", k + 1);
	cfg.cmdline = s->cmdline;
	cfg.mem_size = 32ull << 20;
	cfg.serial = MINIVMM_SERIAL_FILE;
	cfg.serial_path = console;
	cfg.log = log_line;
	cfg.log_opaque = s;
	cfg.on_stop = vm_stopped;
	cfg.on_stop_opaque = s;
	minivmm_net_config_init(&cfg.net[0]);
	snprintf(cfg.net[0].ifname, sizeof(cfg.net[0].ifname), "%s", tap);
	cfg.nr_nets = 1;
	char err[512];
	if (minivmm_create(&cfg, &s->vm, err, sizeof(err)) < 0) {
		fprintf(stderr, "two_vms: %s: %s\n", s->name, err);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: two_vms KERNEL TAP0 CONSOLE0 TAP1 CONSOLE1\n");
		return 2;
	}
	struct vm_slot vms[2] = { { .name = "vm0" }, { .name = "vm1" } };
	for (unsigned k = 0; k < 2; k++)
		if (create(&vms[k], k, argv[1], argv[2 + 2 * k], argv[3 + 2 * k]) < 0) {
			minivmm_destroy(vms[0].vm);
			return 1;
		}
	for (unsigned k = 0; k < 2; k++) {
		char err[256];
		if (minivmm_start(vms[k].vm, err, sizeof(err)) < 0) {
			fprintf(stderr, "two_vms: %s: %s\n", vms[k].name, err);
			return 1;
		}
	}
	printf("two_vms: both running\n");
	fflush(stdout);

	int bad = 0;
	for (unsigned k = 0; k < 2; k++) {
		int status = minivmm_wait(vms[k].vm);
		struct minivmm_net_stats s;
		struct minivmm_queue_stats q[1];
		minivmm_net_stats_init(&s, q, 1, NULL, 0);
		minivmm_net_stats(vms[k].vm, 0, &s);
		printf("two_vms: %s: exit status %d, %s %s rx %" PRIu64 " tx %" PRIu64 " frames\n",
		       vms[k].name, status, s.backend, s.ifname, q[0].rx_frames, q[0].tx_frames);
		bad |= status != MINIVMM_EXIT_OK;
	}
	for (unsigned k = 0; k < 2; k++)
		minivmm_destroy(vms[k].vm);
	printf("two_vms: %s\n", bad ? "a VM failed" : "both finished");
	return bad;
}
