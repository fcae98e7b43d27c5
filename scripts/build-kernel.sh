#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build a test kernel from linux-source-6.12 and print its build directory.
#   build-kernel.sh          the debug kernel: tinyconfig + scripts/debug.config
#   build-kernel.sh intree   the same with the in-tree series applied and
#                            scripts/intree.config on top (tdispatch built
#                            in, KUnit too), and its kselftests built and
#                            installed, through the kernel's own Makefiles,
#                            in <build directory>/kselftest
#   build-kernel.sh lw-mainline, lw-tdispatch
#                            the link watch benchmark's pair: no debug
#                            options (scripts/linkwatch.config), tdispatch
#                            built in; the series' first patch alone, or
#                            the whole series (the link watch converted)
# The result is cached under $TD_CACHE keyed by the fragments' hash and
# the source version, so a fresh clone reuses it.  A kernel with the
# series keeps its patched tree beside it, and a new series is built in
# both in place (td_patched_tree()): only what changed recompiles.
set -eu
. "$(dirname "$0")/lib.sh"

kind=${1:-debug}
frag=$TD_TOP/scripts/debug.config
ver=$(td_src_version)
src=$(td_src_tree)
case $kind in
debug)
	key=$(sha256sum "$frag" | cut -c1-12)
	out=$TD_CACHE/kernel-$ver-$key
	;;
intree)
	series=$TD_BUILD/intree/series
	rm -rf "$series"
	python3 "$TD_TOP/scripts/patches.py" "$src" "$series" >&2 ||
		td_die "cannot generate the series"
	cat "$frag" "$TD_TOP/scripts/intree.config" >"$TD_BUILD/intree/config"
	frag=$TD_BUILD/intree/config
	key=$(sha256sum <"$frag" | cut -c1-12)
	out=$TD_CACHE/intree-$ver-$key
	;;
lw-mainline | lw-tdispatch)
	series=$TD_BUILD/$kind/series
	rm -rf "$series"
	python3 "$TD_TOP/scripts/patches.py" "$src" "$series" >&2 ||
		td_die "cannot generate the series"
	# The mainline link watch: the conversion's patch left out.
	[ "$kind" = lw-tdispatch ] || rm "$series"/0002-*.patch
	frag=$TD_TOP/scripts/linkwatch.config
	key=$(sha256sum <"$frag" | cut -c1-12)
	out=$TD_CACHE/$kind-$ver-$key
	;;
*)
	td_die "build-kernel.sh: unknown kernel '$kind' (debug, intree, lw-mainline or lw-tdispatch)"
	;;
esac

mkdir -p "$TD_CACHE"
exec 9>"$TD_CACHE/.kernel.lock"
flock 9

# What .built says it was built from: for a kernel with the series, the
# series' hash; for the debug kernel, nothing.
built=
[ "$kind" = debug ] || built=$(td_series_key "$series")
if [ -e "$out/.built" ] && [ "$(cat "$out/.built")" = "$built" ]; then
	printf '%s\n' "$out"
	exit 0
fi

case $kind in
intree | lw-*)
	# Built before for another series: in place, in the same tree.
	rm -f "$out/.built"
	td_build_begin "$out" "$out.src"
	td_patched_tree "$series" "$out.src"
	src=$out.src
	;;
*)
	rm -rf "$out"
	;;
esac
mkdir -p "$out"
td_log "building $kind kernel $ver ($key${built:+, series $built}) in $out"
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
[ "$missing" = 0 ] || td_die "$kind kernel config is incomplete"

make -s -C "$src" O="$out" ARCH=x86_64 -j"$(nproc)" >&2
if [ "$kind" = intree ]; then
	# The kselftests as the kernel builds them: lib.mk, the tree's UAPI
	# headers, static for the VM's busybox root.
	make -s -C "$src" O="$out" ARCH=x86_64 headers >&2
	rm -rf "$out/kselftest"
	make -s -C "$src/tools/testing/selftests" TARGETS=tdispatch clean >&2
	make -s -C "$src/tools/testing/selftests" TARGETS=tdispatch \
		KHDR_INCLUDES="-isystem $out/usr/include" USERCFLAGS=-Werror \
		USERLDFLAGS=-static KSFT_INSTALL_PATH="$out/kselftest" install >&2 ||
		td_die "the in-tree kselftests failed to build"
fi
rm -f "$out/.building"
echo "$built" >"$out/.built"
td_log "$kind kernel built in $(( $(date +%s) - start ))s"
# Kernels built from an older fragment are dead weight (gigabytes each).
prefix=kernel
[ "$kind" = debug ] || prefix=$kind
for old in "$TD_CACHE/$prefix"-*; do
	case $old in
	"$out" | "$out".*) ;;
	*) rm -rf "$old" ;;
	esac
done
printf '%s\n' "$out"
