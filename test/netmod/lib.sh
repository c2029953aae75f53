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

# launch WHAT CMD...: run CMD with a time limit, its output in $out; a
# failure prints it and ends the test, naming WHAT.
launch() {
	what=$1; shift
	out=$(timeout 120 "$@" 2>&1) || {
		rc=$?
		echo "$out"
		echo "FAILED (exit $rc): $what"
		exit 1
	}
	echo "$out"
}

# mpirun N PROG ARGS... : run under Hydra with a time limit, output in $out
mpirun() {
	n=$1; shift
	echo "+ mpiexec -n $n $*"
	launch "mpiexec -n $n $*" "$MPIEXEC" -n "$n" "$@"
}

# counter NAME: every rank's value of a counter the last run printed at
# finalize (MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1).
counter() {
	echo "$out" | sed -n "s/.*[ ,(]$1 \([0-9]*\).*/\1/p"
}

# protocols: the last run's eager and three-way sends, all ranks together.
protocols() {
	echo "$(counter eager | awk '{ n += $1 } END { print n + 0 }')" \
		"$(counter three-way | awk '{ n += $1 } END { print n + 0 }')"
}

# counted N yes|no NAME: the counter NAME of the last run is positive on
# each of N ranks (yes), or zero on all (no).
counted() {
	v=$(counter "$3")
	[ "$(echo "$v" | wc -l)" -eq "$1" ] ||
		{ echo "FAILED: no '$3' counters from $1 ranks"; exit 1; }
	if [ "$2" = yes ]; then
		! echo "$v" | grep -qx 0 ||
			{ echo "FAILED: a rank counted no $3: $v"; exit 1; }
	else
		[ -z "$(echo "$v" | grep -vx 0)" ] ||
			{ echo "FAILED: $3 counted: $v"; exit 1; }
	fi
}

# expect PATTERN WHAT: the last run's output has PATTERN, or the test
# fails naming WHAT.
expect() {
	echo "$out" | grep -q "$1" || { echo "FAILED: $2"; exit 1; }
}

# The MPI examples the wire tests run, built into $W: cpi, ring, test_pt2pt.
build_examples() {
	run "$MPICC" -O2 -o "$W/cpi" "$top_srcdir/examples/mpi/cpi.c" -lm
	run "$MPICC" -O2 -o "$W/ring" "$top_srcdir/examples/mpi/ring.c"
	run "$MPICC" -O2 -Wno-stringop-overflow -o "$W/test_pt2pt" \
		"$top_srcdir/test/netmod/test_pt2pt.c"
}
