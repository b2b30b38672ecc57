# SPDX-License-Identifier: Apache-2.0
# The tap's host side (--net ip=, bridge=; docs/virtio-net.md) with a real
# guest, in a network namespace the test creates: minivmm configures the
# tap, the host reaches the guest through it with nothing set by hand, and
# at exit what minivmm did is undone (under the default seccomp filters, so
# the teardown's rtnetlink calls are on main's list), also with --drop-caps.

. tests/integration/netns.sh

# hostnet_start NAME [MINIVMM ARGS...]: the test guest echoing on 10.0.0.2
# in a fresh namespace $NS; sets $OUT and $VM_PID, returns once it is ready.
hostnet_start() {
	local name=$1; shift
	OUT="$TMP_ROOT/$name.out"
	ip netns exec "$NS" timeout -k 5 "${VM_TIMEOUT:-60}" "$MINIVMM" --kernel "$TESTGUEST" \
		--cmdline "test=net-echo secs=40" "$@" < /dev/null > "$OUT" 2>&1 &
	VM_PID=$!
	wait_ready "$OUT" "$VM_PID" "ready ip" "guest not ready"
}

# hostnet_ping_then_stop: the host pings the guest, stops it, waits; sets $rc.
hostnet_ping_then_stop() {
	local res="$TMP_ROOT/hostnet.ping"
	ip netns exec "$NS" ping -c 5 -i 0.05 -W 1 10.0.0.2 > "$res" 2>&1
	local ping_rc=$?
	ip netns exec "$NS" "$BUILD/tools/netpeer" stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	wait "$VM_PID"
	rc=$?
	[ $ping_rc = 0 ] || { fail "ping through the tap: $(tail -2 "$res" | tr '\n' ' ')"; return 1; }
}

# ip= on a tap minivmm creates: up with the address, then gone with it.
t_hostnet_ip_on_a_created_tap() {
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	hostnet_start ip-created --net tap=t0,ip=10.0.0.1/24 || return 1
	expect_line "net0: tap t0 \\(created\\).*host side: 10\\.0\\.0\\.1/24, up" "$OUT" || return 1
	hostnet_ping_then_stop || return 1
	expect_rc 0 "$OUT" || return 1
	! ip -n "$NS" link show dev t0 > /dev/null 2>&1 || { fail "t0 outlived minivmm"; return 1; }
}

# ip= on an operator's tap, with --drop-caps: the address minivmm added goes,
# the one the operator gave stays, the link is down again.
t_hostnet_ip_on_an_operators_tap_is_undone_with_drop_caps() {
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	ip -n "$NS" tuntap add t0 mode tap && ip -n "$NS" addr add 10.9.0.1/24 dev t0 ||
		{ fail "cannot make t0"; return 1; }
	hostnet_start ip-given --net tap=t0,ip=10.0.0.1/24 --drop-caps || return 1
	expect_line "host side: 10\\.0\\.0\\.1/24, up; undone at exit" "$OUT" || return 1
	hostnet_ping_then_stop || return 1
	expect_rc 0 "$OUT" || return 1
	expect_no_line "keeps address|stays up|stays a port" "$OUT" || return 1
	local addrs
	addrs=$(ip -n "$NS" -br addr show dev t0)
	[[ $addrs != *10.0.0.1/24* ]] || { fail "the address minivmm added stays: $addrs"; return 1; }
	[[ $addrs == *10.9.0.1/24* ]] || { fail "the operator's address went: $addrs"; return 1; }
	ip -n "$NS" link show dev t0 | grep -q "state DOWN" ||
		{ fail "t0 is not down again: $(ip -n "$NS" -br link show dev t0)"; return 1; }
}

# bridge= on an operator's tap: a port of br0 (which has the host's
# address) while the VM runs, off it and down afterwards.
t_hostnet_bridge_on_an_operators_tap_is_undone() {
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	ip -n "$NS" tuntap add t0 mode tap && netns_bridge "$NS" br0 &&
		netns_add_addr "$NS" br0 10.0.0.1/24 || { fail "cannot make t0 and br0"; return 1; }
	hostnet_start bridge --net tap=t0,bridge=br0 || return 1
	ip -n "$NS" link show dev t0 | grep -q "master br0" ||
		{ fail "t0 is not a port of br0: $(ip -n "$NS" link show dev t0 | head -1)"; return 1; }
	hostnet_ping_then_stop || return 1
	expect_rc 0 "$OUT" || return 1
	! ip -n "$NS" link show dev t0 | grep -q "master" ||
		{ fail "t0 stays on the bridge: $(ip -n "$NS" link show dev t0 | head -1)"; return 1; }
	ip -n "$NS" link show dev t0 | grep -q "state DOWN" || { fail "t0 is not down again"; return 1; }
}

# A bridge that is not there, or not a bridge: one line, exit 2, no tap left.
t_hostnet_a_wrong_bridge_is_refused_leaving_nothing() {
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	local out="$TMP_ROOT/hostnet-refused.out" lines
	ip netns exec "$NS" timeout -k 5 20 "$MINIVMM" --kernel "$TESTGUEST" --net tap=t0,bridge=nobr0 \
		< /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 2 "$out" || return 1
	expect_line "^minivmm: --net bridge=nobr0: there is no interface nobr0" "$out" || return 1
	lines=$(wc -l < "$out")
	[ "$lines" -eq 1 ] || { fail "expected one line, got $lines: $(tr '\n' '|' < "$out")"; return 1; }
	! ip -n "$NS" link show dev t0 > /dev/null 2>&1 || { fail "a refused start left t0 behind"; return 1; }
	ip netns exec "$NS" timeout -k 5 20 "$MINIVMM" --kernel "$TESTGUEST" --net tap=t0,bridge=lo \
		< /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 2 "$out" || return 1
	expect_line "^minivmm: --net bridge=lo: lo is not a bridge$" "$out" || return 1
	! ip -n "$NS" link show dev t0 > /dev/null 2>&1 || { fail "a refused start left t0 behind"; return 1; }
}
