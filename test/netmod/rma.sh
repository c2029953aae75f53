#!/bin/sh
# One-sided communication of the bip netmod: test_rma (every window
# flavour and synchronization, contiguous and not, every byte checked) on
# one host, where puts and gets are copied by the origin alone (the
# counters printed at finalize must show it on every rank; a sleeping
# target takes no part; an access outside a window fails with
# MPI_ERR_RMA_RANGE), on 2 ranks and on 4 (more than cores). Windows of
# MPI_Win_allocate and of MPI_Alloc_mem's memory lie in memory BIP shares
# within the host, and MPI_Win_allocate_shared's in MPICH's segment: every
# put and get to them, vector types included, must be a load or a store
# (the counter equals what the test issued); other memory is copied by
# cross-memory attach, as the windows BIP would share are with
# MPIR_CVAR_CH4_BIP_SHARED_MEM=0. Then with cross-memory attach off and
# with every rank on a host of its own, they go by active messages (none
# copied directly).
. "$top_srcdir/test/netmod/lib.sh"
run "$MPICC" -O2 -o "$W/test_rma" "$top_srcdir/test/netmod/test_rma.c"

# mapped N all|none: on each of N ranks, the puts and gets by load and
# store are all that the test issued to other ranks, or none (on 2 ranks,
# with a list of windows: then no rank puts to itself).
mapped() {
	r=0
	while [ $r -lt "$1" ]; do
		n=$(echo "$out" | sed -n "s/^rank $r: \([0-9]*\) accesses.*/\1/p")
		m=$(echo "$out" | sed -n "s/^bip netmod rank $r:.*by load and store \([0-9]*\).*/\1/p")
		[ -n "$n" ] && [ -n "$m" ] ||
			{ echo "FAILED: rank $r printed no counts"; exit 1; }
		want=$n
		[ "$2" = all ] || want=0
		[ "$m" -eq "$want" ] && [ "$n" -gt 0 ] ||
			{ echo "FAILED: rank $r: $m of $n accesses by load and store, not $2"; exit 1; }
		r=$((r + 1))
	done
}

for n in 2 4; do
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun $n "$W/test_rma" direct
	expect "test_rma direct: passed on $n ranks" "test_rma on $n ranks"
	counted $n yes "puts and gets direct"
done
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/test_rma" direct allocate alloc_mem
expect "test_rma direct: passed on 2 ranks" "test_rma in shared memory"
mapped 2 all
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_rma" direct shared
expect "test_rma direct: passed on 2 ranks" "test_rma in MPICH's shared segment"
mapped 2 all
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_rma" direct create
expect "test_rma direct: passed on 2 ranks" "test_rma in plain memory"
mapped 2 none
counted 2 yes "puts and gets direct"
MPIR_CVAR_CH4_BIP_SHARED_MEM=0 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/test_rma" direct allocate alloc_mem
expect "test_rma direct: passed on 2 ranks" "test_rma without shared memory"
mapped 2 none
counted 2 yes "puts and gets direct"
BIP_SHM_PULL_MIN=never MPIR_CVAR_CH4_BIP_SHARED_MEM=0 \
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_rma" am
expect "test_rma am: passed on 2 ranks" "test_rma with cross-memory attach off"
counted 2 no "puts and gets direct"
MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 3 "$W/test_rma" am
expect "test_rma am: passed on 3 ranks" "test_rma between hosts"
counted 3 no "puts and gets direct"
echo "one-sided: passed"
