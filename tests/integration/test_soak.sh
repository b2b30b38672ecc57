# SPDX-License-Identifier: Apache-2.0
# A short soak (tests/soak/soak.sh, docs/soak.md): the test guest's
# net-duplex on two queue pairs of a tap, both directions at full rate for
# 3 s, every frame delivered or dropped at a named place outside the VMM,
# every hop's counters in agreement. `make soak` runs every backend and
# engine for minutes; this keeps the guest mode and the accounting honest.
t_soak_short_tap_uring_accounts_for_every_frame() {
	local out="$TMP_ROOT/soak.out"
	BUILD=$BUILD SOAK_SECS=3 SOAK_OUT="$TMP_ROOT/soak" tests/soak/soak.sh tap-uring-q2 > "$out" 2>&1 ||
		{ fail "soak failed: $(grep -E '^FAIL|^soak:' "$out" | head -4 | tr '\n' ' ')"; return 1; }
	expect_line "^  result: PASS$" "$out" || return 1
	expect_line "^  host -> guest +[0-9]+ +[1-9][0-9]* " "$out" || return 1
	expect_line "^  guest -> host +[0-9]+ +[1-9][0-9]* " "$out"
}

# The accounting itself, without a VM: recorded runs, and the same runs with
# one counter changed as a VMM that loses or damages a frame would change it.
t_soak_accounting_catches_loss_and_damage() {
	local out="$TMP_ROOT/account_test.out"
	python3 tests/soak/account_test.py > "$out" 2>&1 ||
		{ fail "tests/soak/account_test.py: $(grep -E '^(FAIL|ERROR):' "$out" | head -3 | tr '\n' ' ')"; return 1; }
}
