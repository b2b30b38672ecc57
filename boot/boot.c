/* SPDX-License-Identifier: Apache-2.0 */
/* boot_load: tell a bzImage from a PVH ELF by its bytes, load it, and write
 * the MP table every boot path needs. And the loaders' words for too little
 * RAM, in MiB with the --mem that would do. */
#include "boot/boot.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "boot/bzimage.h"
#include "boot/mptable.h"
#include "boot/pvh.h"
#include "minivmm.h"

#define BZIMAGE_MAGIC_OFF 0x202   /* "HdrS" in the setup header */
#define MIB (1ull << 20)

void boot_format_mib(uint64_t bytes, char *buf, size_t len)
{
	unsigned long long whole = bytes / MIB;
	/* Rounded up: "needs 44.1 MiB" must not read as less than it is. */
	uint64_t tenths = ((bytes % MIB) * 10 + MIB - 1) / MIB;
	if (tenths == 10) {
		whole++;
		tenths = 0;
	}
	if (tenths)
		snprintf(buf, len, "%llu.%u MiB", whole, (unsigned)tenths);
	else
		snprintf(buf, len, "%llu MiB", whole);
}

int boot_err_ram(struct vmm_err *err, int code, const char *what, uint64_t need, const char *how,
		 uint64_t have, uint64_t limit, const char *limit_what)
{
	char up[32], mib[32];
	boot_format_mib(need, up, sizeof(up));
	if (need > limit) {
		boot_format_mib(limit, mib, sizeof(mib));
		return vmm_err_set(err, code, "%s needs RAM up to %s%s; that is past %s at %s: no --mem can give it",
				   what, up, how, limit_what, mib);
	}
	/* RAM below the hole is all of --mem up to the hole: --mem need,
	 * rounded up as the validator wants it, reaches need. */
	uint64_t mem = (need + MINIVMM_MEM_ALIGN - 1) / MINIVMM_MEM_ALIGN * MINIVMM_MEM_ALIGN;
	if (mem < MINIVMM_MIN_MEM)
		mem = MINIVMM_MIN_MEM;
	boot_format_mib(have, mib, sizeof(mib));
	return vmm_err_set(err, code, "%s needs RAM up to %s%s; the guest has %s: use --mem %lluM or more",
			   what, up, how, mib, (unsigned long long)(mem / MIB));
}

int boot_err_initrd_ram(struct vmm_err *err, size_t size, uint64_t kernel_end, uint64_t need,
			uint64_t have, uint64_t limit, const char *limit_what)
{
	char what[48], end[32], how[64];
	boot_format_mib(size, end, sizeof(end));
	snprintf(what, sizeof(what), "initrd of %s", end);
	boot_format_mib(kernel_end, end, sizeof(end));
	snprintf(how, sizeof(how), " next to the kernel (up to %s)", end);
	return boot_err_ram(err, E2BIG, what, need, how, have, limit, limit_what);
}

int boot_load(const struct guest_mem *mem, const struct boot_request *req,
	      struct boot_entry *entry, struct vmm_err *err)
{
	const char *name = req->kernel_name ? req->kernel_name : "kernel";
	const uint8_t *k = req->kernel;
	size_t size = k ? req->kernel_size : 0;

	/* The MP table first: a bad CPU count fails before anything is loaded. */
	int ret = mptable_write(mem, req->ncpus, req->ioapic_id, req->ioapic_version, err);
	if (ret < 0)
		return ret;

	if (size >= BZIMAGE_MAGIC_OFF + 4 && memcmp(k + BZIMAGE_MAGIC_OFF, "HdrS", 4) == 0)
		return bzimage_load(mem, req, entry, err);
	if (size >= SELFMAG && memcmp(k, ELFMAG, SELFMAG) == 0)
		return pvh_load(mem, req, entry, err);
	return vmm_err_set(err, ENOEXEC, "%s: not a bzImage or ELF kernel", name);
}
