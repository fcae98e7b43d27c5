#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tdctl's own test: the task life cycle as a user types it, against the
# module.  make check runs it in the VM as /tests/tdctl_test (root, module
# loaded); KTAP on stdout.
#
# Inside "tdctl create" (which hands the dispatcher down in TDISPATCH_FD)
# it runs itself again with "inner".
set -u

if [ "${1:-}" != inner ]; then
	echo "KTAP version 1"
	echo "1..12"
	tdctl create --name tdctltest --max-batch 3 --max-delay-ms 200 --workers 1 \
		--max-delayed 64 --events 256 -- "$0" inner
	exit $?
fi

n=0 failed=0
# expect WHAT GOT WANT
expect() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		echo "# got '$2', want '$3'"
		failed=1
	fi
}
stat() { tdctl stats | awk -v k="$1" '$1 == k { print $2 }'; }

v=$(tdctl version)
expect "version: tdctl and the module are one version" \
	"$(echo "$v" | awk '/^tdctl_version:/ { print $2 }')" \
	"$(echo "$v" | awk '/^module_version:/ { print $2 }')"

# One batch of three; the worker script gives task 2 a verdict of its own.
printf '1 a\n2 b\n3 c\n' | tdctl submit - >/dev/null
tdctl work --count 1 --exec 'cat >/dev/null; echo "2 permanent" >"$TDISPATCH_RESULTS"' \
	2>/dev/null
expect "work: a per-task verdict from the script" "$(stat done)/$(stat failed)" "2/1"

# A task allowed one attempt, retried by its worker: exhausted.
tdctl submit --max-attempts 1 4 d >/dev/null
tdctl work --count 1 --exec 'cat >/dev/null; exit 75' 2>/dev/null
expect "submit --max-attempts 1: exhausted after one transient" "$(stat exhausted)" 1

# Delayed an hour: two watch key 7, one does not; then expedite by key and id.
tdctl submit --delay-ms 3600000 --watch 7 5 e 6 f >/dev/null
tdctl submit --delay-ms 3600000 8 h >/dev/null
# Queued until the acceptor drains them, delayed after: three either way.
expect "submit --watch: three delayed" "$(($(stat queued) + $(stat delayed)))" 3
expect "expedite --key 7 lets both in" "$(tdctl expedite --key 7)" \
	"expedited 2 delayed tasks watching key 7"
expect "expedite 8" "$(tdctl expedite 8)" "expedited delayed task 8"
tdctl expedite 8 2>/dev/null
expect "expedite of an id no longer delayed fails" "$?" 1
# One batch if the three came within the 200 ms window, else two (each
# tdctl a process of its own, slow on a debug kernel under TCG).
for i in 1 2; do
	tdctl work --count 1 --exec 'cat >/dev/null' 2>/dev/null
	[ "$(stat done)" -ge 5 ] && break
done
expect "expedited tasks were processed" "$(stat done)/$(stat expedited)" "5/3"

# Three merges of one id before a worker takes it: one task, the last payload.
for p in x y z; do
	tdctl submit --merge 9 "$p" >/dev/null
done
expect "submit --merge: merged into the waiting task" "$(stat overridden)" 2
out=$(mktemp)
tdctl work --count 1 --exec "cat >$out" 2>/dev/null
expect "the worker saw the newest payload only" "$(cat "$out")" "9 z"
rm -f "$out"

# A thousand writes to four shared slots, one task each, the newest payloads.
expect "submit --slots: written once each, queued once each" \
	"$(seq 0 999 | awk '{ print $1 % 4, "v" $1 }' | tdctl submit --slots 64 -)" \
	"written 1000, queued 4, rejected 0"
tdctl work --count 1 --exec "sort >$out" 2>/dev/null
tdctl work --count 1 --exec "sort >>$out" 2>/dev/null
expect "the worker saw each slot's newest write" "$(tr '\n' ' ' <"$out")" \
	"0 v996 1 v997 2 v998 3 v999 "
rm -f "$out"

exit $failed
