# SPDX-License-Identifier: Apache-2.0
# libFuzzer targets, one per attack surface (see docs/fuzzing.md).
# Included by the top-level Makefile.
#
#   make fuzz          every target for FUZZ_SECONDS (default 60) each, one at a
#                      time, from its committed corpus into a scratch corpus
#                      under $(FUZZ_BUILD)/corpus (the committed one never grows)
#   make fuzz-smoke    every target for FUZZ_SMOKE_RUNS executions (fixed seed):
#                      replays the committed corpus (every reproducer in it) and
#                      mutates a little; part of make test
#   make fuzz-merge    minimise what the scratch corpora found into the
#                      committed ones (only inputs that add coverage)
#   make fuzz-build    just build the targets
#   FUZZ_TARGETS="virtq mmio" make fuzz     a subset
#   make fuzz FUZZ_SECONDS=3600 FUZZ_RUNS=10000000   stop at 10M executions
#
# A separate build with clang: the project's objects are compiled with
# -fsanitize=fuzzer-no-link,address,undefined (coverage instrumentation plus
# the sanitizers), the targets linked with -fsanitize=fuzzer (libFuzzer's
# main). The same warnings as every other build, -Werror included.

FUZZ_BUILD      ?= build-fuzz
FUZZ_CC         ?= clang
FUZZ_SECONDS    ?= 60
FUZZ_SMOKE_RUNS ?= 20000
FUZZ_RUNS       ?=
FUZZ_TARGETS    ?= virtq mmio ioapic net_tx net_ctrl net_rx gso bzimage pvh cli api

FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  := -O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(PROJECT_CFLAGS)
FUZZ_LDFLAGS := $(FUZZ_SAN) -fsanitize=fuzzer

# The library, and the command's parsers (not in the library: the cli
# target links them).
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_CLI_SRCS := $(filter-out vmm/main.c,$(PROG_SRCS))
FUZZ_CLI_OBJS := $(FUZZ_CLI_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)
FUZZ_LIB      := $(FUZZ_BUILD)/libminivmm.a
FUZZ_COMMON   := $(FUZZ_BUILD)/obj/tests/fuzz/fuzz_common.o
FUZZ_ALL      := virtq mmio ioapic net_tx net_ctrl net_rx gso bzimage pvh cli api
FUZZ_BINS     := $(FUZZ_ALL:%=$(FUZZ_BUILD)/%_fuzz)
FUZZ_DEPS_OK  := $(FUZZ_BUILD)/.deps-fuzz

.PHONY: fuzz fuzz-smoke fuzz-merge fuzz-build
# Kept: otherwise make deletes them as intermediates and relinks every time.
.SECONDARY: $(FUZZ_ALL:%=$(FUZZ_BUILD)/obj/tests/fuzz/%_fuzz.o)

$(FUZZ_DEPS_OK): scripts/install-deps.sh
	@mkdir -p $(@D)
	scripts/install-deps.sh build fuzz
	@touch $@

$(FUZZ_BUILD)/obj/%.o: %.c | $(FUZZ_DEPS_OK)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c -o $@ $<

# The shared checks are not what is being fuzzed: without coverage
# instrumentation their loops over guest memory do not drown the signal
# (nor the speed). Still under the sanitizers.
$(FUZZ_COMMON): tests/fuzz/fuzz_common.c | $(FUZZ_DEPS_OK)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(filter-out -fsanitize=fuzzer-no-link -O1,$(FUZZ_CFLAGS)) -O2 -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/%_fuzz: $(FUZZ_BUILD)/obj/tests/fuzz/%_fuzz.o $(FUZZ_COMMON) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ $(HOST_LIBS)

$(FUZZ_BUILD)/cli_fuzz: $(FUZZ_BUILD)/obj/tests/fuzz/cli_fuzz.o $(FUZZ_COMMON) $(FUZZ_CLI_OBJS) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ $(PROG_LIBS) $(HOST_LIBS)

$(FUZZ_BUILD)/api_fuzz: $(FUZZ_BUILD)/obj/tests/fuzz/api_fuzz.o $(FUZZ_COMMON) $(FUZZ_CLI_OBJS) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -o $@ $^ $(PROG_LIBS) $(HOST_LIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: $(FUZZ_BINS)
	FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_RUNS=$(FUZZ_RUNS) tests/fuzz/run.sh fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: $(FUZZ_BINS)
	FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run.sh smoke $(FUZZ_SMOKE_RUNS) $(FUZZ_TARGETS)

fuzz-merge: $(FUZZ_BINS)
	FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run.sh merge 0 $(FUZZ_TARGETS)

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_CLI_OBJS:.o=.d) $(FUZZ_ALL:%=$(FUZZ_BUILD)/obj/tests/fuzz/%_fuzz.d) $(FUZZ_COMMON:.o=.d)
