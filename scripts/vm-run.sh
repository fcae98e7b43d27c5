#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Boot the test VM under QEMU/TCG.
# usage: vm-run.sh KERNEL INITRD MODE [LOGDIR] [TIMEOUT_SECONDS]
#   MODE check|planted|bench: console to LOGDIR/console.log, results (ttyS1) to
#        LOGDIR/results.log, no terminal; killed after TIMEOUT_SECONDS.
#   MODE demo|shell: the console is this terminal (Ctrl-A X leaves QEMU).
# QEMU runs with -no-reboot and the VM's init ends with reboot -f, and a
# panic reboots at once, so the VM always exits.
set -eu
. "$(dirname "$0")/lib.sh"

kernel=$1 initrd=$2 mode=$3 logdir=${4:-} tmo=${5:-900}
append="console=ttyS0,115200 panic=-1 oops=panic tdmode=$mode"
set -- qemu-system-x86_64 -accel tcg -smp 2 -m 2G -nodefaults -no-reboot \
	-display none -kernel "$kernel" -initrd "$initrd"

case "$mode" in
check|planted|bench)
	mkdir -p "$logdir"
	rm -f "$logdir/console.log" "$logdir/results.log"
	start=$(date +%s)
	rc=0
	timeout -k 10 "$tmo" "$@" -append "$append" \
		-serial "file:$logdir/console.log" \
		-serial "file:$logdir/results.log" </dev/null || rc=$?
	echo "$(( $(date +%s) - start ))" >"$logdir/seconds"
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
