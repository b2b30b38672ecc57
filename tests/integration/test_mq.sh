# SPDX-License-Identifier: Apache-2.0
# Multiqueue virtio-net over a real multiqueue tap in a network namespace:
# the test guest polls one queue pair per vCPU, netpeer on the host side.
# Reuses net_vm_start, net_vm_wait, peer and value from test_net.sh.

# Flows per echo run: the tap spreads flows over its queues by hash, so
# enough of them that no queue goes without (4 queues: P(one empty) ~ 4e-8).
MQ_FLOWS=64

# mq_echo NAME GUEST_CMDLINE COUNT [MINIVMM ARGS...]: boot the guest, run
# netpeer echo-check with COUNT datagrams over $MQ_FLOWS flows, stop the
# guest and wait for minivmm. Checks: the peer lost nothing and saw no
# corruption, minivmm exited 0, the guest echoed everything (drops 0).
# Sets $OUT (minivmm + guest output), $RES (peer output), $SENT.
mq_echo() {
	local name=$1 cmdline=$2 count=$3; shift 3
	if ! net_vm_start "$name" "$cmdline" "$@"; then
		# minivmm sets DEVICE_NEEDS_RESET without saying why; name it.
		grep -q "wants a reset right after DRIVER_OK" "$OUT" 2> /dev/null &&
			fail "minivmm refused DRIVER_OK (DEVICE_NEEDS_RESET) for guest '$cmdline' with minivmm $*: the guest sets up only the queue pairs it uses and minivmm requires every pair's queues ready at DRIVER_OK (vnet_activate_locked); output: $(grep -E '^(testguest|minivmm):' "$OUT" | tr '\n' '|')"
		return 1
	fi
	RES="$TMP_ROOT/$name.peer"
	peer echo-check --dst 10.0.0.2 --port 5001 --count "$count" --sizes 60-1514 \
		--flows "$MQ_FLOWS" --wait-ms 10000 > "$RES" 2>&1
	local peer_rc=$?
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	[ $peer_rc = 0 ] || { fail "echo-check failed (rc $peer_rc): $(grep -v '^flow' "$RES" | tr '\n' ' '); guest: $(tail -c 400 "$OUT" | tr '\n' '|')"; return 1; }
	SENT=$(value sent "$RES")
	[ "$SENT" = "$count" ] && [ "$(value received "$RES")" = "$count" ] &&
		[ "$(value lost "$RES")" = 0 ] && [ "$(value corrupt "$RES")" = 0 ] ||
		{ fail "lost or corrupt frames: $(grep -v '^flow' "$RES" | tr '\n' ' ')"; return 1; }
	expect_rc 0 "$OUT" || return 1
	expect_line "^testguest: net-echo done rx [0-9]+ tx [0-9]+ drops 0$" "$OUT"
}

# mq_guest_queues OUT N BUSY...: the guest's per-queue echo lines: exactly
# N of them (q0..q<N-1>); the queues listed in BUSY each with rx == tx > 0,
# the others with rx == tx == 0; their rx sum at least $SENT.
mq_guest_queues() {
	local out=$1 n=$2 i line rx tx sum=0 got; shift 2
	local busy=" $* "
	got=$(grep -cE '^testguest: q[0-9]+ rx ' "$out")
	[ "$got" = "$n" ] || { fail "expected $n per-queue lines from the guest, got $got: $(grep -E '^testguest: q[0-9]' "$out" | tr '\n' '|')"; return 1; }
	for ((i = 0; i < n; i++)); do
		line=$(grep -E "^testguest: q$i rx " "$out")
		read -r rx tx < <(echo "$line" | sed -E 's/^testguest: q[0-9]+ rx ([0-9]+) tx ([0-9]+) .*/\1 \2/')
		[ -n "$rx" ] && [ -n "$tx" ] || { fail "cannot parse the guest's line for queue $i: '$line'"; return 1; }
		if [[ "$busy" == *" $i "* ]]; then
			[ "$rx" -gt 0 ] && [ "$tx" -gt 0 ] ||
				{ fail "guest queue $i carried no traffic: $line"; return 1; }
			[ "$rx" = "$tx" ] || { fail "guest queue $i echoed $tx of $rx: $line"; return 1; }
		else
			[ "$rx" = 0 ] && [ "$tx" = 0 ] ||
				{ fail "guest queue $i carried traffic but should not: $line"; return 1; }
		fi
		sum=$((sum + rx))
	done
	[ "$sum" -ge "$SENT" ] || { fail "guest queues received $sum datagrams in all, the peer sent $SENT"; return 1; }
}


# Per-queue checks shared by the echo tests: queues listed in ARGS (by
# index) each carried rx and tx frames, all others none; the totals cover
# what the peer sent (args[0]); no errors or drops anywhere.
MQ_PY_QUEUES='
sent = int(args[0]); busy = [int(x) for x in args[1:]]
check(len(q) == n["queue_pairs"], "%d queue entries for %d pairs" % (len(q), n["queue_pairs"]))
for e in q:
    i = e["queue"]
    if i in busy:
        check(e["rx_frames"] > 0 and e["tx_frames"] > 0, "queue %d: rx_frames %d tx_frames %d, expected both > 0" % (i, e["rx_frames"], e["tx_frames"]))
    else:
        check(e["rx_frames"] == 0 and e["tx_frames"] == 0, "queue %d: rx_frames %d tx_frames %d, expected 0 (not an active pair)" % (i, e["rx_frames"], e["tx_frames"]))
    for k in ("rx_errors", "tx_errors", "rx_dropped", "backend_drops"):
        check(e[k] == 0, "queue %d: %s %d" % (i, k, e[k]))
rx = sum(e["rx_frames"] for e in q); tx = sum(e["tx_frames"] for e in q)
check(rx >= sent, "rx_frames sum %d < %d sent by the peer" % (rx, sent))
check(tx >= sent, "tx_frames sum %d < %d sent by the peer" % (tx, sent))
'

t_mq_four_queues_all_carry_traffic() {
	mq_echo mq4 "test=net-echo queues=4 secs=40" 40000 \
		--cpus 4 --net tap=t0,queues=4 --stats=json || return 1
	expect_line "^testguest: ctrl mq 4 -> OK$" "$OUT" || return 1
	mq_guest_queues "$OUT" 4 0 1 2 3 || return 1
	stats_check "$OUT" "$MQ_PY_QUEUES"'
check(n["queue_pairs"] == 4 and n["active_pairs"] == 4, "queue_pairs %d active_pairs %d, expected 4 and 4" % (n["queue_pairs"], n["active_pairs"]))
check(all(e["active"] for e in q), "not every queue active: %s" % [e["active"] for e in q])
' "$SENT" 0 1 2 3
}

MQ_PY_PAIRS2='
check(n["queue_pairs"] == 4, "queue_pairs %d, expected 4" % n["queue_pairs"])
check(n["active_pairs"] == 2, "active_pairs %d, expected 2 after VQ_PAIRS_SET 2" % n["active_pairs"])
check([e["active"] for e in q] == [True, True, False, False], "active flags %s, expected [T, T, F, F]" % [e["active"] for e in q])
check(n["ctrl_commands"] >= 1 and n["ctrl_errors"] == 0, "ctrl_commands %d ctrl_errors %d" % (n["ctrl_commands"], n["ctrl_errors"]))
'

t_mq_pairs_set_2_only_first_two_queues() {
	# The guest polls all 4 pairs but enables 2: the tap must steer every
	# frame to pairs 0-1 (the guest would echo from 2-3 too).
	mq_echo mqpairs2of4 "test=net-echo queues=4 pairs=2 secs=40" 20000 \
		--cpus 4 --net tap=t0,queues=4 --stats=json ||
		{ fail "guest queues=4 pairs=2: $(cat "$TMP_ROOT/.reason")"; return 1; }
	expect_line "^testguest: ctrl mq 2 -> OK$" "$OUT" || return 1
	mq_guest_queues "$OUT" 4 0 1 || { fail "guest queues=4 pairs=2: $(cat "$TMP_ROOT/.reason")"; return 1; }
	stats_check "$OUT" "$MQ_PY_QUEUES$MQ_PY_PAIRS2" "$SENT" 0 1 ||
		{ fail "guest queues=4 pairs=2: $(cat "$TMP_ROOT/.reason")"; return 1; }
	netns_cleanup

	# A driver that sets up and enables only the 2 pairs it uses (2 vCPUs).
	mq_echo mqpairs2 "test=net-echo queues=2 pairs=2 secs=40" 20000 \
		--cpus 2 --net tap=t0,queues=4 --stats=json ||
		{ fail "guest queues=2 pairs=2: $(cat "$TMP_ROOT/.reason")"; return 1; }
	expect_line "^testguest: ctrl mq 2 -> OK$" "$OUT" || return 1
	mq_guest_queues "$OUT" 2 0 1 || return 1
	stats_check "$OUT" "$MQ_PY_QUEUES$MQ_PY_PAIRS2" "$SENT" 0 1
}

t_mq_pairs_set_out_of_range_is_err() {
	# VQ_PAIRS_SET 5 on a 4-pair device: the device answers ERR and keeps
	# its single active pair (the default after DRIVER_OK); the guest goes
	# on polling all 4 pairs, and echo works over pair 0 alone.
	mq_echo mqpairs5 "test=net-echo queues=4 pairs=5 secs=40" 5000 \
		--cpus 4 --net tap=t0,queues=4 --stats=json || return 1
	expect_line "^testguest: ctrl mq 5 -> ERR$" "$OUT" || return 1
	mq_guest_queues "$OUT" 4 0 || return 1
	stats_check "$OUT" "$MQ_PY_QUEUES"'
check(n["queue_pairs"] == 4, "queue_pairs %d, expected 4" % n["queue_pairs"])
check(n["active_pairs"] == 1, "active_pairs %d, expected 1 (an out-of-range VQ_PAIRS_SET changes nothing)" % n["active_pairs"])
check(n["ctrl_errors"] >= 1, "ctrl_errors %d, expected the refused VQ_PAIRS_SET counted" % n["ctrl_errors"])
' "$SENT" 0
}

t_mq_threads_1_and_per_queue_echo() {
	# Under emulated KVM with TSan (make tsan-test) the echo ran at 530-1290
	# datagrams a second on 2-core hosts, where 20000 in echo-check's 30 s
	# needs 667: 10000 there (every queue still carries thousands).
	local count
	count=$(runs_here 20000 10000)
	mq_echo mqthr1 "test=net-echo queues=4 secs=40" "$count" \
		--cpus 4 --net tap=t0,queues=4,threads=1 --stats=json || { fail "threads=1: $(cat "$TMP_ROOT/.reason")"; return 1; }
	mq_guest_queues "$OUT" 4 0 1 2 3 || { fail "threads=1: $(cat "$TMP_ROOT/.reason")"; return 1; }
	stats_check "$OUT" "$MQ_PY_QUEUES"'
names = [x["name"] for x in w]
check(names == ["net0-w0"], "threads=1: workers %s, expected [net0-w0]" % names)
check(len(w) != 1 or w[0]["queues"] == 4, "threads=1: the worker serves %s queues, expected 4" % (w[0]["queues"] if w else None))
check([e["worker"] for e in q] == ["net0-w0"] * 4, "threads=1: queue workers %s" % [e["worker"] for e in q])
' "$SENT" 0 1 2 3 || return 1
	netns_cleanup

	mq_echo mqthrpq "test=net-echo queues=4 secs=40" "$count" \
		--cpus 4 --net tap=t0,queues=4,threads=per-queue --stats=json || { fail "threads=per-queue: $(cat "$TMP_ROOT/.reason")"; return 1; }
	mq_guest_queues "$OUT" 4 0 1 2 3 || { fail "threads=per-queue: $(cat "$TMP_ROOT/.reason")"; return 1; }
	stats_check "$OUT" "$MQ_PY_QUEUES"'
names = [x["name"] for x in w]
want = ["net0-q%d" % i for i in range(4)]
check(names == want, "threads=per-queue: workers %s, expected %s" % (names, want))
check(all(x["queues"] == 1 for x in w), "threads=per-queue: queues per worker %s" % [x["queues"] for x in w])
check([e["worker"] for e in q] == want, "threads=per-queue: queue workers %s, expected %s" % ([e["worker"] for e in q], want))
' "$SENT" 0 1 2 3
}

# mq_vmm_pid: the minivmm process of the VM started by net_vm_start
# ($VM_PID is `ip netns exec` turned `timeout`; minivmm is its child).
mq_vmm_pid() {
	local pid i
	for ((i = 0; i < 40; i++)); do
		pid=$(pgrep -P "$VM_PID" -x minivmm | head -1)
		[ -n "$pid" ] && { echo "$pid"; return 0; }
		sleep 0.05
	done
	return 1
}

# mq_affinity PID: "name=allowed-cpu-list" for every thread of PID.
mq_affinity() {
	local t comm list
	for t in /proc/"$1"/task/*; do
		comm=$(cat "$t/comm" 2> /dev/null) || continue
		list=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status" 2> /dev/null)
		echo "$comm=$list"
	done
}

# mq_expect_affinity AFFINITY NAME LIST: thread NAME exists, allowed on LIST.
mq_expect_affinity() {
	local got
	got=$(echo "$1" | sed -n "s/^$2=//p")
	[ -n "$got" ] || { fail "no thread named $2; threads: $(echo "$1" | tr '\n' ' ')"; return 1; }
	[ "$got" = "$3" ] || { fail "thread $2 may run on CPUs '$got', expected '$3'; threads: $(echo "$1" | tr '\n' ' ')"; return 1; }
}

# mq_pin_run NAME CPUS_ARG NET_ARG: boot a 2-queue echo guest, record the
# affinity of minivmm's threads in $AFF while it runs, stop it.
mq_pin_run() {
	local name=$1 cpus=$2 net=$3 pid
	net_vm_start "$name" "test=net-echo queues=2 secs=40" --cpus "$cpus" --net "$net" \
		--stats=json || return 1
	pid=$(mq_vmm_pid) || { fail "no minivmm child of $VM_PID"; return 1; }
	AFF=$(mq_affinity "$pid")
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT"
}

# Every part runs even if an earlier one failed; the failure lists them all.
t_mq_workers_pinned_as_asked() {
	local all errs=()
	all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
	[ "$all" = "0-1" ] || { fail "this test expects CPUs 0-1 to be usable, have '$all'"; return 1; }
	mq_err() { errs+=("$1: $(cat "$TMP_ROOT/.reason")"); }

	# No pinning asked anywhere: every thread may run anywhere. (Per-queue
	# workers, so both pairs have one: threads=auto may give them one.)
	if mq_pin_run mqnopin 2 tap=t0,queues=2,threads=per-queue; then
		mq_expect_affinity "$AFF" net0-q0 "$all" && mq_expect_affinity "$AFF" net0-q1 "$all" &&
			mq_expect_affinity "$AFF" vcpu0 "$all" && mq_expect_affinity "$AFF" vcpu1 "$all" &&
			stats_check "$OUT" '
check([(x["name"], x["cpu"]) for x in w] == [("net0-q0", -1), ("net0-q1", -1)], "workers %s, expected both unpinned (cpu -1)" % [(x["name"], x["cpu"]) for x in w])
' || mq_err "[--cpus 2 --net queues=2]"
	else
		mq_err "[--cpus 2 --net queues=2]"
	fi
	netns_cleanup

	# Without cpus= the workers are not pinned, even though the vCPU thread
	# that starts them (at DRIVER_OK) is.
	if mq_pin_run mqvcpupin 2,pin=0,1 tap=t0,queues=2,threads=per-queue; then
		mq_expect_affinity "$AFF" vcpu0 0 && mq_expect_affinity "$AFF" vcpu1 1 &&
			mq_expect_affinity "$AFF" net0-q0 "$all" && mq_expect_affinity "$AFF" net0-q1 "$all" ||
			mq_err "[--cpus 2,pin=0,1 --net queues=2 (no cpus=)]"
	else
		mq_err "[--cpus 2,pin=0,1 --net queues=2 (no cpus=)]"
	fi
	netns_cleanup

	# cpus=0-1: worker i on CPU i.
	if mq_pin_run mqpin01 2,pin=0,1 tap=t0,queues=2,cpus=0-1; then
		mq_expect_affinity "$AFF" net0-q0 0 && mq_expect_affinity "$AFF" net0-q1 1 ||
			mq_err "[--net queues=2,cpus=0-1]"
	else
		mq_err "[--net queues=2,cpus=0-1]"
	fi
	netns_cleanup

	# cpus=1,0: worker 0 on CPU 1, worker 1 on CPU 0; vCPU i on CPU i.
	if mq_pin_run mqpin10 2,pin=0,1 tap=t0,queues=2,cpus=1,0; then
		mq_expect_affinity "$AFF" net0-q0 1 && mq_expect_affinity "$AFF" net0-q1 0 &&
			mq_expect_affinity "$AFF" vcpu0 0 && mq_expect_affinity "$AFF" vcpu1 1 &&
			stats_check "$OUT" '
check([(x["name"], x["cpu"]) for x in w] == [("net0-q0", 1), ("net0-q1", 0)], "workers %s, expected net0-q0 on 1, net0-q1 on 0" % [(x["name"], x["cpu"]) for x in w])
' || mq_err "[--cpus 2,pin=0,1 --net tap=t0,queues=2,cpus=1,0]"
	else
		mq_err "[--cpus 2,pin=0,1 --net tap=t0,queues=2,cpus=1,0]"
	fi
	[ ${#errs[@]} -eq 0 ] || { fail "${#errs[@]} of 4 runs wrong: ${errs[*]}"; return 1; }
}

# mq_refuses PATTERN ARGS...: minivmm run in a fresh namespace (so a tap it
# wrongly created goes away with it) exits 2 with one line matching PATTERN
# and leaves no tap behind.
mq_refuses() {
	local want=$1; shift
	local out="$TMP_ROOT/mq-cli.out" ns
	netns_create ns || { fail "cannot create a network namespace"; return 1; }
	ip netns exec "$ns" timeout -k 5 30 "$MINIVMM" "$@" < /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 2 "$out" || return 1
	expect_line "$want" "$out" || return 1
	local lines
	lines=$(wc -l < "$out")
	[ "$lines" -eq 1 ] || { fail "expected one line of error, got $lines: $(tr '\n' '|' < "$out")"; return 1; }
	if ip -n "$ns" link show dev t0 > /dev/null 2>&1; then
		fail "refused, but the tap t0 was created anyway: $*"
		return 1
	fi
}

t_mq_bad_cpu_list_refused() {
	mq_refuses "^minivmm: --net cpus: CPU 7 is not one this process may run on" \
		--kernel "$TESTGUEST" --net tap=t0,cpus=7 || return 1
	mq_refuses "^minivmm: --net cpus: 1 CPUs listed for 2 worker threads" \
		--kernel "$TESTGUEST" --net tap=t0,queues=2,threads=per-queue,cpus=1 || return 1
	mq_refuses "^minivmm: --cpus pin: 1 CPUs listed for 2 vCPUs" \
		--kernel "$TESTGUEST" --cpus 2,pin=0 --net tap=t0 || return 1
	mq_refuses "^minivmm: --cpus pin: CPU 7 is not one this process may run on" \
		--kernel "$TESTGUEST" --cpus 2,pin=0,7 --net tap=t0
}

# A multiqueue tap accepts any number of attached queues: a second process on
# it would silently take half the frames, with the same MAC. minivmm counts the
# queues attached after opening its own and refuses (hardening 7).
t_mq_tap_shared_with_another_process_refused() {
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	ip -n "$NS" tuntap add t0 mode tap multi_queue || { fail "cannot create a multiqueue tap"; return 1; }
	local out="$TMP_ROOT/mq-shared.out" holder
	# Another process holds one queue of t0.
	ip netns exec "$NS" python3 -c '
import fcntl, os, struct, sys, time
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH", b"t0", 0x0002 | 0x1000 | 0x0100))
print("attached", flush=True)
time.sleep(30)' > "$TMP_ROOT/holder.out" 2>&1 &
	holder=$!
	local i
	for ((i = 0; i < 100; i++)); do grep -q attached "$TMP_ROOT/holder.out" && break; sleep 0.05; done
	ip netns exec "$NS" timeout 20 "$MINIVMM" --kernel "$TESTGUEST" --net tap=t0,queues=2 \
		--cmdline 'test=hello' < /dev/null > "$out" 2>&1
	rc=$?
	kill "$holder" 2> /dev/null; wait "$holder" 2> /dev/null
	expect_rc 2 "$out" || return 1
	expect_line "tap 't0' already has 1 queue attached by another program or VM" "$out" || return 1
	# And with the other process gone, the same tap is fine.
	ip netns exec "$NS" timeout 20 "$MINIVMM" --kernel "$TESTGUEST" --net tap=t0,queues=2 \
		--cmdline 'test=hello' < /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 0 "$out"
}
