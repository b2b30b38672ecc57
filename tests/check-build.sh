#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What a packager relies on, checked on a copy of the tree without git (as
# a release tarball is):
#   - a missing build dependency stops `make` with one line naming the
#     Debian package, and nothing is installed;
#   - Debian's own build flags (dpkg-buildflags: CPPFLAGS with
#     -D_FORTIFY_SOURCE=2, hardening CFLAGS and LDFLAGS) are honoured and
#     build cleanly with -Werror; XDP=0 builds without libxdp/libbpf and
#     HOSTNET=0 without libmnl, API_SOCKET=0 without libmicrohttpd,
#     --version says so and reports the VERSION
#     file, and xdp=, ip= and bridge= are refused in one line saying why;
#   - make install DESTDIR=... puts the files in place, make uninstall
#     takes every one of them away again;
#   - make clean removes every build directory.
# Usage: tests/check-build.sh   (from anywhere; needs git, make, a compiler)
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/minivmm-check-build.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "check-build: $*" >&2; exit 1; }
jobs=$(nproc 2>/dev/null || echo 2)

# The working tree as it is (committed or not), without .git.
src=$tmp/src
mkdir -p "$src"
if command -v git >/dev/null 2>&1 && git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
	(cd "$repo" && git ls-files --cached --others --exclude-standard -z | xargs -0 tar cf -) | tar xf - -C "$src"
else   # a release tarball: everything but the build directories
	(cd "$repo" && tar cf - --exclude='./build*' --exclude=./.git .) | tar xf - -C "$src"
fi
[ ! -e "$src/.git" ] || fail "the copy has a .git"

# 1. A missing header: one line, naming the package; nothing built.
cat > "$tmp/cc" <<'CC'
#!/bin/sh
# A compiler on which liburing.h is missing.
for a in "$@"; do [ "$a" = - ] && { grep -q liburing.h && exit 1; exec gcc "$@"; }; done
exec gcc "$@"
CC
chmod +x "$tmp/cc"
if make -s -C "$src" CC="$tmp/cc" BUILD="$tmp/b-missing" all >"$tmp/missing.out" 2>&1; then
	fail "make succeeded with liburing.h missing"
fi
grep -q '^minivmm build: missing liburing.h: install the Debian package(s) liburing-dev' "$tmp/missing.out" ||
	fail "no line naming liburing-dev: $(cat "$tmp/missing.out")"
[ ! -e "$tmp/b-missing/obj" ] || fail "objects were built although a dependency is missing"

# 2. dpkg-buildflags, -Werror on, XDP=0 HOSTNET=0 API_SOCKET=0: the program and the libraries.
flags_cpp=$(dpkg-buildflags --get CPPFLAGS 2>/dev/null || echo "-D_FORTIFY_SOURCE=2")
flags_c=$(dpkg-buildflags --get CFLAGS 2>/dev/null || echo "-O2 -g -fstack-protector-strong")
flags_ld=$(dpkg-buildflags --get LDFLAGS 2>/dev/null || echo "-Wl,-z,relro -Wl,-z,now")
case "$flags_cpp" in *_FORTIFY_SOURCE*) ;; *) fail "dpkg-buildflags gave no _FORTIFY_SOURCE: $flags_cpp" ;; esac
make -s -C "$src" -j"$jobs" XDP=0 HOSTNET=0 API_SOCKET=0 BUILD=build CPPFLAGS="$flags_cpp" CFLAGS="$flags_c" LDFLAGS="$flags_ld" \
	build/minivmm build/libminivmm.a >"$tmp/build.out" 2>&1 || { cat "$tmp/build.out" >&2; fail "the build with dpkg-buildflags, XDP=0, HOSTNET=0 and API_SOCKET=0 failed"; }
if nm -D "$src/build/minivmm" 2>/dev/null | grep -q '__memcpy_chk\|__snprintf_chk\|__read_chk\|__sprintf_chk'; then :; else
	fail "no fortified calls in the binary: CPPFLAGS were not used"
fi
ldd "$src/build/minivmm" | grep -q 'libxdp\|libbpf' && fail "XDP=0 binary links libxdp/libbpf"
ldd "$src/build/minivmm" | grep -q 'libmnl' && fail "HOSTNET=0 binary links libmnl"
ldd "$src/build/minivmm" | grep -q 'libmicrohttpd' && fail "API_SOCKET=0 binary links libmicrohttpd"
"$src/build/minivmm" --version >"$tmp/version.out"
want="minivmm $(cat "$src/VERSION")"
[ "$(head -n1 "$tmp/version.out")" = "$want" ] || fail "--version says '$(head -n1 "$tmp/version.out")', not '$want'"
grep -q '^AF_XDP backend: no' "$tmp/version.out" || fail "--version does not say AF_XDP is left out"
if "$src/build/minivmm" --kernel /nonexistent --net xdp=eth0 >"$tmp/xdp.out" 2>&1; then fail "xdp= accepted by an XDP=0 build"; fi
grep -q 'built without AF_XDP' "$tmp/xdp.out" || fail "xdp= refused without saying why: $(cat "$tmp/xdp.out")"
grep -q '^host networking (ip=, bridge=, link events): no' "$tmp/version.out" ||
	fail "--version does not say host networking is left out"
for kv in ip=10.0.0.1/24 bridge=br0; do
	if "$src/build/minivmm" --kernel /nonexistent --net "tap,$kv" >"$tmp/hostnet.out" 2>&1; then fail "$kv accepted by a HOSTNET=0 build"; fi
	[ "$(wc -l <"$tmp/hostnet.out")" = 1 ] && grep -q "built without host networking" "$tmp/hostnet.out" ||
		fail "$kv refused without one line saying why: $(cat "$tmp/hostnet.out")"
done

grep -q '^API socket (--api-socket): no' "$tmp/version.out" || fail "--version does not say the API socket is left out"
if "$src/build/minivmm" --kernel /nonexistent --api-socket "$tmp/api.sock" >"$tmp/api.out" 2>&1; then
	fail "--api-socket accepted by an API_SOCKET=0 build"
fi
[ "$(wc -l <"$tmp/api.out")" = 1 ] && grep -q "built without the API socket" "$tmp/api.out" && [ ! -e "$tmp/api.sock" ] ||
	fail "--api-socket refused without one line saying why, or a file left: $(cat "$tmp/api.out")"

# 3. install, then uninstall, into a DESTDIR.
dest=$tmp/dest
make -s -C "$src" XDP=0 HOSTNET=0 BUILD=build CPPFLAGS="$flags_cpp" CFLAGS="$flags_c" LDFLAGS="$flags_ld" \
	DESTDIR="$dest" PREFIX=/usr install >"$tmp/install.out" 2>&1 || { cat "$tmp/install.out" >&2; fail "make install failed"; }
grep -q "^Libs.private: -luring -lfdt -lseccomp -ljansson -lpthread$" "$dest/usr/lib/pkgconfig/minivmm.pc" ||
	fail "minivmm.pc of an XDP=0 HOSTNET=0 build: $(grep Libs.private "$dest/usr/lib/pkgconfig/minivmm.pc")"
for f in usr/bin/minivmm usr/lib/libminivmm.a usr/lib/libminivmm.so usr/include/minivmm.h \
	 usr/lib/pkgconfig/minivmm.pc usr/share/man/man1/minivmm.1 usr/share/doc/minivmm/embedding.md \
	 usr/share/doc/minivmm/LICENSE; do
	[ -e "$dest/$f" ] || fail "make install did not install /$f"
done
objdump -T "$dest/usr/lib/libminivmm.so" | grep -q "MINIVMM_$(sed -n 's/^#define MINIVMM_API_VERSION_MAJOR *//p' "$src/include/minivmm.h")" ||
	fail "the shared library's symbol version does not match its soname"
make -s -C "$src" XDP=0 HOSTNET=0 BUILD=build DESTDIR="$dest" PREFIX=/usr uninstall >/dev/null 2>&1 || fail "make uninstall failed"
left=$(if [ -d "$dest" ]; then cd "$dest" && find . -mindepth 1 | head -5; fi)
[ -z "$left" ] || fail "make uninstall left: $left"

# 4. make clean takes every build directory.
mkdir -p "$src/build-san" "$src/build-tsan" "$src/build-static" "$src/build-fuzz"
make -s -C "$src" clean >/dev/null 2>&1
for d in build build-san build-tsan build-static build-fuzz; do
	[ ! -e "$src/$d" ] || fail "make clean left $d"
done
echo "check-build: missing dependency named, dpkg-buildflags + XDP=0 HOSTNET=0 API_SOCKET=0 build, --version, install/uninstall, clean: ok"
