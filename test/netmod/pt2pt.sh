#!/bin/sh
# Native point-to-point of the bip netmod: test_pt2pt (every protocol at its
# switch points, wildcards, probe, cancel, short sends lending their
# buffers behind a full send FIFO, an isend storm, all-to-all) with
# the default CVARs on 1, 2 and 4 ranks, then with tiny thresholds and N = 2
# credits so that every mechanism runs often (the counters printed at
# finalize must show it), with eager pieces behind few credits on one host
# and with every rank on a host of its own; lone mid-size messages eager
# and streams of them by three-way; large data read by the
# receiver in one copy, and not, and with the sender writing half of it;
# copies split in pieces (BIP_SHM_COPY_SPLIT); bad settings must fail with a clear error;
# and MPI_THREAD_MULTIPLE.
. "$top_srcdir/test/netmod/lib.sh"
# The protocols' rules with their built-in defaults: the machine profile
# may move the stream limit (tune.sh tests it).
export BIP_PROFILE=none
t="$top_srcdir/test/netmod"
run "$MPICC" -O2 -Wno-stringop-overflow -o "$W/test_pt2pt" "$t/test_pt2pt.c"
run "$MPICC" -O2 -Wno-stringop-overflow -o "$W/test_threads" "$t/test_threads.c" -lpthread

# passed RANKS WHAT: the last run of test_pt2pt passed.
passed() {
	echo "$out" | grep -q "passed on $1 ranks" ||
		{ echo "FAILED: test_pt2pt $2"; exit 1; }
}
for n in 1 2 4; do
	mpirun $n "$W/test_pt2pt"
	passed $n "on $n ranks"
done
# Copies split in 2 KiB pieces (BIP_SHM_COPY_SPLIT): every ring copy,
# eager piece and shared-memory collective up to 64 KiB goes so.
BIP_SHM_COPY_SPLIT=64k mpirun 2 "$W/test_pt2pt"
passed 2 "with copies split (BIP_SHM_COPY_SPLIT=64k)"
# (A rank reads its own messages where they lie, so on one rank the
# rendezvous send cancelled while another was under way is withdrawn.)
mpirun 1 "$W/test_pt2pt"
echo "$out" | grep -q "the rendezvous send was cancelled" ||
	{ echo "FAILED: a withdrawn rendezvous send was not cancelled"; exit 1; }

# positive NAME: every rank counted some.
positive() {
	v=$(counter "$1")
	[ -n "$v" ] && ! echo "$v" | grep -qx 0 ||
		{ echo "FAILED: '$1' is not counted on every rank: $v"; exit 1; }
}
# some NAME: some rank counted some.
some() {
	counter "$1" | grep -qvx 0 ||
		{ echo "FAILED: no rank counted '$1'"; exit 1; }
}
# Credits keep BIP's queue from overflowing: no NACK, no overflow.
no_overflow() {
	for c in "small-queue overflows" "NACKs"; do
		v=$(counter "$c")
		echo "$v" | grep -qvx 0 && { echo "FAILED: $c: $v"; exit 1; }
	done
	return 0
}

# Tiny thresholds: many fragments; two credits per peer; four BIP tags, so
# medium messages wait in the receive FIFO; no eager protocol, so every
# mid-size message takes the three-way one.
MPIR_CVAR_CH4_BIP_SHORT_LIMIT=100 MPIR_CVAR_CH4_BIP_RNDV_THRESHOLD=2000 \
MPIR_CVAR_CH4_BIP_EAGER_LIMIT=0 \
MPIR_CVAR_CH4_BIP_FRAGMENT_SIZE=700 MPIR_CVAR_CH4_BIP_CREDITS=2 \
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 BIP_LONG_TAGS=4 \
	mpirun 3 "$W/test_pt2pt" 3000
passed 3 "with tiny thresholds"
for c in short three-way rendezvous synchronous fragments credits-only \
	unexpected held \
	"temporary buffers" reused "send FIFO max" lent \
	"receive FIFO max" "active messages inline" announced \
	"small messages read in place" "taken straight from a ring"; do
	positive "$c"
done
# In held_test's ring of blocked sends some rank must fetch a held message
# once its hold is over, or none would complete; which ranks do depends on
# when each came (a rank whose left neighbour came a hold later matches
# in time), so not necessarily every one.
some "fetched after the hold"
echo "$out" | grep -q "(N=2)" || { echo "FAILED: N is not 2"; exit 1; }
e=$(counter eager)
[ -n "$e" ] && [ "$(echo "$e" | grep -cvx 0)" = 0 ] ||
	{ echo "FAILED: eager sends with MPIR_CVAR_CH4_BIP_EAGER_LIMIT=0: $e"; exit 1; }

# Eager pieces on one host, behind 4 credits: a message goes eagerly only
# when the credits take all its pieces at once (one to three pieces here),
# else by the three-way protocol, so both run, and credits still keep BIP's
# queue from overflowing.
MPIR_CVAR_CH4_BIP_SHORT_LIMIT=100 \
MPIR_CVAR_CH4_BIP_EAGER_LIMIT=20000 MPIR_CVAR_CH4_BIP_RNDV_THRESHOLD=30000 \
MPIR_CVAR_CH4_BIP_CREDITS=4 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 3 "$W/test_pt2pt" 3000
passed 3 "with eager pieces on one host"
for c in eager three-way; do
	positive "$c"
done
no_overflow

# Every rank a host of its own (MPICH's node map; BIP then takes udp):
# mid-size messages go eagerly, in pieces of 1-6 packets, when 8 credits
# take them all.
MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_CH4_BIP_SHORT_LIMIT=100 \
MPIR_CVAR_CH4_BIP_EAGER_LIMIT=20000 MPIR_CVAR_CH4_BIP_RNDV_THRESHOLD=30000 \
MPIR_CVAR_CH4_BIP_CREDITS=8 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 3 "$W/test_pt2pt" 3000
passed 3 "with eager pieces between hosts"
for c in eager "segmented runs"; do
	positive "$c"
done
no_overflow

# 100 blocking sends of 4 KiB to a rank that starts receiving late: each
# meets its receive in the ring, none is copied out as unexpected first
# (a drain's turn ends at a receive that leaves none posted). Before, a
# turn took 64 at once, 63 of them unexpected.
MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_pt2pt" behind
expect "behind: ok" "messages queued behind a late receiver"
u=$(echo "$out" | sed -n 's/^bip netmod rank 1:.* unexpected \([0-9]*\).*/\1/p')
echo "rank 1, 100 messages queued before its receives: unexpected ${u:-?}"
[ -n "$u" ] && [ "$u" -le 5 ] ||
	{ echo "FAILED: messages behind a late receiver were copied out as unexpected"; exit 1; }

# Bursts of 300 messages that wait for their receiver: blocking sends of
# 4 KiB to a rank 2 ms late wait past the credits as copies in the FIFO;
# sends of 4 and 8 KiB received only after the one sent behind them wait
# as unexpected messages. Their memory must be kept for the next burst,
# not given back and faulted in again (before: 466, 2331-3922 and 95-1412
# page faults in 20 bursts, glibc's trimming deciding; since, 2-50).
mpirun 2 "$W/test_pt2pt" bursts
echo "$out" | grep '^bursts:'
[ "$(echo "$out" | grep -c '^bursts:')" = 3 ] &&
	echo "$out" | awk '/^bursts:/ && $2 > 100 { bad = 1 } END { exit bad }' ||
	{ echo "FAILED: bursts of waiting messages took page faults each time"; exit 1; }

# Above 8 KiB, up to 64 KiB, a message goes eagerly alone (each sent after
# a receive completed: a ring of 2 ranks), and where the receiver can read
# our memory, by three-way right behind another (a stream of 8 isends of
# 32 KiB: the first eager, the rest three-way; credits would take them
# all). Where each rank has a core: with more ranks than cores streams go
# eagerly too (oversubscribe.sh).
if [ "$(nproc)" -ge 2 ]; then
	run "$MPICC" -O2 -o "$W/ring" "$top_srcdir/examples/mpi/ring.c"
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/ring" 32768 10
	set -- $(protocols)
	echo "2 ranks, a ring of 32 KiB: eager $1, three-way $2"
	[ "$1" -ge 20 ] && [ "$2" = 0 ] ||
		{ echo "FAILED: lone 32 KiB messages do not go eagerly"; exit 1; }
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_pt2pt" stream
	expect "stream: ok" "a stream of 32 KiB messages"
	set -- $(protocols)
	echo "2 ranks, a stream of 8 x 32 KiB: eager $1, three-way $2"
	if "$top_builddir/bip_info" | grep -q "cross-memory attach available"
	then
		[ "$1" -ge 1 ] && [ "$1" -le 2 ] && [ "$2" -ge 6 ] ||
			{ echo "FAILED: a stream of 32 KiB does not go by three-way behind its first message"; exit 1; }
	else
		[ "$1" = 8 ] && [ "$2" = 0 ] ||
			{ echo "FAILED: a stream without cross-memory attach does not go eagerly"; exit 1; }
	fi
	# Data the receiver could read but asks for (MPIR_CVAR_CH4_BIP_FETCH:
	# by measured cost, here forced) travels in BIP's packets, never read
	# by the receiver after all (bip_irsend_packets), though several are
	# in flight: no single copy at all. Reading them: one each.
	if "$top_builddir/bip_info" | grep -q "cross-memory attach available"
	then
		for f in ask read; do
			MPIR_CVAR_CH4_BIP_FETCH=$f \
				MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
				mpirun 2 "$W/test_pt2pt" stream
			expect "stream: ok" "a stream of 32 KiB messages ($f)"
			n=$(counter "single copies" |
				awk '{ n += $1 } END { print n + 0 }')
			set -- $(protocols)
			echo "2 ranks, a stream of 8 x 32 KiB, FETCH=$f: three-way $2, $n single copies"
			[ "$2" -ge 6 ] || { echo "FAILED: the stream did not go by three-way"; exit 1; }
			if [ $f = ask ]; then
				[ "$n" = 0 ] || { echo "FAILED: data asked for was read"; exit 1; }
			else
				[ "$n" -ge 6 ] || { echo "FAILED: data not read"; exit 1; }
			fi
		done
		MPIR_CVAR_CH4_BIP_FETCH=ask mpirun 2 "$W/test_pt2pt"
		passed 2 "every message asked for"
		# Data 16 bytes further into its page at the receiver: read
		# where such copies are fast (measured by default, here set),
		# asked for through the rings where they are slow (bip_copy.h).
		for a in fast slow; do
			BIP_SHM_ALIAS=$a MPIR_CVAR_CH4_BIP_FETCH=read \
				MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
				mpirun 2 "$W/test_pt2pt" apart
			expect "apart: ok" "data 16 bytes apart (BIP_SHM_ALIAS=$a)"
			n=$(counter "read by us" |
				awk '{ n += $1 } END { print n + 0 }')
			echo "2 ranks, 8 x 256 KiB 16 bytes apart, BIP_SHM_ALIAS=$a: $n read"
			if [ $a = fast ]; then
				[ "$n" -ge 8 ] || { echo "FAILED: data 16 bytes apart not read where such copies are fast"; exit 1; }
			else
				[ "$n" = 0 ] || { echo "FAILED: data 16 bytes apart read where such copies are slow"; exit 1; }
			fi
		done
	fi
else
	echo "SKIP: lone messages and streams: one core, so ranks share it and streams go eagerly"
fi

# Large messages are read by their receiver in one copy (BIP_SHM_PULL_MIN,
# 16 KiB here) where this machine allows cross-memory attach - three-way
# ones by the netmod when that measured cheaper than asking for them, as
# every rank counts, ready-mode ones several at a time to one peer by BIP: more single copies than with it off, where only a
# rank's messages to itself are (its own memory); the data is checked
# either way.
# copies: the single copies of all ranks together.
copies() {
	counter "single copies" | awk '{ n += $1 } END { print n + 0 }'
}
BIP_SHM_PULL_MIN=never MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
	mpirun 2 "$W/test_pt2pt"
passed 2 "without single copies between processes"
off=$(copies)
if "$top_builddir/bip_info" | grep -q "cross-memory attach available"
then
	BIP_SHM_PULL_MIN=16k MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
		mpirun 2 "$W/test_pt2pt"
	passed 2 "with single copies"
	positive "read by us"
	echo "$out" | grep -q "the rendezvous send was cancelled" || {
		echo "FAILED: a withdrawn rendezvous send was not cancelled"
		exit 1
	}
	on=$(copies)
	[ "$on" -gt "$off" ] || { echo "FAILED: $on single copies with" \
		"BIP_SHM_PULL_MIN=16k, $off with never"; exit 1; }
	# Messages from 4 KiB on (MPIR_CVAR_CH4_BIP_SPLIT_MIN) that a
	# receiver reads, it reads with the sender's help when that sender
	# has no sends of its own to read (each rank has a core of its own):
	# it reads the first half while the sender writes the second into its
	# buffer. The data is checked.
	if [ "$(nproc)" -ge 2 ]; then
		MPIR_CVAR_CH4_BIP_SPLIT_MIN=4096 MPIR_CVAR_CH4_BIP_EAGER_LIMIT=0 \
		MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_pt2pt"
		passed 2 "with reads shared with the sender"
		MPIR_CVAR_CH4_BIP_SPLIT_MIN=4096 MPIR_CVAR_CH4_BIP_EAGER_LIMIT=0 \
		MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_pt2pt" oneway
		expect "oneway: ok" "one-way messages read with the sender's help"
		some "with the sender's help"
		some "parts written for a receiver"
		# Messages over one rendezvous fragment (3 MiB) are read too.
		echo "$out" | grep "ns per KiB by size" |
			grep -q "2048K read [1-9]" || {
			echo "FAILED: no 3 MiB message was read"
			exit 1
		}
		# A receiver that sends nothing back chooses with the costs of
		# one way only; one whose own sends are in flight, with those
		# of both ways (bip_state.h, MPIDI_BIP_PATHS_BOTH).
		if echo "$out" | grep -q "by size, both ways"; then
			echo "FAILED: one-way messages timed as both ways"
			exit 1
		fi
		# Rank 1 receives before it sends, its messages all there: it
		# reads them at its next progress call, once its sends left
		# (not inside MPI_Irecv, where none were in flight yet).
		MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_pt2pt" both
		expect "both: ok" "256 KiB messages both ways at once"
		# A message is read or asked for, whichever measured cheaper:
		# a size class reads its first 33 messages, then tries
		# asking, before choosing (48 messages a rank here).
		for r in 0 1; do
			echo "$out" | grep "rank $r: .*by size, both ways" |
				grep -Eq "256K read [1-9][0-9]* ask [1-9]" || {
				echo "FAILED: rank $r's messages both ways not timed as such, reading and asking"
				exit 1
			}
		done
		if echo "$out" | grep -q "rank 1: .*by size, one way"; then
			echo "FAILED: rank 1 read before its sends left"
			exit 1
		fi
		# Receives freed before their data came, then MPI_Finalize:
		# the receiver takes every message it matched before it leaves
		# (read, asked for, read with the sender's help; the three-way
		# one held by the hold of a second), so the sender's waits
		# succeed, and the data is there after MPI_Finalize.
		for v in MPIR_CVAR_CH4_BIP_FETCH=auto \
			MPIR_CVAR_CH4_BIP_FETCH=ask MPIR_CVAR_CH4_BIP_SPLIT_MIN=4096
		do
			(
				export "$v"
				MPIR_CVAR_CH4_BIP_HOLD_US=1000000 \
				MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
					mpirun 2 "$W/test_pt2pt" freed
				expect "freed: ok" "receives freed, then MPI_Finalize ($v)"
				case $v in *SPLIT*) some "with the sender's help" ;; esac
			) || exit 1
		done
		# A sender whose write fails says so: the receiver reads that
		# part itself.
		run cc -shared -fPIC -O2 -I"$prefix/include" \
			-o "$W/no_write.so" "$t/no_write.c"
		LD_PRELOAD="$W/no_write.so" MPIR_CVAR_CH4_BIP_SPLIT_MIN=4096 \
		MPIR_CVAR_CH4_BIP_EAGER_LIMIT=0 MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
			mpirun 2 "$W/test_pt2pt" oneway
		expect "oneway: ok" "one-way messages with every write failing"
		some "with the sender's help"
		echo "$out" | grep -q "parts written for a receiver [1-9]" && {
			echo "FAILED: a part written though every write failed"
			exit 1
		}
	else
		echo "SKIP (in part): one core, so no read is shared with the sender"
	fi
	# Windows of three-way messages are read several at a time (one
	# bip_readv): posted and unexpected, one way and both ways, a 100 KiB
	# one among them read alone, one truncated; with no hold, the
	# unexpected ones are read at once into temporary buffers.
	for h in -1 0; do
		MPIR_CVAR_CH4_BIP_FETCH=read MPIR_CVAR_CH4_BIP_HOLD_US=$h \
		MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
			mpirun 2 "$W/test_pt2pt" window
		expect "window: ok" "windows of three-way messages (hold $h)"
		positive "together"
	done
	# Three-way messages no receive takes, held when their receiver
	# finalizes: it reads them (together) there, and the sends complete.
	MPIR_CVAR_CH4_BIP_FETCH=read MPIR_CVAR_CH4_BIP_HOLD_US=1000000 \
	MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 mpirun 2 "$W/test_pt2pt" leftover
	expect "leftover: ok" "three-way messages left unreceived"
	some "together"
	# Messages the receiver may not read (synchronous, of one fragment or more)
	# leave the chooser's ask costs alone (crowded ranks read synchronous
	# ones, and time those reads).
	BIP_SHM_PULL_MIN=16k MPIR_CVAR_CH4_BIP_PRINT_COUNTERS=1 \
		mpirun 2 "$W/test_pt2pt" unread
	echo "$out" | grep -q "unread: ok" ||
		{ echo "FAILED: unreadable messages"; exit 1; }
	if echo "$out" | grep "ns per KiB by size" | grep -E "ask [1-9]"; then
		echo "FAILED: messages nobody could read were timed as asks"
		exit 1
	fi
else
	echo "SKIP (single copies): cross-memory attach is not allowed here"
fi

# Settings MPI cannot run with: a clear error, no hang. (The message of a
# rank that aborts can be lost by Hydra's output forwarding when the job is
# torn down: every attempt must fail, one of three must show it.)
fails() { # RANKS EXPECTED-TEXT ENV...
	np=$1 want=$2; shift 2
	for attempt in 1 2 3; do
		echo "+ $* mpiexec -n $np test_pt2pt (must fail)"
		out=$(env "$@" timeout 60 "$MPIEXEC" -n $np "$W/test_pt2pt" 2>&1) &&
			{ echo "$out"; echo "FAILED: $* was accepted"; exit 1; }
		echo "$out" | grep -q "$want" && return 0
		echo "$out"
	done
	echo "FAILED: no '$want' in the error"
	exit 1
}
fails 2 "MPIR_CVAR_CH4_BIP_CREDITS=1 is out of range (allowed: 0, the queue" \
	MPIR_CVAR_CH4_BIP_CREDITS=1
fails 2 "MPIR_CVAR_CH4_BIP_SHORT_LIMIT=9000 is out of range" \
	MPIR_CVAR_CH4_BIP_SHORT_LIMIT=9000
fails 2 "MPIR_CVAR_CH4_BIP_NODE_COLL_MAX=2000000 is out of range" \
	MPIR_CVAR_CH4_BIP_NODE_COLL_MAX=2000000
fails 4 "does not fit BIP's small-message queue" BIP_SMALL_QUEUE=5
fails 2 "invalid knob BIP_SHM_COPY_SPLIT=2x" BIP_SHM_COPY_SPLIT=2x
fails 2 "receive FIFO is full" MPIR_CVAR_CH4_BIP_RECV_FIFO_MAX=1 \
	BIP_LONG_TAGS=1
# A full send FIFO refuses the send with an error the program can handle;
# what was sent before arrives.
MPIR_CVAR_CH4_BIP_SEND_FIFO_MAX=5 MPIR_CVAR_CH4_BIP_CREDITS=2 \
	mpirun 2 "$W/test_pt2pt" flood
for want in "^send [0-9]* refused" "send FIFO is full (5 entries)" \
	"messages sent before the refusal arrived"; do
	echo "$out" | grep -q "$want" ||
		{ echo "FAILED: no '$want' (full send FIFO)"; exit 1; }
done

# A message consumed after its sender finalized (and its credit return
# finds the peer gone) is delivered, not turned into an error. Racy to
# provoke (the sender's close must be noticed first): three tries.
for try in 1 2 3; do
	MPIR_CVAR_CH4_BIP_CREDITS=2 BIP_CLOSE_TIMEOUT_MS=100 \
		mpirun 2 "$W/test_pt2pt" late
	echo "$out" | grep -q "late message received" ||
		{ echo "FAILED: the late message"; exit 1; }
done

mpirun 2 "$W/test_threads" 4 200
echo "$out" | grep -q "iterations per rank: ok" ||
	{ echo "FAILED: MPI_THREAD_MULTIPLE"; exit 1; }
