#!/bin/sh
# A bad network between two hosts made of network namespaces (netns.sh):
# the relay (relay.c) joins their links in place of the bridge and, from a
# seed, loses 5 % of the frames, doubles 2 % and reorders 10 %, in both
# directions. Over udp and over eth, at MTU 1500 and 9000, the MPI results
# must be those of a clean network, the data intact, no run may hang, and
# the counters must show resends; the slowdown against the relay without
# faults is printed. BADNET_RUNS seeds per case (default 2; make check-full
# runs 10). The launcher talks over a clean link of its own (ctl0), as on
# a cluster's management network: Hydra's TCP connect once failed through
# the relay, and the launcher is not what is tested here.
. "$top_srcdir/test/netmod/lib.sh"
. "$top_srcdir/test/netmod/netns.sh"
runs=${BADNET_RUNS:-2}
build_examples
export MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1

# ring_time WHAT: 10 rounds of a 4 MB ring across the hosts, their time
# in ms in $ms.
ring_time() {
	hosts_run 0,1 2 "$W/ring" 4000000 10
	expect "intact" "ring, $1"
	ms=$(echo "$out" | sed -n 's/^ring of .* intact, \([0-9.]*\) ms$/\1/p')
}

for mtu in 1500 9000; do
	hosts_up 2 "$mtu"
	hosts_link ctl0 10.78.0
	export HOSTS_LAUNCH_IFACE=ctl0
	err=$(hosts_relay 0 0 0 1) || {
		echo "SKIP: the relay cannot join the hosts here: $err"
		exit 77
	}
	for wire in udp eth; do
		if [ $wire = eth ]; then
			export BIP_WIRE=eth BIP_ETH_IFACE=eth0
		else
			export BIP_WIRE=udp BIP_UDP_IFACE=eth0
			unset BIP_ETH_IFACE
		fi
		hosts_relay 0 0 0 1 >/dev/null
		ring_time "$wire, MTU $mtu, no faults"
		clean=$ms
		seed=1
		while [ $seed -le "$runs" ]; do
			hosts_relay 5 2 10 "$seed" >/dev/null
			hosts_run 0,1 2 "$W/test_pt2pt"
			expect "passed on 2 ranks" "pt2pt, $wire, MTU $mtu, seed $seed"
			ring_time "$wire, MTU $mtu, seed $seed"
			hosts_relay_stop
			echo "$relay" | grep -q ' [1-9][0-9]* dropped, [1-9][0-9]* doubled, [1-9][0-9]* held back' ||
				{ echo "FAILED: the relay did not drop, double and hold frames"; exit 1; }
			expect "retransmits [1-9]" "no retransmission, $wire, seed $seed"
			echo "slowdown: $wire, MTU $mtu, seed $seed: 10 rings of" \
			     "4 MB in $ms ms against $clean ms without faults"
			seed=$((seed + 1))
		done
	done
done
exit 0
