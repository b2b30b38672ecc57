/* SPDX-License-Identifier: Apache-2.0 */
/* An embedding program with functions named like libminivmm's internals.
 * Linked against libminivmm (static or shared), it must link, and the
 * library must keep calling its own kvm_open and bus_add. */
#include <stdio.h>
#include <stdlib.h>

#include <minivmm.h>

int kvm_open(void);
int bus_add(void);
int vmm_err_set(void);
int guest_mem_init(void);

static int clashes;

int kvm_open(void) { clashes++; return -1; }
int bus_add(void) { clashes++; return -1; }
int vmm_err_set(void) { clashes++; return -1; }
int guest_mem_init(void) { clashes++; return -1; }

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: symbol_clash KERNEL\n");
		return 2;
	}
	struct minivmm_config cfg;
	minivmm_config_init(&cfg);
	cfg.kernel_path = argv[1];
	cfg.serial = MINIVMM_SERIAL_NONE;
	char err[256];
	struct minivmm *vm;
	if (minivmm_create(&cfg, &vm, err, sizeof(err)) < 0) {
		printf("symbol_clash: minivmm_create failed: %s\n", err);
		return 1;
	}
	minivmm_destroy(vm);
	if (clashes) {
		printf("symbol_clash: the library called the program's functions %d times\n", clashes);
		return 1;
	}
	printf("symbol_clash: the library used its own kvm_open and bus_add\n");
	return 0;
}
