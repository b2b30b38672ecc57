# SPDX-License-Identifier: Apache-2.0
# Hostile guests: the test guest breaks the virtio rules on purpose
# (test=net-hostile kind=K, guest-images/testguest/hostile*.c), over every
# backend and engine (hostile_lib.sh: tap, packet rx=ring/recv and xdp, each
# with io_uring and epoll). The rule under test: a misbehaving guest never
# crashes, hangs or spins the VMM or makes it touch memory outside the
# guest; the device reports DEVICE_NEEDS_RESET (or drops just that request),
# says so in a few rate-limited lines, and carries traffic again once the
# guest has reset it. Each test
#
#   - boots the guest; once it prints `hostile K armed` the host sends UDP
#     at it (a permanent neighbour entry stands in for the ARP it will not
#     answer) and the CPU time of minivmm's net0-* threads is sampled,
#   - until the guest's `hostile K -> needs-reset|no-needs-reset` line:
#     the device must have said NEEDS_RESET where the kind requires it, and
#     the workers must have used at most 10% of a core meanwhile,
#   - then minivmm must still run, the host must ping the guest with 0% loss
#     and echo-check 200 datagrams through it intact, and minivmm must exit
#     0 without a sanitizer report, a CHECK FAILED line from the guest, or
#     more than a few complaint lines.
#
# Under `make san-test` (BUILD=build-san) the same tests run against the
# ASan/UBSan build. Test names: t_hostile_<kind>_<variant>.

. tests/integration/hostile_lib.sh

HOSTILE_CPU_LIMIT=0.10     # cores the workers may use while the guest misbehaves
# Under emulated KVM (tests/with-kvm.sh) every step of the workers costs 5-10x
# more CPU (0.14-0.20 of a core was seen for honest work); a spin still takes
# the whole core for the whole window, so 0.40 keeps telling the two apart.
[ -z "${MINIVMM_EMULATED_KVM:-}" ] || HOSTILE_CPU_LIMIT=0.40

# One entry per kind: test name, NEEDS_RESET required (1) or optional (0),
# host datagrams per second during the hostile phase (0: as fast as it
# goes), flags, then the guest's words. Flags: cpu = the workers' CPU time
# is bounded (not for a legitimate full-rate load); traffic = the host's
# datagrams are part of the attack: unless the device reported NEEDS_RESET
# at once, the host must have seen the armed line while the hostile phase
# still ran; mq = the device has two queue pairs (--net ...,queues=2), so it
# offers MQ and the guest negotiates it.
HOSTILE_KINDS=(
	"desc_outside_ram          1 1000 cpu         kind=desc-outside-ram"
	"desc_overflow             1 1000 cpu         kind=desc-overflow"
	"desc_loop                 1 1000 cpu         kind=desc-loop"
	"chain_too_long            1 1000 cpu         kind=chain-too-long"
	"avail_jump                1 1000 cpu         kind=avail-jump"
	"head_out_of_range         1 1000 cpu         kind=head-out-of-range"
	"bad_indirect              1 1000 cpu         kind=bad-indirect"
	"ring_outside_ram          1 1000 cpu         kind=ring-outside-ram"
	"mmio_garbage              0 1000 cpu         kind=mmio-garbage wait-ms=300"
	# The same garbage, but Status bits are only ever added (or all cleared
	# by a reset), so DRIVER_OK is never taken back without a reset.
	"mmio_garbage_keep_status  0 1000 cpu         kind=mmio-garbage keep-status=1 seed=7 iters=8000 wait-ms=300"
	"driver_ok_twice           0 1000 cpu         kind=driver-ok-twice wait-ms=300"
	"rx_heads_in_flight        1 1000 cpu,traffic kind=rx-heads-in-flight"
	"rx_one_byte_segs          0 1000 cpu,traffic kind=rx-one-byte-segs wait-ms=1000"
	"rx_read_only              0 1000 cpu,traffic kind=rx-read-only wait-ms=1000"
	"rx_small                  0 1000 cpu,traffic kind=rx-small wait-ms=1000"
	"ctrl_garbage              0 1000 cpu,mq      kind=ctrl-garbage"
	"reset_under_load          0 0    traffic     kind=reset-under-load cycles=20 cycle-ms=30"
)

# hostile_kind_checks TEST NR_SEEN VARIANT: what a kind checks beyond the
# common part.
hostile_kind_checks() {
	local test=$1 nr_seen=$2 variant=$3
	case $test in
	rx_heads_in_flight)
		# The hostile bring-up took GUEST_CSUM (and GSO), the ordinary one
		# after the reset does not: frames the backend still held from
		# before must not reach the guest with NEEDS_CSUM. (rx=recv does
		# that for every frame: t_packet_rx_full_checksums_without_guest_csum.)
		[[ $variant == pkt_recv_* ]] ||
			expect_line "^testguest: net-hostile done .* partial-csum 0$" "$CLEAN" || return 1 ;;
	rx_one_byte_segs)
		# Frames that fit no chain are dropped and counted (or the device
		# gave up on the ring).
		[ "$nr_seen" = 1 ] || stats_check "$OUT" '
check(q[0]["rx_dropped"] >= 1, "rx_dropped %d: frames that fit no 64-byte chain were not counted as dropped" % q[0]["rx_dropped"])
' || return 1 ;;
	ctrl_garbage)
		expect_line "^testguest: hostile ctrl-garbage commands [0-9]+ .* no-answer 0 " "$CLEAN" || return 1 ;;
	reset_under_load)
		expect_line "^testguest: hostile reset-under-load cycles [0-9]+ tx [1-9][0-9]* rx [1-9][0-9]* needs-reset 0 late-writes 0$" "$CLEAN" || return 1 ;;
	esac
	return 0
}

# hostile_run TEST NR RATE FLAGS WORDS VARIANT
hostile_run() {
	local test=$1 want_nr=$2 rate=$3 flags=",$4," words=$5 variant=$6
	local name="hostile-$test-$variant" start=$SECONDS guestkind result nr_seen=0 w
	guestkind=$(sed -nE 's/.*kind=([a-z-]+).*/\1/p' <<< "$words")
	declare -F peer > /dev/null || { fail "test_net.sh not sourced (peer)"; return 1; }
	local extra=
	[[ $flags == *,mq,* ]] && extra=",queues=2"
	HV_NET_EXTRA=$extra VM_TIMEOUT=40 hv_boot "$name" "$variant" "test=net-hostile secs=20 $words" \
		"^testguest: hostile $guestkind armed" --stats=json || return 1

	# The hostile phase: host traffic, the workers' CPU time.
	# A kind the device must see traffic for cannot be judged if its phase
	# ended (without NEEDS_RESET) before the host even saw it start.
	if [[ $flags == *,traffic,* ]] && hv_grep "^testguest: hostile $guestkind -> no-needs-reset"; then
		fail "[$NET_OPT] the host saw the 'armed' line only after the hostile phase was over (no traffic, no CPU figures): the machine is too loaded for this test"
		return 1
	fi
	hv_sampler_mark
	hv_blast_start "$rate"
	hv_wait_line "^testguest: hostile $guestkind -> " 15
	w=$?
	hv_blast_stop
	hv_sampler_stop
	[ -n "${HOSTILE_ARTIFACTS:-}" ] && mkdir -p "$HOSTILE_ARTIFACTS" &&
		echo "$test $variant $CPU_LINE" >> "$HOSTILE_ARTIFACTS/cpu.log"
	case $w in
	1) hv_hung "in the hostile phase (no '-> needs-reset' line); workers: $CPU_LINE"; return 1 ;;
	2) hv_died "in the hostile phase"; return 1 ;;
	esac
	hv_clean
	result=$(grep -E -m1 "^testguest: hostile $guestkind -> " "$CLEAN")
	[[ $result == *"-> needs-reset"* ]] && nr_seen=1
	kill -0 "$VMM_PID" 2> /dev/null || { hv_died "right after the hostile phase"; return 1; }

	# Recovery.
	hv_wait_line "^testguest: net-hostile ready" 10
	case $? in
	1) hv_hung "resetting or bringing the device up again"; return 1 ;;
	2) hv_died "before the traffic part"; return 1 ;;
	esac
	local recovered=1
	hv_recovered "after the reset" || recovered=0
	peer stop --dst 10.0.0.2 --port 5001 > /dev/null 2>&1 &
	local stopper=$!
	hv_wait_exit 10 || return 1
	kill "$stopper" 2> /dev/null
	wait "$stopper" 2> /dev/null
	# Kept again now that it has the guest's counters and --stats=json.
	[ $recovered = 1 ] || { hv_keep "$OUT"; return 1; }

	# Verdict.
	local fails
	hv_clean
	fails=$(grep -E "^testguest: hostile .*CHECK FAILED" "$CLEAN" | head -3 | tr '\n' '|')
	[ -z "$fails" ] || { hv_keep "$OUT"; fail "[$NET_OPT] the guest's checks failed: $fails"; return 1; }
	hv_san_ok || return 1
	if [ "$want_nr" = 1 ] && [ $nr_seen = 0 ]; then
		hv_keep "$OUT"
		fail "[$NET_OPT] no NEEDS_RESET: '$result'; $(grep -E "^testguest: hostile $guestkind (armed|used)" "$CLEAN" | tr '\n' '|')"
		return 1
	fi
	if [[ $flags == *,cpu,* ]] && ! hv_cpu_ok "$HOSTILE_CPU_LIMIT"; then
		hv_keep "$OUT"
		fail "[$NET_OPT] the workers spun while the guest misbehaved (limit $HOSTILE_CPU_LIMIT of a core + $(hv_start_cpu) s per worker start): $CPU_LINE"
		return 1
	fi
	hostile_kind_checks "$test" "$nr_seen" "$variant" ||
		{ hv_keep "$OUT"; fail "[$NET_OPT] $(cat "$TMP_ROOT/.reason")"; return 1; }
	expect_line "^testguest: hostile $guestkind reset -> status 0x0" "$CLEAN" &&
		expect_line "^testguest: net-hostile done kind $guestkind frames [1-9]" "$CLEAN" ||
		{ hv_keep "$OUT"; return 1; }
	hv_log_ok $((SECONDS - start + 1)) "$want_nr" || { hv_keep "$OUT"; return 1; }
	expect_rc 0 "$OUT" || { hv_keep "$OUT"; fail "[$NET_OPT] $(cat "$TMP_ROOT/.reason")"; return 1; }
}

# With NET_EXTRA (make uring-variants-test: io_uring options on every --net)
# only the io_uring variants run: the options change nothing under epoll.
_variants=$HOSTILE_VARIANTS
[ -z "${NET_EXTRA:-}" ] || _variants=$(tr ' ' '\n' <<< "$HOSTILE_VARIANTS" | grep uring | tr '\n' ' ')
for _spec in "${HOSTILE_KINDS[@]}"; do
	read -r _test _nr _rate _flags _words <<< "$_spec"
	for _v in $_variants; do
		eval "t_hostile_${_test}_${_v}() { hostile_run $_test $_nr $_rate $_flags '$_words' $_v; }"
	done
done
unset _spec _test _nr _rate _flags _words _v _variants
