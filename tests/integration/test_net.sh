# SPDX-License-Identifier: Apache-2.0
# virtio-net over a real tap in a network namespace the test creates: the
# test guest on one side, the host's own stack (ping, netpeer) on the other.

. tests/integration/netns.sh
NETPEER="$BUILD/tools/netpeer"

# net_vm_start NAME GUEST_CMDLINE [MINIVMM ARGS...]: boot the test guest in
# a fresh namespace with a tap "t0" (10.0.0.1/24 on the host side); sets
# $NS, $OUT and $VM_PID. Returns once the guest says it is ready.
net_vm_start() {
	local name=$1 cmdline=$2; shift 2
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	OUT="$TMP_ROOT/$name.out"
	ip netns exec "$NS" timeout -k 5 "${VM_TIMEOUT:-90}" "$MINIVMM" --kernel "$TESTGUEST" \
		--cmdline "$cmdline" "$@" < /dev/null > "$OUT" 2>&1 &
	VM_PID=$!
	netns_wait_link "$NS" t0 10 || { fail "minivmm created no tap: $(tr '\n' '|' < "$OUT")"; return 1; }
	netns_add_addr "$NS" t0 10.0.0.1/24 || { fail "cannot configure t0"; return 1; }
	wait_ready "$OUT" "$VM_PID" "ready ip" "guest not ready"
}

# net_vm_wait: wait for minivmm to exit; sets $rc.
net_vm_wait() {
	wait "$VM_PID"
	rc=$?
}

peer() {
	ip netns exec "$NS" "$NETPEER" "$@"
}

# value KEY FILE: the value of a key=value line.
value() {
	sed -n "s/^$1=//p" "$2" | head -1
}

net_echo_100k() {
	local engine=$1
	net_vm_start "echo-$engine" "test=net-echo secs=80" --net "tap=t0,engine=$engine" --stats=json || return 1
	local res="$TMP_ROOT/echo-$engine.peer"
	peer echo-check --dst 10.0.0.2 --port 5001 --count 100000 --sizes 60-1514 --flows 4 \
		--wait-ms 3000 > "$res" 2>&1
	local peer_rc=$?
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	[ $peer_rc = 0 ] || { fail "echo-check: $(tr '\n' ' ' < "$res")"; return 1; }
	[ "$(value lost "$res")" = 0 ] && [ "$(value corrupt "$res")" = 0 ] ||
		{ fail "lost or corrupt frames: $(tr '\n' ' ' < "$res")"; return 1; }
	expect_rc 0 "$OUT" || return 1
	expect_line "net-echo done rx 10000[0-9] tx 10000[0-9] drops 0" "$OUT" || return 1
	# minivmm's counters agree with what the peer counted.
	python3 - "$OUT" <<'PY' || { fail "--stats=json does not agree: $(grep '^{' "$OUT")"; return 1; }
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith('{')][-1]
q = json.loads(line)["net"][0]["queues"][0]
assert q["tx_frames"] >= 100000 and q["rx_frames"] >= 100000, q
assert q["rx_errors"] == 0 and q["tx_errors"] == 0 and q["rx_dropped"] == 0, q
PY
}

t_net_echo_100k_mixed_sizes_uring() { net_echo_100k uring; }
t_net_echo_100k_mixed_sizes_epoll() { net_echo_100k epoll; }

t_net_host_ping_100() {
	net_vm_start ping "test=net-echo secs=60" --net tap=t0 || return 1
	local res="$TMP_ROOT/ping.txt"
	ip netns exec "$NS" ping -c 100 -i 0.01 -W 1 10.0.0.2 > "$res" 2>&1
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	grep -q " 0% packet loss" "$res" || { fail "ping: $(tail -2 "$res" | tr '\n' ' ')"; return 1; }
	expect_rc 0 "$OUT"
}

net_gen_counted() {
	local engine=$1
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	OUT="$TMP_ROOT/gen.out"
	local res="$TMP_ROOT/gen.peer"
	# The counter listens on the tap's address, so the tap must exist first:
	# make it persistent ourselves, then let minivmm attach to it.
	ip -n "$NS" tuntap add t0 mode tap || { fail "cannot create tap"; return 1; }
	netns_add_addr "$NS" t0 10.0.0.1/24 || { fail "cannot configure t0"; return 1; }
	peer count --port 5001 --expect 200000 --idle-ms 3000 --timeout-ms 60000 > "$res" 2>&1 &
	local counter=$!
	sleep 0.3
	ip netns exec "$NS" timeout -k 5 90 "$MINIVMM" --kernel "$TESTGUEST" --net "tap=t0,engine=$engine" --stats \
		--cmdline "test=net-gen count=200000 size=64" < /dev/null > "$OUT" 2>&1
	rc=$?
	wait "$counter"
	local count_rc=$?
	expect_rc 0 "$OUT" || return 1
	[ $count_rc = 0 ] || { fail "count: $(tr '\n' ' ' < "$res")"; return 1; }
	expect_line "net-gen done tx 200000" "$OUT"
}

t_net_guest_gen_counted_without_gaps_uring() { net_gen_counted uring; }
t_net_guest_gen_counted_without_gaps_epoll() { net_gen_counted epoll; }

net_rx_pause() {
	local engine=$1
	net_vm_start "pause-$engine" "test=net-sink rx-pause-ms=3000 secs=60" \
		--net "tap=t0,engine=$engine,mac=02:00:00:00:00:02" --stats=json || return 1
	grep -q "rx paused" "$OUT" || { fail "guest did not pause RX: $(tr '\n' '|' < "$OUT")"; return 1; }
	# A paused guest cannot answer ARP, and the host's queue of datagrams
	# waiting for resolution does not keep their order: resolve it here.
	ip -n "$NS" neigh replace 10.0.0.2 lladdr 02:00:00:00:00:02 dev t0 nud permanent
	# 500 frames fit in the tap's queue: none may be lost while the guest
	# has no buffers and minivmm does not read.
	peer send --dst 10.0.0.2 --port 5001 --count 500 --size 128 > /dev/null 2>&1 ||
		{ fail "send failed"; return 1; }
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "rx buffers posted" "$OUT" && break
		sleep 0.1
	done
	sleep 0.5
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_line "net-sink done rx 500 lost 0" "$OUT" || return 1
	python3 - "$OUT" <<'PY' || { fail "no rx_no_buffer event counted: $(grep '^{' "$OUT")"; return 1; }
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith('{')][-1]
assert json.loads(line)["net"][0]["queues"][0]["rx_no_buffer"] >= 1
PY
}

t_net_rx_pause_loses_nothing_read_uring() { net_rx_pause uring; }
t_net_rx_pause_loses_nothing_read_epoll() { net_rx_pause epoll; }

t_net_sigusr1_prints_stats_while_running() {
	net_vm_start usr1 "test=net-echo secs=60" --net tap=t0 --stats || return 1
	ip netns exec "$NS" ping -c 3 -i 0.1 10.0.0.2 > /dev/null 2>&1
	local pid
	pid=$(pgrep -P "$VM_PID" -x minivmm || pgrep -f "minivmm --kernel $TESTGUEST --cmdline test=net-echo secs=60" | head -1)
	[ -n "$pid" ] || { fail "cannot find the minivmm process"; return 1; }
	kill -USR1 "$pid"
	sleep 0.5
	kill -0 "$pid" 2>/dev/null || { fail "SIGUSR1 ended minivmm"; return 1; }
	grep -q "^q0 " "$OUT" || { fail "no statistics after SIGUSR1: $(tr '\n' '|' < "$OUT")"; return 1; }
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	[ "$(grep -c '^q0 ' "$OUT")" -ge 2 ] || fail "expected the table on SIGUSR1 and again at exit"
}

# net_vm_pid: the minivmm process net_vm_start started (under ip netns exec
# and timeout).
net_vm_pid() {
	pgrep -P "$VM_PID" -x minivmm || pgrep -f "minivmm --kernel $TESTGUEST --cmdline $1" | head -1
}

# net_vm_usr1 CMDLINE: SIGUSR1 to the minivmm net_vm_start started.
net_vm_usr1() {
	local pid
	pid=$(net_vm_pid "$1")
	[ -n "$pid" ] || { fail "cannot find the minivmm process"; return 1; }
	kill -USR1 "$pid"
}

# SIGUSR1 without --stats or --stats-file: the table, on stderr, anyway.
t_net_sigusr1_prints_the_table_without_stats() {
	net_vm_start usr1-plain "test=net-echo secs=60" --net tap=t0 || return 1
	net_vm_usr1 "test=net-echo secs=60" || return 1
	sleep 0.5
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_line "^vm: running, up [0-9.]+ s, 1 vCPU, 256 MiB" "$OUT" && expect_line "^q0 " "$OUT" || return 1
	[ "$(grep -c '^q0 ' "$OUT")" = 1 ] || fail "expected the table once (on SIGUSR1), not at exit"
}

# --stats-file: a line every --stats-interval, one on SIGUSR1, a last one
# once the guest stopped (with its exit status); each line parses; a new
# file is 0600; none of it on stdout or stderr.
t_net_stats_file_gets_periodic_sigusr1_and_final_lines() {
	local sf="$TMP_ROOT/vm.stats"
	rm -f "$sf"
	net_vm_start stats-file "test=net-echo secs=60" --net tap=t0 --stats-file "$sf" --stats-interval 1 ||
		return 1
	ip netns exec "$NS" ping -c 3 -i 0.1 10.0.0.2 > /dev/null 2>&1
	net_vm_usr1 "test=net-echo secs=60" || return 1
	sleep 1.5
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_no_line '^\{|^vm: |^q0 ' "$OUT" || return 1
	[ "$(stat -c %a "$sf")" = 600 ] || { fail "--stats-file made mode $(stat -c %a "$sf"), not 600"; return 1; }
	python3 - "$sf" <<'PY' || { fail "--stats-file: $(tail -c 600 "$sf" | tr '\n' '|')"; return 1; }
import json, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n"), "the last line is whole"
docs = [json.loads(l) for l in text.splitlines()]
assert len(docs) >= 3, "%d lines, want a periodic one, the SIGUSR1 one and the last" % len(docs)
# A periodic line may fall between the guest's stop and the last line.
assert docs[0]["vm"]["state"] == "running" and docs[0]["vm"]["exit_status"] is None, docs[0]["vm"]
last = docs[-1]
assert last["vm"]["state"] == "stopped" and last["vm"]["exit_status"] == 0 and last["vm"]["stop_reason"], last["vm"]
ups = [d["uptime_ms"] for d in docs]
assert ups == sorted(ups), ups
assert last["net"][0]["ifname"] == "t0" and last["net"][0]["queues"][0]["rx_frames"] >= 1, last["net"][0]
PY
}

net_interrupt_path() {
	local irq=$1; shift
	net_vm_start irq "test=net-echo $irq secs=60" --net tap=t0 "$@" || return 1
	local res="$TMP_ROOT/irq.peer"
	peer echo-check --dst 10.0.0.2 --port 5001 --count 2000 --sizes 60-1514 --wait-ms 3000 > "$res" 2>&1
	local peer_rc=$?
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	[ $peer_rc = 0 ] || { fail "echo-check over interrupts: $(tr '\n' ' ' < "$res")"; return 1; }
	expect_rc 0 "$OUT" && expect_line "irq count [1-9][0-9]*" "$OUT"
}

# The device's interrupts through minivmm's IOAPIC (the default split
# irqchip): the guest's redirection entry becomes KVM's MSI route for the
# device's irqfd. Level-triggered, each LAPIC EOI of the vector comes back
# as KVM_EXIT_IOAPIC_EOI. And through KVM's own IOAPIC.
t_net_interrupt_path() { net_interrupt_path irq=1; }
t_net_interrupt_path_level() { net_interrupt_path irq-level=1; }
t_net_interrupt_path_kernel_irqchip() { net_interrupt_path irq=1 --irqchip=kernel; }
# idle=halt: the guest sleeps in hlt between frames (a NAPI guest's idle
# loop), so every wake-up is the device's interrupt or the guest's bounding
# LAPIC timer; the echo must still be complete and the guest must have slept.
net_interrupt_path_halt() {
	net_interrupt_path idle=halt "$@" || return 1
	expect_line "irq count [1-9][0-9]* wakeups [0-9]* missed 0 halts [1-9][0-9]*" "$OUT"
}
t_net_interrupt_path_halt() { net_interrupt_path_halt; }
t_net_interrupt_path_halt_kernel_irqchip() { net_interrupt_path_halt --irqchip=kernel; }

t_net_bad_options_refused() {
	cli_refuses "--net queues: '0' is not a number" --kernel "$TESTGUEST" --net queues=0 || return 1
	cli_refuses "--net: unknown key 'speed'" --kernel "$TESTGUEST" --net tap=x,speed=9 || return 1
	cli_refuses "--net mac: '01:00:00:00:00:01' is not a unicast MAC" --kernel "$TESTGUEST" --net mac=01:00:00:00:00:01 || return 1
	cli_refuses "--net engine: 'dpdk' is not uring or epoll" --kernel "$TESTGUEST" --net engine=dpdk || return 1
	cli_refuses "--net threads=3: more threads than the 2 queue pairs" --kernel "$TESTGUEST" --net queues=2,threads=3 || return 1
	cli_refuses "interface name 'abcdefghijklmnopq' is too long" --kernel "$TESTGUEST" --net tap=abcdefghijklmnopq
}

# A driver that negotiates the control queue but never sets it up (the spec
# lets a driver leave queues unused; QEMU accepts it): the device must come up
# and carry traffic, not report NEEDS_RESET at DRIVER_OK (hardening 5).
t_net_ctrl_queue_negotiated_but_unset() {
	net_vm_start "ctrl-unset" "test=net-echo secs=20 ctrl=unset" --net tap=t0 || return 1
	local res="$TMP_ROOT/ctrl-unset.peer"
	peer echo-check --dst 10.0.0.2 --port 5001 --count 500 --sizes 60-1514 --wait-ms 2000 > "$res" 2>&1
	local peer_rc=$?
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_line "control queue negotiated and left unset" "$OUT" || return 1
	expect_no_line "needs reset|wants a reset" "$OUT" || return 1
	[ $peer_rc = 0 ] && [ "$(value lost "$res")" = 0 ] ||
		{ fail "echo-check: $(tr '\n' ' ' < "$res")"; return 1; }
	expect_rc 0 "$OUT"
}

# net_restart_loop ENGINE RUNS TAP QUEUES: RUNS minivmm runs on TAP one after
# the other, each started the moment the previous one exited (test=net-up:
# every queue's worker runs, then the guest resets); each must exit 0.
net_restart_loop() {
	local engine=$1 runs=$2 tap=$3 queues=$4 i out="$TMP_ROOT/restart-$1.out"
	for ((i = 1; i <= runs; i++)); do
		ip netns exec "$NS" timeout -k 5 30 "$MINIVMM" --kernel "$TESTGUEST" --cpus "$queues" \
			--net "tap=$tap,queues=$queues,engine=$engine" --cmdline "test=net-up queues=$queues" \
			< /dev/null > "$out" 2>&1
		rc=$?
		if [ $rc != 0 ] || ! grep -q "^testguest: net-up queues $queues, 0 device resets$" "$out"; then
			fail "$engine, tap $tap, queues=$queues: run $i of $runs, started right after run $((i - 1)) exited, exit status $rc: $(tail -c 400 "$out" | tr '\n' '|')"
			return 1
		fi
	done
}

# A tap queue minivmm held is free the moment it has exited: the next
# minivmm on the same tap, started at once, attaches to it. (An io_uring
# ring freed by the kernel after the process is gone would keep its fixed
# files, and so the tap queue, attached for tens of ms: "already in use".)
# On a tap an operator made (persistent), one queue and four on a
# multiqueue tap, and on a tap minivmm creates (gone with the last queue).
net_restart_same_tap() {
	local engine=$1
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	ip -n "$NS" tuntap add t0 mode tap && netns_link_up "$NS" t0 &&
		ip -n "$NS" tuntap add t4 mode tap multi_queue && netns_link_up "$NS" t4 ||
		{ fail "cannot create the taps"; return 1; }
	net_restart_loop "$engine" "$(runs_here 50 10)" t0 1 || return 1
	net_restart_loop "$engine" "$(runs_here 10 3)" t4 4 || return 1
	net_restart_loop "$engine" "$(runs_here 10 3)" tnew 1 || return 1
	net_restart_loop "$engine" "$(runs_here 10 3)" tnew 4 || return 1
	! ip -n "$NS" link show tnew > /dev/null 2>&1 || { fail "the tap minivmm made outlived it"; return 1; }
}

t_net_restart_same_tap_uring() { net_restart_same_tap uring; }
t_net_restart_same_tap_epoll() { net_restart_same_tap epoll; }

# No SRCU grace period where a guest or a user waits: a device reset and a
# VQ_PAIRS_SET keep the queues' ioeventfds, and the stop closes the VM fd
# instead of deassigning them (every KVM I/O-bus change waits for a grace
# period, and one once never ended). The guest brings 2 pairs up, resets
# the device twice (each time the same bring-up and VQ_PAIRS_SET again),
# then the machine; every KVM_IOEVENTFD/KVM_IRQFD minivmm makes is logged
# by an LD_PRELOAD shim: assigns, and not one deassign.
net_kvm_fds_are_never_deassigned() {
	local engine=$1 out="$TMP_ROOT/deassign-$1.out" log="$TMP_ROOT/deassign-$1.kvm"
	local shim="$BUILD/tools/kvm_fd_log.so"
	[ -f "$shim" ] || { fail "$shim not built (make)"; return 1; }
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	ip -n "$NS" tuntap add t0 mode tap multi_queue && netns_link_up "$NS" t0 ||
		{ fail "cannot create the tap"; return 1; }
	: > "$log"
	ip netns exec "$NS" env LD_PRELOAD="$(realpath "$shim")" MINIVMM_TEST_KVM_LOG="$log" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		timeout -k 5 60 "$MINIVMM" --kernel "$TESTGUEST" --cpus 2 \
		--net "tap=t0,queues=2,engine=$engine" --cmdline "test=net-up queues=2 resets=2" \
		< /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 0 "$out" || return 1
	expect_line "^testguest: net-up queues 2, 2 device resets$" "$out" || return 1
	local assigns deassigns
	assigns=$(grep -c ' assign$' "$log")
	deassigns=$(grep -c 'deassign$' "$log")
	# 5 queues (2 pairs and the control queue) and one interrupt line.
	[ "$assigns" -ge 5 ] || { fail "$engine: only $assigns ioeventfd/irqfd assigns logged: is the shim loaded?"; return 1; }
	[ "$deassigns" = 0 ] ||
		{ fail "$engine: $deassigns deassigns over 3 bring-ups, 2 device resets and a stop: $(sort "$log" | uniq -c | tr '\n' ' ')"; return 1; }
}
t_net_kvm_fds_are_never_deassigned_uring() { net_kvm_fds_are_never_deassigned uring; }
t_net_kvm_fds_are_never_deassigned_epoll() { net_kvm_fds_are_never_deassigned epoll; }
