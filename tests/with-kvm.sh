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
# The benchmark's tables and plots are written in the emulated guest's
# overlay: bring them back (BENCH_OUT, if inside the project, else bench/out).
case " $* " in
*" bench/run.sh "*)
	keep=${BENCH_OUT:-bench/out}
	case "$keep" in "$PWD"/*) keep=${keep#"$PWD"/} ;; esac
	case "$keep" in /*) echo "# BENCH_OUT is outside the project: its files stay in the emulated guest" ;;
	*) export EMULATED_KVM_KEEP="${EMULATED_KVM_KEEP:-} $keep" ;; esac ;;
esac
export EMULATED_KVM_LIMIT=${EMULATED_KVM_LIMIT:-1800}
case " $* " in
*" tests/integration/run.sh "*) ;;
*) exec tests/linux/emulated-kvm.sh "$cmd" ;;
esac
# The integration suite: if the emulated guest itself dies (its kernel
# panicked once in ~1000 tests here), the tests it did not get to run on a
# new one; those that ran keep their results.
first=$(mktemp)
trap 'rm -f "$first"' EXIT
set +e
tests/linux/emulated-kvm.sh "$cmd" | tee "$first"
rc=${PIPESTATUS[0]}
[ "$rc" = 3 ] || exit "$rc"
ran=$(sed -nE 's/^(ok|FAIL) - ([A-Za-z0-9_]+).*/\2/p' "$first" | tr '\n' ' ')
n_ok=$(grep -c '^ok - ' "$first") n_fail=$(grep -c '^FAIL - ' "$first")
echo "# the emulated guest died after $n_ok passed and $n_fail failed: the other tests run on a new one"
tests/linux/emulated-kvm.sh "EMULATED_DONE=$(printf '%q' "$ran") $cmd"
rc=$?
[ "$n_fail" = 0 ] || rc=1
exit "$rc"
