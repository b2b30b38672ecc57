#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `make test`: every suite in turn. A failing suite does not stop the ones
# after it, so one CI log shows everything that is broken; the closing lines
# repeat each suite's own summary (with the nested Linux re-runs, if any) and
# the exit status is non-zero if any suite failed.
#
#   tests/run-all.sh [SUITE...]     default: unit-test integration-test uring-variants-test san-test tsan-test fuzz-smoke linux-test bench-smoke
# Environment: BUILD (build directory, default build); MAKE (default make).
set -u
cd "$(dirname "$0")/.."
build=${BUILD:-build}
make=${MAKE:-make}
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit-test integration-test uring-variants-test san-test tsan-test fuzz-smoke linux-test bench-smoke)
logs=$build/test-logs
mkdir -p "$logs"

# summary_of LOG: the lines in which a suite reports its totals.
summary_of() {
	grep -E '^\[====\] Synthesis:|^[0-9]+ passed, [0-9]+ failed|^bench check:|^fuzz[ :]' "$1" |
		sed -E 's/^\[====\] Synthesis: /unit: /; s/ +$//'
}

declare -A status
t0=$(date +%s)
for s in "${suites[@]}"; do
	echo "== make $s"
	start=$(date +%s)
	BUILD=$build "$make" --no-print-directory "$s" 2>&1 | tee "$logs/$s.log"
	status[$s]=${PIPESTATUS[0]}
	echo "== make $s: exit ${status[$s]} after $(( $(date +%s) - start )) s"
done

echo
echo "== make test: summary ($(( $(date +%s) - t0 )) s; logs in $logs/)"
bad=0
for s in "${suites[@]}"; do
	verdict=ok
	[ "${status[$s]}" = 0 ] || { verdict="FAILED (exit ${status[$s]})"; bad=1; }
	printf '%-17s %s\n' "$s" "$verdict"
	summary_of "$logs/$s.log" | sed 's/^/                  /'
done
exit $bad
