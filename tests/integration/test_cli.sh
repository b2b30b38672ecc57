# Bad input: one line naming the problem, exit status 2.

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
	cli_refuses "--kernel needs a value" --kernel || return 1
	cli_refuses "cannot open kernel '/nonexistent'" --kernel /nonexistent || return 1
	cli_refuses "cannot open initrd '/nonexistent'" --kernel "$TESTGUEST" --initrd /nonexistent || return 1
	cli_refuses "not a bzImage or ELF kernel" --kernel "$junk" || return 1
	cli_refuses "$trunc" --kernel "$trunc" || return 1
	cli_refuses "unexpected argument 'extra'" --kernel "$TESTGUEST" extra
}

t_cli_help_and_version() {
	local out="$TMP_ROOT/help.out"
	run_vm "$out" --help
	expect_rc 0 "$out" && expect_line "^Usage: minivmm --kernel PATH" "$out" &&
		expect_line "--serial stdio\|none\|file:PATH" "$out" || return 1
	run_vm "$out" --version
	expect_rc 0 "$out" && expect_line "^minivmm " "$out"
}
