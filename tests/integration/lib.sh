# SPDX-License-Identifier: Apache-2.0
# Shared helpers for integration tests (sourced by run.sh and the test files).
# Each test is a shell function named t_<name>; it fails by calling `fail`.

: "${BUILD:=build}"
MINIVMM="$BUILD/minivmm"
# NET_EXTRA: options appended to every --net (engine variants; see with-net-opts.sh).
if [ -n "${NET_EXTRA:-}" ]; then
	export REAL_MINIVMM=$MINIVMM NET_EXTRA
	MINIVMM=tests/integration/with-net-opts.sh
fi
TESTGUEST="$BUILD/testguest/testguest.elf"
TMP_ROOT=$(mktemp -d /tmp/minivmm-it.XXXXXX)

# runs_here FULL EMULATED: how many times a repeating test repeats: FULL
# where /dev/kvm is real, EMULATED under emulated KVM (tests/with-kvm.sh),
# where every run is 5-10x slower.
runs_here() {
	if [ -n "${MINIVMM_EMULATED_KVM:-}" ]; then echo "$2"; else echo "$1"; fi
}

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

# wait_ready OUTFILE PID PATTERN WHAT [SECONDS]: wait (10 s unless told)
# for a line matching the extended regex PATTERN in OUTFILE while PID runs;
# else fail with WHAT and the end of OUTFILE.
wait_ready() {
	local out=$1 pid=$2 pat=$3 what=$4 secs=${5:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		grep -Eq -- "$pat" "$out" && return 0
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.05
	done
	fail "$what: $(tail -c 600 "$out" | tr '\n' '|')"
}

# run_limited ULIMIT-OPTION VALUE OUTFILE ARGS...: minivmm under a
# resource limit (ulimit -n, -v ...), 30 s at most, stdin /dev/null; sets $rc.
run_limited() {
	local opt=$1 val=$2 out=$3; shift 3
	bash -c 'ulimit "$1" "$2" && shift 2 && exec "$@"' _ "$opt" "$val" timeout -k 5 30 "$MINIVMM" "$@" \
		< /dev/null > "$out" 2>&1
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

# stats_check OUT PYTHON [ARGS...]: run PYTHON against minivmm's last
# --stats=json line in OUT, with n = its first device, q = n["queues"],
# w = n["workers"], args = ARGS; PYTHON calls check(condition, message).
# Fails with every message whose condition was false.
stats_check() {
	local out=$1 code=$2 msg; shift 2
	msg=$(python3 - "$out" "$code" "$@" 2>&1 <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('{')]
if not lines:
    print("no --stats=json line in the output")
    sys.exit(1)
n = json.loads(lines[-1])["net"][0]
q, w, args = n["queues"], n["workers"], sys.argv[3:]
errs = []
def check(cond, what):
    if not cond:
        errs.append(what)
exec(sys.argv[2])
if errs:
    print("; ".join(errs))
    sys.exit(1)
PY
	) || { fail "--stats=json: $msg; json: $(grep '^{' "$out" | tail -1 | cut -c1-900)"; return 1; }
}
