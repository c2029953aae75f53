#!/bin/sh
# The tools: bip_info lists every knob; bip_pingpong prints its table.
. "$top_srcdir/test/bip/lib.sh"
out=$("$top_builddir/bip_info") || { echo "FAILED: bip_info"; exit 1; }
for k in BIP_LOG BIP_SMALL_QUEUE BIP_SEND_SLOTS BIP_LONG_TAGS BIP_PACKET_SIZE \
	BIP_WINDOW BIP_IDLE BIP_SPIN_US BIP_SLICE_US BIP_SPREAD BIP_SHM_CMA_MIN; do
	echo "$out" | grep -q "^  $k " || { echo "FAILED: $k missing"; exit 1; }
done
for bad in BIP_WINDOW=1 BIP_WINDOW=100 BIP_PACKET_SIZE=12q BIP_IDLE=nap BIP_SPREAD=on; do
	env "$bad" "$top_builddir/bip_info" >/dev/null &&
		{ echo "FAILED: bip_info accepted $bad"; exit 1; }
done
table=$("$BIP_RUN" -n 2 -t 120 "$top_builddir/bip_pingpong" -r 20) ||
	{ echo "FAILED: bip_pingpong"; exit 1; }
echo "$table"
rows=$(echo "$table" | grep -c '^[0-9][0-9]* [0-9.][0-9.]* [0-9.][0-9.]*$')
[ "$rows" -eq 24 ] || { echo "FAILED: $rows rows, want 24 (0 B..4 MiB)"; exit 1; }
echo "$table" | head -1 | grep -q '^#' || { echo "FAILED: no # header"; exit 1; }
run "$top_builddir/bip_floor"
# Where cross-memory attach works one way, the floor both ways has a
# positive value at every size too.
if echo "$out" | grep -q '^cma_MBps'; then
	n=$(echo "$out" | awk '$1 == "cma_both_MBps" && $3 > 0' | wc -l)
	[ "$n" -eq 7 ] || { echo "FAILED: $n cma_both_MBps rows, want 7 (64 KiB .. 4 MiB)"; exit 1; }
fi
# The wire version shown is the header's, not a copy of it.
v=$(sed -n 's/^#define BIP_WIRE_VERSION \([0-9]*\)/\1/p' "$top_srcdir/src/common/bip_wire.h")
echo "$out" | grep -q "(wire protocol $v)" ||
	{ echo "FAILED: bip_info does not show wire protocol $v"; exit 1; }
# Every wire of the build is listed, and -p shows each peer's wire: on one
# host (bip_run's process mapping) shm, or what BIP_WIRE forces.
echo "$out" | grep -q '^  shm   reaches this host' ||
	{ echo "FAILED: bip_info lists no shm wire"; exit 1; }
# The shm rings a process holds stay bounded as its host's nodes grow
# (8 MiB shared by the peers, at least two packets each), and the knob
# sets them.
mib() { echo "$1" | sed -n "s/.* KiB at $2[^(]*(at most \([0-9.]*\) MiB a process).*/\1/p"; }
shm=$(echo "$out" | grep '^  shm ')
echo "$shm" | grep -q ' 1024 KiB at 2 nodes a host' ||
	{ echo "FAILED: not 1 MiB rings with 2 nodes a host: $shm"; exit 1; }
awk -v a="$(mib "$shm" 32)" -v b="$(mib "$shm" 128)" \
	'BEGIN { exit !(a > 0 && a <= 8.5 && b > 0 && b <= 16.5) }' ||
	{ echo "FAILED: rings of a process at 32 / 128 nodes: $shm"; exit 1; }
BIP_SHM_RING_SIZE=256k "$top_builddir/bip_info" | grep '^  shm ' |
	grep -q ' 256 KiB at 2 nodes a host' ||
	{ echo "FAILED: BIP_SHM_RING_SIZE=256k not taken"; exit 1; }
for bad in 3k 96k 1g5; do
	BIP_SHM_RING_SIZE=$bad "$top_builddir/bip_info" 2>&1 |
		grep -q "BIP_SHM_RING_SIZE=" ||
		{ echo "FAILED: BIP_SHM_RING_SIZE=$bad not refused by name"; exit 1; }
done
# The memory for N peers follows the knobs: a bigger window costs more.
mem() { "$top_builddir/bip_info" |
	sed -n 's/.* \([0-9.]*\) MiB for 1000 peers.*/\1/p'; }
m0=$(mem) m1=$(BIP_WINDOW=1024 mem)
awk -v a="$m0" -v b="$m1" 'BEGIN { exit !(a > 0 && a <= 64 && b > a) }' ||
	{ echo "FAILED: memory for 1000 peers: $m0 MiB, $m1 with a window of 1024"; exit 1; }
peers=$("$BIP_RUN" -n 3 -t 60 "$top_builddir/bip_info" -p) ||
	{ echo "FAILED: bip_info -p"; exit 1; }
echo "$peers"
[ "$(echo "$peers" | grep -c ': shm (same host)$')" -eq 6 ] ||
	{ echo "FAILED: want 6 peer lines on shm (same host)"; exit 1; }
peers=$(BIP_WIRE=shm "$BIP_RUN" -n 2 -t 60 "$top_builddir/bip_info" -p) ||
	{ echo "FAILED: BIP_WIRE=shm bip_info -p"; exit 1; }
[ "$(echo "$peers" | grep -c ': shm (forced by BIP_WIRE)$')" -eq 2 ] ||
	{ echo "FAILED: BIP_WIRE=shm not shown as forced: $peers"; exit 1; }
"$top_builddir/bip_info" -p >/dev/null 2>&1 &&
	{ echo "FAILED: bip_info -p worked without a launcher"; exit 1; }
exit 0
