#!/bin/sh
# MPI_Init failing for any reason (settings MPI cannot run with, ranks that
# do not agree) must say why and leave nothing in /dev/shm: Hydra removes
# nothing there. Then the credits a default start-up agrees on.
. "$top_srcdir/test/netmod/lib.sh"
run "$MPICC" -O2 -o "$W/cpi" "$top_srcdir/examples/mpi/cpi.c" -lm
segments() { ls /dev/shm 2>/dev/null | grep "^bip-$(id -u)-" || true; }
before=$(segments)
# must_fail TEXT MPIEXEC-ARGS...: the job fails, prints TEXT, leaves nothing.
# (Hydra can lose an aborting rank's message when it tears the job down:
# every attempt must fail and leave nothing, one of three must say TEXT.)
must_fail() {
	want=$1; shift
	for attempt in 1 2 3; do
		echo "+ mpiexec $* (must fail)"
		out=$(timeout 60 "$MPIEXEC" "$@" 2>&1) &&
			{ echo "$out"; echo "FAILED: the job ran"; exit 1; }
		after=$(segments)
		[ "$after" = "$before" ] || {
			echo "FAILED: MPI_Init failed and left in /dev/shm:"
			echo "$after"; exit 1; }
		echo "$out" | grep -q "$want" && return 0
		echo "$out"
	done
	echo "FAILED: no message saying '$want' in 3 attempts"
	exit 1
}
must_fail "raise BIP_SMALL_QUEUE" -n 4 -env BIP_SMALL_QUEUE 4 "$W/cpi"
must_fail "every node must use the same" -n 1 "$W/cpi" : \
	-n 1 -env BIP_PACKET_SIZE 16k "$W/cpi"
must_fail "MPIR_CVAR_CH4_BIP_CREDITS=1 is out of range" -n 2 \
	-env MPIR_CVAR_CH4_BIP_CREDITS 1 "$W/cpi"
must_fail "BIP_IDLE=nap" -n 2 -env BIP_IDLE nap "$W/cpi"
must_fail "Invalid MPIR_CVAR_CH4_BIP_FETCH value (sometimes)" -n 2 \
	-env MPIR_CVAR_CH4_BIP_FETCH sometimes "$W/cpi"
must_fail "INIT_BARRIER=[a-z]*, this rank [a-z]*: it must be the same" -n 1 \
	"$W/cpi" : -n 1 -env MPIR_CVAR_CH4_BIP_INIT_BARRIER false "$W/cpi"
echo "every failed MPI_Init said why and left nothing behind"
# The default queue grows with the job: 64 credits a peer on 8 ranks (a
# fixed queue of 256 gave 32), 128 on 2.
for nc in 8:64 2:128; do
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun "${nc%:*}" "$W/cpi"
	expect "(N=${nc#*:})" "N=${nc#*:} on ${nc%:*} ranks"
done
