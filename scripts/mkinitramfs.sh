#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Pack the test VM's initramfs.
# usage: mkinitramfs.sh OUT.cpio.gz MODDIR USERDIR [EXTRADIR]
#   MODDIR   tdispatch.ko, plus optional kunit/, test/ and plant/ folders
#   USERDIR  static test binaries (*_test) and tools (tdctl, demo.sh)
#   EXTRADIR files for the VM's root, such as fuzz-args
set -eu
. "$(dirname "$0")/lib.sh"

out=$1 moddir=$2 userdir=$3 extradir=${4:-}
busybox=/bin/busybox
[ -x "$busybox" ] || td_die "$busybox missing; install busybox-static"

stage=$(mktemp -d)
# mktemp makes it 0700, and cpio keeps that for /: nobody could reach /dev.
chmod 755 "$stage"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/tests" "$stage/etc" "$stage/lib/tdispatch"
cp "$busybox" "$stage/bin/busybox"
cp "$TD_TOP/scripts/vm-init.sh" "$stage/init"
chmod 755 "$stage/init"
cp -r "$moddir/." "$stage/lib/tdispatch/"
for f in "$userdir"/*; do
	[ -e "$f" ] || continue
	case "${f##*/}" in
	*_test) cp "$f" "$stage/tests/" ;;
	demo.sh) cp "$f" "$stage/demo.sh" ;;
	*) cp "$f" "$stage/bin/" ;;
	esac
done
[ -z "$extradir" ] || cp -r "$extradir/." "$stage/"
# Accounts for the tests that drop privileges.
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"
(cd "$stage" && find . | cpio -o -H newc --quiet -R 0:0) | gzip -1 >"$out"
