# peers.sh - sourced by the MPI benchmark scripts. build_peers DIR SRC
# builds SRC with Debian's MPICH (DIR/mpich) and Open MPI (DIR/openmpi)
# where they are installed, and lists in $peers those it built.
build_peers() {
	peers=
	if command -v mpicc.mpich >/dev/null && command -v mpiexec.mpich >/dev/null &&
	   mpicc.mpich -O2 -o "$1/mpich" "$2" 2>/dev/null; then
		peers=mpich
	else
		echo "# Debian's mpich and libmpich-dev are not installed: no MPICH"
	fi
	if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
	   mpicc.openmpi -O2 -o "$1/openmpi" "$2" 2>/dev/null; then
		peers="$peers openmpi"
	else
		echo "# Debian's openmpi-bin and libopenmpi-dev are not installed: no Open MPI"
	fi
}
