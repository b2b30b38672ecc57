/* SPDX-License-Identifier: Apache-2.0 */
/* Rate limits of the network devices: the values a configuration or a live
 * change may give (checked the same way for both), and the embedding API's
 * minivmm_net_set_rate_limit / _get_rate_limit. */
#ifndef MINIVMM_VMM_RATE_LIMITS_H
#define MINIVMM_VMM_RATE_LIMITS_H

#include "base/error.h"
#include "minivmm.h"

/* The largest size or burst (tokens) and refill time a bucket may have. */
#define RATE_LIMIT_MAX_TOKENS (1ull << 62)
#define RATE_LIMIT_MAX_REFILL_MS (24ull * 3600 * 1000)

/* 0, or -EINVAL with one line naming the bucket (`what` "--net tx" or
 * "net0 tx", then "-bw" or "-ops") and the value. */
int rate_limit_check(const struct minivmm_rate_limit *l, const char *what, struct vmm_err *err);

#endif
