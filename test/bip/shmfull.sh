#!/bin/sh
# A /dev/shm with room for the two segments' headers (a page each) but
# not for a ring's first page: the first send to a peer fails with
# BIP_EPEERGONE and an error naming /dev/shm, never a SIGBUS (connect
# reads nothing of a ring) or a hang. Needs a mount namespace of our own,
# with a small tmpfs on /dev/shm in it.
. "$top_srcdir/test/bip/lib.sh"
[ "$(id -u)" = 0 ] ||
	{ echo "SKIP: needs root for a mount namespace (CI runs as root)"; exit 77; }
unshare --mount true 2>/dev/null ||
	{ echo "SKIP: cannot create a mount namespace here (unshare refused)"; exit 77; }
err=$(mktemp)
timeout 60 unshare --mount sh -c '
	mount -t tmpfs -o size=8k bipshmfull /dev/shm &&
	exec "$1" -n 2 -t 50 "$2" shm-full' sh "$BIP_RUN" "$T/test_peergone" \
	2>"$err"
rc=$?
cat "$err"
grep -q "no room in /dev/shm for the ring to node" "$err" ||
	{ rm -f "$err"; echo "FAILED: no error named the full /dev/shm"; exit 1; }
rm -f "$err"
[ $rc -eq 0 ] || { echo "FAILED: exit status $rc"; exit 1; }
echo "a full /dev/shm: a clear error, no hang"
