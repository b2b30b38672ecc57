/* SPDX-License-Identifier: Apache-2.0 */
/* kvm-hold: create one VM in the outer guest and keep it, doing nothing,
 * until the outer guest powers off (tests/linux/outer-init starts it once,
 * before any case).
 *
 * Why: KVM_CREATE_VM of the only VM flips the scheduler's preempt-notifier
 * static key (preempt_notifier_inc) and enables SVM on every CPU, and
 * destroying it flips the key back and disables SVM, each through
 * text_poke_bp and IPIs to the other CPU. Under QEMU TCG (the outer guest's
 * CPU) a CPU now and then keeps trapping on the int3 left at the key's site
 * in __schedule after the patch is done, with interrupts off, and the CPU
 * waiting for its IPI answer spins for ever: the whole outer guest wedges
 * (docs/linux-guests.md, "Outer guests that wedge as a VMM starts"). With
 * this VM alive, the inner VMMs' VMs are never the only one and nothing
 * is patched when they come and go. */
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		perror("kvm-hold: /dev/kvm");
		return 1;
	}
	int vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		perror("kvm-hold: KVM_CREATE_VM");
		return 1;
	}
	/* The parent returns once the VM exists, so /init goes on only then. */
	pid_t child = fork();
	if (child < 0) {
		perror("kvm-hold: fork");
		return 1;
	}
	if (child > 0)
		return 0;
	setsid();
	for (;;)
		pause();
}
