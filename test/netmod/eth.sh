#!/bin/sh
# The eth wire (raw Ethernet frames; root has CAP_NET_RAW) across hosts
# made of network namespaces (netns.sh): chosen for the other hosts once
# BIP_ETH_IFACE names the interface; a mixed job (2 hosts x 2 ranks: a
# host's processes see each other's frames); udp as the bulk wire of eth
# peers (BIP_BULK); BIP's seeded faults and the kernel's; a dead rank;
# jumbo frames; and, without CAP_NET_RAW, udp.
. "$top_srcdir/test/netmod/lib.sh"
. "$top_srcdir/test/netmod/netns.sh"
build_examples
hosts_up 2
export BIP_ETH_IFACE=eth0

hosts_run 0:2,1:2 4 "$prefix/bin/bip_info" -p
[ "$(echo "$out" | grep -c ': shm (same host)$')" = 4 ] &&
[ "$(echo "$out" | grep -c ': eth (another host; wide messages by udp)$')" = 8 ] ||
	{ echo "FAILED: wrong wires for 2 hosts x 2 ranks over eth"; exit 1; }
BIP_BULK=off hosts_run 0,1 2 "$prefix/bin/bip_info" -p
[ "$(echo "$out" | grep -c ': eth (another host)$')" = 2 ] ||
	{ echo "FAILED: BIP_BULK=off kept udp for wide messages"; exit 1; }
hosts_run 0:2,1:2 4 "$W/test_pt2pt"
expect "passed on 4 ranks" "pt2pt over eth, 2 hosts x 2 ranks"
hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring over eth"
hosts_run 0,1 2 "$prefix/bin/bip_info"
expect "eth .*receive ring 4096 KiB" "eth frames do not arrive in the ring"
# Frames read by recvmmsg; and a ring of 32 frames (less than a window).
BIP_ETH_RING=0 hosts_run 0,1 2 "$prefix/bin/bip_info"
expect "eth .*frames read by recvmmsg" "BIP_ETH_RING=0 keeps the ring"
BIP_BULK=off BIP_ETH_RING=0 hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring over eth without the receive ring"
BIP_BULK=off BIP_ETH_RING=64k hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring over eth through a receive ring of 32 frames"

export MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1
# Long data goes by udp, in segmented runs (eth has none); with
# BIP_BULK=off, by eth alone.
hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring over eth with udp for wide messages"
expect "segmented runs [1-9][0-9]* sent" "wide messages did not go by udp"
BIP_BULK=off hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring over eth alone"
expect "segmented runs 0 sent" "BIP_BULK=off: udp carried runs"
BIP_FAULT_DROP_PCT=5 BIP_FAULT_DUP_PCT=2 hosts_run 0,1 2 "$W/test_pt2pt"
expect "passed on 2 ranks" "pt2pt over eth under seeded faults"
expect "retransmits [1-9]" "no retransmission under seeded faults"
if err=$(hosts_faults 5 2); then
	hosts_run 0,1 2 "$W/ring" 4000000
	expect "intact" "ring over eth, frames lost by the kernel"
	expect "retransmits [1-9]" "no retransmission of frames lost"
	hosts_faults 0 0
else
	echo "SKIPPED (part): the kernel's packet filter cannot drop frames" \
	     "here: $err"
fi
unset MPIR_CVAR_CH4_BIP_PRINT_COUNTERS

hosts_dead_recv eth

# A link with no IP address (a bare Ethernet segment) carries eth when
# named; udp takes eth0 for wide messages.
hosts_link eth1
BIP_ETH_IFACE=eth1 hosts_run 0,1 2 "$prefix/bin/bip_info"
expect "eth .*on eth1" "eth refuses a link without an IPv4 address"
BIP_ETH_IFACE=eth1 BIP_BULK=off hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring over eth on a link without an IPv4 address"
frames=$(ip -n "${NS_PREFIX}h1" -s link show eth1 |
	awk '/RX:/ { getline; print $2; exit }')
[ "${frames:-0}" -gt 2000 ] ||
	{ echo "FAILED: $frames frames came by eth1"; exit 1; }
# A rank computing for 3 s is alive: its liveness answers pass the socket
# filter that keeps other processes' frames away.
run "$MPICC" -O2 -o "$W/test_busy" "$top_srcdir/test/netmod/test_busy.c"
BIP_PEER_TIMEOUT_MS=1000 hosts_run 0,1 2 "$W/test_busy" 3
expect "data intact" "a busy rank was taken for dead over eth"

# Without CAP_NET_RAW the eth wire does not open: udp carries the hosts.
if command -v setpriv >/dev/null; then
	hosts_run 0,1 2 setpriv --bounding-set -net_raw "$prefix/bin/bip_info" -p
	[ "$(echo "$out" | grep -c ': udp (another host)$')" = 2 ] ||
		{ echo "FAILED: no udp without CAP_NET_RAW"; exit 1; }
else
	echo "SKIPPED (part): no setpriv to drop CAP_NET_RAW"
fi

# Jumbo frames: packets fill the MTU.
hosts_up 2 9000
hosts_run 0,1 2 "$prefix/bin/bip_info"
expect "eth .*MTU 9000: 8920 bytes" "eth packets do not fill a 9000-byte MTU"
hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring over eth, MTU 9000"
exit 0
