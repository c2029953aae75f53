# lib.sh - shared by the MPI tests: the installed MPI, a bounded mpiexec.
: "${top_builddir:?run through make check}"
if [ "${enable_mpi:-no}" != yes ]; then
	echo "SKIP: configured with --disable-mpi (no MPICH to test)"
	exit 77
fi
[ -x "$prefix/bin/mpicc" ] || {
	echo "FAILED: $prefix/bin/mpicc missing: run 'make install' before 'make check'"
	exit 1
}
MPICC="$prefix/bin/mpicc"
MPIFORT="$prefix/bin/mpifort"
MPIEXEC="$prefix/bin/mpiexec"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

run() {
	echo "+ $*"
	"$@" || { echo "FAILED (exit $?): $*"; exit 1; }
}

# mpirun N PROG ARGS... : run under Hydra with a time limit, output in $out
mpirun() {
	n=$1; shift
	echo "+ mpiexec -n $n $*"
	out=$(timeout 120 "$MPIEXEC" -n "$n" "$@" 2>&1) || {
		rc=$?
		echo "$out"
		echo "FAILED (exit $rc): mpiexec -n $n $*"
		exit 1
	}
	echo "$out"
}
