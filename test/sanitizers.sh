#!/bin/sh
# The BIP layer and its whole test suite once more, built with AddressSanitizer
# and UndefinedBehaviorSanitizer (./configure --enable-sanitizers) in a tree of
# its own: any report fails the test that triggered it, and so this one.
: "${top_builddir:?run through make check}"
if [ "${enable_sanitizers:-no}" = yes ]; then
	echo "SKIP: this is the sanitizer build itself"
	exit 77
fi
b=$top_builddir/sanitize
mkdir -p "$b"
cd "$b" || exit 1
if [ ! -f Makefile ]; then
	echo "+ configure --disable-mpi --enable-sanitizers (in $b)"
	"$top_srcdir/configure" --disable-mpi --enable-sanitizers \
		>configure.log 2>&1 || { tail -20 configure.log; exit 1; }
fi
echo "+ make (sanitizers)"
make -j"$(nproc 2>/dev/null || echo 2)" >make.log 2>&1 ||
	{ grep -m5 -A5 'error' make.log; exit 1; }
echo "+ make check (sanitizers)"
# Leaks are reported too; a report aborts the process that made it.
ASAN_OPTIONS=abort_on_error=0:detect_leaks=1 \
UBSAN_OPTIONS=print_stacktrace=1 \
	make -j1 check >check.log 2>&1
status=$?
grep -E '^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR):' check.log
if [ $status -ne 0 ]; then
	for f in $(grep -l -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' \
		test/*/*.log test/*.log 2>/dev/null); do
		echo "== $f"; grep -m1 -B2 -A25 -E 'Sanitizer|runtime error' "$f"
	done
	# A failure without a report says why in its own log: show its end.
	for t in $(sed -n 's/^\(FAIL\|ERROR\): //p' check.log); do
		echo "== the end of ${t%.sh}.log (sanitizers)"; tail -30 "${t%.sh}.log"
	done
	grep -E '^(FAIL|ERROR):' check.log >/dev/null &&
		{ echo "FAILED: the sanitizer build's test suite failed"; exit 1; }
	tail -20 check.log
	exit 1
fi
echo "the BIP layer's test suite passed under ASan and UBSan"
