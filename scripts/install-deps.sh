#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Install the Debian packages minivmm needs, for one or more purposes:
# With no purpose: build and demo, what the README's first command needs.
#   build  compile minivmm, libminivmm (ld -r, objcopy, nm), the test guest
#          and the unit tests; libxdp/libbpf (and libelf, zlib for the
#          static build) for the AF_XDP backend. `make` itself installs
#          nothing: it names what is missing (scripts/check-build-deps.sh)
#   demo   run `make demo` (iproute2 for its network namespace and tap, ping;
#          on a host without /dev/kvm, what its emulated KVM needs too:
#          qemu-system-x86 for the libraries of the outer QEMU,
#          busybox-static, cpio, xz-utils, kmod; tests/with-kvm.sh)
#   unit   run the unit tests (the loader test reads Debian's own bzImage;
#          iasl disassembles the ACPI tables; git lists the files the
#          licence and build checks read)
#   test   run the integration tests (network namespaces, taps, QEMU peer, dtc,
#          git for the licence check and the benchmark baseline,
#          man for the man-page check, gdb for the backtraces of a hung minivmm,
#          procps for pgrep; busybox-static, cpio, xz-utils and kmod for
#          the emulated KVM a host without /dev/kvm runs them under,
#          tests/with-kvm.sh)
#   linux  build the nested Linux test environment (kernels, initramfs), and
#          the outer guest's emulator: QEMU from bookworm-backports, unpacked
#          beside the host's QEMU 7.2, not installed (tests/linux/outer-qemu.sh)
#   bench  run the benchmark (QEMU as the comparison peer, gnuplot, libxdp and
#          libbpf for bench/rawnet's AF_XDP ceilings)
#   fuzz   build and run the libFuzzer targets (clang; libclang-rt-14-dev holds
#          libclang_rt.fuzzer and the sanitizer runtimes, only a Recommends of
#          clang's, so it is listed explicitly)
# Quick when nothing is missing: it asks dpkg first and runs apt-get only for
# what is absent.
set -eu

pkgs_build="gcc binutils make libc6-dev liburing-dev libfdt-dev libseccomp-dev libjansson-dev libmnl-dev libmicrohttpd-dev libcriterion-dev pkg-config \
 libxdp-dev libbpf-dev libelf-dev zlib1g-dev"
pkgs_demo="iproute2 iputils-ping"
[ -w /dev/kvm ] || pkgs_demo="$pkgs_demo qemu-system-x86 busybox-static cpio xz-utils kmod"
pkgs_unit="linux-image-amd64 acpica-tools git"
pkgs_test="git iproute2 iputils-ping qemu-system-x86 python3 device-tree-compiler man-db gdb procps jq curl \
 busybox-static cpio xz-utils kmod"
pkgs_bench="qemu-system-x86 qemu-system-data gnuplot-nox python3 iproute2 ethtool iperf3 busybox-static \
 libxdp-dev libbpf-dev"
pkgs_fuzz="clang libclang-rt-14-dev"
pkgs_linux="qemu-system-x86 qemu-system-data busybox-static linux-image-amd64 linux-source-6.1 \
 flex bison bc libelf-dev libssl-dev lz4 cpio xz-utils kmod iperf3 ethtool iproute2 python3"

want="" outer_qemu=0
[ $# -eq 0 ] && set -- build demo
for purpose in "$@"; do
	case "$purpose" in
	build) want="$want $pkgs_build" ;;
	demo)  want="$want $pkgs_build $pkgs_demo" ;;
	unit)  want="$want $pkgs_build $pkgs_unit" ;;
	test)  want="$want $pkgs_build $pkgs_test" ;;
	linux) want="$want $pkgs_build $pkgs_linux"; outer_qemu=1 ;;
	bench) want="$want $pkgs_build $pkgs_test $pkgs_bench" ;;
	fuzz)  want="$want $pkgs_build $pkgs_fuzz" ;;
	*) echo "install-deps.sh: unknown purpose '$purpose' (build, demo, unit, test, linux, bench, fuzz)" >&2; exit 2 ;;
	esac
done

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		case " $missing " in *" $p "*) ;; *) missing="$missing $p" ;; esac
	fi
done

if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "install-deps.sh: missing packages:$missing (run as root to install them)" >&2
		exit 1
	fi
	echo "install-deps.sh: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing
fi
# Quick when it is there already (no network).
[ "$outer_qemu" = 0 ] || "$(dirname "$0")/../tests/linux/outer-qemu.sh" >/dev/null
