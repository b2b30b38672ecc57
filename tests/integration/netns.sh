# SPDX-License-Identifier: Apache-2.0
# Network-namespace helpers for the network integration tests (bash; source
# this file). Every namespace created here is recorded in a registry file
# shared by this shell and its subshells, so `ns=$(...)`-style calls and
# namespaces made by tests run in subshells are cleaned up too:
#
#   netns_create NS                    # sets $NS to a fresh name, lo up
#   trap netns_cleanup EXIT            # always: deletes every namespace made here
#   netns_exec "$NS" ip link ...       # run an executable inside it
#   netns_veth "$NS" veth0 veth1       # veth pair, both ends in $NS, up
#   netns_wait_link "$NS" tap0 10      # wait (seconds) for minivmm's tap to appear
#   netns_add_addr "$NS" tap0 10.0.0.1/24   # address + link up
#
# Functions return non-zero with one line on stderr on failure; none exits.
# Names look like mvm-<pid of the sourcing shell>-<n>.

NETNS_PREFIX="mvm-$$-"
# The registry lives in the test run's scratch directory when there is one.
if [ -z "${NETNS_REGISTRY:-}" ]; then
	NETNS_REGISTRY=$(mktemp "${TMP_ROOT:-/tmp}/mvm-netns.XXXXXX") || return 1
	_NETNS_REGISTRY_OWNER=$BASHPID
fi

_netns_err() {
	echo "netns: $*" >&2
	return 1
}

# netns_create [VAR]: create a namespace with a unique name, bring lo up and
# store the name in VAR (default NETNS). Prints nothing.
netns_create() {
	local var=${1:-NETNS} i name
	for ((i = 0; i < 1000; i++)); do
		name="$NETNS_PREFIX$BASHPID-$i"
		[ "$BASHPID" = "$$" ] && name="$NETNS_PREFIX$i"
		[ -e "/run/netns/$name" ] && continue
		# `ip netns add` refuses an existing name, so two shells never share one.
		ip netns add "$name" 2> /dev/null || continue
		echo "$name $BASHPID" >> "$NETNS_REGISTRY"
		ip -n "$name" link set lo up ||
			_netns_err "cannot bring up lo in $name" || return 1
		printf -v "$var" '%s' "$name"
		return 0
	done
	_netns_err "cannot create a network namespace (are we root?)"
}

# netns_exec NS CMD ARGS...: run an executable (not a shell function) in NS.
netns_exec() {
	local ns=$1; shift
	ip netns exec "$ns" "$@"
}

# netns_wait_link NS IFACE [SECONDS]: poll every 50 ms until IFACE exists in NS.
netns_wait_link() {
	local ns=$1 ifname=$2 secs=${3:-10} i
	for ((i = 0; i < secs * 20; i++)); do
		ip -n "$ns" link show dev "$ifname" > /dev/null 2>&1 && return 0
		sleep 0.05
	done
	_netns_err "no interface $ifname in $ns after ${secs}s"
}

# netns_link_up NS IFACE
netns_link_up() {
	ip -n "$1" link set dev "$2" up || _netns_err "cannot bring up $2 in $1"
}

# netns_add_addr NS IFACE CIDR: add the address and bring the link up.
netns_add_addr() {
	ip -n "$1" addr add "$3" dev "$2" ||
		_netns_err "cannot add $3 to $2 in $1" || return 1
	netns_link_up "$1" "$2"
}

# netns_veth NS A B: a veth pair A<->B, both ends in NS, both up.
netns_veth() {
	ip -n "$1" link add "$2" type veth peer name "$3" ||
		_netns_err "cannot create veth $2/$3 in $1" || return 1
	netns_link_up "$1" "$2" && netns_link_up "$1" "$3"
}

# netns_veth_between NS1 A NS2 B: a veth pair with A in NS1 and B in NS2, up.
netns_veth_between() {
	ip -n "$1" link add "$2" type veth peer name "$4" netns "$3" ||
		_netns_err "cannot create veth $2($1)/$4($3)" || return 1
	netns_link_up "$1" "$2" && netns_link_up "$3" "$4"
}

# netns_bridge NS BR [IFACE...]: a bridge BR in NS with IFACEs as ports, all up.
netns_bridge() {
	local ns=$1 br=$2 port; shift 2
	ip -n "$ns" link add "$br" type bridge ||
		_netns_err "cannot create bridge $br in $ns" || return 1
	for port; do
		ip -n "$ns" link set dev "$port" master "$br" ||
			_netns_err "cannot add $port to bridge $br in $ns" || return 1
		netns_link_up "$ns" "$port" || return 1
	done
	netns_link_up "$ns" "$br"
}

# netns_delete NS: stop the processes still running in NS (TERM, then KILL
# after 2 s), then delete it. Quiet if NS is already gone.
netns_delete() {
	local ns=$1 pids i
	[ -e "/run/netns/$ns" ] || return 0
	mapfile -t pids < <(ip netns pids "$ns" 2> /dev/null)
	if [ ${#pids[@]} -gt 0 ]; then
		kill -TERM "${pids[@]}" 2> /dev/null
		for ((i = 0; i < 40; i++)); do
			mapfile -t pids < <(ip netns pids "$ns" 2> /dev/null)
			[ ${#pids[@]} -eq 0 ] && break
			sleep 0.05
		done
		[ ${#pids[@]} -gt 0 ] && kill -KILL "${pids[@]}" 2> /dev/null
	fi
	ip netns delete "$ns" 2> /dev/null || [ ! -e "/run/netns/$ns" ] ||
		_netns_err "cannot delete $ns"
}

# _netns_is_ancestor PID: true if PID is a parent, grandparent, ... of this shell.
_netns_is_ancestor() {
	local p=$BASHPID _c _s ppid
	while [ "$p" -gt 1 ] 2> /dev/null; do
		read -r _c _c _s ppid _c < "/proc/$p/stat" 2> /dev/null || return 1
		[ "$ppid" = "$1" ] && return 0
		p=$ppid
	done
	return 1
}

# netns_cleanup: delete every namespace created through this registry by
# this shell or by the subshells it ran (including `$(...)` ones and any a
# killed test left behind), but not those of an enclosing shell: a test run
# in a subshell cleans up its own namespaces only. Safe to call twice and
# from a trap; always returns 0.
netns_cleanup() {
	local ns creator keep=()
	[ -f "$NETNS_REGISTRY" ] || return 0
	while read -r ns creator; do
		[ -n "$ns" ] || continue
		if [ "$creator" != "$BASHPID" ] && _netns_is_ancestor "$creator"; then
			keep+=("$ns $creator")
		else
			netns_delete "$ns"
		fi
	done < "$NETNS_REGISTRY"
	if [ ${#keep[@]} -gt 0 ]; then
		printf '%s\n' "${keep[@]}" > "$NETNS_REGISTRY"
	elif [ "${_NETNS_REGISTRY_OWNER:-}" = "$BASHPID" ]; then
		rm -f "$NETNS_REGISTRY"    # the shell that made the registry
	else
		: > "$NETNS_REGISTRY"
	fi
	return 0
}
