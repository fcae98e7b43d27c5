#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the tdispatch test VM.  tdmode= on the kernel command line picks
# what it does:
#   check    load the module, run every test, unload, scan for leaks, and
#            report on ttyS1 between TD-* markers that scripts/ktap.py reads
#   planted  load the harness's planted-bug modules, to prove the scanner
#   bench    load each benchmark module and report its results on ttyS1
#   fuzz     load the module and the test driver, run tdispatch_fuzz with
#            the arguments in /fuzz-args, unload, scan for leaks
#   intree   tdispatch is built in (make patches): report the KUnit suites
#            that ran as it booted and run /kselftest, the kselftests as
#            the kernel builds and runs them, then scan for leaks
#   linkbench  run linkstorm's link watch benchmark with /linkbench.args on
#            a kernel with tdispatch built in (scripts/linkbench.sh)
#   demo     load the module and run /demo.sh on the console
#   shell    load the module and give a shell on the console
# The VM always ends with reboot -f; QEMU runs with -no-reboot, so it exits.

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /tmp /root
/bin/busybox --install -s
export PATH=/tests:/bin:/sbin:/usr/bin:/usr/sbin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# What udev would add and the kselftest runner writes to (/dev/stdout).
for f in stdin:0 stdout:1 stderr:2; do
	[ -e /dev/${f%:*} ] || ln -s /proc/self/fd/${f#*:} /dev/${f%:*}
done
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null

mode=$(sed -n 's/.*tdmode=\([a-z]*\).*/\1/p' /proc/cmdline)
kmemleak=/sys/kernel/debug/kmemleak
mods=/lib/tdispatch

finish() {
	echo "TD-VM-DONE"
	# Closing the last reference to the port waits for its output to drain.
	exec >/dev/null 2>&1
	sync
	reboot -f
}

# Seconds since boot, on each TD-*-END marker: the summary names the
# slowest sections.
td_up() { cut -d' ' -f1 /proc/uptime; }

step() {
	name=$1
	shift
	"$@"
	echo "TD-STEP $name rc=$?"
}

module_gone() {
	! grep -q "^$1 " /proc/modules
}

# Forget what the kernel itself left behind during boot, so a later report
# can only be ours.
kmemleak_baseline() {
	[ -w $kmemleak ] || return 0
	echo scan >$kmemleak
	echo clear >$kmemleak
}

# kmemleak only reports objects older than five seconds (its fixed minimum
# age) whose contents did not change since the previous scan, so give what
# the tests leaked that long, then scan twice.
kmemleak_report() {
	[ -w $kmemleak ] || return 0
	sleep 6
	echo scan >$kmemleak
	echo scan >$kmemleak
	echo "TD-KMEMLEAK-BEGIN"
	cat $kmemleak
	echo "TD-KMEMLEAK-END"
}

# The kselftests of named dispatchers attach to a test driver's.
run_kselftests() {
	for m in $mods/testdrv/*.ko; do
		[ -e "$m" ] && step "insmod-${m##*/}" insmod "$m"
	done
	for t in /tests/*_test; do
		[ -x "$t" ] || continue
		# make check TESTS="...": those kselftests alone.
		case " $only " in
		"  ") ;;
		*" ${t##*/} "*) ;;
		*) continue ;;
		esac
		echo "TD-KSFT-BEGIN ${t##*/}"
		"$t" 2>&1
		echo "TD-KSFT-END ${t##*/} rc=$? up=$(td_up)"
	done
	[ -n "$only" ] || run_fuzz
	for m in $mods/testdrv/*.ko; do
		[ -e "$m" ] || continue
		n=${m##*/}
		step "rmmod-$n" rmmod "${n%.ko}"
	done
}

# The fuzzer, with the test driver loaded: a million calls on a stock
# kernel, a hundred thousand under KASAN and lockdep (kmemleak tells
# which), or what /fuzz-calls says (make check's other stock lanes).
# tdmode=fuzz takes its arguments from /fuzz-args instead.
run_fuzz() {
	command -v tdispatch_fuzz >/dev/null || return 0
	args=$(cat /fuzz-args 2>/dev/null)
	if [ -z "$args" ]; then
		calls=1000000
		[ -e $kmemleak ] && calls=100000
		[ -s /fuzz-calls ] && calls=$(cat /fuzz-calls)
		args="-n $calls"
	fi
	echo "TD-KSFT-BEGIN tdispatch_fuzz"
	# shellcheck disable=SC2086 # the arguments are words
	tdispatch_fuzz $args 2>&1
	echo "TD-KSFT-END tdispatch_fuzz rc=$? up=$(td_up)"
	[ -n "$(cat /fuzz-args 2>/dev/null)" ] || fuzz_with_faults
	# It may have left the test driver's dispatcher withdrawn.
	echo 1 >/sys/module/tdispatch_testdrv/parameters/published 2>/dev/null
}

# Fault injection where the kernel has it: allocations fail at random (5%,
# quietly: an injected failure's stack trace would read as a report), but
# only in the tasks that ask for it through make-it-fail (task-filter).
faults_on() {
	f=/sys/kernel/debug
	[ -w $f/failslab/task-filter ] || return 1
	for t in failslab fail_page_alloc; do
		[ -d $f/$t ] || continue
		echo 0 >$f/$t/verbose
		echo N >$f/$t/ignore-gfp-wait
		echo 1 >$f/$t/interval
		echo -1 >$f/$t/times
		echo Y >$f/$t/task-filter
		echo 5 >$f/$t/probability
	done
	[ -w $f/fail_page_alloc/min-order ] && echo 0 >$f/fail_page_alloc/min-order
	return 0
}

faults_off() {
	for t in failslab fail_page_alloc; do
		[ -d /sys/kernel/debug/$t ] || continue
		echo 0 >/sys/kernel/debug/$t/probability
		echo N >/sys/kernel/debug/$t/task-filter
	done
}

# The fuzzer once more, its processes failing allocations.
fuzz_with_faults() {
	faults_on || return 0
	echo "TD-KSFT-BEGIN tdispatch_fuzz_faults"
	tdispatch_fuzz -f -n 30000 2>&1
	echo "TD-KSFT-END tdispatch_fuzz_faults rc=$? up=$(td_up)"
	faults_off
}

# KUnit runs a module's suites when it loads; debugfs keeps their KTAP.
run_kunit() {
	[ -d $mods/kunit ] || return 0
	for m in $mods/kunit/*.ko; do
		[ -e "$m" ] || continue
		step "insmod-${m##*/}" insmod "$m"
	done
	kunit_results
	for m in $mods/kunit/*.ko; do
		[ -e "$m" ] || continue
		n=${m##*/}
		step "rmmod-$n" rmmod "${n%.ko}"
	done
}

# The KTAP of every KUnit suite that ran, built in or loaded.
kunit_results() {
	for r in /sys/kernel/debug/kunit/*/results; do
		[ -e "$r" ] || continue
		s=${r%/results}
		echo "TD-KUNIT-BEGIN ${s##*/}"
		cat "$r"
		echo "TD-KUNIT-END ${s##*/} rc=0 up=$(td_up)"
	done
}

# The in-tree kselftests through the kernel's runner, whose TAP nests each
# test's own under "# ": indented instead, so that the judge counts every
# case, and reads the runner's "not ok" lines (it exits 0 whatever they say).
run_intree_kselftests() {
	# The runner passes --foreground, which busybox's timeout lacks.
	rm -f /usr/bin/timeout
	printf '#!/bin/sh\n[ "$1" = --foreground ] && shift\nexec /bin/busybox timeout "$@"\n' \
		>/usr/bin/timeout
	chmod 755 /usr/bin/timeout
	echo "TD-KSFT-BEGIN run_kselftest.sh"
	(cd /kselftest && ./run_kselftest.sh; echo "rc=$?" >/tmp/ksft-rc) 2>&1 |
		sed 's/^# /    /'
	echo "TD-KSFT-END run_kselftest.sh $(cat /tmp/ksft-rc) up=$(td_up)"
}

# The link storm (tools/linkstorm.c) on 300 dummy devices: carriers as
# written, deleted devices gone, the driver unloaded in a storm.  The
# unload holds RTNL over every device's unregister (rtnl_link_unregister),
# about 110 ms a device on this debug kernel under TCG: with 1,000 devices
# the link watch's work waited on RTNL past the 60 s hung-task limit.
run_link_storm() {
	echo "TD-KSFT-BEGIN linkstorm"
	linkstorm -m $mods/dummy.ko -n 300
	rc=$?
	# The converted link watch's dispatcher, as debugfs shows it after
	# the storms (mainline's has nothing to show).
	for f in /sys/kernel/debug/tdispatch/linkwatch-*/state; do
		[ -e "$f" ] && grep -v '^pending id' "$f" | sed 's/^/# linkwatch: /'
	done
	echo "TD-KSFT-END linkstorm rc=$rc up=$(td_up)"
}

# Test modules report KTAP of their own through debugfs, like KUnit.  The
# API module's stress runs a second time with its producers failing
# allocations, where the kernel can inject faults.
run_test_modules() {
	[ -d $mods/test ] || return 0
	for m in $mods/test/*.ko; do
		[ -e "$m" ] || continue
		n=${m##*/}
		n=${n%.ko}
		# make check TESTS="...": those test modules alone.
		case " $only " in
		"  ") ;;
		*" $n "*) ;;
		*) continue ;;
		esac
		args=
		if [ "$n" = tdispatch_race_test ]; then
			faults_on && args=fault_stress=1
			# Its stress: a million tasks on a stock kernel, a
			# hundred thousand under kmemleak, as the fuzzer; its
			# bursts, 3000 rounds, and 1000 under kmemleak.
			[ -e $kmemleak ] && args="$args stress_tasks=100000 burst_rounds=1000"
		fi
		# shellcheck disable=SC2086 # the arguments are words
		step "insmod-$n" insmod "$m" $args
		faults_off
		echo "TD-KSFT-BEGIN $n"
		cat "/sys/kernel/debug/$n/results" 2>&1
		echo "TD-KSFT-END $n rc=$? up=$(td_up)"
		step "rmmod-$n" rmmod "$n"
	done
}

# make bench BENCH_BEFORE=: tdbench against an earlier tdispatch.ko in
# this boot, the two loaded in turn, one round per load.
run_bench_ab() {
	echo "TD-KSFT-BEGIN tdbench-ab"
	echo "1..1"
	rc=0 i=0
	while [ $i -lt "$(cat $mods/before/rounds)" ] && [ $rc = 0 ]; do
		for side in before after; do
			ko=$mods/tdispatch.ko
			[ $side = before ] && ko=$mods/before/tdispatch.ko
			rmmod tdispatch && insmod $ko || { rc=1; break; }
			tdbench 1 >/tmp/ab.out || rc=1
			sed -n "s/^BENCH /BENCH-AB $side /p" /tmp/ab.out
		done
		i=$((i + 1))
	done
	# Loaded as the run began, for the unload that ends it.
	grep -q '^tdispatch ' /proc/modules && rmmod tdispatch
	insmod $mods/tdispatch.ko || rc=1
	[ "$rc" = 0 ] && echo "ok 1 tdbench-ab" || echo "not ok 1 tdbench-ab"
	echo "TD-KSFT-END tdbench-ab rc=$rc up=$(td_up)"
}

# make bench BENCH_PERF=1: the flat profile of what perf recorded for $1.
perf_report() {
	echo "TD-PERF-BEGIN $1"
	perf report -i /tmp/perf.data --stdio --no-children --sort sym -g none \
		--percent-limit 0.1 2>/dev/null | grep -v '^$'
	echo "TD-PERF-END $1"
}

# make bench BENCH_TRACE=1: the events scripts/bench-trace.awk reads,
# recorded while a benchmark module loads (td_engine_bench's
# trace_runs=1 switches tracing on for its measured runs only).
trace_start() {
	t=/sys/kernel/tracing
	echo 0 >$t/tracing_on
	echo 65536 >$t/buffer_size_kb
	for e in sched/sched_switch workqueue/workqueue_queue_work \
		workqueue/workqueue_execute_start workqueue/workqueue_execute_end; do
		echo 1 >$t/events/$e/enable
	done
	echo >$t/trace
	echo 1 >$t/tracing_on
}

trace_report() {
	t=/sys/kernel/tracing
	echo 0 >$t/tracing_on
	awk -v cpus="$(grep -c ^processor /proc/cpuinfo)" -f /bench-trace $t/trace | sort |
		sed "s/^TD-TRACE/TD-TRACE $1/"
	echo >$t/trace
}

# Benchmark modules measure while they load and keep the results in
# debugfs; run them one at a time so that they do not disturb each other.
run_bench_modules() {
	# td_engine_bench uses the engine; td_timer_bench needs nothing.
	step insmod-tdispatch insmod $mods/tdispatch.ko
	for m in $mods/bench/*.ko; do
		[ -e "$m" ] || continue
		n=${m##*/}
		n=${n%.ko}
		# make bench BENCH_PERF=1: the load sampled on every CPU.
		perf=
		[ -e /bench-perf ] && perf="perf record -q -a -g -o /tmp/perf.data --"
		[ ! -e /bench-trace ] || trace_start
		# shellcheck disable=SC2046,SC2086 # the parameters are words
		step "insmod-$n" $perf insmod "$m" $(cat $mods/bench/args 2>/dev/null)
		[ ! -e /bench-trace ] || trace_report "$n"
		echo "TD-KSFT-BEGIN $n"
		cat "/sys/kernel/debug/$n/results" 2>&1
		echo "TD-KSFT-END $n rc=$? up=$(td_up)"
		[ -z "$perf" ] || perf_report "$n"
		step "rmmod-$n" rmmod "$n"
	done
	if command -v tdbench >/dev/null; then
		run_user_bench tdbench
		[ -e $mods/before/tdispatch.ko ] && run_bench_ab
	fi
	command -v tdfresh >/dev/null && run_user_bench tdfresh
	step rmmod-tdispatch rmmod tdispatch
}

# A userspace benchmark: its tables, then its verdict in KTAP for the judge.
run_user_bench() {
	perf=
	[ -e /bench-perf ] && perf="perf record -q -a -g -o /tmp/perf.data --"
	echo "TD-KSFT-BEGIN $1"
	echo "1..1"
	rc=0
	# shellcheck disable=SC2046,SC2086 # the arguments are words
	$perf $1 $(cat $mods/$1.args 2>/dev/null) || rc=$?
	[ "$rc" = 0 ] && echo "ok 1 $1" || echo "not ok 1 $1"
	echo "TD-KSFT-END $1 rc=$rc up=$(td_up)"
	[ -z "$perf" ] || perf_report "$1"
}

# The tracepoints work with ftrace: record a demo run, find every event.
check_tracepoints() {
	ev=/sys/kernel/tracing/events/tdispatch
	[ -d $ev ] && [ -e $mods/demo/tdispatch_demo.ko ] || return 0
	echo 8192 >/sys/kernel/tracing/buffer_size_kb
	echo 1 >$ev/enable
	insmod $mods/demo/tdispatch_demo.ko
	echo 0 >$ev/enable
	rmmod tdispatch_demo
	echo "TD-KSFT-BEGIN tracepoints"
	echo "KTAP version 1"
	set -- submit coalesce drop batch_start batch_end holdoff
	echo "1..$#"
	i=0
	for e in "$@"; do
		i=$((i + 1))
		n=$(grep -c " tdispatch_$e: " /sys/kernel/tracing/trace)
		if [ "$n" -gt 0 ]; then
			echo "ok $i tdispatch_$e # $n events"
		else
			echo "not ok $i tdispatch_$e"
		fi
	done
	echo "TD-KSFT-END tracepoints rc=0 up=$(td_up)"
	echo >/sys/kernel/tracing/trace
}

# The host's watchdog (vm-run.sh) takes silence here for a stalled guest.
heartbeat() {
	while :; do
		echo "TD-HEARTBEAT $(cut -d' ' -f1 /proc/uptime)" >/dev/console
		sleep 5
	done
}

case "$mode" in
check)
	heartbeat &
	exec >/dev/ttyS1 2>&1
	echo "TD-VM-START kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)"
	kmemleak_baseline
	step insmod-tdispatch insmod $mods/tdispatch.ko
	only=$(cat /tests-only 2>/dev/null || true)
	run_kselftests
	run_test_modules
	if [ -z "$only" ]; then
		check_tracepoints
		run_kunit
	fi
	step rmmod-tdispatch rmmod tdispatch
	step module-gone module_gone tdispatch
	kmemleak_report
	finish
	;;
planted)
	heartbeat &
	exec >/dev/ttyS1 2>&1
	echo "TD-VM-START kernel=$(uname -r) planted"
	kmemleak_baseline
	for m in $mods/plant/*.ko; do
		step "insmod-${m##*/}" insmod "$m"
	done
	kmemleak_report
	finish
	;;
intree)
	heartbeat &
	exec >/dev/ttyS1 2>&1
	echo "TD-VM-START kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) intree"
	# No baseline: what the built-in KUnit suites leaked at boot counts.
	kunit_results
	run_intree_kselftests
	run_link_storm
	kmemleak_report
	finish
	;;
linkbench)
	# make bench's link watch rounds (scripts/linkbench.sh): linkstorm's
	# LWROUND lines, its arguments from the initramfs.
	heartbeat &
	exec >/dev/ttyS1 2>&1
	echo "TD-VM-START kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) linkbench"
	echo "TD-KSFT-BEGIN linkbench"
	# shellcheck disable=SC2046 # the arguments, one word each
	linkstorm -m $mods/dummy.ko $(cat /linkbench.args)
	echo "TD-KSFT-END linkbench rc=$? up=$(td_up)"
	finish
	;;
bench)
	heartbeat &
	exec >/dev/ttyS1 2>&1
	echo "TD-VM-START kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) bench"
	kmemleak_baseline
	run_bench_modules
	kmemleak_report
	finish
	;;
fuzz)
	heartbeat &
	exec >/dev/ttyS1 2>&1
	echo "TD-VM-START kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) fuzz"
	kmemleak_baseline
	step insmod-tdispatch insmod $mods/tdispatch.ko
	for m in $mods/testdrv/*.ko; do
		[ -e "$m" ] && step "insmod-${m##*/}" insmod "$m"
	done
	run_fuzz
	step rmmod-tdispatch_testdrv rmmod tdispatch_testdrv
	step rmmod-tdispatch rmmod tdispatch
	step module-gone module_gone tdispatch
	kmemleak_report
	finish
	;;
demo)
	insmod $mods/tdispatch.ko
	PATH=$PATH DEMO_MODULES=$mods sh /demo.sh
	rmmod tdispatch
	finish
	;;
*)
	insmod $mods/tdispatch.ko
	echo "tdispatch VM: module loaded; tests are in /tests, tdctl in /bin."
	echo "Leave with 'exit' or Ctrl-D (the VM powers off)."
	setsid cttyhack sh -l
	finish
	;;
esac
