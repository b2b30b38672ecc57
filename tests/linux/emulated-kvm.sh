#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Run a command where /dev/kvm exists, on a host where it does not: QEMU TCG
# (tests/linux/outer-qemu.sh's) boots Debian's bookworm-backports kernel
# with SVM, kvm-amd gives /dev/kvm inside it, and the command runs there in
# this host's own root file system (shared read-only over 9p, with a tmpfs
# overlay for writes), so the project's build and tools are the same ones.
# For developers only: functional checks, never figures (every guest runs
# nested under an emulator, ~5-10x slower; CPU and timing limits of a few
# tests fail for that reason alone).
#
#   tests/linux/emulated-kvm.sh 'BUILD=build tests/integration/run.sh "boot*"'
#
# The command runs with bash in the project's directory; its output is
# printed when the guest has stopped, and its exit status is returned (3:
# the emulated guest itself died first, its kernel's last words printed).
# A backports kernel (6.12) rather than bookworm's 6.1: the packet backend
# needs PACKET_VNET_HDR_SZ (6.2). Its package is fetched with apt-get
# download and unpacked (not installed) into
# ${MINIVMM_CACHE:-/var/cache/minivmm}/emulated-kvm. Needs root.
# EMULATED_KVM_LIMIT: seconds before the guest is stopped (default 3600).
# EMULATED_KVM_KEEP: paths inside the project (relative to it, space
# separated) that the command writes and that must outlive the guest (its
# writes go to a tmpfs overlay): copied back here once it has stopped, e.g.
# bench/out (tests/with-kvm.sh sets it for bench/run.sh).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${MINIVMM_CACHE:-/var/cache/minivmm}/emulated-kvm
die() { echo "emulated-kvm: $*" >&2; exit 2; }
[ $# -eq 1 ] || die "usage: $0 'COMMAND'"
[ "$(id -u)" = 0 ] || die "needs root (9p shares, the kernel package)"
qemu=$("$repo/tests/linux/outer-qemu.sh")
share=$(dirname "$(dirname "$qemu")")/share

# --- the kernel: bookworm-backports' linux-image, unpacked once ---
mkdir -p "$cache"
kdir=$(ls -d "$cache"/root/lib/modules/*/ 2>/dev/null | head -n 1 || true)
if [ -z "$kdir" ]; then
	pkg=$(apt-cache depends -t bookworm-backports linux-image-amd64 2>/dev/null |
	      awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$pkg" ] || die "no linux-image in bookworm-backports (tests/linux/outer-qemu.sh adds the suite)"
	(cd "$cache" && apt-get download -q "$pkg" >/dev/null) || die "apt-get download $pkg failed"
	dpkg-deb -x "$cache"/"$pkg"_*.deb "$cache/root"
	rm -f "$cache"/*.deb
	kdir=$(ls -d "$cache"/root/lib/modules/*/ | head -n 1)
fi
kver=$(basename "$kdir")
[ -f "$kdir/modules.dep" ] || depmod -b "$cache/root" "$kver"
kernel=$cache/root/boot/vmlinuz-$kver

# --- the initramfs: busybox, 9p and overlayfs, then chroot into the host's root ---
work=$(mktemp -d /tmp/minivmm-emulated-kvm.XXXXXX)
trap 'rm -rf "$work"' EXIT
stage=$work/stage out=$work/out
mkdir -p "$stage"/{bin,mods,proc,sys,dev,lower,upper,new} "$out"
cp /bin/busybox "$stage/bin/" 2>/dev/null || die "no /bin/busybox (Debian package busybox-static)"
for m in virtio_pci 9pnet_virtio 9p overlay; do
	modprobe -d "$cache/root" -S "$kver" --show-depends "$m"
done | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' | while read -r f; do
	n=$(basename "$f"); n=${n%.xz}
	case "$f" in *.xz) xz -dc "$f" > "$stage/mods/$n" ;; *) cp "$f" "$stage/mods/$n" ;; esac
	echo "$n" >> "$stage/mods/order"
done
keep=
for p in ${EMULATED_KVM_KEEP:-}; do
	case "$p" in /* | *..*) die "EMULATED_KVM_KEEP: '$p' is not a path inside the project" ;; esac
	keep+=" $(printf '%q' "$p")"
done
cat > "$out/job.sh" <<EOF
cd '$repo' && { $1; }
rc=\$?
for p in$keep; do
	[ -e "\$p" ] || continue
	mkdir -p "/tmp/emulated-kvm-out/keep/\$(dirname "\$p")" && cp -a "\$p" "/tmp/emulated-kvm-out/keep/\$p"
done
exit \$rc
EOF
cat > "$stage/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in \$(cat /mods/order 2>/dev/null); do insmod /mods/\$m; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=1048576,cache=loose host /lower
mount -t tmpfs -o size=3g tmpfs /upper; mkdir -p /upper/u /upper/w
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w /new
mkdir -p /new/lib/modules/$kver && mount --bind /new$kdir /new/lib/modules/$kver
mount -t proc proc /new/proc; mount -t sysfs sys /new/sys; mount -t devtmpfs dev /new/dev
mkdir -p /new/dev/pts /new/dev/shm; mount -t devpts devpts /new/dev/pts; mount -t tmpfs tmpfs /new/dev/shm
ln -sf /proc/self/fd /new/dev/fd
mount -t tmpfs tmpfs /new/run; mkdir -p /new/run/netns /new/run/lock
mount -t cgroup2 cgroup2 /new/sys/fs/cgroup 2>/dev/null
mkdir -p /new/tmp/emulated-kvm-out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 out /new/tmp/emulated-kvm-out
chroot /new /bin/bash -c 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	modprobe kvm_amd && modprobe tun && modprobe veth && modprobe bridge
	bash /tmp/emulated-kvm-out/job.sh < /dev/null > /tmp/emulated-kvm-out/log 2>&1; echo \$? > /tmp/emulated-kvm-out/status'
sync
poweroff -f
EOF
chmod +x "$stage/init"
(cd "$stage" && find . | cpio -o -H newc 2>/dev/null) > "$work/initrd.cpio"

# (QEMU's complaints about the host QEMU's modules, another build, go to qemu.err.)
timeout -k 5 "${EMULATED_KVM_LIMIT:-3600}" "$qemu" -L "$share/qemu" -L "$share/seabios" \
	-accel tcg -cpu max -smp 2 -m 6144 -M pc -display none -no-reboot -serial file:"$work/console.log" \
	-kernel "$kernel" -initrd "$work/initrd.cpio" -append "console=ttyS0 quiet panic=-1" \
	-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on \
	-virtfs local,path="$out",mount_tag=out,security_model=none 2>"$work/qemu.err" || true
cat "$out/log" 2>/dev/null || true
# What EMULATED_KVM_KEEP names, back where the command wrote it.
if [ -d "$out/keep" ]; then
	cp -a "$out/keep/." "$repo/" || echo "emulated-kvm: cannot copy back ${EMULATED_KVM_KEEP:-}" >&2
fi
if [ ! -f "$out/status" ]; then
	tail -n 5 "$work/qemu.err" >&2
	# The emulated kernel's last words: the first lines of a panic or oops, then the end.
	grep -m 12 -E 'BUG|Oops|panic|general protection|Call Trace|RIP:|Killed process|Out of memory' "$work/console.log" >&2
	tail -n 25 "$work/console.log" >&2
	echo "emulated-kvm: the emulated guest ended before the command did" >&2
	exit 3
fi
exit "$(cat "$out/status")"
