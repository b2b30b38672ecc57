#!/bin/bash
# minivmm with NET_EXTRA appended to every --net value: runs the integration
# tests again over another engine variant without changing them, e.g.
#   NET_EXTRA=fixed-files=off,defer-taskrun=off tests/integration/run.sh 'net*'
# (run.sh puts this script in $MINIVMM when NET_EXTRA is set; exec keeps the PID).
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--net) args+=("$1" "$2,$NET_EXTRA"); shift 2 ;;
	--net=*) args+=("$1,$NET_EXTRA"); shift ;;
	*) args+=("$1"); shift ;;
	esac
done
exec "$REAL_MINIVMM" "${args[@]}"
