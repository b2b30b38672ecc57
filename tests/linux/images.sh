# SPDX-License-Identifier: Apache-2.0
# Images for the nested Linux tests (bash; sourced by tests/linux/run.sh and
# tests/linux/count.sh). Each function builds one piece, or finds it cached,
# and sets variables; on failure it sets the *_err variable (one line) and
# returns non-zero. Needs $repo, $work (scratch) and $logs (build logs).

# li_inner_kernel: kdir (holds bzImage and vmlinux), or kdir_err.
li_inner_kernel() {
	local klog=$logs/kernel-build.log
	kdir="" kdir_err=""
	if ! kdir=$("$repo/guest-images/linux/build-kernel.sh" 2>"$klog" | tail -n 1) || [ ! -f "$kdir/bzImage" ]; then
		tail -n 5 "$klog" | sed 's/^/#   /'
		kdir_err="inner kernel build failed, see $klog"
		return 1
	fi
}

# li_inner_variants CASES: the inner kernel variants the cases need
# (guest-images/linux/inner-NAME.config; today acpi-nopci for the *-acpi-nopci
# cases), as "NAME=DIR" words in kvariants, or kvariants_err.
li_inner_variants() {
	kvariants="" kvariants_err=""
	local name dir
	for name in acpi-nopci; do
		case " $1 " in *"$name"*) ;; *) continue ;; esac
		if ! dir=$("$repo/guest-images/linux/build-kernel.sh" --variant "$name" 2>"$logs/kernel-$name-build.log" | tail -n 1) ||
		   [ ! -f "$dir/bzImage" ]; then
			tail -n 5 "$logs/kernel-$name-build.log" | sed 's/^/#   /'
			kvariants_err="inner kernel variant $name: build failed, see $logs/kernel-$name-build.log"
			return 1
		fi
		kvariants="$kvariants $name=$dir"
	done
}

# li_inner_initrd OUT: the inner initramfs with the network tools.
li_inner_initrd() {
	"$repo/guest-images/linux/build-initramfs.sh" --net-tools "$1" 2>"$logs/initramfs-build.log"
}

# li_debian CASES: deb_kernel and deb_initrd for debian-acpi and pvpanic when
# CASES has either, else nothing; deb_err says why not.
li_debian() {
	deb_kernel="" deb_initrd="" deb_err=""
	case " $1 " in *" debian-acpi "*|*" pvpanic "*) ;; *) return 0 ;; esac
	local kver=${LINUX_TEST_DEBIAN_KVER:-}
	if [ -z "$kver" ]; then
		kver=$(for k in /boot/vmlinuz-*; do
			v=${k#/boot/vmlinuz-}
			ls "/lib/modules/$v/kernel/drivers/virtio/virtio_mmio.ko"* >/dev/null 2>&1 && echo "$v"
		done | sort -V | tail -n 1)
	fi
	deb_initrd=$work/debian-initramfs.cpio
	if [ -z "$kver" ] || [ ! -r "/boot/vmlinuz-$kver" ]; then
		deb_err="no readable /boot/vmlinuz-* with virtio_mmio modules (install linux-image-amd64; reading /boot needs root)"
	elif ! "$repo/guest-images/linux/build-debian-initramfs.sh" "$deb_initrd" "$kver" 2>"$logs/debian-initramfs-build.log"; then
		deb_err="Debian inner initramfs build failed, see $logs/debian-initramfs-build.log"
	else
		deb_kernel=/boot/vmlinuz-$kver
		echo "# debian-acpi: inner kernel $deb_kernel, $(du -k "$deb_initrd" | cut -f1) KiB initramfs"
		return 0
	fi
	deb_initrd=""
	echo "# debian-acpi: $deb_err"
	return 1
}

# li_static_minivmm: vmm (a static minivmm, $LINUX_TEST_MINIVMM or built next
# to the normal build: BUILD=build -> build-static), or vmm_err.
li_static_minivmm() {
	vmm=${LINUX_TEST_MINIVMM:-} vmm_err=""
	if [ -z "$vmm" ]; then
		local base=${BUILD:-build}; base=${base%-san}
		case "$base" in /*) vmm=$base-static/minivmm ;; *) vmm=$repo/$base-static/minivmm ;; esac
		# SAN= : a sanitizer cannot link statically (make passes SAN down in MAKEFLAGS).
		# BUILD given on the command line overrides the Makefile's own "-static" suffix.
		if ! make -C "$repo" --no-print-directory STATIC=1 SAN= BUILD="$base-static" "$base-static/minivmm" \
			>"$logs/minivmm-build.log" 2>&1; then
			vmm_err="static minivmm build failed (make STATIC=1), see $logs/minivmm-build.log"
			grep -m 3 -E 'error|Error' "$logs/minivmm-build.log" | sed 's/^/#   /'
			vmm=""
		fi
	fi
	if [ -n "$vmm" ] && [ ! -x "$vmm" ]; then vmm_err="$vmm is not an executable"; vmm=""; fi
	[ -z "$vmm_err" ] || { echo "# $vmm_err"; return 1; }
}

# li_outer_kernel: okernel, the outer guest's kernel (Debian's, with kvm-amd), or okernel_err.
li_outer_kernel() {
	local kver=${LINUX_TEST_OUTER_KVER:-}
	okernel="" okernel_err="" okver=""
	if [ -z "$kver" ]; then
		kver=$(for k in /boot/vmlinuz-*; do
			v=${k#/boot/vmlinuz-}
			ls "/lib/modules/$v/kernel/arch/x86/kvm/kvm-amd.ko"* >/dev/null 2>&1 && echo "$v"
		done | sort -V | tail -n 1)
	fi
	if [ -z "$kver" ] || [ ! -r "/boot/vmlinuz-$kver" ]; then
		okernel_err="no readable outer kernel /boot/vmlinuz-* with kvm-amd modules (install linux-image-amd64; reading /boot needs root)"
		return 1
	fi
	okver=$kver okernel=/boot/vmlinuz-$kver
}

# li_failure_kind: a short name for how the nested boot whose console text
# (carriage returns removed) is on stdin ended without a PASS line: a whole
# run.sh attempt or one boot's segment of a count.sh outer log. One list of
# kinds for both, so a count and a test run name the same failure alike.
li_failure_kind() {
	local t
	t=$(cat)
	# Before minivmm ran, every lockup or wedge is the outer guest's own
	# (kvm-hold's KVM_CREATE_VM, docs/linux-guests.md).
	if ! echo "$t" | grep -q 'OUTER: run:'; then
		if ! echo "$t" | grep -q 'OUTER: init\|OUTER: case='; then echo "outer guest did not boot"
		elif echo "$t" | grep -q 'outer guest wedged'; then echo "outer guest wedged before the case began"
		else echo "outer guest died before the case began"
		fi
	# minivmm says so; under QEMU the outer init's flight recorder shows the
	# triple fault's own exit (QEMU -no-reboot exits 0 after one).
	elif echo "$t" | grep -q 'guest triple fault\|OUTER: flight: .*reason shutdown'; then echo "inner triple fault"
	elif echo "$t" | grep -q 'PANIC: double fault\|double fault:'; then echo "inner double fault"
	elif echo "$t" | grep -q 'Kernel panic'; then echo "inner panic"
	# A lockup in one of minivmm's own threads is the outer kernel's (the
	# int3 loops in docs/linux-guests.md), not a stall inside the inner
	# guest: in a vCPU thread the outer CPU never came back from KVM_RUN.
	elif echo "$t" | grep -qE 'soft lockup - CPU#[0-9]+ stuck for [0-9]+s! \[vcpu[0-9]+:'; then
		echo "outer guest wedged in minivmm's KVM_RUN"
	elif echo "$t" | grep -qE 'soft lockup - CPU#[0-9]+ stuck for [0-9]+s! \[(minivmm|net[0-9]+-(q[0-9]+|w[0-9]+|ctrl|link)|serial|signals|spawner):'; then
		echo "outer guest wedged in a minivmm thread"
	elif echo "$t" | grep -qE 'soft lockup|rcu.*stall'; then echo "inner stall"
	elif echo "$t" | grep -q 'MINIVMM-RESULT: FAIL watchdog'; then
		echo "inner hang (watchdog: $(echo "$t" | sed -n 's/.*stuck at: //p' | head -n 1))"
	elif echo "$t" | grep -q 'MINIVMM-RESULT: FAIL'; then
		echo "check failed: $(echo "$t" | sed -n 's/.*MINIVMM-RESULT: FAIL //p' | head -n 1 | cut -c1-60)"
	elif echo "$t" | grep -q 'minivmm: guest crashed'; then echo "inner crash"
	elif echo "$t" | grep -q 'outer guest wedged'; then echo "outer guest wedged"
	# The outer init ends every inner VMM's run (minivmm's or QEMU's) with
	# "OUTER: run-end vmm=V case=C iter=I exit=N seconds=S [timeout]".
	elif ! echo "$t" | grep -q 'OUTER: run-end '; then echo "outer guest died"
	elif echo "$t" | grep -q 'OUTER: run-end .* timeout'; then echo "inner hang (timeout)"
	elif echo "$t" | grep -q 'OUTER: run-end .* exit=0 '; then echo "reset before the result line"
	else echo "exit $(echo "$t" | sed -n 's/.*OUTER: run-end .* exit=\([^ ]*\).*/\1/p' | head -n 1), no result"
	fi
}

# li_outer_qemu: oqemu, the command (an array) that emulates the outer guest,
# or oqemu_err. By default QEMU from bookworm-backports, unpacked by
# tests/linux/outer-qemu.sh (why not the host's 7.2: docs/linux-guests.md,
# "The outer emulator"); $LINUX_TEST_OUTER_QEMU names another
# qemu-system-x86_64 (the host's own: LINUX_TEST_OUTER_QEMU=qemu-system-x86_64).
# One unpacked from Debian packages into DIR/usr/bin gets DIR's firmware (-L).
li_outer_qemu() {
	local bin=${LINUX_TEST_OUTER_QEMU:-} root
	oqemu=() oqemu_err=""
	if [ -z "$bin" ] && ! bin=$("$repo/tests/linux/outer-qemu.sh" --check-only 2>&1); then
		oqemu_err=$bin
		return 1
	fi
	if ! command -v "$bin" >/dev/null; then
		oqemu_err="outer emulator $bin not found (LINUX_TEST_OUTER_QEMU)"
		return 1
	fi
	oqemu=("$bin")
	root=$(cd "$(dirname "$(command -v "$bin")")/../.." && pwd)
	if [ "$root" != / ] && [ -d "$root/usr/share/qemu" ]; then
		oqemu+=(-L "$root/usr/share/qemu")
		[ -d "$root/usr/share/seabios" ] && oqemu+=(-L "$root/usr/share/seabios")
	fi
	return 0
}

# li_outer_kallsyms FILE: the outer kernel's text symbols ("address type
# name", _text among them) in FILE, unless it is there already. Debian's
# System.map is a stub, so a throwaway guest (busybox, this kernel, QEMU TCG)
# prints its /proc/kallsyms: offsets from _text are the same in every boot.
li_outer_kallsyms() {
	local file=$1 dir
	[ -s "$file" ] && return 0
	dir=$(mktemp -d) || return 1
	mkdir -p "$dir/root/bin" "$dir/root/proc"
	cp "${BUSYBOX:-/bin/busybox}" "$dir/root/bin/busybox" || { rm -rf "$dir"; return 1; }
	cat > "$dir/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
echo 0 > /proc/sys/kernel/kptr_restrict
echo KALLSYMS-BEGIN
/bin/busybox grep -E ' [tT] ' /proc/kallsyms | /bin/busybox grep -v '\['
echo KALLSYMS-END
/bin/busybox poweroff -f
INIT
	chmod +x "$dir/root/init"
	(cd "$dir/root" && find . | cpio -o -H newc 2>/dev/null) > "$dir/init.cpio"
	li_outer_qemu || { rm -rf "$dir"; return 1; }
	timeout 300 "${oqemu[@]}" -accel tcg -cpu max -m 1024 -M pc -display none -monitor none \
		-serial stdio -no-reboot -kernel "$okernel" -initrd "$dir/init.cpio" \
		-append "console=ttyS0 quiet rdinit=/init panic=-1" </dev/null 2>/dev/null |
		tr -d '\r' | sed -n '/KALLSYMS-BEGIN/,/KALLSYMS-END/p' | grep -E '^[0-9a-f]+ [tT] ' > "$file.tmp"
	rm -rf "$dir"
	[ -s "$file.tmp" ] && mv "$file.tmp" "$file"
}

# li_run_outer LOG LIMIT APPEND: boot the outer guest (QEMU TCG with SVM) on
# $outer, its console appended to LOG; sets st: QEMU's status, 124 when it
# ran out of LIMIT seconds, 125 when it "wedged": no console line other than
# the outer kernel's lockup reports for $LI_STALL seconds (default 90; QEMU
# TCG's nested SVM sometimes freezes the whole outer guest). Before a wedged
# guest is killed, tests/linux/wedge_report.py writes into LOG what its vCPUs
# were doing (through QEMU's monitor on a unix socket).
li_run_outer() {
	local log=$1 limit=$2 append=$3 qpid n last=-1 quiet=0 stall=${LI_STALL:-90}
	local accel=${LINUX_TEST_OUTER_ACCEL:-tcg} mon
	mon=$(mktemp -u "${TMPDIR:-/tmp}/li-monitor.XXXXXX")
	li_outer_qemu || { echo "# $oqemu_err" >> "$log"; st=2; return; }
	echo "# ${oqemu[*]} -accel $accel -cpu max -smp 2 -m 2048 -M pc -nographic -no-reboot -kernel $okernel -initrd $outer -append '$append'" >> "$log"
	timeout -k 5 "$limit" "${oqemu[@]}" -accel "$accel" -cpu max -smp 2 -m 2048 -M pc \
		-display none -monitor "unix:$mon,server=on,wait=off" -serial stdio -no-reboot \
		-kernel "$okernel" -initrd "$outer" -append "$append" </dev/null >>"$log" 2>&1 &
	qpid=$!
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 2
		n=$(grep -avc -E 'soft lockup|rcu_|^\s*$' "$log")
		if [ "$n" = "$last" ]; then quiet=$((quiet + 2)); else quiet=0; last=$n; fi
		if [ "$quiet" -ge "$stall" ]; then
			echo "# no console line for ${stall}s: outer guest wedged; what it was doing:" >> "$log"
			li_outer_kallsyms "$work/outer-kallsyms-$okver.txt"
			"$repo/tests/linux/wedge_report.py" "$mon" "$qpid" \
				"$okver" "$log" "$work/outer-kallsyms-$okver.txt" >> "$log" 2>&1
			echo "# outer guest wedged, killed" >> "$log"
			kill "$qpid" 2>/dev/null; wait "$qpid"
			rm -f "$mon"
			st=125
			return
		fi
	done
	wait "$qpid"
	st=$?
	rm -f "$mon"
}
