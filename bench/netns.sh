# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# The benchmark's private network namespace, sourced by bench/run.sh and
# bench/uring-trace.sh:
#   bench_ns_setup NAME   bridge br0 10.0.0.1/24 with a fixed MAC (a bridge
#                         without one takes its first port's, which would make a
#                         MAC read earlier stale) for taps; veth vm0/vh0 with
#                         vh0 10.0.1.1/24 for the packet and xdp backends.
#   bench_ns_cleanup      end every process in it (TERM, then KILL) and delete it.
# The caller sets `trap bench_ns_cleanup EXIT`.
BENCH_NS=

bench_ns_cleanup() {
	local pids i
	[ -n "$BENCH_NS" ] && [ -e "/run/netns/$BENCH_NS" ] || return 0
	mapfile -t pids < <(ip netns pids "$BENCH_NS" 2> /dev/null)
	[ ${#pids[@]} -gt 0 ] && kill -TERM "${pids[@]}" 2> /dev/null
	for ((i = 0; i < 40; i++)); do
		mapfile -t pids < <(ip netns pids "$BENCH_NS" 2> /dev/null)
		[ ${#pids[@]} -eq 0 ] && break
		sleep 0.05
	done
	[ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}" 2> /dev/null
	ip netns delete "$BENCH_NS" 2> /dev/null
	return 0
}

bench_ns_setup() {
	BENCH_NS=$1
	ip netns add "$BENCH_NS" || { echo "bench: cannot create a network namespace (root needed)" >&2; return 2; }
	if ! { ip -n "$BENCH_NS" link set lo up &&
		ip -n "$BENCH_NS" link add br0 address 02:00:0a:00:00:01 type bridge &&
		ip -n "$BENCH_NS" addr add 10.0.0.1/24 dev br0 &&
		ip -n "$BENCH_NS" link set br0 up &&
		ip -n "$BENCH_NS" link add vm0 type veth peer name vh0 &&
		ip -n "$BENCH_NS" addr add 10.0.1.1/24 dev vh0 &&
		ip -n "$BENCH_NS" link set vm0 up &&
		ip -n "$BENCH_NS" link set vh0 up; }; then
		echo "bench: namespace setup failed" >&2
		return 2
	fi
}
