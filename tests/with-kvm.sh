#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/with-kvm.sh COMMAND [ARG...]: run a suite that boots guests under
# /dev/kvm.
#
# On a host with a writable /dev/kvm the command runs here, as it is.
# On a host without one (a CI machine that is itself a guest with no nested
# virtualisation) it runs under emulated KVM: tests/linux/emulated-kvm.sh
# boots QEMU's TCG with SVM and runs it there, in this host's own root. That
# checks function, never speed, and everything is 5-10x slower, so
# MINIVMM_EMULATED_KVM=1 tells the suite to run its emulated selection
# (EMULATED_TESTS, EMULATED_EXCLUDE: tests/integration/run.sh) and to allow
# for the emulator in its CPU bounds. One line says so before the run.
#
# MINIVMM_EMULATE_KVM=0 refuses to emulate (the suite's preflight then fails
# on the missing /dev/kvm). EMULATED_KVM_LIMIT: seconds before the emulated
# guest is stopped (default 1800).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }

if [ -w /dev/kvm ] || [ "${MINIVMM_EMULATE_KVM:-1}" = 0 ] || [ -n "${MINIVMM_EMULATED_KVM:-}" ]; then
	exec "$@"
fi

# The environment the suites read, passed into the emulated guest's shell.
forward=(BUILD SAN MAKE NET_EXTRA EXCLUDE EXCLUDE_WHY EMULATED_TESTS EMULATED_EXCLUDE
	TSAN_OPTIONS ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS MINIVMM REAL_MINIVMM
	MINIVMM_CACHE BENCH_OUT)
cmd="MINIVMM_EMULATED_KVM=1"
for v in "${forward[@]}"; do
	[ -n "${!v+x}" ] && cmd+=" $v=$(printf '%q' "${!v}")"
done
cmd+=" $(printf '%q ' "$@")"
echo "# no /dev/kvm on this host: running under emulated KVM (QEMU TCG with nested SVM, tests/linux/emulated-kvm.sh): function only, never speed"
EMULATED_KVM_LIMIT=${EMULATED_KVM_LIMIT:-1800} exec tests/linux/emulated-kvm.sh "$cmd"
