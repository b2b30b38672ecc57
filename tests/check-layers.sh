#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The layers point one way (docs/architecture.md):
#   base/    the foundation: includes only base/ and the public headers
#   boot/    base/, boot/
#   net/     base/, net/
#   devices/ base/, net/, devices/
#   vmm/     anything
# The public headers (include/minivmm.h, minivmm_abi.h) are allowed
# everywhere. Prints one line per include that points the wrong way and
# exits 1 if there is any.
set -eu
cd "$(dirname "$0")/.."

allowed() {
	case "$1" in
	base) echo "base" ;;
	boot) echo "base boot" ;;
	net) echo "base net" ;;
	devices) echo "base net devices" ;;
	esac
}

bad=0 files=0
for layer in base boot net devices; do
	ok=$(allowed "$layer")
	for f in $(find "$layer" -name '*.[ch]' | sort); do
		files=$((files + 1))
		for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
			case "$inc" in minivmm.h|minivmm_abi.h) continue ;; esac
			top=${inc%%/*}
			[ "$top" != "$inc" ] || { echo "layers: $f includes \"$inc\" (say which directory)"; bad=1; continue; }
			case " $ok " in *" $top "*) ;; *) echo "layers: $f ($layer/) includes $inc ($top/): $layer/ may include only $ok"; bad=1 ;; esac
		done
	done
done
[ "$files" -gt 0 ] || { echo "layers: no source files found"; exit 1; }
[ "$bad" = 0 ] && echo "layers: $files files in base/ boot/ net/ devices/ include only the layers below them"
exit "$bad"
