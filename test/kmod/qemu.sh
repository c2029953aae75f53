#!/bin/sh
# qemu.sh - the kernel module's test: build bip.ko against Debian's kernel
# headers, boot Debian's kernel under QEMU (TCG: no KVM needed) with a
# busybox initramfs carrying the module, veth and the static test program,
# and judge the guest's serial output (test/kmod/init, kmodtest.c).
#
# Usage: test/kmod/qemu.sh [CACHE]
#   CACHE, or $BIP_KMOD_CACHE: where Debian's kernel packages are fetched
#     (apt-get download, never installed) and unpacked, kept from run to
#     run; default <build dir>/test/kmod/cache. A kernel already unpacked
#     there is used as it is; else an installed one whose image (readable),
#     headers and modules are all there; else the packages are fetched.
#   $BIP_KMOD_WORK: scratch (module build, initramfs, serial log);
#     default <build dir>/test/kmod/work.
#   $BIP_KMOD_TIMEOUT: seconds the guest may run, 120 by default.
# Needs qemu-system-x86_64 (qemu-system-x86), a static busybox
# (busybox-static), gcc-12 (what Debian's headers build with), make,
# objcopy and a static libc; exits 77 (skipped) when something is missing.
set -eu

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${top_builddir:-$PWD}
cache=${1:-${BIP_KMOD_CACHE:-$builddir/test/kmod/cache}}
work=${BIP_KMOD_WORK:-$builddir/test/kmod/work}
limit=${BIP_KMOD_TIMEOUT:-120}

skip() { echo "SKIP: $*"; exit 77; }
die() { echo "FAIL: $*" >&2; exit 1; }

[ "${enable_sanitizers:-no}" != yes ] ||
	skip "the sanitizer build: the module and its test are not sanitized, the main build runs them"

command -v qemu-system-x86_64 >/dev/null ||
	skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] || skip "no busybox (apt-get install busybox-static)"
for tool in gcc-12 make objcopy readelf timeout gzip; do
	command -v $tool >/dev/null || skip "no $tool"
done
! readelf -l "$busybox" | grep -q INTERP ||
	skip "$busybox is not static (apt-get install busybox-static)"

# kernel_in ROOT: the release V for which ROOT holds a readable
# boot/vmlinuz-V, usr/src/linux-headers-V and V's veth.ko.
kernel_in() {
	for k in "$1"/boot/vmlinuz-*-amd64; do
		v=${k##*/vmlinuz-}
		if [ -r "$k" ] && [ -d "$1/usr/src/linux-headers-$v" ] &&
		   [ -f "$1/lib/modules/$v/kernel/drivers/net/veth.ko" ]; then
			echo "$v"
			return
		fi
	done
}

# mod_files NAME: the file of module NAME under $moddir and of those it
# needs (the depends= of their .modinfo), one a line, each after what it
# needs (a module needed twice is there twice).
mod_files() {
	# $1 and $2 are the call's own; $d is shared, each loop has its list.
	set -- "$1" "$(find "$moddir/kernel" -name "$1.ko" | head -n 1)"
	[ -n "$2" ] || die "no $1.ko under $moddir"
	for d in $(objcopy -O binary --only-section=.modinfo "$2" /dev/stdout |
		   tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '); do
		mod_files "$d"
	done
	echo "$2"
}

# Debian's current kernel (linux-image-amd64's ABI) and the headers of the
# same ABI, unpacked into $cache/root, keeping of the image's modules only
# those the test loads. The headers' Makefile names its common half by an
# absolute path, made to point there.
fetch() {
	command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
		return 1
	image=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *|*Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' |
		head -n 1)
	[ -n "$image" ] || return 1
	v=${image#linux-image-}
	more=$(apt-cache depends "linux-headers-$v" 2>/dev/null |
	       sed -n 's/^ *|*Depends: \(linux-\(headers\|kbuild\)-[^ ]*\)$/\1/p')
	rm -rf "$cache/debs" "$cache/root"
	mkdir -p "$cache/debs"
	# shellcheck disable=SC2086 # $more: one package per word
	(cd "$cache/debs" && apt-get download -q "$image" "linux-headers-$v" \
		$more) || return 1
	for deb in "$cache"/debs/*.deb; do
		dpkg-deb -x "$deb" "$cache/root.new" || return 1
	done
	rm -rf "$cache/debs"
	moddir=$cache/root.new/lib/modules/$v
	keep=$(mod_files veth) || return 1
	find "$moddir/kernel" -name '*.ko' | grep -vxF "$keep" | xargs rm -f
	sed -i "s|^include /usr/src/|include $cache/root/usr/src/|" \
		"$cache/root.new/usr/src/linux-headers-$v/Makefile"
	mv "$cache/root.new" "$cache/root"
}

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
root=$cache/root
v=$(kernel_in "$root")
if [ -z "$v" ]; then
	root=
	v=$(kernel_in "")
fi
if [ -z "$v" ]; then
	echo "fetching Debian's kernel packages into $cache"
	rm -rf "$cache/root.new"
	fetch || skip "cannot fetch Debian's kernel packages (apt-get download)"
	root=$cache/root
	v=$(kernel_in "$root")
	[ -n "$v" ] || skip "the fetched packages lack an image, headers or veth"
fi
kdir=$root/usr/src/linux-headers-$v
moddir=$root/lib/modules/$v
echo "kernel $v from ${root:-the system}"

rm -rf "$work"
mkdir -p "$work/src/common" "$work/initramfs"
work=$(cd "$work" && pwd)

# The module, built in a copy: kbuild writes beside the sources.
cp -R "$srcdir/src/kmod" "$work/src/"
cp "$srcdir"/src/common/*.h "$work/src/common/"
make -C "$work/src/kmod" KDIR="$kdir" >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log"; die "bip.ko does not build"; }
grep -i warning "$work/build.log" && die "bip.ko builds with warnings"

# The guest's file system.
ird=$work/initramfs
mkdir -p "$ird/bin" "$ird/dev" "$ird/proc" "$ird/sys" "$ird/lib/modules"
cp "$busybox" "$ird/bin/busybox"
ln -s busybox "$ird/bin/sh"
cp "$srcdir/test/kmod/init" "$ird/init"
chmod 755 "$ird/init"
${CC:-gcc} -static -O2 -Wall -Wextra -Werror -std=gnu11 \
	-I"$srcdir/src/common" -I"$srcdir/src/firmware" -I"$srcdir/test" \
	-o "$ird/bin/kmodtest" "$srcdir/test/kmod/kmodtest.c" \
	"$srcdir/src/firmware/siphash.c" ||
	skip "the test program does not link statically (libc6-dev?)"
cp "$work/src/kmod/bip.ko" "$ird/lib/modules/"
# libbip's own test of the module (test_hostif), as make check built it,
# with the libraries it loads: into /lib, the loader where it is named.
prog=$builddir/test/kmod/.libs/test_hostif
[ -x "$prog" ] || prog=$builddir/test/kmod/test_hostif
# (a libtool wrapper is a script: its first bytes are "#!"; a binary may
# hold those bytes after a newline anywhere)
[ -x "$prog" ] && [ "$(head -c 2 "$prog")" != "#!" ] ||
	die "no test/kmod/test_hostif in $builddir (make check builds it)"
cp "$prog" "$ird/bin/test_hostif"
LD_LIBRARY_PATH="$builddir/.libs" ldd "$prog" >"$work/ldd.txt" ||
	die "ldd $prog failed"
for lib in $(awk '$2 == "=>" && $3 ~ /^\// {print $3}' "$work/ldd.txt"); do
	cp -L "$lib" "$ird/lib/"
done
interp=$(awk '$1 ~ /^\/.*ld-linux/ {print $1}' "$work/ldd.txt")
[ -n "$interp" ] || die "no dynamic loader for $prog"
mkdir -p "$ird$(dirname "$interp")"
cp -L "$interp" "$ird$interp"

mods=$(mod_files veth) || exit 1
for f in $(echo "$mods" | awk '!seen[$0]++'); do
	cp "$f" "$ird/lib/modules/"
	echo "${f##*/}" >>"$ird/lib/modules/load"
done

(cd "$ird" && find . | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null) |
	gzip -1 >"$work/initrd.gz"

# Boot. A panic (oops=panic) reboots, and -no-reboot ends QEMU then.
echo "booting (at most ${limit}s); serial log: $work/serial.log"
start=$(date +%s)
rc=0
timeout "$limit" qemu-system-x86_64 -accel tcg -smp 2 -m 512 -nographic \
	-no-reboot -nic none -kernel "$root/boot/vmlinuz-$v" \
	-initrd "$work/initrd.gz" \
	-append "console=ttyS0 panic=-1 oops=panic quiet" \
	</dev/null >"$work/serial.log" 2>&1 || rc=$?
secs=$(($(date +%s) - start))
tr -d '\r' <"$work/serial.log" >"$work/serial.txt"

grep -o 'BIPTEST .*' "$work/serial.txt" || true
why=
[ $rc -ne 124 ] || why="the guest ran out of time (${limit}s)"
grep -q 'BIPTEST FAIL' "$work/serial.txt" && why="a test failed"
grep -Eq 'BUG:|WARNING:|Oops|Call Trace|Kernel panic' "$work/serial.txt" &&
	why="the kernel complained"
[ -n "$why" ] || grep -q 'BIPTEST DONE' "$work/serial.txt" ||
	why="the guest stopped before the end"
if [ -n "$why" ]; then
	echo "--- serial log"
	cat "$work/serial.txt"
	die "$why (after ${secs}s)"
fi
echo "PASS: bip.ko in Debian's kernel $v under QEMU (${secs}s)"
