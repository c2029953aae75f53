#!/bin/sh
# bipmpi's collective selection (src/netmod/coll_selection.json) is the one
# in force: the trees installed in share/bipmpi are MPICH's with our rules
# in front, and each rule shows in the messages its algorithm sends
# (PRINT_COUNTERS, summed over the ranks) against MPICH's own choice forced
# by its CVAR. Every result is checked (test_coll.c). Loading the installed
# files by hand (what a user editing them does) gives the same counts.
. "$top_srcdir/test/netmod/lib.sh"
share=$prefix/share/bipmpi
for f in coll_mpir.json coll_ch4.json; do
	[ -s "$share/$f" ] || { echo "FAILED: $share/$f not installed"; exit 1; }
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$share/$f" ||
		{ echo "FAILED: $share/$f is not JSON"; exit 1; }
	grep -q '"comm_hierarchy=node"' "$share/$f" ||
		{ echo "FAILED: $share/$f lacks our rules"; exit 1; }
done
# Within one node the device layer calls the netmod's collective on the
# whole communicator (the first choice of its bcast tree).
python3 - "$share/coll_ch4.json" <<'EOF' || { echo "FAILED: coll_ch4.json: no flat bcast within a node"; exit 1; }
import json, sys
intra = json.load(open(sys.argv[1]))["collective=bcast"]["comm_type=intra"]
first = next(iter(intra.items()))
sys.exit(first != ("comm_size=node_comm_size",
                   {"composition=MPIDI_Bcast_intra_composition_gamma": {}}))
EOF
run "$MPICC" -O2 -o "$W/test_coll" "$top_srcdir/test/netmod/test_coll.c"

# sent N ARGS...: run test_coll on N ranks, print the messages sent (every
# protocol, all ranks; a counter line may follow output that ended
# without its newline). Its complaints go to stderr: its stdout is the count.
sent() {
	n=$1; shift
	mpirun "$n" env MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 "$W/test_coll" "$@" >&2
	expect "test_coll: passed" "test_coll $*" >&2
	echo "$out" | sed -n 's/.*bip netmod rank [0-9]*: short \([0-9]*\), eager \([0-9]*\), three-way \([0-9]*\), rendezvous \([0-9]*\) .*/\1 \2 \3 \4/p' |
		awk -v n="$n" '{ s += $1 + $2 + $3 + $4; k++ } END { if (k != n) exit 1; print s }' ||
		{ echo "$out"; echo "FAILED: no counters from $n ranks"; exit 1; } >&2
}

# The rules choose among MPICH's algorithms over point-to-point: the small
# collectives that go through shared memory within the host instead
# (node_coll.sh) are off here.
export MPIR_CVAR_CH4_BIP_NODE_COLL_MAX=-1

# rule WHAT N CVAR ARGS...: ours must send under 4/5 of what MPICH's choice
# (CVAR) sends for the same calls.
rule() {
	what=$1 n=$2 cvar=$3; shift 3
	ours=$(sent "$n" "$@") || exit 1
	mpich=$(export "$cvar"; sent "$n" "$@") || exit 1
	echo "$what: $ours messages, MPICH's choice ($cvar) $mpich"
	[ $((ours * 5)) -lt $((mpich * 4)) ] || { echo "FAILED: $what is not our choice"; exit 1; }
}

# 4 KiB allreduce: recursive doubling, one exchange (MPICH: reduce-scatter
# then allgather, two).
rule "allreduce 4 KiB, 2 ranks" 2 MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=reduce_scatter_allgather 200 4096 0 0 0 0
allreduce=$ours
# 64 KiB bcast on 8 ranks: binomial, 7 messages (MPICH's tree, from 8
# ranks: scatter, then recursive-doubling allgather, 31).
rule "bcast 64 KiB, 8 ranks" 8 MPIR_CVAR_BCAST_INTRA_ALGORITHM=scatter_recursive_doubling_allgather 20 0 65536 0 0 0
# alltoall on 2 ranks: pairwise, one exchange and a local copy (MPICH:
# scattered, which also sends each rank its own block).
rule "alltoall 512 B, 2 ranks" 2 MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=scattered 200 0 0 512 0 0
# alltoall of 64 KiB blocks on 4 ranks: scattered, every exchange posted
# at once (MPICH: pairwise above 32 KiB, one partner at a time, who with
# more ranks than cores is often not running), which also sends each rank
# its own block: 16 messages a call against pairwise's 12.
ours=$(sent 4 20 0 0 65536 0 0) || exit 1
mpich=$(export MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM=pairwise; sent 4 20 0 0 65536 0 0) || exit 1
echo "alltoall 64 KiB, 4 ranks: $ours messages, MPICH's choice (pairwise) $mpich"
[ $((ours * 5)) -gt $((mpich * 6)) ] || { echo "FAILED: alltoall 64 KiB is not scattered"; exit 1; }
# 4 KiB reduce: binomial, one message per rank (MPICH: reduce-scatter
# then gather, 3 on 2 ranks).
rule "reduce 4 KiB, 2 ranks" 2 MPIR_CVAR_REDUCE_INTRA_ALGORITHM=reduce_scatter_gather 200 0 0 0 4096 0
# barrier: dissemination, one message per rank (MPICH's node-aware one on
# a single node: the same, then a bcast from the node's first rank).
rule "barrier, 2 ranks" 2 MPIR_CVAR_BARRIER_INTRA_ALGORITHM=smp 1 0 0 0 0 300

# The installed trees, loaded from their files.
by_file=$(MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$share/coll_mpir.json \
	MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE=$share/coll_ch4.json \
	sent 2 200 4096 0 0 0 0) || exit 1
echo "allreduce 4 KiB, 2 ranks, trees loaded from $share: $by_file messages"
[ $((by_file * 20)) -ge $((allreduce * 19)) ] && [ $((by_file * 20)) -le $((allreduce * 21)) ] ||
	{ echo "FAILED: the installed files choose otherwise than the built-in trees ($allreduce)"; exit 1; }
echo "collective selection: passed"
