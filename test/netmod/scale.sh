#!/bin/sh
# Memory that scales: jobs of 2, 32 and 128 ranks on this host (2 cores:
# up to 64 ranks a core) start, run an all-to-all between every pair and
# end (test/bench/mpi_scale.c); a rank's memory (the job's PSS over its
# ranks: its own pages and its share of the shared ones, rings included)
# at 32 and 128 ranks must stay within 1.5 x what it is at 2 ranks, since
# a process's rings take pages only as its peers use them. Nothing is
# left in /dev/shm.
. "$top_srcdir/test/netmod/lib.sh"
run "$MPICC" -O2 -o "$W/scale" "$top_srcdir/test/bench/mpi_scale.c"
for n in 2 32 128; do
	mpirun $n "$W/scale"
	kib=$(echo "$out" | sed -n 's/^ranks [0-9]* pss_kib_per_rank \([0-9]*\) .*/\1/p')
	[ -n "$kib" ] || { echo "FAILED: no memory figure at $n ranks"; exit 1; }
	eval "kib_$n=$kib"
done
for n in 32 128; do
	eval "kib=\$kib_$n"
	[ "$kib" -le $((kib_2 * 3 / 2)) ] ||
		{ echo "FAILED: $kib KiB a rank at $n ranks, $kib_2 at 2"; exit 1; }
done
left=$(ls /dev/shm | grep "^bip-$(id -u)-" || true)
[ -z "$left" ] || { echo "FAILED: left in /dev/shm: $left"; exit 1; }
echo "scale: a rank holds $kib_2 / $kib_32 / $kib_128 KiB at 2 / 32 / 128 ranks"
