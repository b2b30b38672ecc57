# SPDX-License-Identifier: Apache-2.0
# virtio-net over the AF_PACKET backend (--net packet=IFACE): minivmm binds
# raw packet sockets to v0, one end of a veth pair in a fresh namespace; the
# host stack (ping, netpeer) sits on the other end, v1 = 10.0.0.1/24, the
# guest is 10.0.0.2. Reuses peer, value and net_vm_wait from test_net.sh.

# Flows for the multiqueue runs: the fanout group spreads flows over its
# sockets by hash, so enough that no queue goes without.
PKT_FLOWS=64

# pkt_ns: a fresh namespace $NS with the veth pair v0/v1, v1 = 10.0.0.1/24.
pkt_ns() {
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	netns_veth "$NS" v0 v1 || { fail "cannot create the veth pair v0/v1"; return 1; }
	netns_add_addr "$NS" v1 10.0.0.1/24 || { fail "cannot configure v1"; return 1; }
}

# pkt_vm_start NAME GUEST_CMDLINE NETOPTS [MINIVMM ARGS...]: pkt_ns, then
# boot the test guest with --net packet=v0NETOPTS in the background; sets
# $NS, $OUT, $VM_PID. Returns once the guest prints a line matching
# $PKT_READY (default "ready ip").
pkt_vm_start() {
	local name=$1 cmdline=$2 netopts=$3 ready=${PKT_READY:-ready ip}; shift 3
	pkt_ns || return 1
	OUT="$TMP_ROOT/$name.out"
	: > "$OUT"
	ip netns exec "$NS" timeout -k 5 "${VM_TIMEOUT:-90}" "$MINIVMM" --kernel "$TESTGUEST" \
		--cmdline "$cmdline" --net "packet=v0$netopts" "$@" < /dev/null > "$OUT" 2>&1 &
	VM_PID=$!
	wait_ready "$OUT" "$VM_PID" "$ready" "guest not ready (--net packet=v0$netopts $*, guest '$cmdline')"
}


# No errors or drops on any queue; the backend is the packet one on v0.
PKT_PY_CLEAN='
check(n["backend"] == "packet" and n["ifname"] == "v0", "backend %s ifname %s, expected packet on v0" % (n["backend"], n["ifname"]))
for e in q:
    for k in ("rx_errors", "tx_errors", "rx_dropped", "backend_drops"):
        check(e[k] == 0, "queue %d: %s %d" % (e["queue"], k, e[k]))
'

# pkt_ring_hint OUT: for a failing rx=ring run, say what the JSON suggests.
# The ring path reads a 12-byte virtio_net_hdr_v1 at tp_mac - 12, but
# tpacket_rcv() writes a 10-byte struct virtio_net_hdr at tp_mac - 10
# whatever PACKET_VNET_HDR_SZ says (only the recvmsg path honours the size),
# so flags/gso_type come from two bytes the kernel never wrote.
pkt_ring_hint() {
	python3 - "$1" <<'PY' 2> /dev/null
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('{')]
if lines:
    n = json.loads(lines[-1])["net"][0]
    keys = ("rx_frames", "tx_frames", "backend_drops", "rx_dropped", "rx_no_buffer", "rx_errors", "tx_errors", "tx_dropped")
    print(" [minivmm: " + "; ".join("q%d %s" % (e["queue"], " ".join("%s %d" % (k, e.get(k, 0)) for k in keys)) for e in n["queues"]) + "]", end="")
    d = sum(e["rx_dropped"] for e in n["queues"])
    if d:
        print(" [minivmm dropped %d received frames (rx_dropped): with rx=ring the vnet header is read at tp_mac-12 while the kernel writes a 10-byte header at tp_mac-10 (tpacket_rcv ignores PACKET_VNET_HDR_SZ), so flags/gso_type are stale bytes; see docs/packet.md]" % d)
PY
}

# pkt_echo NAME GUEST_CMDLINE COUNT FLOWS NETOPTS [MINIVMM ARGS...]: boot,
# run echo-check with COUNT mixed-size datagrams over FLOWS flows, stop the
# guest, wait. Checks: nothing lost or corrupt, minivmm exit 0, the guest
# echoed everything, no errors or drops in --stats=json. Sets $OUT, $RES.
pkt_echo() {
	local name=$1 cmdline=$2 count=$3 flows=$4 netopts=$5; shift 5
	pkt_vm_start "$name" "$cmdline" "$netopts" --stats=json "$@" || return 1
	RES="$TMP_ROOT/$name.peer"
	peer echo-check --dst 10.0.0.2 --port 5001 --count "$count" --sizes 60-1514 \
		--flows "$flows" --wait-ms 3000 > "$RES" 2>&1
	local peer_rc=$?
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	local what="packet=v0$netopts $*, guest '$cmdline'" hint=""
	hint=$(pkt_ring_hint "$OUT")   # minivmm's counters, and what rx=ring's drops mean
	[ $peer_rc = 0 ] && [ "$(value sent "$RES")" = "$count" ] &&
		[ "$(value received "$RES")" = "$count" ] && [ "$(value lost "$RES")" = 0 ] &&
		[ "$(value corrupt "$RES")" = 0 ] ||
		{ fail "[$what] echo-check (rc $peer_rc): $(grep -v '^flow' "$RES" | tr '\n' ' ')$hint guest: $(grep -E '^testguest: (q[0-9]|net-)' "$OUT" | tr '\n' '|')"; return 1; }
	expect_rc 0 "$OUT" || { fail "[$what] $(cat "$TMP_ROOT/.reason")"; return 1; }
	expect_line "^testguest: net-echo done rx [0-9]+ tx [0-9]+ drops 0$" "$OUT" ||
		{ fail "[$what] $(cat "$TMP_ROOT/.reason")"; return 1; }
	stats_check "$OUT" "$PKT_PY_CLEAN"'
rx = sum(e["rx_frames"] for e in q); tx = sum(e["tx_frames"] for e in q)
check(rx >= int(args[0]) and tx >= int(args[0]), "rx_frames %d tx_frames %d, expected both >= %s" % (rx, tx, args[0]))
' "$count" || { fail "[$what] $(cat "$TMP_ROOT/.reason")"; return 1; }
}

t_packet_host_ping() {
	pkt_vm_start pktping "test=net-echo secs=60" ",rx=ring" || return 1
	local res="$TMP_ROOT/pktping.txt"
	ip netns exec "$NS" ping -c 50 -i 0.02 -W 1 10.0.0.2 > "$res" 2>&1
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	grep -q " 0% packet loss" "$res" || { fail "ping over packet=v0,rx=ring: $(tail -2 "$res" | tr '\n' ' ')"; return 1; }
	expect_rc 0 "$OUT" && expect_line "icmp 50 " "$OUT"
}

t_packet_echo_q1_ring() {
	pkt_echo pkt1ring "test=net-echo secs=80" 30000 4 ",rx=ring" || return 1
	netns_cleanup
	pkt_echo pkt1ringep "test=net-echo secs=80" 20000 4 ",rx=ring,engine=epoll"
}

t_packet_echo_q1_recv() {
	pkt_echo pkt1recv "test=net-echo secs=80" 30000 4 ",rx=recv" || return 1
	netns_cleanup
	pkt_echo pkt1recvep "test=net-echo secs=80" 20000 4 ",rx=recv,engine=epoll"
}

# pkt_fanout RX: 4 queue pairs, 4 polling vCPUs, 64 flows: every queue
# carries traffic (the fanout group spreads flows), nothing lost.
pkt_fanout() {
	local rx=$1
	pkt_echo "pktfan$rx" "test=net-echo queues=4 secs=80" 20000 "$PKT_FLOWS" \
		",queues=4,rx=$rx" --cpus 4 || return 1
	expect_line "^testguest: ctrl mq 4 -> OK$" "$OUT" || { fail "[rx=$rx] $(cat "$TMP_ROOT/.reason")"; return 1; }
	stats_check "$OUT" '
check(n["queue_pairs"] == 4 and n["active_pairs"] == 4, "queue_pairs %d active_pairs %d, expected 4 and 4" % (n["queue_pairs"], n["active_pairs"]))
check(len(q) == 4, "%d queue entries" % len(q))
for e in q:
    check(e["rx_frames"] > 0, "queue %d: rx_frames 0 (the fanout group sent it nothing)" % e["queue"])
    check(e["tx_frames"] > 0, "queue %d: tx_frames 0" % e["queue"])
' || { fail "[rx=$rx] $(cat "$TMP_ROOT/.reason")"; return 1; }
	local i
	for ((i = 0; i < 4; i++)); do
		grep -qE "^testguest: q$i rx [1-9][0-9]* tx [1-9]" "$OUT" ||
			{ fail "[rx=$rx] guest queue $i echoed nothing: $(grep -E '^testguest: q[0-9]' "$OUT" | tr '\n' '|')"; return 1; }
	done
}

t_packet_echo_q4_fanout_spreads() {
	local errs=()
	pkt_fanout ring || errs+=("$(cat "$TMP_ROOT/.reason")")
	netns_cleanup
	pkt_fanout recv || errs+=("$(cat "$TMP_ROOT/.reason")")
	[ ${#errs[@]} -eq 0 ] || { fail "${errs[*]}"; return 1; }
}

t_packet_gen_counted_without_gaps() {
	pkt_ns || return 1
	OUT="$TMP_ROOT/pktgen.out"
	local res="$TMP_ROOT/pktgen.peer"
	peer count --port 5001 --expect 100000 --idle-ms 3000 --timeout-ms 60000 > "$res" 2>&1 &
	local counter=$!
	sleep 0.3
	ip netns exec "$NS" timeout -k 5 90 "$MINIVMM" --kernel "$TESTGUEST" --net packet=v0 --stats=json \
		--cmdline "test=net-gen count=100000 size=64" < /dev/null > "$OUT" 2>&1
	rc=$?
	wait "$counter"
	local count_rc=$?
	expect_rc 0 "$OUT" || return 1
	expect_line "^testguest: net-gen done tx 100000 " "$OUT" || return 1
	[ $count_rc = 0 ] && [ "$(value received "$res")" = 100000 ] && [ "$(value gaps "$res")" = 0 ] ||
		{ fail "count (rc $count_rc): $(grep -v '^flow' "$res" | tr '\n' ' ')"; return 1; }
	stats_check "$OUT" "$PKT_PY_CLEAN"'
check(q[0]["tx_frames"] >= 100000, "tx_frames %d < 100000" % q[0]["tx_frames"])
'
}

# A backend with no room (a full qdisc: tbf, with qdisc-bypass=off) refuses
# writes with ENOBUFS. The frame is kept and written again, so the guest
# is slowed down, and nothing is dropped or counted as an error inside the
# VMM: every numbered datagram arrives.
pkt_gen_through_a_full_qdisc() {
	local engine=$1 count=10000
	pkt_ns || return 1
	modprobe sch_tbf 2> /dev/null   # where the kernel does not load it by itself
	ip netns exec "$NS" tc qdisc add dev v0 root tbf rate 2mbit burst 4000 limit 8000 ||
		{ fail "cannot add a tbf qdisc to v0"; return 1; }
	OUT="$TMP_ROOT/pktfull-$engine.out"
	local res="$TMP_ROOT/pktfull-$engine.peer"
	peer count --port 5001 --expect "$count" --idle-ms 3000 --timeout-ms 60000 > "$res" 2>&1 &
	local counter=$!
	sleep 0.3
	ip netns exec "$NS" timeout -k 5 90 "$MINIVMM" --kernel "$TESTGUEST" \
		--net "packet=v0,qdisc-bypass=off,engine=$engine" --stats=json \
		--cmdline "test=net-gen count=$count size=64" < /dev/null > "$OUT" 2>&1
	rc=$?
	wait "$counter"
	local count_rc=$?
	local drops
	drops=$(ip netns exec "$NS" tc -s qdisc show dev v0 | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n1)
	expect_rc 0 "$OUT" || return 1
	expect_no_line "failed .*No buffer space|dropped$" "$OUT" || return 1
	[ "${drops:-0}" -gt 0 ] || { fail "the qdisc never ran full (it dropped ${drops:-0}): the test tests nothing"; return 1; }
	[ $count_rc = 0 ] && [ "$(value received "$res")" = "$count" ] ||
		{ fail "count (rc $count_rc; the qdisc refused $drops): $(grep -v '^flow' "$res" | tr '\n' ' ')"; return 1; }
	stats_check "$OUT" "$PKT_PY_CLEAN"'
check(q[0]["tx_frames"] >= int(args[0]), "tx_frames %d, expected at least %s" % (q[0]["tx_frames"], args[0]))
check(q[0]["tx_dropped"] == 0, "tx_dropped %d" % q[0]["tx_dropped"])
' "$count"
}
t_packet_full_qdisc_slows_the_guest_drops_nothing_uring() { pkt_gen_through_a_full_qdisc uring; }
t_packet_full_qdisc_slows_the_guest_drops_nothing_epoll() { pkt_gen_through_a_full_qdisc epoll; }

t_packet_rx_pause_loses_nothing_taken() {
	# Not "ready ip": the guest prints that after the pause.
	PKT_READY="rx paused for" pkt_vm_start pktpause "test=net-sink rx-pause-ms=3000 secs=60" "" \
		--stats=json || return 1
	# 500 frames while the guest has no buffers: the worker must leave them
	# in the ring (and the ring must hold them), not drop them.
	# The guest cannot answer ARP while it has no buffers, and datagrams
	# waiting for a neighbour would be held (and mostly dropped) by the
	# host's ARP queue: give v1 the guest's MAC up front.
	local mac
	mac=$(sed -nE 's/^testguest: virtio-net at .* mac ([0-9a-f:]{17}) .*/\1/p' "$OUT" | head -1)
	[ -n "$mac" ] || { fail "no MAC in the guest's virtio-net line: $(tr '\n' '|' < "$OUT")"; return 1; }
	ip -n "$NS" neigh replace 10.0.0.2 lladdr "$mac" dev v1 nud permanent ||
		{ fail "cannot add a neighbour entry for 10.0.0.2 ($mac) on v1"; return 1; }
	local sres="$TMP_ROOT/pktpause.send"
	peer send --dst 10.0.0.2 --port 5001 --count 500 --size 128 > "$sres" 2>&1 ||
		{ fail "send failed: $(tr '\n' ' ' < "$sres")"; return 1; }
	grep -q "rx buffers posted" "$OUT" &&
		{ fail "the guest posted its buffers before the 500 datagrams were sent: the test proves nothing"; return 1; }
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "rx buffers posted" "$OUT" && break
		sleep 0.1
	done
	sleep 0.5
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	grep -qE "^testguest: net-sink done rx 500 lost 0 reorders 0 bad 0 badsum 0 corrupt 0" "$OUT" ||
		{ fail "the guest did not get all 500 intact: '$(grep -E '^testguest: q0 ' "$OUT")'; minivmm: $(grep '^{' "$OUT" | tail -1 | grep -oE '"(rx_frames|rx_no_buffer|rx_dropped|backend_drops)":[0-9]+' | tr '\n' ' ')(rx_frames counts frames minivmm put in guest buffers: a guest rx below it means used entries never reached the guest)$(pkt_ring_hint "$OUT")"; return 1; }
	stats_check "$OUT" "$PKT_PY_CLEAN"'
check(q[0]["rx_no_buffer"] >= 1, "rx_no_buffer %d, expected the pause counted (>= 1)" % q[0]["rx_no_buffer"])
'
}

# pkt_features OUT: "accepted offered" from the guest's virtio-net line.
pkt_features() {
	sed -nE 's/^testguest: virtio-net at .* features (0x[0-9a-f]+) of (0x[0-9a-f]+) .*/\1 \2/p' "$1" | head -1
}

# pkt_offload RX OFFLOAD: echo with guest offload=OFFLOAD over rx=RX, then
# the feature bits: GUEST_CSUM (1) and CSUM (0) accepted iff offload=1,
# GUEST_TSO4 (7) offered (GSO frames go to a guest with TSO as they are, and
# are cut for one without: the test guest takes none).
pkt_offload() {
	local rx=$1 off=$2 acc offered
	pkt_echo "pktoff$rx$off" "test=net-echo offload=$off secs=60" 10000 4 ",rx=$rx" || return 1
	read -r acc offered < <(pkt_features "$OUT")
	[ -n "$acc" ] && [ -n "$offered" ] ||
		{ fail "[rx=$rx offload=$off] no features line from the guest: $(head -c 400 "$OUT" | tr '\n' '|')"; return 1; }
	(( (offered >> 7) & 1 )) ||
		{ fail "[rx=$rx offload=$off] the packet backend does not offer GUEST_TSO4 (features $offered)"; return 1; }
	(( (acc >> 7) & 1 )) &&
		{ fail "[rx=$rx offload=$off] the test guest took GUEST_TSO4 (features $acc)"; return 1; }
	if [ "$off" = 1 ]; then
		(( (acc >> 1) & 1 && acc & 1 )) ||
			{ fail "[rx=$rx offload=1] CSUM/GUEST_CSUM not negotiated: features $acc of $offered"; return 1; }
	else
		(( (acc >> 1) & 1 || acc & 1 )) &&
			{ fail "[rx=$rx offload=0] CSUM/GUEST_CSUM negotiated without offload=1: features $acc of $offered"; return 1; }
	fi
	return 0
}

t_packet_offloads_on_and_off() {
	local errs=() rx off
	for rx in ring recv; do
		for off in 0 1; do
			pkt_offload "$rx" "$off" || errs+=("$(cat "$TMP_ROOT/.reason")")
			netns_cleanup
		done
	done
	[ ${#errs[@]} -eq 0 ] || { fail "${#errs[@]} of 4 runs failed: ${errs[*]}"; return 1; }
}

# pkt_refuses PATTERN ARGS...: minivmm in $NS exits 2 with one line
# matching PATTERN.
pkt_refuses() {
	local want=$1; shift
	local out="$TMP_ROOT/pkt-refuse.out"
	ip netns exec "$NS" timeout -k 5 30 "$MINIVMM" --kernel "$TESTGUEST" "$@" < /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 2 "$out" || { fail "[$*] $(cat "$TMP_ROOT/.reason")"; return 1; }
	expect_line "$want" "$out" || { fail "[$*] $(cat "$TMP_ROOT/.reason")"; return 1; }
	local lines
	lines=$(wc -l < "$out")
	[ "$lines" -eq 1 ] || { fail "[$*] expected one line of error, got $lines: $(tr '\n' '|' < "$out")"; return 1; }
}

t_packet_bad_setups_refused() {
	pkt_ns || return 1
	pkt_refuses "^minivmm: .*'nope0'" --net packet=nope0 || return 1
	pkt_refuses "^minivmm: --net packet=IFACE: the host interface is required" --net packet= || return 1
	# Never a guest on the namespace's loopback, or on an interface without
	# Ethernet frames (a tun in L3 mode: link type 65534, ARPHRD_NONE).
	pkt_refuses "^minivmm: packet backend: 'lo' is a loopback interface: a guest bound to it would see and send the host's own loopback traffic" \
		--net packet=lo || return 1
	ip -n "$NS" tuntap add mode tun name l3tun0 || { fail "cannot make a tun in $NS"; return 1; }
	pkt_refuses "^minivmm: packet backend: 'l3tun0' does not carry Ethernet frames \(link type 65534\)" \
		--net packet=l3tun0 || return 1
	ip -n "$NS" link set v0 mtu 1000 || { fail "cannot set the MTU of v0"; return 1; }
	pkt_refuses "^minivmm: .*'v0'.*MTU 1000.*1500" --net packet=v0 || return 1
	ip -n "$NS" link set v0 mtu 1500 && ip -n "$NS" link set v0 down ||
		{ fail "cannot take v0 down"; return 1; }
	pkt_refuses "^minivmm: .*'v0' is down" --net packet=v0
}

# Two devices of one process on the same interface (two --net, or two VMs of an
# embedding program) must not share a fanout group: the kernel would split each
# device's frames between both. Only the first device is driven by the guest;
# with one group its sockets got about half the flows and the rest were lost in
# the second device's sockets (hardening 8).
t_packet_two_devices_on_one_interface_keep_their_own_frames() {
	pkt_echo pkt2dev "test=net-echo queues=2 secs=60" 4000 "$PKT_FLOWS" ",queues=2" \
		--cpus 2 --net packet=v0,queues=2
}

# GSO frames through a packet socket: the host sends UDP with UDP_SEGMENT,
# so v1 hands v0 one GSO frame per 8 datagrams, and a packet socket sees it
# whole (as it sees TCP after GRO, or a host TCP socket's 64 KiB segments).
# The test guest takes no TSO: the ring path must cut each frame into its
# datagrams (with their own lengths and checksums), not drop it; every one is
# echoed back (hardening 9).
pkt_gso_cut() {
	local rx=$1
	pkt_vm_start "pktgso$rx" "test=net-echo secs=40" ",rx=$rx" --stats=json || return 1
	RES="$TMP_ROOT/pktgso$rx.peer"
	peer echo-check --dst 10.0.0.2 --port 5001 --count 4000 --size 1042 --gso 8 --window 64 \
		--wait-ms 3000 > "$RES" 2>&1
	local peer_rc=$?
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	[ $peer_rc = 0 ] && [ "$(value lost "$RES")" = 0 ] && [ "$(value corrupt "$RES")" = 0 ] ||
		{ fail "[rx=$rx] echo-check of UDP_SEGMENT datagrams: $(grep -v '^flow' "$RES" | tr '\n' ' ')"; return 1; }
	expect_rc 0 "$OUT" || return 1
	stats_check "$OUT" '
check(sum(e["rx_gso_cut"] for e in q) > 0, "no GSO frame was cut (rx_gso_cut 0): the kernel sent none?")
check(sum(e["rx_dropped"] for e in q) == 0, "frames dropped: %s" % [e["rx_dropped"] for e in q])
'
}

t_packet_gso_frames_are_cut_for_a_guest_without_tso() { pkt_gso_cut ring; }

# Without GUEST_CSUM the device must hand over finished checksums and flags 0
# (spec 5.1.6.4.1; docs/packet.md, "Offloads"). What the host stack sends
# over the veth carries partial ones (CHECKSUM_PARTIAL, NEEDS_CSUM in the
# socket's vnet header): both RX paths must finish them. The guest counts
# NEEDS_CSUM frames it did not negotiate ("partial" on its q0 line).
t_packet_rx_full_checksums_without_guest_csum() {
	local errs=() rx
	for rx in ring recv; do
		if pkt_echo "pktcsum$rx" "test=net-echo secs=60" 2000 4 ",rx=$rx"; then
			grep -qE "^testguest: q0 .* partial 0$" "$OUT" ||
				errs+=("[rx=$rx] the guest got partial checksums it did not negotiate (GUEST_CSUM off): $(grep -E '^testguest: q0 ' "$OUT")")
		else
			errs+=("$(cat "$TMP_ROOT/.reason")")
		fi
		netns_cleanup
	done
	[ ${#errs[@]} -eq 0 ] || { fail "${errs[*]}"; return 1; }
}
