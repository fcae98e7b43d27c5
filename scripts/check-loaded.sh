#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check-loaded: make check RUNS times in a row (default 3) while a CPU
# hog runs beside it (default "stress-ng --cpu 1", one of the machine's
# cores busy), as a busy build machine would be.  Prints each run's
# verdict, each kernel's VM wall time and the VM retries; fails if any run
# failed.  The variables of make check (KERNELS, LINT, VM_STALL, VM_TCG)
# pass through.
set -eu
. "$(dirname "$0")/lib.sh"

runs=${RUNS:-3}
load=${LOAD:-stress-ng --cpu 1 --quiet}
"$TD_TOP/scripts/deps.sh"
out=$TD_BUILD/loaded
rm -rf "$out" && mkdir -p "$out"

# shellcheck disable=SC2086 # the command is words
setsid $load >"$out/load.log" 2>&1 &
hog=$!
trap 'kill -- -$hog 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
td_log "load beside the runs: $load (pid $hog)"

status=0
i=1
while [ "$i" -le "$runs" ]; do
	td_log "run $i of $runs"
	rc=0
	"$TD_TOP/scripts/check.sh" >"$out/run$i.log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || status=1
	{
		verdict=ok
		[ "$rc" = 0 ] || verdict=FAILED
		echo "run $i: $verdict; $(tail -n 1 "$out/run$i.log");" \
			"$(grep -m1 '^VM retries' "$out/run$i.log" || echo 'no VM retries line')"
		sed -n 's/^== tdispatch check summary (\(.*\)) ==$/  wall time \1/p' "$out/run$i.log"
		grep -E '^  [^ ]+: (VM ran|VM STALLED)' "$out/run$i.log" || true
	} >>"$out/summary"
	i=$((i + 1))
done
kill -- -"$hog" 2>/dev/null || true

echo
echo "== tdispatch check under load: $runs runs beside '$load' =="
cat "$out/summary"
echo "logs: $out/run*.log"
[ "$status" = 0 ]
