#!/bin/sh
# bip_ratios.sh BUILDDIR - the BIP benchmark as ratios measured in one run:
# bip_floor (cache-line ping-pong, two-copy ring and CMA bandwidths) and
# bip_pingpong on 2 nodes, ROUNDS times each, medians of the rounds.
# Bars: 8 B latency <= 3 x the cache-line floor; 4 MiB bandwidth >= 0.8 x the
# best copy floor.
set -eu
b=${1:?usage: bip_ratios.sh BUILDDIR}
rounds=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

i=0
while [ $i -lt "$rounds" ]; do
	"$b/bip_floor" >"$tmp/floor.$i"
	"$b/bip_run" -n 2 -t 300 "$b/bip_pingpong" >"$tmp/pp.$i"
	i=$((i + 1))
done

# median VALUES...: the middle of the sorted values
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
pick() { awk -v n="$1" -v s="$2" -v c="$3" '$1==n && $2==s {print $c}' "$4"; }

lat=$(median $(for f in "$tmp"/pp.*; do awk '$1==8 {print $2}' "$f"; done))
bw=$(median $(for f in "$tmp"/pp.*; do awk '$1==4194304 {print $3}' "$f"; done))
floor=$(median $(for f in "$tmp"/floor.*; do pick cacheline_oneway_usec 8 3 "$f"; done))
ring=$(median $(for f in "$tmp"/floor.*; do pick ring_MBps 4194304 3 "$f"; done))
cma=$(median $(for f in "$tmp"/floor.*; do pick cma_MBps 4194304 3 "$f"; done))
[ -n "$cma" ] || cma=0

echo "# medians of $rounds rounds"
echo "# last bip_pingpong table:"
cat "$tmp/pp.$((rounds - 1))"
awk -v lat="$lat" -v bw="$bw" -v fl="$floor" -v ring="$ring" -v cma="$cma" 'BEGIN {
	best = ring > cma ? ring : cma
	printf "8 B one-way: %.3f us; cache-line floor %.3f us; ratio %.2f (bar <= 3)\n", lat, fl, lat / fl
	printf "4 MiB bandwidth: %.0f MB/s; ring floor %.0f, CMA floor %.0f MB/s; ratio to best %.2f (bar >= 0.8)\n", bw, ring, cma, bw / best
}'
