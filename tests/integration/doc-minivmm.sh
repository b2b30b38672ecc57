#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `minivmm` as the documentation's examples run it in test_docs.sh: the real
# program with every option as written, except what only the reader has:
#   - a --kernel that does not exist here (bzImage) is the project's test
#     guest, which spins (test=spin, added to the example's --cmdline unless
#     it names a test) until a --timeout of DOC_SECS seconds the example did
#     not give, and that timeout's status 12 counts as 0 (the guest ran);
#   - a missing --initrd is a 4 KiB file of zeros.
# Signals are passed on to minivmm. Each run appends "STATUS ARGS" to DOC_LOG, and "cpus STATUS" when it was
# refused only because it names a CPU this host does not have.
set -u
args=() cmdline= spin=0 timeout=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel)
		if [ -e "$2" ]; then args+=("$1" "$2"); else args+=("$1" "$DOC_TESTGUEST"); fi
		shift 2 ;;
	--initrd)
		[ -e "$2" ] || head -c 4096 /dev/zero > "$2"
		args+=("$1" "$2"); shift 2 ;;
	--cmdline)
		cmdline=$2; shift 2 ;;
	--timeout)
		timeout=1; args+=("$1" "$2"); shift 2 ;;
	*)
		args+=("$1"); shift ;;
	esac
done
if [[ " $cmdline " != *" test="* ]]; then
	cmdline="${cmdline:+$cmdline }test=spin"
	spin=1
fi
args+=(--cmdline "$cmdline")
[ "$spin" = 1 ] && [ "$timeout" = 0 ] && args+=(--timeout "${DOC_SECS:-3}")
err=$(mktemp)
# A child, not exec: the status is logged. Signals for minivmm (the
# examples' kill -USR1 $!) are passed on.
"$DOC_REAL_MINIVMM" "${args[@]}" 2> "$err" &
child=$!
for sig in USR1 TERM INT HUP; do trap "kill -$sig $child" "$sig"; done
while :; do
	wait "$child"
	rc=$?
	kill -0 "$child" 2> /dev/null || break
done
cat "$err" >&2
[ "$spin" = 1 ] && [ "$timeout" = 0 ] && [ "$rc" = 12 ] && rc=0
echo "$rc ${args[*]}" >> "$DOC_LOG"
cpu=$(sed -n 's/.*CPU \([0-9]*\) is not one this process may run on.*/\1/p' "$err" | head -n1)
[ "$rc" = 2 ] && [ -n "$cpu" ] && [ "$cpu" -ge "$(nproc)" ] && echo "cpus $rc" >> "$DOC_LOG"
rm -f "$err"
exit "$rc"
