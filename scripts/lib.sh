# SPDX-License-Identifier: GPL-2.0
# Shared settings for the tdispatch harness scripts; sourced, not run.

TD_TOP=$(cd "$(dirname "$0")/.." && pwd)
TD_CACHE=${TD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tdispatch}
TD_BUILD=${TD_BUILD:-$TD_TOP/build}
TD_SRC_PKG=linux-source-6.12
TD_SRC_TAR=/usr/src/linux-source-6.12.tar.xz

td_log() { printf '%s\n' "tdispatch: $*" >&2; }
td_die() { td_log "error: $*"; exit 1; }

# Version of the installed kernel source package; part of every cache key.
td_src_version() {
	dpkg-query -W -f='${Version}' "$TD_SRC_PKG" 2>/dev/null ||
		td_die "$TD_SRC_PKG is not installed (run scripts/deps.sh)"
}

# Extract linux-source once per package version; print the tree's path.
td_src_tree() {
	ver=$(td_src_version) || exit 1
	dir=$TD_CACHE/src-$ver
	if [ ! -e "$dir/.extracted" ]; then
		td_log "extracting $TD_SRC_TAR into $dir"
		rm -rf "$dir" && mkdir -p "$dir" || exit 1
		tar -xJf "$TD_SRC_TAR" -C "$dir" --strip-components=1 ||
			td_die "cannot extract $TD_SRC_TAR"
		touch "$dir/.extracted"
	fi
	printf '%s\n' "$dir"
}

# $2: a tree of links to the extracted linux-source with the series in
# folder $1 applied.  What the series changes is copied first, so that
# applying it leaves the extracted source alone.  A tree made before for
# another series is brought to this one in place: only the files either
# series changes are rewritten, and only those whose content differs, so
# that a build in it recompiles what changed (make sees their new times)
# and no more.  $2.files lists the files of the series it holds.  The
# caller rebuilds from nothing after a build that was killed
# (td_build_begin()).
td_patched_tree() {
	# Names of their own: the callers keep series, tree and src.
	_pt_series=$1 _pt_tree=$2
	_pt_src=$(td_src_tree) || exit 1
	grep -h -e '^+++ b/' -e '^--- a/' "$_pt_series"/*.patch | cut -c7- | sort -u \
		>"$_pt_tree.files.new"
	if [ -d "$_pt_tree" ] && [ -e "$_pt_tree.files" ]; then
		td_tree_of_series "$_pt_series" "$_pt_tree.next" "$_pt_src" "$_pt_tree.files.new"
		# Both lists first: an update cut short is redone in full.
		sort -u "$_pt_tree.files" "$_pt_tree.files.new" >"$_pt_tree.files.both"
		mv "$_pt_tree.files.both" "$_pt_tree.files"
		while read -r f; do
			if [ ! -e "$_pt_tree.next/$f" ]; then
				rm -f "$_pt_tree/$f"
			elif ! cmp -s "$_pt_tree.next/$f" "$_pt_tree/$f"; then
				mkdir -p "$(dirname "$_pt_tree/$f")"
				cp --remove-destination "$_pt_tree.next/$f" "$_pt_tree/$f"
			fi
		done <"$_pt_tree.files"
		rm -rf "$_pt_tree.next"
	else
		rm -f "$_pt_tree.files"
		td_tree_of_series "$_pt_series" "$_pt_tree" "$_pt_src" "$_pt_tree.files.new"
	fi
	mv "$_pt_tree.files.new" "$_pt_tree.files"
}

# Begin a build in place in objects $1 with its patched tree $2, or, if
# the last build there was killed (a .o written without its .cmd would
# pass for built), remove both to begin from nothing.  The mark is taken
# away when the script exits by itself, failed or not.
td_build_begin() {
	if [ -e "$1/.building" ] || [ ! -e "$1/.config" ] || [ ! -d "$2" ] ||
		[ ! -e "$2.files" ]; then
		rm -rf "$1" "$2" "$2.files"
	fi
	mkdir -p "$1"
	touch "$1/.building"
	# shellcheck disable=SC2064 # $1 now, not at exit
	trap "rm -f '$1/.building'" EXIT
}

# td_patched_tree()'s fresh tree: $2 from source $3, the series in $1
# applied, $4 the files it changes.
td_tree_of_series() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	cp -al "$3" "$2"
	while read -r f; do
		[ ! -e "$3/$f" ] || cp --remove-destination "$3/$f" "$2/$f"
	done <"$4"
	(cd "$2" && git apply "$1"/*.patch) || td_die "the series does not apply"
}

# The in-tree series' hash, for cache keys: what its patches change, not
# their dates or messages.
td_series_key() {
	for p in "$1"/*.patch; do
		sed -n '/^diff --git /,$p' "$p"
	done | sha256sum | cut -c1-12
}

# Did the VM booted from kernel image $1 (log directory $2) die before its
# /init ran: a panic on the console and no TD-VM-START from init?  Only on
# a kernel without tdispatch built in, where nothing of ours had run yet:
# the emulator's fault, as the early-boot double faults under TCG with an
# RFLAGS no CPU pushes (Documentation, "Testing").
td_died_before_init() {
	case $1 in */intree-*) return 1 ;; esac
	! grep -q '^TD-VM-START' "$2/results.log" 2>/dev/null &&
		grep -qE 'Kernel panic|Oops' "$2/console.log" 2>/dev/null
}

# Resolve a test kernel by name (6.1, 6.12, rt, debug or intree): sets
# td_kimg to the image to boot and td_kdir to the tree to build modules
# against (for intree, the build directory, with the kselftests in it).
td_kernel() {
	case "$1" in
	debug | intree | lw-mainline | lw-tdispatch)
		td_kdir=$("$TD_TOP/scripts/build-kernel.sh" "$1") || exit 1
		td_kimg=$td_kdir/arch/x86/boot/bzImage
		;;
	6.1 | 6.12)
		td_kimg=$(ls -d /boot/vmlinuz-"$1".[0-9]*-cloud-amd64 2>/dev/null | sort -V | tail -n 1)
		[ -n "$td_kimg" ] || td_die "no Debian $1 cloud kernel in /boot (run scripts/deps.sh)"
		td_kdir=/usr/src/linux-headers-${td_kimg#/boot/vmlinuz-}
		[ -d "$td_kdir" ] || td_die "$td_kdir missing (run scripts/deps.sh)"
		;;
	rt)
		# Debian's PREEMPT_RT 6.12: spinlocks sleep, interrupts are
		# threads.  deps.sh unpacks its image into the cache.
		td_kimg=$(ls -d "$TD_CACHE"/rt-*/boot/vmlinuz-6.12.[0-9]*-rt-amd64 2>/dev/null |
			sort -V | tail -n 1)
		[ -n "$td_kimg" ] || td_die "no Debian 6.12 rt kernel in $TD_CACHE (run scripts/deps.sh)"
		td_kdir=/usr/src/linux-headers-${td_kimg##*/vmlinuz-}
		[ -d "$td_kdir" ] || td_die "$td_kdir missing (run scripts/deps.sh)"
		;;
	*)
		td_die "unknown kernel '$1' (use 6.1, 6.12, rt, debug or intree)"
		;;
	esac
}

# Build tdispatch.ko and its test modules against $1 in a private copy of
# the sources under $2 (so several kernels can be built side by side),
# collecting the modules in $2/mod.  Extra arguments go to kbuild.  Fails
# on any compiler warning.
td_build_modules() {
	kdir=$1 out=$2
	shift 2
	rm -rf "$out/src" "$out/mod"
	mkdir -p "$out/src" "$out/mod"
	cp -r "$TD_TOP/Kbuild" "$TD_TOP/VERSION" "$TD_TOP/module" "$TD_TOP/uapi" "$out/src/"
	# Nothing built in the work tree rides along: a module from a source
	# since renamed would be loaded as if it were a test, and a stale
	# object would be linked or read by layout.sh.
	find "$out/src" \( -name '*.ko' -o -name '*.o' -o -name '.*.cmd' -o -name '*.mod' \
		-o -name '*.mod.c' \) -delete
	if ! make -C "$kdir" M="$out/src" W=1 "$@" >"$out/build.log" 2>&1; then
		cat "$out/build.log" >&2
		td_die "module build against $kdir failed"
	fi
	if grep -E 'warning:|error:' "$out/build.log" >&2; then
		td_die "module build against $kdir has warnings"
	fi
	cp "$out/src/tdispatch.ko" "$out/mod/"
	for sub in test kunit demo testdrv bench; do
		for ko in "$out/src/module/$sub"/*.ko; do
			[ -e "$ko" ] || continue
			mkdir -p "$out/mod/$sub"
			cp "$ko" "$out/mod/$sub/"
		done
	done
}

# Static userspace (selftests and tools) for the initramfs, into $1.
td_build_user() {
	src=$(td_src_tree) || exit 1
	mkdir -p "$1"
	make -s -C "$TD_TOP/selftests" OUTPUT="$1" \
		KSFT_DIR="$src/tools/testing/selftests" LDFLAGS=-static >&2 ||
		td_die "selftests build failed"
	make -s -C "$TD_TOP/tools" OUTPUT="$1" LDFLAGS=-static >&2 ||
		td_die "tools build failed"
	# tdctl's test, a script.
	install -m 0755 "$TD_TOP/tools/tdctl/tdctl_test.sh" "$1/tdctl_test"
	# libtdispatch's objects apart, its test with the others.
	mkdir -p "$1/../lib"
	make -s -C "$TD_TOP/tools/lib/tdispatch" OUTPUT="$1/../lib" TEST_OUTPUT="$1" \
		KSFT_DIR="$src/tools/testing/selftests" LDFLAGS=-static test >&2 ||
		td_die "libtdispatch build failed"
}
