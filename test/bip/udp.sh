#!/bin/sh
# The udp wire, between processes of this host (BIP_WIRE=udp forces it for
# every peer): traffic of every size class checked byte by byte, with the
# packet size of a 1500-byte MTU and of the interface; then with BIP's own
# seeded faults (loss and duplication of every packet type), where every
# message must still arrive once, intact; a wrong interface is a clear
# error, not a hang. Then a mixed job: shm and udp chosen per peer.
. "$top_srcdir/test/bip/lib.sh"
export BIP_WIRE=udp
peers=$("$BIP_RUN" -n 3 -t 60 "$top_builddir/bip_info" -p) ||
	{ echo "FAILED: BIP_WIRE=udp bip_info -p"; exit 1; }
echo "$peers"
[ "$(echo "$peers" | grep -c ': udp (forced by BIP_WIRE)$')" -eq 6 ] ||
	{ echo "FAILED: want 6 peers on udp"; exit 1; }
run "$BIP_RUN" -n 2 -t 120 "$T/test_traffic" 1000 1
run "$BIP_RUN" -n 3 -t 120 "$T/test_traffic" 300 2
# auto took the first interface that is not loopback, if any; loopback's
# MTU (64 KiB) makes packets of another size.
BIP_UDP_IFACE=127.0.0.0/8 run "$BIP_RUN" -n 2 -t 120 "$T/test_traffic" 300 3
for seed in 1 2 3; do
	out=$(BIP_FAULT_DROP_PCT=5 BIP_FAULT_DUP_PCT=2 BIP_FAULT_SEED=$seed \
		"$BIP_RUN" -n 2 -t 120 "$T/test_traffic" 300 "$seed") ||
		{ echo "$out"; echo "FAILED: traffic under faults, seed $seed"; exit 1; }
	echo "$out"
	echo "$out" | grep -q ' [1-9][0-9]* retransmits, [1-9][0-9]* faults injected, [1-9][0-9]* duplicates' ||
		{ echo "FAILED: seed $seed: no retransmission, fault or duplicate counted"; exit 1; }
done
# Only SMALL and ACK packets hit: the rest of the machine recovers them.
BIP_FAULT_DROP_PCT=20 BIP_FAULT_TYPES=SMALL,ACK \
	run "$BIP_RUN" -n 2 -t 120 "$T/test_traffic" 200 4
err=$(BIP_FAULT_TYPES=SMALL,BOGUS "$BIP_RUN" -n 2 -t 30 "$T/test_traffic" 10 1 2>&1) &&
	{ echo "FAILED: BIP_FAULT_TYPES=SMALL,BOGUS accepted"; exit 1; }
echo "$err" | grep -q '"BOGUS" is no packet type' ||
	{ echo "$err"; echo "FAILED: no clear error for a bad packet type"; exit 1; }
err=$(BIP_UDP_IFACE=nosuch0 "$BIP_RUN" -n 2 -t 30 "$top_builddir/bip_info" -p 2>&1) &&
	{ echo "FAILED: BIP_UDP_IFACE=nosuch0 worked"; exit 1; }
echo "$err" | grep -q 'BIP_UDP_IFACE=nosuch0: no interface' ||
	{ echo "$err"; echo "FAILED: no clear error for a missing interface"; exit 1; }
# A mixed job (bip_run -H: two "hosts" of two nodes): shm inside a host,
# udp between them, by the launcher's map alone.
peers=$(BIP_WIRE=auto "$BIP_RUN" -H 2 -n 4 -t 60 "$top_builddir/bip_info" -p) ||
	{ echo "FAILED: bip_run -H 2 bip_info -p"; exit 1; }
echo "$peers"
[ "$(echo "$peers" | grep -c ': shm (same host)$')" -eq 4 ] &&
[ "$(echo "$peers" | grep -c ': udp (another host)$')" -eq 8 ] ||
	{ echo "FAILED: want 4 pairs on shm and 8 on udp"; exit 1; }
BIP_WIRE=auto run "$BIP_RUN" -H 2 -n 4 -t 120 "$T/test_traffic" 300 5
exit 0
