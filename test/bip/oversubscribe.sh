#!/bin/sh
# More processes than cores: waiting processes must yield or block, or
# these runs would crawl (each is bounded by bip_run -t); and a process
# parked in a receive must use little CPU under the default idle policy.
. "$top_srcdir/test/bip/lib.sh"
n=$(( $(nproc) * 3 ))
run "$BIP_RUN" -n "$n" -t 120 "$T/test_traffic" 100 7
run "$BIP_RUN" -n "$n" -t 120 "$top_builddir/examples/bip_ring" 4194304
run "$BIP_RUN" -n 2 -t 60 "$T/test_idle" 0.25
# Nodes that share cores sleep often: they fence their sends rather than
# issue a global membarrier (every CPU interrupted) before each sleep;
# nodes with a core each register for it at start.
barriers() {
	strace -f -qq -e trace=membarrier "$BIP_RUN" -n "$1" -t 120 \
		"$T/test_traffic" 100 7 2>&1 >/dev/null | grep -c "membarrier(" || true
}
if command -v strace >/dev/null; then
	got=$(barriers "$n")
	echo "$n nodes on $(nproc) cores: $got membarrier calls (want 0)"
	[ "$got" = 0 ] || { echo "FAILED: crowded nodes use membarrier"; exit 1; }
	if [ "$(nproc)" -ge 2 ]; then
		got=$(barriers 2)
		echo "2 nodes: $got membarrier calls (want 2 registrations at least)"
		[ "$got" -ge 2 ] || { echo "FAILED: nodes with a core each do not register"; exit 1; }
	fi
else
	echo "skipped the membarrier check: strace is not installed"
fi
# Crowded: more nodes than the cores their launcher may use.
# Crowded nodes ask for the kernel's shortest slice (BIP_SLICE_US=auto),
# others keep theirs; the knob overrides both ways.
run "$BIP_RUN" -n "$n" -t 60 "$T/test_crowded" 1 100
BIP_SLICE_US=300 run "$BIP_RUN" -n "$n" -t 60 "$T/test_crowded" 1 300
BIP_SLICE_US=0 run "$BIP_RUN" -n "$n" -t 60 "$T/test_crowded" 1 keep
run taskset -c 0 "$BIP_RUN" -n 2 -t 60 "$T/test_crowded" 1
if [ "$(nproc)" -ge 2 ]; then
	run "$BIP_RUN" -n 2 -t 60 "$T/test_crowded" 0 keep
else
	echo "skipped 2 nodes not crowded: one core"
fi
BIP_IDLE=yield run "$BIP_RUN" -n 2 -t 60 "$T/test_idle" 1.0
# Two nodes the scheduler keeps on one core, each with a core to spare,
# move apart (BIP_SPREAD); their masks stay theirs.
run "$BIP_RUN" -n 2 -t 60 "$T/test_spread" auto
BIP_SPREAD=off run "$BIP_RUN" -n 2 -t 60 "$T/test_spread" off
