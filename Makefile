# SPDX-License-Identifier: Apache-2.0
# minivmm — build, test, demo, install.
#
#   make            build minivmm, its library, the test guest and the unit tests
#   make demo       boot the bundled test guest (the README's main job)
#   make test       unit tests, integration tests (real guests under /dev/kvm),
#                   nested Linux tests
#   make SAN=address,undefined test   the same under ASan/UBSan
#   make soak       minutes of full-rate traffic both ways on every queue,
#                   every frame accounted for (not part of make test)
#   make fuzz       every libFuzzer target for FUZZ_SECONDS (default 60) each
#   make fuzz-smoke every libFuzzer target briefly (part of make test)
#   make STATIC=1   one self-contained static binary
#   make install PREFIX=/usr/local DESTDIR=   the program, libminivmm (static
#                   and shared), its headers, pkg-config file, man page and docs
#   make uninstall PREFIX=/usr/local DESTDIR=  removes what install put there
#   make clean      removes every build directory (build, build-san,
#                   build-tsan, build-static, build-fuzz)
#
# Knobs: CPPFLAGS, CFLAGS (default -O2 -g), LDFLAGS and LDLIBS are the
# packager's and come after the project's own flags; WERROR=0 drops -Werror;
# XDP=0 builds without the AF_XDP backend (no libxdp, libbpf; --version says
# so); HOSTNET=0 without a tap's ip= and bridge= and the link events (no
# libmnl; the default of STATIC=1, since Debian has no libmnl.a; --version
# says so); API_SOCKET=0 without --api-socket (no libmicrohttpd; the
# default of STATIC=1, since Debian's libmicrohttpd.a needs gnutls and
# p11-kit, which has no static library; --version says so); SAN=... and
# STATIC=1 as above.
#
# The build installs nothing: a missing build dependency stops it with one
# line naming the Debian package (scripts/check-build-deps.sh).
# scripts/install-deps.sh installs them and what the demo needs (the
# README's first step); the test, bench, soak and fuzz targets call it for
# their own extras (it names what it installs).

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
CC      ?= gcc
OBJCOPY ?= objcopy
SAN     ?=
STATIC  ?=

WERROR  ?= 1
XDP     ?= 1
HOSTNET ?= $(if $(STATIC),0,1)
API_SOCKET ?= $(if $(STATIC),0,1)

# The release is the VERSION file; a git checkout of the project adds its
# commit as build metadata: 0.3.0+git8d0ca88-dirty.
RELEASE  := $(shell cat VERSION 2>/dev/null || echo unknown)
GIT_DESC := $(shell [ "$$(git -C . rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
                    git describe --always --dirty 2>/dev/null)
VERSION  := $(RELEASE)$(if $(GIT_DESC),+git$(GIT_DESC))

WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)

# Language, warnings and include paths: every build of the project's code
# uses these (the fuzz build in tests/fuzz/fuzz.mk too, with clang).
PROJECT_CFLAGS := -std=gnu11 -Wall -Wextra $(WERROR_FLAG) -Wshadow -Wpointer-arith \
           -Wmissing-prototypes -Wstrict-prototypes -Wformat=2 \
           -D_GNU_SOURCE -I. -Iinclude -MMD -MP \
           -DMINIVMM_VERSION='"$(VERSION)"' -DMINIVMM_XDP=$(if $(filter 1,$(XDP)),1,0) \
           -DMINIVMM_HOSTNET=$(if $(filter 1,$(HOSTNET)),1,0) \
           -DMINIVMM_API_SOCKET=$(if $(filter 1,$(API_SOCKET)),1,0)
CFLAGS  ?= -O2 -g
PROJECT_LIBS := -luring -lfdt $(if $(filter 1,$(XDP)),-lxdp -lbpf) -lseccomp -ljansson $(if $(filter 1,$(HOSTNET)),-lmnl) -lpthread

# Sanitizer and static-build flags: the build's own, kept apart from the
# packager's CFLAGS/LDFLAGS so that giving those on the command line does
# not drop them.
BUILD_CFLAGS  :=
BUILD_LDFLAGS :=
ifneq ($(SAN),)
  # MINIVMM_SANITIZED: no seccomp filters on the VM's threads (vmm/vm.c).
  BUILD_CFLAGS  += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all -DMINIVMM_SANITIZED
  BUILD_LDFLAGS += -fsanitize=$(SAN)
  # One suffix, whichever the BUILD given already had: the test targets
  # run make again with BUILD pointing at a sanitizer's directory.
  ifneq ($(findstring thread,$(SAN)),)
    # The virtqueue fences order our ring accesses against the guest's,
    # which ThreadSanitizer cannot see (guest memory is written by KVM).
    BUILD_CFLAGS += -Wno-tsan
    BUILD  := $(patsubst %-san,%,$(patsubst %-tsan,%,$(BUILD)))-tsan
  else
    BUILD  := $(patsubst %-san,%,$(patsubst %-tsan,%,$(BUILD)))-san
  endif
endif
ifneq ($(STATIC),)
  BUILD_LDFLAGS += -static
  BUILD  := $(patsubst %-static,%,$(BUILD))-static
  # libbpf.a needs what libbpf.so pulls in by itself.
  PROJECT_LIBS += $(if $(filter 1,$(XDP)),-lelf -lz)
endif

# What every host-side compile and link of the project uses.
HOST_CFLAGS   = $(PROJECT_CFLAGS) $(BUILD_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(OBJ_CFLAGS)
HOST_LDFLAGS  = $(BUILD_LDFLAGS) $(LDFLAGS)
HOST_LIBS     = $(PROJECT_LIBS) $(LDLIBS)

# The program: the command line and the process-wide duties (signals,
# stdio, terminal). Everything else is libminivmm.
# API_SOCKET=0: vmm/api_none.c refuses --api-socket instead of vmm/api.c.
PROG_SRCS := vmm/main.c vmm/cli.c vmm/net_config.c vmm/cpulist.c vmm/process.c vmm/api_vm.c \
             $(if $(filter 1,$(API_SOCKET)),vmm/api.c,vmm/api_none.c)
LIB_SRCS  := $(filter-out $(PROG_SRCS) vmm/api.c vmm/api_none.c,$(wildcard base/*.c vmm/*.c devices/*.c devices/virtio/*.c net/*.c boot/*.c))
# XDP=0: net/xdp_none.c refuses the AF_XDP backend instead.
ifeq ($(XDP),1)
LIB_SRCS  := $(filter-out net/xdp_none.c,$(LIB_SRCS))
else
LIB_SRCS  := $(filter-out net/xdp%.c,$(LIB_SRCS)) net/xdp_none.c
endif
# HOSTNET=0: net/hostnet_none.c instead of rtnetlink over libmnl.
ifeq ($(HOSTNET),1)
LIB_SRCS  := $(filter-out net/hostnet_none.c,$(LIB_SRCS))
else
LIB_SRCS  := $(filter-out net/host_link.c net/link_events.c net/hostnet_none.c,$(LIB_SRCS)) net/hostnet_none.c
endif
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)
# The program has its own copy of the error helpers, and of the seccomp lists
# and confine_enter() for its signal thread: the library's are local.
PROG_OBJS := $(PROG_SRCS:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/base/error.o \
             $(BUILD)/obj/base/confine.o $(BUILD)/obj/vmm/seccomp.o
MAIN_OBJ  := $(BUILD)/obj/vmm/main.o
BIN       := $(BUILD)/minivmm

# libminivmm: the major version is the soname (include/minivmm.h).
LIB_MAJOR  := $(shell sed -n 's/^\#define MINIVMM_API_VERSION_MAJOR *//p' include/minivmm.h)
LIB_MINOR  := $(shell sed -n 's/^\#define MINIVMM_API_VERSION_MINOR *//p' include/minivmm.h)
LIB_VERSION := $(LIB_MAJOR).$(LIB_MINOR).0
LIB_SONAME := libminivmm.so.$(LIB_MAJOR)
LIB        := $(BUILD)/libminivmm.a
LIB_SO     := $(BUILD)/libminivmm.so.$(LIB_VERSION)
LIB_MERGED := $(BUILD)/obj/libminivmm.o
LIB_MAP    := vmm/libminivmm.map
# A static build makes no shared library.
ifeq ($(STATIC),)
LIB_ALL    := $(LIB) $(LIB_SO)
else
LIB_ALL    := $(LIB)
endif

UNIT_SRCS := $(wildcard tests/unit/*_test.c)
ifneq ($(XDP),1)
UNIT_SRCS := $(filter-out tests/unit/xdp_test.c,$(UNIT_SRCS))
endif
ifneq ($(HOSTNET),1)
UNIT_SRCS := $(filter-out tests/unit/host_link_test.c,$(UNIT_SRCS))
endif
ifneq ($(API_SOCKET),1)
UNIT_SRCS := $(filter-out tests/unit/api_test.c,$(UNIT_SRCS))
endif
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_BIN  := $(BUILD)/unit-tests

DEPS_OK   := $(BUILD)/.deps-build

.DEFAULT_GOAL := all

# Fragments that define TESTGUEST, NETPEER, TEST_TOOLS and RAWNET, needed by the
# rules below, and the libFuzzer targets (make fuzz, fuzz-smoke, fuzz-merge).
include guest-images/testguest/testguest.mk
include tests/tools/tools.mk
include bench/bench.mk
include tests/fuzz/fuzz.mk

.PHONY: all deps demo test unit-test integration-test uring-variants-test san-test tsan-test tsan-integration-test tsan-bins linux-test install uninstall clean \
        bench bench-quick bench-smoke bench-regress bench-limits soak
# A static build is the appliance binary: criterion has no static library,
# so the unit tests are left out of it.
ifeq ($(STATIC),)
all: $(BIN) $(LIB_ALL) $(UNIT_BIN) testguest $(TEST_TOOLS)
else
all: $(BIN) $(LIB_ALL)
endif

# Checked (never installed) once per build directory, and again when the
# check or the knobs it depends on change.
DEPS_ARGS := xdp=$(if $(filter 1,$(XDP)),1,0) hostnet=$(if $(filter 1,$(HOSTNET)),1,0) api=$(if $(filter 1,$(API_SOCKET)),1,0) static=$(if $(STATIC),1,0) unit=$(if $(STATIC),0,1)
$(DEPS_OK): scripts/check-build-deps.sh $(BUILD)/.deps-args
	@mkdir -p $(@D)
	@CC="$(CC)" CPPFLAGS="$(CPPFLAGS)" scripts/check-build-deps.sh $(DEPS_ARGS)
	@touch $@
$(BUILD)/.deps-args: FORCE
	@mkdir -p $(@D)
	@echo '$(CC) $(CPPFLAGS) $(DEPS_ARGS)' | cmp -s - $@ || echo '$(CC) $(CPPFLAGS) $(DEPS_ARGS)' > $@
deps: $(DEPS_OK)

$(BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(HOST_CFLAGS) -c -o $@ $<

# Library objects: position-independent (they go into the shared library
# too) and hidden unless marked MINIVMM_API.
$(LIB_OBJS): OBJ_CFLAGS += -fPIC -fvisibility=hidden
# Objects of a build directory from before these flags are rebuilt once.
LIB_FLAGS_STAMP := $(BUILD)/.lib-pic-hidden
$(LIB_FLAGS_STAMP):
	@mkdir -p $(@D)
	@touch $@
$(LIB_OBJS): $(LIB_FLAGS_STAMP)

# Only minivmm_* may be global in either library, or an embedding
# program's own kvm_open or bus_add would clash with ours.
CHECK_EXPORTS = nm -g --defined-only $(1) | awk 'NF == 3 && $$2 != "A" && $$3 !~ /^minivmm_/ { print "$(1): exports " $$3; bad = 1 } END { exit bad }'

# The static library is one relocatable object in which every symbol but
# minivmm_* is made local (ld -r, then objcopy), so internal names resolve
# inside it and are invisible to the program it is linked into.
$(LIB_MERGED): $(LIB_OBJS)
	$(LD) -r -o $@.all $^
	$(OBJCOPY) --wildcard --keep-global-symbol='minivmm_*' $@.all $@
	@rm -f $@.all

$(LIB): $(LIB_MERGED)
	@rm -f $@
	ar rcs $@ $^
	@$(call CHECK_EXPORTS,$@)

$(LIB_SO): $(LIB_OBJS) $(LIB_MAP)
	$(CC) -shared $(HOST_LDFLAGS) -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=$(LIB_MAP) \
		-Wl,-z,defs -o $@ $(LIB_OBJS) $(HOST_LIBS)
	ln -sf $(notdir $@) $(BUILD)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(BUILD)/libminivmm.so
	@$(call CHECK_EXPORTS,$@)

# main.o carries the version string: rebuild it whenever `git describe`
# changes, not only when main.c does.
VERSION_STAMP := $(BUILD)/.version
$(VERSION_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' > $@
$(MAIN_OBJ) $(BUILD)/obj/vmm/version.o: $(VERSION_STAMP)
.PHONY: FORCE
FORCE:

# The program sees the library exactly as an embedder does: through the
# static archive, minivmm_* only.
# The API socket (vmm/api.c, --api-socket) is the program's: libmicrohttpd
# is linked into it, not into libminivmm.
PROG_LIBS := $(if $(filter 1,$(API_SOCKET)),-lmicrohttpd)
$(BIN): $(PROG_OBJS) $(LIB)
	$(CC) $(HOST_LDFLAGS) -o $@ $^ $(PROG_LIBS) $(HOST_LIBS)

# The unit tests read recorded data (CPUID dumps) from the source tree.
$(UNIT_OBJS): OBJ_CFLAGS += -DUNIT_DATA_DIR='"$(CURDIR)/tests/unit/data"'

# The unit tests reach inside: every object, internals included.
# --wrap: tests/unit/worker_test.c makes io_uring waits end in -EINTR and
# submissions refused on demand.
UNIT_LINK := $(UNIT_OBJS) $(sort $(LIB_OBJS) $(filter-out $(MAIN_OBJ),$(PROG_OBJS)))
$(UNIT_BIN): $(UNIT_LINK)
	$(CC) $(HOST_LDFLAGS) -Wl,--wrap=io_uring_submit_and_wait,--wrap=io_uring_submit -o $@ $^ -lcriterion $(PROG_LIBS) $(HOST_LIBS)


demo: $(BIN) testguest $(NETPEER)
	@for t in ip:iproute2 ping:iputils-ping; do command -v $${t%%:*} >/dev/null || \
		{ echo "make demo: needs $${t%%:*} (Debian package $${t#*:}; scripts/install-deps.sh installs it)" >&2; exit 1; }; done
	BUILD=$(BUILD) $(WITH_KVM) bash -c "$(BIN) --kernel $(TESTGUEST) --cpus 2 --cmdline test=hello && scripts/demo.sh"

# The tree checks read sources, not a build: once, in the plain run (san-test
# runs unit-test again under the sanitizers).
unit-test: $(UNIT_BIN)
	scripts/install-deps.sh unit
ifeq ($(SAN),)
	tests/check-layers.sh
	tests/check-spdx.sh
	tests/check-build.sh
endif
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 $(UNIT_BIN) --jobs 2

# Every suite that boots guests runs through tests/with-kvm.sh: here where
# /dev/kvm is, else under emulated KVM (QEMU TCG with nested SVM: function
# only, 5-10x slower). There each suite runs its emulated selection, sized so
# that make test stays within 25 minutes: the sanitizer, TSan and
# io_uring-variant runs take the tests that move the most traffic through
# the most threads; the plain run has every other test but the hostile-guest
# tests over the packet backend and with engine=epoll (they run over tap and
# AF_XDP with io_uring; every other epoll test runs), and repeats the
# restart tests fewer times.
EMU_SAN_TESTS     := net_echo_100k_mixed_sizes_uring mq_four_queues_all_carry_traffic packet_echo_q1_recv xdp_echo_mixed_sizes_uring hostile_mmio_garbage_tap_uring
EMU_TSAN_TESTS    := mq_threads_1_and_per_queue_echo xdp_multiqueue_every_queue_carries_traffic
EMU_VARIANT_TESTS := net_echo_100k_mixed_sizes_uring
EMU_PLAIN_EXCLUDE := hostile_*_epoll hostile_*_pkt_* $(EMU_SAN_TESTS) $(EMU_TSAN_TESTS)
WITH_KVM := tests/with-kvm.sh

integration-test: $(BIN) $(LIB_ALL) testguest $(TEST_TOOLS)
	scripts/install-deps.sh test
	BUILD=$(BUILD) SAN=$(SAN) MAKE="$(MAKE)" \
		$(if $(SAN),EMULATED_TESTS="$(EMU_SAN_TESTS)",EMULATED_EXCLUDE="$(EMU_PLAIN_EXCLUDE)") \
		$(WITH_KVM) tests/integration/run.sh

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
# The engine=epoll tests run once more only where the variant's keys reach
# them (poll-us): with io_uring-only keys they would repeat the plain run.
URING_VARIANTS := fixed-files=off,defer-taskrun=off fixed-buffers=on poll-us=auto
uring-variants-test: $(BIN) testguest $(TEST_TOOLS)
	scripts/install-deps.sh test
	@rc=0; for v in $(URING_VARIANTS); do \
		echo "== io_uring variant: --net ...,$$v"; \
		case $$v in poll-us=*) ex= ;; *) ex='*epoll*' ;; esac; \
		EXCLUDE="$$ex" EXCLUDE_WHY="engine=epoll: $$v changes nothing there" \
		NET_EXTRA=$$v BUILD=$(BUILD) EMULATED_TESTS="$(EMU_VARIANT_TESTS)" \
			$(WITH_KVM) tests/integration/run.sh 'net*' 'mq*' 'hostile*' || rc=1; \
	done; exit $$rc

# The threaded parts under ThreadSanitizer: real guests and traffic over
# multiqueue, shared workers, both engines and every backend (the xdp tests:
# sockets made and closed by workers while the statistics thread reads their
# counters, drain sockets swapped on VQ_PAIRS_SET), any race ends the VMM
# (halt_on_error) and so the test. Criterion's runner cannot start under TSan
# (Snaipe/Criterion#274), so the unit tests run under ASan only.
TSAN_TESTS := 'mq*' 'net*' 'packet*' 'xdp*'
tsan-test:
	$(MAKE) SAN=thread tsan-integration-test
tsan-bins: $(BIN) testguest $(TEST_TOOLS)
tsan-integration-test: tsan-bins
	scripts/install-deps.sh test
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
		BUILD=$(BUILD) EMULATED_TESTS="$(EMU_TSAN_TESTS)" $(WITH_KVM) tests/integration/run.sh $(TSAN_TESTS)

# Everything the suites need is installed first, in one go, so no suite
# depends on what happens to be on the machine; then every suite runs (a
# failure does not stop the rest) and the closing lines sum them up.
# Every binary the suites run is built first with all cores (the suites' own
# make calls then find them made). Mostly for the ASan/UBSan build: 97 s on
# one core, 55 s on two (this 2-core machine, quiet).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test:
	scripts/install-deps.sh build unit test linux bench fuzz
	$(MAKE) -j$(JOBS) all
	$(MAKE) -j$(JOBS) SAN=address,undefined all
	$(MAKE) -j$(JOBS) SAN=thread tsan-bins
	BUILD=$(BUILD) MAKE="$(MAKE)" tests/run-all.sh unit-test integration-test uring-variants-test san-test tsan-test fuzz-smoke linux-test bench-smoke

# The soak (docs/soak.md): full-rate UDP both ways on every queue pair over
# tap (io_uring, epoll) and the packet backend (rx=ring; io_uring, epoll),
# 2 and 4 queue pairs, SOAK_SECS each; then the same under ASan/UBSan for
# SOAK_SAN_SECS each (8 x 120 s + 8 x 30 s: about 21 minutes with set-up).
# Fails on any frame lost or damaged inside the VMM, or not accounted for.
# SOAK_CONFIGS picks configurations (globs, e.g. 'tap-*'). Not in make test.
SOAK_SECS     ?= 120
SOAK_SAN_SECS ?= 30
SOAK_CONFIGS  ?=
soak: $(BIN) testguest $(TEST_TOOLS)
	scripts/install-deps.sh test
	$(MAKE) SAN=address,undefined $(BUILD)-san/minivmm
	BUILD=$(BUILD) SOAK_SECS=$(SOAK_SECS) SOAK_SAN_SECS=$(SOAK_SAN_SECS) \
		SOAK_SAN_MINIVMM=$(BUILD)-san/minivmm tests/soak/soak.sh $(SOAK_CONFIGS)

# Benchmarks print tables; they are not tests and never fail on speed, except
# bench-regress: this tree against the baseline revision (bench/baseline, or
# BASELINE=REV), its rows interleaved in the same run; it fails when a row's
# median falls outside the baseline's range (docs/benchmarks.md, "Comparing
# with the baseline"). BENCH_RUNS=N changes its 5 rounds.
# bench-smoke (part of make test) only checks the tables come out well-formed;
# it runs the baseline beside the rows of bench-regress it has, when the
# baseline's commit is in this clone.
BASELINE   ?= $(shell cat bench/baseline 2>/dev/null)
BENCH_RUNS ?=
bench: all $(RAWNET)
	scripts/install-deps.sh test bench linux
	bench/run.sh --full
	bench/run.sh --limits
	bench/linux/run.sh --full

bench-quick: all $(RAWNET)
	scripts/install-deps.sh test bench
	bench/run.sh --quick

bench-smoke: all $(RAWNET)
	scripts/install-deps.sh test bench
	python3 bench/baseline_test.py
	@if git rev-parse --verify --quiet '$(BASELINE)^{commit}' > /dev/null 2>&1; then \
		bench/baseline.sh '$(BASELINE)' > /dev/null && \
		echo '$(WITH_KVM) bench/run.sh --smoke --baseline $(BASELINE)' && \
		$(WITH_KVM) bench/run.sh --smoke --baseline '$(BASELINE)'; \
	else \
		echo 'bench: the baseline $(BASELINE) is not in this clone (no git, or a shallow one): the smoke runs without it'; \
		echo '$(WITH_KVM) bench/run.sh --smoke' && $(WITH_KVM) bench/run.sh --smoke; \
	fi

# The baseline is built here, not under emulated KVM (tests/with-kvm.sh), where a build is slow.
# bench-limits: TX and RX held to three rate limits over 5 s, and a one-time
# burst plotted (bench/limits.py; docs/benchmarks.md, "Rate limits").
bench-limits: all $(RAWNET)
	scripts/install-deps.sh test bench
	$(WITH_KVM) bench/run.sh --limits

bench-regress: all $(RAWNET)
	scripts/install-deps.sh test bench
	bench/baseline.sh '$(BASELINE)' > /dev/null
	$(WITH_KVM) bench/run.sh --regress --baseline '$(BASELINE)' $(if $(BENCH_RUNS),--runs $(BENCH_RUNS))

DOCDIR  ?= $(PREFIX)/share/doc/minivmm
# What a static link of libminivmm.a needs (libbpf.a pulls in libelf, zlib).
PC_LIBS_PRIVATE := $(strip -luring -lfdt $(if $(filter 1,$(XDP)),-lxdp -lbpf -lelf -lz) -lseccomp -ljansson $(if $(filter 1,$(HOSTNET)),-lmnl) -lpthread)
# The user documentation the man page points at goes with it.
INSTALL_DOCS := LICENSE README.md $(filter-out docs/README.md,$(wildcard docs/*.md))
install: $(BIN) $(LIB_ALL)
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/minivmm
	install -D -m 0644 $(LIB) $(DESTDIR)$(LIBDIR)/libminivmm.a
ifeq ($(STATIC),)
	install -D -m 0755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/$(notdir $(LIB_SO))
	ln -sf $(notdir $(LIB_SO)) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libminivmm.so
endif
	install -D -m 0644 include/minivmm.h $(DESTDIR)$(INCLUDEDIR)/minivmm.h
	install -D -m 0644 include/minivmm_abi.h $(DESTDIR)$(INCLUDEDIR)/minivmm_abi.h
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(LIB_VERSION)|; s|@LIBS_PRIVATE@|$(PC_LIBS_PRIVATE)|' \
		vmm/minivmm.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/minivmm.pc
	install -D -m 0644 docs/minivmm.1 $(DESTDIR)$(MANDIR)/man1/minivmm.1
	install -d $(DESTDIR)$(DOCDIR)/examples
	install -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	install -m 0644 docs/examples/*.c $(DESTDIR)$(DOCDIR)/examples/

# Removes what install put there, and the directories it made if they are
# left empty; nothing else.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/minivmm $(DESTDIR)$(LIBDIR)/libminivmm.a \
		$(DESTDIR)$(LIBDIR)/libminivmm.so $(DESTDIR)$(LIBDIR)/$(LIB_SONAME) \
		$(DESTDIR)$(LIBDIR)/libminivmm.so.$(LIB_MAJOR).* \
		$(DESTDIR)$(INCLUDEDIR)/minivmm.h $(DESTDIR)$(INCLUDEDIR)/minivmm_abi.h \
		$(DESTDIR)$(LIBDIR)/pkgconfig/minivmm.pc $(DESTDIR)$(MANDIR)/man1/minivmm.1
	rm -rf $(DESTDIR)$(DOCDIR)
	-rmdir -p --ignore-fail-on-non-empty $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(MANDIR)/man1 $(dir $(DESTDIR)$(DOCDIR)) 2>/dev/null

# Every build directory any knob makes (BUILD's own, its -san, -tsan and
# -static twins, the fuzz build).
BASE_BUILD := $(patsubst %-static,%,$(patsubst %-tsan,%,$(patsubst %-san,%,$(BUILD))))
clean:
	rm -rf $(BASE_BUILD) $(BASE_BUILD)-san $(BASE_BUILD)-tsan $(BASE_BUILD)-static $(FUZZ_BUILD)

-include $(LIB_OBJS:.o=.d) $(PROG_OBJS:.o=.d) $(UNIT_OBJS:.o=.d)
