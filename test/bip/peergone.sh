#!/bin/sh
# A vanished peer turns waits into BIP_EPEERGONE instead of a hang.
. "$top_srcdir/test/bip/lib.sh"
run "$BIP_RUN" -n 2 -t 60 "$T/test_peergone" die-after-init
BIP_CLOSE_TIMEOUT_MS=300 run "$BIP_RUN" -n 2 -t 60 "$T/test_peergone" close-timeout
# Messages a peer sent before it died all come out of bip_drain first.
BIP_LIVENESS_MS=50 run "$BIP_RUN" -n 2 -t 60 "$T/test_peergone" drain-after-death
