#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# minivmm network benchmark driver.
#   bench/run.sh [--quick|--full|--smoke|--regress|--limits] [--baseline REV] [--out DIR] [--runs N] [--no-qemu]
#                [--no-xdp] [--only REGEX] [--gate|--no-gate] [--gate-timeout S] [--gate-load L] [--gate-busy B]
# Sets up a private network namespace (bench/netns.sh: bridge br0 10.0.0.1/24
# for taps, veth vm0/vh0 with vh0 10.0.1.1/24 for the packet and xdp backends), runs
# bench/bench.py inside it, and always removes the namespace and everything
# started in it.
# --smoke: seconds-long run for `make test` (quiet gate off unless --gate),
# then bench/check.py on the output. minivmm --net xdp= rows are in by default
# (the smoke fails if minivmm refuses the backend); --no-xdp leaves them out.
# --only: a subset of rows.
# --baseline REV: REV's minivmm (bench/baseline.sh builds it once, in a git
# worktree) runs beside this tree's in every minivmm row (the smoke: in the
# rows of --regress it has); the report gets a HEAD ÷ baseline section, and
# bench/baseline.py's verdict makes the run exit 1 when a row regressed
# (never in the smoke, never under emulated KVM).
# --limits: bench/limits.py instead (make bench-limits): TX and RX held to
# three rate limits, measured over 5 s, and a one-time burst plotted.
# --regress: the rows of make bench-regress only (tap TX, tap RX with the
# spinning and the sleeping guest, packet ring RX, AF_XDP TX and RX; 1 pair).
# Needs root, /dev/kvm, build/minivmm, build/testguest/testguest.elf,
# build/tools/netpeer, build/tools/rawnet (make rawnet); QEMU
# (qemu-system-x86_64) and gnuplot (gnuplot-nox) for the comparison and plots.
set -u
cd "$(dirname "$0")/.." || exit 2
MODE=quick OUT='' ARGS=() GATE='' BASELINE=''
while [ $# -gt 0 ]; do
	case $1 in
	--quick) MODE=quick ;;
	--full) MODE=full ;;
	--smoke) MODE=smoke ;;
	--regress) MODE=regress ;;
	--limits) MODE=limits ;;
	--baseline)
		[ -n "${2-}" ] || { echo "bench: --baseline needs a revision (a commit, tag or branch)" >&2; exit 2; }
		BASELINE=$2; shift ;;
	--out) OUT=$2; shift ;;
	--runs) ARGS+=(--runs "$2"); shift ;;
	--no-qemu) ARGS+=(--no-qemu) ;;
	--xdp) ARGS+=(--xdp) ;;
	--no-xdp) ARGS+=(--no-xdp) ;;
	--only) ARGS+=(--only "$2"); shift ;;
	--gate) GATE=on ;;
	--no-gate) GATE=off ;;
	--gate-timeout | --gate-load | --gate-busy) ARGS+=("$1" "$2"); shift ;;
	*) echo "usage: $0 [--quick|--full|--smoke|--regress|--limits] [--baseline REV] [--out DIR] [--runs N] [--no-qemu] [--no-xdp] [--only REGEX]" \
		"[--gate|--no-gate] [--gate-timeout S] [--gate-load L] [--gate-busy B]" >&2; exit 2 ;;
	esac
	shift
done
OUT=${OUT:-bench/out/$MODE}
# The smoke checks shape, not speed: it does not wait for a quiet host unless asked.
[ -z "$GATE" ] && [ "$MODE" = smoke ] && GATE=off
# Nor does --regress or --limits under emulated KVM, where no figure is a measurement.
if [ -z "$GATE" ] && { [ "$MODE" = regress ] || [ "$MODE" = limits ]; } && [ -n "${MINIVMM_EMULATED_KVM:-}" ]; then
	GATE=off
	echo "bench: under emulated KVM: quiet gate off, no figure is a measurement" >&2
fi
if [ "$GATE" = off ]; then
	[ "$MODE" = smoke ] || { { [ "$MODE" = regress ] || [ "$MODE" = limits ]; } && [ -n "${MINIVMM_EMULATED_KVM:-}" ]; } ||
		{ echo "bench: --no-gate is for --smoke only" >&2; exit 2; }
	ARGS+=(--no-gate)
fi
for f in build/minivmm build/testguest/testguest.elf build/tools/netpeer build/tools/rawnet; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "bench: missing $f (run make first)" >&2; exit 2; }
done
if [ -n "$BASELINE" ]; then
	BASE_BIN=$(bench/baseline.sh "$BASELINE") || exit $?
	ARGS+=(--baseline-bin "$BASE_BIN" --baseline-rev "$BASELINE")
fi
[ "$MODE" = regress ] && ARGS+=(--no-qemu)
command -v qemu-system-x86_64 > /dev/null || { echo "bench: no qemu-system-x86_64: comparison skipped" >&2; ARGS+=(--no-qemu); }
command -v gnuplot > /dev/null || echo "bench: no gnuplot (apt-get install gnuplot-nox): no plots" >&2

# shellcheck source=bench/netns.sh
. bench/netns.sh
trap bench_ns_cleanup EXIT
trap 'exit 130' INT TERM
bench_ns_setup "mvmbench-$$" || exit 2
NS=$BENCH_NS

echo "bench: $MODE mode, load $(cut -d' ' -f1-3 /proc/loadavg), output in $OUT/" >&2
# bpffs inside the namespace's private mount namespace (ip netns exec makes one), so libxdp
# can use its dispatcher for the AF_XDP ceilings without touching the host's mounts.
if [ "$MODE" = limits ]; then
	LARGS=(--out "$OUT")
	[ "$GATE" = off ] && LARGS+=(--no-gate)
	ip netns exec "$NS" python3 bench/limits.py "${LARGS[@]}"
	rc=$?
	[ $rc = 0 ] || echo "bench: limits.py failed ($rc)" >&2
	exit $rc
fi
ip netns exec "$NS" sh -c 'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2> /dev/null
	exec python3 bench/bench.py "$@"' sh --mode "$MODE" --out "$OUT" "${ARGS[@]}"
rc=$?
[ $rc = 0 ] || { echo "bench: bench.py failed ($rc)" >&2; exit $rc; }
if [ "$MODE" = smoke ]; then
	[ -z "${MINIVMM_EMULATED_KVM:-}" ] ||
		echo "bench: under emulated KVM (tests/with-kvm.sh): the check is of the tables' shape; no figure above is a measurement"
	python3 bench/check.py "$OUT" || exit 1
fi
if [ -n "$BASELINE" ]; then
	python3 bench/baseline.py "$OUT" || exit 1
fi
exit 0
