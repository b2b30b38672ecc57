#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Linux guest TCP benchmark (nested): minivmm vs QEMU microvm, same outer guest.
#
#   bench/linux/run.sh [--quick|--full] [--out DIR] [--rounds N] [--secs S]
#                      [--tests LIST] [--queues 1,2] [--vmms minivmm,qemu]
#                      [--vmm NAME=PATH]... [--vmm-args 'NAME:a,b;NAME2:c']
#   bench/linux/run.sh --boot-only [--boots N] [--consoles full,quiet]
#                      [--boot-args a,b] [--bootlog first|all|none] [...]
#
# Builds an outer initramfs (tests/linux/build-outer.sh plus an overlay with
# bench/linux/outer-init as /init, qemu-system-x86_64 with its libraries and
# qboot's bios-microvm.bin, and the static rrbench), an inner initramfs
# (guest-images/linux/build-initramfs.sh --net-tools plus bench/linux/inner-init
# and rrbench) and uses the cached inner kernel; boots the outer guest (Debian's
# kernel under QEMU TCG with SVM, kvm-amd inside) once per round and queue count
# Q in 1,2. Inside it, the same inner Linux boots under minivmm
# (--cpus 2 --net tap=mtap0,queues=Q) and under QEMU microvm (-smp 2, userspace
# virtio-net, vhost=off, queues=Q, mq=on), alternating, and runs
# TCP_STREAM / TCP_MAERTS (iperf3) and TCP_RR / TCP_CRR (rrbench) against
# servers in the outer guest. bench/linux/report.py turns the serial log into
# results.md (seed-shaped tables, printed) and runs.csv.
# An outer guest that prints nothing but lockup reports for 90 s is "wedged"
# (QEMU TCG's nested SVM sometimes hangs): it is killed, its results are
# dropped and the (round, Q) pair is redone once in a fresh outer guest; the
# same when the outer guest ends early (QEMU exits: the outer kernel died).
#
# --boot-only: no TCP tests. One outer guest in which each VMM boots the inner
# guest N times (--boots, default 5), alternating (odd boots QEMU first), per
# console kind (--consoles: full = the kernel's default loglevel, quiet = `quiet`
# on the inner cmdline), only to the inner /init, which resets at once. Every
# boot runs under bench/linux/bootstamp, which times each console line from just
# before the VMM's exec; report.py prints VMM start -> first kernel console line
# and -> /init per VMM (median [min-max]) and the ratio minivmm/QEMU. --boot-args
# adds inner cmdline words (e.g. printk.time=1); --bootlog first (default) dumps
# the stamped console of each VMM's first boot into serial.log (all: every boot).
# --vmm NAME=PATH adds a static minivmm variant as /bin/NAME (name it in --vmms,
# e.g. --vmms minivmm,qemu,base); --vmm-args gives a VMM extra arguments (a
# --kernel among them replaces the bzImage: 'pvh:--kernel,/inner/vmlinux').
#
# --quick: 1 round, one size/session per test, 4 s windows (~4 min).
# --full:  3 rounds (medians of 3), the trimmed matrix below, 4 s windows (~20-25 min).
# Output: DIR (default bench/linux/out/<mode>/): results.md, runs.csv, serial.log, build.log.
# Needs root (reading /boot), qemu-system-x86_64, busybox-static, iperf3, iproute2,
# ethtool, gcc with a static libc, linux-image-amd64 (outer kernel with kvm-amd) and
# linux-source-6.1 (the inner kernel, built once into /var/cache/minivmm).
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/bench/linux
mode=quick out="" rounds="" secs="" tests_opt="" queues=1,2 vmms=minivmm,qemu
boots=5 consoles=full,quiet boot_args="" bootlog=first variants=() vmm_args=""
while [ $# -gt 0 ]; do
	case $1 in
	--quick) mode=quick ;;
	--full) mode=full ;;
	--boot-only) mode=boot ;;
	--boots) boots=$2; shift ;;
	--consoles) consoles=$2; shift ;;
	--boot-args) boot_args=$2; shift ;;
	--bootlog) bootlog=$2; shift ;;
	--vmm) variants+=("$2"); shift ;;
	--vmm-args) vmm_args=$2; shift ;;
	--out) out=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--secs) secs=$2; shift ;;
	--tests) tests_opt=$2; shift ;;	# e.g. maerts:16384:2,rr:1:20 (test:size:sessions)
	--queues) queues=$2; shift ;;
	--vmms) vmms=$2; shift ;;
	*) sed -n '2,9p' "$0" >&2; exit 2 ;;
	esac
	shift
done
if [ "$mode" = boot ]; then
	tests=none rounds=1 secs=0
	queues=${queues%%,*}
elif [ "$mode" = quick ]; then
	tests=stream:16384:1,maerts:16384:1,rr:1:20,crr:1:1
	rounds=${rounds:-1} secs=${secs:-4}
else
	# Trimmed from seed 1's matrix so that 3 rounds x 2 queue counts x 2 VMMs fit in ~20-25 min.
	tests=stream:64:1,stream:16384:1,stream:16384:2,maerts:64:1,maerts:16384:1,maerts:16384:2
	tests=$tests,rr:1:1,rr:1:20,rr:1:50,rr:256:1,rr:256:20,crr:1:1,crr:1:20,crr:1:50
	rounds=${rounds:-3} secs=${secs:-4}
fi
[ -z "$tests_opt" ] || tests=$tests_opt
out=${out:-$here/out/$mode}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$repo/build/bench-linux
mkdir -p "$work"
blog=$out/build.log
: > "$blog"
die() { echo "bench/linux: error: $*" >&2; exit 1; }
t_start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench/linux: $mode mode, $rounds round(s), ${secs}s windows, load $(cut -d' ' -f1-3 /proc/loadavg), output in $out/" >&2

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed"
. "$repo/tests/linux/images.sh"   # li_outer_qemu: the outer guest's emulator, as the tests use it
li_outer_qemu || die "$oqemu_err"
outer_version=$("${oqemu[@]}" --version | head -n 1)
echo "bench/linux: outer guest emulated by $outer_version" >&2
[ -e /usr/share/qemu/bios-microvm.bin ] || die "/usr/share/qemu/bios-microvm.bin missing (qemu-system-data)"

# --- inner kernel (cached) ---
kdir=$("$repo/guest-images/linux/build-kernel.sh" 2>>"$blog" | tail -n 1)
[ -n "$kdir" ] && [ -f "$kdir/bzImage" ] || die "inner kernel build failed, see $blog"

# --- rrbench and bootstamp (static) ---
gcc -static -O2 -pthread -Wall -o "$work/rrbench" "$here/rrbench.c" 2>>"$blog" || die "rrbench build failed, see $blog"
gcc -static -O2 -Wall -Wextra -Werror -o "$work/bootstamp" "$here/bootstamp.c" 2>>"$blog" || die "bootstamp build failed, see $blog"

# --- inner initramfs: the test image + our /init + rrbench ---
rm -rf "$work/inner-extra" && mkdir -p "$work/inner-extra/usr/bin"
cp "$here/inner-init" "$work/inner-extra/init" && chmod 0755 "$work/inner-extra/init"
cp "$work/rrbench" "$work/inner-extra/usr/bin/rrbench"
"$repo/guest-images/linux/build-initramfs.sh" --net-tools "$work/inner.cpio" "$work/inner-extra" 2>>"$blog" ||
	die "inner initramfs build failed, see $blog"

# --- static minivmm ---
vmm=${LINUX_BENCH_MINIVMM:-}
if [ -z "$vmm" ]; then
	make -C "$repo" --no-print-directory STATIC=1 SAN= BUILD=build-static build-static/minivmm >>"$blog" 2>&1 ||
		die "static minivmm build failed (make STATIC=1 build-static/minivmm), see $blog"
	vmm=$repo/build-static/minivmm
fi

# --- outer kernel and initramfs: tests/linux's image + overlay ---
kver=$(for k in /boot/vmlinuz-*; do
	v=${k#/boot/vmlinuz-}
	ls "/lib/modules/$v/kernel/arch/x86/kvm/kvm-amd.ko"* >/dev/null 2>&1 && echo "$v"
done | sort -V | tail -n 1)
okernel=/boot/vmlinuz-$kver
[ -n "$kver" ] && [ -r "$okernel" ] || die "no readable outer kernel /boot/vmlinuz-* with kvm-amd (linux-image-amd64; root)"
"$repo/tests/linux/build-outer.sh" "$work/outer-base.cpio" "$kver" "$kdir" "$work/inner.cpio" "$vmm" 2>>"$blog" ||
	die "outer initramfs build failed, see $blog"
ov=$work/outer-overlay
rm -rf "$ov" && mkdir -p "$ov/usr/bin" "$ov/usr/share/qemu"
cp "$here/outer-init" "$ov/init" && chmod 0755 "$ov/init"
cp "$work/rrbench" "$ov/usr/bin/rrbench"
cp "$work/bootstamp" "$ov/usr/bin/bootstamp"
mkdir -p "$ov/bin"
for v in "${variants[@]}"; do
	name=${v%%=*} path=${v#*=}
	[ -x "$path" ] || die "--vmm $v: $path is not an executable"
	! ldd "$path" >/dev/null 2>&1 || die "--vmm $v: $path is dynamically linked (make STATIC=1)"
	cp "$path" "$ov/bin/$name"
done
"$repo/guest-images/linux/collect-bins.sh" "$ov" qemu-system-x86_64 2>>"$blog" || die "cannot collect qemu-system-x86_64, see $blog"
# microvm's default firmware: qboot (bios-microvm.bin is a link to qboot.rom on Debian).
for f in bios-microvm.bin qboot.rom; do
	[ -e "/usr/share/qemu/$f" ] && cp -L "/usr/share/qemu/$f" "$ov/usr/share/qemu/$f"
done
# A second cpio after the first: the kernel unpacks both, later files replace earlier ones (/init).
(cd "$ov" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc --owner=0:0) > "$work/outer-overlay.cpio" ||
	die "cannot pack the overlay"
cat "$work/outer-base.cpio" "$work/outer-overlay.cpio" > "$work/outer.cpio"
t_built=$(date +%s)
echo "bench/linux: built in $((t_built - t_start))s: outer initramfs $(du -m "$work/outer.cpio" | cut -f1) MiB, inner $(du -k "$work/inner.cpio" | cut -f1) KiB" >&2

# --- the run: one outer boot per (round, queue count), both VMMs alternating in it ---
ntests=$(echo "$tests" | tr ',' '\n' | wc -l)
# Per inner boot: ~5 s boot + per test (window + ~2 s); doubled and padded for safety.
limit_boot=$((60 + ntests * (secs + 10)))
limit=$((60 + 2 * limit_boot))
if [ "$mode" = boot ]; then
	nv=$(echo "$vmms" | tr ',' '\n' | wc -l) nc=$(echo "$consoles" | tr ',' '\n' | wc -l)
	limit_boot=60
	limit=$((120 + boots * nv * nc * 30))
fi
stall=90	# seconds without a console line (other than the outer kernel's lockup reports): wedged
log=$out/serial.log
: > "$log"
wedged=0
# run_outer REP Q ATTEMPT: boot the outer guest once, as the tests do
# (li_run_outer: the same stall rule, and the wedge report before a wedged
# guest is killed); its console goes to $part.
# Returns 0 when it finished, 1 when it wedged (killed), 2 otherwise.
outer=$work/outer.cpio okver=$kver   # what li_run_outer boots
run_outer() {
	local rep=$1 q=$2
	part=$work/serial-r$1-q$2-a$3.log
	local append="console=ttyS0 panic=-1 rdinit=/init quiet bench.rounds=1 bench.rep=$rep bench.queues=$q bench.vmms=$vmms bench.tests=$tests bench.secs=$secs bench.timeout=$limit_boot"
	[ -z "$vmm_args" ] || append="$append bench.vmm_args=$vmm_args"
	[ "$mode" != boot ] || append="$append bench.mode=boot bench.boots=$boots bench.consoles=$consoles bench.bootlog=$bootlog${boot_args:+ bench.boot_args=$boot_args}"
	: > "$part"
	LI_STALL=$stall li_run_outer "$part" "$limit" "$append"
	[ "$st" = 125 ] && return 1
	echo "# outer qemu exit status $st" >> "$part"
	grep -aq 'OUTER: all rounds done' "$part" && return 0
	return 2
}
for ((rep = 0; rep < rounds; rep++)); do
	for q in $(echo "$queues" | tr ',' ' '); do
		for attempt in 1 2; do
			t0=$(date +%s)
			run_outer "$rep" "$q" "$attempt"; st=$?
			echo "bench/linux: round $((rep + 1))/$rounds q=$q attempt $attempt: $(grep -acE '^L(BENCH|BOOT) ' "$part") results, $(grep -acE '^L(BENCH|BOOT)-FAIL' "$part") failures, $(( $(date +%s) - t0 ))s$([ $st = 1 ] && echo ', outer guest WEDGED (killed)')$([ $st = 2 ] && echo ', outer guest ENDED EARLY')" >&2
			if [ $st != 0 ] && [ $attempt = 1 ]; then
				# Keep the log, drop its results: the pair is redone in a fresh outer guest.
				sed -E 's/^L(BENCH|BOOT)/DISCARDED-L\1/' "$part" >> "$log"
				why="ended early ($(tail -n 1 "$part" | sed 's/^# //'))"
				[ $st = 1 ] && why="wedged (no console line for ${stall}s)"
				echo "LBENCH-FAIL vmm=outer q=$q rep=$rep test=outer reason=outer guest $why; last inner/outer line: $(grep -av -E 'soft lockup|rcu_|^\s*$|^#' "$part" | tail -n 1 | cut -c1-100); round redone" >> "$log"
				wedged=$((wedged + 1))
				continue
			fi
			cat "$part" >> "$log"
			[ $st = 1 ] && echo "LBENCH-FAIL vmm=outer q=$q rep=$rep test=outer reason=outer guest wedged again (no console line for ${stall}s)" >> "$log"
			[ $st = 2 ] && echo "LBENCH-FAIL vmm=outer q=$q rep=$rep test=outer reason=outer guest ended without 'all rounds done'" >> "$log"
			break
		done
	done
done
t_end=$(date +%s)
echo "# run $((t_end - t_built))s, total $((t_end - t_start))s" >> "$log"
python3 "$here/report.py" --mode "$mode" --rounds "$rounds" --secs "$secs" --tests "$tests" \
	--build-secs $((t_built - t_start)) --run-secs $((t_end - t_built)) --load "$load0" --boot-args "$boot_args" --outer "$outer_version" \
	"$log" "$out" || die "report failed"
cat "$out/results.md"
grep -aqE 'L(BENCH|BOOT) ' "$log" || exit 1
exit 0
