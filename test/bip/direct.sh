#!/bin/sh
# Small messages from a peer of this host, taken straight from its ring by
# the receive calls or queued by the NIC program's turns, come out in one
# order and intact, under a seeded mix of calls (test_direct.c): with the
# defaults, a queue of 4 (turns overflow it while a message is held), a
# small ring that wraps all the time (pads, lent records), over udp,
# where every message goes through the queue, and from two senders.
. "$top_srcdir/test/bip/lib.sh"
# The bursts phase counts every message as taken straight from the ring on
# shm; a liveness check (every BIP_LIVENESS_MS) is a whole turn, which
# queues what the rings hold at that moment (the sanitizer build, slower,
# met one: 461 of 500). None falls inside a run here.
BIP_LIVENESS_MS=60000
export BIP_LIVENESS_MS
run "$BIP_RUN" -n 2 -t 60 "$T/test_direct" 3000
# Three times: whether a turn queues messages just before a take from the
# ring (which must then serve the queue first) depends on timing.
for i in 1 2 3; do
	BIP_SMALL_QUEUE=4 run "$BIP_RUN" -n 2 -t 60 "$T/test_direct" 2000
done
BIP_PACKET_SIZE=8256 BIP_SHM_RING_SIZE=32k \
	run "$BIP_RUN" -n 2 -t 60 "$T/test_direct" 1000
BIP_WIRE=udp run "$BIP_RUN" -n 2 -t 60 "$T/test_direct" 300
# Two senders: the receive calls go round both rings.
run "$BIP_RUN" -n 3 -t 60 "$T/test_direct" 1000
