#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Pack the outer guest's initramfs (uncompressed newc cpio): busybox-static,
# the kvm-amd modules (decompressed) and tun, the inner kernel (bzImage and
# vmlinux) and initramfs, the static minivmm when given, iperf3 and iproute2's
# ip (as /usr/local/sbin/iproute2-ip: busybox ip has no tuntap) with their
# shared libraries for the network cases, kvm-hold (kvm_hold.c, built here),
# and outer-init as /init.
#
# Usage: build-outer.sh [--qemu] [--vmm NAME=PATH]... OUTPUT.cpio KVER INNER_KERNEL_DIR INNER_INITRAMFS [MINIVMM [DEB_KERNEL DEB_INITRAMFS]]
#   --qemu           add qemu-system-x86_64 with its libraries and microvm's firmware
#                    (outer-init's minivmm.vmms=...,qemu: QEMU microvm as the inner VMM)
#   --vmm NAME=PATH  add another static minivmm as /bin/NAME (a variant to compare)
#   --inner-variant NAME=DIR  add DIR/bzImage (an inner kernel variant,
#                    build-kernel.sh --variant NAME) as /inner/NAME/bzImage
#   KVER             version of the outer kernel (its modules come from /lib/modules/KVER)
#   INNER_KERNEL_DIR holds bzImage and vmlinux (guest-images/linux/build-kernel.sh)
#   MINIVMM          static minivmm binary; without it the outer guest reports
#                    "FAIL no minivmm binary" after checking /dev/kvm
#   DEB_KERNEL       Debian's generic bzImage (/boot/vmlinuz-KVER) for the debian-acpi
#   DEB_INITRAMFS    case, and its initramfs (guest-images/linux/build-debian-initramfs.sh);
#                    they go to /inner/debian/{vmlinuz,initramfs.cpio}
set -eu

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "build-outer: error: $*" >&2; exit 1; }

with_qemu=0 variants="" kvariants=""
while [ $# -gt 0 ]; do
	case "$1" in
	--qemu) with_qemu=1; shift ;;
	--vmm) variants="$variants $2"; shift 2 ;;
	--inner-variant) kvariants="$kvariants $2"; shift 2 ;;
	*) break ;;
	esac
done

[ $# -ge 4 ] || die "usage: $0 OUTPUT.cpio KVER INNER_KERNEL_DIR INNER_INITRAMFS [MINIVMM [DEB_KERNEL DEB_INITRAMFS]]"
out=$1 kver=$2 inner=$3 inner_initrd=$4 vmm=${5:-} deb_kernel=${6:-} deb_initrd=${7:-}
if [ -n "$deb_kernel" ]; then
	[ -r "$deb_kernel" ] || die "$deb_kernel is not readable (reading /boot/vmlinuz-* needs root on Debian)"
	[ -f "$deb_initrd" ] || die "Debian inner initramfs '$deb_initrd' missing"
fi
busybox=${BUSYBOX:-/bin/busybox}
[ -x "$busybox" ] || die "$busybox missing (install busybox-static)"
for f in "$inner/bzImage" "$inner/vmlinux" "$inner_initrd"; do
	[ -f "$f" ] || die "$f missing"
done
[ -d "/lib/modules/$kver" ] || die "/lib/modules/$kver missing (install linux-image-amd64)"
if [ -n "$vmm" ]; then
	[ -x "$vmm" ] || die "$vmm is not an executable"
	if ldd "$vmm" >/dev/null 2>&1; then
		die "$vmm is dynamically linked; the outer guest has no libc (build it with make STATIC=1)"
	fi
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/minivmm-outer.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/sbin" "$stage/usr/bin" "$stage/usr/sbin" "$stage/dev" \
	"$stage/proc" "$stage/sys" "$stage/tmp" "$stage/etc" "$stage/modules" "$stage/inner"
cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done
cp "$here/outer-init" "$stage/init"
chmod 0755 "$stage/init"

# Modules in load order (dependencies first), decompressed: busybox insmod
# does not read .ko.xz / .ko.zst.
: > "$stage/modules/order"
for m in kvm_amd tun; do
	modprobe -S "$kver" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" { print $2 }' |
	while read -r path; do
		name=$(basename "$path"); name=${name%.xz}; name=${name%.zst}; name=${name%.gz}
		grep -qxF "$name" "$stage/modules/order" && continue
		case "$path" in
		*.xz) xz -dc "$path" > "$stage/modules/$name" ;;
		*.zst) zstd -qdc "$path" > "$stage/modules/$name" ;;
		*.gz) gzip -dc "$path" > "$stage/modules/$name" ;;
		*) cp "$path" "$stage/modules/$name" ;;
		esac
		echo "$name" >> "$stage/modules/order"
	done
done
grep -qx 'kvm-amd.ko' "$stage/modules/order" || die "modprobe -S $kver found no kvm-amd module"

cp "$inner/bzImage" "$inner/vmlinux" "$stage/inner/"
for v in $kvariants; do
	name=${v%%=*} dir=${v#*=}
	[ -f "$dir/bzImage" ] || die "--inner-variant $v: no $dir/bzImage"
	mkdir -p "$stage/inner/$name"
	cp "$dir/bzImage" "$stage/inner/$name/bzImage"
done
cp "$inner_initrd" "$stage/inner/initramfs.cpio"
if [ -n "$deb_kernel" ]; then
	mkdir -p "$stage/inner/debian"
	cp "$deb_kernel" "$stage/inner/debian/vmlinuz"
	cp "$deb_initrd" "$stage/inner/debian/initramfs.cpio"
fi
[ -z "$vmm" ] || cp "$vmm" "$stage/bin/minivmm"
# kvm-hold (outer-init keeps one VM open with it; see the file).
${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$stage/bin/kvm-hold" "$here/kvm_hold.c" ||
	die "cannot build kvm-hold (a C compiler and libc6-dev are needed)"
for v in $variants; do
	name=${v%%=*} path=${v#*=}
	[ -x "$path" ] || die "--vmm $v: $path is not an executable"
	! ldd "$path" >/dev/null 2>&1 || die "--vmm $v: $path is dynamically linked (make STATIC=1)"
	cp "$path" "$stage/bin/$name"
done
if [ "$with_qemu" = 1 ]; then
	"$here/../../guest-images/linux/collect-bins.sh" "$stage" qemu-system-x86_64 ||
		die "cannot collect qemu-system-x86_64 (install qemu-system-x86)"
	# microvm's default firmware: qboot (bios-microvm.bin is a link to qboot.rom on Debian).
	mkdir -p "$stage/usr/share/qemu"
	for f in bios-microvm.bin qboot.rom; do
		[ -e "/usr/share/qemu/$f" ] && cp -L "/usr/share/qemu/$f" "$stage/usr/share/qemu/$f"
	done
	[ -e "$stage/usr/share/qemu/bios-microvm.bin" ] || die "/usr/share/qemu/bios-microvm.bin missing (qemu-system-data)"
fi
"$here/../../guest-images/linux/collect-bins.sh" "$stage" iperf3 ip=/usr/local/sbin/iproute2-ip ||
	die "cannot collect iperf3 and ip (install iperf3 and iproute2)"

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc --owner=0:0) > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "build-outer: $out ($(du -k "$out" | cut -f1) KiB; modules: $(tr '\n' ' ' < "$stage/modules/order"))" >&2
