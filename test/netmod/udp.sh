#!/bin/sh
# MPI over the udp wire on this host (BIP_WIRE=udp): the examples and the
# netmod's point-to-point test on 2 and 3 ranks, then again with BIP's own
# seeded loss and duplication, where results must be identical.
. "$top_srcdir/test/netmod/lib.sh"
ex="$top_srcdir/examples/mpi"
t="$top_srcdir/test/netmod"
run "$MPICC" -O2 -o "$W/cpi" "$ex/cpi.c" -lm
run "$MPICC" -O2 -o "$W/ring" "$ex/ring.c"
run "$MPICC" -O2 -Wno-stringop-overflow -o "$W/test_pt2pt" "$t/test_pt2pt.c"
export BIP_WIRE=udp
for n in 2 3; do
	mpirun $n "$W/cpi"
	echo "$out" | grep -q "error [0-9.]*e-1[0-9]" ||
		{ echo "FAILED: pi is off"; exit 1; }
	mpirun $n "$W/ring" 1000000
	echo "$out" | grep -q "intact" || { echo "FAILED: ring"; exit 1; }
	mpirun $n "$W/test_pt2pt"
	echo "$out" | grep -q "passed on $n ranks" ||
		{ echo "FAILED: test_pt2pt on $n ranks"; exit 1; }
done
BIP_FAULT_DROP_PCT=3 BIP_FAULT_DUP_PCT=2 BIP_FAULT_SEED=5 mpirun 2 "$W/test_pt2pt"
echo "$out" | grep -q "passed on 2 ranks" ||
	{ echo "FAILED: test_pt2pt under faults"; exit 1; }
# The last message of a run: its sender completes only on the receiver's
# ack, which (with the CLOSE that carries it too) may be lost while the
# receiver closes; the closing side lingers to acknowledge resends. One run
# in about 30 failed before that, so several seeds.
for seed in 6 7 8 9 10 11 12 13 14 15 16; do
	BIP_FAULT_DROP_PCT=3 BIP_FAULT_DUP_PCT=2 BIP_FAULT_SEED=$seed \
		mpirun 2 "$W/ring" 1000000
	echo "$out" | grep -q "intact" ||
		{ echo "FAILED: ring under faults, seed $seed"; exit 1; }
done
exit 0
