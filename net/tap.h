/* SPDX-License-Identifier: Apache-2.0 */
/* tap backend: one file descriptor per queue pair on one tap interface. */
#ifndef MINIVMM_NET_TAP_H
#define MINIVMM_NET_TAP_H

#include <net/if.h>
#include <stdbool.h>

#include "base/error.h"

/* Offloads the guest can take in (its GUEST_* features), as TUN_F_* bits. */
#define TAP_OFFLOAD_CSUM  0x01
#define TAP_OFFLOAD_TSO4  0x02
#define TAP_OFFLOAD_TSO6  0x04
#define TAP_OFFLOAD_ECN   0x08

/* Open one queue of tap `name` (created if absent; "" lets the kernel pick
 * "mvmtap%d"), with IFF_VNET_HDR and a 12-byte header. multi_queue selects
 * IFF_MULTI_QUEUE; for an existing tap it must match how the tap was made,
 * which is checked first with a clear error. The real name is stored in
 * name_out (IFNAMSIZ). */
int tap_open_queue(const char *name, bool multi_queue, char *name_out, struct vmm_err *err);

/* TUNSETOFFLOAD from TAP_OFFLOAD_* bits. */
int tap_set_offload(int fd, unsigned offloads, struct vmm_err *err);

/* Attach or detach a queue of a multiqueue tap (TUNSETQUEUE). */
int tap_set_queue_attached(int fd, bool attached, struct vmm_err *err);

/* Translate GUEST_* virtio-net feature bits into TAP_OFFLOAD_* bits. */
unsigned tap_offloads_from_features(unsigned long long guest_features);

#endif
