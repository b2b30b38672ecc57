# SPDX-License-Identifier: Apache-2.0
# Helpers for the hostile-guest and backend-fault tests (test_hostile.sh,
# test_backend_gone.sh): one VM per test over one of six backend/engine
# variants, host traffic while the guest misbehaves, the CPU time of the
# net0-* worker threads, minivmm's complaint lines, and a backtrace of every
# thread when minivmm hangs. Uses peer and value from test_net.sh (sourced
# by run.sh too). Set HOSTILE_ARTIFACTS=DIR to keep the output of failing
# runs (minivmm's, the peer's, gdb's) there.

. tests/integration/netns.sh
THREADCPU="$BUILD/tools/threadcpu"

# Every backend and engine: tap (minivmm creates t0), the packet backend
# on one end of a veth pair (v0; the host is on v1), with either RX path,
# and the AF_XDP backend on v0, each with the io_uring and the epoll engine.
HOSTILE_VARIANTS="tap_uring tap_epoll pkt_ring_uring pkt_ring_epoll pkt_recv_uring pkt_recv_epoll xdp_uring xdp_epoll"

# hv_net VARIANT: its --net value.
hv_net() {
	case $1 in
	tap_uring) echo "tap=t0,engine=uring" ;;
	tap_epoll) echo "tap=t0,engine=epoll" ;;
	pkt_ring_uring) echo "packet=v0,rx=ring,engine=uring" ;;
	pkt_ring_epoll) echo "packet=v0,rx=ring,engine=epoll" ;;
	pkt_recv_uring) echo "packet=v0,rx=recv,engine=uring" ;;
	pkt_recv_epoll) echo "packet=v0,rx=recv,engine=epoll" ;;
	xdp_uring) echo "xdp=v0,engine=uring" ;;
	xdp_epoll) echo "xdp=v0,engine=epoll" ;;
	*) return 1 ;;
	esac
}

# hv_tail [BYTES]: the end of minivmm's output on one line.
hv_tail() {
	tail -c "${1:-500}" "$OUT" | tr '\n' '|'
}

# hv_clean: $OUT as $CLEAN ($OUT.clean), with every line of minivmm's
# that landed in the middle of a guest line (the serial port writes byte by
# byte, minivmm's own lines come whole from other threads) moved to the end:
# guest lines are whole again for grep, minivmm's lines all start a line.
hv_clean() {
	CLEAN="$OUT.clean"
	perl -0777 -ne 'my @m; 1 while s/(?<=[^\n])(minivmm: [^\n]*\n)/push @m, $1; ""/e; print $_, @m' \
		"$OUT" > "$CLEAN"
}

# hv_grep PATTERN [FILE]: an extended regex matches a line of FILE
# ($OUT), looked for in the file as it is and, failing that, cleaned.
hv_grep() {
	local f=${2:-$OUT}
	grep -Eq -- "$1" "$f" && return 0
	[ "$f" = "$OUT" ] || return 1
	hv_clean
	grep -Eq -- "$1" "$CLEAN"
}

# Microseconds on the wall clock: loops wait by time, not by turns (a turn
# takes long on a loaded machine). No subshell: $EPOCHREALTIME is bash's.
hv_now() {
	echo $((${EPOCHREALTIME/./}))
}

# hv_wait_line PATTERN SECONDS [FILE]: poll for an extended regex. 0 found,
# 1 timed out with minivmm still running, 2 minivmm ended first. Each turn
# is one grep; the output is cleaned (hv_clean, a perl) every fifth turn.
hv_wait_line() {
	local pat=$1 end=$((${EPOCHREALTIME/./} + $2 * 1000000)) f=${3:-$OUT} turn=0
	while :; do
		grep -Eq -- "$pat" "$f" && return 0
		if [ $((++turn % 5)) = 0 ] && [ "$f" = "$OUT" ]; then
			hv_clean
			grep -Eq -- "$pat" "$CLEAN" && return 0
		fi
		kill -0 "$VM_PID" 2> /dev/null || { hv_grep "$pat" "$f" && return 0; return 2; }
		[ "${EPOCHREALTIME/./}" -lt "$end" ] || { hv_grep "$pat" "$f" && return 0; return 1; }
		sleep 0.02
	done
}

# hv_veth: the veth pair v0 (minivmm's) / v1 (the host's, 10.0.0.1/24),
# v0 up. The xdp backend binds a socket to each of v0's queues, so v0 has
# as many as the device (NET_OPT's queues=); v1 sends on one queue, which a
# veth's native XDP keeps as v0's queue 0: whichever pairs the guest uses,
# the host's frames reach one it serves (a veth cannot steer, and frames on
# a queue the guest left off are dropped).
hv_veth() {
	local nq
	nq=$(sed -nE 's/.*queues=([0-9]+).*/\1/p' <<< "$NET_OPT")
	ip -n "$NS" link add v0 numrxqueues "${nq:-1}" numtxqueues "${nq:-1}" type veth \
		peer name v1 numrxqueues "${nq:-1}" numtxqueues 1 && netns_link_up "$NS" v0 &&
		ip -n "$NS" addr add 10.0.0.1/24 dev v1
}

# hv_boot NAME VARIANT GUEST_CMDLINE READY [MINIVMM ARGS...]: boot the test
# guest in a fresh namespace over VARIANT and wait for a line matching
# READY. The namespace has IPv6 off (no neighbour discovery frames the
# guest did not ask for), 10.0.0.1/24 on the host side ($HOST_IF: t0 or v1)
# and a permanent neighbour entry for the guest's MAC, taken from minivmm's
# "net0: ... MAC" line: the host can send to a guest that answers no ARP
# while it misbehaves. Sets NS, OUT, VM_PID (timeout), VMM_PID (minivmm),
# HOST_IF, GUEST_MAC, NET_OPT. HV_NET_EXTRA is appended to the --net value.
hv_boot() {
	local name=$1 variant=$2 cmdline=$3 ready=$4 i; shift 4
	NET_OPT=$(hv_net "$variant")${HV_NET_EXTRA:-} || { fail "unknown variant '$variant'"; return 1; }
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 ||
		{ fail "cannot turn IPv6 off in $NS"; return 1; }
	OUT="$TMP_ROOT/$name.out"
	: > "$OUT"
	if [[ $NET_OPT == packet=* || $NET_OPT == xdp=* ]]; then
		HOST_IF=v1
		# v1 stays down until the neighbour entry is in (below).
		hv_veth || { fail "cannot set up the veth pair v0/v1"; return 1; }
	else
		HOST_IF=t0
	fi
	ip netns exec "$NS" timeout -k 5 "${VM_TIMEOUT:-60}" "$MINIVMM" --kernel "$TESTGUEST" \
		--cmdline "$cmdline" --net "$NET_OPT" "$@" < /dev/null > "$OUT" 2>&1 &
	VM_PID=$!
	VMM_PID=
	for ((i = 0; i < 250; i++)); do
		VMM_PID=$(pgrep -P "$VM_PID" -x minivmm) && break
		sleep 0.02
	done
	[ -n "$VMM_PID" ] || { fail "[$NET_OPT] minivmm did not start: $(hv_tail)"; return 1; }
	hv_sampler_start
	# minivmm announces the device before the guest runs.
	hv_wait_line "^minivmm: net0: .* MAC [0-9a-f:]{17}" 5 ||
		{ fail "[$NET_OPT] no 'net0: ... MAC' line from minivmm: $(hv_tail)"; return 1; }
	GUEST_MAC=$(sed -nE 's/^minivmm: net0: .* MAC ([0-9a-f:]{17}).*/\1/p' "$OUT" | head -1)
	if [ "$HOST_IF" = t0 ]; then
		netns_wait_link "$NS" t0 10 && ip -n "$NS" addr add 10.0.0.1/24 dev t0 ||
			{ fail "[$NET_OPT] minivmm made no usable tap t0: $(hv_tail)"; return 1; }
	fi
	# Before the link is up: the guest's first ARP request (which it makes
	# before misbehaving) is answered only once the host can send to it.
	ip -n "$NS" neigh replace 10.0.0.2 lladdr "$GUEST_MAC" dev "$HOST_IF" nud permanent ||
		{ fail "[$NET_OPT] cannot add a neighbour entry for 10.0.0.2 ($GUEST_MAC) on $HOST_IF"; return 1; }
	netns_link_up "$NS" "$HOST_IF" || { fail "[$NET_OPT] cannot bring $HOST_IF up"; return 1; }
	hv_wait_line "$ready" 15
	case $? in
	0) return 0 ;;
	1) hv_hung "waiting for '$ready'"; return 1 ;;
	*) hv_died "before '$ready'"; return 1 ;;
	esac
}

# ---- host traffic ------------------------------------------------------------

# hv_blast_start RATE: UDP at the guest (mixed sizes) in the background,
# RATE datagrams per second (0: as fast as the socket takes them).
hv_blast_start() {
	local rate=$1 args=(--count 100000)
	[ "$rate" != 0 ] && args=(--count $((rate * 30)) --rate "$rate")
	BLAST_OUT="$TMP_ROOT/blast.$BASHPID.out"
	ip netns exec "$NS" "$NETPEER" send --dst 10.0.0.2 --port 5001 --size 60-1514 --flows 4 \
		"${args[@]}" --timeout-ms 30000 > "$BLAST_OUT" 2>&1 &
	BLAST_PID=$!
}

hv_blast_stop() {
	[ -n "${BLAST_PID:-}" ] || return 0
	kill "$BLAST_PID" 2> /dev/null
	wait "$BLAST_PID" 2> /dev/null
	BLAST_PID=
}

# ---- CPU time of the worker threads ------------------------------------------

# hv_sampler_start: sample minivmm's net0-* threads from now on
# (tests/tools/threadcpu.c; hv_boot starts it).
hv_sampler_start() {
	CPU_FILE="$TMP_ROOT/cpu.$BASHPID.txt"
	rm -f "$CPU_FILE" "$CPU_FILE.ready"
	"$THREADCPU" "$VMM_PID" net0- "$CPU_FILE" &
	SAMPLER_PID=$!
}

# hv_sampler_mark: the measured window starts now (once the sampler runs).
hv_sampler_mark() {
	local end=$(($(hv_now) + 5000000))
	while [ ! -e "$CPU_FILE.ready" ] && [ "$(hv_now)" -lt "$end" ]; do
		sleep 0.01
	done
	kill -USR1 "$SAMPLER_PID" 2> /dev/null
}

# hv_sampler_stop: sets CPU_LINE ("window <s> cpu <s> util ... busiest ...").
hv_sampler_stop() {
	kill -TERM "$SAMPLER_PID" 2> /dev/null
	wait "$SAMPLER_PID" 2> /dev/null
	CPU_LINE=$(cat "$CPU_FILE" 2> /dev/null)
	[ -n "$CPU_LINE" ] || CPU_LINE="window 0 cpu 0 util 0 peak 0 busiest none 0 threads 0 (no sample)"
}

# hv_cpu_ok LIMIT: the workers' CPU in the window was at most LIMIT cores,
# plus 20 ms, plus what each worker thread's start may cost on this backend
# (hv_start_cpu). Spinning is CPU for as long as the window lasts; a start
# is paid once per thread seen (the CPU_LINE's last field).
hv_cpu_ok() {
	awk -v lim="$1" -v per="$(hv_start_cpu)" '{ exit !($4 <= lim * $2 + 0.02 + per * $NF) }' <<< "$CPU_LINE"
}

# hv_start_cpu: seconds of CPU one worker start may cost. An AF_XDP worker
# binds its socket over all of guest RAM, and the kernel sets up a buffer
# per UMEM chunk for it (8-20 ms for 256 MiB here, up to 60 on a loaded
# machine); minivmm paces those starts (net/xdp.h, XDP_START_GAP_NS), so a
# guest cannot make them a spin. Other backends' starts cost next to nothing.
hv_start_cpu() {
	case $NET_OPT in
	xdp=*) echo 0.06 ;;
	*) echo 0 ;;
	esac
}

# ---- minivmm's lines ---------------------------------------------------------

# hv_complaints: minivmm's lines about net0 other than the one announcing it.
hv_complaints() {
	hv_clean
	grep -E '^minivmm: net0: ' "$CLEAN" | grep -vE 'queue pairs?, MAC [0-9a-f:]{17}$'
}

# hv_log_ok SECONDS MIN: minivmm said something (at least MIN lines), but
# little: rate-limited to about one line per second per queue (three queues
# in one pair with the control queue), allowed 3 per second of the run + 3.
hv_log_ok() {
	local secs=$1 min=$2 n allowed
	n=$(hv_complaints | wc -l)
	allowed=$((3 * secs + 3))
	if [ "$n" -lt "$min" ]; then
		fail "[$NET_OPT] minivmm printed no line naming the problem (expected one 'minivmm: net0: ...')"
		return 1
	fi
	if [ "$n" -gt "$allowed" ]; then
		fail "[$NET_OPT] minivmm printed $n lines about net0 in ${secs}s (allowed $allowed: rate-limited to ~1/s per queue); most frequent: $(hv_complaints | sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' '|')"
		return 1
	fi
}

hv_san_ok() {
	local san
	san=$(grep -E -m1 "ERROR: (Address|Undefined|Leak)Sanitizer|runtime error:" "$OUT")
	[ -z "$san" ] || { fail "[$NET_OPT] sanitizer report: $san"; return 1; }
}

# ---- when things go wrong ------------------------------------------------------

hv_keep() {
	[ -n "${HOSTILE_ARTIFACTS:-}" ] || return 0
	mkdir -p "$HOSTILE_ARTIFACTS"
	local f
	for f in "$@"; do
		[ -f "$f" ] && cp "$f" "$HOSTILE_ARTIFACTS/" 2> /dev/null
	done
}

# hv_threads: every thread of minivmm with its state and CPU seconds.
hv_threads() {
	local t comm st
	for t in /proc/"$VMM_PID"/task/*; do
		comm=$(cat "$t/comm" 2> /dev/null) || continue
		read -ra st < "$t/stat" 2> /dev/null || continue
		# fields after "(comm)": state is 3rd, utime 14th, stime 15th
		printf '%s:%s:%ss ' "$comm" "${st[2]}" \
			"$(awk -v u="${st[13]}" -v s="${st[14]}" 'BEGIN { printf "%.2f", (u + s) / 100 }')"
	done
}

# hv_snapshot: what every minivmm thread does, on one line (SNAPSHOT):
# state and CPU seconds per thread, the top frames of each backtrace
# (gdb -batch -p; the whole output is kept as $OUT.gdb).
hv_snapshot() {
	local gdb_out="$OUT.gdb" threads summary
	threads=$(hv_threads)
	timeout 30 gdb -batch -p "$VMM_PID" -ex 'set pagination off' -ex 'thread apply all bt' \
		> "$gdb_out" 2>&1
	summary=$(awk '/^Thread /{ if (t) print t; match($0, /"[^"]*"/); t = substr($0, RSTART, RLENGTH) ":"; n = 0; next }
		/^#[0-9]/ && n < 4 { sub(/^#[0-9]+ +(0x[0-9a-f]+ in )?/, ""); sub(/ \(.*/, ""); t = t " " $0; n++ }
		END { if (t) print t }' "$gdb_out" | tr '\n' '|')
	SNAPSHOT="threads: $threads; backtraces: ${summary:-none (gdb: $(tail -2 "$gdb_out" | tr '\n' ' '))}"
	hv_keep "$gdb_out"
}

# hv_hung WHAT: minivmm is up but made no progress: say which thread does
# what, kill it, fail.
hv_hung() {
	local what=$1
	hv_snapshot
	kill -KILL "$VMM_PID" 2> /dev/null
	wait "$VM_PID" 2> /dev/null
	hv_keep "$OUT"
	fail "[$NET_OPT] minivmm hung $what (still running, guest silent); $SNAPSHOT; last output: $(hv_tail 400)"
}

# hv_died WHAT: minivmm ended early: its status, a sanitizer report, the end.
hv_died() {
	local what=$1 san
	wait "$VM_PID"
	rc=$?
	hv_keep "$OUT"
	san=$(grep -E -m1 "ERROR: (Address|Undefined)Sanitizer|runtime error:" "$OUT")
	fail "[$NET_OPT] minivmm ended $what with status $rc${san:+ ($san)}: $(hv_tail 600)"
}

# hv_wait_exit SECONDS: wait for minivmm to end; sets rc. A hang is reported.
hv_wait_exit() {
	local end=$(($(hv_now) + $1 * 1000000))
	while kill -0 "$VM_PID" 2> /dev/null && [ "$(hv_now)" -lt "$end" ]; do
		sleep 0.02
	done
	if kill -0 "$VM_PID" 2> /dev/null; then
		hv_hung "at the end (the guest was told to stop)"
		return 1
	fi
	wait "$VM_PID"
	rc=$?
}

# hv_recovered WHAT: the host pings the guest (10 answers within a 5 s
# deadline; ping -c alone gives up on a reply after twice the longest round
# trip so far, and with -w it counts the ones still on their way as lost:
# both too soon on a loaded machine, so loss is judged by echo-check) and
# echo-checks 200 mixed-size datagrams through it (nothing lost or corrupt).
hv_recovered() {
	local what=$1 res="$OUT.ping" echo_res="$OUT.peer"
	ip netns exec "$NS" ping -c 10 -i 0.01 -w 5 10.0.0.2 > "$res" 2>&1
	grep -qE "^[0-9]+ packets transmitted, [1-9][0-9]+ received" "$res" ||
		{ hv_keep "$OUT" "$res"; fail "[$NET_OPT] host ping $what: $(tail -2 "$res" | tr '\n' ' '); guest: $(hv_tail 400)"; return 1; }
	peer echo-check --dst 10.0.0.2 --port 5001 --count 200 --sizes 60-1514 --wait-ms 3000 > "$echo_res" 2>&1
	local echo_rc=$?
	[ $echo_rc = 0 ] && [ "$(value lost "$echo_res")" = 0 ] && [ "$(value corrupt "$echo_res")" = 0 ] ||
		{ hv_keep "$OUT" "$echo_res"; fail "[$NET_OPT] echo-check $what (rc $echo_rc): $(grep -v '^flow' "$echo_res" | tr '\n' ' ')"; return 1; }
}
