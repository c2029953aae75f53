#!/bin/sh
# A hostile peer: rank 1 runs with hostile_peer.so preloaded and forges
# control messages of every kind (sizes, offsets, request handles, credits,
# handlers, types, lengths). Rank 0 must drop and count each one, never
# crash, and go on exchanging every protocol with rank 1.
. "$top_srcdir/test/netmod/lib.sh"
t="$top_srcdir/test/netmod"
run cc -shared -fPIC -O2 -I"$prefix/include" -I"$top_srcdir/src/netmod" \
	-o "$W/hostile_peer.so" "$t/hostile_peer.c" -ldl
run "$MPICC" -O2 -o "$W/hostile" "$t/hostile.c"
echo "+ mpiexec -n 1 hostile : -n 1 -env LD_PRELOAD hostile_peer.so hostile"
out=$(timeout 120 "$MPIEXEC" -n 1 -env MPIR_CVAR_CH4_BIP_PRINT_COUNTERS 1 \
	"$W/hostile" : -n 1 -env LD_PRELOAD "$W/hostile_peer.so" \
	"$W/hostile" 2>&1)
status=$?
echo "$out"
[ $status -eq 0 ] || { echo "FAILED (exit $status): the job did not survive"; exit 1; }
echo "$out" | grep -q "every protocol still works" ||
	{ echo "FAILED: rank 0 did not finish its checks"; exit 1; }
sent=$(echo "$out" | sed -n 's/.*sent \([0-9]*\) forged.*/\1/p')
dropped=$(echo "$out" | sed -n 's/^bip netmod rank 0:.*dropped \([0-9]*\).*/\1/p')
[ -n "$sent" ] && [ "$dropped" = "$sent" ] ||
	{ echo "FAILED: $sent forged messages, rank 0 counted '$dropped' dropped"; exit 1; }
echo "rank 0 dropped all $dropped forged messages and went on"
