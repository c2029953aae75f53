#!/bin/sh
# The examples run on 1, 2 and 4 nodes.
. "$top_srcdir/test/bip/lib.sh"
for n in 1 2 4; do
	run "$BIP_RUN" -n $n -t 60 "$top_builddir/examples/bip_hello"
	run "$BIP_RUN" -n $n -t 60 "$top_builddir/examples/bip_ring" 100000
done
