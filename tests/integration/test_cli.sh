# SPDX-License-Identifier: Apache-2.0
# Bad input: one line naming the problem, exit status 2.

. tests/integration/netns.sh

# cli_refuses PATTERN ARGS...
cli_refuses() {
	local want=$1; shift
	local out="$TMP_ROOT/cli.out"
	run_vm "$out" "$@" < /dev/null
	expect_rc 2 "$out" || return 1
	expect_line "$want" "$out" || return 1
	local lines
	lines=$(wc -l < "$out")
	[ "$lines" -eq 1 ] || fail "expected one line of error, got $lines: $(tr '\n' '|' < "$out")"
}

t_cli_rejects_bad_input() {
	local junk="$TMP_ROOT/junk.bin" trunc="$TMP_ROOT/trunc.bin"
	head -c 4096 /dev/urandom > "$junk"
	head -c 1200 "$TESTGUEST" > "$trunc"
	cli_refuses "unknown option '--bogus'" --bogus || return 1
	cli_refuses "--kernel PATH is required" --cpus 2 || return 1
	cli_refuses "--cpus: 'zero' is not a number" --kernel "$TESTGUEST" --cpus zero || return 1
	cli_refuses "--cpus: '0' is not a number" --kernel "$TESTGUEST" --cpus 0 || return 1
	cli_refuses "--cpus: '65' is not a number" --kernel "$TESTGUEST" --cpus 65 || return 1
	cli_refuses "--mem: '1x' is not a size" --kernel "$TESTGUEST" --mem 1x || return 1
	cli_refuses "--mem: '3M' must be at least 16M" --kernel "$TESTGUEST" --mem 3M || return 1
	cli_refuses "--serial: 'tty' is not one of" --kernel "$TESTGUEST" --serial tty || return 1
	cli_refuses "--irqchip: 'off' is not kernel or split" --kernel "$TESTGUEST" --irqchip off || return 1
	cli_refuses "--kernel needs a value" --kernel || return 1
	cli_refuses "cannot open kernel '/nonexistent'" --kernel /nonexistent || return 1
	cli_refuses "cannot open initrd '/nonexistent'" --kernel "$TESTGUEST" --initrd /nonexistent || return 1
	cli_refuses "not a bzImage or ELF kernel" --kernel "$junk" || return 1
	cli_refuses "$trunc" --kernel "$trunc" || return 1
	cli_refuses "unexpected argument 'extra'" --kernel "$TESTGUEST" extra || return 1
	cli_refuses "--stats-interval needs --stats-file" --kernel "$TESTGUEST" --stats-interval 5 || return 1
	cli_refuses "--stats-file '$TMP_ROOT/no/such/dir': cannot open: No such file or directory" \
		--kernel "$TESTGUEST" --stats-file "$TMP_ROOT/no/such/dir"
}

# A huge file is refused on its header or size, not after reading it all:
# a 100 GiB sparse "kernel" took 34 s (and grew the page cache by 12 GB)
# to be called no kernel, an 8 GiB initrd 16 s to "does not fit".
t_cli_huge_kernel_or_initrd_refused_without_reading_it() {
	cli_huge_files_refused
	local r=$?
	rm -f "$TMP_ROOT/huge.bin"   # sparse, but a build that reads it fills a tmpfs
	return $r
}
cli_huge_files_refused() {
	local big="$TMP_ROOT/huge.bin" t0 secs
	truncate -s 100G "$big" || { fail "cannot make a sparse file"; return 1; }
	t0=$(date +%s%N)
	cli_refuses "not a bzImage or ELF kernel" --kernel "$big" || return 1
	secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
	[ "$secs" -lt 10 ] || { fail "a 100 GiB non-kernel took $secs s to refuse"; return 1; }
	truncate -s 8G "$big"
	t0=$(date +%s%N)
	cli_refuses "^minivmm: initrd of 8192 MiB needs RAM up to 8192 MiB; that is past the 32-bit MMIO hole at 3072 MiB: no --mem can give it$" \
		--kernel "$TESTGUEST" --initrd "$big" || return 1
	truncate -s 300M "$big"
	cli_refuses "^minivmm: initrd of 300 MiB needs RAM up to 300 MiB; the guest has 256 MiB: use --mem 300M or more$" \
		--kernel "$TESTGUEST" --initrd "$big" || return 1
	secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
	[ "$secs" -lt 10 ] || { fail "two oversized initrds took $secs s to refuse"; return 1; }
}

# Too few file descriptors for the queues asked for: refused at start,
# naming the limit (a worker's io_uring_queue_init used to fail once the
# guest's driver was up, reported as "guest ring error").
t_cli_too_few_file_descriptors_refused() {
	local out="$TMP_ROOT/nofile.out"
	run_limited -n 32 "$out" --kernel "$TESTGUEST" --net tap=mvmfd0,queues=4
	expect_rc 2 "$out" || return 1
	expect_line "^minivmm: 1 vCPU and 4 queue pairs need about [0-9]+ file descriptors and [0-9]+ are open; the process may have 32 \(RLIMIT_NOFILE: raise ulimit -n\)$" "$out" || return 1
	[ "$(wc -l < "$out")" -eq 1 ] || { fail "expected one line: $(tr '\n' '|' < "$out")"; return 1; }
	! ip link show mvmfd0 > /dev/null 2>&1 || { ip link del mvmfd0; fail "the refused run left tap mvmfd0"; return 1; }
}

# RLIMIT_AS (ulimit -v) below guest RAM and what runs beside it: refused at
# start in one line naming the limit and what would fit, nothing made.
t_cli_too_little_address_space_refused() {
	local out="$TMP_ROOT/as.out"
	if [ -n "${SAN:-}" ]; then
		echo "# cli_too_little_address_space_refused: a sanitizer's shadow memory cannot be mapped under ulimit -v: the plain build's run checks this"
		return 0
	fi
	run_limited -v 288000 "$out" --kernel "$TESTGUEST" --net tap=mvmas0,queues=4
	expect_rc 2 "$out" || return 1
	expect_line "^minivmm: --mem 256M needs about [0-9]+ MiB of address space and the process may have 281 MiB \(RLIMIT_AS: raise ulimit -v to at least [0-9]+M, or give --mem [0-9]+M at most\)$" "$out" || return 1
	[ "$(wc -l < "$out")" -eq 1 ] || { fail "expected one line: $(tr '\n' '|' < "$out")"; return 1; }
	! ip link show mvmas0 > /dev/null 2>&1 || { ip link del mvmas0; fail "the refused run left tap mvmas0"; return 1; }
	# The --mem it names runs.
	local fits
	fits=$(sed -n 's/.*or give --mem \([0-9]*M\) at most.*/\1/p' "$out")
	run_limited -v 288000 "$out" --kernel "$TESTGUEST" --mem "$fits" --cmdline "test=exit code=0"
	expect_rc 1 "$out" || return 1
}

# A run refused after its devices were made says only why: not a line per
# tap it made and took down again ("tap mvmtap0 (created)"), and leaves no
# tap behind.
t_cli_refused_after_devices_prints_one_line() {
	local ns out="$TMP_ROOT/refused-devs.out"
	netns_create ns || { fail "cannot create a namespace"; return 1; }
	ip netns exec "$ns" timeout -k 5 30 "$MINIVMM" --kernel /nonexistent --net tap --net tap --net tap \
		< /dev/null > "$out" 2>&1
	rc=$?
	expect_rc 2 "$out" || return 1
	expect_line "^minivmm: cannot open kernel '/nonexistent'" "$out" || return 1
	[ "$(wc -l < "$out")" -eq 1 ] || { fail "expected one line: $(tr '\n' '|' < "$out")"; return 1; }
	! ip -n "$ns" link show | grep -q mvmtap || { fail "the refused run left taps: $(ip -n "$ns" -br link | tr '\n' '|')"; return 1; }
}

# A refused run leaves nothing behind: a --serial file it made is removed,
# one that was there is kept as it was.
t_cli_refused_run_leaves_no_serial_file() {
	local sf="$TMP_ROOT/console.txt" junk="$TMP_ROOT/junk.bin"
	head -c 4096 /dev/urandom > "$junk"
	cli_refuses "cannot open kernel '/nonexistent'" --kernel /nonexistent --serial "file:$sf" || return 1
	[ ! -e "$sf" ] || { fail "a refused run (no kernel) left --serial file:$sf behind"; return 1; }
	cli_refuses "not a bzImage or ELF kernel" --kernel "$junk" --serial "file:$sf" || return 1
	[ ! -e "$sf" ] || { fail "a refused run (bad kernel) left --serial file:$sf behind"; return 1; }
	echo keep > "$sf"
	cli_refuses "cannot open kernel '/nonexistent'" --kernel /nonexistent --serial "file:$sf" || return 1
	[ "$(cat "$sf" 2> /dev/null)" = keep ] ||
		{ fail "a refused run removed or changed the --serial file that was there before it"; return 1; }
}

t_cli_help_and_version() {
	local out="$TMP_ROOT/help.out"
	run_vm "$out" --help
	expect_rc 0 "$out" && expect_line "^Usage: minivmm --kernel PATH" "$out" &&
		expect_line "--serial stdio\|none\|file:PATH" "$out" || return 1
	run_vm "$out" --version
	expect_rc 0 "$out" && expect_line "^minivmm " "$out"
}

# A second value used to win silently; an empty --net made a tap; one tap
# named for two devices got the tap code's "in use by another process".
t_cli_refuses_duplicates_and_empty_net() {
	cli_refuses "^minivmm: --kernel given twice \('A' and 'B'\) \(see minivmm --help\)$" \
		--kernel A --kernel B || return 1
	cli_refuses "--mem given twice \('64M' and '128M'\)" --kernel "$TESTGUEST" --mem 64M --mem 128M || return 1
	cli_refuses "--net: 'queues' given twice \('queues=2' and 'queues=3'\)" \
		--kernel "$TESTGUEST" --net queues=2,queues=3 || return 1
	cli_refuses "--net: empty value" --kernel "$TESTGUEST" --net "" || return 1
	cli_refuses "--net tap=t0 is given for both net0 and net1: each device needs its own tap" \
		--kernel "$TESTGUEST" --net tap=t0 --net tap=t0
}

# The validator's ranges reach the user in one line, exit 2 (the arrays
# behind queues= used to be indexed before any check in the library).
t_cli_refuses_out_of_range_values() {
	cli_refuses "--net queues: '17' is not a number from 1 to 16" --kernel "$TESTGUEST" --net queues=17 || return 1
	cli_refuses "--net mtu: '1' is not a number from 68 to 65535" --kernel "$TESTGUEST" --net mtu=1 || return 1
	cli_refuses "--cpus pin: 1 CPUs listed for 2 vCPUs" --kernel "$TESTGUEST" --cpus 2,pin=0
}

# A key for another backend or engine used to be accepted and do nothing.
t_cli_refuses_net_keys_that_do_not_apply() {
	cli_refuses "^minivmm: --net fanout=cpu: only for the packet backend, and this device's is tap" \
		--kernel "$TESTGUEST" --net tap,fanout=cpu || return 1
	cli_refuses "^minivmm: --net fixed-files=off: an io_uring option, and this device has engine=epoll" \
		--kernel "$TESTGUEST" --net engine=epoll,fixed-files=off
}

# --mem beyond what KVM and the CPU can map: one line, not a raw KVM error.
t_cli_mem_beyond_kvm_limits_is_refused() {
	cli_refuses "^minivmm: --mem 64T: more than (one KVM memory slot holds|KVM and this CPU can address)" \
		--kernel "$TESTGUEST" --mem 64T || return 1
	cli_refuses "^minivmm: --mem 8192T: more than KVM and this CPU can address \([0-9]+ guest physical address bits" \
		--kernel "$TESTGUEST" --mem 8192T --mem-overcommit
}

# --mem above the host's memory booted (MAP_NORESERVE, no bound); now it
# needs --mem-overcommit.
t_cli_mem_above_host_needs_overcommit() {
	local kb gib out="$TMP_ROOT/overcommit.out"
	kb=$(sed -n 's/^MemTotal: *\([0-9]*\) kB/\1/p' /proc/meminfo)
	gib=$(( kb / 1048576 + 2 ))
	cli_refuses "^minivmm: --mem ${gib}G: more than this host's memory \([0-9.]+[MGT], (MemTotal|the memory cgroup limit)\); --mem-overcommit boots it anyway$" \
		--kernel "$TESTGUEST" --mem "${gib}G" || return 1
	run_vm "$out" --kernel "$TESTGUEST" --mem "${gib}G" --mem-overcommit --cmdline test=hello < /dev/null
	expect_rc 0 "$out" && expect_line "hello from minivmm test guest" "$out" || return 1
	# Overcommitted, still bounded: KVM's bookkeeping grows with --mem.
	cli_refuses "^minivmm: --mem $((17 * gib))G: more than --mem-overcommit allows, 16 x this host's memory" \
		--kernel "$TESTGUEST" --mem "$((17 * gib))G" --mem-overcommit
}

# Debug-exit values map to (v << 1) | 1 up to 63; above, one reserved status
# (code=128 used to print "exit status 257" and exit 1).
t_cli_exit_status_of_debug_exit_values() {
	local out="$TMP_ROOT/exit.out" code want
	for code in 0 5 63 64 128 200 65535; do
		want=$(( code <= 63 ? (code << 1) | 1 : 8 ))
		run_vm "$out" --kernel "$TESTGUEST" --cmdline "test=exit code=$code" < /dev/null
		expect_rc "$want" "$out" &&
			expect_line "^minivmm: guest wrote $code to the debug-exit port.* \(exit status $want\)$" "$out" ||
			return 1
		if [ "$code" -gt 63 ]; then
			expect_line "debug-exit value out of range \(0 to 63\)" "$out" || return 1
		fi
	done
	run_vm "$out" --help
	expect_line "^  8 +debug-exit value out of range" "$out" &&
		expect_line "^  10 +the guest panicked" "$out" &&
		expect_line "^  12 +the guest still ran when --timeout ran out" "$out" &&
		expect_line "^  128\+N +stopped by signal N" "$out"
}

# --timeout takes whole seconds from 1 to 31536000: anything else is one
# line and status 2, before anything runs.
t_cli_refuses_bad_timeouts() {
	local v re
	for v in 0 -1 +5 1.5 2s abc "" 31536001 4294967296 99999999999999999999; do
		re=$(printf '%s' "$v" | sed 's/[.+]/\\&/g')
		cli_refuses "^minivmm: --timeout: '$re' is not a number of seconds from 1 to 31536000 \(see minivmm --help\)$" \
			--kernel "$TESTGUEST" --timeout "$v" || return 1
	done
	cli_refuses "--timeout needs a value" --kernel "$TESTGUEST" --timeout || return 1
	cli_refuses "--timeout given twice \('1' and '2'\)" --kernel "$TESTGUEST" --timeout 1 --timeout 2
}

# Every long option of --help and every --net key is in the man page, and
# the page renders without warnings.
t_cli_man_page_documents_every_option() {
	local man=docs/minivmm.1 out="$TMP_ROOT/help.out" opt key warn="$TMP_ROOT/man.warn"
	run_vm "$out" --help
	expect_rc 0 "$out" || return 1
	for opt in $(grep -oE -- '--[a-z][a-z-]+' "$out" | sort -u); do
		grep -qF -- "$(echo "$opt" | sed 's/-/\\-/g')" "$man" ||
			{ fail "$opt (in --help) is not in $man"; return 1; }
	done
	for key in $(grep -- '--net \[' "$out" | grep -oE '[[,|][a-z][a-z-]*' | tr -d '[,|' | sort -u); do
		grep -qF -- "$(echo "$key" | sed 's/-/\\-/g')" "$man" ||
			{ fail "--net key $key is not in $man"; return 1; }
	done
	MANWIDTH=80 man --warnings -l "$man" > /dev/null 2> "$warn" ||
		{ fail "man -l $man failed: $(head -c 300 "$warn")"; return 1; }
	[ ! -s "$warn" ] || fail "man --warnings: $(head -c 400 "$warn" | tr '\n' '|')"
}
