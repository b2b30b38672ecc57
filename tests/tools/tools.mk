# SPDX-License-Identifier: Apache-2.0
# Host-side test tools. Included by the top-level Makefile after its flags
# and BUILD are set (so SAN=... and STATIC=... apply here too).
# Defines NETPEER, THREADCPU, TEST_TOOLS (both) and `make netpeer`.

TOOLS_DIR    := tests/tools
NETPEER      := $(BUILD)/tools/netpeer
NETPEER_SRCS := $(TOOLS_DIR)/netpeer.c $(TOOLS_DIR)/netpeer_echo.c \
                $(TOOLS_DIR)/netpeer_stream.c $(TOOLS_DIR)/udp_flows.c
NETPEER_HDRS := $(TOOLS_DIR)/netpeer.h $(TOOLS_DIR)/udp_flows.h include/minivmm_abi.h

# The project's strict flags, then the build's (sanitizers) and the
# packager's (CPPFLAGS, CFLAGS), as for the program.
NETPEER_CFLAGS = -std=gnu11 -Wall -Wextra $(WERROR_FLAG) -O2 -D_GNU_SOURCE -Iinclude \
                 $(BUILD_CFLAGS) $(CPPFLAGS) $(CFLAGS)

.PHONY: netpeer
netpeer: $(NETPEER)

$(NETPEER): $(NETPEER_SRCS) $(NETPEER_HDRS)
	@mkdir -p $(@D)
	$(CC) $(NETPEER_CFLAGS) $(HOST_LDFLAGS) -o $@ $(NETPEER_SRCS)

# The CPU time of a process's threads by name (the hostile-guest tests).
THREADCPU    := $(BUILD)/tools/threadcpu

$(THREADCPU): $(TOOLS_DIR)/threadcpu.c
	@mkdir -p $(@D)
	$(CC) $(NETPEER_CFLAGS) $(HOST_LDFLAGS) -o $@ $<

# An LD_PRELOAD shim that logs minivmm's KVM_IOEVENTFD and KVM_IRQFD calls
# (test_net.sh: a reset and a stop deassign nothing). Never sanitized: it
# is preloaded into the sanitized builds too.
KVM_FD_LOG   := $(BUILD)/tools/kvm_fd_log.so

$(KVM_FD_LOG): $(TOOLS_DIR)/kvm_fd_log.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -Wall -Wextra $(WERROR_FLAG) -O2 $(CPPFLAGS) $(CFLAGS) -fPIC -shared $(LDFLAGS) -o $@ $< -ldl

TEST_TOOLS   := $(NETPEER) $(THREADCPU) $(if $(STATIC),,$(KVM_FD_LOG))
