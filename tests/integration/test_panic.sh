# SPDX-License-Identifier: Apache-2.0
# A guest's panic and a guest that runs too long: the pvpanic device (port
# 0x505, MMIO 0xd0008000) stops minivmm with status 10, --timeout with 12,
# each with one line; a reset after the panic does not turn it into 0.

# panic_run OUT ARGS...: the test guest's test=panic with ARGS on its cmdline.
panic_run() {
	local out=$1; shift
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=panic $*" < /dev/null
}

# One line from minivmm about the stop, nothing about the reset after it.
expect_one_panic_line() {
	local want=$1 out=$2
	[ "$(grep -c '^minivmm: guest panicked' "$out")" = 1 ] ||
		{ fail "not one 'guest panicked' line: $(grep '^minivmm:' "$out" | tr '\n' '|')"; return 1; }
	expect_line "^minivmm: $want \(exit status 10\)$" "$out" &&
		expect_no_line "i8042|exit status 0" "$out"
}

t_pvpanic_port_panicked_exits_10() {
	local out="$TMP_ROOT/panic-port.out"
	panic_run "$out"
	expect_rc 10 "$out" &&
		expect_line "^testguest: pvpanic via port offers 0x3, writing 0x1$" "$out" &&
		expect_one_panic_line "guest panicked \(pvpanic\)" "$out"
}

t_pvpanic_mmio_panicked_exits_10() {
	local out="$TMP_ROOT/panic-mmio.out"
	panic_run "$out" via=mmio
	expect_rc 10 "$out" &&
		expect_line "^testguest: pvpanic via mmio offers 0x3, writing 0x1$" "$out" &&
		expect_one_panic_line "guest panicked \(pvpanic\)" "$out"
}

t_pvpanic_crash_loaded_exits_10() {
	local out="$TMP_ROOT/panic-crash.out"
	panic_run "$out" event=2
	expect_rc 10 "$out" &&
		expect_one_panic_line "guest panicked \(pvpanic: crash kernel loaded\)" "$out"
}

# Bits the device does not offer (a newer Linux's PVPANIC_SHUTDOWN, 4) stop
# nothing: the guest's reset after them ends the VM with 0.
t_pvpanic_other_events_are_ignored() {
	local out="$TMP_ROOT/panic-other.out" via
	for via in port mmio; do
		panic_run "$out" via=$via event=4
		expect_rc 0 "$out" && expect_line "writing 0x4$" "$out" &&
			expect_no_line "guest panicked" "$out" || return 1
	done
}

# The port is there whatever --acpi and --irqchip say.
t_pvpanic_without_acpi_and_kernel_irqchip() {
	local out="$TMP_ROOT/panic-noacpi.out"
	run_vm "$out" --kernel "$TESTGUEST" --acpi=off --irqchip=kernel --cmdline "test=panic" < /dev/null
	expect_rc 10 "$out" && expect_one_panic_line "guest panicked \(pvpanic\)" "$out"
}

t_timeout_stops_a_spinning_guest_with_12() {
	local out="$TMP_ROOT/timeout.out" t0 t1 ms
	t0=$(date +%s%N)
	run_vm "$out" --kernel "$TESTGUEST" --cpus 2 --timeout 1 --cmdline "test=spin" < /dev/null
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	expect_rc 12 "$out" && expect_line "^testguest: spinning" "$out" &&
		expect_line "^minivmm: guest still running after 1 s \(--timeout\) \(exit status 12\)$" "$out" || return 1
	[ "$(grep -c '^minivmm: guest still running' "$out")" = 1 ] || { fail "not one timeout line"; return 1; }
	# Counted from the vCPUs' start: at least the second, and not much more.
	[ "$ms" -ge 1000 ] && [ "$ms" -lt 2500 ] || fail "minivmm ended after $ms ms, expected 1000 to 2500"
}

# A guest that ends first is not touched by the limit.
t_timeout_leaves_a_guest_that_ends_alone() {
	local out="$TMP_ROOT/timeout-ok.out"
	run_vm "$out" --kernel "$TESTGUEST" --timeout 30 --cmdline "test=hello" < /dev/null
	expect_rc 0 "$out" && expect_no_line "still running" "$out" || return 1
	run_vm "$out" --kernel "$TESTGUEST" --timeout 30 --cmdline "test=panic" < /dev/null
	expect_rc 10 "$out"
}
