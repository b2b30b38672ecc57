#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Check, without installing anything, that what `make` needs is on the
# machine; name the Debian package of whatever is missing, in one line.
# `scripts/install-deps.sh` installs them (the README's first step).
#
#   scripts/check-build-deps.sh [xdp=0|1] [hostnet=0|1] [api=0|1] [static=0|1] [unit=0|1]
#
# CC (default cc) is the compiler the build uses: each header is checked by
# preprocessing an #include of it with that compiler and its CPPFLAGS.
set -u
cc=${CC:-cc}
xdp=1 hostnet=1 api=1 static=0 unit=1
for a in "$@"; do
	case "$a" in
	xdp=*) xdp=${a#xdp=} ;;
	hostnet=*) hostnet=${a#hostnet=} ;;
	api=*) api=${a#api=} ;;
	static=*) static=${a#static=} ;;
	unit=*) unit=${a#unit=} ;;
	*) echo "check-build-deps.sh: unknown argument '$a'" >&2; exit 2 ;;
	esac
done

# header  Debian package
need="liburing.h:liburing-dev libfdt.h:libfdt-dev seccomp.h:libseccomp-dev jansson.h:libjansson-dev"
[ "$api" = 1 ] && need="$need microhttpd.h:libmicrohttpd-dev"
[ "$hostnet" = 1 ] && need="$need libmnl/libmnl.h:libmnl-dev"
[ "$unit" = 1 ] && need="$need criterion/criterion.h:libcriterion-dev"
[ "$xdp" = 1 ] && need="$need xdp/libxdp.h:libxdp-dev bpf/libbpf.h:libbpf-dev"
[ "$xdp" = 1 ] && [ "$static" = 1 ] && need="$need libelf.h:libelf-dev zlib.h:zlib1g-dev"

missing="" pkgs=""
if ! command -v "${cc%% *}" >/dev/null 2>&1; then
	missing=" $cc" pkgs=" gcc"
else
	for pair in $need; do
		h=${pair%%:*} p=${pair#*:}
		# shellcheck disable=SC2086
		printf '#include <%s>\n' "$h" | $cc ${CPPFLAGS:-} -E -x c - >/dev/null 2>&1 && continue
		missing="$missing $h" pkgs="$pkgs $p"
	done
fi
for tool in ld:binutils objcopy:binutils nm:binutils ar:binutils; do
	command -v "${tool%%:*}" >/dev/null 2>&1 && continue
	missing="$missing ${tool%%:*}"
	case " $pkgs " in *" ${tool#*:} "*) ;; *) pkgs="$pkgs ${tool#*:}" ;; esac
done
# A static link with host networking needs libmnl.a, which Debian's
# libmnl-dev does not ship (HOSTNET=0 is STATIC=1's default for that).
if [ -z "$missing" ] && [ "$static" = 1 ] && [ "$hostnet" = 1 ] &&
	[ "$($cc -print-file-name=libmnl.a)" = libmnl.a ]; then
	echo "minivmm build: STATIC=1 HOSTNET=1 needs libmnl.a, which Debian's libmnl-dev does not ship: build libmnl from its source, or leave HOSTNET=0" >&2
	exit 1
fi
# A static link with the API socket needs libmicrohttpd.a's gnutls, and
# gnutls's p11-kit has no static library in Debian (API_SOCKET=0 is
# STATIC=1's default for that).
if [ -z "$missing" ] && [ "$static" = 1 ] && [ "$api" = 1 ] &&
	[ "$($cc -print-file-name=libp11-kit.a)" = libp11-kit.a ]; then
	echo "minivmm build: STATIC=1 API_SOCKET=1 needs a static libmicrohttpd and its gnutls, whose p11-kit Debian ships no libp11-kit.a for: build libmicrohttpd without TLS from its source, or leave API_SOCKET=0" >&2
	exit 1
fi
[ -z "$missing" ] && exit 0
echo "minivmm build: missing$missing: install the Debian package(s)$pkgs (scripts/install-deps.sh does)" >&2
exit 1
