#!/bin/sh
# MPICH's test suite across hosts made of network namespaces (root; see
# netns.sh): ranks dealt round-robin to the hosts, so with 2 hosts
# neighbours talk over udp and ranks 0 and 2 over shm, with 4 every pair
# over udp. make check runs the point-to-point, collective and
# process-failure (ft: a rank on another host dies, found by its silence)
# directories on 2 hosts; make check-full sets MPICH_HOSTS_TESTDIRS to every
# directory of mpich_testsuite.sh and MPICH_HOSTS_COUNTS to "2 4".
rc=77
for k in ${MPICH_HOSTS_COUNTS:-2}; do
	MPICH_TESTSUITE_HOSTS=$k sh "$top_srcdir/test/netmod/mpich_testsuite.sh" \
		"${MPICH_HOSTS_TESTDIRS:-pt2pt,coll,ft}"
	r=$?
	[ $r -eq 77 ] && continue
	[ $r -eq 0 ] || exit $r
	rc=0
done
exit $rc
