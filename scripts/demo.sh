#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the VM (tdmode=demo), after tdispatch.ko is loaded.
echo
echo "=== tdispatch demo on Linux $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs ==="
echo "--- the module and its device"
grep '^tdispatch ' /proc/modules
ls -l /dev/tdispatch
tdctl version
echo
echo "--- the engine: producers on every CPU post 20000 readings each for 16"
echo "    sensors; a slow, sometimes congested consumer sees only the newest"
echo "    reading per sensor, in batches of up to 8"
dmesg -c >/dev/null
insmod "$DEMO_MODULES/demo/tdispatch_demo.ko"
rmmod tdispatch_demo
dmesg | sed -n 's/.*tdispatch_demo: /  /p'
echo
echo "accepted = done + overridden + dropped + expired + failed + cancelled"
echo "(+ queued + pending + in_flight while running): nothing is lost."

echo
echo "--- userspace: 3 producer processes post bursts of updates for 8 devices"
echo "    through /dev/tdispatch; tdctl workers process the batches; the first"
echo "    worker is killed with SIGKILL while it holds a batch"
rm -f /tmp/taken
tdctl create --name userdemo --max-batch 8 --max-delay-ms 20 --workers 2 \
	--lease-ms 60000 --events 4096 -- sh -c '
	for p in 1 2 3; do
		(for burst in 1 2 3 4 5 6; do
			for dev in 0 1 2 3 4 5 6 7; do echo "$dev p$p-burst$burst"; done |
				tdctl submit - >/dev/null
		done) &
	done
	# This worker takes a batch and hangs in it ...
	tdctl work --count 1 --exec "echo \$\$ >/tmp/t; mv /tmp/t /tmp/taken; exec sleep 600" \
		2>/dev/null &
	victim=$!
	while [ ! -e /tmp/taken ]; do sleep 0.05; done
	# ... until it is killed: its batch is redelivered at once.
	kill -9 $victim
	wait $victim 2>/dev/null
	# Its command still holds the file; end it too.
	kill "$(cat /tmp/taken)"
	wait_producers() { while [ "$(jobs -p | wc -l)" -gt 0 ]; do wait; done; }
	wait_producers
	tdctl work --timeout-ms 1500 --exec "cat >/dev/null" 2>/dev/null
	echo "  counters:"
	tdctl stats | sed "s/^/    /"
	echo "  outcome events by kind:"
	tdctl events | awk "{ print \$2 }" | sort | uniq -c | sed "s/^/    /"
'

echo
echo "--- userspace, shared slots: a producer writes 20000 readings for 64"
echo "    sensors into memory the file shares with the kernel, with a kick per"
echo "    1024 writes at most; a worker reads each sensor's newest reading only"
tdctl create --name slotdemo --max-batch 64 --max-delay-ms 20 -- sh -c '
	seq 0 19999 | awk "{ print \$1 % 64, \"reading-\" \$1 }" |
		tdctl submit --slots 64 - | sed "s/^/  /"
	echo "  the first tasks of the first batch:"
	tdctl work --count 1 >/tmp/batch 2>/dev/null
	head -n 3 /tmp/batch | sed "s/^/    /"
	tdctl work --timeout-ms 500 --exec "cat >/dev/null" 2>/dev/null
	echo "  counters (each write counted when the worker read its slot):"
	tdctl stats | grep -E "^(accepted|done|overridden) " | sed "s/^/    /"
'

echo
echo "--- time: a periodic health check backs off and recovers"
echo "    a task delayed by 500 ms waits, then reaches a worker; then a health"
echo "    check due every 200 ms, whose first 3 runs outlast their 100 ms"
echo "    timeout, backs off (its interval doubles, up to 4 x 200 ms) until"
echo "    a run succeeds"
tdctl create --name timedemo --max-delay-ms 0 -- sh -c '
	t0=$(cut -d" " -f1 /proc/uptime)
	el() { awk -v t0="$t0" "{ printf \"%5.2f s\", \$1 - t0 }" /proc/uptime; }
	echo "  $(el)  submit --delay-ms 500 9 later: $(tdctl submit --delay-ms 500 9 later)"
	echo "  $(el)  query 9: $(tdctl query 9)"
	took=$(tdctl work --count 1 2>/dev/null)
	echo "  $(el)  a worker took: $took"
	echo
	# The worker: the first 3 runs take 300 ms, the others are done at once.
	(for run in 1 2 3; do tdctl work --count 1 --exec "sleep 0.3"; done
		exec tdctl work >/dev/null) 2>/dev/null &
	worker=$!
	t0=$(cut -d" " -f1 /proc/uptime)
	echo "  $(tdctl periodic add 1 health --period-ms 200 --timeout-ms 100 \
		--max-backoff 4)"
	# A line whenever its counters change, until 3 runs succeeded (or 10 s).
	last= i=0
	while [ $i -lt 500 ]; do
		now=$(tdctl periodic stats 1)
		[ "$now" = "$last" ] || echo "  $(el)  $now"
		last=$now i=$((i + 1))
		case $now in *"successes 3,"*) break ;; esac
		sleep 0.05
	done
	echo "  $(tdctl periodic del 1)"
	kill $worker
	wait $worker 2>/dev/null
	echo "  counters:"
	tdctl stats | grep -E "^(accepted|delayed|done|periodic_runs) " | sed "s/^/    /"
'
echo "=== end of demo ==="
