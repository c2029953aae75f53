#!/bin/sh
# BIP programs start under MPICH's Hydra mpiexec through the same PMI-1
# bootstrap as under bip_run.
. "$top_srcdir/test/bip/lib.sh"
# Ours when the MPI build is installed, else Debian's.
hydra=$prefix/bin/mpiexec.hydra
[ -x "$hydra" ] || hydra=$(command -v mpiexec.hydra || true)
if [ -z "$hydra" ]; then
	echo "SKIP: Hydra (mpiexec.hydra, Debian package mpich) is not installed"
	exit 77
fi
run timeout 120 "$hydra" -n 3 "$T/pmi_echo"
run timeout 120 "$hydra" -n 2 "$T/test_traffic" 300 8
run timeout 120 "$hydra" -n 4 "$top_builddir/examples/bip_ring" 1000000
# Bound each to a core of its own, nodes are not crowded (they spin when
# waiting): the launcher's cores count, not only the one a node may use.
if [ "$(nproc)" -ge 2 ]; then
	run timeout 60 "$hydra" -bind-to core -n 2 "$T/test_crowded" 0 keep
else
	echo "skipped -bind-to core: one core (each node needs its own)"
fi
