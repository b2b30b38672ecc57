#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Pack the inner test guest's initramfs: busybox-static, /init = inner-init.
# Uncompressed newc cpio (nothing to decompress under emulation), packed
# without root rights: the image has no device nodes, /init takes its console
# from devtmpfs.
#
# Usage: build-initramfs.sh [--net-tools] OUTPUT.cpio [EXTRA_DIR...]
#   --net-tools  add Debian's iperf3 and ethtool with their shared libraries
#                and the dynamic loader (collect-bins.sh), for the net check
#   Each EXTRA_DIR is copied over the image root.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "build-initramfs: error: $*" >&2; exit 1; }

net_tools=0
[ "${1:-}" = --net-tools ] && { net_tools=1; shift; }
[ $# -ge 1 ] || die "usage: $0 [--net-tools] OUTPUT.cpio [EXTRA_DIR...]"
out=$1; shift
busybox=${BUSYBOX:-/bin/busybox}
[ -x "$busybox" ] || die "$busybox missing (install busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	ldd "$busybox" 2>&1 | grep -q 'not a dynamic' || die "$busybox is not static (install busybox-static)"

stage=$(mktemp -d "${TMPDIR:-/tmp}/minivmm-inner.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/sbin" "$stage/usr/bin" "$stage/usr/sbin" \
	"$stage/dev" "$stage/proc" "$stage/sys" "$stage/tmp" "$stage/etc" "$stage/root"
cp "$busybox" "$stage/bin/busybox"
for applet in $("$busybox" --list); do
	[ -e "$stage/bin/$applet" ] || ln -s busybox "$stage/bin/$applet"
done
cp "$here/inner-init" "$stage/init"
chmod 0755 "$stage/init"
if [ $net_tools = 1 ]; then
	"$here/collect-bins.sh" "$stage" iperf3 ethtool || die "cannot collect iperf3 and ethtool"
fi
for extra in "$@"; do
	[ -d "$extra" ] || die "extra tree $extra is not a directory"
	cp -a "$extra/." "$stage/"
done

mkdir -p "$(dirname "$out")"
(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio --quiet -o -H newc --owner=0:0) > "$out.tmp.$$"
mv "$out.tmp.$$" "$out"
echo "build-initramfs: $out ($(du -k "$out" | cut -f1) KiB)" >&2
