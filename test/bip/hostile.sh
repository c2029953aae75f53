#!/bin/sh
# A hostile or buggy co-tenant: a peer that rewrites shared segment headers
# after connecting must change nothing for the others.
. "$top_srcdir/test/bip/lib.sh"
run "$BIP_RUN" -n 2 -t 60 "$T/test_hostile" rewrite-headers
