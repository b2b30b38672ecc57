# Shared helpers for integration tests (sourced by run.sh and the test files).
# Each test is a shell function named t_<name>; it fails by calling `fail`.

: "${BUILD:=build}"
MINIVMM="$BUILD/minivmm"
TESTGUEST="$BUILD/testguest/testguest.elf"
TMP_ROOT=$(mktemp -d /tmp/minivmm-it.XXXXXX)

fail() {
	echo "$*" > "$TMP_ROOT/.reason"
	return 1
}

# run_vm OUTFILE ARGS... : run minivmm with a timeout, stdout+stderr to
# OUTFILE, stdin from /dev/null unless redirected by the caller. Sets $rc.
run_vm() {
	local out=$1; shift
	timeout -k 5 "${VM_TIMEOUT:-60}" "$MINIVMM" "$@" > "$out" 2>&1
	rc=$?
}

# expect_rc WANT OUTFILE
expect_rc() {
	if [ "$rc" != "$1" ]; then
		fail "exit status $rc, expected $1; output: $(tail -c 600 "$2" | tr '\n' '|')"
		return 1
	fi
}

# expect_line PATTERN OUTFILE (extended regex)
expect_line() {
	if ! grep -Eq -- "$1" "$2"; then
		fail "no line matching '$1'; output: $(tail -c 600 "$2" | tr '\n' '|')"
		return 1
	fi
}

expect_no_line() {
	if grep -Eq -- "$1" "$2"; then
		fail "unexpected line matching '$1': $(grep -E -m1 -- "$1" "$2")"
		return 1
	fi
}
