#!/bin/sh
# A dead peer whose pid was given to another process is still dead: needs a
# pid namespace of our own, where the next pid can be chosen.
. "$top_srcdir/test/bip/lib.sh"
[ "$(id -u)" = 0 ] ||
	{ echo "SKIP: needs root for a pid namespace (CI runs as root)"; exit 77; }
unshare --pid --fork --mount-proc true 2>/dev/null ||
	{ echo "SKIP: cannot create a pid namespace here (unshare refused)"; exit 77; }
run timeout 60 unshare --pid --fork --mount-proc "$T/test_hostile" pid-reuse
