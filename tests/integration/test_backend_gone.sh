# SPDX-License-Identifier: Apache-2.0
# A host-side fault: the backend interface disappears under a running guest
# and comes back. While the guest echoes (net-echo) and the host sends, the
# test deletes the interface (the tap t0 minivmm created, or v0 of the
# packet or xdp backend's veth pair), then re-creates and configures it the way an
# operator would (`ip tuntap add t0 mode tap`, or a new veth pair). The
# contract, over every backend and engine (hostile_lib.sh):
#
#   - minivmm stays up and says so in one line naming the interface;
#   - it does not spin: its net0-* threads use under 10% of a core over
#     1 s of outage;
#   - it clears VIRTIO_NET_S_LINK_UP with a configuration-change interrupt
#     (the guest prints `testguest: link down ... config-irq 1`);
#   - once the interface is back, the link goes up again (`link up`) and
#     traffic flows (ping without loss, echo-check intact);
#   - minivmm exits 0 without a sanitizer report.
#
# Test names: t_backend_vanished_<variant>.

. tests/integration/hostile_lib.sh

BACKEND_GONE_CPU_LIMIT=0.10
# Under emulated KVM (tests/with-kvm.sh) every step of the workers costs 5-10x
# more CPU (0.14-0.20 of a core was seen for honest work); a spin still takes
# the whole core for the whole window, so 0.40 keeps telling the two apart.
[ -z "${MINIVMM_EMULATED_KVM:-}" ] || BACKEND_GONE_CPU_LIMIT=0.40

# backend_recreate IFNAME: the interface as the operator makes it again;
# what went wrong in RECREATE_ERR.
backend_recreate() {
	local e="$OUT.recreate"
	if [ "$1" = t0 ]; then
		ip -n "$NS" tuntap add t0 mode tap 2> "$e" && ip -n "$NS" addr add 10.0.0.1/24 dev t0 2>> "$e" &&
			netns_link_up "$NS" t0 2>> "$e"
	else
		hv_veth 2> "$e" && netns_link_up "$NS" v1 2>> "$e"
	fi
	local rc=$?
	RECREATE_ERR="$(tr '\n' ' ' < "$e")$(ip -n "$NS" -br link 2>&1 | tr '\n' ' ')"
	return $rc
}

# backend_wait_after OFFSET PATTERN SECONDS: a line matching PATTERN in
# what minivmm printed after byte OFFSET of $OUT (hv_wait_line's codes).
backend_wait_after() {
	local off=$1 pat=$2 secs=$3 after="$OUT.after"
	local end=$(($(hv_now) + secs * 1000000))
	while :; do
		tail -c +$((off + 1)) "$OUT" |
			perl -0777 -ne 'my @m; 1 while s/(?<=[^\n])(minivmm: [^\n]*\n)/push @m, $1; ""/e; print $_, @m' > "$after"
		grep -Eq -- "$pat" "$after" && return 0
		kill -0 "$VM_PID" 2> /dev/null || return 2
		[ "$(hv_now)" -lt "$end" ] || return 1
		sleep 0.05
	done
}

backend_gone_run() {
	local variant=$1 ifname=t0 start=$SECONDS errs=() gone back
	VM_TIMEOUT=60 hv_boot "gone-$variant" "$variant" "test=net-echo secs=50" \
		"^testguest: net-echo ready" --stats=json || return 1
	[[ $NET_OPT == packet=* || $NET_OPT == xdp=* ]] && ifname=v0
	hv_recovered "before $ifname vanished" || return 1

	# Away, with traffic from the host going on.
	hv_blast_start 1000
	sleep 0.2
	gone=$(wc -c < "$OUT")
	ip -n "$NS" link del "$ifname" || { fail "[$NET_OPT] cannot delete $ifname"; return 1; }
	sleep 0.2                         # time to notice
	hv_sampler_mark
	sleep 1
	hv_sampler_stop
	hv_blast_stop
	kill -0 "$VMM_PID" 2> /dev/null || { hv_died "after $ifname was deleted"; return 1; }
	hv_cpu_ok "$BACKEND_GONE_CPU_LIMIT" ||
		errs+=("the workers spun while $ifname was gone (limit $BACKEND_GONE_CPU_LIMIT of a core): $CPU_LINE")
	backend_wait_after "$gone" "^minivmm: net0: .*\\b$ifname\\b" 1 ||
		errs+=("no line from minivmm naming $ifname after it vanished")
	backend_wait_after "$gone" "^testguest: link down .* config-irq 1" 1 ||
		errs+=("the guest saw no link down with a configuration-change interrupt: $(tail -c +$((gone + 1)) "$OUT" | grep -E '^testguest: link' | tr '\n' '|')")

	# Back.
	back=$(wc -c < "$OUT")
	backend_recreate "$ifname" ||
		{ hv_keep "$OUT"; fail "[$NET_OPT] cannot re-create $ifname: $RECREATE_ERR"; return 1; }
	backend_wait_after "$back" "^testguest: link up" 5
	case $? in
	1) errs+=("no 'testguest: link up' within 5 s of re-creating $ifname") ;;
	2) hv_died "after $ifname came back"; return 1 ;;
	esac
	if ! hv_recovered "after $ifname came back"; then
		# The guest cannot be told to stop: say what minivmm does, end it.
		errs+=("$(cat "$TMP_ROOT/.reason")")
		hv_snapshot
		errs+=("minivmm then: $SNAPSHOT")
		kill -KILL "$VMM_PID" 2> /dev/null
		wait "$VM_PID" 2> /dev/null
		hv_keep "$OUT"
		fail "[$NET_OPT] ${errs[*]}"
		return 1
	fi
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1 &
	local stopper=$!
	hv_wait_exit 10 || { fail "[$NET_OPT] ${errs[*]:+${errs[*]}; }$(cat "$TMP_ROOT/.reason")"; return 1; }
	kill "$stopper" 2> /dev/null
	wait "$stopper" 2> /dev/null
	hv_san_ok || return 1
	[ "$rc" = 0 ] || errs+=("minivmm exit status $rc, expected 0: $(hv_tail 300)")
	hv_log_ok $((SECONDS - start + 1)) 0 || errs+=("$(cat "$TMP_ROOT/.reason")")
	if [ ${#errs[@]} -gt 0 ]; then
		hv_keep "$OUT"
		fail "[$NET_OPT] ${errs[*]}"
		return 1
	fi
}

for _v in $HOSTILE_VARIANTS; do
	eval "t_backend_vanished_${_v}() { backend_gone_run $_v; }"
done
unset _v
