#!/bin/sh
# Thousands of messages of every size class between 2, 3 and 4 processes
# (each to itself too), and within one alone (the self wire only), checked
# byte by byte; then again with small packets and a tiny window so
# the packetizer, the window and the rings all wrap many times.
. "$top_srcdir/test/bip/lib.sh"
run "$BIP_RUN" -n 1 -t 60 "$T/test_traffic" 3000 7
run "$BIP_RUN" -n 2 -t 120 "$T/test_traffic" 3000 1
run "$BIP_RUN" -n 3 -t 120 "$T/test_traffic" 1000 2
run "$BIP_RUN" -n 4 -t 180 "$T/test_traffic" 600 3
BIP_PACKET_SIZE=8256 BIP_WINDOW=4 BIP_SHM_RING_SIZE=32k BIP_SEND_SLOTS=4 \
	run "$BIP_RUN" -n 3 -t 180 "$T/test_traffic" 500 4
BIP_SHM_CMA_MIN=0 run "$BIP_RUN" -n 2 -t 120 "$T/test_traffic" 1000 5
BIP_LONG_TAGS=4 run "$BIP_RUN" -n 4 -t 180 "$T/test_traffic" 300 6
# Kernels before 5.14 cannot populate a mapping: there both ends reserve
# a pair's rings whole at connect. A shim makes the kernel say so; the
# check that only headers are present at start-up then fails, which shows
# the shim took effect. (ASan wants to come first: the shim goes before.)
shim="$top_builddir/test/bip/.libs/no_populate.so"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
LD_PRELOAD=$shim run "$BIP_RUN" -n 3 -t 120 "$T/test_traffic" 500 8
if LD_PRELOAD=$shim "$BIP_RUN" -n 4 -t 60 "$T/test_peergone" check-lazy \
	>/dev/null 2>&1; then
	echo "FAILED: rings not reserved whole without MADV_POPULATE_WRITE"
	exit 1
fi
echo "without MADV_POPULATE_WRITE: rings reserved whole, traffic checked"
