#!/bin/bash
# minivmm network benchmark driver.
#   bench/run.sh [--quick|--full|--smoke] [--out DIR] [--runs N] [--no-qemu] [--xdp]
#                [--only REGEX] [--gate|--no-gate] [--gate-timeout S] [--gate-load L] [--gate-busy B]
# Sets up a private network namespace (bridge br0 10.0.0.1/24 for taps, with a
# fixed MAC so it does not change when the first tap joins it; veth
# vm0/vh0 with vh0 10.0.1.1/24 for the packet and xdp backends), runs
# bench/bench.py inside it, and always removes the namespace and everything
# started in it.
# --smoke: seconds-long run for `make test` (quiet gate off unless --gate),
# then bench/check.py on the output. --xdp: minivmm --net xdp= rows too (the
# smoke fails if minivmm refuses the backend). --only: a subset of rows.
# Needs root, /dev/kvm, build/minivmm, build/testguest/testguest.elf,
# build/tools/netpeer, build/tools/rawnet (make rawnet); QEMU
# (qemu-system-x86_64) and gnuplot (gnuplot-nox) for the comparison and plots.
set -u
cd "$(dirname "$0")/.."
MODE=quick OUT= ARGS=() GATE=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) MODE=quick ;;
	--full) MODE=full ;;
	--smoke) MODE=smoke ;;
	--out) OUT=$2; shift ;;
	--runs) ARGS+=(--runs "$2"); shift ;;
	--no-qemu) ARGS+=(--no-qemu) ;;
	--xdp) ARGS+=(--xdp) ;;
	--only) ARGS+=(--only "$2"); shift ;;
	--gate) GATE=on ;;
	--no-gate) GATE=off ;;
	--gate-timeout | --gate-load | --gate-busy) ARGS+=("$1" "$2"); shift ;;
	*) echo "usage: $0 [--quick|--full|--smoke] [--out DIR] [--runs N] [--no-qemu] [--xdp] [--only REGEX]" \
		"[--gate|--no-gate] [--gate-timeout S] [--gate-load L] [--gate-busy B]" >&2; exit 2 ;;
	esac
	shift
done
OUT=${OUT:-bench/out/$MODE}
# The smoke checks shape, not speed: it does not wait for a quiet host unless asked.
[ -z "$GATE" ] && [ "$MODE" = smoke ] && GATE=off
if [ "$GATE" = off ]; then
	[ "$MODE" = smoke ] || { echo "bench: --no-gate is for --smoke only" >&2; exit 2; }
	ARGS+=(--no-gate)
fi
for f in build/minivmm build/testguest/testguest.elf build/tools/netpeer build/tools/rawnet; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "bench: missing $f (run make first)" >&2; exit 2; }
done
command -v qemu-system-x86_64 > /dev/null || { echo "bench: no qemu-system-x86_64: comparison skipped" >&2; ARGS+=(--no-qemu); }
command -v gnuplot > /dev/null || echo "bench: no gnuplot (apt-get install gnuplot-nox): no plots" >&2

NS=mvmbench-$$
cleanup() {
	local pids i
	if [ -e "/run/netns/$NS" ]; then
		mapfile -t pids < <(ip netns pids "$NS" 2> /dev/null)
		[ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2> /dev/null
		for ((i = 0; i < 40; i++)); do
			mapfile -t pids < <(ip netns pids "$NS" 2> /dev/null)
			[ ${#pids[@]} -eq 0 ] && break
			sleep 0.05
		done
		[ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}" 2> /dev/null
		ip netns delete "$NS" 2> /dev/null
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$NS" || { echo "bench: cannot create a network namespace (root needed)" >&2; exit 2; }
ip -n "$NS" link set lo up &&
	ip -n "$NS" link add br0 address 02:00:0a:00:00:01 type bridge &&
	ip -n "$NS" addr add 10.0.0.1/24 dev br0 &&
	ip -n "$NS" link set br0 up &&
	ip -n "$NS" link add vm0 type veth peer name vh0 &&
	ip -n "$NS" addr add 10.0.1.1/24 dev vh0 &&
	ip -n "$NS" link set vm0 up &&
	ip -n "$NS" link set vh0 up || { echo "bench: namespace setup failed" >&2; exit 2; }

echo "bench: $MODE mode, load $(cut -d' ' -f1-3 /proc/loadavg), output in $OUT/" >&2
# bpffs inside the namespace's private mount namespace (ip netns exec makes one), so libxdp
# can use its dispatcher for the AF_XDP ceilings without touching the host's mounts.
ip netns exec "$NS" sh -c 'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf 2> /dev/null
	exec python3 bench/bench.py "$@"' sh --mode "$MODE" --out "$OUT" "${ARGS[@]}"
rc=$?
[ $rc = 0 ] || { echo "bench: bench.py failed ($rc)" >&2; exit $rc; }
if [ "$MODE" = smoke ]; then
	python3 bench/check.py "$OUT" || exit 1
fi
exit 0
