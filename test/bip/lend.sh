#!/bin/sh
# Small messages lent in place from the shm ring: a held message stays
# intact while more arrive; every byte and the order survive a ring that
# wraps many times (32 KiB with packets of 8256 bytes: a few messages fill
# it, so the sender waits for the loans to come back) and a tiny queue;
# other wires copy.
. "$top_srcdir/test/bip/lib.sh"
run "$BIP_RUN" -n 2 -t 60 "$T/test_lend" 500
BIP_PACKET_SIZE=8256 BIP_SHM_RING_SIZE=32k \
	run "$BIP_RUN" -n 2 -t 60 "$T/test_lend" 500
BIP_SMALL_QUEUE=4 run "$BIP_RUN" -n 2 -t 60 "$T/test_lend" 300
BIP_WIRE=udp run "$BIP_RUN" -n 2 -t 60 "$T/test_lend" 100
# Blocking sends that find no free send slot (test_room). The sender of
# the small ring case above once waited there for a packet that was not
# coming (its own try had taken the last acks): about 1 run in 40 with two
# busy loops beside it; bip_sendv now retries at once after such a try.
BIP_SEND_SLOTS=2 run "$BIP_RUN" -n 1 -t 30 "$T/test_room" 40
