/* SPDX-License-Identifier: Apache-2.0 */
/* The library's side of configuration: defaults and the validator behind
 * minivmm_config_validate().
 *
 * Text never reaches the library: the minivmm program parses its command
 * line into a struct minivmm_config (vmm/cli.c, vmm/net_config.c) and then
 * calls the same validator minivmm_create() calls, so a value out of range
 * gets the same one line whether it came from --net or from an embedding
 * program. Each field has its own check function in one table (config.c):
 * a new key is one more function. Messages name the command-line option
 * of the field ("--net queues: '17' is not a number from 1 to 16"). */
#ifndef MINIVMM_VMM_CONFIG_H
#define MINIVMM_VMM_CONFIG_H

#include <sched.h>
#include <stdint.h>

#include "base/error.h"
#include "minivmm.h"

/* The whole config. Returns 0 or -EINVAL with err set. */
int config_validate(const struct minivmm_config *cfg, struct vmm_err *err);

/* One network device on its own (no cross-device checks). */
int config_validate_net(const struct minivmm_net_config *net, struct vmm_err *err);

/* Every CPU of cpus[0..n) is in `allowed`; `what` names the option
 * ("--net cpus", "--cpus pin") in the message. */
int config_check_cpus_allowed(const char *what, const int *cpus, unsigned n,
			      const cpu_set_t *allowed, struct vmm_err *err);

/* A byte count the way a user writes it, exactly: "3M", "1G", "1025K",
 * "1000" (the largest unit that divides it). */
void config_format_size(uint64_t bytes, char *buf, size_t len);

/* "SIGRTMIN+1", "SIGUSR2", "signal 99". */
void config_signal_name(int sig, char *buf, size_t len);

/* --net threads: the words both the CLI's parser (threads=0) and the
 * validator (threads above the limit) use. */
#define CONFIG_NET_THREADS_MSG "--net threads: '%s' is not auto, per-queue or a number from 1 to %d"

/* --timeout: the same, for the CLI's parser (0, text, negative or too large
 * for a number) and the validator (above MINIVMM_TIMEOUT_MAX_SECS). */
#define CONFIG_TIMEOUT_MSG "--timeout: '%s' is not a number of seconds from 1 to %d"

#endif
