#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Static checks, all of which must be silent:
#   checkpatch.pl --strict on every C file and header we own,
#   kernel-doc -Wall on the headers and the module,
#   sparse (C=2) on the module against the 6.12 headers,
#   the UAPI header compiling on its own in userspace,
#   no call or include circles among the module's files (layout.sh),
#   layout.sh still catching a circle of each kind planted for it, and
#   README's library example building and ending without a signal.
set -eu
. "$(dirname "$0")/lib.sh"

# layout.sh on a planted tree: two objects (a calls b; with $1, b calls a)
# and two headers (x.h includes y.h; with $2, y.h includes x.h).
layout_plant() {
	p=$(mktemp -d)
	mkdir "$p/module" "$p/src"
	printf 'void b(void);\nvoid a(void) { b(); }\n' >"$p/a.c"
	printf 'void a(void);\nvoid b(void) { %s }\n' "${1:+a();}" >"$p/b.c"
	printf '#include "y.h"\n' >"$p/src/x.h"
	printf '%s\n' "${2:+#include \"x.h\"}" >"$p/src/y.h"
	cc -c -o "$p/module/a.o" "$p/a.c" && cc -c -o "$p/module/b.o" "$p/b.c"
	r=0
	"$TD_TOP/scripts/layout.sh" "$p" "$p/src" >/dev/null 2>&1 || r=1
	rm -rf "$p"
	return $r
}

src=$(td_src_tree)
cd "$TD_TOP"
fail=0
# Our sources: git's list in a checkout, else (a release tarball, the
# DKMS tree) every C file outside the build output.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files -co --exclude-standard -- '*.c' '*.h')
else
	files=$(for d in module uapi tools selftests; do
		[ ! -d "$d" ] || find "$d" -name '*.[ch]'
	done)
fi
files=$(printf '%s\n' $files | grep -v '\.mod\.c$' | sort)

if ! out=$(perl "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types -f $files 2>&1); then
	printf '%s\n' "$out" | grep -E ': (ERROR|WARNING|CHECK):'
	td_log "lint: checkpatch --strict has findings"
	fail=1
fi

out=$(perl "$src/scripts/kernel-doc" -none -Wall \
	$(printf '%s\n' $files | grep -E '^(uapi|module)/') 2>&1)
if [ -n "$out" ]; then
	printf '%s\n' "$out"
	td_log "lint: kernel-doc has findings"
	fail=1
fi

for std in c89 c11; do
	if ! cc -std=$std -fsyntax-only -Wall -Wextra -Werror -pedantic -Wno-long-long \
			-x c -Iuapi uapi/linux/tdispatch.h; then
		td_log "lint: uapi/linux/tdispatch.h does not compile on its own ($std)"
		fail=1
	fi
done

# README's library example, as a newcomer copies it: it builds, and run
# here (with the module loaded or, as on a build machine, without) it ends
# with its status, never a signal.
ex=$TD_BUILD/readme-example
mkdir -p "$ex"
sed -n '/^## From userspace/,/^## Where things live/p' README.md | sed -n '/^```c$/,/^```$/p' |
	sed '1d;$d' >"$ex/app.c"
if ! make -s -C tools/lib/tdispatch OUTPUT="$ex" >/dev/null ||
		! cc -Wall -Werror -Iuapi -Itools/lib/tdispatch -o "$ex/app" "$ex/app.c" "$ex/libtdispatch.a"; then
	td_log "lint: README's library example does not build"
	fail=1
else
	rc=0
	"$ex/app" 2>"$ex/stderr" || rc=$?
	if [ "$rc" -ge 128 ]; then
		td_log "lint: README's library example died of signal $((rc - 128)): $(cat "$ex/stderr")"
		fail=1
	fi
fi

# The 6.12 headers, which deps.sh lint installs; no image is needed.
kdir=$(ls -d /usr/src/linux-headers-6.12.[0-9]*-cloud-amd64 2>/dev/null | sort -V | tail -n 1)
[ -n "$kdir" ] || td_die "no 6.12 headers in /usr/src (run scripts/deps.sh lint)"
tmp=$TD_BUILD/sparse
if ! td_build_modules "$kdir" "$tmp" C=2 ; then
	fail=1
elif grep -E ': (warning|error):' "$tmp/build.log"; then
	td_log "lint: sparse has findings"
	fail=1
elif ! "$TD_TOP/scripts/layout.sh" "$tmp/src"; then
	fail=1
fi
if ! layout_plant "" "" || layout_plant calls "" || layout_plant "" includes; then
	td_log "lint: layout.sh no longer tells planted circles from none"
	fail=1
fi

[ "$fail" = 0 ] || td_die "lint failed"
td_log "lint: checkpatch, kernel-doc, sparse, the UAPI header and the layout are clean"
