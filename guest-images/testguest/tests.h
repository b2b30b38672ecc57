/* SPDX-License-Identifier: Apache-2.0 */
/* Test scenarios, selected by test=NAME on the command line. */
#ifndef TESTGUEST_TESTS_H
#define TESTGUEST_TESTS_H

struct tg_test {
	const char *name;
	void (*run)(void);          /* must end the VM itself */
	const char *summary;
};

/* Run the named test; an unknown name exits with TG_EXIT_BAD_CMDLINE. */
__attribute__((noreturn)) void tests_run(const char *name);

#endif
