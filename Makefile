# minivmm — build, test, demo, install.
#
#   make            build minivmm, its library, the test guest and the unit tests
#   make demo       boot the bundled test guest (the README's main job)
#   make test       unit tests, integration tests (real guests under /dev/kvm),
#                   nested Linux tests
#   make SAN=address,undefined test   the same under ASan/UBSan
#   make fuzz       every libFuzzer target for FUZZ_SECONDS (default 60) each
#   make fuzz-smoke every libFuzzer target briefly (part of make test)
#   make STATIC=1   one self-contained static binary
#   make install PREFIX=/usr/local DESTDIR=
#
# Packages come from Debian through scripts/install-deps.sh, which the
# targets below call when something they need is missing.

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
CC      ?= gcc
SAN     ?=
STATIC  ?=

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

# Language, warnings and include paths: every build of the project's code
# uses these (the fuzz build in tests/fuzz/fuzz.mk too, with clang).
PROJECT_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wpointer-arith \
           -Wmissing-prototypes -Wstrict-prototypes -Wformat=2 \
           -D_GNU_SOURCE -I. -Iinclude -MMD -MP \
           -DMINIVMM_VERSION='"$(VERSION)"'
CFLAGS  ?= -O2 -g
CFLAGS  += $(PROJECT_CFLAGS)
LDLIBS  += -luring -lfdt -lpthread

ifneq ($(SAN),)
  CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=$(SAN)
  ifneq ($(findstring thread,$(SAN)),)
    # The virtqueue fences order our ring accesses against the guest's,
    # which ThreadSanitizer cannot see (guest memory is written by KVM).
    CFLAGS += -Wno-tsan
    BUILD  := $(BUILD)-tsan
  else
    BUILD  := $(BUILD)-san
  endif
endif
ifneq ($(STATIC),)
  LDFLAGS += -static
  BUILD   := $(BUILD)-static
endif

LIB_SRCS  := $(filter-out vmm/main.c,$(wildcard base/*.c vmm/*.c devices/*.c devices/virtio/*.c net/*.c boot/*.c))
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ  := $(BUILD)/obj/vmm/main.o
LIB       := $(BUILD)/libminivmm.a
BIN       := $(BUILD)/minivmm

UNIT_SRCS := $(wildcard tests/unit/*_test.c)
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_BIN  := $(BUILD)/unit-tests

DEPS_OK   := $(BUILD)/.deps-build

.DEFAULT_GOAL := all

# Fragments that define TESTGUEST and NETPEER, needed by the rules below,
# and the libFuzzer targets (make fuzz, fuzz-smoke, fuzz-merge).
include guest-images/testguest/testguest.mk
include tests/tools/tools.mk
include tests/fuzz/fuzz.mk

.PHONY: all deps demo test unit-test integration-test uring-variants-test san-test tsan-test tsan-integration-test linux-test install clean \
        bench bench-quick bench-smoke
# A static build is the appliance binary: criterion has no static library,
# so the unit tests are left out of it.
ifeq ($(STATIC),)
all: $(BIN) $(UNIT_BIN) testguest $(NETPEER)
else
all: $(BIN)
endif

# Re-checked only when the script changes; the script is quick when nothing is missing.
$(DEPS_OK): scripts/install-deps.sh
	@mkdir -p $(@D)
	scripts/install-deps.sh build
	@touch $@
deps: $(DEPS_OK)

$(BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# main.o carries the version string: rebuild it whenever `git describe`
# changes, not only when main.c does.
VERSION_STAMP := $(BUILD)/.version
$(VERSION_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(MAIN_OBJ): $(VERSION_STAMP)
.PHONY: FORCE
FORCE:

$(BIN): $(MAIN_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The unit tests read recorded data (CPUID dumps) from the source tree.
$(UNIT_OBJS): CFLAGS += -DUNIT_DATA_DIR='"$(CURDIR)/tests/unit/data"'

# --wrap: tests/unit/worker_test.c makes io_uring waits end in -EINTR and
# submissions refused on demand.
$(UNIT_BIN): $(UNIT_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -Wl,--wrap=io_uring_submit_and_wait,--wrap=io_uring_submit -o $@ $^ -lcriterion $(LDLIBS)


demo: $(BIN) testguest $(NETPEER)
	scripts/install-deps.sh test
	$(BIN) --kernel $(TESTGUEST) --cpus 2 --cmdline 'test=hello'
	BUILD=$(BUILD) scripts/demo.sh

unit-test: $(UNIT_BIN)
	scripts/install-deps.sh unit
	$(UNIT_BIN) --jobs 2

integration-test: $(BIN) testguest $(NETPEER)
	scripts/install-deps.sh test
	BUILD=$(BUILD) tests/integration/run.sh

linux-test: $(DEPS_OK)
	scripts/install-deps.sh linux
	BUILD=$(BUILD) tests/linux/run.sh

# The same unit and integration tests again under ASan/UBSan: a guest must
# never make the VMM touch memory it should not.
san-test:
	$(MAKE) SAN=address,undefined unit-test integration-test

# The io_uring engine's variants (each resource off, or on when it is off by
# default) through the net, multiqueue and hostile tests again: a kernel may
# lack any of them and the engine must work the same without.
URING_VARIANTS := fixed-files=off,defer-taskrun=off fixed-buffers=on poll-us=auto
uring-variants-test: $(BIN) testguest $(NETPEER)
	scripts/install-deps.sh test
	@rc=0; for v in $(URING_VARIANTS); do \
		echo "== io_uring variant: --net ...,$$v"; \
		NET_EXTRA=$$v BUILD=$(BUILD) tests/integration/run.sh 'net*' 'mq*' 'hostile*' || rc=1; \
	done; exit $$rc

# The threaded parts under ThreadSanitizer: real guests and traffic over
# multiqueue, shared workers, both engines and both backends, any race ends
# the VMM (halt_on_error) and so the test. Criterion's runner cannot start
# under TSan (Snaipe/Criterion#274), so the unit tests run under ASan only.
TSAN_TESTS := 'mq*' 'net*' 'packet*'
tsan-test:
	$(MAKE) SAN=thread tsan-integration-test
tsan-integration-test: $(BIN) testguest $(NETPEER)
	scripts/install-deps.sh test
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
		BUILD=$(BUILD) tests/integration/run.sh $(TSAN_TESTS)

# Everything the suites need is installed first, in one go, so no suite
# depends on what happens to be on the machine; then every suite runs (a
# failure does not stop the rest) and the closing lines sum them up.
test:
	scripts/install-deps.sh build unit test linux bench fuzz
	$(MAKE) all
	BUILD=$(BUILD) MAKE="$(MAKE)" tests/run-all.sh unit-test integration-test uring-variants-test san-test tsan-test fuzz-smoke linux-test bench-smoke

# Benchmarks print tables; they are not tests and never fail on speed.
# bench-smoke (part of make test) only checks the tables come out well-formed.
bench: all
	scripts/install-deps.sh test bench linux
	bench/run.sh --full
	bench/linux/run.sh --full

bench-quick: all
	scripts/install-deps.sh test bench
	bench/run.sh --quick

bench-smoke: all
	scripts/install-deps.sh test bench
	bench/run.sh --smoke

install: $(BIN)
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/minivmm
	install -D -m 0644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libminivmm.a
	install -D -m 0644 include/minivmm.h $(DESTDIR)$(PREFIX)/include/minivmm.h

clean:
	rm -rf build build-san build-static $(FUZZ_BUILD)

-include $(LIB_OBJS:.o=.d) $(MAIN_OBJ:.o=.d) $(UNIT_OBJS:.o=.d)
