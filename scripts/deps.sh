#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install what building and testing tdispatch needs, from Debian's
# archive; idempotent, prints what it installs.  Needs root (or sudo).
set -eu
. "$(dirname "$0")/lib.sh"

pkgs="make gcc libc6-dev python3 qemu-system-x86 busybox-static cpio gzip xz-utils
	kmod bc flex bison libelf-dev libssl-dev sparse
	linux-image-cloud-amd64 linux-headers-cloud-amd64
	linux-image-6.12-cloud-amd64 linux-headers-6.12-cloud-amd64
	linux-source-6.12 stress-ng"

missing=
for p in $pkgs; do
	s=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	case "$s" in
	ii*) ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
td_log "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
td_log "installed:$missing"
