#!/bin/sh
# MPICH's test suite across 2 hosts made of network namespaces (root; see
# netns.sh): ranks alternate between the hosts, so neighbours talk over udp
# and ranks 0 and 2 over shm. make check runs the point-to-point,
# collective and process-failure (ft: a rank on another host dies, found
# by its silence) directories; make check-full sets MPICH_HOSTS_TESTDIRS
# to every directory of mpich_testsuite.sh.
MPICH_TESTSUITE_HOSTS=2
export MPICH_TESTSUITE_HOSTS
exec sh "$top_srcdir/test/netmod/mpich_testsuite.sh" \
	"${MPICH_HOSTS_TESTDIRS:-pt2pt,coll,ft}"
