/* SPDX-License-Identifier: Apache-2.0 */
/* minivmm --cpuid-dump[=guest|supported]: the guest's CPU model as this host
 * and KVM produce it, for comparing with another VMM (QEMU -cpu host) or
 * recording a host for the unit tests. */
#include "vmm/cpuid_dump.h"
#include "vmm/api_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "boot/cpu_x86.h"
#include "boot/cpuid.h"
#include "vmm/kvm.h"

/* The brand string leaves as text, leading blanks dropped. */
static void brand_text(const uint32_t words[12], char out[49])
{
	memcpy(out, words, 48);
	out[48] = '\0';
	size_t skip = strspn(out, " ");
	memmove(out, out + skip, strlen(out + skip) + 1);
}

static void print_header(FILE *out, const struct kvm *kvm, const char *what)
{
	struct utsname u;
	uint32_t brand[12];
	char text[49];
	if (uname(&u) != 0)
		strcpy(u.release, "?");
	cpuid_host_brand(brand);
	brand_text(brand, text);
	fprintf(out, "# minivmm --cpuid-dump=%s on Linux %s, host CPU \"%s\"\n", what, u.release, text);
	fprintf(out, "# vendor table: %s; KVM_CAP_TSC_DEADLINE_TIMER: %s\n",
		cpuid_vendor_name(cpuid_vendor_of(kvm->supported_cpuid)),
		kvm->tsc_deadline_timer ? "yes" : "no");
}

/* What KVM holds for the vCPU after KVM_SET_CPUID2 (KVM_GET_CPUID2). */
static struct kvm_cpuid2 *vcpu_get_cpuid(int vcpu_fd, unsigned room, struct vmm_err *err)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + room * sizeof(c->entries[0]));
	if (!c) {
		vmm_err_set(err, ENOMEM, "out of memory for CPUID");
		return NULL;
	}
	c->nent = room;
	if (ioctl(vcpu_fd, KVM_GET_CPUID2, c) < 0) {
		vmm_err_sys(err, errno, "KVM_GET_CPUID2");
		free(c);
		return NULL;
	}
	return c;
}

/* Registers KVM changed on its own at KVM_SET_CPUID2 (runtime bits). */
static void print_kvm_adjustments(FILE *out, const struct kvm_cpuid2 *set, const struct kvm_cpuid2 *held)
{
	static const char *const names[] = { "eax", "ebx", "ecx", "edx" };
	for (unsigned i = 0; i < held->nent; i++) {
		const struct kvm_cpuid_entry2 *h = &held->entries[i], *s = NULL;
		for (unsigned j = 0; j < set->nent && !s; j++)
			if (set->entries[j].function == h->function && set->entries[j].index == h->index)
				s = &set->entries[j];
		if (!s) {
			fprintf(out, "# 0x%08x.%u: added by KVM\n", h->function, h->index);
			continue;
		}
		const uint32_t a[] = { s->eax, s->ebx, s->ecx, s->edx }, b[] = { h->eax, h->ebx, h->ecx, h->edx };
		for (unsigned r = 0; r < 4; r++)
			if (a[r] != b[r])
				fprintf(out, "# 0x%08x.%u %s 0x%08x -> 0x%08x: changed by KVM after KVM_SET_CPUID2\n",
					h->function, h->index, names[r], a[r], b[r]);
	}
}

static void print_msrs(FILE *out, int vcpu_fd, const struct kvm *kvm)
{
	static const struct { uint32_t index; const char *name; } msrs[] = {
		{ MSR_IA32_MISC_ENABLE, "IA32_MISC_ENABLE" },
		{ MSR_MTRR_DEF_TYPE, "IA32_MTRR_DEF_TYPE" },
	};
	fprintf(out, "# boot MSRs (KVM's reset value -> what the guest starts with):\n");
	for (size_t i = 0; i < sizeof(msrs) / sizeof(msrs[0]); i++) {
		struct vmm_err e = { 0 };
		uint64_t before = 0;
		if (cpu_x86_get_msr(vcpu_fd, msrs[i].index, &before, &e)) {
			fprintf(out, "#   %s (0x%x): not readable: %s\n", msrs[i].name, msrs[i].index, e.msg);
			continue;
		}
		struct kvm_msr_entry entries[CPU_X86_BOOT_MSRS];
		unsigned n = cpu_x86_boot_msrs(kvm->supported_cpuid, kvm->msr_list, before, entries);
		uint64_t after = before;
		const char *note = "untouched";
		for (unsigned j = 0; j < n; j++)
			if (entries[j].index == msrs[i].index) {
				after = entries[j].data;
				note = "set";
			}
		fprintf(out, "#   %s (0x%x): 0x%llx -> 0x%llx (%s)\n", msrs[i].name, msrs[i].index,
			(unsigned long long)before, (unsigned long long)after, note);
	}
}

static int dump_guest(FILE *out, struct kvm *kvm, unsigned ncpus, struct vmm_err *err)
{
	int vcpu_fd = ioctl(kvm->vm_fd, KVM_CREATE_VCPU, 0);
	if (vcpu_fd < 0)
		return vmm_err_sys(err, errno, "KVM_CREATE_VCPU 0");
	const struct kvm_cpuid2 *sup = kvm->supported_cpuid;
	enum cpuid_vendor v = cpuid_vendor_of(sup);
	struct kvm_cpuid2 *guest = cpu_x86_guest_cpuid(vcpu_fd, sup, kvm->tsc_deadline_timer, 0, ncpus, err);
	struct kvm_cpuid2 *held = NULL;
	int rc = guest ? 0 : -ENOMEM;
	if (rc == 0 && ioctl(vcpu_fd, KVM_SET_CPUID2, guest) < 0)
		rc = vmm_err_sys(err, errno, "KVM_SET_CPUID2 refused the guest CPUID");
	if (rc == 0 && !(held = vcpu_get_cpuid(vcpu_fd, sup->nent + CPUID_MAX_ADDED, err)))
		rc = err && err->code ? -err->code : -EIO;
	if (rc == 0) {
		print_header(out, kvm, "guest");
		fprintf(out, "# the CPUID of vCPU 0 of %u (one socket, %u core%s, one thread each), as KVM holds it\n",
			ncpus, ncpus, ncpus == 1 ? "" : "s");
		fprintf(out, "# function index eax ebx ecx edx flags\n");
		cpuid_print(out, held);
		fprintf(out, "# changes from KVM_GET_SUPPORTED_CPUID, and the table lines behind them:\n");
		unsigned n = cpuid_print_changes(out, sup, guest, v);
		fprintf(out, "# %u change%s\n", n, n == 1 ? "" : "s");
		fprintf(out, "# KVM_GET_CPUID2 against what minivmm set (KVM's runtime bits: OSXSAVE, APIC, XSAVE size):\n");
		print_kvm_adjustments(out, guest, held);
		print_msrs(out, vcpu_fd, kvm);
	}
	free(held);
	free(guest);
	close(vcpu_fd);
	return rc;
}

int cpuid_dump(FILE *out, enum cpuid_dump_what what, unsigned ncpus, struct vmm_err *err)
{
	struct kvm kvm;
	int rc = kvm_open(&kvm, false, err);
	if (rc == 0 && what == CPUID_DUMP_SUPPORTED) {
		print_header(out, &kvm, "supported");
		fprintf(out, "# KVM_GET_SUPPORTED_CPUID, unchanged\n# function index eax ebx ecx edx flags\n");
		cpuid_print(out, kvm.supported_cpuid);
	} else if (rc == 0) {
		rc = dump_guest(out, &kvm, ncpus ? ncpus : 1, err);
	}
	kvm_close(&kvm);
	if (rc == 0 && (fflush(out) != 0 || ferror(out)))
		rc = vmm_err_sys(err, errno, "cannot write the CPUID dump");
	return rc;
}

int minivmm_cpuid_dump(FILE *out, enum minivmm_cpuid_dump_what what, unsigned ncpus, char *errbuf,
		       size_t errlen)
{
	API_REQUIRE(out);
	struct vmm_err err = { 0 };
	int rc;
	if (what != MINIVMM_CPUID_DUMP_GUEST && what != MINIVMM_CPUID_DUMP_SUPPORTED)
		rc = vmm_err_set(&err, EINVAL, "--cpuid-dump: %d is not guest or supported", (int)what);
	else if (ncpus > MINIVMM_MAX_CPUS)
		rc = vmm_err_set(&err, EINVAL, "--cpus: '%u' is not a number from 1 to %d", ncpus,
				 MINIVMM_MAX_CPUS);
	else
		rc = cpuid_dump(out, (enum cpuid_dump_what)what, ncpus, &err);
	if (rc)
		api_errbuf(errbuf, errlen, "%s", err.msg);
	return rc;
}
