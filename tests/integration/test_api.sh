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
	ip netns exec "$NS" ping -c 3 -i 0.2 -W 2 10.0.0.2 > /dev/null 2>&1 ||
		{ fail "the guest does not answer after the resume"; return 1; }
	api_expect 204 PUT vm.shutdown || return 1
	net_vm_wait
	expect_rc 0 "$OUT" || return 1
	expect_line "stopped through the API \(vm.shutdown\)" "$OUT" || return 1
	[ ! -e "$API_SOCK" ] || { fail "the socket is still there after the exit"; return 1; }
	expect_no_line "SIGSYS|Bad system call" "$OUT"
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
