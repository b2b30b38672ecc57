/* SPDX-License-Identifier: Apache-2.0 */
/* boot_load: tell a bzImage from a PVH ELF by its bytes, load it, and write
 * the MP table every boot path needs. */
#include "boot/boot.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "boot/bzimage.h"
#include "boot/mptable.h"
#include "boot/pvh.h"

#define BZIMAGE_MAGIC_OFF 0x202   /* "HdrS" in the setup header */

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
