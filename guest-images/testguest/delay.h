/* Time from the TSC: delays and timeouts as pause loops. The TSC rate is
 * measured once against PIT channel 2 (CPUID leaves 0x15/0x16 as fallback). */
#ifndef TESTGUEST_DELAY_H
#define TESTGUEST_DELAY_H

#include <stdint.h>

void delay_init(void);
uint64_t tsc_hz(void);
/* TSC value `us` microseconds from now. */
uint64_t tsc_deadline_us(uint64_t us);
int tsc_passed(uint64_t deadline);
void delay_us(uint64_t us);

#endif
