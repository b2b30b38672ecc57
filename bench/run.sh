#!/bin/bash
# minivmm network benchmark driver.
#   bench/run.sh [--quick|--full|--smoke] [--out DIR] [--runs N] [--no-qemu]
# Sets up a private network namespace (bridge br0 10.0.0.1/24 for taps, veth
# vm0/vh0 with vh0 10.0.1.1/24 for the packet backend), runs bench/bench.py
# inside it, and always removes the namespace and everything started in it.
# --smoke: seconds-long run for `make test`, then bench/check.py on the output.
# Needs root, /dev/kvm, build/minivmm, build/testguest/testguest.elf,
# build/tools/netpeer; QEMU (qemu-system-x86_64) and gnuplot (gnuplot-nox) for
# the comparison and the plots.
set -u
cd "$(dirname "$0")/.."
MODE=quick OUT= ARGS=()
while [ $# -gt 0 ]; do
	case $1 in
	--quick) MODE=quick ;;
	--full) MODE=full ;;
	--smoke) MODE=smoke ;;
	--out) OUT=$2; shift ;;
	--runs) ARGS+=(--runs "$2"); shift ;;
	--no-qemu) ARGS+=(--no-qemu) ;;
	*) echo "usage: $0 [--quick|--full|--smoke] [--out DIR] [--runs N] [--no-qemu]" >&2; exit 2 ;;
	esac
	shift
done
OUT=${OUT:-bench/out/$MODE}
for f in build/minivmm build/testguest/testguest.elf build/tools/netpeer; do
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
	ip -n "$NS" link add br0 type bridge &&
	ip -n "$NS" addr add 10.0.0.1/24 dev br0 &&
	ip -n "$NS" link set br0 up &&
	ip -n "$NS" link add vm0 type veth peer name vh0 &&
	ip -n "$NS" addr add 10.0.1.1/24 dev vh0 &&
	ip -n "$NS" link set vm0 up &&
	ip -n "$NS" link set vh0 up || { echo "bench: namespace setup failed" >&2; exit 2; }

echo "bench: $MODE mode, load $(cut -d' ' -f1-3 /proc/loadavg), output in $OUT/" >&2
ip netns exec "$NS" python3 bench/bench.py --mode "$MODE" --out "$OUT" "${ARGS[@]}"
rc=$?
[ $rc = 0 ] || { echo "bench: bench.py failed ($rc)" >&2; exit $rc; }
if [ "$MODE" = smoke ]; then
	python3 bench/check.py "$OUT" || exit 1
fi
exit 0
