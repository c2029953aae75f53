#!/bin/sh
# MPI over the udp wire on this host (BIP_WIRE=udp): the examples and the
# netmod's point-to-point test on 2 and 3 ranks, then again with BIP's own
# seeded loss and duplication, where results must be identical.
. "$top_srcdir/test/netmod/lib.sh"
build_examples
run "$MPICC" -O2 -o "$W/test_busy" "$top_srcdir/test/netmod/test_busy.c"
export BIP_WIRE=udp
# A rank that computes 3 s without polling, while its peer waits for its
# acks with a 1 s dead-peer timeout: its wire's liveness thread answers.
BIP_PEER_TIMEOUT_MS=1000 mpirun 2 "$W/test_busy" 3
expect "data intact" "a busy rank was taken for dead"
for n in 2 3; do
	mpirun $n "$W/cpi"
	expect "error [0-9.]*e-1[0-9]" "pi is off"
	mpirun $n "$W/ring" 1000000
	expect "intact" "ring"
	mpirun $n "$W/test_pt2pt"
	expect "passed on $n ranks" "test_pt2pt on $n ranks"
done
BIP_FAULT_DROP_PCT=3 BIP_FAULT_DUP_PCT=2 BIP_FAULT_SEED=5 mpirun 2 "$W/test_pt2pt"
expect "passed on 2 ranks" "test_pt2pt under faults"
for seed in 6 7 8 9 10 11; do
	BIP_FAULT_DROP_PCT=3 BIP_FAULT_DUP_PCT=2 BIP_FAULT_SEED=$seed \
		mpirun $((2 + seed % 2)) "$W/ring" 1000000
	expect "intact" "ring under faults, seed $seed"
done
# The last message of a run: its sender completes only on the receiver's
# ack, which (with the CLOSE that carries it too) may be lost while the
# receiver closes. The CLOSE is resent until acknowledged; when closing
# only lingered, 3 % loss failed about 1 run in 30. Here 40 % of the acks
# and CLOSEs are lost.
for seed in 1 2 3 4 5 6; do
	BIP_FAULT_DROP_PCT=40 BIP_FAULT_TYPES=ACK,CLOSE BIP_FAULT_SEED=$seed \
		mpirun $((2 + seed % 2)) "$W/ring" 1000
	expect "intact" "ring with acks and CLOSEs lost, seed $seed"
done
exit 0
