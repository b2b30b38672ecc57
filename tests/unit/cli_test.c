/* SPDX-License-Identifier: Apache-2.0 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmm/cli.h"
#include "vmm/cpuid_dump.h"
#include "vmm/net_config.h"

#define ARGV(...) ((char *[]){ "minivmm", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "minivmm", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, e, ...) cli_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (o), (e))

Test(cli, defaults_when_only_kernel_given)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k"), 0);
	cr_assert_str_eq(o.vm.kernel_path, "k");
	cr_assert_eq(o.vm.ncpus, 1);
	cr_assert_eq(o.vm.mem_size, 256ull << 20);
	cr_assert_eq(o.vm.serial, MINIVMM_SERIAL_STDIO);
	cr_assert_null(o.vm.cmdline);
}

Test(cli, parses_every_flag)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--initrd", "i", "--cmdline", "a b",
			   "--cpus", "4", "--mem", "1G", "--serial", "file:/tmp/x"), 0);
	cr_assert_str_eq(o.vm.initrd_path, "i");
	cr_assert_str_eq(o.vm.cmdline, "a b");
	cr_assert_eq(o.vm.ncpus, 4);
	cr_assert_eq(o.vm.mem_size, 1ull << 30);
	cr_assert_eq(o.vm.serial, MINIVMM_SERIAL_FILE);
	cr_assert_str_eq(o.vm.serial_path, "/tmp/x");
}

Test(cli, help_needs_no_kernel)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--help"), 0);
	cr_assert(o.help);
}

Test(cli, cpuid_dump_needs_no_kernel_and_takes_cpus)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--cpuid-dump"), 0);
	cr_assert_eq(o.cpuid_dump, CPUID_DUMP_GUEST);
	cr_assert_eq(PARSE(&o, &e, "--cpuid-dump=guest", "--cpus", "4"), 0);
	cr_assert_eq(o.cpuid_dump, CPUID_DUMP_GUEST);
	cr_assert_eq(o.vm.ncpus, 4);
	cr_assert_eq(PARSE(&o, &e, "--cpuid-dump=supported"), 0);
	cr_assert_eq(o.cpuid_dump, CPUID_DUMP_SUPPORTED);
	cr_assert_lt(PARSE(&o, &e, "--cpuid-dump=host"), 0);
	cr_assert_str_eq(e.msg, "--cpuid-dump: 'host' is not guest or supported");
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k"), 0);
	cr_assert_eq(o.cpuid_dump, CPUID_DUMP_NONE, "off by default");
}

Test(cli, rejects_with_messages_naming_the_flag)
{
	static const struct { const char *flag, *value, *want; } cases[] = {
		{ "--cpus", "0", "--cpus: '0' is not a number from 1 to 64" },
		{ "--cpus", "65", "--cpus: '65' is not a number from 1 to 64" },
		{ "--cpus", "-1", "--cpus: '-1'" },
		{ "--cpus", "2x", "--cpus: '2x'" },
		{ "--mem", "lots", "--mem: 'lots' is not a size" },
		{ "--mem", "3M", "must be at least 16M and a multiple of 2M" },
		{ "--mem", "33M", "must be at least 16M and a multiple of 2M" },
		{ "--serial", "pty", "--serial: 'pty' is not one of stdio|none|file:PATH" },
		{ "--serial", "file:", "--serial: 'file:'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_options o;
		struct vmm_err e = { 0 };
		char *argv[] = { "minivmm", "--kernel", "k", (char *)cases[i].flag,
				 (char *)cases[i].value, NULL };
		cr_assert_lt(cli_parse(5, argv, &o, &e), 0, "%s %s accepted", cases[i].flag, cases[i].value);
		cr_assert(strstr(e.msg, cases[i].want), "message '%s' lacks '%s'", e.msg, cases[i].want);
	}
}

Test(cli, rejects_unknown_option_missing_value_and_stray_argument)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--frobnicate"), 0);
	cr_assert_str_eq(e.msg, "unknown option '--frobnicate'");
	cr_assert_lt(PARSE(&o, &e, "--kernel"), 0);
	cr_assert_str_eq(e.msg, "--kernel needs a value");
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "stray"), 0);
	cr_assert_str_eq(e.msg, "unexpected argument 'stray'");
	cr_assert_lt(PARSE(&o, &e, "--cpus", "2"), 0);
	cr_assert_str_eq(e.msg, "--kernel PATH is required");
}

/* arg first, then "X --kernel k": refused with exactly want. */
static void expect_option_refused(const char *arg, const char *want)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	char *argv[] = { "minivmm", (char *)arg, "X", "--kernel", "k", NULL };
	cr_assert_eq(cli_parse(5, argv, &o, &e), -EINVAL, "%s accepted", arg);
	cr_assert_str_eq(e.msg, want);
}

/* There are no short options: "-k X" used to say "-k needs a value", and
 * any unknown short option the same. */
Test(cli, unknown_options_are_named_as_given)
{
	expect_option_refused("-k", "unknown option '-k'");
	expect_option_refused("-z", "unknown option '-z'");
	expect_option_refused("-h", "unknown option '-h'");
	expect_option_refused("-m512", "unknown option '-m'");
	expect_option_refused("-kernel", "unknown option '-kernel'; did you mean '--kernel'?");
	expect_option_refused("--frobnicate", "unknown option '--frobnicate'");
	expect_option_refused("--cpu", "unknown option '--cpu'; did you mean '--cpus'?");
	expect_option_refused("--cpu=2", "unknown option '--cpu'; did you mean '--cpus'?");
	expect_option_refused("--seccom=off", "unknown option '--seccom'; did you mean '--seccomp'?");
	expect_option_refused("--drop_caps", "unknown option '--drop_caps'; did you mean '--drop-caps'?");
	expect_option_refused("--=x", "unknown option '--=x'");
}

/* getopt_long took any unique prefix ("--kern"): a new option sharing it
 * would have changed what an old command line meant. */
Test(cli, only_whole_option_names_are_taken)
{
	expect_option_refused("--kern", "unknown option '--kern'; did you mean '--kernel'?");
	expect_option_refused("--mem-over", "unknown option '--mem-over'; did you mean '--mem-overcommit'?");
	expect_option_refused("--v", "unknown option '--v'; did you mean '--version'?");
	expect_option_refused("--he", "unknown option '--he'; did you mean '--help'?");
	expect_option_refused("--s", "unknown option '--s'");
}

/* "--drop-caps=yes" used to say "--drop-caps=yes needs a value". */
Test(cli, value_errors_name_the_option)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_lt(PARSE(&o, &e, "--drop-caps=yes", "--kernel", "k"), 0);
	cr_assert_str_eq(e.msg, "--drop-caps takes no value");
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--boot-trace=1"), 0);
	cr_assert_str_eq(e.msg, "--boot-trace takes no value");
	cr_assert_lt(PARSE(&o, &e, "--help="), 0);
	cr_assert_str_eq(e.msg, "--help takes no value");
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--mem"), 0);
	cr_assert_str_eq(e.msg, "--mem needs a value");
	cr_assert_eq(PARSE(&o, &e, "--kernel=k", "--mem=1G", "--cmdline", "--x"), 0, "%s", e.msg);
	cr_assert_str_eq(o.vm.kernel_path, "k");
	cr_assert_str_eq(o.vm.cmdline, "--x", "a separate value is taken as it is");
	cr_assert_eq(o.vm.mem_size, 1ull << 30);
}

Test(cli, double_dash_ends_the_options)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--"), 0, "%s", e.msg);
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--", "--mem"), 0);
	cr_assert_str_eq(e.msg, "unexpected argument '--mem'");
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "-"), 0);
	cr_assert_str_eq(e.msg, "unexpected argument '-'");
	cr_assert_lt(PARSE(&o, &e, "stray", "--kernel", "k"), 0);
	cr_assert_str_eq(e.msg, "unexpected argument 'stray'");
}

Test(cli, size_suffixes)
{
	uint64_t b;
	cr_assert_eq(cli_parse_size("4096", &b), 0);
	cr_assert_eq(b, 4096ull << 20, "no suffix: MiB, as QEMU and kvmtool");
	cr_assert_eq(cli_parse_size("512", &b), 0);
	cr_assert_eq(b, 512ull << 20);
	cr_assert_eq(cli_parse_size("0", &b), 0);
	cr_assert_eq(b, 0, "the validator's to refuse");
	cr_assert_eq(cli_parse_size("64K", &b), 0);
	cr_assert_eq(b, 64 << 10);
	cr_assert_eq(cli_parse_size("256M", &b), 0);
	cr_assert_eq(b, 256 << 20);
	cr_assert_eq(cli_parse_size("2GiB", &b), 0);
	cr_assert_eq(b, 2ull << 30);
	cr_assert_lt(cli_parse_size("", &b), 0);
	cr_assert_lt(cli_parse_size("M", &b), 0);
	cr_assert_lt(cli_parse_size("1Q", &b), 0);
	cr_assert_lt(cli_parse_size("-1M", &b), 0);
	cr_assert_lt(cli_parse_size(" -1", &b), 0);
	cr_assert_lt(cli_parse_size(" 512", &b), 0);
	cr_assert_lt(cli_parse_size("99999999999999999999T", &b), 0);
	cr_assert_lt(cli_parse_size("20000000T", &b), 0);   /* overflows 64 bits */
	cr_assert_lt(cli_parse_size("17592186044416", &b), 0, "2^44 MiB overflows 64 bits");
	cr_assert_eq(cli_parse_size("17592186044415", &b), 0);
	cr_assert_lt(cli_parse_size("512iB", &b), 0, "iB only after a suffix");
	cr_assert_lt(cli_parse_size("512B", &b), 0);
	cr_assert_eq(cli_parse_size("64kib", &b), 0);
	cr_assert_eq(b, 64 << 10);
}

/* A second --kernel used to win silently. Every option but --net (one
 * device each) may be given once; the message names both values. */
Test(cli, single_valued_options_given_twice_are_refused)
{
	static const struct { const char *flag, *a, *b, *want; } cases[] = {
		{ "--kernel", "A", "B", "--kernel given twice ('A' and 'B')" },
		{ "--initrd", "i", "j", "--initrd given twice ('i' and 'j')" },
		{ "--cmdline", "x", "y", "--cmdline given twice" },
		{ "--cpus", "2", "3", "--cpus given twice ('2' and '3')" },
		{ "--mem", "64M", "128M", "--mem given twice ('64M' and '128M')" },
		{ "--serial", "none", "stdio", "--serial given twice" },
		{ "--acpi", "on", "off", "--acpi given twice" },
		{ "--irqchip", "split", "kernel", "--irqchip given twice" },
		{ "--timeout", "1", "2", "--timeout given twice ('1' and '2')" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_options o;
		struct vmm_err e = { 0 };
		char *argv[] = { "minivmm", "--kernel", "k", (char *)cases[i].flag, (char *)cases[i].a,
				 (char *)cases[i].flag, (char *)cases[i].b, NULL };
		char **args = argv;
		int argc = 7;
		if (strcmp(cases[i].flag, "--kernel") == 0) {
			args = argv + 2;   /* "--kernel A --kernel B" alone */
			args[0] = "minivmm";
			argc = 5;
		}
		cr_assert_lt(cli_parse(argc, args, &o, &e), 0, "%s twice accepted", cases[i].flag);
		cr_assert(strstr(e.msg, cases[i].want), "message '%s' lacks '%s'", e.msg, cases[i].want);
	}
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--stats", "--stats=json"), 0);
	cr_assert(strstr(e.msg, "--stats given twice"), "%s", e.msg);
}

Test(cli, net_repeats_one_device_each)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--net", "tap=a", "--net", "tap=b,queues=2"), 0,
		     "%s", e.msg);
	cr_assert_eq(o.vm.nr_nets, 2);
	cr_assert_str_eq(o.vm.net[1].ifname, "b");
	cr_assert_eq(o.vm.net[1].queues, 2);
}

/* "--net tap=t0 --net tap=t0" used to reach the tap code, which said the
 * tap was "already in use by another process". */
Test(cli, the_same_tap_for_two_devices_is_refused)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--net", "tap=t0", "--net", "tap=t0"), 0);
	cr_assert_str_eq(e.msg, "--net tap=t0 is given for both net0 and net1: each device needs its own tap");
	/* New taps ("tap" alone) are each their own. */
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--net", "tap", "--net", "tap"), 0, "%s", e.msg);
}

Test(cli, empty_net_value_is_refused)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--net", ""), 0);
	cr_assert(strstr(e.msg, "--net: empty value"), "%s", e.msg);
}

/* The parser turns text into numbers; ranges are the library validator's,
 * so these are exactly the lines minivmm_config_validate() gives. */
Test(cli, range_errors_are_the_validators_words)
{
	static const struct { const char *flag, *value; } cases[] = {
		{ "--net", "queues=17" }, { "--net", "mtu=1" }, { "--net", "queue-size=300" },
		{ "--net", "poll-us=2000000" }, { "--net", "threads=17,queues=16" },
		{ "--net", "queues=2,threads=3" }, { "--cpus", "65" }, { "--cpus", "2,pin=0" },
		{ "--mem", "33M" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_options o;
		struct vmm_err e = { 0 };
		char *argv[] = { "minivmm", "--kernel", "k", (char *)cases[i].flag,
				 (char *)cases[i].value, NULL };
		cr_assert_lt(cli_parse(5, argv, &o, &e), 0, "%s %s accepted", cases[i].flag, cases[i].value);
		char lib[256];
		cr_assert_lt(minivmm_config_validate(&o.vm, lib, sizeof(lib)), 0);
		cr_assert_str_eq(e.msg, lib, "%s %s", cases[i].flag, cases[i].value);
	}
}

Test(cli, mem_without_a_suffix_is_mib)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--mem", "512"), 0, "%s", e.msg);
	cr_assert_eq(o.vm.mem_size, 512ull << 20);
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--mem", "8"), 0);
	cr_assert_str_eq(e.msg, "--mem: '8M' must be at least 16M and a multiple of 2M");
}

Test(cli, mem_overcommit_flag)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--mem", "1T", "--mem-overcommit"), 0, "%s", e.msg);
	cr_assert_eq(o.vm.mem_size, 1ull << 40);
	cr_assert_eq(o.vm.mem_overcommit, 1);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k"), 0);
	cr_assert_eq(o.vm.mem_overcommit, 0);
}

Test(cli, dump_dtb_takes_a_file_name)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k"), 0);
	cr_expect_null(o.dump_dtb, "no dump unless asked");
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--dump-dtb", "m.dtb", "--cpus", "2"), 0);
	cr_expect_str_eq(o.dump_dtb, "m.dtb");
	cr_expect_eq(o.vm.ncpus, 2, "the other options still describe the machine");
	cr_expect_eq(PARSE(&o, &e, "--kernel", "k", "--dump-dtb", ""), -EINVAL);
	cr_expect_str_eq(e.msg, "--dump-dtb: no file name");
	cr_expect_eq(PARSE(&o, &e, "--kernel", "k", "--dump-dtb"), -EINVAL);
	cr_expect_str_eq(e.msg, "--dump-dtb needs a value");
}

Test(cli, seccomp_modes_and_drop_caps)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k"), 0);
	cr_assert_eq(o.vm.seccomp, MINIVMM_SECCOMP_ON, "filters are on by default");
	cr_assert_eq(o.vm.drop_caps, 1, "capabilities are dropped by default");
	cr_assert(!o.keep_caps);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--keep-caps"), 0);
	cr_assert_eq(o.vm.drop_caps, 0, "--keep-caps keeps them");
	cr_assert(o.keep_caps);
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--keep-caps", "--drop-caps"), 0);
	cr_assert_str_eq(e.msg, "--keep-caps and --drop-caps: one or the other");
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--seccomp=off"), 0);
	cr_assert_eq(o.vm.seccomp, MINIVMM_SECCOMP_OFF);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--seccomp", "log", "--drop-caps"), 0);
	cr_assert_eq(o.vm.seccomp, MINIVMM_SECCOMP_LOG);
	cr_assert_eq(o.vm.drop_caps, 1);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--seccomp=on"), 0);
	cr_assert_eq(o.vm.seccomp, MINIVMM_SECCOMP_ON);
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--seccomp=strict"), 0);
	cr_assert_str_eq(e.msg, "--seccomp: 'strict' is not on, off or log");
	cr_assert_eq(PARSE(&o, &e, "--seccomp-list"), 0, "needs no kernel");
	cr_assert(o.seccomp_list);
}

Test(cli, irqchip_split_by_default_or_kernel)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k"), 0);
	cr_assert_eq(o.vm.irqchip, MINIVMM_IRQCHIP_SPLIT);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--irqchip=split"), 0);
	cr_assert_eq(o.vm.irqchip, MINIVMM_IRQCHIP_SPLIT);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--irqchip", "kernel"), 0);
	cr_assert_eq(o.vm.irqchip, MINIVMM_IRQCHIP_KERNEL);
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--irqchip=off"), 0);
	cr_assert_str_eq(e.msg, "--irqchip: 'off' is not kernel or split");
}

Test(cli, timeout_takes_whole_seconds_from_1_to_a_year)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k"), 0);
	cr_assert_eq(o.vm.timeout_secs, 0, "no limit by default");
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--timeout", "1"), 0);
	cr_assert_eq(o.vm.timeout_secs, 1);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--timeout=31536000"), 0);
	cr_assert_eq(o.vm.timeout_secs, MINIVMM_TIMEOUT_MAX_SECS);
	static const char *const bad[] = { "0", "-1", "+5", " 5", "1.5", "1s", "abc", "",
					   "31536001", "4294967296", "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[96];
		snprintf(want, sizeof(want), "--timeout: '%s' is not a number of seconds from 1 to 31536000",
			 bad[i]);
		cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--timeout", (char *)bad[i]), 0, "'%s' accepted",
			     bad[i]);
		cr_expect_str_eq(e.msg, want);
	}
}

/* Found by the cli fuzzer: an argument holding a newline made a two-line
 * error (the message quotes it). */
Test(cli, an_error_quoting_an_argument_with_a_newline_is_one_line)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "stray\nline"), 0);
	cr_assert_null(strchr(e.msg, '\n'), "%s", e.msg);
	cr_assert_str_eq(e.msg, "unexpected argument 'stray\\nline'");
	cr_assert_lt(PARSE(&o, &e, "--net", "tap=x,bogus\x1b[2J=1"), 0);
	cr_assert_null(strchr(e.msg, '\x1b'), "%s", e.msg);
}

/* --help used to explain 6 of the 18 --net keys: each has its own line
 * ("    queues=N ..."), and is in the grammar, so a new key cannot be left
 * out of either. */
Test(cli, usage_explains_every_net_key)
{
	unsigned n = 0;
	for (const char *key; (key = net_config_key_name(n)); n++) {
		char line[64];
		snprintf(line, sizeof(line), "\n    %s", key);
		const char *at = strstr(cli_usage, line);
		cr_assert(at, "--help has no line for --net %s", key);
		char after = at[strlen(line)];
		cr_assert(after == '=' || after == '[', "--help's line for --net %s reads '%.30s'", key, at + 1);
		static const char syntax[] = NET_SYNTAX;
		bool in_syntax = false;
		for (const char *p = syntax; (p = strstr(p, key)); p++) {
			char next = p[strlen(key)];
			if (p > syntax && strchr("[,|", p[-1]) && (next == '=' || next == '['))
				in_syntax = true;
		}
		cr_assert(in_syntax, "NET_SYNTAX lacks --net %s", key);
	}
	cr_assert_geq(n, 18);
}

Test(cli, stats_file_and_interval)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k"), 0);
	cr_assert_null(o.stats_file);
	cr_assert_eq(o.stats_interval, CLI_STATS_INTERVAL_DEFAULT);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--stats-file", "/run/vm.stats"), 0, "%s", e.msg);
	cr_assert_str_eq(o.stats_file, "/run/vm.stats");
	cr_assert_eq(o.stats_interval, 60, "a minute unless told");
	cr_assert_eq(o.stats, 0, "--stats-file alone prints nothing at exit");
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--stats-interval", "5", "--stats-file", "f",
			   "--stats=json"), 0, "%s", e.msg);
	cr_assert_eq(o.stats_interval, 5);
	cr_assert_eq(o.stats, 2);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--stats-file", "f", "--stats-interval", "0"), 0);
	cr_assert_eq(o.stats_interval, 0, "0: only on SIGUSR1 and at exit");
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--stats-file", "f", "--stats-interval", "86400"), 0);
}

Test(cli, stats_file_and_interval_refusals)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--stats-interval", "5"), 0);
	cr_assert_str_eq(e.msg, "--stats-interval needs --stats-file");
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--stats-file", ""), 0);
	cr_assert_str_eq(e.msg, "--stats-file: no file name");
	static char bad[][16] = { "x", "-1", "1.5", "86401", "", "99999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--stats-file", "f", "--stats-interval", bad[i]), 0,
			     "'%s' refused", bad[i]);
		char want[192];
		snprintf(want, sizeof(want), "--stats-interval: '%s' is not a number of seconds from 0 to 86400",
			 bad[i]);
		cr_assert_str_eq(e.msg, want);
	}
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--stats-file", "a", "--stats-file", "b"), 0);
	cr_assert(strstr(e.msg, "--stats-file given twice ('a' and 'b')"), "%s", e.msg);
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--stats-file", "a", "--stats-interval", "1",
			   "--stats-interval", "2"), 0);
	cr_assert(strstr(e.msg, "--stats-interval given twice"), "%s", e.msg);
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--stats-file"), 0);
	cr_assert(strstr(e.msg, "--stats-file needs a value"), "%s", e.msg);
}

Test(cli, api_socket_group_by_name_or_number)
{
	struct cli_options o;
	struct vmm_err e = { 0 };
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--api-socket", "s"), 0);
	cr_assert_eq(o.api_gid, (gid_t)-1, "no group: mode 0600");
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--api-socket", "s", "--api-socket-group", "root"), 0, "%s", e.msg);
	cr_assert_eq(o.api_gid, 0u);
	cr_assert_eq(PARSE(&o, &e, "--kernel", "k", "--api-socket", "s", "--api-socket-group", "1234"), 0, "%s", e.msg);
	cr_assert_eq(o.api_gid, 1234u);
	static const struct {
		const char *group, *want;
	} bad[] = {
		{ "no-such-group-here", "--api-socket-group: no group 'no-such-group-here'" },
		{ "", "--api-socket-group: no group" },
		{ "99999999999999999999", "is not a group number" },
		{ "4294967295", "is not a group number" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "minivmm", "--kernel", "k", "--api-socket", "s", "--api-socket-group", (char *)bad[i].group,
				 NULL };
		cr_assert_lt(cli_parse(7, argv, &o, &e), 0, "'%s' accepted", bad[i].group);
		cr_assert(strstr(e.msg, bad[i].want), "'%s': message '%s' lacks '%s'", bad[i].group, e.msg, bad[i].want);
	}
	cr_assert_lt(PARSE(&o, &e, "--kernel", "k", "--api-socket-group", "root"), 0);
	cr_assert_str_eq(e.msg, "--api-socket-group needs --api-socket");
}
