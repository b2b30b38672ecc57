#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Run the libFuzzer targets one at a time (see docs/fuzzing.md).
#
#   tests/fuzz/run.sh fuzz  SECONDS TARGET...   fuzz each for SECONDS from its
#                                               committed corpus into a scratch
#                                               one ($FUZZ_BUILD/corpus/TARGET)
#   tests/fuzz/run.sh smoke RUNS TARGET...      replay the committed corpus and
#                                               run RUNS inputs in all (fixed
#                                               seed, fresh scratch corpus)
#   tests/fuzz/run.sh merge 0 TARGET...         add what the scratch corpus
#                                               found that covers more to the
#                                               committed corpus (minimised)
#
# One line per target: "fuzz TARGET: ok, N executions in T s ..." or
# "fuzz TARGET: FAILED ..." with the input that failed and the log; then
# "fuzz: N targets, N passed, N failed, N executions". Exit status non-zero
# if any target failed. Each target's libFuzzer output is in
# $FUZZ_BUILD/logs/TARGET.log, failing inputs in $FUZZ_BUILD/artifacts/TARGET/.
#
# Environment: FUZZ_BUILD (default build-fuzz); FUZZ_RUNS=N stops a fuzz run
# after N executions if that comes before SECONDS; FUZZ_SKIP_KNOWN_HANGS=1
# lets targets skip inputs that hit a known, not yet fixed hang (net_rx).
set -u
cd "$(dirname "$0")/../.."
mode=${1:-}
amount=${2:-}
shift 2 2>/dev/null || { echo "usage: $0 fuzz|smoke|merge AMOUNT TARGET..." >&2; exit 2; }
build=${FUZZ_BUILD:-build-fuzz}
[ $# -gt 0 ] || { echo "$0: no targets" >&2; exit 2; }
case "$mode" in fuzz|smoke|merge) ;; *) echo "$0: unknown mode '$mode'" >&2; exit 2 ;; esac

# A modest share of a shared machine: one fuzzer at a time, one process,
# a smaller ASan quarantine than the default 256 MiB.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=64:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# Per-target libFuzzer options.
options_for() {
	case "$1" in
	bzimage|pvh) echo "-max_len=16384" ;;
	cli) echo "-max_len=1024 -dict=tests/fuzz/cli.dict" ;;
	*) echo "-max_len=4096" ;;
	esac
}

# stat NAME LOG: a libFuzzer final statistic.
stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }

passed=0
failed=0
total_execs=0
t0=$(date +%s)
for t in "$@"; do
	bin=$build/${t}_fuzz
	seeds=tests/fuzz/corpus/$t
	log=$build/logs/$t.log
	art=$build/artifacts/$t/
	mkdir -p "$build/logs" "$art"
	if [ ! -x "$bin" ]; then
		echo "fuzz $t: FAILED: $bin is not built (make fuzz-build)"
		failed=$((failed + 1))
		continue
	fi
	if [ -z "$(ls -A "$seeds" 2>/dev/null)" ]; then
		echo "fuzz $t: FAILED: no seed corpus in $seeds"
		failed=$((failed + 1))
		continue
	fi
	if [ "$mode" = merge ]; then
		scratch=$build/corpus/$t
		before=$(ls "$seeds" | wc -l)
		if [ -z "$(ls -A "$scratch" 2>/dev/null)" ]; then
			echo "fuzz $t: nothing to merge ($scratch is empty: run make fuzz first)"
			passed=$((passed + 1))
			continue
		fi
		# shellcheck disable=SC2046
		if "$bin" -merge=1 $(options_for "$t") -artifact_prefix="$art" "$seeds" "$scratch" > "$log" 2>&1; then
			after=$(ls "$seeds" | wc -l)
			echo "fuzz $t: merged $((after - before)) new inputs into $seeds (now $after files, $(du -sk "$seeds" | cut -f1) KiB)"
			passed=$((passed + 1))
		else
			echo "fuzz $t: FAILED: merge did not finish (log: $log)"
			failed=$((failed + 1))
		fi
		continue
	fi

	if [ "$mode" = fuzz ]; then
		scratch=$build/corpus/$t
		limit=(-max_total_time="$amount")
		[ -n "${FUZZ_RUNS:-}" ] && limit+=(-runs="$FUZZ_RUNS")
	else
		scratch=$build/smoke/$t
		rm -rf "$scratch"
		limit=(-runs="$amount" -seed=1)
	fi
	mkdir -p "$scratch"
	start=$(date +%s)
	# shellcheck disable=SC2046
	"$bin" "${limit[@]}" $(options_for "$t") -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$art" "$scratch" "$seeds" > "$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	execs=$(stat number_of_executed_units "$log")
	execs=${execs:-0}
	total_execs=$((total_execs + execs))
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<< "$last")
	rate=$(( execs / (secs > 0 ? secs : 1) ))
	if [ $rc = 0 ]; then
		echo "fuzz $t: ok, $execs executions in $secs s ($rate/s), cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}"
		passed=$((passed + 1))
		continue
	fi
	input=$(sed -n "s/.*Test unit written to //p" "$log" | tail -1)
	why=$(grep -m1 -E '^fuzz check failed|^==[0-9]+==ERROR|^SUMMARY|runtime error:' "$log")
	# The failure's own lines: the check or sanitizer report, its first
	# frames in the project, the summary.
	grep -E '^fuzz check failed|ERROR:|runtime error:|^SUMMARY:|#[0-9]+ 0x[0-9a-f]+ in [a-z_]+ /' "$log" |
		grep -v -E 'in (fuzzer::|__sanitizer|fuzz_fail|abort)' | head -14 | sed 's/^/  | /'
	echo "fuzz $t: FAILED after $execs executions in $secs s: ${why:-libFuzzer exited with $rc}; input ${input:-?} (log: $log)"
	failed=$((failed + 1))
done
echo "fuzz: $# targets, $passed passed, $failed failed, $total_execs executions in $(( $(date +%s) - t0 )) s"
[ $failed = 0 ]
