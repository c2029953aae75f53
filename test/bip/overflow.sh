#!/bin/sh
# Overflowing the small-message queue is reported and loses nothing.
. "$top_srcdir/test/bip/lib.sh"
BIP_SMALL_QUEUE=8 run "$BIP_RUN" -n 2 -t 60 "$T/test_overflow" 300
BIP_SMALL_QUEUE=4 BIP_SEND_SLOTS=64 BIP_NACK_BACKOFF_US=1 \
	run "$BIP_RUN" -n 2 -t 60 "$T/test_overflow" 1000
