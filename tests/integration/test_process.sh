# SPDX-License-Identifier: Apache-2.0
# The minivmm process among others: closed standard descriptors, a console
# reader that goes away, a FIFO nobody reads, signals, and the terminal
# modes after each way of ending (a pty from python3's pty module).

. tests/integration/netns.sh

# fds 0-2 closed at start: the first files minivmm opened (/dev/kvm) took
# their numbers, and console bytes went into them. Now they are /dev/null.
t_process_closed_stdio_becomes_dev_null() {
	# serial-echo waits for input forever: time to look at the descriptors.
	"$MINIVMM" --kernel "$TESTGUEST" --cmdline test=serial-echo 0<&- 1>&- 2>&- &
	local pid=$! fd target i
	for ((i = 0; i < 100; i++)); do
		[ -e "/proc/$pid/fd/3" ] && grep -q vcpu0 /proc/$pid/task/*/comm 2> /dev/null && break
		sleep 0.05
	done
	for fd in 0 1 2; do
		target=$(readlink "/proc/$pid/fd/$fd")
		if [ "$target" != /dev/null ]; then
			kill -KILL "$pid" 2> /dev/null
			fail "fd $fd is '$target', not /dev/null"
			return 1
		fi
	done
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" = 143 ] || fail "exit status $rc after SIGTERM, expected 143"
}

# Descriptors the launcher left open (a file on 7, a pipe on 251) are closed
# at start; one a path names (--serial file:/dev/fd/8, as a shell's process
# substitution passes it) is kept and written to.
t_process_closes_inherited_fds() {
	local log="$TMP_ROOT/fd8.console" pipe="$TMP_ROOT/leaked.fifo" i
	: > "$log"
	rm -f "$pipe" && mkfifo "$pipe"
	( exec 7> "$TMP_ROOT/leaked" 8>> "$log" 251<> "$pipe"
		exec "$MINIVMM" --kernel "$TESTGUEST" --serial file:/dev/fd/8 --cmdline test=serial-echo < /dev/null ) &
	local pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -q vcpu0 /proc/$pid/task/*/comm 2> /dev/null && break
		sleep 0.05
	done
	local open7 open251 open8
	open7=$(readlink "/proc/$pid/fd/7" 2> /dev/null)
	open251=$(readlink "/proc/$pid/fd/251" 2> /dev/null)
	open8=$(readlink "/proc/$pid/fd/8" 2> /dev/null)
	kill -TERM "$pid" 2> /dev/null
	wait "$pid"
	# (minivmm's own files may take the numbers once they are free)
	[ "$open7" != "$TMP_ROOT/leaked" ] && [ "$open251" != "$(readlink -f "$pipe")" ] &&
		! ls -l /proc/$pid/fd 2> /dev/null | grep -q -e leaked -e 'pipe:' ||
		{ fail "inherited descriptors still open while the guest ran: 7 -> '$open7', 251 -> '$open251'"; return 1; }
	[ "$open8" = "$log" ] || { fail "fd 8 (named by --serial file:/dev/fd/8) is '$open8', not $log"; return 1; }
	grep -q . "$log" || { fail "nothing reached --serial file:/dev/fd/8"; return 1; }
}

# A FIFO without reader: open() used to block, unkillable (signals were
# blocked already). Now one line and exit 2, at once.
t_process_serial_fifo_without_reader_is_refused() {
	local fifo="$TMP_ROOT/console.fifo" out="$TMP_ROOT/fifo.out"
	rm -f "$fifo"
	mkfifo "$fifo"
	VM_TIMEOUT=10 run_vm "$out" --kernel "$TESTGUEST" --serial "file:$fifo" --cmdline test=hello < /dev/null
	expect_rc 2 "$out" &&
		expect_line "^minivmm: serial output '$fifo' is a FIFO with no reader: start the reader first$" "$out"
}

# The guest prints after its console reader went away: EPIPE (SIGPIPE used
# to kill minivmm), reported once, and the guest runs to its end.
# python3 ARGS: fifo|stdout, then the command; prints "rc=N" and what it saw.
process_reader_goes_away() {
	python3 - "$@" <<'PY'
import os, select, subprocess, sys, time
mode, out_path, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
out = open(out_path, "wb")
def read_until(fd, word, secs):
    buf, end = b"", time.time() + secs
    while word not in buf and time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            chunk = os.read(fd, 4096)
            if not chunk and mode == "stdout":
                break
            buf += chunk
    return buf
if mode == "fifo":
    fifo = cmd.pop(0)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # a reader before minivmm opens it
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    seen = read_until(fd, b"ready ip", 30)
    os.close(fd)                                       # the reader goes away
else:
    r, w = os.pipe()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=w, stderr=out)
    os.close(w)
    seen = read_until(r, b"ready for input", 30)
    os.close(r)                                        # stdout's reader goes away
    p.stdin.write(b"after the reader left\n")
    p.stdin.flush()
print("saw-ready" if seen else "saw-nothing")
try:
    print("rc=%d" % p.wait(timeout=60))
except subprocess.TimeoutExpired:
    p.kill()
    print("rc=timeout")
PY
}

t_process_stdout_reader_gone_is_logged_once() {
	local out="$TMP_ROOT/epipe.out" res
	res=$(process_reader_goes_away stdout "$out" "$MINIVMM" --kernel "$TESTGUEST" --cmdline test=serial-echo)
	echo "$res" | grep -q saw-ready || { fail "never saw the guest's prompt: $res"; return 1; }
	echo "$res" | grep -q '^rc=0$' || { fail "$(echo "$res" | tr '\n' ' '): $(tail -c 300 "$out" | tr '\n' '|')"; return 1; }
	local n
	n=$(grep -c "console output (fd 1): Broken pipe; guest console output is dropped from now on" "$out")
	[ "$n" = 1 ] || fail "EPIPE reported $n times: $(tr '\n' '|' < "$out")"
}

t_process_serial_fifo_reader_gone_is_logged_once() {
	local fifo="$TMP_ROOT/gone.fifo" out="$TMP_ROOT/gone.out" res
	rm -f "$fifo"
	mkfifo "$fifo"
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	# net-echo prints its counters after secs=2, when the reader is gone.
	res=$(process_reader_goes_away fifo "$out" "$fifo" ip netns exec "$NS" "$MINIVMM" --kernel "$TESTGUEST" \
		--net tap=t0 --serial "file:$fifo" --cmdline "test=net-echo secs=2")
	echo "$res" | grep -q saw-ready || { fail "never saw the guest ready: $res; $(tr '\n' '|' < "$out")"; return 1; }
	echo "$res" | grep -q '^rc=0$' || { fail "$(echo "$res" | tr '\n' ' '): $(tail -c 300 "$out" | tr '\n' '|')"; return 1; }
	local n
	n=$(grep -c "serial output '$fifo': Broken pipe; guest console output is dropped from now on" "$out")
	[ "$n" = 1 ] || fail "EPIPE reported $n times: $(tr '\n' '|' < "$out")"
}

# wait_or_kill PID SECS: wait for PID, SIGKILL it after SECS; sets $rc.
wait_or_kill() {
	local pid=$1 secs=$2 i
	for ((i = 0; i < secs * 20; i++)); do
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.05
	done
	kill -KILL "$pid" 2> /dev/null
	wait "$pid"
	rc=$?
}

# SIGQUIT used to kill minivmm (core dump) with the terminal left raw; now
# it stops the guest like SIGTERM. (An asynchronous command of a script has
# SIGQUIT ignored: a subshell that execs does not.)
t_process_sigquit_stops_cleanly() {
	local out="$TMP_ROOT/quit.out"
	: > "$out"
	( exec "$MINIVMM" --kernel "$TESTGUEST" --cmdline test=serial-echo < /dev/null > "$out" 2>&1 ) &
	local pid=$! i
	for ((i = 0; i < 100; i++)); do
		grep -q "ready for input" "$out" && break
		sleep 0.05
	done
	kill -QUIT "$pid"
	wait_or_kill "$pid" 10
	expect_rc 131 "$out" && expect_line "^minivmm: stopped by signal 3 \(Quit\) \(exit status 131\)$" "$out"
}

# nohup: a SIGHUP ignored at start stays ignored; SIGTERM still stops.
t_process_sighup_stays_ignored_under_nohup() {
	local out="$TMP_ROOT/nohup.out"
	: > "$out"
	( trap '' HUP; exec "$MINIVMM" --kernel "$TESTGUEST" --cmdline test=serial-echo < /dev/null > "$out" 2>&1 ) &
	local pid=$! i
	for ((i = 0; i < 100; i++)); do
		grep -q "ready for input" "$out" && break
		sleep 0.05
	done
	kill -HUP "$pid"
	sleep 0.5
	kill -0 "$pid" 2> /dev/null || { wait "$pid"; fail "SIGHUP stopped minivmm under nohup (exit $?)"; return 1; }
	kill -TERM "$pid"
	wait_or_kill "$pid" 10
	expect_rc 143 "$out"
}

# pty: run minivmm on a terminal, wait until the guest asks for input (the
# terminal is raw by then), send SIG, and compare the terminal's modes after
# minivmm is gone with those before it started.
process_pty_modes_after() {
	python3 - "$1" "$2" "$MINIVMM" --kernel "$TESTGUEST" --cmdline test=serial-echo <<'PY'
import os, pty, resource, select, signal, subprocess, sys, termios, time
sig = getattr(signal, sys.argv[1])
log = open(sys.argv[2], "wb")
master, slave = pty.openpty()
before = termios.tcgetattr(slave)
def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setsid()
p = subprocess.Popen(sys.argv[3:], stdin=slave, stdout=slave, stderr=slave, preexec_fn=no_core)
buf, end = b"", time.time() + 30
while b"ready for input" not in buf and time.time() < end:
    r, _, _ = select.select([master], [], [], 0.1)
    if r:
        buf += os.read(master, 4096)
raw = termios.tcgetattr(slave)
os.kill(p.pid, sig)
rc = p.wait(timeout=30)
time.sleep(0.1)
while select.select([master], [], [], 0)[0]:
    try:
        buf += os.read(master, 4096)
    except OSError:
        break
log.write(buf)
after = termios.tcgetattr(slave)
print("ready" if b"ready for input" in buf else "not-ready")
print("raw" if not (raw[3] & termios.ICANON) and not (raw[3] & termios.ECHO) else "not-raw")
print("restored" if after == before else "not-restored lflag %#x want %#x" % (after[3], before[3]))
print("rc=%d" % rc)
PY
}

# process_check_pty SIG WANT_RC
process_check_pty() {
	local sig=$1 want=$2 out="$TMP_ROOT/pty-$1.out" res
	res=$(process_pty_modes_after "$sig" "$out") || { fail "pty helper: $res"; return 1; }
	echo "$res" | grep -q '^ready$' || { fail "$sig: the guest never asked for input: $(tr '\r\n' '||' < "$out")"; return 1; }
	echo "$res" | grep -q '^raw$' || { fail "$sig: the terminal was not raw while the guest ran"; return 1; }
	echo "$res" | grep -q '^restored$' || { fail "$sig: terminal modes not restored: $(echo "$res" | tr '\n' ' ')"; return 1; }
	echo "$res" | grep -q "^rc=$want$" || fail "$sig: $(echo "$res" | grep rc=), expected rc=$want"
}

t_process_terminal_restored_after_sigterm() { process_check_pty SIGTERM 143; }
t_process_terminal_restored_after_sigquit() { process_check_pty SIGQUIT 131; }
# A crash of minivmm itself: the handler restores the modes, then the default
# action kills it (python's returncode -N: killed by signal N).
t_process_terminal_restored_after_sigabrt() { process_check_pty SIGABRT -6; }
t_process_terminal_restored_after_sigsegv() { process_check_pty SIGSEGV -11; }
