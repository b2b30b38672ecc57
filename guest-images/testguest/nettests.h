/* SPDX-License-Identifier: Apache-2.0 */
/* Network tests over the virtio-net driver: net-echo, net-gen, net-sink,
 * net-duplex, net-up
 * (docs/testguest.md has the command line, output lines and exit codes). */
#ifndef TESTGUEST_NETTESTS_H
#define TESTGUEST_NETTESTS_H

void test_net_echo(void);
void test_net_gen(void);
void test_net_sink(void);
void test_net_duplex(void);
void test_net_up(void);

#endif
