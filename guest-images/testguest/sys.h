/* SPDX-License-Identifier: Apache-2.0 */
/* Ending the guest and asking CPL0 for help.
 *
 * Success ends with an i8042 reset (minivmm and QEMU -no-reboot exit 0).
 * Failure writes a code to the debug-exit port: the VMM exits with status
 * (code << 1) | 1. The codes below are documented in docs/testguest.md. */
#ifndef TESTGUEST_SYS_H
#define TESTGUEST_SYS_H

#include <stdint.h>

#define TG_EXIT_EXCEPTION       0x10    /* CPU exception (vector 0-31) -> status 33 */
#define TG_EXIT_UNEXPECTED_IRQ  0x11    /* interrupt on an unused vector -> 35 */
#define TG_EXIT_BAD_CMDLINE     0x12    /* unknown test or bad value -> 37 */
#define TG_EXIT_BAD_START_INFO  0x13    /* hvm_start_info magic wrong -> 39 */
#define TG_EXIT_SMP_TIMEOUT     0x14    /* test=smp: a vCPU never came up -> 41 */
#define TG_EXIT_NO_RESET        0x15    /* i8042 reset did not end the VM -> 43 */
#define TG_EXIT_NO_TRIPLE_FAULT 0x16    /* triple fault did not end the VM -> 45 */
#define TG_EXIT_RETURNED        0x17    /* main/ap_main/a test returned -> 47 */
#define TG_EXIT_CPUID_APIC      0x18    /* test=smp: CPUID's APIC ID is not the LAPIC's -> 49 */
#define TG_EXIT_IOAPIC_ID       0x19    /* test=smp: the IOAPIC's ID register and MP table differ -> 51 */

/* Write code to the debug-exit port, then park this vCPU. */
__attribute__((noreturn)) void tg_exit(uint32_t code);
/* Reset through the i8042 (success); tg_exit(TG_EXIT_NO_RESET) if we are
 * still running a second later. */
__attribute__((noreturn)) void tg_reset(void);
/* Park this vCPU: cli; hlt at CPL0, no host CPU used. */
__attribute__((noreturn)) void tg_halt(void);
/* CPUID executed at CPL0. Under PVM a CPL3 CPUID runs natively and
 * reports the host CPU; at CPL0 it reaches KVM, as on VMX/SVM. */
void tg_cpuid_cpl0(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c,
		   uint32_t *d);
/* Sleep in hlt at CPL0 until an interrupt comes, unless tg_net_irq_count
 * is no longer `seen` (then at once): the gate keeps interrupts off until
 * the hlt, so none is missed between the caller's look and the sleep. */
void tg_wait_irq(uint64_t seen);
/* Ask CPL0 to load an empty IDT and fault. */
void tg_triple_fault(void);

#endif
