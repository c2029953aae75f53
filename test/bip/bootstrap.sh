#!/bin/sh
# The PMI-1 bootstrap under bip_run, and bip_run's own contract.
. "$top_srcdir/test/bip/lib.sh"
run "$BIP_RUN" -n 4 -t 60 "$T/pmi_echo"
run "$BIP_RUN" -n 1 -t 60 "$top_builddir/examples/bip_hello"
# bip_run's own contract: exit statuses and a bounded run.
"$BIP_RUN" -n 2 -t 60 false; [ $? -eq 1 ] || { echo "FAILED: status"; exit 1; }
"$BIP_RUN" -n 2 -t 1 sleep 30; [ $? -eq 124 ] || { echo "FAILED: -t"; exit 1; }
"$BIP_RUN" -n 0 true 2>/dev/null; [ $? -eq 2 ] || { echo "FAILED: -n 0"; exit 1; }
echo ok
