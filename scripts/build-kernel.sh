#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build the debug kernel (tinyconfig + scripts/debug.config) from
# linux-source-6.12 and print its build directory.  The result is cached
# under $TD_CACHE keyed by the fragment's hash and the source version, so
# a fresh clone reuses it and only a change to either rebuilds.
set -eu
. "$(dirname "$0")/lib.sh"

frag=$TD_TOP/scripts/debug.config
ver=$(td_src_version)
key=$(sha256sum "$frag" | cut -c1-12)
out=$TD_CACHE/kernel-$ver-$key

mkdir -p "$TD_CACHE"
exec 9>"$TD_CACHE/.kernel.lock"
flock 9

if [ -e "$out/.built" ]; then
	printf '%s\n' "$out"
	exit 0
fi

src=$(td_src_tree)
rm -rf "$out"
mkdir -p "$out"
td_log "building debug kernel $ver ($key) in $out"
start=$(date +%s)
make -s -C "$src" O="$out" ARCH=x86_64 tinyconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag" >/dev/null
make -s -C "$src" O="$out" ARCH=x86_64 olddefconfig >&2

# Kconfig silently drops options whose dependencies are missing; refuse a
# kernel that lacks any of the debug features the tests rely on.
missing=0
grep -E '^(CONFIG_[A-Z0-9_]+=.*|# CONFIG_[A-Z0-9_]+ is not set)$' "$frag" |
while IFS= read -r line; do
	if ! grep -qxF "$line" "$out/.config"; then
		td_log "config fragment line not honoured: $line"
		echo x
	fi
done | grep -q x && missing=1
[ "$missing" = 0 ] || td_die "debug kernel config is incomplete"

make -s -C "$src" O="$out" ARCH=x86_64 -j"$(nproc)" >&2
touch "$out/.built"
td_log "debug kernel built in $(( $(date +%s) - start ))s"
# Kernels built from an older fragment are dead weight (gigabytes each).
for old in "$TD_CACHE"/kernel-*; do
	[ "$old" = "$out" ] || rm -rf "$old"
done
printf '%s\n' "$out"
