#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench: build the modules, boot a VM that loads each benchmark module
# (module/bench/) in turn, print their results and judge the kernel log as
# make check does, so that a benchmark that warns or leaks fails.
#   BENCH_KERNEL=6.12   which kernel (6.1, 6.12, rt or debug)
#   BENCH_ARGS="reps=1 max_tasks=100000"   module parameters, e.g. to make
#                       the debug kernel's run shorter
#   TDBENCH_ARGS="5"    tdbench's arguments: rounds (11), tasks (65536)
#   TDFRESH_ARGS="3"    tdfresh's arguments: rounds (5)
#   BENCH_ONLY="td_timer_bench"   only these benchmarks: module names, or
#                       tdbench and tdfresh (the userspace ones)
#   BENCH_BEFORE=<git revision>   also compare tdbench against tdispatch.ko as
#                       built from that revision, in the same boot: the two
#                       modules are loaded in turn, BENCH_AB_ROUNDS (5) times
#                       each, one tdbench round per load, and the medians of
#                       each BENCH user line are compared
#   BENCH_PERF=1        each benchmark module loads (each tool runs) under
#                       "perf record -a"
#                       (the host's perf, package linux-perf, copied into the
#                       VM) and perf report's flat profile of the symbols
#                       follows its results: where the time goes, with only=
#                       to pick a variant; never a figure to quote, since
#                       sampling costs CPU of its own
#   BENCH_TRACE=1       benchmark modules load with the scheduler's switches
#                       and the workqueue's events traced, and
#                       scripts/bench-trace.awk says how long the CPUs spent
#                       in each state (idle, producers, tdispatch's works
#                       running or queued): with td_engine_bench's
#                       trace_runs=1 (BENCH_ARGS), only its runs (to the
#                       end of each drain) are traced; for finding where a
#                       run's time goes, not for figures
#   VM_TIMEOUT=1800     seconds before the VM counts as hung
set -eu
. "$(dirname "$0")/lib.sh"

k=${BENCH_KERNEL:-6.12}
tmo=${VM_TIMEOUT:-1800}

td_kernel "$k"
out=$TD_BUILD/bench-$k
td_log "bench $k: building modules against $td_kdir"
td_build_modules "$td_kdir" "$out"
printf '%s\n' "${BENCH_ARGS:-}" >"$out/mod/bench/args"
printf '%s\n' "${TDBENCH_ARGS:-}" >"$out/mod/tdbench.args"
printf '%s\n' "${TDFRESH_ARGS:-}" >"$out/mod/tdfresh.args"
if [ -n "${BENCH_BEFORE:-}" ]; then
	case " ${BENCH_ONLY:-tdbench} " in
	*" tdbench "*) ;;
	*) td_die "BENCH_BEFORE compares tdbench, which BENCH_ONLY=$BENCH_ONLY leaves out" ;;
	esac
	git -C "$TD_TOP" rev-parse --verify -q "$BENCH_BEFORE^{commit}" >/dev/null ||
		td_die "BENCH_BEFORE=$BENCH_BEFORE: no such revision"
	# tdbench speaks the 1.0 ABI, which came with VERSION 1.0.0.
	case $(git -C "$TD_TOP" show "$BENCH_BEFORE:VERSION" 2>/dev/null) in
	0.* | "") td_die "BENCH_BEFORE=$BENCH_BEFORE: before the 1.0 ABI, which tdbench speaks" ;;
	esac
	# The module alone from that revision: tdbench only sees the ABI.
	before=$(mktemp -d)
	trap 'rm -rf "$before"' EXIT
	git -C "$TD_TOP" archive -o "$before/src.tar" "$BENCH_BEFORE" Kbuild module uapi ||
		td_die "BENCH_BEFORE=$BENCH_BEFORE: cannot export its module"
	tar -xf "$before/src.tar" -C "$before"
	cp "$TD_TOP/VERSION" "$before/"
	td_log "bench $k: building tdispatch.ko of $BENCH_BEFORE"
	(TD_TOP=$before td_build_modules "$td_kdir" "$before/out")
	mkdir -p "$out/mod/before"
	cp "$before/out/mod/tdispatch.ko" "$out/mod/before/"
	printf '%s\n' "${BENCH_AB_ROUNDS:-5}" >"$out/mod/before/rounds"
fi
rm -rf "$out/user"
mkdir -p "$out/user"
if [ -n "${BENCH_ONLY:-}" ]; then
	for m in "$out"/mod/bench/*.ko; do
		case " $BENCH_ONLY " in
		*" $(basename "$m" .ko) "*) ;;
		*) rm -f "$m" ;;
		esac
	done
	case " $BENCH_ONLY " in
	*" tdbench "* | *" tdfresh "*) ;;
	*)
		ls "$out"/mod/bench/*.ko >/dev/null 2>&1 ||
			td_die "BENCH_ONLY=$BENCH_ONLY names no benchmark"
		;;
	esac
fi
# Userspace: tdbench and tdfresh, the benchmarks through /dev/tdispatch.
case " ${BENCH_ONLY:-tdbench tdfresh} " in
*" tdbench "* | *" tdfresh "*)
	make -s -C "$TD_TOP/tools" OUTPUT="$out/user" LDFLAGS=-static >&2 ||
		td_die "tools build failed"
	for u in tdbench tdfresh; do
		case " ${BENCH_ONLY:-tdbench tdfresh} " in
		*" $u "*) ;;
		*) rm -f "$out/user/$u" ;;
		esac
	done
	;;
esac
# tdfresh's redis mode runs Debian's redis-server in the VM: the binary,
# its libraries and the loader go into the initramfs at their own paths.
extra=$out/extra
rm -rf "$extra"
mkdir -p "$extra/bin"
# A host binary $1 into the VM's /bin, with its libraries and loader.
copy_with_libs() {
	cp "$1" "$extra/bin/${1##*/}"
	for lib in $(ldd "$1" | awk '/=> \//{ print $3 } /^[[:space:]]*\//{ print $1 }'); do
		mkdir -p "$extra$(dirname "$lib")"
		cp -L "$lib" "$extra$lib"
	done
}
if [ -e "$out/user/tdfresh" ]; then
	command -v redis-server >/dev/null || {
		apt-get install -y -qq --no-install-recommends redis-server >/dev/null ||
			td_die "cannot install redis-server"
	}
	copy_with_libs "$(command -v redis-server)"
fi
if [ "${BENCH_PERF:-0}" = 1 ]; then
	command -v perf >/dev/null || {
		apt-get install -y -qq --no-install-recommends linux-perf >/dev/null ||
			td_die "BENCH_PERF=1: cannot install linux-perf"
	}
	copy_with_libs "$(command -v perf)"
	touch "$extra/bench-perf"
fi
[ "${BENCH_TRACE:-0}" != 1 ] || cp "$TD_TOP/scripts/bench-trace.awk" "$extra/bench-trace"
"$TD_TOP/scripts/mkinitramfs.sh" "$out/initrd.gz" "$out/mod" "$out/user" "$extra"
td_log "bench $k: booting $td_kimg"
VM_TCG=${VM_TCG:-multi} "$TD_TOP/scripts/vm-run.sh" "$td_kimg" "$out/initrd.gz" bench \
	"$out/log" "$tmo" || true
# A kernel that died before /init ran ran nothing of ours (td_died_before_init):
# once more, said here.
if td_died_before_init "$td_kimg" "$out/log"; then
	td_log "bench $k: the kernel died before /init ($(grep -m1 -E 'Oops|double fault' \
		"$out/log/console.log" | sed 's/^\[[ 0-9.]*\] //')); booting it once more"
	cp "$out/log/console.log" "$out/log/console.died.log"
	VM_TCG=${VM_TCG:-multi} "$TD_TOP/scripts/vm-run.sh" "$td_kimg" "$out/initrd.gz" bench \
		"$out/log" "$tmo" || true
fi

sed -n '/^TD-KSFT-BEGIN/,/^TD-KSFT-END/p; /^TD-PERF-BEGIN/,/^TD-PERF-END/p; /^TD-TRACE/p' \
	"$out/log/results.log" | tr -d '\r' | grep -v '^BENCH[ -]'
echo "  $k: VM ran $(cat "$out/log/seconds")s; console log $out/log/console.log"
# What the host took from the vCPUs: under TCG a waiting vCPU thread is a
# guest CPU stopped, which the figures above include.
[ ! -s "$out/log/host" ] || echo "  $k: $(cat "$out/log/host")"
# A failed benchmark still prints its figures: its # FAIL lines above say
# which run failed, and the exit status says it at the end.
rc=0
"$TD_TOP/scripts/ktap.py" "bench-$k" "$out/log" || rc=$?
# Last, the machine-readable lines of every benchmark (medians).
grep '^BENCH ' "$out/log/results.log" | tr -d '\r' || true
# BENCH_BEFORE: each line's median over the loads of each module, and after/before.
[ -z "${BENCH_BEFORE:-}" ] || grep '^BENCH-AB ' "$out/log/results.log" | tr -d '\r' |
	awk '{ side = $2; v = $NF; sub(/^processed_per_s=/, "", v); $1 = $2 = $NF = "";
	       gsub(/^ +| +$/, ""); print $0 "|" side "|" v }' |
	sort -t'|' -k1,1 -k2,2 -k3,3n |
	awk -F'|' -v rev="$BENCH_BEFORE" '
	function flush() {
		if (n) m[key, side] = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		n = 0
	}
	$1 != key || $2 != side { flush(); if ($1 != key) keys[++nk] = $1; key = $1; side = $2 }
	{ v[++n] = $3 }
	END {
		flush()
		for (i = 1; i <= nk; i++) {
			b = m[keys[i], "before"]; a = m[keys[i], "after"]
			printf "BENCH ab %s before=%.0f after=%.0f ratio=%.3f (before: %s)\n",
				keys[i], b, a, b ? a / b : 0, rev
		}
	}'
exit $rc
