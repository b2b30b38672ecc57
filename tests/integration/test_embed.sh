# SPDX-License-Identifier: Apache-2.0
# libminivmm as an embedding program sees it: `make install` into a scratch
# DESTDIR, the examples (docs/examples/) built against the installed header
# with pkg-config, linked once against the shared and once against the
# static library, and run in a network namespace the test creates.

. tests/integration/netns.sh
NETPEER="$BUILD/tools/netpeer"
EMBED_ROOT="$TMP_ROOT/embed-root"     # the DESTDIR, shared by the tests of one run
EMBED_BIN="$TMP_ROOT/embed-bin"
# The soname's major version and the minor (additions), as the header states them.
LIB_MAJOR=$(sed -n 's/^#define MINIVMM_API_VERSION_MAJOR *//p' include/minivmm.h)
LIB_MINOR=$(sed -n 's/^#define MINIVMM_API_VERSION_MINOR *//p' include/minivmm.h)

# embed_install: install once per run (the tests run in subshells, so the
# installed tree is the marker); point pkg-config into it.
embed_install() {
	if [ ! -f "$EMBED_ROOT/usr/lib/pkgconfig/minivmm.pc" ]; then
		mkdir -p "$EMBED_ROOT" "$EMBED_BIN"
		"${MAKE:-make}" -s --no-print-directory install DESTDIR="$EMBED_ROOT" PREFIX=/usr \
			BUILD="$BUILD" SAN="${SAN:-}" > "$TMP_ROOT/embed-install.log" 2>&1 ||
			{ fail "make install failed: $(tail -c 600 "$TMP_ROOT/embed-install.log" | tr '\n' '|')"; return 1; }
	fi
	export PKG_CONFIG_SYSROOT_DIR="$EMBED_ROOT" PKG_CONFIG_PATH="$EMBED_ROOT/usr/lib/pkgconfig"
	local pc
	pc=$(pkg-config --path minivmm 2>&1)
	[ "$pc" = "$EMBED_ROOT/usr/lib/pkgconfig/minivmm.pc" ] ||
		{ fail "pkg-config finds '$pc', not the installed minivmm.pc"; return 1; }
}

# embed_build SRC MODE: build SRC against the installed library, MODE shared
# or static; prints the binary's path. Under SAN the program is built with
# the same sanitizers as the library it links.
embed_build() {
	local src=$1 mode=$2 name out log libs
	name=$(basename "$src" .c)
	out="$EMBED_BIN/$name.$mode"
	log="$EMBED_BIN/$name.$mode.log"
	local flags=(-std=gnu11 -O2 -Wall -Wextra -Werror)
	[ -n "${SAN:-}" ] && flags+=("-fsanitize=$SAN")
	if [ "$mode" = shared ]; then
		# shellcheck disable=SC2046
		cc "${flags[@]}" -o "$out" "$src" $(pkg-config --cflags --libs minivmm) > "$log" 2>&1
	else
		# The archive, not the .so next to it; then its private libraries.
		libs=$(pkg-config --static --libs-only-l minivmm | sed 's/-lminivmm//')
		# shellcheck disable=SC2046,SC2086
		cc "${flags[@]}" -o "$out" "$src" $(pkg-config --cflags minivmm) \
			-Wl,-Bstatic $(pkg-config --libs-only-L minivmm) -lminivmm -Wl,-Bdynamic $libs \
			> "$log" 2>&1
	fi || { fail "cannot build $name ($mode): $(tr '\n' '|' < "$log" | tail -c 600)" >&2; return 1; }
	# Built against the installed header, not the source tree's.
	cc -M $(pkg-config --cflags minivmm) "$src" 2> /dev/null | grep -q "$EMBED_ROOT/usr/include/minivmm.h" ||
		{ fail "$name does not include the installed minivmm.h"; return 1; }
	if [ "$mode" = shared ]; then
		LD_LIBRARY_PATH="$EMBED_ROOT/usr/lib" ldd "$out" | grep -q "libminivmm.so.$LIB_MAJOR => $EMBED_ROOT/usr/lib/" ||
			{ fail "$name.shared does not load the installed libminivmm.so.$LIB_MAJOR: $(ldd "$out" | tr '\n' ' ')"; return 1; }
	else
		! ldd "$out" | grep -q libminivmm ||
			{ fail "$name.static still needs libminivmm.so"; return 1; }
	fi
	echo "$out"
}

# embed_run BIN ARGS...: run an example with the installed shared library.
embed_run() {
	LD_LIBRARY_PATH="$EMBED_ROOT/usr/lib" "$@"
}

t_embed_install_layout_and_exports() {
	embed_install || return 1
	local u="$EMBED_ROOT/usr" f
	for f in bin/minivmm lib/libminivmm.a lib/libminivmm.so.$LIB_MAJOR.$LIB_MINOR.0 include/minivmm.h \
		include/minivmm_abi.h lib/pkgconfig/minivmm.pc share/man/man1/minivmm.1; do
		[ -f "$u/$f" ] || { fail "make install did not install $f"; return 1; }
	done
	[ "$(readlink "$u/lib/libminivmm.so")" = libminivmm.so.$LIB_MAJOR ] &&
		[ "$(readlink "$u/lib/libminivmm.so.$LIB_MAJOR")" = "libminivmm.so.$LIB_MAJOR.$LIB_MINOR.0" ] ||
		{ fail "libminivmm.so symlinks: $(ls -l "$u"/lib/libminivmm.so* | tr '\n' ' ')"; return 1; }
	readelf -d "$u/lib/libminivmm.so.$LIB_MAJOR.$LIB_MINOR.0" | grep -q "SONAME.*\\[libminivmm.so.$LIB_MAJOR\\]" ||
		{ fail "soname is not libminivmm.so.$LIB_MAJOR: $(readelf -d "$u/lib/libminivmm.so.$LIB_MAJOR.$LIB_MINOR.0" | grep SONAME)"; return 1; }
	# Only the API is global, in both libraries.
	local lib bad
	for lib in "$u/lib/libminivmm.a" "$u/lib/libminivmm.so.$LIB_MAJOR.$LIB_MINOR.0"; do
		bad=$(nm -g --defined-only "$lib" | awk 'NF == 3 && $2 != "A" && $3 !~ /^minivmm_/ { print $3 }')
		[ -z "$bad" ] || { fail "$(basename "$lib") exports non-API symbols: $(echo $bad | cut -c1-300)"; return 1; }
		nm -g --defined-only "$lib" | grep -qw minivmm_create ||
			{ fail "$(basename "$lib") lacks minivmm_create"; return 1; }
	done
	# Every function the header declares is exported by the shared library
	# (one without MINIVMM_API would be hidden by -fvisibility=hidden).
	local fn missing=""
	for fn in $(grep -oE '^MINIVMM_API [^(]*[ *](minivmm_[a-z0-9_]+)\(' "$u/include/minivmm.h" |
		grep -oE 'minivmm_[a-z0-9_]+\($' | tr -d '('); do
		nm -D --defined-only "$u/lib/libminivmm.so.$LIB_MAJOR.$LIB_MINOR.0" | grep -qw "$fn" || missing="$missing $fn"
	done
	[ -z "$missing" ] || { fail "declared in minivmm.h but not exported:$missing"; return 1; }
	# Every function carries the version node of the soname (vmm/libminivmm.map).
	objdump -T "$u/lib/libminivmm.so.$LIB_MAJOR.$LIB_MINOR.0" | grep -Eq " MINIVMM_$LIB_MAJOR +minivmm_write_stats\$" ||
		{ fail "minivmm_write_stats is not versioned MINIVMM_$LIB_MAJOR: $(objdump -T "$u/lib/libminivmm.so.$LIB_MAJOR.$LIB_MINOR.0" | grep minivmm_write_stats)"; return 1; }
	[ "$(grep -c '^MINIVMM_API' "$u/include/minivmm.h")" -ge 17 ] ||
		{ fail "minivmm.h declares fewer API functions than expected"; return 1; }
	# The header stands alone under strict flags.
	echo '#include <minivmm.h>' > "$EMBED_BIN/header.c"
	# shellcheck disable=SC2046
	cc -std=c11 -pedantic -Wall -Wextra -Werror -fsyntax-only $(pkg-config --cflags minivmm) \
		"$EMBED_BIN/header.c" > "$EMBED_BIN/header.log" 2>&1 ||
		{ fail "minivmm.h alone does not compile: $(tr '\n' '|' < "$EMBED_BIN/header.log" | tail -c 400)"; return 1; }
	local v
	v=$(pkg-config --modversion minivmm)
	[ "$v" = "$LIB_MAJOR.$LIB_MINOR.0" ] || fail "pkg-config --modversion: '$v'"
}

# A program defining kvm_open, bus_add, vmm_err_set and guest_mem_init links
# with either library, and the library still calls its own.
t_embed_program_symbols_do_not_clash() {
	embed_install || return 1
	local mode bin out="$TMP_ROOT/clash.out"
	for mode in static shared; do
		bin=$(embed_build tests/embed/symbol_clash.c "$mode") || return 1
		embed_run "$bin" "$TESTGUEST" > "$out" 2>&1
		rc=$?
		expect_rc 0 "$out" && expect_line "the library used its own kvm_open and bus_add" "$out" ||
			return 1
	done
}

# appliance: a 2-queue device, statistics read while the guest runs, a clean
# stop (minivmm_stop from its SIGTERM handler) once the peer has its echoes.
embed_appliance() {
	local mode=$1 bin
	embed_install || return 1
	bin=$(embed_build docs/examples/appliance.c "$mode") || return 1
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	local out="$TMP_ROOT/appliance-$mode.out" res="$TMP_ROOT/appliance-$mode.peer"
	LD_LIBRARY_PATH="$EMBED_ROOT/usr/lib" ip netns exec "$NS" timeout -k 5 90 \
		"$bin" "$TESTGUEST" ta 0 60 < /dev/null > "$out" 2>&1 &
	local pid=$!
	netns_wait_link "$NS" ta 10 || { fail "appliance created no tap: $(tr '\n' '|' < "$out")"; return 1; }
	netns_add_addr "$NS" ta 10.0.0.1/24 || { fail "cannot configure ta"; return 1; }
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q "ready ip" "$out" && break
		sleep 0.05
	done
	# 16 flows: the tap spreads them over both queue pairs.
	ip netns exec "$NS" "$NETPEER" echo-check --dst 10.0.0.2 --port 5001 --count 300 --flows 16 \
		--wait-ms 3000 > "$res" 2>&1
	local peer_rc=$?
	# The statistics show the traffic while the guest still runs.
	for ((i = 0; i < 40; i++)); do
		grep -Eq "^appliance: stats: .* rx (3[0-9][0-9]|[4-9][0-9][0-9]) " "$out" && break
		sleep 0.05
	done
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	[ $peer_rc = 0 ] || { fail "echo-check: $(tr '\n' ' ' < "$res"); appliance: $(tail -c 400 "$out" | tr '\n' '|')"; return 1; }
	expect_rc 0 "$out" || return 1
	expect_line "^appliance: libminivmm $LIB_MAJOR\.$LIB_MINOR " "$out" &&
		expect_line "^appliance: minivmm says: net0: tap ta \(created\), 2 queue pairs" "$out" &&
		expect_line "^appliance: stats: net0 tap ta, 2/2 pairs active, 2 workers, rx [1-9][0-9]* tx" "$out" &&
		expect_line "^appliance: the VM stopped: status 0 \(stopped by minivmm_stop\(\)\)" "$out" &&
		expect_line "^appliance: q0 rx [1-9][0-9]* tx [1-9][0-9]* worker net0-q0$" "$out" &&
		expect_line "^appliance: q1 rx [1-9][0-9]* tx [1-9][0-9]* worker net0-q1$" "$out" &&
		expect_line "^appliance: worker net0-q1 cpu [0-9.]+ s" "$out" &&
		expect_line "^appliance: stopped \(signal\) after [0-9]+ frames: exit status 0 \(stopped by minivmm_stop\(\)\)$" "$out" ||
		return 1
	# The frames the appliance counted are at least what the peer sent.
	local frames
	frames=$(sed -n 's/^appliance: stopped (signal) after \([0-9]*\) frames.*/\1/p' "$out")
	[ "$frames" -ge 300 ] || fail "appliance counted $frames frames, the peer sent 300"
}

t_embed_appliance_shared() { embed_appliance shared; }
t_embed_appliance_static() { embed_appliance static; }

# two_vms: two VMs in one process, each with its own tap and console, both
# echoing and both ending with status 0.
embed_two_vms() {
	local mode=$1 bin
	embed_install || return 1
	bin=$(embed_build docs/examples/two_vms.c "$mode") || return 1
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	local out="$TMP_ROOT/two-$mode.out" c0="$TMP_ROOT/two-$mode.vm0" c1="$TMP_ROOT/two-$mode.vm1"
	rm -f "$c0" "$c1"
	LD_LIBRARY_PATH="$EMBED_ROOT/usr/lib" ip netns exec "$NS" timeout -k 5 90 \
		"$bin" "$TESTGUEST" tv0 "$c0" tv1 "$c1" < /dev/null > "$out" 2>&1 &
	local pid=$! k i
	for k in 0 1; do
		netns_wait_link "$NS" "tv$k" 10 || { fail "two_vms created no tap tv$k: $(tr '\n' '|' < "$out")"; return 1; }
		netns_add_addr "$NS" "tv$k" "10.0.$((k + 1)).1/24" || { fail "cannot configure tv$k"; return 1; }
	done
	for k in 0 1; do
		for ((i = 0; i < 200; i++)); do
			grep -q "ready ip 10.0.$((k + 1)).2" "$TMP_ROOT/two-$mode.vm$k" 2> /dev/null && break
			sleep 0.05
		done
	done
	local peer_rc=0
	for k in 0 1; do
		ip netns exec "$NS" "$NETPEER" echo-check --dst "10.0.$((k + 1)).2" --port 5001 --count 200 \
			--flows 2 --wait-ms 3000 --stop > "$TMP_ROOT/two-$mode.peer$k" 2>&1 || peer_rc=1
	done
	wait "$pid"
	rc=$?
	[ $peer_rc = 0 ] || { fail "echo-check: $(cat "$TMP_ROOT"/two-$mode.peer* | tr '\n' ' ')"; return 1; }
	expect_rc 0 "$out" || return 1
	for k in 0 1; do
		expect_line "net-echo ready ip 10.0.$((k + 1)).2 " "$TMP_ROOT/two-$mode.vm$k" &&
			expect_line "net-echo done rx (2[0-9][0-9]) tx \1 drops 0" "$TMP_ROOT/two-$mode.vm$k" &&
			expect_line "^two_vms: vm$k: net0: tap tv$k \(created\)" "$out" &&
			expect_line "^two_vms: vm$k stopped: status 0 \(guest reset through the i8042\)" "$out" &&
			expect_line "^two_vms: vm$k: exit status 0, tap tv$k rx 2[0-9][0-9] tx 2[0-9][0-9] frames" "$out" ||
			return 1
	done
	expect_line "^two_vms: both finished$" "$out"
}

t_embed_two_vms_shared() { embed_two_vms shared; }
t_embed_two_vms_static() { embed_two_vms static; }

# The API's promises (start/stop/wait corner cases, callbacks, the kick
# signal, threads' signal masks), from a program linked like an embedder's.
t_embed_api_promises() {
	embed_install || return 1
	local bin out="$TMP_ROOT/api.out"
	bin=$(embed_build tests/embed/api_check.c shared) || return 1
	timeout -k 5 120 env LD_LIBRARY_PATH="$EMBED_ROOT/usr/lib" "$bin" "$TESTGUEST" > "$out" 2>&1
	rc=$?
	expect_rc 0 "$out" || { fail "$(grep -m3 FAIL "$out" | tr '\n' '|') rc=$rc $(tail -c 300 "$out" | tr '\n' '|')"; return 1; }
	expect_line "^api_check: ([0-9]+) of \1 checks passed$" "$out" && expect_no_line "FAIL" "$out"
}
