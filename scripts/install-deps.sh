#!/bin/sh
# Install the Debian packages minivmm needs, for one or more purposes:
#   build  compile minivmm, libminivmm (ld -r, objcopy, nm), the test guest
#          and the unit tests
#   unit   run the unit tests (the loader test reads Debian's own bzImage)
#   test   run the integration tests (network namespaces, taps, QEMU peer, dtc,
#          man for the man-page check, gdb for the backtraces of a hung minivmm,
#          procps for pgrep)
#   linux  build the nested Linux test environment (kernels, initramfs)
#   bench  run the benchmark (QEMU as the comparison peer, gnuplot, libxdp and
#          libbpf for bench/rawnet's AF_XDP ceilings)
# Quick when nothing is missing: it asks dpkg first and runs apt-get only for
# what is absent.
set -eu

pkgs_build="gcc binutils make libc6-dev liburing-dev libfdt-dev libseccomp-dev libcriterion-dev pkg-config git acpica-tools"
pkgs_unit="linux-image-amd64"
pkgs_test="iproute2 iputils-ping qemu-system-x86 python3 device-tree-compiler man-db gdb procps"
pkgs_bench="qemu-system-x86 qemu-system-data gnuplot-nox python3 iproute2 ethtool iperf3 busybox-static \
 libxdp-dev libbpf-dev"
pkgs_linux="qemu-system-x86 qemu-system-data busybox-static linux-image-amd64 linux-source-6.1 \
 flex bison bc libelf-dev libssl-dev lz4 cpio xz-utils kmod iperf3 ethtool iproute2 python3"

want=""
[ $# -eq 0 ] && set -- build
for purpose in "$@"; do
	case "$purpose" in
	build) want="$want $pkgs_build" ;;
	unit)  want="$want $pkgs_build $pkgs_unit" ;;
	test)  want="$want $pkgs_build $pkgs_test" ;;
	linux) want="$want $pkgs_build $pkgs_linux" ;;
	bench) want="$want $pkgs_build $pkgs_test $pkgs_bench" ;;
	*) echo "install-deps.sh: unknown purpose '$purpose' (build, unit, test, linux, bench)" >&2; exit 2 ;;
	esac
done

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		case " $missing " in *" $p "*) ;; *) missing="$missing $p" ;; esac
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
