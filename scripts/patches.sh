#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make patches: generate the in-tree series (scripts/patches.py) into
# build/patches/, check that every patch applies to linux-source-6.12 (each
# by itself and all together) and passes checkpatch --strict, then build the
# patched tree's tdispatch =y (vmlinux linked, KUnit built in, and the
# kselftests through lib.mk), =y without /dev/tdispatch, =m (tdispatch.ko
# and the KUnit modules through modpost) and =n, from tinyconfig, with
# -Werror.  The builds are cached under $TD_CACHE by the series' hash.
#   PATCHES_BUILD=0   generate and check only
set -eu
. "$(dirname "$0")/lib.sh"

src=$(td_src_tree)
out=$TD_BUILD/patches
series=$out/series

rm -rf "$series"
python3 "$TD_TOP/scripts/patches.py" "$src" "$series" || td_die "cannot generate the series"
n=$(ls "$series"/*.patch | wc -l)
td_log "patches: $n in $series"

for p in "$series"/*.patch; do
	(cd "$src" && git apply --check "$p") || td_die "${p##*/} does not apply to $src"
	(cd "$src" && perl scripts/checkpatch.pl --strict -q "$p") >&2 ||
		td_die "${p##*/}: checkpatch --strict"
done
(cd "$src" && git apply --check "$series"/*.patch) ||
	td_die "the series does not apply to $src as a whole"
td_log "patches: each applies to linux-source $(td_src_version) and passes checkpatch --strict"

[ "${PATCHES_BUILD:-1}" = 1 ] || exit 0

# Cached by the series' hash; a new series is built in place, in the tree
# and objects of the last one (td_patched_tree()), so each build
# recompiles what the change and its config touch.
key=$(td_series_key "$series")
cache=$TD_CACHE/patches-$(td_src_version)
mkdir -p "$TD_CACHE"
exec 9>"$TD_CACHE/.patches.lock"
flock 9
if [ "$(cat "$cache/.built" 2>/dev/null)" = "$key" ]; then
	td_log "patches: built before ($cache, series $key)"
	exit 0
fi
for old in "$TD_CACHE"/patches-*; do
	[ "$old" = "$cache" ] || rm -rf "$old"
done
tree=$cache/linux
obj=$cache/obj
rm -f "$cache/.built"
td_build_begin "$obj" "$tree"
start=$(date +%s)
td_patched_tree "$series" "$tree"

kmake() { make -s -C "$tree" O="$obj" ARCH=x86_64 "$@" >&2; }
# $1: y, m or n for tdispatch and its KUnit tests, with /dev/tdispatch;
# e: y without it.
config() {
	{
		echo "CONFIG_MODULES=y"
		echo "CONFIG_PRINTK=y"
		echo "CONFIG_DEBUG_FS=y"
		echo "CONFIG_KUNIT=y"
		case $1 in
		n) echo "# CONFIG_TDISPATCH is not set" ;;
		e)
			echo "CONFIG_TDISPATCH=y"
			echo "# CONFIG_TDISPATCH_USER is not set"
			echo "CONFIG_TDISPATCH_KUNIT_TEST=y"
			;;
		*)
			echo "CONFIG_TDISPATCH=$1"
			echo "CONFIG_TDISPATCH_USER=y"
			echo "CONFIG_TDISPATCH_KUNIT_TEST=$1"
			;;
		esac
	} >"$cache/frag-$1"
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$cache/frag-$1" >/dev/null
	kmake olddefconfig
	grep -E '^(# )?CONFIG_TDISPATCH' "$obj/.config" >&2 || true
	case $1 in
	n) ! grep -q '^CONFIG_TDISPATCH=' "$obj/.config" ;;
	e) grep -qx "CONFIG_TDISPATCH=y" "$obj/.config" &&
		! grep -q '^CONFIG_TDISPATCH_USER=' "$obj/.config" ;;
	*) grep -qx "CONFIG_TDISPATCH=$1" "$obj/.config" &&
		grep -qx "CONFIG_TDISPATCH_USER=y" "$obj/.config" ;;
	esac || td_die "tinyconfig with tdispatch=$1 is not what was asked"
}

mkdir -p "$obj"
kmake tinyconfig
for v in y e m n; do
	td_log "patches: building tdispatch=$v (e: y without /dev/tdispatch)"
	config "$v"
	# A module of the last series' build would pass for one of this.
	[ "$v" != m ] || find "$obj" -name '*.ko' -delete
	kmake -j"$(nproc)" KCFLAGS=-Werror
	case $v in
	y) for s in tdispatch_submit td_test_add_keeps_order td_chardev_init; do
		grep -q " $s\$" "$obj/System.map" || td_die "tdispatch=y: $s is not in vmlinux"
	done
	kmake headers
	# Built anew: lib.mk does not know they depend on the UAPI headers.
	make -s -C "$tree/tools/testing/selftests" TARGETS=tdispatch clean >&2
	make -s -C "$tree/tools/testing/selftests" TARGETS=tdispatch \
		KHDR_INCLUDES="-isystem $obj/usr/include" USERCFLAGS=-Werror >&2 ||
		td_die "the kselftests do not build in the tree" ;;
	e) grep -q ' tdispatch_submit$' "$obj/System.map" &&
		! grep -q ' td_chardev_init$' "$obj/System.map" ||
		td_die "tdispatch=y without /dev/tdispatch: not what was built" ;;
	m) for k in tdispatch pending_kunit; do
		[ -n "$(find "$obj/lib/tdispatch" -name "$k.ko")" ] || td_die "tdispatch=m: no $k.ko"
	done ;;
	n) ! grep -q ' tdispatch_submit$' "$obj/System.map" ||
		td_die "tdispatch=n: tdispatch_submit is in vmlinux" ;;
	esac
done
rm -f "$obj/.building"
echo "$key" >"$cache/.built"
td_log "patches: tdispatch =y (and its kselftests), =y without the device, =m and =n built in $(( $(date +%s) - start ))s"
