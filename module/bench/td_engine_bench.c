// SPDX-License-Identifier: GPL-2.0
/*
 * What does tdispatch cost against what a driver would write instead?  This
 * module runs coalescing workloads, in one boot, seven ways:
 *
 *   tdispatch   tdispatch_submit() with a no-op ->process(), defaults: a
 *               SCHED_FIFO acceptor and a WQ_HIGHPRI workqueue
 *   td-item     tdispatch_submit_item() of a struct tdispatch_item per
 *               id, embedded: nothing allocated, a resubmit of one that
 *               waits is a barrier and a per-CPU counter
 *   td-wide     td-item with a wider window: max_batch wide_batch (1024)
 *               and max_delay wide_delay_us (1 ms), so that a pending id
 *               absorbs the submissions of up to a millisecond; what a
 *               driver that trades a bounded latency for coalescing sets
 *   td-normal   the same as tdispatch with TDISPATCH_NORMAL_PRIORITY:
 *               what the priority buys, measured beside it
 *   queue_work  a work item allocated and queue_work()ed per task, on an
 *               unbound workqueue: no coalescing at all
 *   spin+hash   a spinlock, a hashtable of per-id entries and a FIFO; a
 *               submit for a pending id updates its entry, and one
 *               work_struct drains up to 64 entries per run
 *   sh-wide     spin+hash given td-wide's window: a delayed_work queued
 *               wide_delay_us (rounded up to a tick) after an entry comes
 *               into an empty FIFO, or at once when it holds wide_batch,
 *               draining up to wide_batch a run: the baseline td-wide is
 *               measured against, so that neither gets a window the
 *               other lacks
 *
 * Workloads: hot (ids distinct ids, heavy coalescing) and cold (every id
 * distinct, none), each with one producer kthread per online CPU, and hot
 * with a single producer.  Producers never sleep.  Each round runs every
 * workload and variant once, in that order (A B C D A B C D ...); the
 * table gives the median, min and max over the rounds, and the last lines
 * are machine-readable: BENCH engine <variant> <workload> ...
 *
 * Latency: for hot, every sample_every-th submission stamps its id's slot
 * (unless a stamp waits there already) just before the submit, and the
 * next processing of that id takes it; for cold, the sampled task carries
 * its stamp as its payload.  For queue_work only the stamped task itself
 * takes the stamp.
 *
 * Submit cost: every time_every-th submit call (8) is timed between two
 * clock reads, net of what the two reads cost alone; timing every call
 * would add that bracket (40-80 ns here, half an item's submit or more) to
 * every producer's loop, and so to tasks/s.
 *
 * Before the workloads, the pieces of the submit path are timed one by one
 * on one CPU, so that each change to it is chosen by numbers.
 *
 * It runs at load ("make bench"); the results are plain text in
 * /sys/kernel/debug/td_engine_bench/results.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tdispatch.h>
#include <linux/tick.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "bench.h"

/* Named as td_timer_bench's, so that one BENCH_ARGS serves both. */
static unsigned int max_tasks = 100000;
module_param(max_tasks, uint, 0444);
MODULE_PARM_DESC(max_tasks, "tasks submitted per variant and workload (default 100000)");

static unsigned int reps = 5;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "interleaved rounds over every variant and workload (default 5)");

static unsigned int ids = 1024;
module_param(ids, uint, 0444);
MODULE_PARM_DESC(ids, "distinct task ids of the hot workload (default 1024)");

static unsigned int sample_every = 64;
module_param(sample_every, uint, 0444);
MODULE_PARM_DESC(sample_every, "stamp every Nth submission for latency (default 64)");

static unsigned int delay_us = 100;
module_param(delay_us, uint, 0444);
MODULE_PARM_DESC(delay_us, "tdispatch max_delay in microseconds (default 100)");

static unsigned int wide_delay_us = 1000;
module_param(wide_delay_us, uint, 0444);
MODULE_PARM_DESC(wide_delay_us, "td-wide's max_delay in microseconds (default 1000)");

static unsigned int wide_batch = 1024;
module_param(wide_batch, uint, 0444);
MODULE_PARM_DESC(wide_batch, "td-wide's max_batch (default 1024)");

static unsigned int time_every = 8;
module_param(time_every, uint, 0444);
MODULE_PARM_DESC(time_every, "time every Nth submit call, not all (default 8; 1 times each)");

static unsigned int workers = 2;
module_param(workers, uint, 0444);
MODULE_PARM_DESC(workers, "tdispatch workers, batches in flight at once (default 2)");

static char *only;
module_param(only, charp, 0444);
MODULE_PARM_DESC(only, "run only the variant of this name (default: all)");

static unsigned int wls = 7;
module_param(wls, uint, 0444);
MODULE_PARM_DESC(wls, "workloads to run, a mask: 1 hot, 2 cold, 4 hot with one producer (default 7)");

static bool pieces = true;
module_param(pieces, bool, 0444);
MODULE_PARM_DESC(pieces, "time the submit path piece by piece first (default 1; 0, to profile the workloads alone, leaves the timing bracket in submit ns)");

#define BATCH		64U
#define DRAIN_TIMEOUT	(300 * HZ)
#define MAX_REPS	15U

/* ---- what every variant shares ------------------------------------------ */

struct workload {
	const char *name;
	bool cold;			/* every id distinct */
	bool one;			/* one producer, not one per CPU */
};

static const struct workload workloads[] = {
	{ .name = "hot" },
	{ .name = "cold", .cold = true },
	{ .name = "hot", .one = true },
};

static const struct workload *wl;	/* the one running */
static u64 *stamps;		/* hot: per id, submit time of a sampled task, or 0 */
static u64 *lat;		/* latency samples */
static unsigned int lat_max;
static atomic_t lat_n;
static atomic64_t processed, batches;
static u64 last_processed;

static void note_latency(u64 ns)
{
	unsigned int i = atomic_inc_return(&lat_n) - 1;

	if (i < lat_max)
		lat[i] = ns;
}

/* @stamp: a cold task's submit time (its payload), or 0; @take: hot, sampled. */
static void note_processed(u64 id, u64 stamp, bool take)
{
	u64 now = ktime_get_ns(), s;

	if (wl->cold) {
		if (stamp)
			note_latency(now - stamp);
	} else if (take) {
		s = xchg(&stamps[id], 0);
		if (s)
			note_latency(now - s);
	}
	if (now > READ_ONCE(last_processed))
		WRITE_ONCE(last_processed, now);
}

struct variant {
	const char *name;
	unsigned int bytes;			/* per pending item */
	unsigned int flags;			/* tdispatch's config */
	bool wide;				/* wide_batch, wide_delay_us */
	int (*setup)(struct variant *v);
	int (*submit)(u64 id, u64 stamp, bool sampled);
	int (*drain)(void);			/* until all is processed */
	void (*teardown)(void);
};

/* ---- tdispatch ------------------------------------------------------------ */

static struct tdispatch *td;
static struct tdispatch_stats td_stats;	/* once drained, for the report */

static enum tdispatch_result td_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *t = tdispatch_batch_task(b, i);

		note_processed(tdispatch_task_id(t), (uintptr_t)tdispatch_task_payload(t), true);
	}
	atomic64_add(b->nr, &processed);
	atomic64_inc(&batches);
	return TDISPATCH_SUCCESS;
}

static void td_release(struct tdispatch *d, struct tdispatch_task *t,
		       enum tdispatch_outcome outcome)
{
}

static const struct tdispatch_ops td_ops = {
	.process = td_process,
	.release = td_release,
};

static int td_setup(struct variant *v)
{
	struct tdispatch_config cfg = {
		.name = "td_engine_bench",
		.max_buffer = wl->cold ? SZ_1M : max3(ids, BATCH, v->wide ? wide_batch : 0),
		.max_batch = v->wide ? wide_batch : BATCH,
		.max_delay_ns = (u64)(v->wide ? wide_delay_us : delay_us) * NSEC_PER_USEC,
		.workers = workers,
		.max_input = clamp_t(unsigned int, max_tasks, 1, SZ_1M),
		.flags = v->flags,
	};

	/* td_task_cache is tdispatch's own; its objects are this size. */
	v->bytes = sizeof(struct tdispatch_task);
	memset(&td_stats, 0, sizeof(td_stats));
	td = tdispatch_create(&cfg, &td_ops, NULL);
	return PTR_ERR_OR_ZERO(td);
}

static int td_submit(u64 id, u64 stamp, bool sampled)
{
	return tdispatch_submit(td, id, (void *)(uintptr_t)stamp, 0, GFP_KERNEL);
}

/* td-item: one item per id, embedded in an array as a driver's objects. */
static struct tdispatch_item *items;
static unsigned long nr_items;

static unsigned long item_index(u64 id)
{
	return wl->cold ? (id >> 40) * max_tasks + (id & (BIT_ULL(40) - 1)) : id;
}

static int ti_setup(struct variant *v)
{
	unsigned long i;
	int ret = td_setup(v);

	v->bytes = sizeof(struct tdispatch_item);	/* the caller's, none allocated */
	for (i = 0; !ret && i < nr_items; i++)
		tdispatch_item_init(&items[i], wl->cold ? (i / max_tasks) << 40 | i % max_tasks : i,
				    NULL);
	return ret;
}

static int ti_submit(u64 id, u64 stamp, bool sampled)
{
	struct tdispatch_item *it = &items[item_index(id)];

	/* Cold items go once each: the stamp rides as the payload. */
	if (wl->cold)
		it->task.payload = (void *)(uintptr_t)stamp;
	return tdispatch_submit_item(td, it);
}

static int td_drain(void)
{
	unsigned long end = jiffies + DRAIN_TIMEOUT;
	struct tdispatch_stats st;

	for (;;) {
		tdispatch_get_stats(td, &st);
		if (!st.queued && !st.pending && !st.in_flight)
			break;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(500, 1000);
	}
	td_stats = st;
	if (st.done != atomic64_read(&processed) || st.dropped || st.expired)
		return -EIO;
	return 0;
}

static void td_teardown(void)
{
	if (!IS_ERR_OR_NULL(td))
		tdispatch_destroy(td, TDISPATCH_DISCARD, 0);
	td = NULL;
}

/* ---- baseline A: queue_work() per task ------------------------------------ */

struct qw_item {
	struct work_struct work;
	u64 id;
	u64 stamp;
	bool sampled;
};

static struct kmem_cache *qw_cache;
static struct workqueue_struct *qw_wq;

static void qw_fn(struct work_struct *w)
{
	struct qw_item *it = container_of(w, struct qw_item, work);

	note_processed(it->id, it->stamp, it->sampled);
	atomic64_inc(&processed);
	atomic64_inc(&batches);
	kmem_cache_free(qw_cache, it);
}

static int qw_setup(struct variant *v)
{
	qw_cache = KMEM_CACHE(qw_item, 0);
	if (!qw_cache)
		return -ENOMEM;
	v->bytes = kmem_cache_size(qw_cache);
	qw_wq = alloc_workqueue("td_eb_qw", WQ_UNBOUND, 0);
	return qw_wq ? 0 : -ENOMEM;
}

static int qw_submit(u64 id, u64 stamp, bool sampled)
{
	struct qw_item *it = kmem_cache_alloc(qw_cache, GFP_KERNEL);

	if (!it)
		return -ENOMEM;
	INIT_WORK(&it->work, qw_fn);
	it->id = id;
	it->stamp = stamp;
	it->sampled = sampled;
	queue_work(qw_wq, &it->work);
	return 0;
}

static int qw_drain(void)
{
	flush_workqueue(qw_wq);
	return 0;
}

static void qw_teardown(void)
{
	if (qw_wq)
		destroy_workqueue(qw_wq);
	qw_wq = NULL;
	kmem_cache_destroy(qw_cache);
	qw_cache = NULL;
}

/* ---- baseline B: spinlock + hashtable coalescer --------------------------- */

struct sh_ent {
	struct hlist_node hnode;
	struct list_head fifo;
	u64 id;
	u64 payload;
};

static DEFINE_HASHTABLE(sh_hash, 12);
static DEFINE_SPINLOCK(sh_lock);
static LIST_HEAD(sh_fifo);
static struct kmem_cache *sh_cache;
static struct workqueue_struct *sh_wq;
static struct delayed_work sh_work;
static unsigned int sh_n;		/* entries on sh_fifo */
static unsigned int sh_batch;		/* most entries one run drains */
static unsigned long sh_delay;		/* jiffies from a first entry to the run */

static struct sh_ent *sh_find(u64 id)
{
	struct sh_ent *e;

	hash_for_each_possible(sh_hash, e, hnode, id)
		if (e->id == id)
			return e;
	return NULL;
}

static void sh_fn(struct work_struct *w)
{
	struct sh_ent *e, *tmp;
	LIST_HEAD(batch);
	unsigned int n = 0;
	bool more, full;

	spin_lock(&sh_lock);
	while (n < sh_batch && !list_empty(&sh_fifo)) {
		e = list_first_entry(&sh_fifo, struct sh_ent, fifo);
		hash_del(&e->hnode);
		list_move_tail(&e->fifo, &batch);
		n++;
	}
	sh_n -= n;
	more = sh_n;
	full = sh_n >= sh_batch;
	spin_unlock(&sh_lock);
	/* What came meanwhile waits its window, unless it fills a batch. */
	if (more)
		queue_delayed_work(sh_wq, &sh_work, full ? 0 : sh_delay);
	if (!n)
		return;
	list_for_each_entry_safe(e, tmp, &batch, fifo) {
		note_processed(e->id, e->payload, true);
		kmem_cache_free(sh_cache, e);
	}
	atomic64_add(n, &processed);
	atomic64_inc(&batches);
}

static int sh_setup(struct variant *v)
{
	sh_cache = KMEM_CACHE(sh_ent, 0);
	if (!sh_cache)
		return -ENOMEM;
	v->bytes = kmem_cache_size(sh_cache);
	sh_n = 0;
	sh_batch = v->wide ? wide_batch : BATCH;
	sh_delay = v->wide ? usecs_to_jiffies(wide_delay_us) : 0;
	INIT_DELAYED_WORK(&sh_work, sh_fn);
	sh_wq = alloc_workqueue("td_eb_sh", WQ_UNBOUND, 0);
	return sh_wq ? 0 : -ENOMEM;
}

static bool sh_update(u64 id, u64 payload)
{
	struct sh_ent *e = sh_find(id);

	if (e)
		e->payload = payload;	/* the newer payload wins */
	return e;
}

static int sh_submit(u64 id, u64 stamp, bool sampled)
{
	bool found, filled = false;
	struct sh_ent *n;

	spin_lock(&sh_lock);
	found = sh_update(id, stamp);
	spin_unlock(&sh_lock);
	if (found)
		return 0;
	/* Not pending: allocate outside the lock, then look again. */
	n = kmem_cache_alloc(sh_cache, GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	n->id = id;
	n->payload = stamp;
	spin_lock(&sh_lock);
	found = sh_update(id, stamp);
	if (!found) {
		hash_add(sh_hash, &n->hnode, id);
		list_add_tail(&n->fifo, &sh_fifo);
		filled = ++sh_n == sh_batch;
	}
	spin_unlock(&sh_lock);
	if (found)
		kmem_cache_free(sh_cache, n);
	else if (filled && sh_delay)
		mod_delayed_work(sh_wq, &sh_work, 0);	/* full: now, not at the tick */
	else
		queue_delayed_work(sh_wq, &sh_work, sh_delay);	/* delay 0: queue_work() */
	return 0;
}

static int sh_drain(void)
{
	unsigned long end = jiffies + DRAIN_TIMEOUT;
	bool empty;

	/* The work queues itself again while entries are left. */
	for (;;) {
		flush_delayed_work(&sh_work);
		spin_lock(&sh_lock);
		empty = list_empty(&sh_fifo);
		spin_unlock(&sh_lock);
		if (empty)
			return 0;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
	}
}

static void sh_teardown(void)
{
	struct sh_ent *e, *tmp;

	if (sh_wq) {
		cancel_delayed_work_sync(&sh_work);
		destroy_workqueue(sh_wq);
	}
	sh_wq = NULL;
	list_for_each_entry_safe(e, tmp, &sh_fifo, fifo) {
		hash_del(&e->hnode);
		list_del(&e->fifo);
		kmem_cache_free(sh_cache, e);
	}
	kmem_cache_destroy(sh_cache);
	sh_cache = NULL;
}

static struct variant variants[] = {
	{ .name = "tdispatch", .setup = td_setup, .submit = td_submit,
	  .drain = td_drain, .teardown = td_teardown },
	{ .name = "td-item", .setup = ti_setup, .submit = ti_submit,
	  .drain = td_drain, .teardown = td_teardown },
	{ .name = "td-wide", .setup = ti_setup, .submit = ti_submit,
	  .drain = td_drain, .teardown = td_teardown, .wide = true },
	{ .name = "td-normal", .setup = td_setup, .submit = td_submit,
	  .drain = td_drain, .teardown = td_teardown, .flags = TDISPATCH_NORMAL_PRIORITY },
	{ .name = "queue_work", .setup = qw_setup, .submit = qw_submit,
	  .drain = qw_drain, .teardown = qw_teardown },
	{ .name = "spin+hash", .setup = sh_setup, .submit = sh_submit,
	  .drain = sh_drain, .teardown = sh_teardown },
	{ .name = "sh-wide", .setup = sh_setup, .submit = sh_submit,
	  .drain = sh_drain, .teardown = sh_teardown, .wide = true },
};

enum { V_TD, V_TDI, V_TDW, V_TDN, V_QW, V_SH, V_SHW, NR_V };

/* ---- producers ------------------------------------------------------------ */

struct producer {
	struct task_struct *task;
	struct variant *v;
	unsigned int index;
	u64 rng;
	u64 cost_ns;		/* summed around the timed submit calls */
	u64 timed;		/* how many were timed */
	u64 cpu_ns;		/* the thread's own CPU time, once done */
	unsigned int rejected;
};

static DECLARE_COMPLETION(go);
static DECLARE_COMPLETION(producers_done);
static atomic_t producers_left;
static atomic_t unclaimed;	/* tasks no producer has taken yet */

/* Tasks a producer takes at a time. */
#define CLAIM		64

/*
 * Producers take their tasks CLAIM at a time, not a fixed share each: one
 * whose CPU is shared with the engine's threads (or the baseline's worker)
 * would otherwise finish last while the other CPUs idle, and the end of
 * the run would no longer have a producer on every CPU.
 */
static unsigned int claim_tasks(void)
{
	int left = atomic_read(&unclaimed), n;

	do {
		n = min_t(int, left, CLAIM);
		if (n <= 0)
			return 0;
	} while (!atomic_try_cmpxchg(&unclaimed, &left, left - n));
	return n;
}

static u32 rng_below(u64 *state, u32 ceil)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return ((*state * 0x2545f4914f6cdd1dULL) >> 32) * ceil >> 32;
}

/* The @i-th submission of producer @p. */
static void submit_one(struct producer *p, unsigned int i)
{
	bool sample = !(i % sample_every), sampled = false;
	u64 id, stamp = 0, t;
	int err;

	if (wl->cold) {
		id = (u64)p->index << 40 | i;
		if (sample)
			stamp = ktime_get_ns();
	} else {
		id = rng_below(&p->rng, ids);
		if (sample)
			sampled = !cmpxchg(&stamps[id], 0, ktime_get_ns());
	}
	if (i % time_every == time_every / 2) {
		t = ktime_get_ns();
		err = p->v->submit(id, stamp, sampled);
		p->cost_ns += ktime_get_ns() - t;
		p->timed++;
	} else {
		err = p->v->submit(id, stamp, sampled);
	}
	if (err) {
		p->rejected++;
		if (sampled)
			WRITE_ONCE(stamps[id], 0);
	}
	if (!(i & 255))
		cond_resched();
}

static int producer_fn(void *arg)
{
	struct producer *p = arg;
	unsigned int i = 0, n;

	wait_for_completion(&go);
	while ((n = claim_tasks()))
		for (n += i; i < n; i++)
			submit_one(p, i);
	if (atomic_dec_and_test(&producers_left))
		complete(&producers_done);
	/* Wait for kthread_stop(), so that the module outlives this thread. */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	/* Brought up to date when it slept above. */
	p->cpu_ns = current->se.sum_exec_runtime;
	return 0;
}

/* ---- one run ---------------------------------------------------------------- */

struct result {
	u64 submitted, rejected, cost_ns, timed, run_ns;
	u64 prod_cpu_ns, busy_ns;	/* busy_ns: U64_MAX if idle time is unknown */
	unsigned int idle_pm;		/* per mille of the CPUs' time */
	u64 processed, batches, p50, p99;
	unsigned int nlat, bytes, producers;
};

static struct result results[ARRAY_SIZE(workloads)][NR_V][MAX_REPS];

static unsigned int nr_producers(void)
{
	return wl->one ? 1 : num_online_cpus();
}

/* Every online CPU's idle time in ns, or U64_MAX where it is not kept. */
static u64 idle_ns(void)
{
	u64 sum = 0, us;
	int cpu;

	for_each_online_cpu(cpu) {
		us = get_cpu_idle_time_us(cpu, NULL);
		if (us == (u64)-1)
			return U64_MAX;
		sum += us * NSEC_PER_USEC;
	}
	return sum;
}

static int run_producers(struct variant *v, struct producer *prods, u64 *start, u64 *idle)
{
	unsigned int cpu, np = 0, nr = nr_producers();
	int ret = 0;

	atomic_set(&unclaimed, max_tasks);
	reinit_completion(&go);
	reinit_completion(&producers_done);
	for_each_online_cpu(cpu) {
		struct producer *p = &prods[np];
		struct task_struct *t;

		if (np == nr)
			break;
		memset(p, 0, sizeof(*p));
		p->v = v;
		p->index = np;
		p->rng = (u64)get_random_u32() << 32 | get_random_u32() | 1;
		t = kthread_create_on_cpu(producer_fn, p, cpu, "td_eb_prod/%u");
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			break;
		}
		p->task = t;
		np++;
	}
	atomic_set(&producers_left, np);
	if (!ret) {
		unsigned int i;

		for (i = 0; i < np; i++)
			wake_up_process(prods[i].task);
		*idle = idle_ns();
		*start = ktime_get_ns();
		complete_all(&go);
		wait_for_completion(&producers_done);
	}
	/* Unwoken ones exit without running producer_fn(). */
	while (np--)
		kthread_stop(prods[np].task);
	return ret;
}

static void run_variant(struct variant *v, struct producer *prods, struct result *r)
{
	unsigned int i, nr = nr_producers();
	u64 start = 0, t, idle0, idle1;
	int ret;

	memset(r, 0, sizeof(*r));
	memset(stamps, 0, ids * sizeof(*stamps));
	atomic_set(&lat_n, 0);
	atomic64_set(&processed, 0);
	atomic64_set(&batches, 0);
	WRITE_ONCE(last_processed, 0);
	r->producers = nr;

	ret = v->setup(v);
	if (ret) {
		fail("%s %s: setup: %d", v->name, wl->name, ret);
		goto out;
	}
	r->bytes = v->bytes;
	ret = run_producers(v, prods, &start, &idle0);
	if (ret) {
		fail("%s %s: producers: %d", v->name, wl->name, ret);
		goto out;
	}
	t = ktime_get_ns();
	for (i = 0; i < nr; i++) {
		r->cost_ns += prods[i].cost_ns;
		r->timed += prods[i].timed;
		r->rejected += prods[i].rejected;
		r->prod_cpu_ns += prods[i].cpu_ns;
	}
	r->submitted = max_tasks - r->rejected;
	if (!r->timed)
		fail("%s %s: no submit was timed (time_every=%u)", v->name, wl->name, time_every);
	ret = v->drain();
	if (ret)
		fail("%s %s: drain: %d", v->name, wl->name, ret);
	/* From the first submission to the last task processed. */
	r->run_ns = max(READ_ONCE(last_processed), t) - start;
	/* Busy CPU time up to the end of the drain, which polls gently. */
	idle1 = idle_ns();
	t = ktime_get_ns() - start;
	r->busy_ns = idle0 == U64_MAX || idle1 == U64_MAX || idle1 - idle0 > t * num_online_cpus() ?
		     U64_MAX : t * num_online_cpus() - (idle1 - idle0);
	if (r->busy_ns != U64_MAX)
		r->idle_pm = 1000 - div64_u64(r->busy_ns * 1000, t * num_online_cpus());
	r->processed = atomic64_read(&processed);
	r->batches = atomic64_read(&batches);
	r->nlat = min_t(unsigned int, atomic_read(&lat_n), lat_max);
	if (r->nlat) {
		sort(lat, r->nlat, sizeof(*lat), cmp_u64, NULL);
		r->p50 = lat[r->nlat / 2];
		r->p99 = lat[r->nlat * 99 / 100];
	}
	if (r->rejected)
		fail("%s %s: %llu submissions failed", v->name, wl->name, r->rejected);
	if (!r->processed || r->processed > r->submitted)
		fail("%s %s: %llu processed of %llu", v->name, wl->name, r->processed,
		     r->submitted);
	if ((v == &variants[V_QW] || wl->cold) && r->processed != r->submitted)
		fail("%s %s: %llu processed of %llu", v->name, wl->name, r->processed,
		     r->submitted);
out:
	v->teardown();
}

/* ---- the pieces of the submit path --------------------------------------- */

#define PIECE_N		100000U

static DEFINE_PER_CPU(unsigned long, piece_counter);

/*
 * What the two clock reads around each submit add to its time, with
 * nothing between them, in tenths of ns: taken off the submit cost, so
 * that the ratios compare the submits and not the clock.
 */
static u64 bracket_tenths;

static u64 piece_ns(u64 t0)
{
	return div_u64((ktime_get_ns() - t0) * 10, PIECE_N);	/* tenths of ns */
}

static void print_piece(const char *what, u64 tenths)
{
	seq_buf_printf(&out, "| %s | %llu.%llu |\n", what, tenths / 10, tenths % 10);
}

/* One CPU, nothing else running: what each step of tdispatch_submit() costs. */
static void bench_pieces(void)
{
	struct kmem_cache *cache = kmem_cache_create("td_eb_piece",
						     sizeof(struct tdispatch_task), 0, 0, NULL);
	struct tdispatch_config cfg = {
		.name = "td_eb_pieces", .max_buffer = 1024, .max_batch = BATCH,
		.workers = 2, .max_input = SZ_1M,
		.max_delay_ns = (u64)delay_us * NSEC_PER_USEC,
	};
	struct llist_node *nodes = kcalloc(BATCH, sizeof(*nodes), GFP_KERNEL);
	struct llist_head head;
	unsigned int i;
	u64 t0;

	if (!cache || !nodes) {
		fail("pieces: no memory");
		goto out;
	}
	seq_buf_printf(&out, "| submit path piece, one CPU | ns per call |\n|---|---|\n");
	t0 = ktime_get_ns();
	for (i = 0; i < PIECE_N; i++)
		kmem_cache_free(cache, kmem_cache_alloc(cache, GFP_KERNEL));
	print_piece("task allocation (kmem_cache_alloc + free)", piece_ns(t0));
	t0 = ktime_get_ns();
	for (i = 0; i < PIECE_N; i++)
		ktime_get();
	print_piece("clock read (ktime_get)", piece_ns(t0));
	bracket_tenths = 0;
	for (i = 0; i < PIECE_N; i++) {
		u64 t = ktime_get_ns();

		bracket_tenths += ktime_get_ns() - t;
	}
	bracket_tenths = div_u64(bracket_tenths * 10, PIECE_N);
	print_piece("timing bracket around a submit (taken off submit ns/task)", bracket_tenths);
	t0 = ktime_get_ns();
	for (i = 0; i < PIECE_N; i++) {
		preempt_disable();
		this_cpu_inc(piece_counter);
		preempt_enable();
	}
	print_piece("preempt off/on + this_cpu_inc (the counters)", piece_ns(t0));
	t0 = ktime_get_ns();
	for (i = 0; i < PIECE_N; i++) {
		rcu_read_lock();
		rcu_read_unlock();
	}
	print_piece("rcu_read_lock + unlock (percpu_ref_tryget_live's guard)", piece_ns(t0));
	init_llist_head(&head);
	t0 = ktime_get_ns();
	for (i = 0; i < PIECE_N; i++) {
		llist_add(&nodes[i % BATCH], &head);
		if (i % BATCH == BATCH - 1)
			llist_del_all(&head);
	}
	print_piece("llist_add (the one atomic)", piece_ns(t0));
	t0 = ktime_get_ns();
	for (i = 0; i < PIECE_N; i++)
		wake_up_process(current);
	print_piece("wake_up_process of a running task", piece_ns(t0));
	td = tdispatch_create(&cfg, &td_ops, NULL);
	if (IS_ERR(td)) {
		fail("pieces: create: %ld", PTR_ERR(td));
		td = NULL;
		goto out;
	}
	wl = &workloads[0];
	t0 = ktime_get_ns();
	for (i = 0; i < PIECE_N; i++) {
		tdispatch_submit(td, i % ids, NULL, 0, GFP_KERNEL);
		if (!(i & 255))
			cond_resched();
	}
	print_piece("tdispatch_submit, whole", piece_ns(t0));
	td_teardown();
out:
	kfree(nodes);
	kmem_cache_destroy(cache);
}

/* ---- output ----------------------------------------------------------------- */

/* The figures of a run, as the table and the BENCH lines give them. */
enum {
	F_SUBMIT_NS, F_TASKS_S, F_COALESCE, F_P50, F_P99, NR_F,
	/* Where the CPU time went, in a table of its own. */
	F_PROD_CPU = NR_F, F_REST_CPU, F_IDLE, F_BATCH, NR_F_ALL
};

/* CPU time not spent in the producers, per task; 0 if unknown. */
static u64 rest_cpu(const struct result *r)
{
	if (r->busy_ns == U64_MAX || r->busy_ns < r->prod_cpu_ns)
		return 0;
	return div64_u64((r->busy_ns - r->prod_cpu_ns) * 10, max_t(u64, r->submitted, 1));
}

static u64 figure(const struct result *r, unsigned int f)
{
	u64 x;

	switch (f) {
	case F_SUBMIT_NS:	/* tenths of ns, net of the bracket */
		x = div64_u64(r->cost_ns * 10, max_t(u64, r->timed, 1));
		return x > bracket_tenths ? x - bracket_tenths : 0;
	case F_TASKS_S:
		return div64_u64(r->submitted * NSEC_PER_SEC, max_t(u64, r->run_ns, 1));
	case F_COALESCE:	/* hundredths */
		return div64_u64(r->submitted * 100, max_t(u64, r->processed, 1));
	case F_P50:		/* tenths of us */
		return div_u64(r->p50, 100);
	case F_P99:
		return div_u64(r->p99, 100);
	case F_PROD_CPU:	/* tenths of ns per task */
		return div64_u64(r->prod_cpu_ns * 10, max_t(u64, r->submitted, 1));
	case F_REST_CPU:
		return rest_cpu(r);
	case F_IDLE:		/* tenths of a percent of the CPUs' time */
		return r->idle_pm;
	default:		/* tenths of a task per batch */
		return div64_u64(r->processed * 10, max_t(u64, r->batches, 1));
	}
}

struct spread {
	u64 med, min, max;
};

/* The median, min and max of the @n values of @x, which it sorts. */
static struct spread spread_sort(u64 *x, unsigned int n)
{
	sort(x, n, sizeof(x[0]), cmp_u64, NULL);
	return (struct spread) { .med = x[n / 2], .min = x[0], .max = x[n - 1] };
}

static struct spread spread_of(unsigned int w, unsigned int v, unsigned int f)
{
	u64 x[MAX_REPS];
	unsigned int i, n = min(reps, MAX_REPS);

	for (i = 0; i < n; i++)
		x[i] = figure(&results[w][v][i], f);
	return spread_sort(x, n);
}

/* Figure @f of @v over that of @base, round by round, in thousandths. */
static struct spread ratio_spread(unsigned int w, unsigned int v, unsigned int base,
				  unsigned int f)
{
	u64 x[MAX_REPS];
	unsigned int i, n = min(reps, MAX_REPS);

	for (i = 0; i < n; i++)
		x[i] = div64_u64(figure(&results[w][v][i], f) * 1000,
				 max_t(u64, figure(&results[w][base][i], f), 1));
	return spread_sort(x, n);
}

/* @scale: 1, 10 or 100, the figure's fixed point. */
static void print_fixed(u64 x, unsigned int scale)
{
	if (scale == 1)
		seq_buf_printf(&out, "%llu", x);
	else if (scale == 10)
		seq_buf_printf(&out, "%llu.%llu", x / 10, x % 10);
	else
		seq_buf_printf(&out, "%llu.%02llu", x / 100, x % 100);
}

static const unsigned int scales[NR_F_ALL] = { 10, 1, 100, 10, 10, 10, 10, 10, 10 };

static void print_spread(unsigned int w, unsigned int v, unsigned int f)
{
	struct spread sp = spread_of(w, v, f);

	seq_buf_printf(&out, " ");
	print_fixed(sp.med, scales[f]);
	seq_buf_printf(&out, " (");
	print_fixed(sp.min, scales[f]);
	seq_buf_printf(&out, "-");
	print_fixed(sp.max, scales[f]);
	seq_buf_printf(&out, ") |");
}

/* x / y of medians, to three places. */
static void print_ratio(const char *what, u64 x, u64 y, char end)
{
	u64 r = div64_u64(x * 1000, max_t(u64, y, 1));

	seq_buf_printf(&out, " %s %llu.%03llux%c", what, r / 1000, r % 1000, end);
}

/* Whether @v ran in workload @w: not, if left out with only=. */
static bool ran(unsigned int w, unsigned int v)
{
	return results[w][v][0].producers;
}

static void print_ratios(unsigned int w, unsigned int vi, unsigned int base)
{
	static const char * const names[NR_F] = {
		"submit_ns", "tasks/s", "coalescing", "p50", "p99",
	};
	unsigned int f;

	if (!ran(w, vi) || !ran(w, base))
		return;
	seq_buf_printf(&out, "# ratio %s/%s, %s, %u producer(s), medians:",
		       variants[vi].name, variants[base].name, workloads[w].name,
		       results[w][vi][0].producers);
	for (f = 0; f < NR_F; f++)
		print_ratio(names[f], spread_of(w, vi, f).med, spread_of(w, base, f).med,
			    f == NR_F - 1 ? '\n' : ',');
	/*
	 * The host's speed can change within a run: a round's two variants
	 * ran seconds apart, so the ratio within each round is the steadier.
	 */
	seq_buf_printf(&out, "# ratio %s/%s, %s, %u producer(s), per round, median (min-max):",
		       variants[vi].name, variants[base].name, workloads[w].name,
		       results[w][vi][0].producers);
	for (f = 0; f < NR_F; f++) {
		struct spread sp = ratio_spread(w, vi, base, f);

		seq_buf_printf(&out, " %s %llu.%03llux (%llu.%03llu-%llu.%03llu)%c", names[f],
			       sp.med / 1000, sp.med % 1000, sp.min / 1000, sp.min % 1000,
			       sp.max / 1000, sp.max % 1000, f == NR_F - 1 ? '\n' : ',');
	}
}

static void print_tables(void)
{
	unsigned int w, v, f;

	seq_buf_printf(&out, "| workload | producers | variant | submit ns/task | tasks/s | ");
	seq_buf_printf(&out, "coalescing | p50 us | p99 us | bytes/item |\n");
	seq_buf_printf(&out, "|---|---|---|---|---|---|---|---|---|\n");
	for (w = 0; w < ARRAY_SIZE(workloads); w++) {
		for (v = 0; v < NR_V; v++) {
			if (!ran(w, v))
				continue;
			seq_buf_printf(&out, "| %s | %u | %s |", workloads[w].name,
				       results[w][v][0].producers, variants[v].name);
			for (f = 0; f < NR_F; f++)
				print_spread(w, v, f);
			seq_buf_printf(&out, " %u |\n", results[w][v][0].bytes);
		}
	}
	seq_buf_printf(&out, "# each cell: median (min-max) of %u interleaved rounds; ",
		       min(reps, MAX_REPS));
	seq_buf_printf(&out, "tasks/s: accepted tasks from the first submit to the last ");
	seq_buf_printf(&out, "processed; coalescing: submitted / processed; submit ns: net of ");
	seq_buf_printf(&out, "the timing bracket's %llu.%llu ns\n", bracket_tenths / 10,
		       bracket_tenths % 10);
	seq_buf_printf(&out, "| workload | producers | variant | producers' CPU ns/task | ");
	seq_buf_printf(&out, "other CPU ns/task | idle %% | tasks/batch |\n");
	seq_buf_printf(&out, "|---|---|---|---|---|---|---|\n");
	for (w = 0; w < ARRAY_SIZE(workloads); w++) {
		for (v = 0; v < NR_V; v++) {
			if (!ran(w, v))
				continue;
			seq_buf_printf(&out, "| %s | %u | %s |", workloads[w].name,
				       results[w][v][0].producers, variants[v].name);
			for (f = F_PROD_CPU; f < NR_F_ALL; f++)
				print_spread(w, v, f);
			seq_buf_printf(&out, "\n");
		}
	}
	seq_buf_printf(&out, "# CPU time per accepted task: the producer threads' own, and the ");
	seq_buf_printf(&out, "rest of the CPUs' busy time (the engine's or the baseline's ");
	seq_buf_printf(&out, "threads, interrupts); idle: of the CPUs' time over the run\n");
	for (w = 0; w < ARRAY_SIZE(workloads); w++) {
		print_ratios(w, V_TDI, V_SH);
		print_ratios(w, V_TDI, V_QW);
		print_ratios(w, V_TDW, V_SH);
		print_ratios(w, V_TDW, V_SHW);
		print_ratios(w, V_TD, V_SH);
		print_ratios(w, V_TD, V_QW);
		print_ratios(w, V_TD, V_TDN);
	}
	for (w = 0; w < ARRAY_SIZE(workloads); w++) {
		for (v = 0; v < NR_V; v++) {
			if (!ran(w, v))
				continue;
			seq_buf_printf(&out, "BENCH engine %s %s producers=%u submit_ns=",
				       variants[v].name, workloads[w].name,
				       results[w][v][0].producers);
			print_fixed(spread_of(w, v, F_SUBMIT_NS).med, 10);
			seq_buf_printf(&out, " tasks_per_s=%llu p50_us=",
				       spread_of(w, v, F_TASKS_S).med);
			print_fixed(spread_of(w, v, F_P50).med, 10);
			seq_buf_printf(&out, " p99_us=");
			print_fixed(spread_of(w, v, F_P99).med, 10);
			seq_buf_printf(&out, " bytes=%u\n", results[w][v][0].bytes);
		}
	}
}

static int bench_run(void)
{
	unsigned int rep, v, w, nr = num_online_cpus();
	struct producer *prods;

	if (!ids || !sample_every || !max_tasks || !reps || !time_every || !wide_batch)
		return -EINVAL;
	lat_max = max_tasks / sample_every + nr + 1;
	nr_items = max_t(unsigned long, ids, (unsigned long)nr * max_tasks);
	items = vmalloc_array(nr_items, sizeof(*items));
	stamps = vmalloc_array(ids, sizeof(*stamps));
	lat = vmalloc_array(lat_max, sizeof(*lat));
	prods = kcalloc(nr, sizeof(*prods), GFP_KERNEL);
	if (!stamps || !lat || !prods || !items) {
		kfree(prods);
		return -ENOMEM;
	}

	seq_buf_printf(&out, "# kernel %s, HZ=%d, %u CPUs, %u tasks per run, hot over %u ids, ",
		       utsname()->release, HZ, nr, max_tasks, ids);
	seq_buf_printf(&out, "latency sampled every %u, tdispatch max_delay %u us, ",
		       sample_every, delay_us);
	seq_buf_printf(&out, "td-wide max_batch %u max_delay %u us, every %u submit(s) timed\n",
		       wide_batch, wide_delay_us, time_every);
	if (pieces)
		bench_pieces();
	for (rep = 0; rep < min(reps, MAX_REPS); rep++) {
		for (w = 0; w < ARRAY_SIZE(workloads); w++) {
			if (!(wls & BIT(w)))
				continue;
			wl = &workloads[w];
			for (v = 0; v < NR_V; v++)
				if (!only || !strcmp(only, variants[v].name))
					run_variant(&variants[v], prods, &results[w][v][rep]);
			seq_buf_printf(&out, "# round %u %s: tdispatch accepted %llu done %llu ",
				       rep, wl->name, td_stats.accepted, td_stats.done);
			seq_buf_printf(&out, "overridden %llu wakeups %llu\n",
				       td_stats.overridden, td_stats.wakeups);
		}
	}
	print_tables();
	kfree(prods);
	return 0;
}

/* bench_run() and what it leaves for its tables to free. */
static int bench_all(void)
{
	int ret = bench_run();

	vfree(lat);
	vfree(stamps);
	vfree(items);
	return ret;
}

static int __init td_engine_bench_init(void)
{
	return bench_main(bench_all);
}

static void __exit td_engine_bench_exit(void)
{
	bench_exit();
}

module_init(td_engine_bench_init);
module_exit(td_engine_bench_exit);
MODULE_DESCRIPTION("tdispatch: engine against queue_work and a spinlock+hash coalescer");
MODULE_LICENSE("GPL");
