#!/bin/sh
# tune.sh - bipmpi-tune and the machine profile, end to end: the tool
# measures and writes a profile that bip_info shows as used; the netmod
# sends streams by the profile's BIP_STREAM_RING_MAX (eagerly up to it, by
# three-way above) and reads a collective's data in place by its
# BIP_MEM_READ_MIN, a variable or MPI knob set by hand wins over them, a
# profile of another machine is not used, a malformed one fails MPI_Init
# naming its line, and the tool refuses bad arguments.
. "$(dirname "$0")/lib.sh"
[ "$(nproc)" -ge 2 ] || {
	echo "SKIP: one core: streams go eagerly whatever the profile says"
	exit 77
}
tune="$prefix/bin/bipmpi-tune"

# The tool: one round, written where we say.
launch "bipmpi-tune -r 1" "$tune" -r 1 -o "$W/profile"
expect "bipmpi-tune: wrote $W/profile" "the tool did not say it wrote"
machine=$(sed -n 's/^machine=//p' "$W/profile")
max=$(sed -n 's/^BIP_STREAM_RING_MAX=//p' "$W/profile")
[ -n "$machine" ] || { echo "FAILED: no machine= line"; exit 1; }
case $max in
4096 | 8192 | 16384 | 32768 | 65536) ;;
*) echo "FAILED: BIP_STREAM_RING_MAX=$max is not a measured size"; exit 1 ;;
esac
read=$(sed -n 's/^BIP_MEM_READ_MIN=//p' "$W/profile")
case $read in
8192 | 16384 | 32768 | 65536 | 131072 | never) ;;
*) echo "FAILED: BIP_MEM_READ_MIN=$read is not a measured size"; exit 1 ;;
esac
# 4 stream sizes, 5 collective sizes.
[ "$(grep -c '^#  *[0-9]* *[0-9.]* *[0-9.]*$' "$W/profile")" -eq 9 ] ||
	{ echo "FAILED: the profile does not show the 9 sizes measured"; exit 1; }
BIP_PROFILE="$W/profile" launch "bip_info" "$prefix/bin/bip_info"
expect "machine profile:   $W/profile (2 knobs)" "bip_info: profile not used"
expect "profile $max\$" "bip_info: no BIP_STREAM_RING_MAX from the profile"
expect "profile $read\$" "bip_info: no BIP_MEM_READ_MIN from the profile"
for bad in "-r 0" "-r x" "-q" "extra"; do
	# shellcheck disable=SC2086
	"$tune" $bad >"$W/bad" 2>&1 && {
		cat "$W/bad"; echo "FAILED: bipmpi-tune $bad was accepted"; exit 1; }
done
"$tune" -n -r 1 -o /nonexistent/dir/profile >"$W/dry" 2>&1 ||
	{ cat "$W/dry"; echo "FAILED: -n wrote or failed"; exit 1; }
! grep -q "wrote" "$W/dry" || { echo "FAILED: -n wrote a profile"; exit 1; }
"$tune" -r 1 -o /proc/no/profile >"$W/ro" 2>&1 &&
	{ cat "$W/ro"; echo "FAILED: an unwritable profile was accepted"; exit 1; }
grep -q "cannot write /proc/no/profile" "$W/ro" ||
	{ cat "$W/ro"; echo "FAILED: no clear error for an unwritable profile"; exit 1; }

# The netmod: 8-64 KiB streams, one window each, counted by protocol.
run "$MPICC" -O2 -o "$W/stream" "$prefix/share/bipmpi/tune_stream.c"
printf 'machine=%s\nBIP_STREAM_RING_MAX=64k\n' "$machine" >"$W/eager"
printf 'machine=%s\nBIP_STREAM_RING_MAX=4k\n' "$machine" >"$W/threeway"
printf 'machine=%s (another)\nBIP_STREAM_RING_MAX=64k\n' "$machine" >"$W/other"
printf 'machine=%s\nBIP_STREAM_RING_MAX\n' "$machine" >"$W/broken"
# The eager sends of a stream run with ENV... (three-way ones are no
# measure: where credits cannot take all of a message's pieces it goes
# by three-way whatever the limit).
eager() {
	out=$(env MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 "$@" timeout 120 \
		"$MPIEXEC" -n 2 "$W/stream" 1 2>&1) ||
		{ echo "$out"; echo "FAILED: the stream with $*"; exit 1; }
	protocols | cut -d' ' -f1
}
e64=$(eager BIP_PROFILE="$W/eager")
e4=$(eager BIP_PROFILE="$W/threeway")
echo "eager sends: profile 64k $e64, profile 4k $e4"
[ "$e64" -gt $((4 * e4)) ] ||
	{ echo "FAILED: the profile's BIP_STREAM_RING_MAX did not decide"; exit 1; }
for env in "BIP_STREAM_RING_MAX=4k" "MPIR_CVAR_CH4_BIP_EAGER_STREAM_LIMIT=4096"; do
	n=$(eager BIP_PROFILE="$W/eager" "$env")
	echo "eager sends: profile 64k and $env: $n"
	[ $((4 * n)) -lt "$e64" ] ||
		{ echo "FAILED: $env set by hand did not win over the profile"; exit 1; }
done
n=$(eager BIP_PROFILE="$W/other")
echo "eager sends: another machine's profile 64k: $n"
[ $((4 * n)) -lt "$e64" ] ||
	{ echo "FAILED: another machine's profile was used"; exit 1; }
BIP_PROFILE="$W/other" launch "bip_info" "$prefix/bin/bip_info"
expect "not used: measured on \"$machine (another)\"" \
	"bip_info: another machine's profile not said so"
# The collectives: 8-128 KiB bcasts and alltoalls of 2 ranks, read in place
# from the profile's BIP_MEM_READ_MIN (counted), never with never; the MPI
# knob set by hand wins.
run "$MPICC" -O2 -o "$W/coll" "$prefix/share/bipmpi/tune_coll.c"
printf 'machine=%s\nBIP_MEM_READ_MIN=8k\n' "$machine" >"$W/read"
printf 'machine=%s\nBIP_MEM_READ_MIN=never\n' "$machine" >"$W/noread"
reads() {
	out=$(env MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 "$@" timeout 120 \
		"$MPIEXEC" -n 2 "$W/coll" 2>&1) ||
		{ echo "$out"; echo "FAILED: the collectives with $*"; exit 1; }
	counter "read where it lies" | awk '{ n += $1 } END { print n + 0 }'
}
r8=$(reads BIP_PROFILE="$W/read")
rn=$(reads BIP_PROFILE="$W/noread")
rk=$(reads BIP_PROFILE="$W/noread" MPIR_CVAR_CH4_BIP_NODE_COLL_READ_MIN=8192)
echo "collectives read in place: profile 8k $r8, never $rn, never and the MPI knob 8192 $rk"
[ "$r8" -gt 0 ] && [ "$rn" -eq 0 ] && [ "$rk" -gt 0 ] ||
	{ echo "FAILED: the profile's BIP_MEM_READ_MIN did not decide, or the MPI knob did not win"; exit 1; }
out=$(BIP_PROFILE="$W/broken" timeout 60 "$MPIEXEC" -n 2 "$W/stream" 1 2>&1) &&
	{ echo "$out"; echo "FAILED: a malformed profile was accepted"; exit 1; }
expect "profile $W/broken: line 2: expected NAME=VALUE" \
	"no clear error for a malformed profile"
echo "PASSED"
