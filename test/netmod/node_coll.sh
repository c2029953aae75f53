#!/bin/sh
# Small collectives within one host through shared memory
# (src/netmod/bip_coll.c): test_node_coll checks every result (allreduce,
# reduce, bcast with a strided receiver, barrier, ranks running ahead of a
# sleeping one, split and dup communicators, threads, waiters that sleep
# and are woken) on 2, 3 and 4 ranks
# (more than cores). The counters printed at finalize must show every rank took
# that path; with MPIR_CVAR_CH4_BIP_NODE_COLL_MAX=-1 none may, and the
# results stay right; reductions take it only up to 1 MiB over the ranks.
# Across hosts (every rank a host of its own) the communicator does not
# qualify: point-to-point, right results.
. "$top_srcdir/test/netmod/lib.sh"
run "$MPICC" -O2 -o "$W/test_node_coll" "$top_srcdir/test/netmod/test_node_coll.c" -lpthread

for n in 2 3 4; do
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun $n "$W/test_node_coll"
	expect "test_node_coll: passed" "test_node_coll on $n ranks"
	counted $n yes "collectives in shared memory"
done

# Data read where it lies (MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN): every
# alltoall and every bcast between two ranks, however small, from 1 byte
# (strided, in place and larger than a chunk too); none at 0.
if "$top_builddir/bip_info" | grep -q "cross-memory attach available"; then
	for n in 2 3 4; do
		MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN=1 \
			MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun $n "$W/test_node_coll" 5
		expect "test_node_coll: passed" "test_node_coll on $n ranks, read in place"
		counted $n yes "read where it lies"
	done
	MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN=1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
		mpirun 3 "$W/test_node_coll" 5 alltoall 87381
	expect "test_node_coll: passed" "alltoall of 1 MiB a rank read in place"
	MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN=0 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
		mpirun 2 "$W/test_node_coll" 5
	expect "test_node_coll: passed" "test_node_coll, nothing read in place"
	counted 2 no "read where it lies"
else
	echo "SKIP: collectives read in place: no cross-memory attach here"
fi

# A smaller limit: the data ring is its least (16 KiB), which the larger
# sizes wrap quickly, and the edge to point-to-point moves with it; split
# allreduces from 4 KiB there, in pieces of 2 KiB (MPICH's algorithms do
# not sum in rank order on 3 ranks, which the test asserts).
MPIR_CVAR_CH4_BIP_NODE_COLL_MAX=4096 MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT=4096 \
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 3 "$W/test_node_coll" 5
expect "test_node_coll: passed" "test_node_coll with NODE_COLL_MAX=4096"
counted 3 yes "collectives in shared memory"
counted 3 yes "allreduces split"

# Allreduces split into shares (bip_coll.c, allreduce_split) from 1 byte
# on: shares smaller than a line, empty ones (fewer elements than ranks),
# in place, pieces that wrap the ring; every result checked. With -1
# none is split (2 ranks: MPICH's algorithms do not sum in rank order
# above).
for n in 2 3 4; do
	MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT=1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
		mpirun $n "$W/test_node_coll" 3
	expect "test_node_coll: passed" "test_node_coll on $n ranks, every allreduce split"
	counted $n yes "allreduces split"
done
MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT=-1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/test_node_coll" 3
expect "test_node_coll: passed" "test_node_coll on 2 ranks, no allreduce split"
counted 2 no "allreduces split"

# Threads, each with collectives on a communicator of its own: a waiting
# one lets the others in (without that, 3 ranks hang).
mpirun 3 "$W/test_node_coll" 300 threads
expect "test_node_coll: passed" "test_node_coll with threads"

# A rank that waits long in a collective sleeps on its doorbell, and the
# last arrival wakes it (a sleep nothing wakes ends after up to 1 ms).
# Two ranks, a core each: with more ranks than cores, when a woken rank
# runs again is the scheduler's choice.
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_node_coll" 30 wake
expect "test_node_coll: passed" "waiters in a barrier woken by the last arrival"
[ "$(counter sleeps | sort -n | tail -n 1)" -gt 0 ] ||
	{ echo "FAILED: no rank slept in a barrier 20 ms long"; exit 1; }

# With more ranks than cores, ranks that wait long in a collective while
# two others stream (20000 messages, many milliseconds) sleep there once
# their last such wait was long (BIP's idle policy, bip_idle_watch), not
# yield for 20 ms: their yields took the streaming ranks' cores (0.34-0.80
# us a message, 0.16-0.28 with the sleeps). Before, they never slept.
if [ "$(nproc)" -lt 4 ]; then
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 4 "$W/test_node_coll" 6 stream
	expect "test_node_coll: passed" "a stream between 2 of 4 ranks, 2 in a collective"
	echo "$out" | sed -n 's/.*netmod rank \([0-9]*\):.*, sleeps \([0-9]*\),.*/\1 \2/p' |
		awk '$1 >= 2 { n++; if ($2 == 0) bad = 1; print "rank " $1 ": " $2 " sleeps" }
		     END { exit !(n == 2 && !bad) }' ||
		{ echo "FAILED: a rank waiting in a collective during a stream never slept"; exit 1; }
else
	echo "SKIP: waiters asleep during a stream: $(nproc) cores, so 4 ranks are not more than cores"
fi

# One long wait after short ones (8 ms for a rank that sleeps, after 50
# allreduces) sleeps after 1 ms there too: it yielded for 20 ms before,
# taking the cores of ranks that work (a stream between 2 of 4 ranks while
# the other 2 wait in one collective: 0.46 us a message, 0.22 so).
if [ "$(nproc)" -lt 4 ]; then
	mpirun 4 "$W/test_node_coll" 10 late
	expect "test_node_coll: passed" "one long wait in a collective after short ones"
else
	echo "SKIP: one long wait after short ones: $(nproc) cores, so 4 ranks are not more than cores"
fi

# Back-to-back collectives, each wait short, are no long wait to BIP's idle
# policy: an arrival counts as an event there. Before, the empty polls of
# many made one: each wait then slept and was woken (9357 sleeps in 51022
# allreduces; at most 1 in 100 here, for a busy machine's preemptions).
if [ "$(nproc)" -ge 2 ]; then
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_node_coll" 10000 exit 64
	expect "test_node_coll: passed" "20000 allreduces of 256 B on 2 ranks"
	z=$(counter sleeps | sort -n | tail -n 1)
	echo "2 ranks, 20000 allreduces of 256 B: at most $z sleeps a rank"
	[ "$z" -le 200 ] ||
		{ echo "FAILED: $z sleeps in 20000 back-to-back allreduces"; exit 1; }
else
	echo "SKIP: back-to-back collectives: one core, so ranks wait for it"
fi

# Ranks that leave right after their last collective are not dead to the
# ranks still looking at their arrival. (A stress check: the race, seen
# once in 3 runs of test_nas on a busy machine, needs a rank to stall
# between two looks for as long as the other takes to finalize.)
for n in 2 4; do
	i=0
	while [ $i -lt 10 ]; do
		mpirun $n "$W/test_node_coll" 20 exit >/dev/null
		expect "test_node_coll: passed" "allreduce, then MPI_Finalize at once, $n ranks"
		i=$((i + 1))
	done
done

# A communicator's first 8 small collectives go by messages (exit: 2
# allreduces an iteration), the next set the memory up.
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_node_coll" 4 exit
counted 2 no "collectives in shared memory"
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_node_coll" 5 exit
[ "$(counter "collectives in shared memory" | sort -u)" = 2 ] ||
	{ echo "FAILED: not the 9th and 10th collectives in shared memory"; exit 1; }

# Reductions whole only up to 1 MiB over the ranks (every rank reduces
# every part): 256 KiB on 4 ranks there, on 5 by messages unless split
# into shares (by default from 32 KiB), which any size is above 2 ranks
# (3 MiB on 3); on 2 ranks one larger than NODE_COLL_MAX goes by messages.
MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT=-1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 4 "$W/test_node_coll" 5 exit 65536
[ "$(counter "collectives in shared memory" | sort -u)" = 2 ] ||
	{ echo "FAILED: allreduce of 256 KiB on 4 ranks not in shared memory"; exit 1; }
MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT=-1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 5 "$W/test_node_coll" 5 exit 65536
counted 5 no "collectives in shared memory"
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 5 "$W/test_node_coll" 5 exit 65536
expect "test_node_coll: passed" "allreduce of 256 KiB on 5 ranks"
[ "$(counter "allreduces split" | sort -u)" = 2 ] ||
	{ echo "FAILED: allreduce of 256 KiB on 5 ranks not split"; exit 1; }
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 3 "$W/test_node_coll" 5 exit 786433
expect "test_node_coll: passed" "allreduce of 3 MiB on 3 ranks"
[ "$(counter "allreduces split" | sort -u)" = 2 ] ||
	{ echo "FAILED: allreduce of 3 MiB on 3 ranks not split"; exit 1; }
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_node_coll" 5 exit 65537
expect "test_node_coll: passed" "allreduce of 256 KiB + 4 B on 2 ranks"
counted 2 no "allreduces split"

# An alltoall of up to 4 times NODE_COLL_MAX a rank there too, in rounds:
# on 3 ranks, blocks of 87381 ints (1 MiB a rank) take 5 (the slice is
# 87360 bytes), the strided receive and the one in place too; on 2 ranks,
# by messages. (The allgathers of such blocks go by messages: uncounted.)
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 3 "$W/test_node_coll" 5 alltoall 87381
expect "test_node_coll: passed" "alltoall in rounds"
[ "$(counter "collectives in shared memory" | sort -u)" = 2 ] ||
	{ echo "FAILED: alltoall of 1 MiB a rank on 3 ranks not in shared memory"; exit 1; }
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_node_coll" 5 alltoall 65537
expect "test_node_coll: passed" "alltoall of 512 KiB a rank on 2 ranks"
counted 2 no "collectives in shared memory"

# Bcasts larger than NODE_COLL_MAX: in pieces (3 ranks), each takes the
# shared path: 3 roots + 20 run ahead on each of 3 communicators, at least
# 69 more a rank than by messages (NODE_BCAST_PIECES=0; they also count
# towards the lazy set-up); the results right either way.
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 3 "$W/test_node_coll" 1
expect "test_node_coll: passed" "test_node_coll, bcasts in pieces"
on=$(counter "collectives in shared memory" | sort -n | head -n 1)
MPIR_CVAR_CH4_BIP_NODE_BCAST_PIECES=0 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 3 "$W/test_node_coll" 1
expect "test_node_coll: passed" "test_node_coll with NODE_BCAST_PIECES=0"
off=$(counter "collectives in shared memory" | sort -n | tail -n 1)
[ "$on" -ge $((off + 69)) ] || {
	echo "FAILED: $on collectives in shared memory with bcasts in pieces,"
	echo "        $off without"
	exit 1
}

# Off: MPICH's algorithms (2 ranks: a sum of two doubles has one order).
MPIR_CVAR_CH4_BIP_NODE_COLL_MAX=-1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/test_node_coll" 5
expect "test_node_coll: passed" "test_node_coll with the shared path off"
counted 2 no "collectives in shared memory"
MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS=1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/test_node_coll" 5
expect "test_node_coll: passed" "test_node_coll with NODE_COLL_RANKS=1"
counted 2 no "collectives in shared memory"

# Ranks told different NODE_COLL_RANKS: they agree on point-to-point.
echo "+ mpiexec -n 1 -env MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS 3 test_node_coll 2 : -n 1 test_node_coll 2"
launch "different NODE_COLL_RANKS" "$MPIEXEC" \
	-n 1 -env MPIR_CVAR_CH4_BIP_PRINT_COUNTERS 1 \
	-env MPIR_CVAR_CH4_BIP_NODE_COLL_RANKS 3 "$W/test_node_coll" 2 : \
	-n 1 -env MPIR_CVAR_CH4_BIP_PRINT_COUNTERS 1 "$W/test_node_coll" 2
expect "test_node_coll: passed" "test_node_coll with different NODE_COLL_RANKS"
counted 2 no "collectives in shared memory"

# Every rank a host of its own (MPICH's node map; BIP then takes udp): no
# shared memory between them.
MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/test_node_coll" 2
expect "test_node_coll: passed" "test_node_coll across hosts"
counted 2 no "collectives in shared memory"
echo "collectives in shared memory: passed"
