#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/baseline.sh REV: the minivmm binary of revision REV, which
# bench/run.sh --baseline runs beside this tree's in every row. Prints its
# path on standard output; what it did goes to standard error.
#
# Built once per commit into $BENCH_BASELINE_CACHE/<commit>/minivmm
# (default build/bench-baseline/, so `make clean` removes it) from a
# temporary git worktree at REV, which is removed again with its
# registration; a later call for the same commit reuses the binary. Only the
# binary is built (`make BUILD=build build/minivmm`, a target every
# revision's Makefile has), with WERROR=0 for Makefiles that know it.
# A REV that names no commit: one line, status 2, nothing created.
set -u
cd "$(dirname "$0")/.." || exit 2
[ $# = 1 ] || { echo "usage: $0 REV" >&2; exit 2; }
rev=$1
case $rev in
-* | '') echo "bench: --baseline '$rev': not a revision" >&2; exit 2 ;;
esac
hash=$(git rev-parse --verify --quiet "$rev^{commit}" 2> /dev/null) ||
	{ echo "bench: --baseline $rev: no such commit in this repository" >&2; exit 2; }
short=${hash:0:7}
cache=${BENCH_BASELINE_CACHE:-build/bench-baseline}/$hash
bin=$cache/minivmm
if [ -x "$bin" ]; then
	echo "bench: baseline $short: $bin (built before, reused)" >&2
	echo "$bin"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/minivmm-baseline.XXXXXX") || exit 1
cleanup() {
	git worktree remove --force "$tmp/src" > /dev/null 2>&1
	rm -rf "$tmp"
	git worktree prune
}
trap cleanup EXIT
trap 'exit 130' INT TERM
echo "bench: building the baseline's minivmm ($short) in a temporary worktree" >&2
SECONDS=0
git worktree add --detach --quiet "$tmp/src" "$hash" ||
	{ echo "bench: baseline $short: git worktree add failed" >&2; exit 1; }
# The outer make's flags (a BUILD= of its own, the job server) are not the baseline's.
if ! (cd "$tmp/src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -j"$(nproc 2> /dev/null || echo 2)" BUILD=build WERROR=0 build/minivmm) > "$tmp/build.log" 2>&1; then
	mkdir -p "$cache" && cp "$tmp/build.log" "$cache/build.log"
	echo "bench: baseline $short does not build (make build/minivmm at it); its last lines, all in $cache/build.log:" >&2
	tail -5 "$tmp/build.log" >&2
	exit 1
fi
mkdir -p "$cache" || exit 1
cp "$tmp/build.log" "$cache/build.log"
install -m 0755 "$tmp/src/build/minivmm" "$bin.tmp.$$" && mv -f "$bin.tmp.$$" "$bin" || exit 1
echo "bench: baseline $short built in $SECONDS s: $bin" >&2
echo "$bin"
