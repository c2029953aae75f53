#!/bin/sh
# The netmod's fault cases (faults.c): settings that differ between ranks,
# a cancel while the receiver computes, truncation of multi-GiB messages, a
# rank that dies in the middle of a transfer, receives BIP refuses or that
# find no memory.
. "$top_srcdir/test/netmod/lib.sh"
run "$MPICC" -O2 -Wno-stringop-overflow -o "$W/faults" "$top_srcdir/test/netmod/faults.c"

# preloaded SO MODE [VAR=VALUE...]: faults MODE on 2 ranks, SO preloaded
# into rank 1 alone, with the VARs; its output in $out, its exit status in
# $rc (124: it hung).
preloaded() {
	so=$1 mode=$2
	shift 2
	echo "+ mpiexec -n 1 faults $mode : -n 1 -env LD_PRELOAD $so $* faults $mode"
	envs=
	for v in "$@"; do
		envs="$envs -env ${v%%=*} ${v#*=}"
	done
	out=$(timeout 60 "$MPIEXEC" -n 1 "$W/faults" "$mode" : -n 1 \
		-env LD_PRELOAD "$W/$so" $envs "$W/faults" "$mode" 2>&1)
	rc=$?
	echo "$out"
}

# both TEXT WHAT: both ranks printed TEXT, else WHAT failed.
# (Occurrences, not lines: the launcher may join two ranks' lines.)
both() {
	[ "$(echo "$out" | grep -o "$1" | wc -l)" = 2 ] || { echo "FAILED: $2"; exit 1; }
}

# Credits are agreed per pair, whatever each rank was told (burst).
for s in "MPIR_CVAR_CH4_BIP_CREDITS 4:MPIR_CVAR_CH4_BIP_CREDITS 64" \
	 "BIP_SMALL_QUEUE 16:BIP_SMALL_QUEUE 1024" \
	 "BIP_SMALL_QUEUE 1024:BIP_SMALL_QUEUE 16"; do
	a=${s%%:*} b=${s#*:}
	echo "+ mpiexec -n 1 -env $a faults burst : -n 1 -env $b faults burst"
	out=$(timeout 60 "$MPIEXEC" -n 1 -env MPIR_CVAR_CH4_BIP_PRINT_COUNTERS 1 \
		-env $a "$W/faults" burst : -n 1 \
		-env MPIR_CVAR_CH4_BIP_PRINT_COUNTERS 1 -env $b "$W/faults" burst 2>&1) ||
		{ echo "$out"; echo "FAILED: burst with $a / $b"; exit 1; }
	echo "$out"
	echo "$out" | grep -q "100 messages of a burst received" ||
		{ echo "FAILED: burst not received"; exit 1; }
	# The agreed credits keep BIP's queue from overflowing.
	echo "$out" | grep "small-queue overflows [1-9]" &&
		{ echo "FAILED: the small-message queue overflowed"; exit 1; }
done

# A cancel is local: sent (not provably unmatched), then stuck behind the
# credits (cancelled).
mpirun 2 "$W/faults" cancel
echo "$out" | grep -q "not cancelled (delivered)" ||
	{ echo "FAILED: expected the sent announcement not to be cancelled"; exit 1; }
MPIR_CVAR_CH4_BIP_CREDITS=2 mpirun 2 "$W/faults" cancel
echo "$out" | grep -q "rank 0: .*, cancelled" ||
	{ echo "FAILED: an announcement that never left was not cancelled"; exit 1; }

# Truncation of 3 GiB (rendezvous) and 1.5 GiB (three-way) messages.
MPIR_CVAR_CH4_BIP_RNDV_THRESHOLD=2147483647 mpirun 2 "$W/faults" truncate

# A rank dies between answering a three-way send and receiving its data
# (which it would read itself at once, with more ranks than cores, unless
# BIP_SHM_PULL_MIN forbids it).
echo "+ BIP_SHM_PULL_MIN=never mpiexec -disable-auto-cleanup -n 3 faults dead-long"
out=$(BIP_SHM_PULL_MIN=never timeout 60 "$MPIEXEC" -disable-auto-cleanup -n 3 "$W/faults" dead-long 2>&1)
echo "$out"
for r in 0 1; do
	echo "$out" | grep -q "rank $r: a dead rank's failed send did not stop" ||
		{ echo "FAILED: rank $r did not carry on"; exit 1; }
done

# A rank dies while its peer only waits for it, to receive or in a small
# allreduce (shared memory): the error names the dead rank's pid and host.
for mode in dead-recv dead-coll; do
	echo "+ mpiexec -disable-auto-cleanup -n 2 faults $mode"
	out=$(timeout 60 "$MPIEXEC" -disable-auto-cleanup -n 2 "$W/faults" $mode 2>&1)
	echo "$out"
	pid=$(echo "$out" | sed -n 's/^rank 1: pid \([0-9]*\) dies$/\1/p')
	echo "$out" | grep -q "Rank 1 (pid $pid on host .*) died or stopped answering (BIP wire shm)" ||
		{ echo "FAILED: $mode: the error does not name the dead rank's pid and host"; exit 1; }
	! echo "$out" | grep -q "FAILED line" || { echo "FAILED: $mode"; exit 1; }
done
# ... and the allreduce found it waiting in shared memory, not in one of
# MPICH's algorithms over messages.
echo "$out" | grep -A1 "^MPIDI_Allreduce_intra_composition_beta" | grep -q "^MPIDI_BIP_proc_failed" ||
	{ echo "FAILED: dead-coll: the allreduce did not go through shared memory"; exit 1; }

# A rank dies under a stream of small bcasts: the root fails waiting for
# it, and the other rank, which waits only for the root, learns it from
# the root's failed arrival. The same with bcasts in pieces: the failure
# comes in the middle of one.
dead_rank="Rank 2 (pid [0-9]* on host .*) died or stopped answering"
failed_root="Rank 0 of the communicator failed this collective"
for mode in dead-bcast dead-bcast-pieces; do
	echo "+ mpiexec -disable-auto-cleanup -n 3 faults $mode"
	out=$(timeout 60 "$MPIEXEC" -disable-auto-cleanup -n 3 \
		"$W/faults" $mode 2>&1)
	echo "$out"
	echo "$out" | grep -q "^rank 0: bcast [0-9]* failed" &&
		echo "$out" | grep -q "$dead_rank" || {
		echo "FAILED: $mode: the root did not fail naming the dead rank"
		exit 1
	}
	echo "$out" | grep -q "^rank 1: bcast [0-9]* failed" &&
		echo "$out" | grep -q "$failed_root" || {
		echo "FAILED: $mode: a rank waiting for the root did not fail"
		exit 1
	}
done

# A rank dies under alltoalls whose blocks are read where they lie: both
# others fail naming it (each waits for it), none waits for ever.
echo "+ mpiexec -disable-auto-cleanup -n 3 faults dead-alltoall"
out=$(timeout 60 "$MPIEXEC" -disable-auto-cleanup -n 3 "$W/faults" \
	dead-alltoall 2>&1)
echo "$out"
for r in 0 1; do
	echo "$out" | grep -q "rank $r: alltoall [0-9]* failed" || {
		echo "FAILED: dead-alltoall: rank $r did not fail"
		exit 1
	}
done
[ "$(echo "$out" | grep -o "$dead_rank" | wc -l)" -ge 2 ] ||
	{ echo "FAILED: dead-alltoall: the errors do not name the dead rank"; exit 1; }

# A rank dies with the rest of its eager message unsent (every rank a host
# of its own: udp; the first piece matched a receive): it fails.
echo "+ mpiexec -disable-auto-cleanup -n 2 faults dead-eager"
out=$(MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_CH4_BIP_CREDITS=2 BIP_PEER_TIMEOUT_MS=1000 \
	MPIR_CVAR_CH4_BIP_SHORT_LIMIT=100 timeout 60 "$MPIEXEC" \
	-disable-auto-cleanup -n 2 "$W/faults" dead-eager 2>&1)
echo "$out"
echo "$out" | grep -q "rank 0: eager receive from the dead rank: class" ||
	{ echo "FAILED: a half-sent eager message did not fail its receive"; exit 1; }

# An announcement that finds the receive FIFO full fails at both ends, its
# sender not left waiting, and gives its credit back all the same: the
# sender's next message gets through. (Without reads by the receiver: a
# message it reads needs no BIP tag.)
MPIR_CVAR_CH4_BIP_CREDITS=2 BIP_LONG_TAGS=1 MPIR_CVAR_CH4_BIP_RECV_FIFO_MAX=1 \
BIP_SHM_PULL_MIN=never mpirun 3 "$W/faults" fifo-full
echo "$out" | grep -q "a refused announcement gave its credit back" ||
	{ echo "FAILED: the credit of a refused announcement"; exit 1; }
both "the full FIFO refused failed" \
	"the message the full FIFO refused did not fail at both ends"

# BIP refuses a long receive (preloaded into rank 1: the first is posted,
# the others refused): the refused ones fail at both ends instead of
# waiting for ever, the one that waited in the receive FIFO for the only
# tag as well as the one posted at once. (The receiver may not read: every
# message needs a tag.)
run cc -shared -fPIC -O2 -I"$prefix/include" -o "$W/no_lrecv.so" \
	"$top_srcdir/test/netmod/no_lrecv.c" -ldl
BIP_LONG_TAGS=1 BIP_SHM_PULL_MIN=never MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	preloaded no_lrecv.so refused NO_LRECV_AFTER=1
[ $rc = 0 ] || { echo "FAILED: refused receives"; exit 1; }
both "refused receives failed at both ends" \
	"refused receives did not fail at both ends"
echo "$out" | grep "bip netmod rank 1:" | grep -q "receive FIFO max 1," ||
	{ echo "FAILED: no receive waited in the FIFO for the tag"; exit 1; }
# The second fragment of a rendezvous message refused, its answer maybe
# overtaking the first fragment's end at the sender.
BIP_SHM_PULL_MIN=never MPIR_CVAR_CH4_BIP_FRAGMENT_SIZE=262144 \
	preloaded no_lrecv.so refused-rndv NO_LRECV_AFTER=1
[ $rc = 0 ] || { echo "FAILED: a refused fragment"; exit 1; }
both "a refused fragment failed" "a refused fragment did not fail at both ends"

# An active message's receive refused: MPICH's generic RMA drops the
# request's error, so at both ends the call that ran progress reports it
# (else the accumulate is lost without a word), and the job ends.
BIP_SHM_PULL_MIN=never preloaded no_lrecv.so refused-am
[ $rc -ne 124 ] || { echo "FAILED: a refused active message hung the job"; exit 1; }
echo "$out" | grep -q "BIP call bip_ilrecv failed" &&
	echo "$out" | grep -q "rank 0: fence after the accumulate failed" ||
	{ echo "FAILED: a refused active message was not reported at both ends"; exit 1; }

# No memory for a message's data at the receiver (no_malloc.c, preloaded
# into rank 1 and armed there once MPI_Init is over): the three-way
# message that came first, a three-way and a rendezvous one into a
# non-contiguous receive, an eager one; every receive fails, and every
# send whose sender waits for the receiver, rather than hang. A put's
# data, as for a refused one: both fences fail, and the job ends.
run cc -shared -fPIC -O2 -o "$W/no_malloc.so" \
	"$top_srcdir/test/netmod/no_malloc.c"
preloaded no_malloc.so nomem
[ $rc = 0 ] || { echo "FAILED: messages without memory"; exit 1; }
both "messages without memory failed" \
	"messages without memory did not fail at both ends"
preloaded no_malloc.so nomem-am
[ $rc -ne 124 ] || { echo "FAILED: a put without memory hung the job"; exit 1; }
echo "$out" | grep -q "MPIDI_BIP_lrecv.*Out of memory" &&
	echo "$out" | grep -q "rank 0: fence after the put failed" ||
	{ echo "FAILED: a put without memory was not reported at both ends"; exit 1; }
