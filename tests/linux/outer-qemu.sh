#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The emulator of the nested Linux tests' outer guest: QEMU from Debian 12's
# bookworm-backports, unpacked (not installed) into
# ${MINIVMM_CACHE:-/var/cache/minivmm}/outer-qemu. Prints the path of its
# qemu-system-x86_64.
#
#   tests/linux/outer-qemu.sh               fetch and unpack it if it is not there
#   tests/linux/outer-qemu.sh --check-only  print the path if it is there, else fail
#
# Why not the host's QEMU 7.2: under 7.2's TCG the outer guest, or the inner
# one through 7.2's SVM emulation, wedged or triple-faulted in several percent
# of the nested boots, whatever the inner VMM (docs/linux-guests.md, "The
# outer emulator"). The host's own qemu-system-x86 (7.2) stays installed and
# untouched: it is the benchmark's peer and the inner comparison VMM.
#
# The backports suite is added to apt's sources if it is not there yet;
# Debian marks it NotAutomatic, so it upgrades nothing by itself.
set -eu
cache=${MINIVMM_CACHE:-/var/cache/minivmm}
dir=$cache/outer-qemu
suite=bookworm-backports
pkgs="qemu-system-x86 qemu-system-data seabios"
bin=$dir/usr/bin/qemu-system-x86_64

die() { echo "outer-qemu: $*" >&2; exit 1; }

usable() { [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; }

if [ "${1:-}" = --check-only ]; then
	usable || die "no outer emulator in $dir (scripts/install-deps.sh linux fetches it)"
	echo "$bin"
	exit 0
fi
[ $# -eq 0 ] || die "usage: $0 [--check-only]"
usable && { echo "$bin"; exit 0; }
[ "$(id -u)" = 0 ] || die "QEMU from $suite is not unpacked in $dir yet (run as root to fetch it)"
mkdir -p "$cache"
exec 9>"$cache/outer-qemu.lock"
flock 9
usable && { echo "$bin"; exit 0; }

# apt's own Debian mirror, with the backports suite beside it.
if ! apt-cache policy 2>/dev/null | grep -q " $suite/main "; then
	mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
	[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
	echo "outer-qemu: adding $suite ($mirror) to apt's sources" >&2
	cat > /etc/apt/sources.list.d/minivmm-backports.sources <<EOF
# Added by minivmm's tests/linux/outer-qemu.sh: QEMU for the nested Linux
# tests' outer guest is unpacked from here, not installed.
Types: deb
URIs: $mirror
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	apt-get update -q >/dev/null || die "apt-get update failed with $suite added"
fi

tmp=$(mktemp -d "$cache/outer-qemu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "outer-qemu: fetching $pkgs from $suite" >&2
# shellcheck disable=SC2046
(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root $(for p in $pkgs; do echo "$p/$suite"; done) >/dev/null) ||
	die "apt-get download of $pkgs from $suite failed"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
missing=$(ldd "$tmp/root/usr/bin/qemu-system-x86_64" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
[ -z "$missing" ] || die "QEMU from $suite needs libraries this machine lacks: $missing(install qemu-system-x86 first)"
"$tmp/root/usr/bin/qemu-system-x86_64" --version | head -n 1 > "$tmp/root/VERSION" ||
	die "QEMU from $suite does not run"
rm -rf "$dir"
mv "$tmp/root" "$dir"
echo "outer-qemu: $(cat "$dir/VERSION") in $dir" >&2
echo "$bin"
