#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The soak (make soak; docs/soak.md): full-rate UDP in both directions on
# every queue pair at once, sequence numbers checked end to end, and every
# frame accounted for: delivered, or dropped at a named place outside the
# VMM. One run per configuration, each in its own network namespace:
#
#   tests/soak/soak.sh [PATTERN...]       configurations to run (globs; none: all)
#
#   configurations  tap-uring-q2 tap-epoll-q2 packet-uring-q2 packet-epoll-q2
#                   tap-uring-q4 tap-epoll-q4 packet-uring-q4 packet-epoll-q4
#                   (packet = the packet backend with rx=ring on a veth pair;
#                   qN = N queue pairs, N vCPUs)
#   SOAK_SECS=120   seconds of traffic per configuration
#   SOAK_SAN_SECS=30 and SOAK_SAN_MINIVMM=PATH: then every configuration
#                   again with that (ASan/UBSan) minivmm for that long
#   SOAK_SIZES=60-1514  frame sizes, both directions (cycling)
#   SOAK_FLOWS=64   host -> guest flows (spread over the queues by the
#                   backend's hash; the guest tracks 64 at most)
#   SOAK_OUT=DIR    keep every run's files there (default: a temporary
#                   directory, removed unless something failed)
#   BUILD=build     where minivmm, the test guest and netpeer are
#   SOAK_MINIVMM=PATH  another minivmm for the first round ($BUILD/minivmm)
#
# Prints a table per run and, at the end, one line per failure; exits 1 if
# there was any. Needs root and /dev/kvm.
set -u
cd "$(dirname "$0")/../.." || exit 1

: "${BUILD:=build}" "${SOAK_SECS:=120}" "${SOAK_SAN_SECS:=30}" "${SOAK_SAN_MINIVMM:=}"
: "${SOAK_SIZES:=60-1514}" "${SOAK_FLOWS:=64}" "${SOAK_MINIVMM:=$BUILD/minivmm}"
TESTGUEST="$BUILD/testguest/testguest.elf"
NETPEER=$(realpath "$BUILD/tools/netpeer" 2> /dev/null)
CONFIGS="tap-uring-q2 tap-epoll-q2 packet-uring-q2 packet-epoll-q2 tap-uring-q4 tap-epoll-q4 packet-uring-q4 packet-epoll-q4"
GUEST_MAC=02:00:00:00:50:01
PORT=5001
WAIT_SECS=60      # the guest waits this long after its TX for the stop datagram

die() {
	echo "soak: $*" >&2
	echo "FAIL soak: $*"
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (network namespaces, taps)"
[ -w /dev/kvm ] || die "/dev/kvm is missing or not writable"
for f in "$SOAK_MINIVMM" "$TESTGUEST" "$NETPEER" ${SOAK_SAN_MINIVMM:+"$SOAK_SAN_MINIVMM"}; do
	[ -x "$f" ] || [ -f "$f" ] || die "$f is not built (make)"
done
[[ $SOAK_SECS =~ ^[1-9][0-9]*$ && $SOAK_SAN_SECS =~ ^[1-9][0-9]*$ ]] ||
	die "SOAK_SECS and SOAK_SAN_SECS must be whole seconds > 0"
[[ $SOAK_FLOWS =~ ^[1-9][0-9]*$ ]] && [ "$SOAK_FLOWS" -le 64 ] || die "SOAK_FLOWS must be 1-64"

if [ -n "${SOAK_OUT:-}" ]; then
	mkdir -p "$SOAK_OUT" || die "cannot create $SOAK_OUT"
	OUT_ROOT=$SOAK_OUT
	KEEP=1
else
	OUT_ROOT=$(mktemp -d /tmp/minivmm-soak.XXXXXX) || die "no temporary directory"
	KEEP=0
fi
TMP_ROOT=$OUT_ROOT
. tests/integration/netns.sh
trap netns_cleanup EXIT

selected() {
	[ $# -gt 1 ] || return 0
	local c=$1 p; shift
	for p; do
		# shellcheck disable=SC2053
		[[ $c == $p ]] && return 0
	done
	return 1
}

now_s() {
	echo "${EPOCHREALTIME%.*}"
}

# wait_file PATH SECONDS: poll for a file to appear.
wait_file() {
	local end=$(($(now_s) + $2))
	while [ ! -e "$1" ]; do
		[ "$(now_s)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# wait_exit PID SECONDS: 0 if PID ended within SECONDS.
wait_exit() {
	local end=$(($(now_s) + $2))
	while kill -0 "$1" 2> /dev/null; do
		[ "$(now_s)" -lt "$end" ] || return 1
		sleep 0.1
	done
}

# setup_net BACKEND: the namespace's host side. tap: a persistent
# multiqueue tap t0 that minivmm attaches to (so its counters cover the
# whole run); packet: a veth pair, v0 for minivmm, v1 for the host. IPv6 off
# (no frames nobody asked for), a permanent neighbour entry for the guest
# (the host never ARPs while its queue towards the guest is full).
setup_net() {
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 || return 1
	if [ "$1" = tap ]; then
		HOST_IF=t0 GUEST_IF=t0
		ip -n "$NS" tuntap add t0 mode tap multi_queue || return 1
		NET_ARG="tap=t0"
	else
		HOST_IF=v1 GUEST_IF=v0
		ip -n "$NS" link add v0 type veth peer name v1 &&
			ip -n "$NS" link set v0 up || return 1
		NET_ARG="packet=v0,rx=ring"
	fi
	ip -n "$NS" addr add 10.0.0.1/24 dev "$HOST_IF" &&
		ip -n "$NS" link set "$HOST_IF" up &&
		ip -n "$NS" neigh replace 10.0.0.2 lladdr "$GUEST_MAC" dev "$HOST_IF" nud permanent
}

# run_one CONFIG MINIVMM SECS LABEL: one soak run; its table on stdout, its
# failure lines appended to $FAILURES.
run_one() {
	local cfg=$1 vmm=$2 secs=$3 label=$4 backend engine queues dir rc vm_pid cnt_pid i
	IFS=- read -r backend engine queues <<< "$cfg"
	queues=${queues#q}
	dir="$OUT_ROOT/$cfg${label:+-$label}"
	mkdir -p "$dir" && rm -f "$dir"/*
	local tag="$cfg${label:+ [$label]}"
	local fail_early=()

	netns_create NS || { echo "FAIL soak $tag: cannot create a network namespace" >> "$FAILURES"; return; }
	if ! setup_net "$backend" 2> "$dir/setup.err"; then
		echo "FAIL soak $tag: cannot set up the host side: $(tr '\n' ' ' < "$dir/setup.err")" >> "$FAILURES"
		netns_cleanup
		return
	fi
	# The guest -> host receiver: the guest's flow q is queue q's.
	ip netns exec "$NS" "$NETPEER" count --port $PORT --flows "$queues" \
		--timeout-ms $(((secs + WAIT_SECS + 120) * 1000)) --idle-ms 86400000 \
		--ready-file "$dir/count.ready" > "$dir/count.out" 2>&1 &
	cnt_pid=$!
	wait_file "$dir/count.ready" 10 || fail_early+=("netpeer count did not start: $(cat "$dir/count.out")")

	ip netns exec "$NS" timeout -k 5 $((secs + WAIT_SECS + 180)) "$vmm" --kernel "$TESTGUEST" \
		--cpus "$queues" --net "$NET_ARG,queues=$queues,engine=$engine,mac=$GUEST_MAC" --stats=json \
		--cmdline "test=net-duplex queues=$queues secs=$secs size=$SOAK_SIZES wait-secs=$WAIT_SECS port=$PORT" \
		< /dev/null > "$dir/vm.out" 2>&1 &
	vm_pid=$!
	for ((i = 0; i < 600; i++)); do
		grep -qs "net-duplex ready" "$dir/vm.out" && break
		kill -0 "$vm_pid" 2> /dev/null || break
		sleep 0.05
	done
	if grep -q "net-duplex ready" "$dir/vm.out"; then
		echo "# $tag: $secs s of traffic both ways" >&2
		ip netns exec "$NS" "$NETPEER" send --dst 10.0.0.2 --port $PORT --flows "$SOAK_FLOWS" \
			--size "$SOAK_SIZES" --duration-ms $((secs * 1000)) > "$dir/send.out" 2>&1
		# Let the queues drain, then stop the guest (again if a stop was lost).
		sleep 1
		for ((i = 0; i < 5; i++)); do
			ip netns exec "$NS" "$NETPEER" stop --dst 10.0.0.2 --port $PORT --repeat 1 > /dev/null 2>&1
			wait_exit "$vm_pid" 6 && break
		done
	else
		fail_early+=("the guest did not get ready: $(tail -c 400 "$dir/vm.out" | tr '\n' '|')")
	fi
	if ! wait_exit "$vm_pid" 30; then
		fail_early+=("minivmm did not stop after the stop datagram; killed it")
		kill -TERM "$vm_pid" 2> /dev/null
	fi
	wait "$vm_pid"
	rc=$?
	# Everything the guest sent is in the receiver's socket by now.
	sleep 0.5
	ip netns exec "$NS" "$NETPEER" stop --dst 10.0.0.1 --port $PORT --repeat 1 > /dev/null 2>&1
	wait_exit "$cnt_pid" 10 || kill -TERM "$cnt_pid" 2> /dev/null
	wait "$cnt_pid" 2> /dev/null
	ip -n "$NS" -s -j link show > "$dir/links.json" 2>&1
	ip netns exec "$NS" tc -s -j qdisc show dev "$HOST_IF" > "$dir/qdisc.json" 2>&1
	ip netns exec "$NS" cat /proc/net/snmp > "$dir/snmp"
	netns_cleanup

	python3 tests/soak/account.py --run "$dir" --name "$cfg" --label "$label" --backend "$backend" \
		--engine "$engine" --queues "$queues" --secs "$secs" --sizes "$SOAK_SIZES" \
		--flows "$SOAK_FLOWS" --host-if "$HOST_IF" --guest-if "$GUEST_IF" --vm-rc "$rc"
	for f in "${fail_early[@]}"; do
		echo "FAIL soak $tag: $f" >> "$FAILURES"
	done
	[ -f "$dir/failures" ] && cat "$dir/failures" >> "$FAILURES"
	[ -f "$dir/failures" ] || echo "FAIL soak $tag: the accounting did not run" >> "$FAILURES"
}

FAILURES="$OUT_ROOT/all-failures"
: > "$FAILURES"
plan=()
for c in $CONFIGS; do
	selected "$c" "$@" && plan+=("$c")
done
[ ${#plan[@]} -gt 0 ] || die "no configuration matches '$*' (have: $CONFIGS)"
total=$((${#plan[@]} * SOAK_SECS))
[ -n "$SOAK_SAN_MINIVMM" ] && total=$((total + ${#plan[@]} * SOAK_SAN_SECS))
echo "# soak: ${#plan[@]} configurations x $SOAK_SECS s${SOAK_SAN_MINIVMM:+, then again under ASan/UBSan x $SOAK_SAN_SECS s}: $total s of traffic, files in $OUT_ROOT"
for c in "${plan[@]}"; do
	run_one "$c" "$SOAK_MINIVMM" "$SOAK_SECS" ""
done
if [ -n "$SOAK_SAN_MINIVMM" ]; then
	for c in "${plan[@]}"; do
		run_one "$c" "$SOAK_SAN_MINIVMM" "$SOAK_SAN_SECS" asan
	done
fi

n=$(grep -c . "$FAILURES")
runs=${#plan[@]}
[ -n "$SOAK_SAN_MINIVMM" ] && runs=$((runs * 2))
echo
if [ "$n" -gt 0 ]; then
	cat "$FAILURES"
	echo "soak: $n failures in $runs runs; files in $OUT_ROOT"
	exit 1
fi
echo "soak: $runs runs, every frame accounted for, none lost or damaged inside the VMM"
[ "$KEEP" = 1 ] || rm -rf "$OUT_ROOT"
exit 0
