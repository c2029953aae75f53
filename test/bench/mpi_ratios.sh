#!/bin/sh
# mpi_ratios.sh PREFIX - the OSU-style benchmark (test/bench/mpi_bench.c,
# 2 ranks on one host, 0 B .. MAX_BYTES, default 4 MiB) over our MPI
# (PREFIX/bin/mpicc, mpiexec: every message through the bip netmod) and,
# when the machine has them, over Debian's MPICH (mpicc.mpich,
# mpiexec.mpich; ch4:ucx) and Open MPI (mpicc.openmpi, mpirun.openmpi;
# vader) in the same run: ROUNDS rounds (default 5), each running every
# party once in turn, the median per size, and our ratio to the best peer
# at that size. Goals (issue 10): latency <= 0.9 x, bandwidth and
# bidirectional bandwidth >= 1.1 x the best peer at every size; the first
# 200 round trips after MPI_Init within 1.2 x the steady state; a
# bidirectional miss waived where the best peer is within 10 % of the
# single-copy floor both ways (bip_floor, 64 KiB .. 4 MiB, measured every
# round), and each party's bidirectional bandwidth over that floor. Then
# each party's 8 B latency round by round: the machine's mode. With
# gnuplot installed, the latency and bandwidth curves of every party go to
# PLOT (default mpi_ratios.png), as in Fig. 1 of the MPI-BIP paper.
set -eu
prefix=${1:?usage: mpi_ratios.sh PREFIX}
rounds=${ROUNDS:-5}
max=${MAX_BYTES:-4194304}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/mpi_bench.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/peers.sh"

build_parties "$tmp" "$src"

# Both ways at once, long messages are read by their receivers (every
# party does so, with cross-memory attach): the single-copy floor both
# ways (bip_floor's cma_both_MBps, each process reading the other's
# buffer at once, 64 KiB .. 4 MiB) is what a bidirectional bandwidth can
# reach there. Issue 10 waives a goal only where the best peer is already
# within 10 % of a floor measured in the same run: measured in every
# round, beside the parties, since the machine's speed drifts between
# rounds; its median per size.
each_round() {
	"$prefix/bin/bip_floor" 2>/dev/null |
		awk '$1 == "cma_both_MBps" { print $2, $3 }' >"$1/floor.$2" || true
}

ROUNDS=$rounds run_rounds "$tmp" 2 "$max"
med() { med_rounds "$tmp" "$@"; }
first() { med_first "$tmp" "$1"; }
for n in $(awk '{ print $1 }' "$tmp/floor.0" 2>/dev/null); do
	echo "$n $(med floor "$n" 2)"
done >"$tmp/floor"

echo "# 2 ranks, one host; medians of $rounds rounds; latency one-way (us),"
echo "# bandwidth and bidirectional bandwidth (MB/s); ratio: ours / the best peer"
printf '%9s' bytes
for p in ours $peers; do printf ' %9s %9s %9s' "lat_$p" "bw_$p" "bibw_$p"; done
[ -z "$peers" ] || printf ' %6s %6s %6s' lat_r bw_r bibw_r
echo
for n in $(awk '$1 != "#" {print $1}' "$tmp/ours.0"); do
	line=$n best="9e99 0 0"
	for p in ours $peers; do
		l=$(med "$p" "$n" 2) b=$(med "$p" "$n" 3) bb=$(med "$p" "$n" 4)
		line="$line ${l:-nan} ${b:-0} ${bb:-0}"
		[ "$p" = ours ] || [ -z "$l" ] ||
			best=$(echo "$best $l $b $bb" | awk '{
				print ($4 < $1 ? $4 : $1), ($5 > $2 ? $5 : $2), ($6 > $3 ? $6 : $3) }')
	done
	echo "$line $best" | awk -v peers="$peers" '{
		np = 1 + split(peers, unused)
		printf "%9d", $1
		for (i = 2; i <= 1 + 3 * np; i++) printf " %9.3f", $i
		if (peers != "") {
			bl = $(2 + 3 * np); bb = $(3 + 3 * np); bbb = $(4 + 3 * np)
			printf " %6.2f %6.2f %6.2f", $2 / bl,
				(bb > 0 ? $3 / bb : 0), (bbb > 0 ? $4 / bbb : 0)
		}
		printf "\n" }'
done >"$tmp/table"
cat "$tmp/table"

fo=$(first ours) so=$(med ours 8 2)
awk -v f="$fo" -v s="$so" 'BEGIN {
	printf "first 200 round trips after MPI_Init, 8 B: %.3f us one way, %.2f x the steady state (goal <= 1.2)\n", f, f / s }'
for p in $peers; do
	awk -v p="$p" -v f="$(first "$p")" -v s="$(med "$p" 8 2)" 'BEGIN {
		if (f > 0) printf "  %s: %.3f us, %.2f x its steady state\n", p, f, f / s }'
done
[ -z "$peers" ] || awk 'FILENAME == ARGV[1] { floor[$1] = $2; next }
	$1 > 0 {
		n++; l += ($(NF - 2) <= 0.9); b += ($(NF - 1) >= 1.1)
		if ($NF >= 1.1) bb++
		else if ($1 in floor && $NF > 0 && $4 / $NF >= 0.9 * floor[$1]) {
			w++; ws = ws sprintf(" %d B (best peer %.2f, ours %.2f of %.0f MB/s)",
				$1, $4 / $NF / floor[$1], $4 / floor[$1], floor[$1])
		}
		if (!wl || $(NF - 2) > wl) { wl = $(NF - 2); wls = $1 }
		if (!wb || $(NF - 1) < wb) { wb = $(NF - 1); wbs = $1 }
		if (!wbb || $NF < wbb) { wbb = $NF; wbbs = $1 }
	} END {
		printf "sizes 1 B .. max meeting the goals: latency <= 0.9 x %d of %d (worst %.2f at %d B); ", l, n, wl, wls
		printf "bandwidth >= 1.1 x %d of %d (worst %.2f at %d B); ", b, n, wb, wbs
		printf "bibw >= 1.1 x %d of %d (worst %.2f at %d B), waived %d\n", bb, n, wbb, wbbs, w + 0
		if (w) printf "bibw waived where the best peer is within 10 %% of the single-copy floor both ways:%s\n", ws
	}' "$tmp/floor" "$tmp/table"
while read -r n f; do
	printf 'bibw at %d B over the single-copy floor both ways (%.0f MB/s):' "$n" "$f"
	c=4
	for p in ours $peers; do
		printf ' %s %.2f' "$p" "$(awk -v f="$f" -v n="$n" -v c=$c '$1 == n {
			print $c / f }' "$tmp/table")"
		c=$((c + 3))
	done
	echo
done <"$tmp/floor"
# The machine's mode, round by round: 8 B latency (one way) has a fast and
# a slow mode that last seconds and do not show as steal, for every party
# alike; a ratio is fair where the parties' rounds fell alike.
for p in ours $peers; do
	printf '# 8 B latency by round (us), %s:' "$p"
	r=0
	while [ $r -lt "$rounds" ]; do
		awk '$1 == 8 { printf " %s", $2 }' "$tmp/$p.$r" 2>/dev/null
		r=$((r + 1))
	done
	echo
done

# The curves, log-log, one line per party and measure.
command -v gnuplot >/dev/null || { echo "# gnuplot is not installed: no plot"; exit 0; }
plot=${PLOT:-mpi_ratios.png}
{
	echo "set terminal png size 1200,500; set output '$plot'"
	echo "set multiplot layout 1,2; set logscale xy; set grid; set key left top"
	echo "set xlabel 'bytes'; set ylabel 'one-way latency (us)'"
	printf "plot"
	c=2 k=1 sep=
	for p in ours $peers; do
		printf "%s '%s' every ::1 using 1:%d with linespoints lc %d title '%s'" "$sep" "$tmp/table" $c $k "$p"
		c=$((c + 3)) k=$((k + 1)) sep=,
	done
	echo
	echo "set ylabel 'bandwidth (MB/s)'"
	printf "plot"
	c=3 k=1 sep=
	for p in ours $peers; do
		printf "%s '%s' every ::1 using 1:%d with linespoints lc %d title '%s'" "$sep" "$tmp/table" $c $k "$p"
		printf ", '%s' every ::1 using 1:%d with lines dashtype 2 lc %d title '%s bidirectional'" "$tmp/table" $((c + 1)) $k "$p"
		c=$((c + 3)) k=$((k + 1)) sep=,
	done
	echo
} | gnuplot && echo "curves: $plot"
