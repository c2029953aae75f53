#!/bin/sh
# mpi_patterns.sh PREFIX - what applications do besides ping-pongs, over
# our MPI (PREFIX) and, when the machine has them, Debian's MPICH and Open
# MPI, in the same run, ROUNDS rounds (default 3) each running every party
# once in turn:
#  - collectives (test/bench/mpi_coll.c: allreduce, bcast, alltoall, 8 B ..
#    1 MiB) on each of COLL_RANKS (default "2 4") ranks, and on 2 ranks a
#    pipelined stream of 256 blocking sends to a neighbour that starts late;
#  - the NAS benchmarks' communication patterns (test/netmod/test_nas.c, data
#    checked; NAS_SCALE, default 5, sets the iterations) on each of
#    NAS_RANKS (default "2 4 8 16") ranks, more ranks than cores included.
# Prints the medians (us per call or per message; seconds per NAS pattern)
# and our ratio to the best peer, lower is better. Goals (issue 10):
# collectives and the stream <= 0.9 x, NAS patterns <= 1.0 x. A party that
# fails or takes over TIMEOUT seconds (default 120; stock MPICH busy-polls
# and collapses with more ranks than cores) is left out of that line's
# later rounds.
set -eu
prefix=${1:?usage: mpi_patterns.sh PREFIX}
rounds=${ROUNDS:-3}
coll_ranks=${COLL_RANKS:-2 4}
nas_ranks=${NAS_RANKS:-2 4 8 16}
nas_scale=${NAS_SCALE:-5}
TIMEOUT=${TIMEOUT:-120}
here=$(cd "$(dirname "$0")" && pwd)
nas_src=$here/../netmod/test_nas.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/peers.sh"

mkdir "$tmp/coll" "$tmp/nas"
build_parties "$tmp/coll" "$here/mpi_coll.c"
build_parties "$tmp/nas" "$nas_src" -Wno-stringop-overflow

# one PARTY PROGRAM RANKS ROUND ARGS...: a run, its results appended to
# $tmp/PARTY as "NAME RANKS BYTES VALUE ROUND" lines (BYTES "-" for NAS).
one() {
	p=$1 prog=$2 n=$3 r=$4
	shift 4
	! grep -qx "$p $prog $n" "$tmp/skip" 2>/dev/null || return 0
	run_party "$p" "$n" "$tmp/out" "$tmp/$prog/$p" "$@" ||
		{ echo "$p $prog $n" >>"$tmp/skip"; return 0; }
	awk -v n="$n" -v r="$r" -v prog="$prog" '
		prog == "coll" && NF == 3 { print $1, n, $2, $3, r }
		prog == "nas" && $2 == "pattern" { print "nas-" $1, n, "-", $(NF - 1), r }
		prog == "nas" && $2 == "patterns" { print "nas-total", n, "-", $(NF - 1), r }
	' "$tmp/out" >>"$tmp/$p"
}

r=0 runs=0 stolen=0 ticks=0
while [ $r -lt "$rounds" ]; do
	for p in ours $peers; do
		for n in $coll_ranks; do
			one "$p" coll "$n" "$r"
		done
		for n in $nas_ranks; do
			one "$p" nas "$n" "$r" "$nas_scale"
		done
	done
	r=$((r + 1))
done
[ -s "$tmp/ours" ] || { echo "# no run of ours succeeded"; exit 1; }
echo "# the host took CPU time from this machine (steal) during $stolen of $runs runs ($ticks ticks of 1/$(getconf CLK_TCK) s)"

# med PARTY NAME RANKS BYTES: the median over the rounds
med() {
	[ -f "$tmp/$1" ] || return 0
	awk -v k="$2 $3 $4" '$1 " " $2 " " $3 == k { print $4 }' "$tmp/$1" | median
}

echo "# medians of $rounds rounds: us per call (stream: per message), s per NAS pattern;"
echo "# ratio: ours / the best peer (lower is better)"
printf '%-13s %5s %8s' name ranks bytes
for p in ours $peers; do printf ' %10s' "$p"; done
printf ' %6s\n' ratio
awk '$5 == 0 { print $1, $2, $3 }' "$tmp/ours" | while read -r name n b; do
	line="$name $n $b" best=
	for p in ours $peers; do
		v=$(med "$p" "$name" "$n" "$b")
		line="$line ${v:--}"
		[ "$p" = ours ] || [ -z "$v" ] ||
			best=$(echo "$v ${best:-$v}" | awk '{ print ($1 < $2 ? $1 : $2) }')
	done
	echo "$line ${best:--}"
done | awk '{
	printf "%-13s %5s %8s", $1, $2, $3
	for (i = 4; i < NF; i++) printf " %10s", $i
	if ($NF != "-" && $4 != "-") {
		goal = ($1 ~ /^nas-/) ? 1.0 : 0.9
		ratio = $4 / $NF
		printf " %6.2f%s\n", ratio, ratio <= goal ? "" : " *"
		n[$1 ~ /^nas-/]++; met[$1 ~ /^nas-/] += ratio <= goal
	} else
		printf " %6s\n", "-"
} END {
	printf "goals met (* marks a miss): collectives and stream <= 0.9 x %d of %d, NAS patterns <= 1.0 x %d of %d\n",
		met[0], n[0], met[1], n[1]
}'
