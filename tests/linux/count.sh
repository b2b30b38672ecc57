#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Count nested Linux failures per VMM: boot the same case N times with
# minivmm and with QEMU microvm alternately, in the same outer guests, and
# print how each boot ended, per VMM and by kind. For finding out why inner
# guests fail (docs/linux-guests.md, "Counting nested failures"), not a test.
#
#   tests/linux/count.sh [--boots N] [--case CASE] [--vmms LIST] [--per-outer K]
#                        [--inner-args A,B,...] [--vmm 'NAME=PATH [ARGS...]']... [--out DIR]
#
#   --boots N        boots per VMM (default 20)
#   --case CASE      a tests/linux case (default debian-acpi); net-* cases run
#                    iperf3 both ways, net-load-q1 is net-bzimage-q1 with 10 s
#                    iperf3 runs (TCP load), start-only is minivmm's VM set-up
#                    alone (no boot: it ends refusing a shell script as a kernel),
#                    start-only-net the same after a net case's tap and iperf3 set-up
#   --vmms LIST      comma-separated, run in this order, reversed on odd
#                    iterations (default minivmm,qemu): minivmm is this tree's
#                    static build, qemu is QEMU microvm, any other name comes from --vmm
#   --vmm 'NAME=PATH [ARGS]'  a minivmm variant: static binary PATH, run with the
#                    usual arguments plus ARGS (repeatable)
#   --per-outer K    iterations per outer boot (default 5); a wedged or dead
#                    outer guest loses at most those, and is replaced
#   --inner-args L   extra inner cmdline words, comma-separated
#   --outer-args W   extra outer cmdline words (e.g. 'minivmm.hold_vm=0')
#   --out DIR        logs and results (default build/linux-count/<case>)
# Output: one line per boot ("minivmm  3: pass 34s" / "qemu 3: inner stall ...")
# and a table of outcomes per VMM. Exit 0 (counting is not a test).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
boots=20 case=debian-acpi vmms=minivmm,qemu per_outer=5 inner_args="" outer_args="" out="" variants=()
while [ $# -gt 0 ]; do
	case $1 in
	--boots) boots=$2; shift ;;
	--case) case=$2; shift ;;
	--vmms) vmms=$2; shift ;;
	--per-outer) per_outer=$2; shift ;;
	--inner-args) inner_args=$2; shift ;;
	--outer-args) outer_args=$2; shift ;;
	--vmm) variants+=("$2"); shift ;;
	--out) out=$2; shift ;;
	*) sed -n '2,30p' "$0" >&2; exit 2 ;;
	esac
	shift
done
out=${out:-$repo/build/linux-count/$case}
mkdir -p "$out"
work=$repo/build/linux
logs=$out
mkdir -p "$work"
die() { echo "count: $*" >&2; exit 2; }
. "$repo/tests/linux/images.sh"

grep -qwE 'vmx|svm' /proc/cpuinfo && echo "count: note: this host has VMX/SVM; counting still runs nested" >&2
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed (scripts/install-deps.sh linux)"
li_outer_qemu || die "$oqemu_err"
li_inner_kernel || die "$kdir_err"
inner_initrd=$work/inner-initramfs.cpio
li_inner_initrd "$inner_initrd" || die "inner initramfs build failed, see $logs/initramfs-build.log"
li_debian "$case" >/dev/null || die "$deb_err"
li_static_minivmm >/dev/null || die "$vmm_err"
li_outer_kernel || die "$okernel_err"

# The outer image: the test image plus QEMU (for microvm) and the variants.
extra=(--qemu)
for v in "${variants[@]}"; do
	name=${v%%=*} rest=${v#*=}
	path=${rest%% *}
	extra+=(--vmm "$name=$path")
	args=""; [ "$rest" = "$path" ] || args=${rest#* }
	# outer-init reads the variant's extra arguments from the cmdline, commas for spaces.
	inner_args_vmm="${inner_args_vmm:-}${inner_args_vmm:+;}$name:$(echo "$args" | tr ' ' ',')"
done
outer=$out/outer.cpio
"$repo/tests/linux/build-outer.sh" "${extra[@]}" "$outer" "$okver" "$kdir" "$inner_initrd" "$vmm" \
	${deb_kernel:+"$deb_kernel" "$deb_initrd"} 2>"$logs/outer-build.log" ||
	die "outer initramfs build failed, see $logs/outer-build.log"

token=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
nvmms=$(echo "$vmms" | tr ',' '\n' | wc -l)
echo "count: $case, $boots boots each of $vmms, $per_outer per outer guest, load $(cut -d' ' -f1-3 /proc/loadavg), logs in $out/"

# segment LOG VMM ITER: the outer log's lines of one inner boot.
segment() {
	tr -d '\r' < "$1" | sed -n "/OUTER: case=$case start vmm=$2 iter=$3 /,/OUTER: run-end vmm=$2 case=$case iter=$3 /p"
}

# classify LOG VMM ITER: how one inner boot ended (one word or phrase).
classify() {
	local seg
	seg=$(segment "$1" "$2" "$3")
	[ -n "$seg" ] || { echo "not run"; return; }
	local endl exitst
	endl=$(echo "$seg" | grep -m 1 'OUTER: run-end')
	exitst=$(echo "$endl" | sed -n 's/.* exit=\([^ ]*\).*/\1/p')
	# start-only: the set-up ran to its end if minivmm refused the kernel.
	if [ "$case" = start-only ] || [ "$case" = start-only-net ]; then
		if echo "$seg" | grep -q 'devices added' && echo "$seg" | grep -q 'not a bzImage or ELF kernel'; then
			echo pass
		elif [ -z "$endl" ]; then echo "outer guest died or wedged (last: $(echo "$seg" | grep 'boot trace' | tail -n 1 | sed 's/.*ms  //'))"
		else echo "exit $exitst: $(echo "$seg" | grep -m 1 'minivmm:' | cut -c1-60)"
		fi
		return
	fi
	# The result line may be split by kernel messages printed meanwhile.
	if echo "$seg" | grep -q "MINIVMM-RESULT:" && echo "$seg" | grep -q "PASS .*token=$token-$case "; then
		[ "$exitst" = 0 ] && { echo pass; return; }
		echo "passed, exit $exitst"; return
	fi
	echo "$seg" | li_failure_kind
}

declare -A outcome
done_iters=0 outer_n=0
while [ "$done_iters" -lt "$boots" ]; do
	k=$per_outer
	[ $((boots - done_iters)) -lt "$k" ] && k=$((boots - done_iters))
	outer_n=$((outer_n + 1))
	log=$out/outer-$outer_n.log
	: > "$log"
	append="console=ttyS0 panic=-1 rdinit=/init quiet minivmm.case=$case minivmm.token=$token minivmm.timeout=150"
	append="$append minivmm.vmms=$vmms minivmm.repeat=$k minivmm.iter0=$done_iters"
	[ -z "$inner_args" ] || append="$append minivmm.inner_args=$inner_args"
	[ -z "$outer_args" ] || append="$append $outer_args"
	[ -z "${inner_args_vmm:-}" ] || append="$append minivmm.vmm_args=$inner_args_vmm"
	li_run_outer "$log" $((90 + k * nvmms * 160)) "$append"
	ended=$st
	for ((i = done_iters; i < done_iters + k; i++)); do
		for v in $(echo "$vmms" | tr ',' ' '); do
			r=$(classify "$log" "$v" "$i")
			[ "$r" = "not run" ] && continue
			outcome[$v,$i]=$r
			secs=$(tr -d '\r' < "$log" | sed -n "s/.*OUTER: run-end vmm=$v case=$case iter=$i exit=[^ ]* seconds=\([0-9]*\).*/\1/p")
			printf '%-10s %3d: %s%s\n' "$v" "$i" "$r" "${secs:+ (${secs}s)}"
			# A triple fault's own exit, from the outer init's flight recorder.
			segment "$log" "$v" "$i" | grep -m 1 'OUTER: flight: .*reason shutdown' |
				sed 's/.*OUTER: flight: /               shutdown exit: /'
		done
	done
	# Iterations the outer guest never got to are redone in the next one.
	next=$done_iters
	for ((i = done_iters; i < done_iters + k; i++)); do
		all=1
		for v in $(echo "$vmms" | tr ',' ' '); do [ -n "${outcome[$v,$i]:-}" ] || all=0; done
		[ $all = 1 ] && next=$((i + 1)) || break
	done
	if [ "$next" = "$done_iters" ]; then
		echo "outer guest $outer_n ended (status $ended$([ "$ended" = 125 ] && echo ', wedged')) before finishing iteration $done_iters; starting another"
		outcome[outer,$outer_n]="died"
		[ "$outer_n" -lt $((boots * 2)) ] || die "outer guests keep dying; see $log"
	elif [ "$ended" = 125 ] || [ "$ended" = 124 ]; then
		echo "outer guest $outer_n wedged or timed out (status $ended) after iteration $((next - 1))"
	fi
	done_iters=$next
done

# The table: outcomes per VMM.
{
	echo
	echo "## $case: $boots boots per VMM ($(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
	echo
	for v in $(echo "$vmms" | tr ',' ' '); do
		fails=0
		for ((i = 0; i < boots; i++)); do [ "${outcome[$v,$i]}" = pass ] || fails=$((fails + 1)); done
		echo "- $v: $fails of $boots failed$( [ $fails -gt 0 ] && printf ': %s' "$(for ((i = 0; i < boots; i++)); do
			[ "${outcome[$v,$i]}" = pass ] || echo "${outcome[$v,$i]}"; done | sort | uniq -c | sed 's/^ *\([0-9]*\) /\1× /' | paste -sd ';' | sed 's/;/; /g')")"
	done
	died=0
	for ((n = 1; n <= outer_n; n++)); do [ -z "${outcome[outer,$n]:-}" ] || died=$((died + 1)); done
	echo "- outer guests: $outer_n booted, $died ended before finishing an iteration"
} | tee "$out/results.md"
exit 0
