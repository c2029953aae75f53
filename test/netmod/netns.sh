# netns.sh - "hosts" on one machine for the MPI tests: network namespaces,
# each with an eth0 (a veth) plugged into a bridge that lives in a
# namespace of its own, and an mpiexec that launches across them with
# Hydra's ssh launcher replaced by netns_ssh. Namespaces share /dev/shm,
# pids and the host name, so BIP can tell hosts apart only from the
# launcher's placement (PMI's process mapping) - which is what is tested.
# Sourced after lib.sh; hosts_up skips the test (exit 77) with the reason
# when namespaces cannot be made here.

NS_PREFIX=bip$$
NS_HOSTS=""
RELAY_PID=""
trap 'hosts_down; rm -rf "$W"' EXIT

hosts_down() {
	hosts_relay_stop >/dev/null
	for ns in $NS_HOSTS ${NS_PREFIX}br; do
		# Only processes this test started live in its namespaces.
		pids=$(ip netns pids "$ns" 2>/dev/null)
		[ -n "$pids" ] && kill -9 $pids 2>/dev/null
		ip netns del "$ns" 2>/dev/null
	done
	NS_HOSTS=""
}

# hosts_up K [MTU]: namespaces ${NS_PREFIX}h0.. with eth0 at 10.77.0.(i+1)
hosts_up() {
	k=$1 mtu=${2:-1500}
	[ "$(id -u)" = 0 ] ||
		{ echo "SKIP: network namespaces need root"; exit 77; }
	command -v ip >/dev/null ||
		{ echo "SKIP: no ip command (iproute2)"; exit 77; }
	hosts_down
	br=${NS_PREFIX}br
	err=$(ip netns add "$br" 2>&1 &&
	      ip -n "$br" link add br0 type bridge 2>&1 &&
	      ip -n "$br" link set br0 mtu "$mtu" up 2>&1) ||
		{ ip netns del "$br" 2>/dev/null
		  echo "SKIP: cannot make a network namespace with a bridge" \
		       "here: $err"; exit 77; }
	i=0
	while [ $i -lt "$k" ]; do
		h=${NS_PREFIX}h$i
		ip netns add "$h" &&
		NS_HOSTS="$NS_HOSTS $h" &&
		ip link add eth0 mtu "$mtu" netns "$h" type veth \
			peer name v$i mtu "$mtu" netns "$br" &&
		ip -n "$br" link set v$i master br0 up &&
		ip -n "$h" addr add 10.77.0.$((i + 1))/24 dev eth0 &&
		ip -n "$h" link set eth0 up &&
		ip -n "$h" link set lo up ||
			{ echo "FAILED: setting up host $i"; exit 1; }
		i=$((i + 1))
	done
}

# hosts_link NAME [NET]: one more link on every host, NAME, plugged into a
# bridge of its own: a pure Ethernet segment, or with NET (three numbers,
# "10.78.0") an IP network with host i at NET.(i+1).
hosts_link() {
	br=${NS_PREFIX}br
	ip -n "$br" link add "b-$1" type bridge &&
	ip -n "$br" link set "b-$1" up || { echo "FAILED: bridge b-$1"; exit 1; }
	i=0
	for h in $NS_HOSTS; do
		ip link add "$1" netns "$h" type veth peer name "$1-$i" \
			netns "$br" &&
		ip -n "$br" link set "$1-$i" master "b-$1" up &&
		ip -n "$h" link set "$1" up &&
		{ [ -z "$2" ] || ip -n "$h" addr add "$2.$((i + 1))/24" dev "$1"; } ||
			{ echo "FAILED: link $1 on host $i"; exit 1; }
		i=$((i + 1))
	done
}

# hosts_faults DROP DUP: between 2 hosts, the kernel drops DROP % and
# duplicates DUP % of the frames each one sends (nftables on the bridge's
# ports; its randomness cannot be seeded). 0 0 removes them. Fails with
# the reason.
hosts_faults() {
	br=${NS_PREFIX}br
	ip netns exec "$br" nft delete table netdev bipfaults 2>/dev/null
	[ "$1$2" = 00 ] && return 0
	command -v nft >/dev/null || { echo "no nft command (nftables)"; return 1; }
	for i in 0 1; do
		echo "table netdev bipfaults { chain in$i {"
		echo "type filter hook ingress device v$i priority 0;"
		echo "numgen random mod 100 < $1 drop;"
		echo "numgen random mod 100 < $2 dup to v$((1 - i)); }"
		echo "}"
	done | ip netns exec "$br" nft -f - 2>&1
}

# hosts_relay DROP DUP REORDER SEED: between 2 hosts, the relay (relay.c)
# in place of the bridge, with its seeded faults, every offload off on the
# links it joins. Fails with the reason.
hosts_relay() {
	br=${NS_PREFIX}br
	hosts_relay_stop >/dev/null
	command -v ethtool >/dev/null || { echo "no ethtool command"; return 1; }
	for i in 0 1; do
		ip -n "$br" link set v$i nomaster &&
		ip netns exec "$br" ethtool -K v$i rx off tx off sg off \
			gro off gso off tso off >/dev/null 2>&1 &&
		ip netns exec "${NS_PREFIX}h$i" ethtool -K eth0 rx off tx off \
			sg off gro off gso off tso off >/dev/null 2>&1 ||
			{ echo "cannot turn the offloads of link $i off"; return 1; }
	done
	ip netns exec "$br" "$top_builddir/test/netmod/relay" v0 v1 "$@" \
		>"$W/relay.log" 2>&1 &
	RELAY_PID=$!
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		grep -q '^relay: v0' "$W/relay.log" && return 0
		kill -0 "$RELAY_PID" 2>/dev/null || break
		sleep 0.2
	done
	cat "$W/relay.log"
	return 1
}

# hosts_relay_stop: the relay's account of what it did, in $relay.
hosts_relay_stop() {
	relay=""
	[ -n "$RELAY_PID" ] || return 0
	kill -TERM "$RELAY_PID" 2>/dev/null
	wait "$RELAY_PID" 2>/dev/null
	RELAY_PID=""
	relay=$(cat "$W/relay.log")
	echo "$relay"
}

# The mpiexec that launches across the hosts, started on the first one;
# the caller adds -hosts and the rest. Its own connections go over
# HOSTS_LAUNCH_IFACE (default eth0).
hosts_mpiexec() {
	echo "ip netns exec ${NS_PREFIX}h0 $MPIEXEC -launcher ssh" \
	     "-launcher-exec $top_srcdir/test/netmod/netns_ssh" \
	     "-iface ${HOSTS_LAUNCH_IFACE:-eth0}"
}

# hosts_dead_recv WIRE [TIMEOUT_MS LIMIT_S]: rank 1, on the second host,
# dies (ends, closing nothing) while rank 0 only waits to receive from it:
# nothing is in flight to it, so it is found by its silence (no packet, no
# probe answer) within BIP_PEER_TIMEOUT_MS (default 1000), or sooner by
# its host's answer to a probe, and the error names its pid, host and
# WIRE; the job must end within LIMIT_S seconds (default 60).
hosts_dead_recv() {
	run "$MPICC" -O2 -o "$W/faults" "$top_srcdir/test/netmod/faults.c"
	echo "+ mpiexec -disable-auto-cleanup -n 2 faults dead-recv (across hosts)"
	# shellcheck disable=SC2046 # the launcher's words, no spaces inside
	out=$(BIP_PEER_TIMEOUT_MS=${2:-1000} timeout "${3:-60}" $(hosts_mpiexec) \
		-hosts "${NS_PREFIX}h0,${NS_PREFIX}h1" -n 2 \
		-disable-auto-cleanup "$W/faults" dead-recv 2>&1)
	echo "$out"
	pid=$(echo "$out" | sed -n 's/^rank 1: pid \([0-9]*\) dies$/\1/p')
	expect "Rank 1 (pid $pid on host .*) died or stopped answering (BIP wire $1)" \
		"a dead rank on another host ($1), with nothing in flight to it"
}

# hosts_run SPEC N PROG ARGS...: mpiexec -n N across the hosts, SPEC a
# Hydra host list of host numbers ("0,1", "0:2,1:2"); output in $out.
hosts_run() {
	spec=""
	for e in $(echo "$1" | tr , ' '); do
		spec="$spec${spec:+,}${NS_PREFIX}h$e"
	done
	n=$2
	shift 2
	echo "+ mpiexec -hosts $spec -n $n $*"
	# shellcheck disable=SC2046 # the launcher's words, no spaces inside
	launch "across hosts $spec" $(hosts_mpiexec) -hosts "$spec" -n "$n" "$@"
}
