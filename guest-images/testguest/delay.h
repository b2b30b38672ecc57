/* SPDX-License-Identifier: Apache-2.0 */
/* Time from the TSC: delays and timeouts as pause loops. The TSC rate comes
 * from CPUID (the hypervisor's timing leaf, Intel's 0x15/0x16), else it is
 * measured once against PIT channel 0. */
#ifndef TESTGUEST_DELAY_H
#define TESTGUEST_DELAY_H

#include <stdint.h>

void delay_init(void);
uint64_t tsc_hz(void);
/* TSC value `us` microseconds from now. */
uint64_t tsc_deadline_us(uint64_t us);
int tsc_passed(uint64_t deadline);
void delay_us(uint64_t us);
/* The TSC rate as the hypervisor's or CPU's CPUID leaves state it (0 if
 * none), and measured against PIT channel 0 (latched reads) or channel 2
 * (port 0x61, as Linux does): 0 when that PIT does not count. */
uint64_t tsc_cpuid_hz(void);
uint64_t pit_measure(void);
uint64_t pit_measure_ch2(void);

#endif
