// SPDX-License-Identifier: GPL-2.0
/*
 * The engine benchmark's variants (engine_main.c): tdispatch's item and
 * allocated task, and the peers a driver author writes, over the objects
 * they all share.
 */
#include "bench.h"
#include "engine.h"

/* ---- objects, and what every variant shares ------------------------------ */

struct obj *objs;
unsigned int nr_objs;
bool costly;		/* the workload running */
struct workqueue_struct *peer_wq;
struct kmem_cache *payload_cache, *own_payload_cache;

u64 *lat;
atomic_t lat_n;
atomic64_t processed;
atomic64_t replaced;	/* payloads freed unprocessed, replaced by newer ones */
atomic64_t lost;		/* payloads that ended otherwise: a bug */
u64 last_processed;

static void note_latency(u64 ns)
{
	unsigned int i = atomic_inc_return(&lat_n) - 1;

	if (i < LAT_MAX)
		lat[i] = ns;
}

/* With verbose, where tdispatch's slow samples (over 2 ms) waited. */
static atomic_t slow_input, slow_pending;

/*
 * Costly runs, with verbose: time a busy worker lost inside one batch, as
 * a gap longer than GAP_NS between two clock reads a step apart (its
 * batch's delay, or one object's start and the next's, each a few us of
 * busy work): its CPU taken away while it was busy.  A worker's own code
 * neither sleeps nor yields within a batch, so on a kernel that does not
 * preempt it the gap is interrupts, or the vCPU not running the guest at
 * all (under TCG: its host thread waiting for a host CPU, or for QEMU).
 * Gaps in which the CPU took none of the interrupts counted here are
 * counted apart: the vCPU stood still for certain.  That is a lower
 * bound, since a stop across a timer's deadline brings the interrupt in
 * with it.  Per CPU, for the same reason: nothing else runs on the CPU
 * within a batch.  On a kernel that preempts, nothing is counted.
 */
#define GAP_NS		(100 * NSEC_PER_USEC)
#define SLOW_NS		(2 * NSEC_PER_MSEC)

struct batch_step {
	u64 ns;			/* 0: no step yet in this batch */
	unsigned long irqs;
};

static DEFINE_PER_CPU(struct batch_step, batch_step);
static atomic64_t gaps, gaps_ns, gap_max, quiet_gaps, quiet_ns;
static atomic_t slow_all;

/* The interrupts this CPU took so far, of those the kernel counts per CPU. */
static unsigned long irqs_here(void)
{
	unsigned long n = raw_cpu_read(kstat.irqs_sum);

#ifdef CONFIG_X86
	n += raw_cpu_read(irq_stat.__nmi_count) + raw_cpu_read(irq_stat.x86_platform_ipis) +
	     raw_cpu_read(irq_stat.apic_irq_work_irqs) + raw_cpu_read(irq_stat.irq_tlb_count);
#ifdef CONFIG_X86_LOCAL_APIC
	n += raw_cpu_read(irq_stat.apic_timer_irqs);
#endif
#ifdef CONFIG_SMP
	n += raw_cpu_read(irq_stat.irq_resched_count) + raw_cpu_read(irq_stat.irq_call_count);
#endif
#endif
	return n;
}

/* @v becomes @x if @x is larger, whoever else raises it meanwhile. */
static void atomic64_raise(atomic64_t *v, u64 x)
{
	s64 old = atomic64_read(v);

	while ((u64)old < x && !atomic64_try_cmpxchg(v, &old, x))
		;
}

static bool gaps_counted(void)
{
	return verbose && costly && !preempt_model_preemptible();
}

/*
 * The step of a costly batch at @now, which a gap since the last one ends.
 * Raw per-CPU accesses: the kernel does not preempt the worker here.
 */
static void note_step(u64 now)
{
	struct batch_step *st = raw_cpu_ptr(&batch_step), last = *st;
	u64 gap = now - last.ns;

	*st = (struct batch_step){ .ns = now, .irqs = irqs_here() };
	if (!last.ns || now < last.ns || gap < GAP_NS)
		return;
	atomic64_inc(&gaps);
	atomic64_add(gap, &gaps_ns);
	if (st->irqs == last.irqs) {
		atomic64_inc(&quiet_gaps);
		atomic64_add(gap, &quiet_ns);
	}
	atomic64_raise(&gap_max, gap);
}

void gaps_take(struct gaps *g)
{
	g->n = atomic64_xchg(&gaps, 0);
	g->ns = atomic64_xchg(&gaps_ns, 0);
	g->max_ns = atomic64_xchg(&gap_max, 0);
	g->quiet = atomic64_xchg(&quiet_gaps, 0);
	g->quiet_ns = atomic64_xchg(&quiet_ns, 0);
	g->slow = atomic_xchg(&slow_all, 0);
}

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
			u64 waited = now > s ? now - s : 0;

			if (verbose && waited > SLOW_NS) {
				atomic_inc(&slow_all);
				if (drained)
					atomic_inc(drained - s > now - drained ? &slow_input :
						   &slow_pending);
			}
			note_latency(waited);
			/* The stamp cleared first: a producer's new one is not lost. */
			smp_store_release(&o->stamp_ver, 0);
		}
	}
	if (ver > o->done_ver)
		WRITE_ONCE(o->done_ver, ver);
	if (gaps_counted())
		note_step(now);
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
	if (!costly)
		return;
	if (!gaps_counted()) {
		udelay(BATCH_COST_US);
		return;
	}
	/* Not measured from the last batch's last step: idle time lies between. */
	raw_cpu_write(batch_step.ns, 0);
	note_step(ktime_get_ns());
	udelay(BATCH_COST_US);
	note_step(ktime_get_ns());
}

static struct payload *payload_new(u64 ver)
{
	struct payload *p = kmem_cache_alloc(payload_cache, GFP_KERNEL);

	if (p)
		p->ver = ver;
	return p;
}

/* ---- tdispatch ------------------------------------------------------------ */

static struct tdispatch *td;

/* What a dispatcher's tasks are: its private pointer. */
enum { TD_ITEMS, TD_TASKS, TD_OWN_TASKS, TD_MERGE_TASKS };

static const char *const td_kind_names[] = { "td-item", "td-task", "td-own-task", "td-merge" };

/*
 * With verbose, items' batches that started over 1 ms after the newest of
 * their tasks was drained (an item is stamped when it is drained): that
 * task waited so long in line behind others, or in a batch cut and not
 * yet run by its worker.
 */
static atomic_t late_batches;
static atomic64_t late_max;

static void note_batch_lag(struct tdispatch_batch *b)
{
	u64 now = ktime_get_ns(), newest = 0, lag;
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		newest = max_t(u64, newest,
			       ktime_to_ns(tdispatch_task_submitted(tdispatch_batch_task(b, i))));
	lag = now > newest ? now - newest : 0;
	if (lag < NSEC_PER_MSEC)
		return;
	atomic_inc(&late_batches);
	atomic64_raise(&late_max, lag);
}

static enum tdispatch_result td_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	bool alloc = tdispatch_priv(d);
	unsigned int i;

	if (verbose && !alloc)
		note_batch_lag(b);
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
	if (tdispatch_priv(d) == (void *)TD_OWN_TASKS)
		kmem_cache_free(own_payload_cache, container_of(t, struct own_payload, task));
	else
		kmem_cache_free(payload_cache, tdispatch_task_payload(t));
}

static const struct tdispatch_ops td_ops = {
	.process = td_process,
	.release = td_release,
};

static int td_create(unsigned long kind)
{
	struct tdispatch_config cfg = {
		.name = "td_engine_bench",
		.max_buffer = max(nr_objs, BATCH),
		.max_batch = BATCH,
		.max_delay_ns = 0,
		.workers = WORKERS,
		.max_input = SZ_1M,
		.flags = kind == TD_MERGE_TASKS ? TDISPATCH_MERGE : 0,
	};

	td = tdispatch_create(&cfg, &td_ops, (void *)kind);
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
	return td_create(TD_ITEMS);
}

static int ti_submit(struct obj *o, u64 ver)
{
	return tdispatch_submit_item(td, &o->item);
}

static int tt_setup(void)
{
	return td_create(TD_TASKS);
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

static int to_setup(void)
{
	return td_create(TD_OWN_TASKS);
}

static int to_submit(struct obj *o, u64 ver)
{
	struct own_payload *p = kmem_cache_alloc(own_payload_cache, GFP_KERNEL);
	int ret;

	if (!p)
		return -ENOMEM;
	p->p.ver = ver;
	ret = tdispatch_submit_task(td, &p->task, o - objs, &p->p);
	if (ret)
		kmem_cache_free(own_payload_cache, p);
	return ret;
}

static int tm_setup(void)
{
	return td_create(TD_MERGE_TASKS);
}

static int tm_submit(struct obj *o, u64 ver)
{
	struct payload *p = payload_new(ver);
	void *old;
	int ret;

	if (!p)
		return -ENOMEM;
	ret = tdispatch_submit_merge(td, o - objs, p, GFP_KERNEL, &old);
	if (ret) {
		kmem_cache_free(payload_cache, p);
	} else if (old) {
		kmem_cache_free(payload_cache, old);	/* replaced unprocessed */
		atomic64_inc(&replaced);
	}
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
		seq_buf_printf(&out, "# %s: accepted %llu done %llu batches %llu",
			       td_kind_names[(unsigned long)tdispatch_priv(td)], st.accepted,
			       st.done, st.batches);
		seq_buf_printf(&out, " wakeups %llu looks %llu", st.wakeups, st.looks);
		seq_buf_printf(&out, " slow: input %d pending %d", atomic_xchg(&slow_input, 0),
			       atomic_xchg(&slow_pending, 0));
		seq_buf_printf(&out, " batches started 1 ms after a drain %d (at most %llu us)\n",
			       atomic_xchg(&late_batches, 0),
			       div_u64(atomic64_xchg(&late_max, 0), NSEC_PER_USEC));
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

void xa_forget(void)
{
	xa_filled = 0;
	xa_destroy(&xa);
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

struct variant variants[NR_V] = {
	[V_NONE] = { .name = "none", .setup = none_setup, .submit = none_submit,
		     .idle = none_idle, .teardown = none_teardown },
	[V_TI] = { .name = "td-item", .bytes = sizeof(struct tdispatch_item),
		   .setup = ti_setup, .submit = ti_submit, .idle = td_idle,
		   .teardown = td_teardown },
	[V_TT] = { .name = "td-task", .alloc = true, .bytes = sizeof(struct tdispatch_task),
		   .setup = tt_setup, .submit = tt_submit,
		   .idle = td_idle, .teardown = td_teardown },
	[V_TO] = { .name = "td-own-task", .alloc = true, .bytes = sizeof(struct tdispatch_task),
		   .setup = to_setup, .submit = to_submit,
		   .idle = td_idle, .teardown = td_teardown },
	/* A task and its place in the merge table: a node, the id and its bucket. */
	[V_TM] = { .name = "td-merge", .alloc = true,
		   .bytes = sizeof(struct tdispatch_task) + sizeof(struct hlist_bl_node) +
			    2 * sizeof(u64),
		   .setup = tm_setup, .submit = tm_submit,
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
