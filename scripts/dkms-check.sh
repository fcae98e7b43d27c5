#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check's DKMS step: build the package, install it on this machine
# (without its build for the running kernel: nothing of ours is ever
# loaded here), let DKMS build tdispatch.ko for the 6.1 and 6.12 headers,
# and print the path of the 6.12 one, which the 6.12 VM then runs.
set -eu
. "$(dirname "$0")/lib.sh"

ver=$(cat "$TD_TOP/VERSION")
deb=$("$TD_TOP/scripts/dkms-deb.sh")
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
td_log "dkms: installing $(basename "$deb")"
$sudo env TDISPATCH_DKMS_NO_INSTALL=1 dpkg -i "$deb" >&2 || td_die "dpkg -i $deb failed"
[ -f "/usr/src/tdispatch-$ver/dkms.conf" ] || td_die "the package left no /usr/src/tdispatch-$ver"
for k in 6.1 6.12; do
	td_kernel "$k"
	kver=${td_kimg#/boot/vmlinuz-}
	td_log "dkms: building tdispatch $ver for $kver"
	$sudo dkms build -m tdispatch -v "$ver" -k "$kver" --force >"$TD_BUILD/dkms-$k.log" 2>&1 || {
		cat "$TD_BUILD/dkms-$k.log" >&2
		cat "/var/lib/dkms/tdispatch/$ver/build/make.log" >&2 2>/dev/null || true
		td_die "DKMS could not build tdispatch for $kver"
	}
	ko=$(ls "/var/lib/dkms/tdispatch/$ver/$kver/x86_64/module/"tdispatch.ko* 2>/dev/null | head -n 1)
	[ -n "$ko" ] || td_die "DKMS built no tdispatch.ko for $kver"
	case "$ko" in
	*.xz) xz -dc "$ko" >"$TD_BUILD/dkms-$k.ko" ;;
	*.zst) zstd -dqc "$ko" >"$TD_BUILD/dkms-$k.ko" ;;
	*) cp "$ko" "$TD_BUILD/dkms-$k.ko" ;;
	esac
	modinfo -F version "$TD_BUILD/dkms-$k.ko" | grep -qx "$ver" ||
		td_die "the DKMS module for $kver is not version $ver"
done
echo "$TD_BUILD/dkms-6.12.ko"
