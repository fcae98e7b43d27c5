#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install what building and testing tdispatch needs, from Debian's
# archive; idempotent, prints what it installs.  Needs root (or sudo).
#   deps.sh        everything make check, bench and fuzz use
#   deps.sh lint   only what make lint uses: a compiler, sparse, the 6.12
#                  headers and linux-source (checkpatch.pl, kernel-doc)
set -eu
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = lint ]; then
	pkgs="make gcc libc6-dev perl python3 sparse xz-utils
		linux-headers-6.12-cloud-amd64 linux-source-6.12"
else
	pkgs="make gcc libc6-dev python3 qemu-system-x86 busybox-static cpio gzip xz-utils
		kmod bc flex bison libelf-dev libssl-dev sparse rsync
		linux-image-cloud-amd64 linux-headers-cloud-amd64
		linux-image-6.12-cloud-amd64 linux-headers-6.12-cloud-amd64
		linux-headers-6.12-rt-amd64
		linux-source-6.12 stress-ng dkms openssl"
fi

missing=
for p in $pkgs; do
	s=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case "$s" in
	ii*) ;;
	*) missing="$missing $p" ;;
	esac
done
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
	td_log "installing:$missing"
	$sudo apt-get update -qq
	# shellcheck disable=SC2086
	$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
	td_log "installed:$missing"
fi

[ "${1:-}" != lint ] || exit 0

# The PREEMPT_RT image, for the rt lane, is unpacked into the cache, not
# installed: installed, it would become this machine's default boot entry.
rt_hdr=$(ls -d /usr/src/linux-headers-6.12.*-rt-amd64 2>/dev/null | sort -V | tail -n 1)
[ -n "$rt_hdr" ] || td_die "no PREEMPT_RT 6.12 headers in /usr/src"
kver=${rt_hdr#/usr/src/linux-headers-}
dir=$TD_CACHE/rt-$kver
if [ ! -e "$dir/boot/vmlinuz-$kver" ]; then
	td_log "fetching linux-image-$kver into $dir"
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -qq "linux-image-$kver" 2>/dev/null) ||
		td_die "apt-get download linux-image-$kver failed"
	mkdir -p "$dir"
	dpkg-deb -x "$tmp"/linux-image-*.deb "$dir"
	rm -rf "$tmp"
	[ -e "$dir/boot/vmlinuz-$kver" ] || td_die "no vmlinuz-$kver in linux-image-$kver"
fi
