#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot the test VM under QEMU/TCG.
# usage: vm-run.sh KERNEL INITRD MODE [LOGDIR] [TIMEOUT_SECONDS]
#   MODE check|planted|bench|fuzz|intree: console to LOGDIR/console.log, results (ttyS1) to
#        LOGDIR/results.log, no terminal; killed after TIMEOUT_SECONDS.
#   MODE demo|shell: the console is this terminal (Ctrl-A X leaves QEMU).
# QEMU runs with -no-reboot and the VM's init ends with reboot -f, and a
# panic reboots at once, so the VM always exits.
#
# A guest can also stall (TCG on a busy host: an IPI or a timer that never
# comes).  The guest's init prints a heartbeat to the console every few
# seconds; a watchdog here kills the VM when no heartbeat came for
# VM_STALL seconds (default 90) or when the console shows an RCU stall, a
# soft lockup or a hung task, and writes the reason and the console's last
# lines to LOGDIR/stall.  Exit status 3 then: the caller may retry.
set -eu
. "$(dirname "$0")/lib.sh"

kernel=$1 initrd=$2 mode=$3 logdir=${4:-} tmo=${5:-2400}
append="console=ttyS0,115200 panic=-1 oops=panic tdmode=$mode${VM_APPEND:+ $VM_APPEND}"
# A benchmark keeps the TSC as its clock.  Under TCG the clocksource
# watchdog finds the TSC skewed against the emulated HPET (0.1% over
# half a second) a minute or so into a boot and switches to the HPET,
# whose every read is an exit to QEMU's device model under its global
# lock: every ktime_get() after that costs microseconds, and rounds
# before and after the switch measure different machines.  QEMU's TSC
# comes from the host's clock, the same for every vCPU.
case "$mode" in
bench|linkbench) append="$append tsc=reliable" ;;
esac
# VM_TCG=single|multi: TCG's threading.  Single (the default) runs both
# vCPUs in turns on one host thread: no vCPU waits for an IPI from another
# that the host has descheduled (the stall seen in text_poke_bp()), and on
# a busy host it was faster too (Documentation/tdispatch.rst, the harness).
# The benchmarks use multi, for real parallelism.
# VM_CPU: a -cpu model (make soak tries max); QEMU's default otherwise.
# VM_APPEND: more of the kernel's command line (kmemleak=off, to see what a
# debug option costs).
# debug-threads: the vCPUs' host threads are named "CPU <n>/TCG", or "ALL CPUs/TCG"
# for single-threaded TCG (qemu_threads()).
set -- qemu-system-x86_64 -accel "tcg,thread=${VM_TCG:-single}" -smp 2 -m 2G -nodefaults -no-reboot \
	-name tdispatch,debug-threads=on -display none -kernel "$kernel" -initrd "$initrd"
[ -n "${VM_CPU:-}" ] && set -- "$@" -cpu "$VM_CPU"

# QEMU's threads, child of timeout $1: the time now, then a line each, its
# id, its name and, from its schedstat, ns on a host CPU and ns waiting
# for one.  Fails if QEMU is gone (the caller also wants a vCPU's line).
qemu_threads() {
	p=$(pgrep -P "$1" | head -n 1)
	[ -n "$p" ] || return 1
	date +%s.%N
	for t in /proc/"$p"/task/*; do
		read -r comm <"$t/comm" && read -r ran waited _ <"$t/schedstat" &&
			printf '%s %s %s %s\n' "${t##*/}" "$(echo "$comm" | tr ' ' _)" "$ran" "$waited"
	done 2>/dev/null | grep . || return 1
}

# Between the first and last looks: each busy thread's share of the time
# on a host CPU and waiting for one.  With more busy threads than host
# CPUs (two vCPUs and QEMU's main loop on a 2-CPU host), a vCPU that
# waits is a guest CPU stopped wherever it was, a worker mid-batch too.
host_share() {
	[ -s "$1/host-first" ] && [ -s "$1/host-last" ] || return 0
	awk 'FNR == 1 { t[FILENAME] = $1; next }
	     FILENAME == ARGV[1] { r[$1] = $3; w[$1] = $4; next }
	     { span = t[ARGV[2]] - t[ARGV[1]]; if (span <= 0) next
		# A thread begun since the first look counts from its start.
		ran = ($3 - r[$1]) / 1e7 / span; wait = ($4 - w[$1]) / 1e7 / span
		if (ran >= 1 || wait >= 1) {
			if ($2 ~ /\/TCG$/)
				gsub(/_/, " ", $2)
			s = s sprintf("%s%s ran %.0f%% and waited %.0f%%", s == "" ? "" : ", ", $2, ran, wait)
		}
	     }
	     END { if (s != "") printf "host, over %.0f s: %s of the time for a host CPU\n", span, s }' \
		"$1/host-first" "$1/host-last"
}

case "$mode" in
check|planted|bench|fuzz|intree|linkbench)
	mkdir -p "$logdir"
	rm -f "$logdir/console.log" "$logdir/results.log" "$logdir/stall" \
		"$logdir/host-first" "$logdir/host-last" "$logdir/host"
	start=$(date +%s)
	stall=${VM_STALL:-90}
	timeout -k 10 "$tmo" "$@" -append "$append" \
		-serial "file:$logdir/console.log" \
		-serial "file:$logdir/results.log" </dev/null &
	qemu=$!
	reason=
	last=$start seen=
	while kill -0 "$qemu" 2>/dev/null; do
		sleep 2
		if qemu_threads "$qemu" >"$logdir/host-now" &&
			grep -q '^[0-9]* [^ ]*/TCG ' "$logdir/host-now"; then
			[ -s "$logdir/host-first" ] || cp "$logdir/host-now" "$logdir/host-first" || :
			mv "$logdir/host-now" "$logdir/host-last" || :
		fi
		now=$(date +%s)
		beat=$(grep -c '^TD-HEARTBEAT' "$logdir/console.log" 2>/dev/null || true)
		if [ "$beat" != "$seen" ]; then
			seen=$beat last=$now
		elif [ $((now - last)) -ge "$stall" ]; then
			reason="no heartbeat from the guest for $((now - last))s"
		fi
		if grep -qE 'rcu: INFO: rcu_.* detected stalls|rcu_.* self-detected stall|soft lockup - CPU|INFO: task .* blocked for more than' \
			"$logdir/console.log" 2>/dev/null; then
			# Give the report a moment to reach the log whole.
			sleep 5
			reason=$(grep -m1 -E 'detected stall|soft lockup|blocked for more than' \
				"$logdir/console.log" | sed 's/^\[[ 0-9.]*\] //')
		fi
		if [ -n "$reason" ]; then
			kill "$qemu" 2>/dev/null
			{
				echo "VM stalled after $((now - start))s: $reason"
				echo "last console lines:"
				tail -n 20 "$logdir/console.log" | sed 's/^/  /'
			} >"$logdir/stall"
			break
		fi
	done
	rc=0
	wait "$qemu" || rc=$?
	echo "$(( $(date +%s) - start ))" >"$logdir/seconds"
	rm -f "$logdir/host-now"
	host_share "$logdir" >"$logdir/host"
	# The longest the guest went between heartbeats (5 s apart when it
	# runs freely): how much the host starved it.
	awk '/^TD-HEARTBEAT/ { if (last != "" && $2 - last > gap) gap = $2 - last; last = $2 }
	     END { printf "%.1f\n", gap }' "$logdir/console.log" >"$logdir/heartbeat-gap"
	if [ -n "$reason" ]; then
		td_log "VM killed: $reason"
		exit 3
	fi
	[ "$rc" = 124 ] && td_log "VM killed after ${tmo}s timeout"
	exit "$rc"
	;;
demo)
	exec "$@" -append "$append quiet" -serial stdio -serial null
	;;
*)
	exec "$@" -append "$append" -serial mon:stdio -serial null
	;;
esac
