#!/bin/sh
# scale_ratios.sh PREFIX - what a job costs as its ranks grow on one host
# (test/bench/mpi_scale.c: MPI_Init, a barrier, an all-to-all of 1 KiB,
# then each rank's PSS), for SCALE_RANKS ranks (default "2 32 128") over
# our MPI and, where the machine has them, Debian's MPICH and Open MPI:
# ROUNDS rounds (default 3), medians of the whole job's wall time (launch
# to exit, what a user waits for), the slowest MPI_Init, and the memory
# per rank (the job's PSS summed, over the ranks: shared memory counted
# once). A peer that fails or runs over TIMEOUT (default 300 s) is left
# out at that size (Open MPI took 153 s at 128 ranks on 2 cores here,
# stock MPICH busy-polls and runs over). Goals (issue 10): memory per rank bounded as ranks
# grow, and start-up at 32 ranks no slower than Open MPI's.
set -eu
prefix=${1:?usage: scale_ratios.sh PREFIX}
rounds=${ROUNDS:-3}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/mpi_scale.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/peers.sh"
TIMEOUT=${TIMEOUT:-300}

build_parties "$tmp" "$src"

# One run: its wall time appended to its output. A party that failed or
# ran over TIMEOUT at this size is not run there again.
timed() {
	p=$1 n=$2 o=$3
	[ -f "$tmp/$p.$n.failed" ] && return 0
	t0=$(date +%s.%N)
	run_party "$p" "$n" "$o" "$tmp/$p" || { : >"$tmp/$p.$n.failed"; return 0; }
	echo "wall_s $(echo "$t0 $(date +%s.%N)" | awk '{ printf "%.3f", $2 - $1 }')" >>"$o"
}

for n in ${SCALE_RANKS:-2 32 128}; do
	r=0
	while [ $r -lt "$rounds" ]; do
		for p in ours $peers; do
			timed "$p" "$n" "$tmp/$p.$n.$r"
		done
		r=$((r + 1))
	done
done

# val WHO N KEY: the median over the rounds of the number after KEY.
val() {
	for f in "$tmp/$1.$2".[0-9]*; do
		[ -f "$f" ] && awk -v k="$3" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$f"
	done | median
}

echo "# one host, medians of $rounds rounds: the job's wall time (s), the slowest"
echo "# MPI_Init (s), memory per rank (KiB: the job's PSS over its ranks)"
printf '%6s' ranks
for p in ours $peers; do printf ' %8s %8s %9s' "wall_$p" "init_$p" "kib_$p"; done
echo
for n in ${SCALE_RANKS:-2 32 128}; do
	printf '%6d' "$n"
	for p in ours $peers; do
		printf ' %8s %8s %9s' "$(val "$p" "$n" wall_s)" \
			"$(val "$p" "$n" init_s)" "$(val "$p" "$n" pss_kib_per_rank)"
	done
	echo
done
for n in ${SCALE_RANKS:-2 32 128}; do
	w=$(val ours "$n" wall_s) m=$(val ours "$n" pss_kib_per_rank)
	for p in $peers; do
		pw=$(val "$p" "$n" wall_s) pm=$(val "$p" "$n" pss_kib_per_rank)
		[ -n "$w" ] && [ -n "$pw" ] && awk -v n="$n" -v p="$p" -v w="$w" \
			-v pw="$pw" -v m="$m" -v pm="$pm" 'BEGIN {
			printf "%d ranks: ours / %s: wall time %.2f x, memory per rank %.2f x\n",
				n, p, w / pw, m / pm }'
	done
done
