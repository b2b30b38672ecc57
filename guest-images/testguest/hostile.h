/* SPDX-License-Identifier: Apache-2.0 */
/* test=net-hostile kind=K: misbehave towards the virtio-net device on
 * purpose, expect DEVICE_NEEDS_RESET, reset, recover, pass traffic
 * (docs/testguest.md, "Hostile guest tests"). */
#ifndef TESTGUEST_HOSTILE_H
#define TESTGUEST_HOSTILE_H

#define TG_EXIT_HOSTILE_SETUP          0x30    /* the kind cannot be staged (feature missing) -> 97 */
#define TG_EXIT_HOSTILE_NO_NEEDS_RESET 0x31    /* no NEEDS_RESET within 2 s (traffic passed) -> 99 */
#define TG_EXIT_HOSTILE_RESET          0x32    /* reset or bring-up after it failed, or NEEDS_RESET again -> 101 */
#define TG_EXIT_HOSTILE_CHECK          0x33    /* a kind's own check failed (CHECK FAILED lines) -> 103 */

void test_net_hostile(void);

#endif
