#!/bin/sh
# A hostile peer in the collectives' shared memory: rank 1 runs with
# hostile_coll_peer.so preloaded and forges its arrivals at an allreduce
# (whole and split), a bcast (through a chunk and read in place), an
# allgather and an alltoall, with chunk offsets beyond its ring and
# addresses that wrap or name nothing. Rank 0 must fail each of those
# collectives with an error that says why, never crash, and go on working
# with rank 1.
. "$top_srcdir/test/netmod/lib.sh"
t="$top_srcdir/test/netmod"
run cc -shared -fPIC -O2 -I"$prefix/include" -I"$top_srcdir/src/netmod" \
	-o "$W/hostile_coll_peer.so" "$t/hostile_coll_peer.c" -ldl
run "$MPICC" -O2 -o "$W/hostile_coll" "$t/hostile_coll.c"
# 4 KiB bcasts through a chunk, 64 KiB ones read in place; 64 KiB
# allreduces split.
knobs="-genv MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN 16384
	-genv MPIR_CVAR_CH4_BIP_NODE_ALLREDUCE_SPLIT 32768
	-genv MPIR_CVAR_CH4_BIP_PRINT_COUNTERS 1"
echo "+ mpiexec -n 1 hostile_coll : -n 1 -env LD_PRELOAD hostile_coll_peer.so hostile_coll"
# shellcheck disable=SC2086
launch "the job with a hostile rank" "$MPIEXEC" $knobs -n 1 \
	"$W/hostile_coll" : -n 1 -env LD_PRELOAD "$W/hostile_coll_peer.so" \
	"$W/hostile_coll"
echo "$out" | grep -q "every forgery failed its collective" ||
	{ echo "FAILED: rank 0 did not finish its checks"; exit 1; }
forged=$(echo "$out" | grep -c "^hostile peer: rank 1 arrived")
failed=$(echo "$out" | grep -c "^rank 0: .* failed: ")
[ "$forged" -eq 8 ] && [ "$failed" -eq 8 ] ||
	{ echo "FAILED: $forged forgeries, $failed collectives failed at rank 0"; exit 1; }
# The paths the forgeries aimed at were the ones taken.
r0=$(echo "$out" | grep "^bip netmod rank 0:")
for what in "read where it lies" "allreduces split"; do
	n=$(echo "$r0" | sed -n "s/.*$what \([0-9]*\).*/\1/p")
	[ "${n:-0}" -gt 0 ] ||
		{ echo "FAILED: rank 0 counted no '$what'"; exit 1; }
done
echo "rank 0 failed all $failed forged collectives and went on"
