# SPDX-License-Identifier: GPL-2.0
# make bench BENCH_TRACE=1: what the CPUs did while a benchmark module
# loaded (with td_engine_bench's trace_runs=1, during its runs other than
# none's, each from its start to the end of its drain), from the ftrace
# events scripts/vm-init.sh enables.  For each state, the time spent in
# it: how many CPUs were idle, how many ran a producer, how many ran a
# kworker inside a td_batch_work (a tdispatch worker's work), how many
# such works had started and not ended (on a CPU or not: one sleeping on
# the dispatcher's mutex, or runnable and waiting for a CPU), and whether
# a work was queued and not yet started (a work queued again while it
# runs counts, though it cannot start before that run ends).  Counting
# starts over after a gap of over 2 ms between two events (the end of a
# run and the start of the next), once every CPU has switched task.
# Events the ring buffer lost are counted apart.  Busybox awk; -v cpus=
# the number of CPUs.
BEGIN {
	ncpu = cpus + 0
}
/LOST [0-9]+ EVENTS/ {
	for (i = 1; i <= NF; i++)
		if ($i == "[LOST")
			lost += $(i + 1)
	next
}
{
	t = -1
	for (i = 1; i <= NF; i++)
		if ($i ~ /^[0-9]+\.[0-9]+:$/) {
			t = substr($i, 1, length($i) - 1) + 0
			ev = $(i + 1)
			break
		}
	if (t < 0)
		next
	for (i = 1; i <= NF; i++)
		if ($i ~ /^\[[0-9]+\]$/) {
			cpu = substr($i, 2, length($i) - 2) + 0
			break
		}
	n = split($1, a, "-")
	pid = a[n] + 0
	if (cpu + 1 > ncpu)
		ncpu = cpu + 1
	if (last > 0 && t - last >= 0.002) {
		# A new run: nothing is known of the last one's works.
		queued = started = 0
		for (p in inwork)
			delete inwork[p]
		for (c = 0; c < ncpu; c++)
			known[c] = 0
	}
	ready = ncpu > 0
	for (c = 0; c < ncpu; c++)
		ready = ready && known[c]
	if (last > 0 && t - last < 0.002 && ready) {
		idle = 0
		prod = 0
		oncpu = 0
		for (c = 0; c < ncpu; c++) {
			idle += cur[c] == 0
			prod += isprod[cur[c]] + 0
			oncpu += inwork[cur[c]] + 0
		}
		key = sprintf("idle=%d producers=%d works_on_cpu=%d works_started=%d queued=%d",
			      idle, prod, oncpu, started, queued > 0)
		spent[key] += t - last
		total += t - last
	}
	last = t
	if (ev == "sched_switch:") {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^next_pid=/)
				np = substr($i, 10) + 0
			if ($i ~ /^next_comm=/)
				nc = substr($i, 11)
		}
		cur[cpu] = np
		known[cpu] = 1
		if (nc ~ /^td_eb_prod/)
			isprod[np] = 1
	} else if ($0 ~ /td_batch_work/) {
		if (ev == "workqueue_queue_work:") {
			queued++
		} else if (ev == "workqueue_execute_start:") {
			if (queued > 0)
				queued--
			started++
			inwork[pid] = 1
		} else if (ev == "workqueue_execute_end:") {
			if (started > 0)
				started--
			inwork[pid] = 0
		}
	}
}
END {
	printf "TD-TRACE traced %.1f ms, events lost %d\n", total * 1000, lost
	for (k in spent)
		if (spent[k] * 1000 >= 0.5)
			printf "TD-TRACE %s: %.1f ms\n", k, spent[k] * 1000
}
