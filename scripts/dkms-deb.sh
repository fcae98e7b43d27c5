#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make dkms-deb: build/tdispatch-dkms_<version>_amd64.deb, a Debian package
# with the source under /usr/src/tdispatch-<version> for DKMS (postinst adds
# it and builds it for the running kernel; TDISPATCH_DKMS_NO_INSTALL=1 in
# the environment of dpkg skips that build), tdctl and its man page, the
# udev rule and libtdispatch.  The version is the VERSION file's.  Prints
# the package's path.
set -eu
. "$(dirname "$0")/lib.sh"

ver=$(cat "$TD_TOP/VERSION")
stage=$TD_BUILD/dkms-deb
src=$stage/usr/src/tdispatch-$ver
deb=$TD_BUILD/tdispatch-dkms_${ver}_amd64.deb
rm -rf "$stage" "$deb"
mkdir -p "$stage/DEBIAN" "$src" "$stage/tools" "$stage/lib"

# The whole source tree, so that make check runs from it too: git's files
# in a checkout, else everything but the build output.
cd "$TD_TOP"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Files deleted but not yet committed are listed too: skip them.
	git ls-files -co --exclude-standard | while IFS= read -r f; do
		[ ! -e "$f" ] || printf '%s\0' "$f"
	done | xargs -0 cp --parents -t "$src"
else
	tar --exclude-vcs --exclude=./build --exclude='*.o' --exclude='*.ko' \
		--exclude='*.cmd' --exclude='*.mod' --exclude='*.mod.c' --exclude='*.a' \
		--exclude='*.so*' --exclude=./tools/tdctl/tdctl --exclude=./tools/tdbench \
		--exclude='./selftests/*_test' --exclude=./selftests/tdispatch_fuzz \
		-cf - . | tar -C "$src" -xf -
fi
sed "s/@VERSION@/$ver/" dkms.conf.in >"$src/dkms.conf"

# tdctl, its man page, libtdispatch, the udev rule.
make -s -C tools OUTPUT="$stage/tools" >&2
make -s -C tools install OUTPUT="$stage/tools" DESTDIR="$stage" PREFIX=/usr >&2
gzip -9n "$stage/usr/share/man/man8/tdctl.8"
rm -f "$stage/usr/bin/tdbench"
make -s -C tools/lib/tdispatch install OUTPUT="$stage/lib" DESTDIR="$stage" PREFIX=/usr >&2
rm -rf "$stage/lib" "$stage/tools"
install -D -m 0644 scripts/60-tdispatch.rules "$stage/usr/lib/udev/rules.d/60-tdispatch.rules"

cat >"$stage/DEBIAN/control" <<CONTROL
Package: tdispatch-dkms
Version: $ver
Architecture: amd64
Maintainer: The tdispatch developers <tdispatch@localhost>
Depends: dkms, libc6
Section: kernel
Priority: optional
Description: coalescing work dispatcher: kernel module (DKMS), tdctl, libtdispatch
 tdispatch takes work keyed by an id cheaply from any CPU, keeps only the
 newest task per id, groups pending tasks into batches and hands them to
 workers, retrying failures with back-off.  This package builds the module
 with DKMS and installs tdctl, its man page, libtdispatch and a udev rule.
CONTROL

cat >"$stage/DEBIAN/postinst" <<POSTINST
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
	dkms add -m tdispatch -v $ver >/dev/null 2>&1 || true
	k=\$(uname -r)
	if [ -z "\${TDISPATCH_DKMS_NO_INSTALL:-}" ] && [ -e "/lib/modules/\$k/build" ]; then
		dkms install -m tdispatch -v $ver -k "\$k" ||
			echo "tdispatch: DKMS could not build the module for \$k" >&2
	fi
fi
POSTINST

cat >"$stage/DEBIAN/prerm" <<PRERM
#!/bin/sh
set -e
case "\$1" in
remove | upgrade | deconfigure)
	dkms remove -m tdispatch -v $ver --all >/dev/null 2>&1 || true ;;
esac
PRERM
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm"

dpkg-deb --root-owner-group --build "$stage" "$deb" >&2
echo "$deb"
