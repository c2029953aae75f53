#!/bin/sh
# Memory shared within a host (test_mem.c): a region mapped by a peer,
# whole and in part, stores seen both ways; stale, forged and too long keys
# refused; a mapping outlives the region's free; nothing to share without
# the shm wire. Skipped, saying why, where the kernel lets no process take
# another's descriptor.
. "$top_srcdir/test/bip/lib.sh"
echo "+ $BIP_RUN -n 2 -t 60 $T/test_mem"
"$BIP_RUN" -n 2 -t 60 "$T/test_mem"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAILED (exit $rc): test_mem"; exit 1; }
BIP_WIRE=udp run "$BIP_RUN" -n 2 -t 60 "$T/test_mem" nowire
BIP_SHM_MEM_MAX=0 run "$BIP_RUN" -n 2 -t 60 "$T/test_mem" nowire
