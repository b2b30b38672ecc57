#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Pack the initramfs for Debian's own generic kernel as the inner guest
# (the debian-acpi case): busybox-static and inner-init (build-initramfs.sh)
# plus the virtio-mmio network modules of that kernel, decompressed, in load
# order in /modules (listed in /modules/order; inner-init insmods them before
# its checks).
#
# Debian's kernel has VIRTIO_MMIO=m and no VIRTIO_MMIO_CMDLINE_DEVICES: it
# finds minivmm's virtio-mmio devices only through ACPI (_HID "LNRO0005" in
# the DSDT), once virtio_mmio.ko is loaded. pvpanic-mmio.ko (PVPANIC_MMIO=m)
# finds minivmm's pvpanic port the same way (_HID "QEMU0001"): the pvpanic
# case panics on purpose once it is loaded.
#
# Usage: build-debian-initramfs.sh OUTPUT.cpio KVER
#   KVER  version of the kernel the modules are for (/lib/modules/KVER)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "build-debian-initramfs: error: $*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: $0 OUTPUT.cpio KVER"
out=$1 kver=$2
[ -d "/lib/modules/$kver" ] || die "/lib/modules/$kver missing (install linux-image-amd64)"

stage=$(mktemp -d "${TMPDIR:-/tmp}/minivmm-debian.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/modules"
: > "$stage/modules/order"
# modprobe --show-depends lists a module's dependencies first; virtio_net
# alone pulls in virtio_ring, virtio, failover and net_failover, but not
# virtio_mmio (the transport), so name it first.
for m in virtio_mmio virtio_net pvpanic-mmio; do
	deps=$(modprobe -S "$kver" --show-depends "$m" 2>&1) || die "modprobe -S $kver --show-depends $m: $deps"
	echo "$deps" | awk '$1 == "insmod" { print $2 }' |
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
# On 6.1: virtio_ring virtio virtio_mmio failover net_failover virtio_net
# pvpanic pvpanic-mmio.
got=$(tr '\n' ' ' < "$stage/modules/order"); got=${got% }
case " $got" in *" virtio_mmio.ko "*" virtio_net.ko "*" pvpanic-mmio.ko") ;; *) die "unexpected module order: $got" ;; esac

"$here/build-initramfs.sh" "$out" "$stage"
echo "build-debian-initramfs: $out for $kver (modules: $got)" >&2
