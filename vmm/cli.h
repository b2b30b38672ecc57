/* SPDX-License-Identifier: Apache-2.0 */
/* Command line of the minivmm program: flags to a struct minivmm_config.
 * Part of the program, not of libminivmm: text is parsed here, then the
 * result is checked by the library's minivmm_config_validate(). */
#ifndef MINIVMM_VMM_CLI_H
#define MINIVMM_VMM_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "minivmm.h"
#include "base/error.h"

struct cli_options {
	struct minivmm_config vm;
	bool help;
	bool version;
	int stats;      /* 0 none, 1 table, 2 JSON: at exit and on SIGUSR1 */
	const char *dump_dtb;   /* --dump-dtb FILE: write the DTB and exit */
	int cpuid_dump; /* --cpuid-dump: enum minivmm_cpuid_dump_what, 0 none */
	bool seccomp_list;   /* --seccomp-list: print the allow-lists and exit */
};

/* The full grammar, printed by --help. */
extern const char cli_usage[];

/* Parse argv and validate the result (unless --help or --version). On
 * error returns a negative errno with a one-line message in err naming the
 * flag and the problem. */
int cli_parse(int argc, char **argv, struct cli_options *opts, struct vmm_err *err);

/* "256M", "1G", "4096K", "1048576" -> bytes. */
int cli_parse_size(const char *text, uint64_t *bytes);

#endif
