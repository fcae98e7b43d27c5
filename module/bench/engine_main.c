// SPDX-License-Identifier: GPL-2.0
/*
 * Freshness and CPU at a fixed offered load: tdispatch against the
 * coalescers a driver author writes instead, in one boot.
 *
 * The model is the one every coalescing user has: N objects, each with a
 * version that producers bump when the object changes ("the newest
 * state"), and a consumer that must act on the newest version of every
 * changed object soon.  A submission says "this object changed"; the
 * consumer reads the object's version (or, for the allocating variants,
 * the payload it was handed) when it processes it.
 *
 * Variants, all with the same window (none: a batch is cut at once) and
 * the same priority (a SCHED_FIFO-free producer, WQ_HIGHPRI workers):
 *
 *   td-item     a struct tdispatch_item embedded in each object,
 *               tdispatch_submit_item(); max_batch 64, max_delay 0,
 *               workers 2 (tdispatch's own acceptor and unbound
 *               WQ_HIGHPRI workqueue)
 *   td-task     tdispatch_submit() of a kmalloc()ed payload per change,
 *               freed in ->release()
 *   td-own-task tdispatch_submit_task(): the same, with the task in the
 *               payload's allocation (one a change, as irqw-alloc's)
 *   td-merge    tdispatch_submit_merge() of the same payload: one that
 *               finds its object's task waiting replaces that task's
 *               payload (the older one, never processed, is freed)
 *   work        a work_struct embedded in each object, queue_work() on a
 *               WQ_HIGHPRI workqueue: its pending bit coalesces for free
 *   irqw        kernel/irq_work.c's claim-then-raise: a pending bit and an
 *               llist_node in each object, llist_add(), and one
 *               work_struct raised by the first add to an empty list
 *   irqw-alloc  irqw where each change kmalloc()s its payload and
 *               xchg()es it into the object (the older one, never
 *               processed, is freed): the peer of td-task,
 *               td-own-task and td-merge
 *   spin        a spinlock and a FIFO of entries embedded in the objects,
 *               a lockless peek at the entry's queued flag first, one
 *               work_struct that drains 64 entries a batch
 *   xarray      the objects in an xarray, XA_MARK_1 as the pending set
 *               (a lockless xa_get_mark() first), one work_struct that
 *               takes 64 marked entries a batch from a rotating cursor
 *   none        the producers alone, pacing and bumping versions: its CPU
 *               time is taken off every other variant's
 *
 * Workloads: "trivial" processing (reading the version) and "costly"
 * (2 us a task and 20 us a batch, as a lock taken and a device or
 * network call made once per batch; what the delays take is printed).
 * Ids: round-robin, uniform and Zipf (s = 1, ranks scattered over the
 * ids), over 1,024 and 1,000,000 objects.  Producers: a kthread per
 * online CPU, each offering its share of the rate, paced by an absolute
 * hrtimer sleep every tick_us; a producer that falls behind catches up
 * at once (open loop).
 *
 * Figures, per run (the table gives medians over reps interleaved rounds):
 *   accepted/s   submissions accepted (a merged one included) over the
 *                offered load's time (run_ms)
 *   processed/s  objects (or payloads) a consumer acted on by the end of
 *                the offered load, over its time: work done
 *   coalescing   accepted over processed, the drain included
 *   cpu_ns       CPU time of every thread but the producers and the
 *                bench's own, from the start of the producers to the end
 *                of the drain, and the producers' submit calls' (one in
 *                16, at random, is timed: their mean times the calls),
 *                less the none variant's at the same rate and ids, per
 *                accepted submission; what the idle task does for a
 *                variant (part of waking an idle CPU) is not in it
 *   busy_ns      the same from every CPU's busy time instead: it counts
 *                pacing, which takes less beside a variant's work than
 *                in the none run (a CPU busy between ticks idles less),
 *                so it undercounts by an amount no run shows
 *   staleness    for every sample_every-th submission of each producer
 *                (when no sample of its object waits already), the time
 *                from just before the change to the start of the first
 *                processing that reflects it: one that reads that
 *                version or a newer one; p50, p99 and max
 * Capacity: the highest offered rate (a doubling ladder from cap_start, or
 * a halving one down to a sixty-fourth of it if cap_start itself is too much,
 * then cap_steps bisections) at which a variant's producers offer at
 * least 95% of the rate and staleness p99 stays within 2 ms (the window,
 * 0, + 2 ms) in most of cap_probes runs of that rate.
 *
 * After each run every object's processed version must equal its last
 * one: a variant that loses an update fails the benchmark, which still
 * prints every figure.
 *
 * It runs at load ("make bench"); the results are plain text in
 * /sys/kernel/debug/td_engine_bench/results, BENCH lines last.
 */
#define pr_fmt(fmt) "td_engine_bench: " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tdispatch.h>
#include <linux/tick.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#define BENCH_MAIN
#define BENCH_OUT_SIZE	SZ_1M
#include "bench.h"
#include "engine.h"

static unsigned int reps = 7;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "interleaved rounds (default 7)");

unsigned int run_ms = 100;
module_param(run_ms, uint, 0444);
MODULE_PARM_DESC(run_ms, "offered-load time of each run, ms (default 100)");

unsigned int tick_us = 100;
module_param(tick_us, uint, 0444);
MODULE_PARM_DESC(tick_us, "producers' pacing tick, us (default 100)");

static unsigned int rate1 = 100000, rate2 = 400000, rate3 = 1600000;
module_param(rate1, uint, 0444);
MODULE_PARM_DESC(rate1, "light offered load, submissions/s (default 100000)");
module_param(rate2, uint, 0444);
MODULE_PARM_DESC(rate2, "medium offered load (default 400000)");
module_param(rate3, uint, 0444);
MODULE_PARM_DESC(rate3, "heavy offered load (default 1600000)");

unsigned int sample_every = 16;
module_param(sample_every, uint, 0444);
MODULE_PARM_DESC(sample_every, "sample every Nth submission of a producer for staleness (default 16)");

static unsigned int dists = 7;
module_param(dists, uint, 0444);
MODULE_PARM_DESC(dists, "id distributions, a mask: 1 round-robin, 2 uniform, 4 zipf (default 7)");

static unsigned int sizes = 3;
module_param(sizes, uint, 0444);
MODULE_PARM_DESC(sizes, "id spaces, a mask: 1 1024 ids, 2 1000000 ids (default 3)");

static unsigned int workloads = 3;
module_param(workloads, uint, 0444);
MODULE_PARM_DESC(workloads, "workloads, a mask: 1 trivial, 2 costly (default 3)");

static unsigned int cap_start = 100000;
module_param(cap_start, uint, 0444);
MODULE_PARM_DESC(cap_start, "capacity search's first rate (default 100000; 0 skips it)");

static unsigned int cap_probes = 3;
module_param(cap_probes, uint, 0444);
MODULE_PARM_DESC(cap_probes, "runs of each rate the capacity search tries; most must keep up (default 3)");

static unsigned int cap_steps = 3;
module_param(cap_steps, uint, 0444);
MODULE_PARM_DESC(cap_steps, "capacity search's bisections (default 3)");

static bool peer_unbound;
module_param(peer_unbound, bool, 0444);
MODULE_PARM_DESC(peer_unbound, "the peers' workqueue WQ_UNBOUND, as tdispatch's (default 0: per-CPU, the work runs where it was queued)");

bool trace_runs;
module_param(trace_runs, bool, 0444);
MODULE_PARM_DESC(trace_runs, "trace only the runs of variants other than none: tracing on at a run's start, off after its drain, back on at unload (default 0; make bench BENCH_TRACE=1)");

bool verbose;
module_param(verbose, bool, 0444);
MODULE_PARM_DESC(verbose, "print tdispatch's counters after each run, and each thread (not a producer) that ran over 2 ms of it (default 0)");

static char *only;
module_param(only, charp, 0444);
MODULE_PARM_DESC(only, "run only the variants of these names, comma-separated, beside none (default: all)");

/* ---- the rounds --------------------------------------------------------------- */

#define NR_RATES	3

struct cell {
	struct result r[MAX_REPS];
};

/* [workload][dist][space][rate][variant] */
static struct cell (*cells)[NR_D][ARRAY_SIZE(id_spaces)][NR_RATES][NR_V];

static u64 rates[NR_RATES];

/* The variant named by the @len characters at @s, or NR_V. */
static unsigned int variant_named(const char *s, size_t len)
{
	unsigned int vi;

	for (vi = 1; vi < NR_V; vi++)
		if (strlen(variants[vi].name) == len && !strncmp(s, variants[vi].name, len))
			break;
	return vi;
}

/* Is @vi run: none always, the others if only= is unset or names them? */
static bool want(unsigned int vi)
{
	const char *s = only;
	size_t len;

	if (vi == V_NONE || !only)
		return true;
	do {
		len = strcspn(s, ",");
		if (variant_named(s, len) == vi)
			return true;
		s += len;
	} while (*s++);
	return false;
}

/* Every name in only= is a variant's: a misspelt one would run nothing unsaid. */
static bool only_known(void)
{
	const char *s = only;
	size_t len;

	if (!only)
		return true;
	do {
		len = strcspn(s, ",");
		if (variant_named(s, len) == NR_V) {
			fail("only=: no variant named %.*s", (int)len, s);
			return false;
		}
		s += len;
	} while (*s++);
	return true;
}

static int set_space(unsigned int s)
{
	int ret = 0;

	if (nr_objs != id_spaces[s]) {
		nr_objs = id_spaces[s];
		xa_forget();
	}
	if (dists & BIT(D_ZIPF))
		ret = zipf_fill(nr_objs, nr_prods);
	return ret;
}

enum { M_ACC, M_PROC, M_CPU, M_BUSY, M_P50, M_P99, M_MAX, M_SUBMIT, M_COAL, M_FLOOR, NR_M };

/* What costly's delay for one task takes here, ns: costly_measured(). */
static u64 task_delay_ns;

static u64 metric(const struct result *r, const struct result *none, unsigned int m)
{
	u64 busy, sub;

	switch (m) {
	/* Over the offered load's time: a backlog drained after it is not a rate. */
	case M_ACC:
		return div64_u64(r->accepted * NSEC_PER_SEC, (u64)run_ms * NSEC_PER_MSEC);
	case M_PROC:
		return div64_u64(r->processed_run * NSEC_PER_SEC, (u64)run_ms * NSEC_PER_MSEC);
	case M_CPU:	/* the consumers' threads, and the submit calls' own time */
		if (r->consumers_ns == U64_MAX || none->consumers_ns == U64_MAX)
			return 0;
		busy = r->consumers_ns + r->submit_ns * (r->accepted + r->refused);
		sub = none->consumers_ns + none->submit_ns * (r->accepted + r->refused);
		return div64_u64(busy > sub ? busy - sub : 0, max_t(u64, r->accepted, 1));
	case M_BUSY:	/* all CPUs' busy time, less the none run's */
		if (r->busy_ns == U64_MAX || none->busy_ns == U64_MAX)
			return 0;
		busy = r->busy_ns > none->busy_ns ? r->busy_ns - none->busy_ns : 0;
		return div64_u64(busy, max_t(u64, r->accepted, 1));
	case M_P50:
		return div_u64(r->p50, NSEC_PER_USEC);
	case M_P99:
		return div_u64(r->p99, NSEC_PER_USEC);
	case M_SUBMIT:
		return r->submit_ns;
	case M_COAL:	/* hundredths */
		return div64_u64(r->accepted * 100, max_t(u64, r->processed, 1));
	case M_FLOOR:	/* costly: the tasks' own busy-wait, per accepted submission */
		return div64_u64(r->processed * task_delay_ns, max_t(u64, r->accepted, 1));
	default:
		return div_u64(r->max, NSEC_PER_USEC);
	}
}

static u64 median_metric(struct cell *c, struct cell *none, unsigned int m)
{
	u64 v[MAX_REPS];
	unsigned int i;

	for (i = 0; i < reps; i++)
		v[i] = metric(&c->r[i], &none->r[i], m);
	sort(v, reps, sizeof(u64), cmp_u64, NULL);
	return v[reps / 2];
}

static void report_cell(unsigned int w, unsigned int d, unsigned int s, unsigned int ri,
			unsigned int vi, bool line)
{
	struct cell *c = &cells[w][d][s][ri][vi], *none = &cells[w][d][s][ri][V_NONE];
	u64 m[NR_M], acc, proc;
	unsigned int i;

	for (i = 0; i < NR_M; i++)
		m[i] = median_metric(c, none, i);
	acc = m[M_ACC];
	proc = m[M_PROC];
	if (!line) {
		seq_buf_printf(&out, "| %s | %llu | %llu | %llu | ", variants[vi].name,
			       div_u64(c->r[0].run_ns, NSEC_PER_USEC), acc, proc);
		seq_buf_printf(&out, "%llu.%02llu | %llu | %llu | %llu | %llu | %llu | %llu |\n",
			       m[M_COAL] / 100, m[M_COAL] % 100, m[M_CPU], m[M_BUSY],
			       m[M_SUBMIT], m[M_P50], m[M_P99], m[M_MAX]);
		return;
	}
	seq_buf_printf(&out, "BENCH engine %s %s ids=%s/%u rate=%llu ", variants[vi].name,
		       w ? "costly" : "trivial", dist_names[d], id_spaces[s], rates[ri]);
	seq_buf_printf(&out, "accepted_per_s=%llu processed_per_s=%llu cpu_ns=%llu busy_ns=%llu ",
		       acc, proc, m[M_CPU], m[M_BUSY]);
	seq_buf_printf(&out, "stale_p50_us=%llu stale_p99_us=%llu stale_max_us=%llu bytes=%u\n",
		       m[M_P50], m[M_P99], m[M_MAX], variants[vi].bytes +
		       (variants[vi].alloc ? (unsigned int)sizeof(struct payload) : 0));
	/*
	 * Below its tasks' own busy-wait, a costly figure cannot be a cost:
	 * say so.  busy_ns falls there in some boots: the none run's busy
	 * time, pacing alone, is more than pacing takes beside work (a CPU
	 * that runs work between ticks goes idle and comes back less often).
	 */
	for (i = M_CPU; w && i <= M_BUSY; i++) {
		if (m[i] >= m[M_FLOOR])
			continue;
		seq_buf_printf(&out, "# %s costly ids=%s/%u rate=%llu: %s %llu, floor %llu\n",
			       variants[vi].name, dist_names[d], id_spaces[s], rates[ri],
			       i == M_CPU ? "cpu_ns" : "busy_ns", m[i], m[M_FLOOR]);
	}
}

/* The combinations the rounds run: costly only on uniform ids over 1024. */
static bool combo(unsigned int w, unsigned int d, unsigned int s)
{
	if (!(workloads & BIT(w)) || !(dists & BIT(d)) || !(sizes & BIT(s)))
		return false;
	return !w || (d == D_UNIFORM && s == 0);
}

/* A cell of the tables: workload, distribution, id space and rate. */
struct where {
	unsigned int w, d, s, ri;
};

#define NR_CELLS	(2 * NR_D * ARRAY_SIZE(id_spaces) * NR_RATES)

static struct where cell_at(unsigned int c)
{
	struct where x;

	x.ri = c % NR_RATES;
	c /= NR_RATES;
	x.s = c % ARRAY_SIZE(id_spaces);
	c /= ARRAY_SIZE(id_spaces);
	x.d = c % NR_D;
	x.w = c / NR_D;
	return x;
}

static void run_cell(struct where x, unsigned int rep)
{
	unsigned int vi;

	costly = x.w;
	for (vi = 0; vi < NR_V; vi++)
		if (want(vi))
			run_one(&variants[vi], x.d, rates[x.ri],
				&cells[x.w][x.d][x.s][x.ri][vi].r[rep]);
}

static void run_rounds(void)
{
	unsigned int rep, c, s;
	struct where x;

	for (s = 0; s < ARRAY_SIZE(id_spaces); s++) {
		if (!(sizes & BIT(s)))
			continue;
		if (set_space(s)) {
			fail("no memory for ids");
			return;
		}
		for (rep = 0; rep < reps; rep++)
			for (c = 0; c < NR_CELLS; c++) {
				x = cell_at(c);
				if (x.s == s && combo(x.w, x.d, x.s))
					run_cell(x, rep);
			}
	}
}

/*
 * Does @vi keep up with @rate: its producers offer at least 95% of it, and
 * its staleness p99 stays within CAP_SLACK_NS, in most of cap_probes runs?
 */
static bool keeps_up(unsigned int vi, u64 rate)
{
	unsigned int probes = max(cap_probes, 1U), i, good = 0;
	struct result r;

	for (i = 0; i < probes; i++) {
		run_one(&variants[vi], D_UNIFORM, rate, &r);
		good += !r.lost && r.p99 <= CAP_SLACK_NS &&
			div64_u64(r.accepted * NSEC_PER_SEC, (u64)run_ms * NSEC_PER_MSEC) * 100 >=
			rate * 95;
		/* Decided either way: the runs left cannot change the majority. */
		if (good * 2 > probes || (i + 1 - good) * 2 >= probes)
			break;
	}
	return good * 2 > probes;
}

/* Capacity of @vi: the highest rate it keeps fresh, within CAP_SLACK_NS. */
static u64 capacity(unsigned int vi, unsigned int w)
{
	u64 lo = 0, hi, rate = cap_start;
	unsigned int i;

	costly = w;
	while (keeps_up(vi, rate)) {
		lo = rate;
		if (rate >= 64ULL * cap_start)
			return lo;
		rate *= 2;
	}
	hi = rate;
	/* Not even the first: down a halving ladder, to a sixty-fourth of it. */
	while (!lo && rate > cap_start / 64) {
		rate /= 2;
		if (keeps_up(vi, rate))
			lo = rate;
		else
			hi = rate;
	}
	for (i = 0; i < cap_steps && lo; i++) {
		rate = (lo + hi) / 2;
		if (keeps_up(vi, rate))
			lo = rate;
		else
			hi = rate;
	}
	return lo;
}

static const char *const table_head =
	"| variant | last processed us (round 1) | accepted/s | processed/s | coalescing | cpu_ns | busy_ns | submit ns | stale p50 us | p99 | max |\n"
	"|---|---|---|---|---|---|---|---|---|---|---|\n";

/* What costly's delays take here, in ns: a hundred of each, mean. */
static void costly_measured(u64 *task_ns, u64 *batch_ns)
{
	u64 t0, t1, t2;
	unsigned int i;

	t0 = ktime_get_ns();
	for (i = 0; i < 100; i++)
		ndelay(TASK_COST_NS);
	t1 = ktime_get_ns();
	for (i = 0; i < 100; i++)
		udelay(BATCH_COST_US);
	t2 = ktime_get_ns();
	*task_ns = div_u64(t1 - t0, 100);
	*batch_ns = div_u64(t2 - t1, 100);
}

static void report(void)
{
	unsigned int c, vi;
	struct where x;
	u64 task_ns, batch_ns;

	costly_measured(&task_ns, &batch_ns);
	task_delay_ns = task_ns;
	seq_buf_printf(&out, "# %u CPUs, %u producers, %u ms a run, tick %u us, %u rounds\n",
		       num_online_cpus(), nr_prods, run_ms, tick_us, reps);
	seq_buf_printf(&out, "# costly: a task's delay takes %llu ns, a batch's %llu ns\n",
		       task_ns, batch_ns);
	seq_buf_printf(&out, "# window 0 for all; per accepted submission, less none's:\n");
	seq_buf_printf(&out, "# cpu_ns, every thread's CPU time but the producers',\n");
	seq_buf_printf(&out, "# and the submit calls'; busy_ns, all CPUs' busy time;\n");
	seq_buf_printf(&out, "# the floor (costly): its tasks' own busy-wait\n");
	for (c = 0; c < NR_CELLS; c++) {
		x = cell_at(c);
		if (!combo(x.w, x.d, x.s))
			continue;
		seq_buf_printf(&out, "\n%s, ids %s over %u, offered %llu/s\n\n%s",
			       x.w ? "costly" : "trivial", dist_names[x.d], id_spaces[x.s],
			       rates[x.ri], table_head);
		for (vi = 1; vi < NR_V; vi++)
			if (want(vi))
				report_cell(x.w, x.d, x.s, x.ri, vi, false);
	}
	for (c = 0; c < NR_CELLS; c++) {
		x = cell_at(c);
		for (vi = 1; vi < NR_V; vi++)
			if (combo(x.w, x.d, x.s) && want(vi))
				report_cell(x.w, x.d, x.s, x.ri, vi, true);
	}
}

static void print_capacity(unsigned int vi, unsigned int w)
{
	u64 max_rate = capacity(vi, w);

	seq_buf_printf(&out, "BENCH capacity engine %s %s ids=uniform/%u max_rate=%llu\n",
		       variants[vi].name, w ? "costly" : "trivial", nr_objs, max_rate);
}

static int bench_run(void)
{
	unsigned int p, vi, w;

	reps = clamp(reps, 1U, MAX_REPS);
	sample_every = max(sample_every, 1U);
	tick_us = max(tick_us, 10U);
	rates[0] = rate1;
	rates[1] = rate2;
	rates[2] = rate3;
	nr_prods = min(num_online_cpus(), MAX_PRODUCERS);
	if (get_cpu_idle_time_us(raw_smp_processor_id(), NULL) == (u64)-1)
		fail("no per-CPU idle time (nohz off?): cpu_ns is 0");

	objs = vzalloc(array_size(id_spaces[ARRAY_SIZE(id_spaces) - 1], sizeof(*objs)));
	lat = vmalloc(array_size(LAT_MAX, sizeof(*lat)));
	cells = vzalloc(sizeof(*cells) * 2);
	payload_cache = KMEM_CACHE(payload, 0);
	own_payload_cache = KMEM_CACHE(own_payload, SLAB_HWCACHE_ALIGN);
	peer_wq = alloc_workqueue("td_eb_peer", WQ_HIGHPRI | (peer_unbound ? WQ_UNBOUND : 0), 0);
	for (p = 0; p < nr_prods; p++)
		zipf_seq[p] = vmalloc(array_size(ZIPF_SEQ, sizeof(u32)));
	if (!objs || !lat || !cells || !payload_cache || !own_payload_cache || !peer_wq ||
	    (nr_prods && !zipf_seq[nr_prods - 1]) || consumers_init())
		goto nomem;
	if (!only_known())
		goto out;

	check_counting();
	run_rounds();
	report();
	if (cap_start && (sizes & 1) && !set_space(0)) {
		for (w = 0; w < 2; w++)
			for (vi = 1; vi < NR_V; vi++)
				if ((workloads & BIT(w)) && want(vi))
					print_capacity(vi, w);
	}
	goto out;
nomem:
	fail("no memory");
out:
	consumers_exit();
	xa_forget();
	if (peer_wq)
		destroy_workqueue(peer_wq);
	kmem_cache_destroy(own_payload_cache);
	kmem_cache_destroy(payload_cache);
	for (p = 0; p < MAX_PRODUCERS; p++)
		vfree(zipf_seq[p]);
	vfree(cells);
	vfree(lat);
	vfree(objs);
	return 0;
}

static int __init td_engine_bench_init(void)
{
	/* Traced from the first measured run on: see run_one(). */
	if (trace_runs)
		tracing_off();
	return bench_main(bench_run);
}

static void __exit td_engine_bench_exit(void)
{
	/* As the module found it: on. */
	if (trace_runs)
		tracing_on();
	bench_exit();
}

module_init(td_engine_bench_init);
module_exit(td_engine_bench_exit);
MODULE_DESCRIPTION("tdispatch: freshness and CPU at a fixed offered load against the coalescers a driver writes");
MODULE_LICENSE("GPL");
