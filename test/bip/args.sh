#!/bin/sh
# Every bad argument, knob and bootstrap returns its error code.
. "$top_srcdir/test/bip/lib.sh"
run "$BIP_RUN" -n 2 -t 60 "$T/test_args"
# Single copies at rep movsb's slow distances (bip_copy.h), bounced and
# direct, whatever this machine measured.
for a in slow fast; do
	BIP_SHM_ALIAS=$a run "$BIP_RUN" -n 2 -t 60 "$T/test_args"
done
out=$(BIP_SHM_ALIAS=maybe "$BIP_RUN" -n 2 -t 30 "$top_builddir/examples/bip_hello" 2>&1) &&
	{ echo "FAILED: a bad BIP_SHM_ALIAS was accepted"; exit 1; }
echo "$out" | grep -q "BIP_SHM_ALIAS=maybe: expected one of" ||
	{ echo "FAILED: no clear message for a bad BIP_SHM_ALIAS: $out"; exit 1; }
run env -u PMI_FD -u PMI_RANK -u PMI_SIZE "$T/test_args" noenv
# A bad knob stops the job with a message naming it, not a crash.
out=$(BIP_IDLE=sometimes "$BIP_RUN" -n 2 -t 30 "$top_builddir/examples/bip_hello" 2>&1) &&
	{ echo "FAILED: a bad BIP_IDLE was accepted"; exit 1; }
echo "$out" | grep -q "BIP_IDLE=sometimes: expected one of" ||
	{ echo "FAILED: no clear message for a bad knob: $out"; exit 1; }
# A slice beyond what the kernel grants is refused, not clamped unseen.
out=$(BIP_SLICE_US=200000 "$BIP_RUN" -n 2 -t 30 "$top_builddir/examples/bip_hello" 2>&1) &&
	{ echo "FAILED: BIP_SLICE_US=200000 was accepted"; exit 1; }
echo "$out" | grep -q "BIP_SLICE_US=200000: out of range" ||
	{ echo "FAILED: no clear message for a bad slice: $out"; exit 1; }
# A size knob that may be measured takes auto, a size or never, nothing else.
out=$(BIP_SHM_KCOPY_MIN=lots "$BIP_RUN" -n 2 -t 30 "$top_builddir/examples/bip_hello" 2>&1) &&
	{ echo "FAILED: a bad BIP_SHM_KCOPY_MIN was accepted"; exit 1; }
echo "$out" | grep -q "BIP_SHM_KCOPY_MIN=lots: expected a size.* or auto" ||
	{ echo "FAILED: no clear message for a bad size knob: $out"; exit 1; }
for v in auto 64k never; do
	BIP_SHM_KCOPY_MIN=$v run "$BIP_RUN" -n 2 -t 30 "$top_builddir/examples/bip_hello"
done
# Settings every node must share are checked when nodes connect.
out=$("$BIP_RUN" -n 2 -t 30 sh -c '[ "$PMI_RANK" = 1 ] && export BIP_LONG_TAGS=32;
	exec "$0"' "$top_builddir/examples/bip_hello" 2>&1) &&
	{ echo "FAILED: nodes with different BIP_LONG_TAGS connected"; exit 1; }
echo "$out" | grep -q "every node must use the same" ||
	{ echo "FAILED: no clear message for mismatched knobs: $out"; exit 1; }
# BIP_SEND_SLOTS sizes what a receiver keeps for announcements: a node
# with more slots could announce more than its peers hold, so it must match.
out=$("$BIP_RUN" -n 2 -t 30 sh -c '[ "$PMI_RANK" = 1 ] && export BIP_SEND_SLOTS=512;
	exec "$0"' "$top_builddir/examples/bip_hello" 2>&1) &&
	{ echo "FAILED: nodes with different BIP_SEND_SLOTS connected"; exit 1; }
# Either node may find the mismatch first, and names its own value last.
echo "$out" | grep -Eq "BIP_SEND_SLOTS=(512, this node [0-9]+|[0-9]+, this node 512):" ||
	{ echo "FAILED: no message naming BIP_SEND_SLOTS: $out"; exit 1; }
echo ok
