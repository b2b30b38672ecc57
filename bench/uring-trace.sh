#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What the kernel does with minivmm's io_uring RX loop, counted with tracefs
# (issue 12 §2): during N seconds of 64-byte RX load from the raw blaster into a
# 1-queue minivmm (engine=uring, tap in a bridge), count io_uring_submit_req by
# opcode, io_uring_poll_arm, and io_uring_complete by result (-EAGAIN apart),
# for minivmm's rings only, then the guest's sequence check (reorders) under
# the same load.
#   bench/uring-trace.sh [--secs N] [--rate PPS] [--size BYTES] [--net-extra KEYS]
#                        [--buffer-mb MB] [--out DIR]
#   e.g. bench/uring-trace.sh --secs 1
#        bench/uring-trace.sh --net-extra poll-us=auto,fixed-buffers=on
# Needs root, /dev/kvm, tracefs (mounted here, privately, when it is not),
# build/minivmm, build/testguest/testguest.elf, build/tools/netpeer and
# build/tools/rawnet. Uses its own trace instance; the global trace buffer and
# other tracers are not touched. Like the benchmark, run it on a quiet host.
set -u
cd "$(dirname "$0")/.." || exit 2
for f in build/minivmm build/testguest/testguest.elf build/tools/netpeer build/tools/rawnet; do
	[ -e "$f" ] || { echo "uring-trace: missing $f (make all rawnet)" >&2; exit 2; }
done
# shellcheck source=bench/netns.sh
. bench/netns.sh
trap bench_ns_cleanup EXIT
trap 'exit 130' INT TERM
bench_ns_setup "mvmtrace-$$" || exit 2
echo "uring-trace: load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# ip netns exec gives the command its own mount namespace: tracefs is mounted
# there if the host has it nowhere, and disappears with it.
ip netns exec "$BENCH_NS" sh -c '
	if [ ! -d /sys/kernel/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing || { echo "uring-trace: cannot mount tracefs" >&2; exit 2; }
	fi
	exec python3 bench/uring_trace.py "$@"' sh "$@"
