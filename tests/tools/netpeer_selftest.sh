#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Self-test of netpeer and tests/integration/netns.sh without a guest: two
# network namespaces joined by a veth pair, netpeer on both sides.
#   tests/tools/netpeer_selftest.sh [PATH-TO-NETPEER]     (needs root)
# Prints one line per check and exits non-zero if any failed.
set -u
cd "$(dirname "$0")/../.." || exit 1
NP=$(realpath "${1:-build/tools/netpeer}" 2> /dev/null)
[ -x "$NP" ] || { echo "netpeer self-test: ${1:-build/tools/netpeer} not built (make netpeer)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "netpeer self-test: needs root (network namespaces)"; exit 1; }
. tests/integration/netns.sh
trap netns_cleanup EXIT

WORK=$(mktemp -d /tmp/netpeer-selftest.XXXXXX)
failed=0
check() {   # check NAME COMMAND...: the command must succeed
	local name=$1; shift
	if "$@"; then
		echo "ok - $name"
	else
		echo "FAIL - $name"
		failed=$((failed + 1))
	fi
}
has() { grep -qx -- "$1" "$2" || { echo "  no line '$1' in $2: $(tr '\n' ' ' < "$2")"; return 1; }; }

# server_start ARGS...: echo-server on 10.0.0.2:7000 in $B, waits until bound.
server_start() {
	rm -f "$WORK/ready"
	netns_exec "$B" "$NP" echo-server --port 7000 --ready-file "$WORK/ready" \
		--timeout-ms 20000 "$@" > "$WORK/server.out" &
	SERVER=$!
	for _ in $(seq 200); do [ -f "$WORK/ready" ] && return 0; sleep 0.02; done
	return 1
}

# echo_case WANT_RC SERVER-ARGS -- CHECK-ARGS
echo_case() {
	local want=$1 sargs=(); shift
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done; shift
	server_start "${sargs[@]}" || return 1
	netns_exec "$A" "$NP" echo-check --dst 10.0.0.2 --port 7000 --stop "$@" > "$WORK/check.out"
	local rc=$?
	wait "$SERVER"
	[ "$rc" = "$want" ] || { echo "  exit $rc, want $want: $(tr '\n' ' ' < "$WORK/check.out")"; return 1; }
}

t_echo_clean() {
	echo_case 0 -- --count 5000 --flows 4 --window 64 --wait-ms 2000 &&
		has sent=5000 "$WORK/check.out" && has received=5000 "$WORK/check.out" &&
		has lost=0 "$WORK/check.out" && has corrupt=0 "$WORK/check.out" &&
		has flow3_received=1250 "$WORK/check.out" && has stopped=stop "$WORK/server.out"
}
t_echo_detects_loss() {
	echo_case 1 --drop-every 100 -- --count 1000 --loss-ms 200 &&
		has lost=10 "$WORK/check.out" && has "reason=10 of 1000 datagrams lost" "$WORK/check.out"
}
t_echo_allow_loss() {
	echo_case 0 --drop-every 100 -- --count 1000 --loss-ms 200 --allow-loss &&
		has lost=10 "$WORK/check.out" && has result=ok "$WORK/check.out"
}
t_echo_detects_corruption() {
	echo_case 1 --corrupt-every 97 -- --count 1000 --flows 3 && has corrupt=10 "$WORK/check.out"
}
t_echo_detects_duplicates() {
	echo_case 1 --dup-every 50 -- --count 1000 && has duplicates=20 "$WORK/check.out"
}

# stream_case COUNT-ARGS -- SEND-ARGS: count in $B, send from $A.
stream_case() {
	local cargs=(); while [ "$1" != -- ]; do cargs+=("$1"); shift; done; shift
	rm -f "$WORK/ready"
	netns_exec "$B" "$NP" count --port 9000 --ready-file "$WORK/ready" "${cargs[@]}" \
		> "$WORK/count.out" &
	local cpid=$! rc
	for _ in $(seq 200); do [ -f "$WORK/ready" ] && break; sleep 0.02; done
	netns_exec "$A" "$NP" send --dst 10.0.0.2 --port 9000 "$@" > "$WORK/send.out" || return 1
	wait "$cpid"; rc=$?
	echo "  send: $(grep -E '^(sent|rate_pps|rate_mbps)=' "$WORK/send.out" | tr '\n' ' ')"
	echo "  count: $(grep -E '^(received|gaps|rate_pps)=' "$WORK/count.out" | tr '\n' ' ')"
	[ "$rc" = 0 ] || { echo "  count exit $rc: $(grep -E '^reason=' "$WORK/count.out")"; return 1; }
}
t_stream_full_rate() {
	stream_case --expect 400000 --flows 4 -- --count 400000 --flows 4 &&
		has gaps=0 "$WORK/count.out" && has stopped=expect "$WORK/count.out"
}
t_stream_paced_mixed_sizes() {
	stream_case --expect 100000 --flows 2 -- --count 100000 --flows 2 --rate 100000 --size 60-1514
}
t_stream_stop() {
	stream_case --flows 2 -- --count 1000 --flows 2 --stop && has stopped=stop "$WORK/count.out"
}
# --duration-ms: paced so the count is exact; the flows take turns.
t_stream_duration() {
	stream_case --flows 2 -- --duration-ms 500 --rate 10000 --flows 2 --stop &&
		has stopped=duration "$WORK/send.out" && has gaps=0 "$WORK/count.out" &&
		[ "$(sed -n 's/^sent=//p' "$WORK/send.out")" = "$(sed -n 's/^received=//p' "$WORK/count.out")" ] &&
		[ "$(sed -n 's/^sent=//p' "$WORK/send.out")" -ge 3000 ] &&
		[ "$(sed -n 's/^sent=//p' "$WORK/send.out")" -le 5100 ] ||
		{ echo "  sent $(sed -n 's/^sent=//p' "$WORK/send.out") in 500 ms at 10000/s"; return 1; }
}

t_usage_errors() {
	local out="$WORK/usage.out"
	"$NP" count --port 0 > "$out" 2>&1
	[ $? = 2 ] && [ "$(wc -l < "$out")" = 1 ] && has "netpeer: --port: '0' is not a port (1-65535)" "$out" &&
		{ "$NP" send --dst 10.0.0.2 --port 5 > "$out" 2>&1; [ $? = 2 ]; } &&
		has "netpeer: send: --count N or --duration-ms D is required" "$out" &&
		"$NP" --help > "$out" && grep -q '^  netpeer echo-check' "$out"
}

t_netns_cleanup() {
	local inner leftover
	( trap netns_cleanup EXIT; netns_create C; echo "$C" > "$WORK/inner"
	  netns_exec "$C" sleep 60 & sleep 0.1 ) 2> /dev/null
	inner=$(cat "$WORK/inner")
	[ ! -e "/run/netns/$inner" ] || { echo "  $inner survived its subshell's cleanup"; return 1; }
	[ -e "/run/netns/$A" ] || { echo "  the subshell deleted the enclosing shell's $A"; return 1; }
	netns_wait_link "$A" nosuch 1 2> /dev/null && return 1
	netns_cleanup && netns_cleanup
	leftover=$(ip netns list | grep -c "^$NETNS_PREFIX")
	[ "$leftover" = 0 ] || { echo "  $leftover namespaces left"; return 1; }
}

netns_create A && netns_create B &&
	netns_veth_between "$A" va "$B" vb &&
	netns_add_addr "$A" va 10.0.0.1/24 && netns_add_addr "$B" vb 10.0.0.2/24 || exit 1
for t in echo_clean echo_detects_loss echo_allow_loss echo_detects_corruption \
	 echo_detects_duplicates stream_full_rate stream_paced_mixed_sizes stream_stop stream_duration \
	 usage_errors netns_cleanup; do
	check "$t" "t_$t"
done
rm -rf "$WORK"
echo "netpeer self-test: $failed failed"
[ "$failed" = 0 ]
