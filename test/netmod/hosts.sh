#!/bin/sh
# MPI across hosts: network namespaces on this machine (netns.sh), jobs
# launched by Hydra across them. BIP must find the hosts from the
# launcher's placement: shm inside a host, udp between hosts. Examples and
# the point-to-point test on 2 and 4 hosts, a mixed job (2 hosts x 2
# ranks), segmented sends (UDP GSO) on and off, BIP's seeded faults,
# frames lost and duplicated by the kernel, and jumbo frames. make check-full adds
# MPICH's test suite across hosts (mpich_hosts.sh).
. "$top_srcdir/test/netmod/lib.sh"
. "$top_srcdir/test/netmod/netns.sh"
build_examples
hosts_up 4

# Each rank's view of each peer: the shm wire inside a host, udp across.
hosts_run 0:2,1:2 4 "$prefix/bin/bip_info" -p
[ "$(echo "$out" | grep -c ': shm (same host)$')" = 4 ] &&
[ "$(echo "$out" | grep -c ': udp (another host)$')" = 8 ] ||
	{ echo "FAILED: wrong wires for 2 hosts x 2 ranks"; exit 1; }

hosts_run 0,1 2 "$W/cpi"
expect "error [0-9.]*e-1[0-9]" "pi"
hosts_run 0,1 2 "$W/ring" 1000000
expect "intact" "ring"
hosts_run 0,1 2 "$W/test_pt2pt"
expect "passed on 2 ranks" "pt2pt"
hosts_run 0:2,1:2 4 "$W/test_pt2pt"
expect "passed on 4 ranks" "pt2pt, 2 hosts x 2 ranks"
hosts_run 0,1,2,3 4 "$W/ring" 1000000
expect "intact" "ring on 4 hosts"

export MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1

# Runs of packets to one peer leave as one segmented datagram (UDP GSO)
# and arrive whole (GRO); with BIP_UDP_GSO=off they go one by one.
hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring"
expect "segmented runs [1-9][0-9]* sent [1-9]" "no run sent and received whole"
BIP_UDP_GSO=off hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring, BIP_UDP_GSO=off"
! echo "$out" | grep -q "segmented runs [1-9]" ||
	{ echo "FAILED: segmented runs with BIP_UDP_GSO=off"; exit 1; }

hosts_dead_recv udp
# Its host answers the first probe (at a fifth of the timeout, 3 s) with
# ICMP "port unreachable": found dead long before the 15 s of silence.
BIP_LOG=info hosts_dead_recv udp 15000 12
expect "its port [0-9]* is closed: its process is gone" \
	"no ICMP port unreachable from the dead rank's host"

# Loss and duplication (BIP's own, seeded: replayable) between hosts: the
# results are the same, and the counters show the resends.
for seed in 1 2 3; do
	BIP_FAULT_DROP_PCT=5 BIP_FAULT_DUP_PCT=2 BIP_FAULT_SEED=$seed \
		hosts_run 0,1 2 "$W/test_pt2pt"
	expect "passed on 2 ranks" "pt2pt under faults, seed $seed"
	expect "retransmits [1-9]" "no retransmission under faults"
done

# The same done by the kernel (nftables on the bridge): 5 % of the frames
# lost, 2 % duplicated, in both directions.
hosts_up 2
if err=$(hosts_faults 5 2); then
	hosts_run 0,1 2 "$W/test_pt2pt"
	expect "passed on 2 ranks" "pt2pt, frames lost by the kernel"
	expect "retransmits [1-9]" "no retransmission of lost frames"
	hosts_run 0,1 2 "$W/ring" 4000000
	expect "intact" "ring, frames lost by the kernel"
	hosts_faults 0 0
else
	echo "SKIPPED (part): the kernel's packet filter cannot drop frames" \
	     "here: $err"
fi
unset MPIR_CVAR_CH4_BIP_PRINT_COUNTERS

# Jumbo frames: long data goes in packets that fill the MTU.
hosts_up 2 9000
hosts_run 0,1 2 "$prefix/bin/bip_info"
expect "udp .*MTU 9000: 8892 bytes" "udp packets do not fill a 9000-byte MTU"
hosts_run 0,1 2 "$W/ring" 4000000
expect "intact" "ring, MTU 9000"
hosts_run 0,1 2 "$W/test_pt2pt"
expect "passed on 2 ranks" "pt2pt, MTU 9000"
exit 0
