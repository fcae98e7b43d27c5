#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make check: install what is missing, lint, build the debug kernel, then
# for each kernel build the module, boot a VM, run every test and judge the
# kernel log; prove the judge with planted bugs; print the totals.
#   KERNELS="6.1 6.12 rt debug intree"  which kernels to test (default: all
#                             five; rt is Debian's PREEMPT_RT 6.12, intree
#                             the debug kernel with make patches' series
#                             applied and tdispatch built in)
#   VM_TIMEOUT=2400           seconds a VM may run at most (a stalled one is
#                             caught by the heartbeat watchdog long before)
#   VM_STALL=90               seconds without the guest's heartbeat before
#                             the VM counts as stalled (then retried once)
#   VM_TCG=single|multi       TCG threading of the VMs (default single)
#   LINT=0                    skip the static checks (for quick iterations)
#   PATCHES=0                 skip make patches (the in-tree series: checked,
#                             then built =y, =y without the device, =m, =n;
#                             cached)
#   DKMS=0                    skip building and installing the DKMS package
#   TD_DKMS_KO=path           the 6.12 VM runs this tdispatch.ko (the outer
#                             make check sets it for its run from /usr/src)
set -eu
. "$(dirname "$0")/lib.sh"

kernels=${KERNELS:-6.1 6.12 rt debug intree}
tmo=${VM_TIMEOUT:-2400}
# The guests' CPU without CMPXCHG16B: all three kernel deaths seen under
# TCG (QEMU 7.2) came at a cmpxchg16b in SLUB or a per-CPU op, with an
# RFLAGS no CPU pushes (Documentation/tdispatch.rst, "Double faults");
# without the feature the kernel takes its fallbacks (SLUB's slab lock,
# this_cpu_cmpxchg16b_emu).  VM_CPU= sets another model.
VM_CPU=${VM_CPU-qemu64,-cx16}
export VM_CPU
t0=$(date +%s)

# The wall time of each phase, for the summary's "times:" line: what a
# fresh machine's run spends where.
times=
t_mark=$t0
phase() {
	now=$(date +%s)
	times="$times $1 $((now - t_mark))s,"
	t_mark=$now
}

"$TD_TOP/scripts/deps.sh"
phase deps

user=$TD_BUILD/user
td_build_user "$user"
phase tools

summary=$TD_BUILD/summary
: >"$summary"
status=0
total_pass=0 total_fail=0
retries=0

# Boot a VM; a stalled one (exit 3, see vm-run.sh), or one whose kernel
# died before our /init ran (td_died_before_init), is retried once, and the
# retry is reported in the summary and counted; a second stall fails, and
# the judge reads whatever the second run left.
run_vm() {
	name=${1##*/} logdir=$4
	if "$TD_TOP/scripts/vm-run.sh" "$@"; then
		td_died_before_init "$1" "$logdir" || return 0
		{
			echo "  $name: KERNEL DIED BEFORE /init RAN, retried once:"
			grep -m2 -E 'Oops|RIP:' "$logdir/console.log" | sed 's/^\[[ 0-9.]*\] /    /'
		} >>"$summary"
		cp "$logdir/console.log" "$logdir/console.died.log"
	else
		[ -e "$logdir/stall" ] || return 0
		{
			echo "  $name: VM STALLED, retried once:"
			sed 's/^/    /' "$logdir/stall"
		} >>"$summary"
		cp "$logdir/console.log" "$logdir/console.stalled.log" 2>/dev/null || true
	fi
	retries=$((retries + 1))
	"$TD_TOP/scripts/vm-run.sh" "$@" && return 0
	if [ -e "$logdir/stall" ]; then
		echo "  $name: VM STALLED AGAIN: $(head -n 1 "$logdir/stall")" >>"$summary"
		status=1
	fi
}

# The 6.12 lane, run by the make check of the tree the package put under
# /usr/src (not a git checkout, as a release tarball is not) with the
# module DKMS built there; then make demo from that tree.
check_exported() {
	ex=$(realpath -m "$TD_BUILD/export")
	# Nothing of an earlier run may be taken for this one's.
	rm -rf "$ex/summary" "$ex/vm-6.12/log" "$ex/demo.log"
	mkdir -p "$ex"
	td_log "kernel 6.12: make check from $export_top, an exported tree"
	TD_BUILD=$ex KERNELS=6.12 LINT=0 DKMS=0 PATCHES=0 TD_DKMS_KO=$dkms_ko \
		"$export_top/scripts/check.sh" || status=1
	if [ -e "$ex/summary" ]; then
		grep -v -e '^  *6.12: tdispatch.ko as DKMS built it' -e '^times:' "$ex/summary" \
			>>"$summary" || true
		n=$(grep -cE 'VM STALLED, retried|DIED BEFORE /init RAN, retried' "$ex/summary") || n=0
		retries=$((retries + n))
	fi
	echo "  6.12: run from $export_top with tdispatch.ko as DKMS built it" >>"$summary"
	if [ -s "$ex/vm-6.12/log/counts" ]; then
		read -r p f _ <"$ex/vm-6.12/log/counts"
		total_pass=$((total_pass + p))
		total_fail=$((total_fail + f))
	else
		status=1
	fi

	td_log "make demo from $export_top"
	if TD_BUILD=$ex timeout 600 make -s -C "$export_top" demo </dev/null >"$ex/demo.log" 2>&1 &&
	   grep -q '^=== end of demo ===' "$ex/demo.log" &&
	   grep -q 'periodic_runs' "$ex/demo.log"; then
		echo "demo: make demo from $export_top ran to its end ($ex/demo.log)" >>"$summary"
	else
		tail -n 30 "$ex/demo.log" >&2
		echo "demo: FAILED from $export_top (see $ex/demo.log)" >>"$summary"
		status=1
	fi
}

# The DKMS package, installed here and built by DKMS for 6.1 and 6.12; the
# 6.12 VM runs the module DKMS built.
# Once the package's work is done, or the run fails on the way, leave the
# machine as it was, so that a kernel installed later does not get our
# module built into it.
remove_package() {
	sudo=
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo dpkg -r tdispatch-dkms >/dev/null 2>&1 || true
}

# The initramfs of the kernel with the in-tree series applied and
# tdispatch built in (make patches; scripts/build-kernel.sh intree): no
# module of ours, only the kselftests as the kernel builds them, which its
# own runner runs (KUnit ran as it booted), and the link storm on the
# kernel's dummy driver.
intree_initrd() {
	rm -rf "$out/mod" "$out/extra"
	mkdir -p "$out/mod" "$out/extra/bin"
	cp -r "$td_kdir/kselftest" "$out/extra/kselftest"
	cp "$td_kdir/drivers/net/dummy.ko" "$out/mod/"
	cp "$user/linkstorm" "$out/extra/bin/"
	"$TD_TOP/scripts/mkinitramfs.sh" "$out/initrd.gz" "$out/mod" "$out/mod" "$out/extra"
}

dkms_ko=${TD_DKMS_KO:-}
export_top=
if [ "${DKMS:-1}" != 0 ]; then
	trap remove_package EXIT
	# dash runs no EXIT trap for a death by signal: exit instead.
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	if dkms_ko=$("$TD_TOP/scripts/dkms-check.sh"); then
		echo "dkms: tdispatch-dkms $(cat "$TD_TOP/VERSION") installed, built for 6.1 and 6.12" >>"$summary"
	else
		echo "dkms: FAILED (see above)" >>"$summary"
		status=1
		dkms_ko=
	fi
	phase dkms
fi

# Lint from the tree the package put under /usr/src, which is not a git
# checkout: a release tarball must pass it too.
if [ "${DKMS:-1}" != 0 ] && [ -n "$dkms_ko" ]; then
	export_top=/usr/src/tdispatch-$(cat "$TD_TOP/VERSION")
	[ -x "$export_top/scripts/check.sh" ] || export_top=
fi
if [ "${LINT:-1}" != 0 ]; then
	if [ -n "$export_top" ]; then
		td_log "lint: from $export_top, an exported tree"
		TD_BUILD=$(realpath -m "$TD_BUILD/export") "$export_top/scripts/lint.sh"
		echo "lint: clean, run from $export_top (not a git checkout)" >>"$summary"
	else
		"$TD_TOP/scripts/lint.sh"
	fi
	phase lint
fi
if [ "${PATCHES:-1}" != 0 ]; then
	if "$TD_TOP/scripts/patches.sh"; then
		echo "patches: the in-tree series applies, passes checkpatch --strict, builds =y (with its kselftests), =y without /dev/tdispatch, =m, =n" >>"$summary"
	else
		echo "patches: FAILED (see above)" >>"$summary"
		status=1
	fi
	phase patches
fi

for k in $kernels; do
	if [ "$k" = 6.12 ] && [ -n "$export_top" ]; then
		check_exported
		phase "6.12+demo"
		continue
	fi
	td_kernel "$k"
	case $k in debug | intree) phase "$k-kernel" ;; esac
	out=$TD_BUILD/vm-$k
	mode=check
	if [ "$k" = intree ]; then
		intree_initrd
		mode=intree
	else
		td_log "kernel $k: building modules against $td_kdir"
		td_build_modules "$td_kdir" "$out"
		if [ "$k" = 6.12 ] && [ -n "$dkms_ko" ]; then
			cp "$dkms_ko" "$out/mod/tdispatch.ko"
			echo "  6.12: tdispatch.ko as DKMS built it" >>"$summary"
		fi
		# TESTS="a_test b_test": those kselftests and test modules
		# alone, for a quick look.
		rm -rf "$out/extra" && mkdir -p "$out/extra"
		[ -z "${TESTS:-}" ] || printf '%s\n' "$TESTS" >"$out/extra/tests-only"
		# The fuzzer's million calls on 6.12, the kernel DKMS built
		# for; 6.1 and rt take 300,000 (half their VM time was the
		# fuzzer's), the debug kernel its hundred thousand.
		case $k in 6.1 | rt) echo 300000 >"$out/extra/fuzz-calls" ;; esac
		"$TD_TOP/scripts/mkinitramfs.sh" "$out/initrd.gz" "$out/mod" "$user" "$out/extra"
	fi
	td_log "kernel $k: booting $td_kimg"
	run_vm "$td_kimg" "$out/initrd.gz" "$mode" "$out/log" "$tmo"
	if ! "$TD_TOP/scripts/ktap.py" "$k" "$out/log" >>"$summary"; then
		status=1
	fi
	read -r p f _ <"$out/log/counts"
	total_pass=$((total_pass + p))
	total_fail=$((total_fail + f))
	# The fuzzer's seed, calls and errno classes, for each run of it.
	sed -n 's/^\(not \)*ok 1 \(fuzz[a-z_]*\) # /  '"$k"': \2: /p' "$out/log/results.log" |
		tr -d '\r' >>"$summary"
	echo "  $k: VM ran $(cat "$out/log/seconds")s, longest heartbeat gap" \
		"$(cat "$out/log/heartbeat-gap")s; console log $out/log/console.log" >>"$summary"
	phase "$k"
done

# The harness must not be able to pass a broken kernel: boot the debug
# kernel with a module that WARNs and one that leaks, and require that the
# scanner reports both.
case " $kernels " in
*" debug "*)
	td_kernel debug
	out=$TD_BUILD/vm-planted
	rm -rf "$out/src" && mkdir -p "$out/src" "$out/mod/plant"
	cp "$TD_TOP/scripts/plant/"* "$out/src/"
	make -s -C "$td_kdir" M="$out/src" >"$out/build.log" 2>&1 ||
		{ cat "$out/build.log"; td_die "planted modules failed to build"; }
	cp "$out/src/"*.ko "$out/mod/plant/"
	"$TD_TOP/scripts/mkinitramfs.sh" "$out/initrd.gz" "$out/mod" "$user"
	td_log "harness self-test: booting the debug kernel with planted bugs"
	run_vm "$td_kimg" "$out/initrd.gz" planted "$out/log" "$tmo"
	"$TD_TOP/scripts/ktap.py" --expect-planted planted "$out/log" >>"$summary" || status=1
	phase planted
	;;
esac
echo "times:${times%,}" >>"$summary"

echo
echo "== tdispatch check summary ($(( $(date +%s) - t0 ))s) =="
cat "$summary"
[ "$status" = 0 ] && [ "$total_fail" = 0 ] || echo "FAILED"
echo "VM retries (a stall, or a kernel that died before /init): $retries"
echo "$total_pass passed, $total_fail failed"
[ "$status" = 0 ] && [ "$total_fail" = 0 ]
