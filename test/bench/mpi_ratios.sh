#!/bin/sh
# mpi_ratios.sh PREFIX - the OSU-style benchmark (test/bench/mpi_bench.c,
# 2 ranks, 0 B .. 4 MiB) over our MPI (PREFIX/bin/mpicc, mpiexec: every
# message through the bip netmod) and, when the machine has it, over
# Debian's stock MPICH (mpicc.mpich, mpiexec.mpich) in the same run:
# ROUNDS rounds alternating the two, the median per size, and the ratios.
# Goals: 8 B latency <= 0.9 x stock, 1 MiB bandwidth >= 1.1 x stock.
set -eu
prefix=${1:?usage: mpi_ratios.sh PREFIX}
rounds=${ROUNDS:-5}
max=${MAX_BYTES:-4194304}
src=$(cd "$(dirname "$0")" && pwd)/mpi_bench.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$prefix/bin/mpicc" -O2 -o "$tmp/ours" "$src"
stock=
if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null; then
	if mpicc.mpich -O2 -o "$tmp/stock" "$src"; then
		stock=yes
	else
		echo "# mpicc.mpich cannot build the benchmark (is libmpich-dev installed?): ours only"
	fi
else
	echo "# Debian's mpich (mpicc.mpich, mpiexec.mpich) is not installed: ours only"
fi

i=0
while [ $i -lt "$rounds" ]; do
	timeout 600 "$prefix/bin/mpiexec" -n 2 "$tmp/ours" "$max" >"$tmp/ours.$i"
	[ -z "$stock" ] ||
		timeout 600 mpiexec.mpich -n 2 "$tmp/stock" "$max" >"$tmp/stock.$i"
	i=$((i + 1))
done

# med WHO SIZE COLUMN: the median over the rounds
med() {
	for f in "$tmp/$1".*; do awk -v n="$2" -v c="$3" '$1==n {print $c}' "$f"; done |
		sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}

echo "# medians of $rounds rounds, 2 ranks; latency one-way (us), bandwidth (MB/s)"
if [ -n "$stock" ]; then
	printf '%10s %10s %10s %7s %10s %10s %7s\n' bytes lat_bip lat_stock ratio \
		bw_bip bw_stock ratio
else
	printf '%10s %10s %10s\n' bytes lat_bip bw_bip
fi
for n in $(awk '$1 != "#" {print $1}' "$tmp/ours.0"); do
	lo=$(med ours "$n" 2) bo=$(med ours "$n" 3)
	if [ -n "$stock" ]; then
		ls=$(med stock "$n" 2) bs=$(med stock "$n" 3)
		awk -v n="$n" -v lo="$lo" -v ls="$ls" -v bo="$bo" -v bs="$bs" 'BEGIN {
			printf "%10d %10.3f %10.3f %7.2f %10.1f %10.1f %7.2f\n", n, lo, ls,
				lo / ls, bo, bs, (bs > 0 ? bo / bs : 0) }'
	else
		printf '%10d %10.3f %10.1f\n' "$n" "$lo" "$bo"
	fi
done
# The first messages after MPI_Init, against the steady state.
first() {
	for f in "$tmp/$1".*; do awk '$2 == "first" {print $(NF - 3)}' "$f"; done |
		sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'
}
awk -v f="$(first ours)" -v s="$(med ours 8 2)" 'BEGIN {
	printf "first 200 round trips after MPI_Init, 8 B: %.3f us one way, %.2f x the steady state\n", f, f / s }'
[ -z "$stock" ] ||
	awk -v f="$(first stock)" -v s="$(med stock 8 2)" -v o="$(first ours)" 'BEGIN {
		printf "  stock: %.3f us, %.2f x its steady state; ours / stock: %.2f\n", f, f / s, o / f }'
if [ -n "$stock" ]; then
	awk -v lo="$(med ours 8 2)" -v ls="$(med stock 8 2)" \
	    -v bo="$(med ours 1048576 3)" -v bs="$(med stock 1048576 3)" 'BEGIN {
		printf "8 B latency: %.3f us vs stock %.3f us: ratio %.2f (goal <= 0.9)\n", lo, ls, lo / ls
		printf "1 MiB bandwidth: %.0f vs stock %.0f MB/s: ratio %.2f (goal >= 1.1)\n", bo, bs, bo / bs
	}'
fi
