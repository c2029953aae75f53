#!/bin/sh
# Without the kernel module, BIP does all without it: two processes of one
# job trade checked messages, and none maps /dev/bip. With it loaded here
# (a real machine), they use it; BIP_KMOD=off turns it off. The QEMU guest
# (qemu.sh) runs both ways with the module.
. "$top_srcdir/test/bip/lib.sh"
if [ -e /dev/bip ]; then
	run timeout 60 "$top_builddir/test/kmod/test_hostif" kmod
else
	run timeout 60 "$top_builddir/test/kmod/test_hostif" none
fi
BIP_KMOD=off run timeout 60 "$top_builddir/test/kmod/test_hostif" none
"$top_builddir/bip_info" | grep '^kernel module: ' ||
	{ echo "FAILED: bip_info does not say whether the module is there"; exit 1; }
