#!/bin/sh
# The NIC program is built from its own files and src/common alone, never
# from libbip's headers (bip.h): it must be able to move into a daemon or
# the kernel. Every quoted include of src/firmware (and of its wire
# classes in src/firmware/wire) must name a file there or in src/common.
# The kernel module includes its own files and the two headers it shares
# with user space (bip_kabi.h, bip_wire.h) alone.
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
# The kernel module includes, of ours, only its own files and the headers
# of src/common it shares with user space (the /dev/bip ABI and the wire
# format, and what those include).
for f in "$s"/kmod/*.[ch]; do
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		n=$((n + 1))
		case $inc in
		bip_kabi.h | bip_wire.h | bip_limits.h) continue ;;
		esac
		[ -f "$s/kmod/$inc" ] && continue
		echo "FAILED: ${f#"$s"/} includes \"$inc\", which is neither in src/kmod nor a header it shares with user space"
		bad=1
	done
done
for f in "$s"/common/bip_kabi.h "$s"/common/bip_wire.h "$s"/common/bip_limits.h; do
	for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $inc in
		bip_kabi.h | bip_wire.h | bip_limits.h) continue ;;
		esac
		echo "FAILED: ${f#"$s"/}, which the kernel module includes, includes \"$inc\""
		bad=1
	done
done
[ "$n" -gt 0 ] || { echo "FAILED: no include found in src/firmware (wrong path?)"; exit 1; }
[ "$bad" = 0 ] && echo "ok: $n includes of src/firmware and src/kmod, all from their own folder or src/common"
exit "$bad"
