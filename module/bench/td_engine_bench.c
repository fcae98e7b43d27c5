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
 *   work        a work_struct embedded in each object, queue_work() on a
 *               WQ_HIGHPRI workqueue: its pending bit coalesces for free
 *   irqw        kernel/irq_work.c's claim-then-raise: a pending bit and an
 *               llist_node in each object, llist_add(), and one
 *               work_struct raised by the first add to an empty list
 *   irqw-alloc  irqw where each change kmalloc()s its payload and
 *               xchg()es it into the object (the older one, never
 *               processed, is freed): the peer of td-task
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
 * network call made once per batch).  Ids: round-robin, uniform and Zipf
 * (s = 1, ranks scattered over the ids), over 1,024 and 1,000,000
 * objects.  Producers: a kthread per online CPU, each offering its share
 * of the rate, paced by an absolute hrtimer sleep every tick_us; a
 * producer that falls behind catches up at once (open loop).
 *
 * Figures, per run (the table gives medians over reps interleaved rounds):
 *   accepted/s   submissions accepted (a merged one included) over the
 *                offered load's time (run_ms)
 *   processed/s  objects (or payloads) a consumer acted on by the end of
 *                the offered load, over its time: work done
 *   coalescing   accepted over processed, the drain included
 *   cpu_ns       busy time of every CPU over the run (from the start of
 *                the producers to the end of the drain), less the none
 *                variant's at the same rate and ids, per accepted
 *                submission
 *   staleness    for every sample_every-th submission of each producer
 *                (when no sample of its object waits already), the time
 *                from just before the change to the start of the first
 *                processing that reflects it: one that reads that
 *                version or a newer one; p50, p99 and max
 * Capacity: the highest offered rate (a doubling ladder from cap_start,
 * then cap_steps bisections) at which a variant's producers offer at
 * least 95% of the rate and staleness p99 stays within 2 ms (the window,
 * 0, + 2 ms); one run a probe.
 *
 * After each run every object's processed version must equal its last
 * one: a variant that loses an update fails the benchmark, which still
 * prints every figure.
 *
 * It runs at load ("make bench"); the results are plain text in
 * /sys/kernel/debug/td_engine_bench/results, BENCH lines last.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

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

#define BENCH_OUT_SIZE	(256 * 1024)
#include "bench.h"

static unsigned int reps = 7;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "interleaved rounds (default 7)");

static unsigned int run_ms = 100;
module_param(run_ms, uint, 0444);
MODULE_PARM_DESC(run_ms, "offered-load time of each run, ms (default 100)");

static unsigned int tick_us = 100;
module_param(tick_us, uint, 0444);
MODULE_PARM_DESC(tick_us, "producers' pacing tick, us (default 100)");

static unsigned int rate1 = 100000, rate2 = 400000, rate3 = 1600000;
module_param(rate1, uint, 0444);
MODULE_PARM_DESC(rate1, "light offered load, submissions/s (default 100000)");
module_param(rate2, uint, 0444);
MODULE_PARM_DESC(rate2, "medium offered load (default 400000)");
module_param(rate3, uint, 0444);
MODULE_PARM_DESC(rate3, "heavy offered load (default 1600000)");

static unsigned int sample_every = 16;
module_param(sample_every, uint, 0444);
MODULE_PARM_DESC(sample_every, "sample every Nth submission of a producer for staleness (default 16)");

static unsigned int dists = 7;
module_param(dists, uint, 0444);
MODULE_PARM_DESC(dists, "id distributions, a mask: 1 round-robin, 2 uniform, 4 zipf (default 7)");

static unsigned int sizes = 3;
module_param(sizes, uint, 0444);
MODULE_PARM_DESC(sizes, "id spaces, a mask: 1 1024 ids, 2 1000000 ids (default 3)");

static unsigned int cap_start = 100000;
module_param(cap_start, uint, 0444);
MODULE_PARM_DESC(cap_start, "capacity search's first rate (default 100000; 0 skips it)");

static unsigned int cap_steps = 3;
module_param(cap_steps, uint, 0444);
MODULE_PARM_DESC(cap_steps, "capacity search's bisections (default 3)");

static bool peer_unbound;
module_param(peer_unbound, bool, 0444);
MODULE_PARM_DESC(peer_unbound, "the peers' workqueue WQ_UNBOUND, as tdispatch's (default 0: per-CPU, the work runs where it was queued)");

static bool verbose;
module_param(verbose, bool, 0444);
MODULE_PARM_DESC(verbose, "print tdispatch's counters after each run (default 0)");

static char *only;
module_param(only, charp, 0444);
MODULE_PARM_DESC(only, "run only the variant of this name, beside none (default: all)");

#define BATCH		64U
#define WORKERS		2U
#define MAX_REPS	15U
#define MAX_PRODUCERS	8U
#define ZIPF_SEQ	65536U
#define LAT_MAX		65536U
#define CAP_SLACK_NS	(2 * NSEC_PER_MSEC)
#define DRAIN_TIMEOUT	(60 * HZ)
#define TASK_COST_NS	2000
#define BATCH_COST_US	20

/* ---- objects, and what every variant shares ------------------------------ */

struct payload {
	u64 ver;
};

struct obj {
	atomic64_t ver;		/* bumped by each change */
	u64 done_ver;		/* the newest version processed */
	u64 stamp_ver;		/* a sampled change's version, or 0 */
	u64 stamp;		/* its time, 0 until written */
	struct payload *newest;	/* irqw-alloc: the change not yet processed */
	union {
		struct tdispatch_item item;
		struct work_struct work;
		struct {
			struct llist_node ll;
			unsigned long pending;
		};
		struct {
			struct list_head fifo;
			bool queued;
		};
	};
};

static struct obj *objs;
static unsigned int nr_objs;
static bool costly;		/* the workload running */
static struct workqueue_struct *peer_wq;
static struct kmem_cache *payload_cache;

static u64 *lat;
static atomic_t lat_n;
static atomic64_t processed;
static atomic64_t replaced;	/* payloads freed unprocessed, replaced by newer ones */
static atomic64_t lost;		/* payloads that ended otherwise: a bug */
static u64 last_processed;

static void note_latency(u64 ns)
{
	unsigned int i = atomic_inc_return(&lat_n) - 1;

	if (i < LAT_MAX)
		lat[i] = ns;
}

/* With verbose, where tdispatch's slow samples (over 2 ms) waited. */
static atomic_t slow_input, slow_pending;

/*
 * The start of one object's processing, of version @ver; @drained: when
 * tdispatch drained its task from the input, or 0.
 */
static void obj_process_at(struct obj *o, u64 ver, u64 drained)
{
	u64 now = ktime_get_ns(), sv = READ_ONCE(o->stamp_ver), s;

	/* A sample this processing reflects; its stamp may not be written yet. */
	if (sv && sv <= ver) {
		s = xchg(&o->stamp, 0);
		if (s) {
			if (verbose && drained && now - s > 2 * NSEC_PER_MSEC)
				atomic_inc(drained - s > now - drained ? &slow_input :
					   &slow_pending);
			note_latency(now > s ? now - s : 0);
			/* The stamp cleared first: a producer's new one is not lost. */
			smp_store_release(&o->stamp_ver, 0);
		}
	}
	if (ver > o->done_ver)
		WRITE_ONCE(o->done_ver, ver);
	if (costly)
		ndelay(TASK_COST_NS);
	atomic64_inc(&processed);
	if (now > READ_ONCE(last_processed))
		WRITE_ONCE(last_processed, now);
}

static void obj_process(struct obj *o, u64 ver)
{
	obj_process_at(o, ver, 0);
}

static void batch_start(void)
{
	if (costly)
		udelay(BATCH_COST_US);
}

struct variant {
	const char *name;
	bool alloc;			/* a payload per change */
	unsigned int bytes;		/* per object, and per pending change if alloc */
	int (*setup)(void);
	/* @o changed to @ver: 0, or an errno for a submission refused. */
	int (*submit)(struct obj *o, u64 ver);
	bool (*idle)(void);		/* nothing left to process */
	void (*teardown)(void);
};

static struct payload *payload_new(u64 ver)
{
	struct payload *p = kmem_cache_alloc(payload_cache, GFP_KERNEL);

	if (p)
		p->ver = ver;
	return p;
}

/* ---- tdispatch ------------------------------------------------------------ */

static struct tdispatch *td;

static enum tdispatch_result td_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	bool alloc = tdispatch_priv(d);
	unsigned int i;

	batch_start();
	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *t = tdispatch_batch_task(b, i);
		struct obj *o;

		if (alloc) {
			struct payload *p = tdispatch_task_payload(t);

			obj_process(&objs[tdispatch_task_id(t)], p->ver);
		} else {
			o = container_of(tdispatch_task_item(t), struct obj, item);
			obj_process_at(o, atomic64_read(&o->ver),
				       ktime_to_ns(tdispatch_task_submitted(t)));
		}
	}
	return TDISPATCH_RESULT_SUCCESS;
}

static void td_release(struct tdispatch *d, struct tdispatch_task *t,
		       enum tdispatch_outcome outcome)
{
	if (!tdispatch_priv(d))
		return;
	if (outcome == TDISPATCH_OUTCOME_OVERRIDDEN)
		atomic64_inc(&replaced);
	else if (outcome != TDISPATCH_OUTCOME_DONE)
		atomic64_inc(&lost);
	kmem_cache_free(payload_cache, tdispatch_task_payload(t));
}

static const struct tdispatch_ops td_ops = {
	.process = td_process,
	.release = td_release,
};

static int td_create(bool alloc)
{
	struct tdispatch_config cfg = {
		.name = "td_engine_bench",
		.max_buffer = max(nr_objs, BATCH),
		.max_batch = BATCH,
		.max_delay_ns = 0,
		.workers = WORKERS,
		.max_input = SZ_1M,
	};

	td = tdispatch_create(&cfg, &td_ops, (void *)(uintptr_t)alloc);
	if (IS_ERR(td)) {
		int ret = PTR_ERR(td);

		td = NULL;
		return ret;
	}
	return 0;
}

static int ti_setup(void)
{
	unsigned int i;

	for (i = 0; i < nr_objs; i++)
		tdispatch_item_init(&objs[i].item, i, NULL);
	return td_create(false);
}

static int ti_submit(struct obj *o, u64 ver)
{
	return tdispatch_submit_item(td, &o->item);
}

static int tt_setup(void)
{
	return td_create(true);
}

static int tt_submit(struct obj *o, u64 ver)
{
	struct payload *p = payload_new(ver);
	int ret;

	if (!p)
		return -ENOMEM;
	ret = tdispatch_submit(td, o - objs, p, 0, GFP_KERNEL);
	if (ret)
		kmem_cache_free(payload_cache, p);
	return ret;
}

static bool td_idle(void)
{
	struct tdispatch_stats st;

	tdispatch_get_stats(td, &st);
	return !st.queued && !st.pending && !st.in_flight;
}

static void td_teardown(void)
{
	struct tdispatch_stats st;

	if (td && verbose) {
		tdispatch_get_stats(td, &st);
		seq_buf_printf(&out, "# %s: accepted %llu done %llu batches %llu wakeups %llu",
			       tdispatch_priv(td) ? "td-task" : "td-item", st.accepted, st.done,
			       st.batches, st.wakeups);
		seq_buf_printf(&out, " slow: input %d pending %d\n", atomic_xchg(&slow_input, 0),
			       atomic_xchg(&slow_pending, 0));
	}
	if (td)
		tdispatch_destroy(td, TDISPATCH_DISCARD, 0);
	td = NULL;
}

/* ---- work: a work_struct embedded in each object -------------------------- */

static void work_fn(struct work_struct *w)
{
	struct obj *o = container_of(w, struct obj, work);

	/* The pending bit was cleared, with a full barrier, before this ran. */
	batch_start();
	obj_process(o, atomic64_read(&o->ver));
}

static int work_setup(void)
{
	unsigned int i;

	for (i = 0; i < nr_objs; i++)
		INIT_WORK(&objs[i].work, work_fn);
	return 0;
}

static int work_submit(struct obj *o, u64 ver)
{
	queue_work(peer_wq, &o->work);
	return 0;
}

static bool peer_idle(void)
{
	flush_workqueue(peer_wq);
	return true;	/* what was missed shows in the objects' versions */
}

/* ---- irqw: claim-then-raise, kernel/irq_work.c's pattern -------------------- */

static LLIST_HEAD(irqw_list);
static bool irqw_alloc;		/* irqw-alloc, not irqw */
static struct work_struct irqw_work;

static void irqw_fn(struct work_struct *w)
{
	struct llist_node *n = llist_reverse_order(llist_del_all(&irqw_list));
	struct obj *o, *tmp;
	unsigned int k = 0;

	llist_for_each_entry_safe(o, tmp, n, ll) {
		if (!(k++ % BATCH))
			batch_start();
		/* Unclaimed before the read: a change meanwhile raises it again. */
		xchg(&o->pending, 0);
		if (irqw_alloc) {
			struct payload *p = xchg(&o->newest, NULL);

			if (p) {
				obj_process(o, p->ver);
				kmem_cache_free(payload_cache, p);
			}
		} else {
			obj_process(o, atomic64_read(&o->ver));
		}
	}
}

static int irqw_setup(void)
{
	unsigned int i;

	irqw_alloc = false;
	init_llist_head(&irqw_list);
	INIT_WORK(&irqw_work, irqw_fn);
	for (i = 0; i < nr_objs; i++) {
		objs[i].pending = 0;
		objs[i].newest = NULL;
	}
	return 0;
}

static int irqwa_setup(void)
{
	irqw_setup();
	irqw_alloc = true;
	return 0;
}

static void irqw_raise(struct obj *o)
{
	/* The version bump was a full barrier: a lockless peek is enough. */
	if (READ_ONCE(o->pending) || xchg(&o->pending, 1))
		return;
	if (llist_add(&o->ll, &irqw_list))
		queue_work(peer_wq, &irqw_work);
}

static int irqw_submit(struct obj *o, u64 ver)
{
	irqw_raise(o);
	return 0;
}

static int irqwa_submit(struct obj *o, u64 ver)
{
	struct payload *p = payload_new(ver), *old;

	if (!p)
		return -ENOMEM;
	old = xchg(&o->newest, p);
	if (old) {
		kmem_cache_free(payload_cache, old);	/* replaced unprocessed */
		atomic64_inc(&replaced);
	}
	irqw_raise(o);
	return 0;
}

static bool irqw_idle(void)
{
	flush_work(&irqw_work);
	return llist_empty(&irqw_list);
}

static void irqw_teardown(void)
{
	unsigned int i;

	cancel_work_sync(&irqw_work);
	for (i = 0; i < nr_objs; i++) {
		if (objs[i].newest)
			kmem_cache_free(payload_cache, objs[i].newest);
		objs[i].newest = NULL;
	}
}

/* ---- spin: a spinlock and a FIFO of embedded entries ---------------------- */

static DEFINE_SPINLOCK(spin_fifo_lock);
static LIST_HEAD(spin_fifo);
static struct work_struct spin_work;

static void spin_fn(struct work_struct *w)
{
	struct obj *batch[BATCH], *o;
	unsigned int n, i;

	do {
		n = 0;
		spin_lock(&spin_fifo_lock);
		while (n < BATCH && !list_empty(&spin_fifo)) {
			o = list_first_entry(&spin_fifo, struct obj, fifo);
			list_del(&o->fifo);
			WRITE_ONCE(o->queued, false);
			batch[n++] = o;
		}
		spin_unlock(&spin_fifo_lock);
		if (!n)
			break;
		/* Unqueued before the reads, as irqw's xchg(). */
		smp_mb();
		batch_start();
		for (i = 0; i < n; i++)
			obj_process(batch[i], atomic64_read(&batch[i]->ver));
		cond_resched();
	} while (n == BATCH);
}

static int spin_setup(void)
{
	unsigned int i;

	INIT_LIST_HEAD(&spin_fifo);
	INIT_WORK(&spin_work, spin_fn);
	for (i = 0; i < nr_objs; i++)
		objs[i].queued = false;
	return 0;
}

static int spin_submit(struct obj *o, u64 ver)
{
	bool first = false;

	if (READ_ONCE(o->queued))
		return 0;
	spin_lock(&spin_fifo_lock);
	if (!o->queued) {
		first = list_empty(&spin_fifo);
		WRITE_ONCE(o->queued, true);
		list_add_tail(&o->fifo, &spin_fifo);
	}
	spin_unlock(&spin_fifo_lock);
	if (first)
		queue_work(peer_wq, &spin_work);
	return 0;
}

static bool spin_idle(void)
{
	bool empty;

	flush_work(&spin_work);
	spin_lock(&spin_fifo_lock);
	empty = list_empty(&spin_fifo);
	spin_unlock(&spin_fifo_lock);
	if (!empty)
		queue_work(peer_wq, &spin_work);
	return empty;
}

static void spin_teardown(void)
{
	cancel_work_sync(&spin_work);
}

/* ---- xarray: XA_MARK_1 as the pending set ----------------------------------- */

static DEFINE_XARRAY(xa);
static unsigned int xa_filled;		/* objects stored in xa */
static struct work_struct xa_work;
static unsigned long xa_cursor;

static unsigned int xa_take(struct obj **batch, unsigned long from, unsigned long to,
			    unsigned int n)
{
	XA_STATE(xas, &xa, from);
	struct obj *o;

	xas_lock(&xas);
	xas_for_each_marked(&xas, o, to, XA_MARK_1) {
		xas_clear_mark(&xas, XA_MARK_1);
		batch[n++] = o;
		xa_cursor = xas.xa_index + 1;
		if (n == BATCH)
			break;
	}
	xas_unlock(&xas);
	return n;
}

static void xa_fn(struct work_struct *w)
{
	struct obj *batch[BATCH];
	unsigned int n, i;

	do {
		/* From the cursor on, then from the start: no id starves. */
		n = xa_take(batch, xa_cursor, ULONG_MAX, 0);
		if (n < BATCH)
			n = xa_take(batch, 0, ULONG_MAX, n);
		if (!n)
			break;
		smp_mb();	/* marks cleared before the reads */
		batch_start();
		for (i = 0; i < n; i++)
			obj_process(batch[i], atomic64_read(&batch[i]->ver));
		cond_resched();
	} while (n == BATCH);
}

static int xa_setup(void)
{
	unsigned int i;
	int ret;

	INIT_WORK(&xa_work, xa_fn);
	xa_cursor = 0;
	if (xa_filled == nr_objs)
		return 0;
	xa_destroy(&xa);
	xa_filled = 0;
	for (i = 0; i < nr_objs; i++) {
		ret = xa_err(xa_store(&xa, i, &objs[i], GFP_KERNEL));
		if (ret)
			return ret;
		if (!(i & 1023))
			cond_resched();
	}
	xa_filled = nr_objs;
	return 0;
}

static int xa_submit(struct obj *o, u64 ver)
{
	unsigned long id = o - objs;

	if (xa_get_mark(&xa, id, XA_MARK_1))
		return 0;
	xa_set_mark(&xa, id, XA_MARK_1);
	queue_work(peer_wq, &xa_work);
	return 0;
}

static bool xa_idle(void)
{
	flush_work(&xa_work);
	if (!xa_marked(&xa, XA_MARK_1))
		return true;
	queue_work(peer_wq, &xa_work);
	return false;
}

static void xa_teardown(void)
{
	cancel_work_sync(&xa_work);
}

/* ---- none: the producers alone ------------------------------------------- */

static int none_setup(void)
{
	return 0;
}

static int none_submit(struct obj *o, u64 ver)
{
	return 0;
}

static bool none_idle(void)
{
	return true;
}

static void none_teardown(void)
{
}

enum { V_NONE, V_TI, V_TT, V_WORK, V_IRQW, V_IRQWA, V_SPIN, V_XA, NR_V };

static struct variant variants[NR_V] = {
	[V_NONE] = { .name = "none", .setup = none_setup, .submit = none_submit,
		     .idle = none_idle, .teardown = none_teardown },
	[V_TI] = { .name = "td-item", .bytes = sizeof(struct tdispatch_item),
		   .setup = ti_setup, .submit = ti_submit, .idle = td_idle,
		   .teardown = td_teardown },
	[V_TT] = { .name = "td-task", .alloc = true, .bytes = sizeof(struct tdispatch_task),
		   .setup = tt_setup, .submit = tt_submit,
		   .idle = td_idle, .teardown = td_teardown },
	[V_WORK] = { .name = "work", .bytes = sizeof(struct work_struct),
		     .setup = work_setup, .submit = work_submit, .idle = peer_idle,
		     .teardown = none_teardown },
	[V_IRQW] = { .name = "irqw", .bytes = sizeof(struct llist_node) + sizeof(unsigned long),
		     .setup = irqw_setup, .submit = irqw_submit, .idle = irqw_idle,
		     .teardown = irqw_teardown },
	[V_IRQWA] = { .name = "irqw-alloc", .alloc = true,
		      .bytes = sizeof(struct llist_node) + sizeof(unsigned long) + sizeof(void *),
		      .setup = irqwa_setup,
		      .submit = irqwa_submit, .idle = irqw_idle, .teardown = irqw_teardown },
	[V_SPIN] = { .name = "spin", .bytes = sizeof(struct list_head) + sizeof(bool),
		     .setup = spin_setup, .submit = spin_submit, .idle = spin_idle,
		     .teardown = spin_teardown },
	[V_XA] = { .name = "xarray", .setup = xa_setup, .submit = xa_submit,
		   .idle = xa_idle, .teardown = xa_teardown },
};

/* ---- ids ------------------------------------------------------------------ */

enum { D_RR, D_UNIFORM, D_ZIPF, NR_D };
static const char *const dist_names[NR_D] = { "rr", "uniform", "zipf" };
static const unsigned int id_spaces[] = { 1024, 1000000 };

/* Zipf (s = 1) samples for each producer, ranks scattered over the ids. */
static u32 *zipf_seq[MAX_PRODUCERS];

static u64 rng_next(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static u32 rng_below(u64 *s, u32 ceil)
{
	return (rng_next(s) >> 32) * ceil >> 32;
}

static int zipf_fill(unsigned int n, unsigned int np)
{
	u64 *cdf = vmalloc(array_size(n, sizeof(u64))), total = 0, s = 0x9e3779b97f4a7c15ULL;
	unsigned int p, i;

	if (!cdf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		total += div_u64(1ULL << 40, i + 1);
		cdf[i] = total;
	}
	for (p = 0; p < np; p++) {
		for (i = 0; i < ZIPF_SEQ; i++) {
			unsigned int lo = 0, hi = n - 1;
			u64 r;

			div64_u64_rem(rng_next(&s), total, &r);
			while (lo < hi) {
				unsigned int mid = (lo + hi) / 2;

				if (cdf[mid] > r)
					hi = mid;
				else
					lo = mid + 1;
			}
			/* 2654435761 is prime to 2 and 5: a bijection on n ids. */
			zipf_seq[p][i] = (u32)(((u64)lo * 2654435761ULL) % n);
		}
	}
	vfree(cdf);
	return 0;
}

/* ---- producers -------------------------------------------------------------- */

struct producer {
	struct task_struct *task;
	struct variant *v;
	unsigned int index, dist;
	u64 rate;		/* its share, submissions/s */
	u64 rng;
	u64 accepted, refused;
	u64 submit_ns, timed;	/* every 16th submit call, timed */
};

static struct producer prods[MAX_PRODUCERS];
static unsigned int nr_prods;
static DECLARE_COMPLETION(go);
static DECLARE_COMPLETION(producers_done);
static atomic_t producers_left;
static u64 run_start, run_end;

static unsigned int next_id(struct producer *p, u64 k)
{
	switch (p->dist) {
	case D_RR:
		return (u32)((k + (u64)p->index * nr_objs / nr_prods) % nr_objs);
	case D_UNIFORM:
		return rng_below(&p->rng, nr_objs);
	default:
		return zipf_seq[p->index][k % ZIPF_SEQ];
	}
}

static void submit_one(struct producer *p, u64 k)
{
	struct obj *o = &objs[next_id(p, k)];
	u64 t = 0, ver;
	bool sampled = false;
	int ret;

	if (!(k % sample_every) && !READ_ONCE(o->stamp_ver))
		t = ktime_get_ns();
	/* The change; fully ordered, so a peek at a pending flag after it is safe. */
	ver = atomic64_inc_return(&o->ver);
	if (t && !cmpxchg(&o->stamp_ver, 0, ver)) {
		WRITE_ONCE(o->stamp, t);
		sampled = true;
	}
	if ((k & 15) == 8) {
		u64 t0 = ktime_get_ns();

		ret = p->v->submit(o, ver);
		p->submit_ns += ktime_get_ns() - t0;
		p->timed++;
	} else {
		ret = p->v->submit(o, ver);
	}
	if (!ret) {
		p->accepted++;
		return;
	}
	p->refused++;
	if (sampled && xchg(&o->stamp, 0)) {
		/* Given back as obj_process() does: the stamp cleared first. */
		smp_store_release(&o->stamp_ver, 0);
	}
}

static int producer_fn(void *arg)
{
	struct producer *p = arg;
	u64 k = 0, now, due, ticks = 0;
	ktime_t next;

	wait_for_completion(&go);
	for (;;) {
		now = ktime_get_ns();
		if (now >= run_end)
			break;
		due = div64_u64((now - run_start) * p->rate, NSEC_PER_SEC);
		while (k < due)
			submit_one(p, k++);
		next = ns_to_ktime(run_start + ++ticks * tick_us * NSEC_PER_USEC);
		if (ktime_to_ns(next) > now) {
			set_current_state(TASK_UNINTERRUPTIBLE);
			schedule_hrtimeout_range(&next, 0, HRTIMER_MODE_ABS);
		} else {
			cond_resched();
		}
	}
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
	return 0;
}

/* ---- one run ---------------------------------------------------------------- */

struct result {
	u64 accepted, processed, run_ns, busy_ns, refused, submit_ns;
	u64 processed_run;	/* processed by the end of the offered load */
	u64 p50, p99, max;
	unsigned int nlat;
	bool lost;
};

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
		us = get_cpu_iowait_time_us(cpu, NULL);
		if (us != (u64)-1)
			sum += us * NSEC_PER_USEC;
	}
	return sum;
}

static int start_producers(struct variant *v, unsigned int dist, u64 rate)
{
	unsigned int cpu, np = 0;

	reinit_completion(&go);
	reinit_completion(&producers_done);
	for_each_online_cpu(cpu) {
		struct producer *p = &prods[np];
		struct task_struct *t;

		if (np == nr_prods)
			break;
		memset(p, 0, sizeof(*p));
		p->v = v;
		p->index = np;
		p->dist = dist;
		p->rate = div_u64(rate + nr_prods - 1 - np, nr_prods);
		p->rng = (u64)get_random_u32() << 32 | get_random_u32() | 1;
		t = kthread_create_on_cpu(producer_fn, p, cpu, "td_eb_prod/%u");
		if (IS_ERR(t)) {
			while (np--)
				kthread_stop(prods[np].task);
			return PTR_ERR(t);
		}
		p->task = t;
		np++;
	}
	atomic_set(&producers_left, np);
	for (cpu = 0; cpu < np; cpu++)
		wake_up_process(prods[cpu].task);
	return 0;
}

static void clear_objects(void)
{
	unsigned int i;

	for (i = 0; i < nr_objs; i++) {
		struct obj *o = &objs[i];

		atomic64_set(&o->ver, 0);
		o->done_ver = 0;
		o->stamp_ver = 0;
		o->stamp = 0;
		if (!(i & 4095))
			cond_resched();
	}
}

/*
 * Every object's newest version processed.  With a payload per change,
 * two producers may hand in their versions out of order, and the one
 * handed in last is what is processed: there, every payload must be
 * processed or replaced instead.
 */
static bool all_fresh(struct variant *v, const struct result *r)
{
	unsigned int i;

	if (v == &variants[V_NONE])
		return true;
	if (v->alloc)
		return atomic64_read(&processed) + atomic64_read(&replaced) == r->accepted;

	for (i = 0; i < nr_objs; i++)
		if (READ_ONCE(objs[i].done_ver) != atomic64_read(&objs[i].ver))
			return false;
	return true;
}

static void run_one(struct variant *v, unsigned int dist, u64 rate, struct result *r)
{
	unsigned long end;
	u64 idle0, idle1, t;
	unsigned int i;
	int ret;

	memset(r, 0, sizeof(*r));
	clear_objects();
	atomic_set(&lat_n, 0);
	atomic64_set(&processed, 0);
	atomic64_set(&replaced, 0);
	atomic64_set(&lost, 0);
	WRITE_ONCE(last_processed, 0);

	ret = v->setup();
	if (ret) {
		fail("%s: setup: %d", v->name, ret);
		r->lost = true;
		goto out;
	}
	ret = start_producers(v, dist, rate);
	if (ret) {
		fail("%s: producers: %d", v->name, ret);
		r->lost = true;
		goto out;
	}
	idle0 = idle_ns();
	run_start = ktime_get_ns();
	run_end = run_start + (u64)run_ms * NSEC_PER_MSEC;
	complete_all(&go);
	wait_for_completion(&producers_done);
	r->processed_run = atomic64_read(&processed);
	for (i = 0, t = 0; i < nr_prods; i++) {
		kthread_stop(prods[i].task);
		r->accepted += prods[i].accepted;
		r->refused += prods[i].refused;
		r->submit_ns += prods[i].submit_ns;
		t += prods[i].timed;
	}
	r->submit_ns = div64_u64(r->submit_ns, max_t(u64, t, 1));
	/*
	 * Until every object's newest version is processed; the CPU time is
	 * read before the check, whose scan of every object is the bench's.
	 */
	end = jiffies + DRAIN_TIMEOUT;
	for (;;) {
		bool idle = v->idle();

		t = ktime_get_ns();
		idle1 = idle_ns();
		if (idle && all_fresh(v, r))
			break;
		if (time_after(jiffies, end)) {
			r->lost = true;
			break;
		}
		usleep_range(200, 400);
	}
	r->run_ns = max(READ_ONCE(last_processed), run_end) - run_start;
	if (idle0 == U64_MAX || idle1 == U64_MAX)
		r->busy_ns = U64_MAX;
	else
		r->busy_ns = (t - run_start) * num_online_cpus() - min(idle1 - idle0,
			(t - run_start) * num_online_cpus());
	r->processed = atomic64_read(&processed);
	r->nlat = min_t(unsigned int, atomic_read(&lat_n), LAT_MAX);
	if (r->nlat) {
		sort(lat, r->nlat, sizeof(*lat), cmp_u64, NULL);
		r->p50 = lat[r->nlat / 2];
		r->p99 = lat[r->nlat * 99 / 100];
		r->max = lat[r->nlat - 1];
	}
	if (r->refused)
		fail("%s %s/%u rate %llu: %llu submissions refused", v->name, dist_names[dist],
		     nr_objs, rate, r->refused);
	if (atomic64_read(&lost))
		r->lost = true;
	if (r->lost)
		fail("%s %s/%u rate %llu: objects left unprocessed or stale", v->name,
		     dist_names[dist], nr_objs, rate);
out:
	v->teardown();
}

/* ---- the rounds --------------------------------------------------------------- */

#define NR_RATES	3

struct cell {
	struct result r[MAX_REPS];
};

/* [workload][dist][space][rate][variant] */
static struct cell (*cells)[NR_D][ARRAY_SIZE(id_spaces)][NR_RATES][NR_V];

static u64 rates[NR_RATES];

static bool want(unsigned int vi)
{
	return vi == V_NONE || !only || !strcmp(only, variants[vi].name);
}

static int set_space(unsigned int s)
{
	int ret = 0;

	if (nr_objs != id_spaces[s]) {
		nr_objs = id_spaces[s];
		xa_filled = 0;
		xa_destroy(&xa);
	}
	if (dists & BIT(D_ZIPF))
		ret = zipf_fill(nr_objs, nr_prods);
	return ret;
}

enum { M_ACC, M_PROC, M_CPU, M_P50, M_P99, M_MAX, M_SUBMIT, M_COAL, NR_M };

static u64 metric(const struct result *r, const struct result *none, unsigned int m)
{
	u64 busy;

	switch (m) {
	/* Over the offered load's time: a backlog drained after it is not a rate. */
	case M_ACC:
		return div64_u64(r->accepted * NSEC_PER_SEC, (u64)run_ms * NSEC_PER_MSEC);
	case M_PROC:
		return div64_u64(r->processed_run * NSEC_PER_SEC, (u64)run_ms * NSEC_PER_MSEC);
	case M_CPU:
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
		seq_buf_printf(&out, "%llu.%02llu | %llu | %llu | %llu | %llu | %llu |\n",
			       m[M_COAL] / 100, m[M_COAL] % 100, m[M_CPU],
			       m[M_SUBMIT], m[M_P50], m[M_P99], m[M_MAX]);
		return;
	}
	seq_buf_printf(&out, "BENCH engine %s %s ids=%s/%u rate=%llu ", variants[vi].name,
		       w ? "costly" : "trivial", dist_names[d], id_spaces[s], rates[ri]);
	seq_buf_printf(&out, "accepted_per_s=%llu processed_per_s=%llu cpu_ns=%llu ",
		       acc, proc, m[M_CPU]);
	seq_buf_printf(&out, "stale_p50_us=%llu stale_p99_us=%llu stale_max_us=%llu bytes=%u\n",
		       m[M_P50], m[M_P99], m[M_MAX], variants[vi].bytes +
		       (variants[vi].alloc ? (unsigned int)sizeof(struct payload) : 0));
}

/* The combinations the rounds run: costly only on uniform ids over 1024. */
static bool combo(unsigned int w, unsigned int d, unsigned int s)
{
	if (!(dists & BIT(d)) || !(sizes & BIT(s)))
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

/* Capacity of @vi: the highest rate it keeps fresh, within CAP_SLACK_NS. */
static u64 capacity(unsigned int vi, unsigned int w)
{
	u64 lo = 0, hi = 0, rate = cap_start;
	struct result r;
	unsigned int i;

	costly = w;
	for (;;) {
		run_one(&variants[vi], D_UNIFORM, rate, &r);
		if (r.lost || r.p99 > CAP_SLACK_NS ||
		    div64_u64(r.accepted * NSEC_PER_SEC, (u64)run_ms * NSEC_PER_MSEC) * 100 <
		    rate * 95) {
			hi = rate;
			break;
		}
		lo = rate;
		if (rate >= 64ULL * cap_start)
			return lo;
		rate *= 2;
	}
	for (i = 0; i < cap_steps && lo; i++) {
		rate = (lo + hi) / 2;
		run_one(&variants[vi], D_UNIFORM, rate, &r);
		if (r.lost || r.p99 > CAP_SLACK_NS ||
		    div64_u64(r.accepted * NSEC_PER_SEC, (u64)run_ms * NSEC_PER_MSEC) * 100 <
		    rate * 95)
			hi = rate;
		else
			lo = rate;
	}
	return lo;
}

static const char *const table_head =
	"| variant | last processed us (round 1) | accepted/s | processed/s | coalescing | cpu_ns | submit ns | stale p50 us | p99 | max |\n"
	"|---|---|---|---|---|---|---|---|---|---|\n";

static void report(void)
{
	unsigned int c, vi;
	struct where x;

	seq_buf_printf(&out, "# %u CPUs, %u producers, %u ms a run, tick %u us, %u rounds\n",
		       num_online_cpus(), nr_prods, run_ms, tick_us, reps);
	seq_buf_printf(&out, "# window 0 for all; cpu_ns: all CPUs' busy time less none's,\n");
	seq_buf_printf(&out, "# per accepted submission\n");
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
	peer_wq = alloc_workqueue("td_eb_peer", WQ_HIGHPRI | (peer_unbound ? WQ_UNBOUND : 0), 0);
	for (p = 0; p < nr_prods; p++)
		zipf_seq[p] = vmalloc(array_size(ZIPF_SEQ, sizeof(u32)));
	if (!objs || !lat || !cells || !payload_cache || !peer_wq ||
	    (nr_prods && !zipf_seq[nr_prods - 1]))
		goto nomem;

	run_rounds();
	report();
	if (cap_start && (sizes & 1) && !set_space(0)) {
		for (w = 0; w < 2; w++)
			for (vi = 1; vi < NR_V; vi++)
				if (want(vi))
					print_capacity(vi, w);
	}
	goto out;
nomem:
	fail("no memory");
out:
	xa_destroy(&xa);
	if (peer_wq)
		destroy_workqueue(peer_wq);
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
	return bench_main(bench_run);
}

static void __exit td_engine_bench_exit(void)
{
	bench_exit();
}

module_init(td_engine_bench_init);
module_exit(td_engine_bench_exit);
MODULE_DESCRIPTION("tdispatch: freshness and CPU at a fixed offered load against the coalescers a driver writes");
MODULE_LICENSE("GPL");
