#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Build the inner test kernel (tinyconfig + inner.config) from Debian's
# linux-source-6.1, once per machine, into a cache outside the source tree:
#
#   ${MINIVMM_CACHE:-/var/cache/minivmm}/linux-inner-6.1/{bzImage,vmlinux,config}
#
# --variant NAME adds inner-NAME.config on top of inner.config and builds into
# linux-inner-6.1-NAME/ (same extracted source): e.g. acpi-nopci, the kernel
# with ACPI=y and PCI=n that must still find its NIC under minivmm's defaults.
#
# The cache is keyed by a hash of inner.config, the version of the
# linux-source-6.1 package and $recipe below (bump it when the way the kernel
# is built changes): change any of them and the kernel is rebuilt.
# Quick when cached; concurrent runs wait on a lock. Prints the cache directory
# on stdout as its last line.
#
# Usage: build-kernel.sh [--variant NAME] [--check-only]   (--check-only: verify a cached .config)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${MINIVMM_CACHE:-/var/cache/minivmm}
out=$cache/linux-inner-6.1
src=$out/src    # every variant builds from the one extracted tree
tarball=/usr/src/linux-source-6.1.tar.xz
fragments=$here/inner.config
variant=""
if [ "${1:-}" = --variant ]; then
	variant=$2; shift 2
	[ -f "$here/inner-$variant.config" ] || { echo "build-kernel: error: no $here/inner-$variant.config" >&2; exit 1; }
	fragments="$fragments $here/inner-$variant.config"
	out=$out-$variant
fi

log() { echo "build-kernel: $*" >&2; }
die() { echo "build-kernel: error: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "$tarball missing (scripts/install-deps.sh linux installs linux-source-6.1)"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
recipe=1
key=$( { cat $fragments; echo "$srcver recipe $recipe"; } | sha256sum | cut -c1-16)

# check_config CONFIG: every "CONFIG_X=y" / "# CONFIG_X is not set" line of
# the fragments must appear verbatim in the final .config (a later fragment's
# line for a symbol overrides an earlier one's).
check_config() {
	bad=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF "$line" "$1" || {
				sym=${line%%=*}
				got=$(grep -E "^$sym=|^# $sym is not set" "$1" || echo "absent")
				log "option $line wanted, .config has: $got"; bad=1; } ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			if grep -q "^$sym=" "$1"; then
				log "option $sym wanted off, .config has: $(grep "^$sym=" "$1")"; bad=1
			fi ;;
		esac
	done <<-EOF
	$(cat $fragments | awk '/^CONFIG_|^# CONFIG_.* is not set/ { s = $0; sub(/^# /, "", s); sub(/[= ].*/, "", s); last[s] = $0; order[++n] = s }
		END { for (i = 1; i <= n; i++) if (!(order[i] in done)) { done[order[i]] = 1; print last[order[i]] } }')
	EOF
	return $bad
}

mkdir -p "$cache" 2>/dev/null && [ -w "$cache" ] ||
	die "cannot write to the cache $cache (run as root or set MINIVMM_CACHE to a writable directory)"
exec 9>"$cache/linux-inner-6.1.lock"
if ! flock -n 9; then
	log "another build holds $cache/linux-inner-6.1.lock, waiting"
	flock 9
fi

if [ "${1:-}" = --check-only ]; then
	check_config "$out/config" || die "cached config lacks wanted options"
	echo "$out"; exit 0
fi

if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] &&
   [ -f "$out/bzImage" ] && [ -f "$out/vmlinux" ]; then
	log "cached: $out (key $key)"
	echo "$out"; exit 0
fi

start=$(date +%s)
rm -f "$out/key"
if [ ! -f "$src/.extracted-$srcver" ]; then
	log "extracting $tarball ($srcver) into $src"
	rm -rf "$src"; mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	touch "$src/.extracted-$srcver"
fi

obj=$out/obj
mkdir -p "$obj"
log "configuring (tinyconfig + $fragments)"
make -s -C "$src" O="$obj" tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" $fragments >/dev/null
make -s -C "$src" O="$obj" olddefconfig >/dev/null
check_config "$obj/.config" || die "kconfig dropped wanted options (missing dependencies?), see above"

log "building with make -j$(nproc) (a few minutes; log in $out/build.log)"
if ! make -C "$src" O="$obj" -j"$(nproc)" bzImage vmlinux >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	die "kernel build failed, full log: $out/build.log"
fi
cp "$obj/arch/x86/boot/bzImage" "$out/bzImage.tmp" && mv "$out/bzImage.tmp" "$out/bzImage"
cp "$obj/vmlinux" "$out/vmlinux.tmp" && mv "$out/vmlinux.tmp" "$out/vmlinux"
cp "$obj/.config" "$out/config"
echo "$key" > "$out/key"
log "built in $(( $(date +%s) - start ))s: $out"
echo "$out"
