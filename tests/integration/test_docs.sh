# SPDX-License-Identifier: Apache-2.0
# The user documentation's examples, run as written: every example of the
# man page (docs/minivmm.1, EXAMPLES) and every shell block of
# docs/getting-started.md, in a network namespace of the test's own that has
# the interfaces they name (eth1, a bridge br0), in one working directory in
# order (the initramfs one block builds is the next one's), through
# tests/integration/doc-minivmm.sh (the test guest stands in for the
# reader's bzImage). The two examples it leaves out are printed with why.
# The README's usage block is checked against --help.

. tests/integration/netns.sh

t_docs_examples_run_as_written() {
	local dir="$TMP_ROOT/docs" bin="$TMP_ROOT/docs-bin" work="$TMP_ROOT/docs-work" f base src out rc
	mkdir -p "$dir" "$bin" "$work"
	python3 tests/integration/doc_snippets.py "$dir" > "$TMP_ROOT/docs.notrun" ||
		{ fail "doc_snippets.py: $(cat "$TMP_ROOT/docs.notrun")"; return 1; }
	sed 's/^/# docs: /' "$TMP_ROOT/docs.notrun"
	ln -sf "$PWD/tests/integration/doc-minivmm.sh" "$bin/minivmm"
	local real guest
	real=$(realpath "$MINIVMM") guest=$(realpath "$TESTGUEST")
	netns_create NS || { fail "cannot create a network namespace"; return 1; }
	ip -n "$NS" link add eth1 type veth peer name eth1-peer && ip -n "$NS" link set eth1 up &&
		ip -n "$NS" link set eth1-peer up && ip -n "$NS" link add br0 type bridge ||
		{ fail "cannot make eth1 and br0"; return 1; }
	for f in "$dir"/*.sh; do
		base=${f%.sh} src=$(cat "$base.src") out="$base.out"
		: > "$TMP_ROOT/docs.log"
		# A reader's /var/log is the working directory here; `kill` waits a
		# second first, as a person typing it would; sudo is root already.
		sed 's|/var/log/|./|g' "$f" > "$base.run"
		(cd "$work" && ip netns exec "$NS" env PATH="$bin:$PATH" USER=root \
			DOC_REAL_MINIVMM="$real" DOC_TESTGUEST="$guest" DOC_LOG="$TMP_ROOT/docs.log" \
			timeout -k 5 60 bash -o pipefail -c 'sudo() { "$@"; }; kill() { sleep 1; command kill "$@"; }
				. "$1"; rc=$?; wait; exit $rc' docs "$base.run" < /dev/null > "$out" 2>&1)
		rc=$?
		if [ "$rc" != 0 ]; then
			grep -q '^cpus 2$' "$TMP_ROOT/docs.log" && [ "$rc" = 2 ] ||
				{ fail "$src: exit status $rc: $(tail -c 500 "$out" | tr '\n' '|')"; return 1; }
			echo "# docs: $src: refused only for naming a CPU this $(ip netns exec "$NS" nproc)-CPU host lacks: $(grep -m1 'CPU' "$out")"
		fi
		grep -q . "$TMP_ROOT/docs.log" || grep -q minivmm "$f" || continue
		grep -q . "$TMP_ROOT/docs.log" || { fail "$src: minivmm did not run"; return 1; }
		# Status 0, or the one the text states.
		local want=0
		[ -e "$base.want" ] && want=$(cat "$base.want")
		if grep -v '^cpus ' "$TMP_ROOT/docs.log" | grep -qv "^$want " && ! grep -q '^cpus 2$' "$TMP_ROOT/docs.log"; then
			fail "$src: minivmm ended with $(grep -v "^$want " "$TMP_ROOT/docs.log" | head -n1 | cut -c1-200), not $want: $(tail -c 400 "$out" | tr '\n' '|')"
			return 1
		fi
		if [ -e "$base.want" ] && [ "$(tail -n1 "$out")" != "$(cat "$base.want")" ]; then
			fail "$src: the text says status $(cat "$base.want"), the example printed '$(tail -n1 "$out")'"
			return 1
		fi
	done
}

# Every option and --net key the README's usage block shows is one --help
# lists.
t_docs_readme_usage_matches_help() {
	local help="$TMP_ROOT/help" usage="$TMP_ROOT/usage" w
	"$MINIVMM" --help > "$help" || { fail "--help failed"; return 1; }
	awk '/^minivmm --kernel/{u=1} u&&/^```/{exit} u' README.md > "$usage"
	grep -q -- '--kernel' "$usage" || { fail "no usage block in README.md"; return 1; }
	for w in $(grep -o -- '--[a-z][a-z-]*' "$usage" | sort -u) \
		 $(grep -o '[[(,|][a-z][a-z-]*=' "$usage" | tr -d '[(,|' | sort -u); do
		case $w in
		--*) grep -q -- "$w\\b" "$help" || { fail "README's usage shows $w, --help has none"; return 1; } ;;
		*) grep -Eq -- "(^|[ ,\\[])$w" "$help" || { fail "README's usage shows the key $w, --help has none"; return 1; } ;;
		esac
	done
}
