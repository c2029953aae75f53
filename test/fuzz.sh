#!/bin/sh
# The fuzz harnesses (libFuzzer, with ASan and UBSan), one per parser of
# what other processes send: the NIC program's receive path, the shm
# wire's segment and ring reader, the network wires' datagram and run reader,
# libbip's cards and PMI lines, the
# netmod's control messages and card. Each is built twice from its source:
# as a fuzzer, and with -DFUZZ_SEEDS as the program that writes its seed
# corpus from the current formats.
#
#   fuzz.sh check             make check: every seed once, then a few
#                             seconds of fuzzing each
#   fuzz.sh run SECONDS [N]   make fuzz: each harness SECONDS (and at
#                             least N executions), its corpus kept in
#                             fuzz/corpus; then what each reached
# A crash leaves its input in fuzz/crashes and fails the run.
: "${top_builddir:?run through make check or make fuzz}"
mode=${1:-check}
# The harnesses carry ASan and UBSan whatever the tree: the sanitizer
# tree's make check would only run them a second time.
if [ "$mode" = check ] && [ "${enable_sanitizers:-no}" = yes ]; then
	echo "SKIP: the harnesses are sanitizer builds already; the main tree's"
	echo "      make check runs them"
	exit 77
fi
secs=${2:-${FUZZ_CHECK_TIME:-10}}
min_runs=${3:-0}
s=$top_srcdir/src
b=$top_builddir/fuzz
CC=${FUZZ_CC:-clang}
# The NIC program is every file of its folders and src/common (as in
# libbipfw): a new wire class needs no entry here. libbip is every file of
# src/bip but the tools' (bip_*.c, each with its main): nor does a new
# file of libbip.
fw="$s/firmware/*.c $s/firmware/wire/*.c $s/common/*.c"
bip=$(ls "$s"/bip/*.c | grep -v '/bip_[^/]*\.c$')
CPPFLAGS="-I$s/bip -I$s/firmware -I$s/common -I$s/netmod"
# The harnesses: name, source, what it links.
harnesses="fuzz_rx:test/firmware/fuzz_rx.c:fw fuzz_shm:test/firmware/fuzz_shm.c:fw
	fuzz_dgram:test/firmware/fuzz_dgram.c:fw
	fuzz_card:test/bip/fuzz_card.c:bip fuzz_ctl:test/netmod/fuzz_ctl.c:ctl
	fuzz_profile:test/common/fuzz_profile.c:fw"

mkdir -p "$b/crashes" || exit 1
cd "$b" || exit 1
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >probe.c
$CC -fsanitize=fuzzer,address,undefined probe.c -o probe 2>probe.log || {
	echo "SKIP: $CC cannot build a libFuzzer program (install clang and"
	echo "      libclang-rt-14-dev):"; head -3 probe.log; exit 77; }

build() { # NAME SRC KIND
	case $3 in
	fw) libs=$fw ;;
	bip) libs="$fw $bip" ;;
	ctl) libs="$s/netmod/bip_ctl.c" ;;
	esac
	# shellcheck disable=SC2086
	$CC -g -O1 -fno-inline -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all $CPPFLAGS -o "$1" \
		"$top_srcdir/$2" $libs -lrt -lpthread 2>"$1.log" &&
	$CC -g -O1 -DFUZZ_SEEDS $CPPFLAGS -o "$1-seeds" "$top_srcdir/$2" \
		$libs -lrt -lpthread 2>>"$1.log" ||
		{ cat "$1.log"; echo "FAILED: building $1"; exit 1; }
	rm -rf "seeds/$1"
	mkdir -p "seeds/$1" "corpus/$1"
	"./$1-seeds" "seeds/$1" || { echo "FAILED: $1's seeds"; exit 1; }
}

status=0
for h in $harnesses; do
	name=${h%%:*} rest=${h#*:}
	src=${rest%%:*} kind=${rest#*:}
	echo "== $name ($src)"
	build "$name" "$src" "$kind"
	opts="-artifact_prefix=crashes/$name- -print_final_stats=1"
	if [ "$mode" = check ]; then
		# shellcheck disable=SC2086
		"./$name" $opts -max_total_time="$secs" "seeds/$name" \
			>"$name.out" 2>&1
	else
		# shellcheck disable=SC2086
		"./$name" $opts -max_total_time="$secs" "corpus/$name" \
			"seeds/$name" >"$name.out" 2>&1 &&
		while [ "$(sed -n 's/^stat::number_of_executed_units: *//p' \
			"$name.out" | awk '{ s += $1 } END { print s + 0 }')" \
			-lt "$min_runs" ]; do
			"./$name" $opts -max_total_time="$secs" \
				"corpus/$name" >>"$name.out" 2>&1 || break
		done
	fi
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$name.out" |
		awk '{ s += $1 } END { print s + 0 }')
	# What the corpus reaches (each input once, tallied by the harness).
	[ $rc -eq 0 ] && FUZZ_REPORT=1 "./$name" -runs=0 "corpus/$name" \
		"seeds/$name" >"$name.reach" 2>&1
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$name.out" | tail -1)
	echo "$name: $runs executions, $cov"
	grep '^reached' "$name.reach" 2>/dev/null | sed 's/^reached/   reached/'
	if [ $rc -ne 0 ]; then
		grep -m1 -A30 -E 'ERROR:|runtime error|deadly signal' "$name.out"
		echo "FAILED: $name crashed (input in $b/crashes)"
		status=1
	fi
done
[ $status -eq 0 ] && echo "every fuzz harness ran without a crash"
exit $status
