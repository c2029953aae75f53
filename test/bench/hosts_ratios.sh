#!/bin/sh
# hosts_ratios.sh PREFIX BUILDDIR - between two hosts (network namespaces
# on this machine, as the multi-host tests make them: test/netmod/netns.sh)
# the OSU-style benchmark (test/bench/mpi_bench.c, 1 rank per host) over
# our MPI on each network wire (udp; eth: raw frames, with udp carrying
# messages wider than a frame, BIP_BULK=auto) and, when installed,
# over Debian's MPICH on TCP (UCX_TLS=tcp) and Open MPI on TCP (--mca btl
# self,tcp), plus each wire's ping-pong floor (bip_floor -e/-u, -f/-F)
# and our bandwidth with 1 % of the frames lost (nftables on the bridge).
# ROUNDS rounds (default 5), each running every party once in turn;
# medians per size; ratios. Goals: 8 B latency <= 0.6 x the best TCP peer
# and <= 1.5 x the floor of the wire used; 4 MiB bandwidth >= 1.0 x the
# best TCP peer; with 1 % loss >= 0.5 x lossless. MTU (default 1500) sets
# the veths' MTU. Needs root. Open MPI runs unbound (--bind-to none): the
# daemon of each namespace host binds its rank to core 0, and the hosts
# share this machine's cores, so both ranks would spin on one core and
# each message would wait for a 4 ms time slice.
set -eu
prefix=${1:?usage: hosts_ratios.sh PREFIX BUILDDIR}
b=${2:?usage: hosts_ratios.sh PREFIX BUILDDIR}
rounds=${ROUNDS:-5}
max=${MAX_BYTES:-4194304}
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=$(cd "$here/../.." && pwd)
MPIEXEC=$prefix/bin/mpiexec
W=$(mktemp -d)
. "$top_srcdir/test/netmod/netns.sh"
ssh_exec=$top_srcdir/test/netmod/netns_ssh
h0=${NS_PREFIX}h0 h1=${NS_PREFIX}h1

hosts_up 2 "${MTU:-1500}" || exit 1
. "$here/peers.sh"
build_parties "$W" "$here/mpi_bench.c"
parties="ours eth $peers"

# run PARTY OUT: one benchmark run across the two hosts, bounded in time.
run() {
	case $1 in
	ours|lossy|eth|elossy)
		eth=off
		case $1 in eth|elossy) eth=eth0 ;; esac
		set -- "$2" ip netns exec "$h0" env BIP_ETH_IFACE=$eth \
			"$MPIEXEC" -launcher ssh \
			-launcher-exec "$ssh_exec" -iface eth0 \
			-hosts "$h0,$h1" -n 2 "$W/ours" "$max" ;;
	mpich)
		set -- "$2" ip netns exec "$h0" env UCX_TLS=tcp mpiexec.mpich \
			-launcher ssh -launcher-exec "$ssh_exec" -iface eth0 \
			-hosts "$h0,$h1" -n 2 "$W/mpich" "$max" ;;
	openmpi)
		set -- "$2" ip netns exec "$h0" mpirun.openmpi --allow-run-as-root \
			--mca plm_rsh_agent "$ssh_exec" --mca btl self,tcp \
			--mca btl_tcp_if_include eth0 --mca pml ob1 \
			--bind-to none --host "$h0,$h1" -n 2 "$W/openmpi" "$max" ;;
	esac
	out=$1
	shift
	timeout 600 "$@" >"$out" 2>"$out.err" ||
		echo "# $(basename "$out"): failed (exit $?): $(tail -n 2 "$out.err")"
}

i=0
while [ $i -lt "$rounds" ]; do
	ip netns exec "$h1" "$b/bip_floor" -e 7777 &
	sleep 0.2
	ip netns exec "$h0" "$b/bip_floor" -u 10.77.0.2:7777 >"$W/floor.$i"
	wait
	ip netns exec "$h1" "$b/bip_floor" -f eth0 &
	sleep 0.2
	ip netns exec "$h0" "$b/bip_floor" -F eth0 >"$W/ffloor.$i"
	wait
	for p in $parties; do
		run "$p" "$W/$p.$i"
	done
	hosts_faults 1 0 && run lossy "$W/lossy.$i" &&
		run elossy "$W/elossy.$i" && hosts_faults 0 0
	i=$((i + 1))
done

# med WHO SIZE COLUMN: the median over the rounds that produced it
med() {
	for f in "$W/$1".[0-9]*; do
		case $f in *.err) continue ;; esac
		awk -v n="$2" -v c="$3" '$1==n {print $c}' "$f"
	done | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'
}

echo "# 2 hosts (namespaces, MTU ${MTU:-1500}), 1 rank each; medians of $rounds rounds"
echo "# one-way latency (us) and bandwidth (MB/s) per party: $parties"
printf '%10s' bytes
for p in $parties; do printf ' %10s %10s' "lat_$p" "bw_$p"; done
printf '\n'
for n in $(awk '$1 != "#" {print $1}' "$W/ours.0"); do
	printf '%10d' "$n"
	for p in $parties; do
		printf ' %10s %10s' "$(med "$p" "$n" 2)" "$(med "$p" "$n" 3)"
	done
	printf '\n'
done

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
floor=$(for f in "$W"/floor.*; do awk '{print $3}' "$f"; done | median)
ffloor=$(for f in "$W"/ffloor.*; do awk '{print $3}' "$f"; done | median)
best_lat= best_bw= best=
for p in $parties; do
	case $p in ours|eth) continue ;; esac
	l=$(med "$p" 8 2) w=$(med "$p" "$max" 3)
	[ -n "$l" ] || continue
	if [ -z "$best_lat" ] || awk -v a="$l" -v b="$best_lat" 'BEGIN {exit !(a < b)}'; then
		best_lat=$l best=$p
	fi
	if [ -z "$best_bw" ] || awk -v a="$w" -v b="$best_bw" 'BEGIN {exit !(a > b)}'; then
		best_bw=$w
	fi
done
lat=$(med ours 8 2) bw=$(med ours "$max" 3) lossy=$(med lossy "$max" 3)
elat=$(med eth 8 2) ebw=$(med eth "$max" 3) elossy=$(med elossy "$max" 3)
awk -v lat="$lat" -v fl="$floor" -v elat="$elat" -v ffl="$ffloor" 'BEGIN {
	printf "8 B latency, udp: %.3f us; udp floor %.3f us: ratio %.2f (goal <= 1.5)\n", lat, fl, lat / fl
	if (elat > 0 && ffl > 0)
		printf "8 B latency, eth: %.3f us; frame floor %.3f us: ratio %.2f (goal <= 1.5)\n", elat, ffl, elat / ffl }'
if [ -n "$best_lat" ]; then
	awk -v lat="$lat" -v elat="$elat" -v bl="$best_lat" -v who="$best" \
	    -v fl="$floor" -v ffl="$ffloor" 'BEGIN {
		printf "8 B latency vs the best TCP peer (%s, %.3f us): udp %.2f, eth %.2f (goal <= 0.6); that peer is %.2f x the udp floor, %.2f x the frame floor\n", who, bl, lat / bl, elat / bl, bl / fl, bl / ffl }'
	awk -v bw="$bw" -v ebw="$ebw" -v bb="$best_bw" -v n="$max" 'BEGIN {
		printf "%d B bandwidth: udp %.0f, eth %.0f MB/s vs the best TCP peer %.0f MB/s: ratios %.2f, %.2f (goal >= 1.0)\n", n, bw, ebw, bb, bw / bb, ebw / bb }'
fi
[ -z "$lossy" ] ||
	awk -v bw="$bw" -v l="$lossy" -v ebw="$ebw" -v el="$elossy" -v n="$max" 'BEGIN {
		printf "%d B bandwidth with 1 %% of the frames lost: udp %.0f MB/s, %.2f x lossless; eth %.0f MB/s, %.2f x lossless (goal >= 0.5)\n", n, l, l / bw, el, (ebw > 0 ? el / ebw : 0) }'
