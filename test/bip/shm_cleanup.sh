#!/bin/sh
# Shared-memory segments: unlinked as soon as every peer attached, so none
# is left after a normal exit, a killed process, or a death during start-up.
# Across hosts (bip_run -H), only the nodes of one host attach: a node alone
# on its host unlinks at once, the others when their host's peers attached;
# the rings of nodes on other hosts stay sparse, and the others until
# messages reach them.
. "$top_srcdir/test/bip/lib.sh"
before=$(shm_left)
run "$BIP_RUN" -n 3 -t 60 "$T/test_peergone" check-unlinked
run "$BIP_RUN" -H 2 -n 3 -t 60 "$T/test_peergone" check-unlinked
run "$BIP_RUN" -H 2 -n 4 -t 60 "$T/test_peergone" check-unlinked
# Rings of nodes on other hosts take no memory: 4 hosts of 2 nodes.
run "$BIP_RUN" -H 4 -n 8 -t 60 "$T/test_peergone" check-sparse
# Nor do rings of peers of the host before their first message.
run "$BIP_RUN" -n 4 -t 60 "$T/test_peergone" check-lazy
# A ring takes new pages only while its consumer lags behind.
run "$BIP_RUN" -n 2 -t 60 "$T/test_peergone" check-reuse
run "$BIP_RUN" -n 4 -t 60 "$top_builddir/examples/bip_hello"
"$BIP_RUN" -n 2 -t 60 "$T/test_peergone" kill-after-init
[ $? -eq 137 ] || { echo "FAILED: expected the job to end by SIGKILL"; exit 1; }
# Which failure bip_run reports first (the SIGKILL, or a peer's failed
# start-up) is a race; that the job fails and leaves nothing is not.
"$BIP_RUN" -n 3 -t 60 "$T/test_peergone" kill-before-init
[ $? -ne 0 ] || { echo "FAILED: the job should have failed"; exit 1; }
# Under a launcher that cannot clean up (Hydra), a process killed before
# its host's other nodes attached leaves its name: the next open on the
# host removes it once it is a minute old and its process is gone; the
# name of a process that lives stays.
dead=$("$top_builddir/test/firmware/shm_leave" exit)
names=$(mktemp)
"$top_builddir/test/firmware/shm_leave" hold >"$names" &
holder=$!
# A loaded machine may start the holder slowly: wait up to 10 s.
for _ in $(seq 50); do [ -s "$names" ] && break; sleep 0.2; done
live=$(cat "$names")
rm -f "$names"
[ -n "$dead" ] && [ -n "$live" ] && [ -e "/dev/shm/$dead" ] &&
	[ -e "/dev/shm/$live" ] ||
	{ echo "FAILED: shm_leave left no name ($dead, $live)"; exit 1; }
touch -d '-2 min' "/dev/shm/$dead" "/dev/shm/$live"
run "$BIP_RUN" -n 2 -t 60 "$top_builddir/examples/bip_hello"
[ ! -e "/dev/shm/$dead" ] ||
	{ echo "FAILED: a dead process's stale name stayed"; exit 1; }
[ -e "/dev/shm/$live" ] ||
	{ echo "FAILED: a living process's name was removed"; exit 1; }
kill "$holder"
wait "$holder" 2>/dev/null
rm -f "/dev/shm/$live"
after=$(shm_left)
# Names an earlier test left may go meanwhile (the opens above remove
# stale ones): only a name that was not there before is ours.
left=""
for n in $after; do
	echo "$before" | grep -qx "$n" || left="$left $n"
done
[ -z "$left" ] || {
	echo "FAILED: segments left in /dev/shm:$left"
	echo "(there before: $(echo $before))"; exit 1; }
[ "$before" = "$after" ] ||
	echo "note: names left by earlier tests were removed: $(echo $before)"
echo "nothing left in /dev/shm"
