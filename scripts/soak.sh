#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make soak: the fuzzer run after run, each run a VM of its own with a seed
# of its own, until every kernel has had its share of calls; every run is
# judged as make fuzz judges one (any kernel report fails it), and every
# console log is kept.  Not part of make check.
#   SOAK="6.1:10000000 6.12:10000000 debug:500000"
#              kernel:calls, the calls a kernel gets over all its runs
#   SOAK_RUN=2000000   calls a run (debug: a tenth of it)
#   SOAK_SEED=n        the first run's seed (default: the time); each run
#                      after it takes the next
#   SOAK_DIR=build/soak where the runs' logs and summary go (appended to)
# The runs take turns at the emulator's threading and CPU model (single-
# and multi-threaded TCG; QEMU's default CPU and -cpu max), so a fault
# that follows the emulator's configuration rather than the seed shows.
set -eu
. "$(dirname "$0")/lib.sh"

plan=${SOAK:-6.1:10000000 6.12:10000000 debug:500000}
chunk=${SOAK_RUN:-2000000}
seed=${SOAK_SEED:-$(date +%s)}
dir=${SOAK_DIR:-$TD_BUILD/soak}
mkdir -p "$dir"
sum=$dir/summary
n=0

for kc in $plan; do
	k=${kc%%:*} want=${kc#*:} got=0
	run=$chunk
	[ "$k" = debug ] && run=$((chunk / 10))
	while [ "$got" -lt "$want" ]; do
		calls=$((want - got < run ? want - got : run))
		case $((n % 4)) in
		0) tcg=single cpu= ;;
		1) tcg=multi cpu= ;;
		2) tcg=single cpu=max ;;
		3) tcg=multi cpu=max ;;
		esac
		verdict=ok
		VM_TCG=$tcg VM_CPU=$cpu KERNEL=$k SEED=$seed CALLS=$calls \
			"$TD_TOP/scripts/fuzz.sh" >"$dir/last.out" 2>&1 || verdict=FAILED
		log=$dir/$k-$seed
		rm -rf "$log" && cp -r "$TD_BUILD/fuzz-$k/log" "$log"
		cp "$dir/last.out" "$log/fuzz.out"
		made=$(sed -n 's/.*ok 1 fuzz # seed=[0-9]* calls=\([0-9]*\).*/\1/p' \
			"$log/results.log" | tr -d '\r' | head -n 1)
		made=${made:-0}
		# A run that made no calls (a VM that never came up) adds none.
		got=$((got + made))
		line="$(date -u +%FT%TZ) kernel=$k seed=$seed tcg=$tcg cpu=${cpu:-default} calls=$made $verdict log=$log"
		printf '%s\n' "$line" | tee -a "$sum"
		[ "$verdict" = ok ] || grep -v '^  ' "$dir/last.out" | tail -n 15 >&2
		[ "$made" -gt 0 ] || [ "$verdict" = ok ] || td_die "run made no calls: $log"
		seed=$((seed + 1)) n=$((n + 1))
	done
done
awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
       calls[f["kernel"]] += f["calls"]; runs[f["kernel"]]++
       if ($0 ~ / FAILED /) bad[f["kernel"]]++ }
     END { for (k in calls) printf "soak total %s: %d calls in %d runs, %d failed\n",
                                   k, calls[k], runs[k], bad[k] }' "$sum"
! grep -q ' FAILED ' "$sum"
