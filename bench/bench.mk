# SPDX-License-Identifier: Apache-2.0
# Benchmark tools. Included by the top-level Makefile after its flags and
# BUILD are set. Defines RAWNET and `make rawnet`.
#
# rawnet (bench/rawnet*.c) needs libxdp and libbpf, which only the benchmark
# uses: their packages are the bench purpose's (scripts/install-deps.sh), so
# a plain `make` does not need them.

RAWNET      := $(BUILD)/tools/rawnet
RAWNET_SRCS := bench/rawnet.c bench/rawnet_blast.c bench/rawnet_xdp.c tests/tools/udp_flows.c
RAWNET_HDRS := bench/rawnet.h tests/tools/udp_flows.h include/minivmm_abi.h
RAWNET_LIBS  = $(shell pkg-config --libs libxdp libbpf 2>/dev/null || echo -lxdp -lbpf)
DEPS_BENCH  := $(BUILD)/.deps-bench

$(DEPS_BENCH): scripts/install-deps.sh
	@mkdir -p $(@D)
	scripts/install-deps.sh bench
	@touch $@

.PHONY: rawnet
rawnet: $(RAWNET)

$(RAWNET): $(RAWNET_SRCS) $(RAWNET_HDRS) | $(DEPS_BENCH)
	@mkdir -p $(@D)
	$(CC) $(NETPEER_CFLAGS) -I. $(HOST_LDFLAGS) -o $@ $(RAWNET_SRCS) $(RAWNET_LIBS)
