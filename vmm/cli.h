/* SPDX-License-Identifier: Apache-2.0 */
/* Command line of the minivmm program: flags to a struct minivmm_config.
 * Part of the program, not of libminivmm: text is parsed here, then the
 * result is checked by the library's minivmm_config_validate(). */
#ifndef MINIVMM_VMM_CLI_H
#define MINIVMM_VMM_CLI_H

#include <stdbool.h>
#include <sys/types.h>
#include <stdint.h>

#include "minivmm.h"
#include "base/error.h"

struct cli_options {
	struct minivmm_config vm;
	bool help;
	bool version;
	int stats;      /* 0 none, 1 table, 2 JSON: at exit and on SIGUSR1 */
	const char *stats_file;    /* --stats-file: JSON lines appended, NULL: none */
	const char *api_socket;    /* --api-socket: the HTTP API's Unix socket, NULL: none */
	gid_t api_gid;             /* --api-socket-group: the socket's group (mode 0660); -1: none (0600) */
	unsigned stats_interval;   /* --stats-interval: seconds between lines, 0: none */
	bool stats_interval_set;
	const char *dump_dtb;   /* --dump-dtb FILE: write the DTB and exit */
	int cpuid_dump; /* --cpuid-dump: enum minivmm_cpuid_dump_what, 0 none */
	bool seccomp_list;   /* --seccomp-list: print the allow-lists and exit */
	bool keep_caps;      /* --keep-caps: vm.drop_caps off (the default is on) */
	bool drop_caps_given;
};

#define CLI_STATS_INTERVAL_DEFAULT 60   /* seconds, as Firecracker flushes its metrics */

/* The full grammar, printed by --help. */
extern const char cli_usage[];

/* Parse argv and validate the result (unless --help or --version). Long
 * options only, by their whole names (no abbreviations), each value after
 * '=' or as the next argument ("--stats" and "--cpuid-dump": after '='
 * only); "--" ends the options. On error returns a negative errno with a
 * one-line message in err naming the flag and the problem; an unknown
 * option's names the nearest one when it is close. argv is left as it is. */
int cli_parse(int argc, char **argv, struct cli_options *opts, struct vmm_err *err);

/* "256M", "1G", "4096K", "2GiB" -> bytes; a number alone is MiB ("512"). */
int cli_parse_size(const char *text, uint64_t *bytes);

#endif
