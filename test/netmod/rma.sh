#!/bin/sh
# One-sided communication of the bip netmod: test_rma (every window
# flavour and synchronization, contiguous and not, every byte checked) on
# one host, where puts and gets are copied by the origin alone (the
# counters printed at finalize must show it on every rank; a sleeping
# target takes no part; an access outside a window fails with
# MPI_ERR_RMA_RANGE), on 2 ranks and on 4 (more than cores); then with
# cross-memory attach off and with every rank on a host of its own, where
# they go by active messages (none copied directly).
. "$top_srcdir/test/netmod/lib.sh"
run "$MPICC" -O2 -o "$W/test_rma" "$top_srcdir/test/netmod/test_rma.c"

# direct N: the last run's count of direct puts and gets, every rank's, is
# positive (yes) or zero (no).
direct() {
	v=$(echo "$out" | sed -n 's/.*puts and gets direct \([0-9]*\).*/\1/p')
	[ "$(echo "$v" | wc -l)" -eq "$1" ] ||
		{ echo "FAILED: no counters from $1 ranks"; exit 1; }
	if [ "$2" = yes ]; then
		! echo "$v" | grep -qx 0 ||
			{ echo "FAILED: a rank copied no put or get itself: $v"; exit 1; }
	else
		[ -z "$(echo "$v" | grep -vx 0)" ] ||
			{ echo "FAILED: puts or gets were copied directly: $v"; exit 1; }
	fi
}

for n in 2 4; do
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun $n "$W/test_rma" direct
	expect "test_rma direct: passed on $n ranks" "test_rma on $n ranks"
	direct $n yes
done
BIP_SHM_PULL_MIN=never MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/test_rma" am
expect "test_rma am: passed on 2 ranks" "test_rma with cross-memory attach off"
direct 2 no
MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 3 "$W/test_rma" am
expect "test_rma am: passed on 3 ranks" "test_rma between hosts"
direct 3 no
echo "one-sided: passed"
