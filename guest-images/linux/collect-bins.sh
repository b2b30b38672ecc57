#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Copy dynamically linked host programs into a root tree together with every
# shared library they load (from ldd) and the dynamic loader, at the same
# paths, so that they run in an initramfs with no libc of its own.
#
# Usage: collect-bins.sh DESTDIR PROGRAM[=DEST_PATH]...
#   PROGRAM    a name looked up in PATH (plus /sbin and /usr/sbin) or a path
#   DEST_PATH  where it goes inside DESTDIR (default: its host path)
# e.g.  collect-bins.sh /tmp/tree iperf3 ethtool /usr/sbin/ip=/usr/libexec/iproute2/ip
set -eu

die() { echo "collect-bins: error: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 DESTDIR PROGRAM[=DEST_PATH]..."
dest=$1; shift
mkdir -p "$dest"

for spec in "$@"; do
	prog=${spec%%=*}
	to=""; case "$spec" in *=*) to=${spec#*=} ;; esac
	path=$(PATH="$PATH:/sbin:/usr/sbin" command -v "$prog" 2>/dev/null) ||
		die "$prog not found (install the Debian package that has it: ethtool, iperf3, iproute2)"
	path=$(readlink -f "$path")
	[ -n "$to" ] || to=$path
	mkdir -p "$dest$(dirname "$to")"
	cp "$path" "$dest$to"
	# ldd lines: "libx.so.1 => /lib/.../libx.so.1 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)".
	ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
	while read -r lib; do
		# Copy the file under the name the program asks for (symlinks resolved).
		[ -e "$dest$lib" ] && continue
		mkdir -p "$dest$(dirname "$lib")"
		cp -L "$lib" "$dest$lib"
	done
done
# Debian's loader is /lib64/ld-linux-x86-64.so.2 and the libraries live in
# /lib/x86_64-linux-gnu: with a merged /usr both are reached through /lib,
# which the copies above already created as real directories.
echo "collect-bins: $dest: $(find "$dest" -type f | wc -l) files, $(du -sk "$dest" | cut -f1) KiB" >&2
