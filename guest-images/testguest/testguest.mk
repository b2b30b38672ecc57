# SPDX-License-Identifier: Apache-2.0
# The freestanding test guest: a PVH ELF built with the host gcc.
# Included by the top-level Makefile; defines TESTGUEST and `make testguest`.

TG_DIR    := guest-images/testguest
TG_BUILD  := $(BUILD)/testguest
TESTGUEST := $(TG_BUILD)/testguest.elf

TG_CC      ?= gcc
TG_CFLAGS  := -std=gnu11 -Wall -Wextra $(WERROR_FLAG) -O2 -g \
              -ffreestanding -nostdlib -static -fno-pic -no-pie \
              -mno-red-zone -mgeneral-regs-only -fno-stack-protector \
              -fno-asynchronous-unwind-tables -fno-tree-loop-distribute-patterns \
              -fcf-protection=none -mno-sse \
              -I$(TG_DIR) -Iinclude -MMD -MP
TG_LDFLAGS := -nostdlib -static -no-pie -Wl,--build-id=none \
              -Wl,-z,max-page-size=4096 -Wl,-z,noexecstack -Wl,-T,$(TG_BUILD)/testguest.ld

TG_SRCS := $(wildcard $(TG_DIR)/*.c $(TG_DIR)/*.S)
TG_OBJS := $(patsubst $(TG_DIR)/%,$(TG_BUILD)/%.o,$(TG_SRCS))

.PHONY: testguest
testguest: $(TESTGUEST)

$(TG_BUILD)/%.c.o: $(TG_DIR)/%.c
	@mkdir -p $(@D)
	$(TG_CC) $(TG_CFLAGS) -c -o $@ $<

$(TG_BUILD)/%.S.o: $(TG_DIR)/%.S
	@mkdir -p $(@D)
	$(TG_CC) $(TG_CFLAGS) -D__ASSEMBLER__ -c -o $@ $<

$(TG_BUILD)/testguest.ld: $(TG_DIR)/testguest.ld.S $(TG_DIR)/layout.h
	@mkdir -p $(@D)
	$(TG_CC) -E -P -x c -D__ASSEMBLER__ -I$(TG_DIR) -o $@ $<

$(TESTGUEST): $(filter-out $(TG_BUILD)/testguest.ld.S.o,$(TG_OBJS)) $(TG_BUILD)/testguest.ld
	$(TG_CC) $(TG_LDFLAGS) -o $@ $(filter %.o,$^)

-include $(TG_OBJS:.o=.d)
