#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The module's layout has no circles: no file calls, directly or through
# others, back into a file that calls it, and no header includes itself
# through others.  Calls are read from the objects of a build (a symbol
# one object leaves undefined and another defines); a static inline is
# compiled into each object that uses it, so its calls count as that
# file's.
#
#   scripts/layout.sh OBJDIR [SRCDIR]
#       OBJDIR/module/*.o from a build of the module; SRCDIR the sources
#       whose #include "..." lines are read (default: module/)
#
# Prints the calls as "caller callee" lines on request (LAYOUT_SHOW=1) and
# fails naming the files of a circle.
set -eu
. "$(dirname "$0")/lib.sh"

objdir=${1:?usage: layout.sh OBJDIR [SRCDIR]}
srcdir=${2:-$TD_TOP/module}
cd "$objdir/module"
ls ./*.o >/dev/null 2>&1 || td_die "layout: no objects in $objdir/module"

defs=$(mktemp)
calls=$(mktemp)
trap 'rm -f "$defs" "$calls"' EXIT
for o in *.o; do
	nm --defined-only "$o" | awk -v f="${o%.o}" '$2 ~ /^[TDBR]$/ { print $3, f }'
done | sort -k1,1 >"$defs"
for o in *.o; do
	nm -u "$o" | awk -v f="${o%.o}" '{ print $2, f }'
done | sort -k1,1 | join - "$defs" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$calls"

[ "${LAYOUT_SHOW:-0}" = 0 ] || cat "$calls"
fail=0
if ! tsort "$calls" >/dev/null 2>"$calls.err"; then
	sed 's/^tsort: [^:]*: /layout: /' "$calls.err" >&2
	td_log "layout: the module's files call each other in a circle"
	fail=1
fi
rm -f "$calls.err"

# Headers: "file included" pairs among module/
cd "$srcdir"
includes=$(grep -H '^#include "' ./*.c ./*.h 2>/dev/null |
	sed 's|^\./\([^:]*\):#include "\([^"]*\)".*|\1 \2|')
if ! printf '%s\n' "$includes" | tsort >/dev/null 2>&1; then
	td_log "layout: the module's headers include each other in a circle"
	fail=1
fi
[ "$fail" = 0 ] || exit 1
td_log "layout: no call or include circles among $(ls "$objdir"/module/*.o | wc -l) objects"
