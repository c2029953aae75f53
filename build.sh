#!/bin/sh
# build.sh - the quick start: install what the build needs (Debian 12),
# build and install bipmpi (libbip, and MPICH 4.0.2 with the bip netmod:
# mpicc, mpifort, mpiexec), measure the machine for its profile, and run an
# MPI program over BIP.
#
#   ./build.sh            build, install into $PREFIX (default ./_prefix),
#                         and run MPI and BIP programs over BIP
#   ./build.sh check      build, then run the whole test suite
#
# Environment: PREFIX (install prefix), BUILDDIR (default ./_build),
# CONFIGURE_FLAGS (extra ./configure arguments, e.g. --disable-mpi or
# --with-mpich-source=PATH), NO_APT=1 (skip apt-get).
set -eu
cd "$(dirname "$0")"
top=$(pwd)
PREFIX=${PREFIX:-$top/_prefix}
BUILDDIR=${BUILDDIR:-$top/_build}
what=${1:-build}
jobs=$(nproc 2>/dev/null || echo 2)

# Debian packages: the toolchain and autotools; what building MPICH needs
# (gfortran for mpif.h and 'use mpi', hwloc, python3 and patch for the
# netmod's generator step, ccache to make rebuilds cheap, xz for the source
# archive); Debian's own MPICH, whose Hydra the BIP tests launch with and
# which the MPI benchmark compares against (libmpich-dev: its mpi.h, which
# mpicc.mpich needs); clang with its sanitizer and libFuzzer runtimes
# (libclang-rt-14-dev, only recommended by clang) for the fuzz harnesses;
# iproute2 (ip), nftables (frames lost on purpose) and ethtool (offloads
# off on the links of the bad-network relay) for the tests across
# hosts made of network namespaces; QEMU and a static busybox for the
# kernel module's test, which boots Debian's kernel (fetched by the test
# with apt-get download, never installed); strace, with which a test
# checks which system calls the idle policy makes.
packages="build-essential autoconf automake libtool pkg-config gfortran
	libhwloc-dev python3 patch ccache xz-utils mpich libmpich-dev
	clang libclang-rt-14-dev iproute2 nftables ethtool
	qemu-system-x86 busybox-static strace"

install_packages() {
	[ "${NO_APT:-0}" = 1 ] && return 0
	missing=""
	for p in $packages; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" = 0 ]; then
		sudo=""
	elif command -v sudo >/dev/null; then
		sudo="sudo"
	else
		echo "build.sh: please install:$missing (as root: apt-get install$missing)" >&2
		exit 1
	fi
	echo "build.sh: installing$missing"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
		--no-install-recommends $missing >/dev/null
}

build() {
	[ -x configure ] || ./autogen.sh
	mkdir -p "$BUILDDIR"
	cd "$BUILDDIR"
	[ -f Makefile ] || "$top/configure" --prefix="$PREFIX" \
		${CONFIGURE_FLAGS:-}
	make -j"$jobs"
	make install >/dev/null
	cd "$top"
	# The machine profile, measured once on this machine (bipmpi-tune
	# measures again when run by hand).
	if [ -x "$PREFIX/bin/bipmpi-tune" ] && [ ! -f "$PREFIX/etc/bip/profile" ]
	then
		echo "== measuring this machine for the profile (bipmpi-tune)"
		"$PREFIX/bin/bipmpi-tune" ||
			echo "build.sh: bipmpi-tune failed: built-in defaults are used"
	fi
}

install_packages
build
case "$what" in
build)
	if [ -x "$PREFIX/bin/mpicc" ]; then
		echo "== MPI over BIP: cpi with mpiexec -n 2"
		"$PREFIX/bin/mpicc" -o "$BUILDDIR/cpi" examples/mpi/cpi.c -lm
		"$PREFIX/bin/mpiexec" -n 2 "$BUILDDIR/cpi"
	fi
	echo "== BIP itself: hello on 4 nodes, then a ping-pong"
	"$PREFIX/bin/bip_run" -n 4 "$BUILDDIR/examples/bip_hello"
	"$PREFIX/bin/bip_run" -n 2 "$PREFIX/bin/bip_pingpong"
	echo "== installed in $PREFIX (add $PREFIX/bin to PATH)"
	;;
check)
	cd "$BUILDDIR"
	status=0
	make -j1 check || status=$?
	# A CI log keeps only its tail: repeat the end of each failed test's log.
	for t in $(sed -n 's/^\(FAIL\|ERROR\): //p' test-suite.log 2>/dev/null); do
		echo "== the end of ${t%.sh}.log"
		tail -n 60 "${t%.sh}.log"
	done
	# One closing line that any CI reads: N passed, N failed.
	awk '/^# (PASS|XFAIL):/ {p += $3} /^# (FAIL|XPASS|ERROR):/ {f += $3}
	     /^# SKIP:/ {s += $3}
	     END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' \
		test-suite.log 2>/dev/null || echo "0 passed, 1 failed"
	exit $status
	;;
*)
	echo "usage: ./build.sh [build|check]" >&2
	exit 2
	;;
esac
