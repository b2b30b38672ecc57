# SPDX-License-Identifier: Apache-2.0
# Confinement (docs/security.md): every thread of a running minivmm carries
# the seccomp filter of its kind (on by default, so every other test runs
# under the filters too); --drop-caps leaves each thread only what it needs;
# the threads that reopen a vanished backend can still do so, confined.
# Reuses net_vm_start, net_vm_wait, peer and value (test_net.sh), pkt_vm_start
# (test_packet.sh) and cli_refuses (test_cli.sh).

# vm_process: the minivmm process under $VM_PID (ip netns exec -> timeout).
vm_process() {
	pgrep -P "$VM_PID" -x minivmm | head -1
}

# thread_table PID OUT: one line per thread: comm ("main" for the main
# thread), Seccomp mode, number of filters, CapEff, CapPrm.
thread_table() {
	local t comm
	for t in /proc/"$1"/task/*; do
		comm=$(cat "$t/comm" 2> /dev/null)
		[ "${t##*/}" = "$1" ] && comm=main
		awk -v comm="$comm" '
			/^Seccomp:/ { mode = $2 } /^Seccomp_filters:/ { nf = $2 }
			/^CapEff:/ { eff = $2 } /^CapPrm:/ { prm = $2 }
			END { gsub(/ /, "_", comm); print comm, mode, nf, eff, prm }' "$t/status" 2> /dev/null
	done > "$2"
}

# threads_check TABLE PYTHON [SAN]: run PYTHON with t = [(comm, mode,
# filters, cap_eff, cap_prm)] (caps as ints), kinds(name) -> the entries
# whose comm matches the regex; PYTHON calls check(cond, message). Threads
# named kvm-* and iou-* are the kernel's (KVM's NX recovery, io_uring's
# workers): they never run user code, so filters and capabilities mean
# nothing to them. With SAN=1 (a sanitizer build) so are threads named
# minivmm other than main: the runtime's own (TSan's background thread).
threads_check() {
	local table=$1 code=$2 san=${3:-0} msg
	msg=$(python3 - "$table" "$code" "$san" 2>&1 <<'PY'
import re, sys
t = []
for line in open(sys.argv[1]):
    comm, mode, nf, eff, prm = line.split()
    if comm.startswith("kvm-") or comm.startswith("iou-"):
        continue
    if sys.argv[3] == "1" and comm == "minivmm":
        continue
    t.append((comm, int(mode), int(nf), int(eff, 16), int(prm, 16)))
def kinds(rx):
    return [e for e in t if re.fullmatch(rx, e[0])]
errs = []
def check(cond, what):
    if not cond:
        errs.append(what)
exec(sys.argv[2])
if errs:
    print("; ".join(errs))
    sys.exit(1)
PY
	) || { fail "$msg; threads: $(tr '\n' '|' < "$table")"; return 1; }
}

# Every kind of thread, and how many filters it carries: its own, and for
# threads the spawner starts the spawner's underneath (filters stack).
# "main" is the program's main thread, "minivmm" the library's run thread
# (minivmm_start), both with the main list.
SECCOMP_PY_FILTERS='
want = {"main": 1, "minivmm": 1, "signals": 1, "serial": 1, "vcpu[0-9]+": 1, "spawner": 1,
        "net0-link": 1, "net0-helper": 1, "net0-ctrl": 2, "net0-[qw][0-9]+": 2}
for rx, nf in want.items():
    found = kinds(rx)
    check(found, "no %s thread" % rx)
    for e in found:
        check(e[1] == 2, "%s: Seccomp mode %d, expected 2 (filter)" % (e[0], e[1]))
        check(e[2] == nf, "%s: %d filters, expected %d" % (e[0], e[2], nf))
for e in t:
    check(any(re.fullmatch(rx, e[0]) for rx in want), "a thread nobody expects: %s" % e[0])
'
SECCOMP_PY_NONE='
for e in t:
    check(e[1] == 0 and e[2] == 0, "%s: Seccomp mode %d with %d filters, expected none" % (e[0], e[1], e[2]))
'

# A sanitizer build runs without filters and says so (docs/security.md).
sanitizer_build() {
	grep -q "seccomp: off in this sanitizer build" "$1"
}

t_seccomp_every_thread_has_the_filter_of_its_kind() {
	net_vm_start sc-threads "test=net-echo queues=2 secs=30" --net tap=t0,queues=2 --cpus 2 || return 1
	ip netns exec "$NS" ping -c 3 -i 0.1 10.0.0.2 > /dev/null 2>&1
	local pid table="$TMP_ROOT/sc-threads.table"
	pid=$(vm_process)
	[ -n "$pid" ] || { fail "cannot find the minivmm process"; return 1; }
	thread_table "$pid" "$table"
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	if sanitizer_build "$OUT"; then
		threads_check "$table" "$SECCOMP_PY_NONE" 1
	else
		threads_check "$table" "$SECCOMP_PY_FILTERS"
	fi
}

# By default (--drop-caps), only the device's helper keeps anything (vmm/caps.c):
# CAP_NET_ADMIN for a tap (TUNSETIFF when it comes back), CAP_NET_RAW for
# packet sockets (VQ_PAIRS_SET reopens them). The vCPUs, the workers and
# the control, link and spawner threads keep nothing, over every backend.
drop_caps_check() {
	local table=$1 keep=$2 san=0
	sanitizer_build "$OUT" && san=1
	threads_check "$table" '
keep = '"$keep"'
for e in t:
    want = next((v for rx, v in keep.items() if re.fullmatch(rx, e[0])), 0)
    check(e[3] == want and e[4] == want, "%s: CapEff %#x CapPrm %#x, expected %#x" % (e[0], e[3], e[4], want))
check(len(t) >= 7, "only %d threads" % len(t))
' "$san"
}

CAP_NET_ADMIN_BIT=$((1 << 12))
CAP_NET_RAW_BIT=$((1 << 13))

t_seccomp_drop_caps_leaves_each_thread_what_it_needs() {
	# No option: dropping them is the default.
	net_vm_start sc-caps "test=net-echo queues=2 secs=30" --net tap=t0,queues=2 --cpus 2 || return 1
	ip netns exec "$NS" ping -c 3 -i 0.1 10.0.0.2 > "$TMP_ROOT/sc-caps.ping" 2>&1 ||
		{ fail "ping with capabilities dropped: $(tail -2 "$TMP_ROOT/sc-caps.ping" | tr '\n' ' ')"; return 1; }
	local table="$TMP_ROOT/sc-caps.table"
	thread_table "$(vm_process)" "$table"
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	drop_caps_check "$table" "{'net0-helper': $CAP_NET_ADMIN_BIT}" || return 1
	netns_cleanup

	PKT_READY="ready ip" pkt_vm_start sc-caps-pkt "test=net-echo queues=2 secs=30" ",queues=2" --cpus 2 --drop-caps ||
		return 1
	ip netns exec "$NS" ping -c 3 -i 0.1 10.0.0.2 > /dev/null 2>&1
	thread_table "$(vm_process)" "$table"
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_line "^testguest: ctrl mq 2 -> OK$" "$OUT" || return 1
	drop_caps_check "$table" "{'net0-helper': $CAP_NET_RAW_BIT}" || return 1
	netns_cleanup

	# --keep-caps (debugging): every thread keeps what minivmm started with, said at start.
	net_vm_start sc-keep "test=net-echo queues=2 secs=30" --net tap=t0,queues=2 --cpus 2 --keep-caps || return 1
	ip netns exec "$NS" ping -c 3 -i 0.1 10.0.0.2 > /dev/null 2>&1
	thread_table "$(vm_process)" "$table"
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_line "^minivmm: --keep-caps: every thread keeps the capabilities minivmm started with \(for debugging\)$" "$OUT" ||
		return 1
	threads_check "$table" '
full = max(e[3] for e in t)
check(full != 0, "no thread has any capability")
for e in t:
    check(e[3] == full and e[4] == full, "%s: CapEff %#x CapPrm %#x, expected %#x as every thread" % (e[0], e[3], e[4], full))
' "$(sanitizer_build "$OUT" && echo 1 || echo 0)"
}

# echo_ok NAME COUNT: COUNT datagrams through the guest, none lost.
echo_ok() {
	local res="$TMP_ROOT/$1.peer"
	peer echo-check --dst 10.0.0.2 --port 5001 --count "$2" --sizes 60-1514 --flows 8 \
		--wait-ms 3000 > "$res" 2>&1 && [ "$(value lost "$res")" = 0 ] ||
		{ fail "$1: echo-check: $(grep -v '^flow' "$res" | tr '\n' ' '); minivmm: $(grep '^minivmm' "$OUT" | tr '\n' '|')"; return 1; }
}

# wait_line PATTERN SECONDS: until minivmm's output has a line matching it.
wait_line() {
	wait_ready "$OUT" "$VM_PID" "$1" "no line matching '$1' after $2 s" "$2"
}

# The link thread reopens a tap deleted and made again under a running VM
# (TUNSETIFF, sysfs, restarting the workers through the spawner), confined
# and with --drop-caps: what it kept is enough.
t_seccomp_tap_deleted_and_recreated_is_reopened_confined() {
	net_vm_start sc-tap "test=net-echo queues=2 secs=60" --net tap=t0,queues=2 --cpus 2 --drop-caps --stats=json ||
		return 1
	echo_ok sc-tap-before 500 || return 1
	ip -n "$NS" link del t0 || { fail "cannot delete t0"; return 1; }
	# Traffic towards the guest would need the tap; the guest's own
	# transmissions make a worker notice (the guest pings nothing, so
	# the loss shows on the poll).
	wait_line "net0: tap t0 is gone" 10 || return 1
	ip -n "$NS" tuntap add t0 mode tap multi_queue || { fail "cannot create t0 again: $(tail -c 600 "$OUT" | tr '\n' '|')"; return 1; }
	netns_add_addr "$NS" t0 10.0.0.1/24 || { fail "cannot configure t0 again"; return 1; }
	wait_line "net0: tap t0 is back: link up" 10 || return 1
	echo_ok sc-tap-after 500 || return 1
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" && expect_no_line "cannot be used|needs reset" "$OUT"
}

# The same for a packet device with two queues: new sockets, TPACKET_V3
# rings, a new fanout group.
t_seccomp_packet_interface_recreated_is_reopened_confined() {
	pkt_vm_start sc-pkt "test=net-echo queues=2 secs=60" ",queues=2" --cpus 2 --drop-caps || return 1
	echo_ok sc-pkt-before 500 || return 1
	ip -n "$NS" link del v0 || { fail "cannot delete v0"; return 1; }
	wait_line "net0: packet v0 is gone" 10 || return 1
	netns_veth "$NS" v0 v1 && netns_add_addr "$NS" v1 10.0.0.1/24 ||
		{ fail "cannot make v0/v1 again"; return 1; }
	wait_line "net0: packet v0 is back: link up" 10 || return 1
	echo_ok sc-pkt-after 500 || return 1
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" && expect_no_line "cannot be used|needs reset" "$OUT"
}

# A terminal on stdin: raw mode, then tcsetattr by the confined main thread
# at exit. script(1) gives minivmm a pseudo-terminal.
t_seccomp_terminal_is_restored_by_the_confined_main_thread() {
	local out="$TMP_ROOT/sc-tty.out"
	timeout -k 5 30 script -qec "$MINIVMM --kernel $TESTGUEST --cmdline test=hello; echo minivmm-rc=\$?; stty -a" \
		/dev/null < /dev/null > "$out" 2>&1
	expect_line "minivmm-rc=0" "$out" && expect_line "hello from minivmm test guest" "$out" &&
		expect_line " icanon " "$out" && expect_line " echo " "$out"
}

t_seccomp_off_and_log_say_so() {
	local out="$TMP_ROOT/sc-off.out"
	run_vm "$out" --kernel "$TESTGUEST" --cmdline test=hello --seccomp=off < /dev/null
	expect_rc 0 "$out" && expect_line "^minivmm: seccomp: off: the VMM runs unconfined" "$out" || return 1
	run_vm "$out" --kernel "$TESTGUEST" --cmdline test=hello --seccomp=log < /dev/null
	expect_rc 0 "$out" || return 1
	sanitizer_build "$out" || expect_line "^minivmm: seccomp: log: calls outside a thread's list are allowed and logged" "$out" || return 1
	run_vm "$out" --kernel "$TESTGUEST" --cmdline test=hello < /dev/null
	expect_rc 0 "$out" || return 1
	sanitizer_build "$out" || expect_no_line "seccomp" "$out"
}

t_seccomp_bad_values_refused() {
	cli_refuses "--seccomp: 'maybe' is not on, off or log" --kernel "$TESTGUEST" --seccomp=maybe || return 1
	cli_refuses "--seccomp needs a value" --kernel "$TESTGUEST" --seccomp
}

t_seccomp_list_prints_every_kind_of_thread() {
	local out="$TMP_ROOT/sc-list.out" kind
	run_vm "$out" --seccomp-list
	expect_rc 0 "$out" || return 1
	for kind in main signals vcpu serial spawner net-worker net-ctrl net-link net-helper; do
		expect_line "^#### $kind: [0-9]+ system calls" "$out" || return 1
	done
	expect_line "^\| ioctl \| request one of KVM_RUN, KVM_GET_REGS, KVM_GET_SREGS \|" "$out"
}

# ---- the xdp backend (test_xdp.sh's xdp_ns, xdp_vm_start) ----

# xdp_confined_echo NAME [MINIVMM ARGS...]: a 2-queue xdp device over a
# 2-queue veth, the guest switching both pairs on (VQ_PAIRS_SET: drain
# sockets closed and opened by the helper for the vCPU and control threads), 500 echoed
# datagrams, the thread table into $TMP_ROOT/NAME.table; minivmm exits 0
# and no thread was killed by its filter.
xdp_confined_echo() {
	local name=$1; shift
	xdp_ns 2 || return 1
	xdp_vm_start "$name" "test=net-echo queues=2 secs=30" ",queues=2" --cpus 2 "$@" || return 1
	echo_ok "$name" 500 || return 1
	thread_table "$(vm_process)" "$TMP_ROOT/$name.table"
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_line "^testguest: ctrl mq 2 -> OK$" "$OUT" || return 1
	# A sanitizer build has no filters and says so in a line of its own.
	if sanitizer_build "$OUT"; then
		expect_no_line "SIGSYS|Bad system call|signal 31" "$OUT"
	else
		expect_no_line "SIGSYS|Bad system call|signal 31|seccomp" "$OUT"
	fi
}

# seccomp=on said explicitly (it is the default): every thread of an xdp
# VM carries its filter and the data path, the steering and the teardown
# (drain sockets, XSKMAP, the BPF link) stay inside the lists.
t_seccomp_xdp_on_threads_confined_traffic_flows() {
	xdp_confined_echo sc-xdp --seccomp=on || return 1
	if sanitizer_build "$OUT"; then
		threads_check "$TMP_ROOT/sc-xdp.table" "$SECCOMP_PY_NONE" 1
	else
		threads_check "$TMP_ROOT/sc-xdp.table" "$SECCOMP_PY_FILTERS"
	fi
}

CAP_IPC_LOCK_BIT=$((1 << 14))

# --drop-caps over xdp (vmm/caps.c): the helper keeps CAP_NET_RAW and
# CAP_IPC_LOCK for the workers' sockets and UMEM and CAP_NET_ADMIN for the
# RSS table and the program; the threads that ask it (vCPUs steering at
# DRIVER_OK, control on VQ_PAIRS_SET, workers as they start, link) nothing.
t_seccomp_xdp_drop_caps_leaves_each_thread_what_it_needs() {
	xdp_confined_echo sc-xdp-caps --drop-caps || return 1
	local all=$((CAP_NET_RAW_BIT | CAP_IPC_LOCK_BIT | CAP_NET_ADMIN_BIT))
	drop_caps_check "$TMP_ROOT/sc-xdp-caps.table" "{'net0-helper': $all}"
}

# The link thread reopens an xdp device whose veth was deleted and made
# again, confined and with --drop-caps: the program loaded at set-up gets a
# new BPF link, every queue is probed, the workers make new sockets.
t_seccomp_xdp_interface_recreated_is_reopened_confined() {
	xdp_ns 2 || return 1
	xdp_vm_start sc-xdp-gone "test=net-echo queues=2 secs=60" ",queues=2" --cpus 2 --drop-caps || return 1
	echo_ok sc-xdp-before 500 || return 1
	ip -n "$NS" link del v0 || { fail "cannot delete v0"; return 1; }
	wait_line "net0: xdp v0 is gone" 10 || return 1
	ip -n "$NS" link add v0 numrxqueues 2 numtxqueues 2 type veth peer name v1 numrxqueues 2 numtxqueues 2 &&
		netns_link_up "$NS" v0 && netns_add_addr "$NS" v1 10.0.0.1/24 ||
		{ fail "cannot make v0/v1 again"; return 1; }
	wait_line "net0: xdp v0 is back: link up" 10 || return 1
	echo_ok sc-xdp-after 500 || return 1
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	expect_rc 0 "$OUT" && expect_no_line "cannot be used|needs reset|SIGSYS|Bad system call" "$OUT"
}
