#!/bin/sh
# The NIC program is built from its own files and src/common alone, never
# from libbip's headers (bip.h): it must be able to move into a daemon or
# the kernel. Every quoted include of src/firmware (and of its wire
# classes in src/firmware/wire) must name a file there or in src/common.
: "${top_srcdir:?run through make check}"
s=$top_srcdir/src
bad=0 n=0
for f in "$s"/firmware/*.[ch] "$s"/firmware/wire/*.[ch]; do
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		n=$((n + 1))
		[ -f "$(dirname "$f")/$inc" ] || [ -f "$s/firmware/$inc" ] ||
			[ -f "$s/common/$inc" ] && continue
		echo "FAILED: ${f#"$s"/} includes \"$inc\", which is neither in src/firmware nor in src/common"
		bad=1
	done
done
[ "$n" -gt 0 ] || { echo "FAILED: no include found in src/firmware (wrong path?)"; exit 1; }
[ "$bad" = 0 ] && echo "ok: $n includes of src/firmware, all from src/firmware or src/common"
exit "$bad"
