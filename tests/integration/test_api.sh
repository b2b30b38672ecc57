# SPDX-License-Identifier: Apache-2.0
# The API socket (docs/api.md) with curl --unix-socket, under the real
# seccomp lists: every endpoint, pause and resume, a rate limit set live,
# vm.shutdown ending the run with status 0 and the socket removed.
# Reuses net_vm_start and net_vm_wait (test_net.sh).

# api METHOD ENDPOINT [BODY]: the status on the first line, the body after.
api() {
	local args=(-s --max-time 10 --unix-socket "$API_SOCK" -X "$1" -w '\n%{http_code}')
	[ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' -d "$3")
	curl "${args[@]}" "http://localhost/api/v1/$2" > "$TMP_ROOT/api.ans" 2> /dev/null
	API_STATUS=$(tail -n 1 "$TMP_ROOT/api.ans")
	API_BODY=$(head -n -1 "$TMP_ROOT/api.ans")
}

# api_expect STATUS METHOD ENDPOINT [BODY]
api_expect() {
	local want=$1; shift
	api "$@"
	[ "$API_STATUS" = "$want" ] ||
		{ fail "$1 $2: status $API_STATUS, expected $want; body: $API_BODY; minivmm: $(tail -c 400 "$OUT" | tr '\n' '|')"; return 1; }
}

t_api_every_endpoint_with_curl() {
	API_SOCK="$TMP_ROOT/vm.sock"
	net_vm_start api "test=net-echo secs=60" --net tap=t0 --api-socket "$API_SOCK" || return 1
	[ "$(stat -c %a "$API_SOCK")" = 600 ] || { fail "socket mode $(stat -c %a "$API_SOCK"), expected 600"; return 1; }
	api_expect 200 GET vmm.ping || return 1
	echo "$API_BODY" | jq -e '.version | length > 0' > /dev/null || { fail "ping: $API_BODY"; return 1; }
	api_expect 200 GET vm.info || return 1
	[ "$(echo "$API_BODY" | jq -r .state)" = Running ] || { fail "info: $API_BODY"; return 1; }
	api_expect 200 GET vm.counters || return 1
	[ "$(echo "$API_BODY" | jq -r '.net[0].name')" = net0 ] || { fail "counters: $API_BODY"; return 1; }
	api_expect 200 GET vm.net/0/rate-limit || return 1
	api_expect 204 PUT vm.net/0/rate-limit '{"tx_rate_limiter":{"bandwidth":{"size":125000,"refill_time":100}}}' ||
		return 1
	api_expect 200 GET vm.net/0/rate-limit || return 1
	[ "$(echo "$API_BODY" | jq .tx_rate_limiter.bandwidth.size)" = 125000 ] || { fail "limit: $API_BODY"; return 1; }
	api_expect 400 PUT vm.net/0/rate-limit '{"tx_rate_limiter":{"bandwidth":{"size":1}}}' || return 1
	api_expect 404 GET vm.net/1/rate-limit || return 1
	api_expect 405 GET vm.shutdown || return 1
	api_expect 204 PUT vm.pause || return 1
	api_expect 200 GET vm.info || return 1
	[ "$(echo "$API_BODY" | jq -r .state)" = Paused ] || { fail "info while paused: $API_BODY"; return 1; }
	api_expect 409 PUT vm.pause || return 1
	api_expect 204 PUT vm.resume || return 1
	api_expect 409 PUT vm.resume || return 1
	api_expect 501 PUT vm.reboot || return 1
	echo "$API_BODY" | grep -q 'does not restart a VM in place' || { fail "reboot: $API_BODY"; return 1; }
	api_expect 200 GET vm.net/0/counters || return 1
	[ "$(echo "$API_BODY" | jq -r '.queues[0].queue')" = 0 ] || { fail "device counters: $API_BODY"; return 1; }
	ip netns exec "$NS" ping -c 3 -i 0.2 -W 2 10.0.0.2 > /dev/null 2>&1 ||
		{ fail "the guest does not answer after the resume"; return 1; }
	api_expect 204 PUT vm.shutdown || return 1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_line "stopped through the API \(vm.shutdown\)" "$OUT" || return 1
	[ ! -e "$API_SOCK" ] || { fail "the socket is still there after the exit"; return 1; }
	expect_no_line "SIGSYS|Bad system call" "$OUT"
}

# counter FIELD: the sum of a per-queue counter of net0 over its queues
# (from vm.counters).
counter() {
	api GET vm.counters
	echo "$API_BODY" | jq "[.net[0].queues[].$1] | add"
}

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# Pause in the middle of an echo at full rate, numbered datagrams in four
# flows, 64 in flight: while paused no counter moves; after the resume
# every datagram comes back once, in order per flow, none lost or corrupt.
t_api_pause_under_traffic_then_resume_loses_nothing() {
	API_SOCK="$TMP_ROOT/vm.sock"
	local count res="$TMP_ROOT/api-pause.peer"
	count=$(runs_here 200000 20000)
	VM_TIMEOUT=150 net_vm_start api-pause "test=net-echo secs=120" --net tap=t0 --api-socket "$API_SOCK" ||
		return 1
	peer echo-check --dst 10.0.0.2 --port 5001 --count "$count" --sizes 60-1514 --flows 4 --window 64 \
		--wait-ms 3000 --loss-ms 30000 --timeout-ms 100000 > "$res" 2>&1 &
	local peer_pid=$! tx=0 i
	for i in $(seq 1 600); do
		tx=$(counter tx_frames)
		[ "$tx" -ge $((count / 10)) ] && break
		sleep 0.05
	done
	api_expect 204 PUT vm.pause || { kill "$peer_pid"; return 1; }
	local at_pause rx_at_pause later rx_later
	at_pause=$(counter tx_frames); rx_at_pause=$(counter rx_frames)
	sleep 1
	later=$(counter tx_frames); rx_later=$(counter rx_frames)
	api_expect 204 PUT vm.resume || { kill "$peer_pid"; return 1; }
	wait "$peer_pid"
	local peer_rc=$?
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	echo "paused at tx_frames $at_pause of $count; echo: $(tr '\n' ' ' < "$res")"
	[ "$at_pause" -ge $((count / 10)) ] && [ "$at_pause" -lt "$count" ] ||
		{ fail "the pause was not in the middle of the traffic: tx_frames $at_pause of $count"; return 1; }
	[ "$later" = "$at_pause" ] && [ "$rx_later" = "$rx_at_pause" ] ||
		{ fail "frames moved while paused: tx $at_pause -> $later, rx $rx_at_pause -> $rx_later"; return 1; }
	[ $peer_rc = 0 ] || { fail "echo-check: $(tr '\n' ' ' < "$res")"; return 1; }
	[ "$(value received "$res")" = "$count" ] && [ "$(value lost "$res")" = 0 ] &&
		[ "$(value corrupt "$res")" = 0 ] && [ "$(value duplicates "$res")" = 0 ] &&
		[ "$(value reordered "$res")" = 0 ] ||
		{ fail "not every datagram once and in order: $(tr '\n' ' ' < "$res")"; return 1; }
	expect_rc 0 "$OUT" || return 1
	expect_no_line "SIGSYS|Bad system call" "$OUT"
}

# The link set down: the guest answers nothing, vm.net/0/link and the
# counters say so; set up again, it answers.
t_api_link_set_down_and_up() {
	API_SOCK="$TMP_ROOT/vm.sock"
	net_vm_start api-link "test=net-echo secs=60" --net tap=t0 --api-socket "$API_SOCK" || return 1
	ip netns exec "$NS" ping -c 2 -i 0.2 -W 2 10.0.0.2 > /dev/null 2>&1 ||
		{ fail "the guest does not answer at the start"; return 1; }
	api_expect 204 PUT vm.net/0/link '{"up":false}' || return 1
	api_expect 200 GET vm.net/0/link || return 1
	[ "$API_BODY" = '{"up":false,"set_down":true}' ] || { fail "link while down: $API_BODY"; return 1; }
	api_expect 200 GET vm.net/0/counters || return 1
	[ "$(echo "$API_BODY" | jq -c '[.link_up, .link_set_down]')" = '[false,true]' ] ||
		{ fail "counters while down: $API_BODY"; return 1; }
	api_expect 409 PUT vm.net/0/link '{"up":false}' || return 1
	api_expect 400 PUT vm.net/0/link '{"up":"no"}' || return 1
	if ip netns exec "$NS" ping -c 3 -i 0.2 -W 1 10.0.0.2 > /dev/null 2>&1; then
		fail "the guest answered with its link set down"; return 1
	fi
	api_expect 204 PUT vm.net/0/link '{"up":true}' || return 1
	api_expect 200 GET vm.net/0/link || return 1
	[ "$API_BODY" = '{"up":true,"set_down":false}' ] || { fail "link once up: $API_BODY"; return 1; }
	ip netns exec "$NS" ping -c 3 -i 0.2 -W 2 10.0.0.2 > /dev/null 2>&1 ||
		{ fail "the guest does not answer once the link is up again"; return 1; }
	api_expect 204 PUT vm.shutdown || return 1
	net_vm_wait
	expect_rc 0 "$OUT"
}

# A live rate change is felt within 100 ms: the guest's echo held to two
# datagrams a second, then the limit lifted: within 100 ms of the PUT's
# answer more than twenty have gone (at the old rate: none); then held
# again: in the next second at most the bucket's two and what was in
# flight. One Python process makes the requests and reads its own clock,
# so no process start lies between the change and the reading.
t_api_rate_change_takes_effect_within_100ms() {
	API_SOCK="$TMP_ROOT/vm.sock"
	local res="$TMP_ROOT/api-rate.peer" meas="$TMP_ROOT/api-rate.meas"
	VM_TIMEOUT=120 net_vm_start api-rate "test=net-echo secs=90" --net tap=t0,tx-ops=2/1000 \
		--api-socket "$API_SOCK" || return 1
	peer echo-check --dst 10.0.0.2 --port 5001 --count 100000000 --sizes 60-1514 --window 32 \
		--wait-ms 3000 --loss-ms 60000 --timeout-ms 60000 > "$res" 2>&1 &
	local peer_pid=$!
	sleep 2
	python3 - "$API_SOCK" > "$meas" 2>&1 <<'PY'
import http.client, json, socket, sys, time

class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])

def call(method, ep, body=None):
    c = Unix("localhost")
    c.request(method, "/api/v1/" + ep, body=body)
    r = c.getresponse()
    data = r.read()
    c.close()
    assert r.status in (200, 204), (ep, r.status, data)
    return data

def tx():
    return sum(q["tx_frames"] for q in json.loads(call("GET", "vm.net/0/counters"))["queues"])

a = tx(); time.sleep(1); b = tx()
held = b - a
print("held: %d frames in 1 s" % held)
call("PUT", "vm.net/0/rate-limit", '{"tx_rate_limiter":{}}')
t0 = time.monotonic()
seen = None
while time.monotonic() - t0 < 1:
    n = tx()
    if n - b > 20:
        seen = (time.monotonic() - t0) * 1000
        break
print("lifted: %d frames %s" % (n - b, "%.0f ms after the PUT answered" % seen if seen else "in 1 s"))
call("PUT", "vm.net/0/rate-limit", '{"tx_rate_limiter":{"ops":{"size":2,"refill_time":1000}}}')
time.sleep(0.5)
c = tx(); time.sleep(1); d = tx()
print("held again: %d frames in 1 s" % (d - c))
ok = held <= 4 and seen is not None and seen <= 100 and d - c <= 4
print("result=" + ("ok" if ok else "fail"))
PY
	kill "$peer_pid" 2> /dev/null; wait "$peer_pid" 2> /dev/null
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1
	net_vm_wait
	tr '\n' ' ' < "$meas"; echo
	grep -q '^result=ok' "$meas" || { fail "$(tr '\n' ' ' < "$meas")"; return 1; }
	expect_rc 0 "$OUT"
}

# --api-socket-group: the socket is the group's too (mode 0660), looked up
# by name; members connect, vm.shutdown still ends the run with status 0.
t_api_socket_group_shares_the_socket() {
	API_SOCK="$TMP_ROOT/group.sock"
	local out="$TMP_ROOT/api-group.out" i
	timeout -k 5 60 "$MINIVMM" --kernel "$TESTGUEST" --cmdline "test=spin" --api-socket "$API_SOCK" \
		--api-socket-group adm < /dev/null > "$out" 2>&1 &
	local pid=$!
	for i in $(seq 1 200); do [ -S "$API_SOCK" ] && break; sleep 0.05; done
	[ "$(stat -c '%a %G' "$API_SOCK" 2> /dev/null)" = "660 adm" ] ||
		{ kill "$pid"; fail "socket: $(stat -c '%a %G' "$API_SOCK" 2>&1); minivmm: $(tr '\n' '|' < "$out")"; return 1; }
	api_expect 200 GET vmm.ping || { kill "$pid"; return 1; }
	api_expect 204 PUT vm.shutdown || { kill "$pid"; return 1; }
	wait "$pid"
	rc=$?
	expect_rc 0 "$out" || return 1
	[ ! -e "$API_SOCK" ] || { fail "the socket is still there after the exit"; return 1; }
}

t_api_socket_path_that_exists_is_refused() {
	local out="$TMP_ROOT/api-exists.out"
	: > "$TMP_ROOT/taken"
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=spin" --api-socket "$TMP_ROOT/taken"
	expect_rc 2 "$out" || return 1
	expect_line "^minivmm: --api-socket .*taken: it exists \(remove a stale one\)" "$out" || return 1
	[ "$(wc -l < "$out")" = 1 ] || { fail "more than one line: $(tr '\n' '|' < "$out")"; return 1; }
	[ -f "$TMP_ROOT/taken" ] || { fail "the file was removed"; return 1; }
}
