#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# minivmm with NET_EXTRA appended to every --net value: runs the integration
# tests again over another engine variant without changing them, e.g.
#   NET_EXTRA=fixed-files=off,defer-taskrun=off tests/integration/run.sh 'net*'
# (run.sh puts this script in $MINIVMM when NET_EXTRA is set; exec keeps the PID).
# An engine=epoll device gets NET_EXTRA without its io_uring-only keys:
# minivmm refuses a key that does nothing for the device it is given for.
with_extra() {
	local extra=$NET_EXTRA kept=() key
	case $1 in
	*engine=epoll*)
		IFS=, read -ra keys <<< "$NET_EXTRA"
		for key in "${keys[@]}"; do
			case $key in fixed-files=*|fixed-buffers=*|defer-taskrun=*) ;; *) kept+=("$key") ;; esac
		done
		extra=$(IFS=,; echo "${kept[*]}") ;;
	esac
	echo "$1${extra:+,$extra}"
}
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--net) args+=("$1" "$(with_extra "$2")"); shift 2 ;;
	--net=*) args+=("$(with_extra "$1")"); shift ;;
	*) args+=("$1"); shift ;;
	esac
done
exec "$REAL_MINIVMM" "${args[@]}"
