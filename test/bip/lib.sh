# lib.sh - shared by the shell tests: where things are, and a bounded run.
: "${top_builddir:?run through make check}"
BIP_RUN="$top_builddir/bip_run"
T="$top_builddir/test/bip"

# run WHAT... : run a command, fail the test with its output if it fails.
run() {
	echo "+ $*"
	"$@" || { echo "FAILED (exit $?): $*"; exit 1; }
}

# shm_left : names of this user's BIP segments in /dev/shm.
shm_left() {
	ls /dev/shm 2>/dev/null | grep "^bip-$(id -u)-" || true
}
