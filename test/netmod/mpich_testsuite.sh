#!/bin/sh
# MPICH's own test suite (test/mpi of the same MPICH source) against our
# installed MPI, every message over BIP. Usage (normally through make):
#   mpich_testsuite.sh [DIRS]        DIRS: comma-separated test/mpi
#                                    directories (default: $MPICH_TESTDIRS)
# Each failure must be listed, with its reason, in mpich-xfail.txt; an
# unlisted failure fails this test, a listed one that passes is reported.
# With MPICH_TESTSUITE_HOSTS=K (root), every job runs across K hosts made
# of network namespaces (netns.sh), its ranks dealt round-robin to them,
# and mpich-xfail-hosts.txt lists the failures found only then.
. "$top_srcdir/test/netmod/lib.sh"
mpiexec_run=$prefix/bin/mpiexec
across=""
if [ -n "${MPICH_TESTSUITE_HOSTS:-}" ]; then
	. "$top_srcdir/test/netmod/netns.sh"
	hosts_up "$MPICH_TESTSUITE_HOSTS"
	mpiexec_run=$W/mpiexec_hosts
	cat >"$mpiexec_run" <<EOF
#!/bin/sh
exec $(hosts_mpiexec) -hosts $(echo $NS_HOSTS | tr ' ' ,) "\$@"
EOF
	chmod +x "$mpiexec_run"
	across=" across $MPICH_TESTSUITE_HOSTS hosts"
fi
# MPICH 4.0.2's test/mpi has no testlist for basic (its own top-level
# list comments it out), so the list starts at pt2pt. ft (process failure)
# is commented out of MPICH's top-level list too: naming it runs it. io is
# ROMIO's own tests (MPI-IO). Three directories run only in make
# check-full, which sets MPICH_TESTDIRS, to keep make check short: the
# Fortran bindings' (f77, f90: a fifth of the suite's time, none of it in
# the netmod), threads (3 of the suite's 9 minutes here; the netmod's own
# threaded test, test_threads, runs in make check) and io (ROMIO's, whose
# messages are the point-to-point ones the other directories test).
dirs=${1:-${MPICH_TESTDIRS:-pt2pt,attr,group,info,init,comm,topo,errhan,datatype,coll,rma,mpi_t,part,impls,ft}}
src=$top_builddir/mpich/mpich-4.0.2/test/mpi
xfail=$W/xfail.txt
cat "$top_srcdir/test/netmod/mpich-xfail.txt" >"$xfail"
[ -z "$across" ] || cat "$top_srcdir/test/netmod/mpich-xfail-hosts.txt" >>"$xfail"
[ -d "$src" ] || { echo "FAILED: $src missing (MPICH not built here)"; exit 1; }
# runtests takes a comma-separated list and silently runs nothing for any
# other spelling.
case "$dirs" in *[!A-Za-z0-9_,]* | "")
	echo "FAILED: MPICH_TESTDIRS=\"$dirs\": directories of test/mpi, comma-separated"
	exit 1 ;;
esac
for d in $(echo "$dirs" | tr , ' '); do
	[ -d "$src/$d" ] || { echo "FAILED: MPICH's suite has no directory $d"; exit 1; }
done
tb=$top_builddir/mpich/testsuite
mkdir -p "$tb"
cd "$tb"
flags="--with-mpi=$prefix --disable-maintainer-mode --disable-spawn
	--enable-ft-tests --disable-cxx --disable-f08"
# A tree configured with other flags is configured again.
if [ ! -f Makefile ] || [ "$(cat configured.flags 2>/dev/null)" != "$flags" ]; then
	echo "+ configuring MPICH's test suite against $prefix"
	rm -f configured.flags
	# shellcheck disable=SC2086
	"$src/configure" $flags \
		FFLAGS=-fallow-argument-mismatch FCFLAGS=-fallow-argument-mismatch \
		>configure.log 2>&1 || { tail -20 configure.log; exit 1; }
	echo "$flags" >configured.flags
	make -C dtpools >/dev/null 2>&1 && make -C util >/dev/null 2>&1 ||
		{ echo "FAILED: building the test suite's helpers"; exit 1; }
fi
# runtests builds each program on one core just before running it, and
# removes it after; built here first on every core, the programs stay for
# the next run (runtests removes only what it built itself). A program that
# fails to build here is tried again, and reported, by runtests.
echo "+ building the test programs of $dirs"
for d in $(echo "$dirs" | tr , ' '); do
	make -j"$(nproc 2>/dev/null || echo 2)" -k -C "$d" >"build-$d.log" 2>&1 ||
		echo "note: some programs of $d did not build (build-$d.log)"
done
rm -f summary.tap
echo "+ runtests -testdirs=$dirs (at most 4 ranks, ${MPITEST_TIMEOUT:=120} s each)"
MPITEST_TIMEOUT=$MPITEST_TIMEOUT ./runtests -srcdir="$src" -tests=testlist \
	-testdirs="$dirs" -maxnp=4 -mpiexec="$mpiexec_run" \
	-tapfile=summary.tap >runtests.log 2>&1
tail -1 runtests.log
pass=$(grep '^ok ' summary.tap | grep -vc '# SKIP' || true)
skip=$(grep '^ok ' summary.tap | grep -c '# SKIP' || true)
fail=0 known=0
# "not ok N - ./dir/prog nprocs": compare with "dir/prog nprocs  reason".
grep '^not ok ' summary.tap | sed 's/^not ok [0-9]* - \.\///; s/ *#.*//' >failed.txt || true
while read -r t np; do
	if grep -q "^$t $np " "$xfail"; then
		known=$((known + 1))
	else
		echo "UNEXPECTED FAILURE: $t on $np ranks"
		fail=$((fail + 1))
	fi
done <failed.txt
grep -v '^#' "$xfail" | grep . | while read -r t np reason; do
	grep -q "^$t $np\$" failed.txt || case ",$dirs," in
	*",${t%%/*},"*) echo "note: expected failure now passes: $t $np" ;;
	esac
done
# The process-failure tests must really run: MPICH skips them when its
# test suite was configured without them.
case ",$dirs," in *,ft,*)
	for t in senddead recvdead isenddead irecvdead; do
		grep "^ok *- \./ft/$t 2 " summary.tap | grep -qv SKIP || {
			grep "ft/$t " summary.tap
			echo "UNEXPECTED FAILURE: ft/$t did not run and pass"
			fail=$((fail + 1))
		}
	done ;;
esac
# The tests the rank cap breaks, run once more at their own rank counts
# (mpich-ranks.txt: "dir/prog nprocs"; even 33 ranks take seconds here).
# Those of the directories run, listed first and counted apart from the
# loop, which a command reading stdin would cut short.
awk -v d=",$dirs," '!/^#/ && NF { split($1, p, "/");
	if (index(d, "," p[1] ",")) print $1, $2 }' \
	"$top_srcdir/test/netmod/mpich-ranks.txt" >capped.txt
listed=$(wc -l <capped.txt)
full=0
while read -r t np; do
	make -C "${t%%/*}" "${t#*/}" >/dev/null 2>&1 ||
		{ echo "UNEXPECTED FAILURE: cannot build $t"; fail=$((fail + 1)); continue; }
	# stdin from /dev/null: mpiexec forwards stdin, and would eat the list.
	o=$(cd "${t%%/*}" && timeout "$MPITEST_TIMEOUT" "$mpiexec_run" -n "$np" "./${t#*/}" </dev/null 2>&1)
	if echo "$o" | grep -q "No Errors"; then
		full=$((full + 1))
	else
		echo "$o" | tail -5
		echo "UNEXPECTED FAILURE: $t on $np ranks"
		fail=$((fail + 1))
	fi
done <capped.txt
[ "$full" -eq "$listed" ] || [ "$fail" -gt 0 ] || {
	echo "UNEXPECTED FAILURE: only $full of $listed capped tests were run again"
	fail=$((fail + 1))
}
echo "MPICH test suite ($dirs)$across: $pass passed, $known expected failures, $fail unexpected failures, $skip skipped (marked xfail by MPICH); $full capped tests passed at their own rank counts"
[ "$pass" -gt 0 ] || { echo "FAILED: no test of $dirs passed"; exit 1; }
[ "$fail" -eq 0 ]
