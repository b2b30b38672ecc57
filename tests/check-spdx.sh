#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every source file of the project carries its licence (LICENSE, Apache-2.0)
# as an SPDX line in its first two lines (after a #! line). Data files are
# exempt: documentation (*.md), one-line data files (VERSION, the revision
# in bench/baseline), kernel config fragments (their hash keys the
# nested-test kernel cache), captured results, plots, corpora, test data.
cd "$(dirname "$0")/.." || exit 2
[ -f LICENSE ] || { echo "spdx: no LICENSE file" >&2; exit 1; }
# The project's files: git's list in a checkout, else every file outside
# the build directories (a release tarball).
files() {
	if command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files --cached --others --exclude-standard
	else
		find . -path './build*' -prune -o -path './.git' -prune -o -type f -print | sed 's|^\./||'
	fi
}
bad=0 n=0
for f in $(files); do
	[ -f "$f" ] || continue
	case "$f" in
	LICENSE|VERSION|bench/baseline|*.md|*.config|*.png|*.csv|*.json|*.out|*.txt|*.log|*.supp|*.gitignore) continue ;;
	tests/fuzz/corpus/*|tests/soak/data/*|tests/unit/data/*) continue ;;
	esac
	n=$((n + 1))
	if ! head -n 2 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0'; then
		echo "spdx: $f has no 'SPDX-License-Identifier: Apache-2.0' line at its top" >&2
		bad=1
	fi
done
[ "$bad" = 0 ] || exit 1
echo "spdx: $n source files carry SPDX-License-Identifier: Apache-2.0"
