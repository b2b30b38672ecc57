# SPDX-License-Identifier: Apache-2.0
# Booting the test guest: vCPUs, exit codes, serial, crashes.

boot_smp() {
	local n=$1; shift
	local out="$TMP_ROOT/smp$n.out"
	run_vm "$out" --kernel "$TESTGUEST" --cpus "$n" --cmdline "test=smp" "$@" < /dev/null
	expect_rc 0 "$out" || return 1
	expect_line "all $n vCPUs up" "$out" || return 1
	expect_line "CPUID APIC IDs match the LAPIC on all $n vCPUs" "$out" || return 1
	# The IOAPIC's ID register reads what the MP table says: the first
	# ID after the CPUs' up to 14 vCPUs, 0 from 15 on (4 bits, 0xf broadcast).
	local ioapic_id=$(( n <= 14 ? n : 0 ))
	expect_line "IOAPIC ID $ioapic_id in its register and the MP table" "$out" || return 1
	local i
	for ((i = 0; i < n; i++)); do
		expect_line "cpu $i up" "$out" || return 1
	done
	expect_line "boot time: [0-9.]+ ms" "$out"
}

t_boot_1_vcpu() { boot_smp 1; }
t_boot_2_vcpus() { boot_smp 2; }
t_boot_4_vcpus() { boot_smp 4; }
t_boot_16_vcpus() { boot_smp 16; }
# The default irqchip is split: INIT/SIPI stay in KVM's LAPICs, the IOAPIC
# and the PIT are minivmm's (devices/ioapic.c, pit.c). KVM's whole irqchip
# on request.
t_boot_16_vcpus_kernel_irqchip() { boot_smp 16 --irqchip=kernel; }
t_boot_4_vcpus_kernel_irqchip() { boot_smp 4 --irqchip=kernel; }

# The PIT counts in real time with either irqchip (KVM's, or minivmm's
# under a split one): the TSC rate the guest measures against channel 0
# (latched reads) and channel 2 (port 0x61's gate and OUT2, as Linux's
# pit_calibrate_tsc) is within 2 % of the one minivmm's CPUID states.
pit_rates_match_cpuid() {
	local out="$TMP_ROOT/pit.out" line cpuid ch0 ch2 ch
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=pit" "$@" < /dev/null
	expect_rc 0 "$out" || return 1
	line=$(grep -E "testguest: tsc khz cpuid [0-9]+ pit-ch0 [0-9]+ pit-ch2 [0-9]+" "$out") ||
		{ fail "no rates line; output: $(tail -c 600 "$out" | tr '\n' '|')"; return 1; }
	read -r cpuid ch0 ch2 < <(echo "$line" | awk '{print $5, $7, $9}')
	[ "$cpuid" -gt 0 ] || { fail "CPUID states no TSC rate: $line"; return 1; }
	for ch in "$ch0" "$ch2"; do
		[ $(( (ch > cpuid ? ch - cpuid : cpuid - ch) * 100 )) -le $(( 2 * cpuid )) ] ||
			{ fail "a PIT-measured rate is more than 2 % off CPUID's: $line $*"; return 1; }
	done
}

t_pit_counts_in_real_time_kernel_irqchip() {
	pit_rates_match_cpuid --irqchip=kernel || return 1
	expect_no_line "raises no IRQ0" "$TMP_ROOT/pit.out"
}

# Nothing raises IRQ0 from minivmm's PIT: said once, when channel 0 starts.
t_pit_counts_in_real_time_split_irqchip() {
	pit_rates_match_cpuid || return 1
	[ "$(grep -c "PIT: channel 0 counts but raises no IRQ0" "$TMP_ROOT/pit.out")" = 1 ] ||
		{ fail "the missing IRQ0 is not said exactly once"; return 1; }
}

t_hello_resets_with_status_0() {
	local out="$TMP_ROOT/hello.out"
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=hello" < /dev/null
	expect_rc 0 "$out" && expect_line "hello from minivmm test guest" "$out" &&
		expect_line "reset through the i8042" "$out"
}

t_debug_exit_code_passes_through() {
	local out="$TMP_ROOT/exit.out" code
	for code in 0 5 42; do
		run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=exit code=$code" < /dev/null
		expect_rc $(((code << 1) | 1)) "$out" || return 1
	done
}

t_serial_input_reaches_guest() {
	local out="$TMP_ROOT/echo.out" fifo="$TMP_ROOT/input.fifo"
	mkfifo "$fifo"
	# Type only once the guest asks: its UART setup clears the receive
	# FIFO, as on real hardware, so earlier input would be dropped.
	(
		for _ in $(seq 100); do
			grep -q "ready for input" "$out" 2>/dev/null && break
			sleep 0.1
		done
		printf 'hello from the host\n'
		sleep 5
	) > "$fifo" &
	local writer=$!
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=serial-echo" < "$fifo"
	kill "$writer" 2>/dev/null
	wait
	expect_rc 0 "$out" && expect_line "got 'hello from the host'" "$out"
}

t_triple_fault_is_reported() {
	local out="$TMP_ROOT/tf.out"
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=triple-fault" < /dev/null
	expect_rc 4 "$out" && expect_line "guest crashed: vCPU 0: guest triple fault" "$out" &&
		expect_line "rip=0x" "$out"
}

t_guest_exception_is_reported() {
	local out="$TMP_ROOT/fault.out"
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=fault" < /dev/null
	expect_line "exception 6 at rip" "$out" || return 1
	if [ "$rc" = 0 ] || [ $((rc & 1)) != 1 ]; then
		fail "exit status $rc, expected an odd debug-exit status"
	fi
}

# The console buffers guest output until a newline (devices/serial.c) and KVM
# queues transmits in its coalesced ring once a guest has printed a few
# hundred bytes: a guest's last bytes without a newline still reach the
# console when it exits or crashes, on stdio and to a file, after few
# lines (no queue) and after many (queued), every line in order.
t_serial_last_bytes_survive_exit_and_crash() {
	local out="$TMP_ROOT/last.out" file="$TMP_ROOT/last.txt" test want
	for test in "exit code=3 partial=1" "triple-fault partial=1" \
		    "exit code=3 lines=40 partial=1" "triple-fault lines=40 partial=1"; do
		run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=$test" < /dev/null
		expect_line "testguest: last bytes, no newline" "$out" || return 1
		if [[ $test == *lines=40* ]]; then
			want=$(seq 1 40 | sed 's/.*/testguest: line & of 40/')
			[ "$(grep '^testguest: line ' "$out")" = "$want" ] ||
				{ fail "test=$test: the 40 numbered lines are not all there in order"; return 1; }
		fi
		run_vm "$out" --kernel "$TESTGUEST" --serial "file:$file" --cmdline "test=$test" < /dev/null
		want="testguest: last bytes, no newline"
		[ "$(tail -c ${#want} "$file")" = "$want" ] ||
			{ fail "test=$test: $file ends with '$(tail -c 40 "$file")', expected '$want'"; return 1; }
	done
}

t_serial_to_file_and_none() {
	local out="$TMP_ROOT/none.out" file="$TMP_ROOT/console.txt"
	run_vm "$out" --kernel "$TESTGUEST" --serial "file:$file" --cmdline "test=hello" < /dev/null
	expect_rc 0 "$out" && expect_line "hello from minivmm test guest" "$file" &&
		expect_no_line "hello from minivmm" "$out" || return 1
	run_vm "$out" --kernel "$TESTGUEST" --serial none --cmdline "test=hello" < /dev/null
	expect_rc 0 "$out" && expect_no_line "hello from minivmm" "$out"
}

t_sigterm_stops_cleanly() {
	local out="$TMP_ROOT/term.out"
	# serial-echo waits for input forever; SIGTERM must end it cleanly.
	( sleep 1; pkill -TERM -f "minivmm --kernel $TESTGUEST --cmdline test=serial-echo" ) &
	# Input that stays open but never sends anything.
	mkfifo "$TMP_ROOT/never"
	sleep 30 > "$TMP_ROOT/never" &
	local writer=$!
	run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=serial-echo" < "$TMP_ROOT/never"
	kill "$writer" 2>/dev/null
	wait
	expect_rc 143 "$out" && expect_line "stopped by signal 15" "$out"
}

# Console bytes reach the host within milliseconds whatever the guest does
# next. After 256 quiet transmits KVM queues COM1's writes in its coalesced
# ring; a guest that prints and then polls memory makes no exit that would
# deliver them, so minivmm's serial thread drains the ring every few ms.
# The guest prints 300 lines (the queue is on), a marker without a newline
# (the deferred flush), then spins SPIN ms without an exit and says so:
# the marker must reach minivmm's stdout about SPIN ms before "spun" does
# (allowed: 50 ms late, for a loaded machine; the bound is DRAIN_MS +
# FLUSH_DELAY_MS = 9 ms).
t_console_reaches_the_host_while_the_guest_polls() {
	local spin=2000 msg
	msg=$(timeout -k 5 60 python3 - "$MINIVMM" "$TESTGUEST" "$spin" 2>&1 <<'PY'
import os, subprocess, sys, time
vmm, guest, spin = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = subprocess.Popen([vmm, '--kernel', guest, '--cmdline',
                      f'test=exit code=0 lines=300 partial=1 spin-ms={spin}'],
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
buf, t_marker, t_spun = b'', None, None
while True:
    chunk = os.read(p.stdout.fileno(), 65536)
    if not chunk:
        break
    now = time.monotonic()
    buf += chunk
    if t_marker is None and b'last bytes, no newline' in buf:
        t_marker = now
    if t_spun is None and b'testguest: spun' in buf:
        t_spun = now
rc = p.wait()
if rc != 1:   # code=0 through the debug-exit port: (0 << 1) | 1
    sys.exit(f'exit status {rc}, want 1: {buf[-400:]!r}')
if t_marker is None or t_spun is None:
    sys.exit(f'marker or spun line missing: {buf[-400:]!r}')
late = spin - (t_spun - t_marker) * 1000
print(f'marker arrived {(t_spun - t_marker) * 1000:.0f} ms before "spun" ({late:.0f} ms late)')
sys.exit(0 if late <= 50 else 1)
PY
	) || { fail "the console held bytes back while the guest polled: $msg"; return 1; }
}
