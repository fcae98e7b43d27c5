// SPDX-License-Identifier: GPL-2.0
/*
 * Submission: per-CPU lockless input lists that the acceptor drains.
 *
 * A producer never waits for the acceptor: it pushes onto its CPU's llist
 * and wakes the acceptor (with no window, queues a worker) only when that
 * list was empty, as irq_work does, or as td_input_room() says.
 */
#include <linux/export.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "ids.h"
#include "internal.h"
#include "merge.h"
#include "pending.h"
#include "submit.h"
#include "vec.h"
#include "watch.h"
#include "trace.h"

/* What a task without a deadline, a delay or a key costs: one cache line. */
static_assert(sizeof(struct tdispatch_task) <= 64);

static struct kmem_cache *td_task_cache, *td_ext_cache, *td_merge_task_cache;

int td_task_cache_init(void)
{
	td_task_cache = KMEM_CACHE(tdispatch_task, 0);
	td_ext_cache = KMEM_CACHE(td_task_ext, 0);
	td_merge_task_cache = KMEM_CACHE(td_merge_task, 0);
	if (td_task_cache && td_ext_cache && td_merge_task_cache)
		return 0;
	td_task_cache_exit();
	return -ENOMEM;
}

void td_task_cache_exit(void)
{
	kmem_cache_destroy(td_merge_task_cache);
	kmem_cache_destroy(td_ext_cache);
	kmem_cache_destroy(td_task_cache);
}

/* A task, with room for a deadline, a not-before time and a key if @ext. */
struct tdispatch_task *td_task_alloc(gfp_t gfp, bool ext)
{
	struct tdispatch_task *t;

	if (ext) {
		struct td_task_ext *x = kmem_cache_alloc(td_ext_cache, gfp);

		t = x ? &x->task : NULL;
	} else {
		t = kmem_cache_alloc(td_task_cache, gfp);
	}
	if (t)
		t->flags = ext ? TD_TASK_EXT : 0;
	return t;
}

/* A task of tdispatch_submit_merge(), with its place in a merge table. */
struct tdispatch_task *td_merge_task_alloc(gfp_t gfp)
{
	struct td_merge_task *mt = kmem_cache_alloc(td_merge_task_cache, gfp);

	if (!mt)
		return NULL;
	mt->task.flags = TD_TASK_MERGE_NODE;
	INIT_HLIST_BL_NODE(&mt->merge.node);
	return &mt->task;
}

void td_task_free(struct tdispatch_task *t)
{
	if (t->flags & TD_TASK_MERGE_NODE)
		kmem_cache_free(td_merge_task_cache, td_merge_task(t));
	else if (t->flags & TD_TASK_EXT)
		kmem_cache_free(td_ext_cache, td_ext(t));
	else
		kmem_cache_free(td_task_cache, t);
}

/**
 * tdispatch_task_deadline() - the task's deadline
 * @t: the task
 *
 * Return: the CLOCK_MONOTONIC time after which it is dropped as expired
 * instead of processed, or 0 for none.
 */
ktime_t tdispatch_task_deadline(const struct tdispatch_task *t)
{
	return td_task_deadline(t);
}
EXPORT_SYMBOL_GPL(tdispatch_task_deadline);

/**
 * tdispatch_task_not_before() - the task's not-before time
 * @t: the task
 *
 * Return: the CLOCK_MONOTONIC time before which it did not enter the
 * pending set, or 0 if it was due when it was submitted.
 */
ktime_t tdispatch_task_not_before(const struct tdispatch_task *t)
{
	return td_task_not_before(t);
}
EXPORT_SYMBOL_GPL(tdispatch_task_not_before);

/* A worker that looks free, else this CPU's. */
static void td_queue_worker(struct tdispatch *d)
{
	/* A hint, read without the lock: any worker's work drains the input. */
	u64 free = data_race(READ_ONCE(d->free_workers));

	queue_work(d->wq, &d->workers[free ? __ffs64(free) :
				   raw_smp_processor_id() % d->nr_workers].work);
}

/*
 * Input came to an empty list, or filled its room (td_input_room()).
 * With no window, hand it straight to a worker, as irq_work raises its
 * one work: any worker's work drains the input and cuts its own batch
 * (td_batch_work()).  With a window, the acceptor gathers it.
 */
static void td_wake_for_input(struct tdispatch *d)
{
	if (d->direct)
		td_queue_worker(d);
	else
		wake_up_process(d->acceptor);
}

/*
 * With ->lock and no window, an urgent item's cutter is a worker queued
 * for it: its work drains the input and cuts under the lock whoever
 * queued it (td_locked_work()), as mainline's link watch queues its work
 * for an urgent event; the acceptor's hop would start the batch later, by
 * a wake-up and a walk of the line.  With a window, the item waits for it
 * as any other, and a worker queued now would take the lock for nothing.
 */
static bool td_urgent_queues_worker(struct tdispatch *d)
{
	return d->ops->lock && !d->cfg.max_delay_ns;
}

/*
 * An urgent item waits: the hint, after the item's bit (ordered by the
 * caller's cmpxchg), then a cutter looks (td_cut_batch()): a worker, or
 * the acceptor.
 */
static void td_urgent_kick(struct tdispatch *d)
{
	WRITE_ONCE(d->urgent, 1);
	if (td_urgent_queues_worker(d))
		td_queue_worker(d);
	else
		td_kick(d);
}

/*
 * The undrained tasks a CPU may gather before a submitter wakes anyone; 0:
 * the first wakes.  The acceptor sets ->wake_room when it will look by
 * itself in time.  With no window and every worker busy, a work queued now
 * would only drain the input: no batch can start before a worker's ends,
 * and each worker drains the input as its batch ends (td_end_batch()).
 * Input then gathers up to a batch's worth: for a worker whose batch is
 * held (a lease), the work queued then drains at once, which keeps
 * coalescing and max_buffer's bound near at hand; a worker in ->process()
 * runs it after its batch, as before.  Read after the llist_add(), a full
 * barrier: a worker that ends its batch sets its free bit and then, past
 * an smp_mb(), drains (td_end_batch()), so it takes the task or we see
 * the bit.
 */
static unsigned int td_input_room(struct tdispatch *d)
{
	unsigned int room = READ_ONCE(d->wake_room);
	unsigned int batch = min(d->cfg.max_batch, d->cfg.max_input);

	/* A room of one would wake for every task, not just the first. */
	if (!room && batch > 1 && d->direct && !data_race(READ_ONCE(d->free_workers)))
		room = batch;
	return room;
}

/*
 * Put @t on this CPU's input list (preemption off) and wake the acceptor
 * (with no window, queue a worker) if it must look.  llist_add() is a full
 * barrier: either the acceptor, which, going to sleep, writes ->wake_room
 * before its last look at the lists (td_acceptor_sleep(); with a room it
 * does not look, and wakes by itself; with no window it looks only when
 * it had one), sees the task, or we see ->wake_room clear and wake it.
 * @counted: @t is counted in ->added, which gives this CPU's undrained
 * tasks; with a room (td_input_room()), those at or past it wake (an
 * interrupt's submission may have counted between our count and our
 * look), and an item, uncounted, never does.
 * With @v, a wake-up is owed to td_vec_flush() instead, unless this CPU's
 * input is full: the next task would be refused before the flush.  With
 * @queued, an urgent item's, the caller queues a worker next, which drains
 * it (td_urgent_kick()): no wake-up.
 */
static void td_input_push(struct tdispatch *d, struct td_input *in, struct tdispatch_task *t,
			  bool counted, struct td_vec *v, bool queued)
{
	bool first = llist_add(&t->input, &in->list);
	unsigned int room = td_input_room(d);
	unsigned long undrained = this_cpu_read(d->input->added) - READ_ONCE(in->drained);
	bool wake = !queued && (room ? counted && undrained >= room : first);

	if (v) {
		if (wake)
			v->wake = d;
		wake = v->wake && undrained >= d->cfg.max_input;
		if (wake)
			v->wake = NULL;
	}
	if (wake) {
		this_cpu_inc(d->input->wakeups);
		td_wake_for_input(d);
	}
}

/**
 * td_vec_flush() - pay what the tasks of a vector owe the acceptor
 * @v: their shared state
 *
 * Wakes the acceptor if one of them would have, and has the next task
 * read the clock afresh.  Called every %TD_VEC_FLUSH tasks and at the end.
 */
void td_vec_flush(struct td_vec *v)
{
	struct tdispatch *d = v->wake;

	if (d) {
		this_cpu_inc(d->input->wakeups);
		td_wake_for_input(d);
	}
	*v = (struct td_vec) { };
}

/*
 * Submit @t, allocated by the caller with td_task_alloc(), or NULL if that
 * failed (counted as rejected here); with %TD_TASK_OWNED in @flags, @t is
 * the caller's own memory (with %TD_TASK_OWNER0 and %TD_TASK_OWNER1 its
 * own, which the engine ignores), which ->release() frees (and which
 * must be a struct td_task_ext's, flagged %TD_TASK_EXT, for a deadline, a
 * not-before time or a watch key).  On failure @t is the caller's to
 * free.  Callable from any context: it neither allocates nor
 * sleeps.  @v, for the tasks of one vector only, and only when @d outlives
 * it: they share one clock reading, and a wake-up of the acceptor waits
 * for td_vec_flush().
 */
int td_submit_task(struct tdispatch *d, struct tdispatch_task *t, u64 id, void *payload,
		   const struct tdispatch_submit_opts *o, struct td_watcher *w, u8 flags,
		   struct td_vec *v)
{
	ktime_t not_before = o->not_before;
	struct td_input *in;
	ktime_t now;
	u8 ext;
	int ret;

	/*
	 * @d is only touched with preemption off, which tdispatch_destroy()
	 * waits out with synchronize_rcu() after setting ->dead; and off,
	 * the CPU cannot change under this_cpu_inc().
	 */
	preempt_disable();
	in = this_cpu_ptr(d->input);
	if (!t || (o->watch && o->not_before && !w)) {
		ret = -ENOMEM;
		goto rejected;
	}
	/* Callers make room for what they ask for. */
	ext = t->flags & TD_TASK_EXT;
	if (WARN_ON_ONCE((flags & ~(TD_TASK_OWNED | TD_TASK_OWNER0 | TD_TASK_OWNER1 |
				    TD_TASK_MERGE_NODE)) ||
			 (!ext && (o->deadline || o->not_before || w)))) {
		ret = -EINVAL;
		goto rejected;
	}
	if (o->max_attempts > TDISPATCH_MAX_ATTEMPTS) {
		ret = -EINVAL;
		goto rejected;
	}
	if (READ_ONCE(d->dead)) {
		ret = -ESHUTDOWN;
		goto rejected;
	}
	/* An interrupt's submission may bump ->added under us: read it once. */
	if (this_cpu_read(d->input->added) - READ_ONCE(in->drained) >= d->cfg.max_input) {
		ret = -ENOBUFS;
		goto rejected;
	}
	if (v && !v->now)
		v->now = ktime_get();
	now = v ? v->now : ktime_get();
	if (ktime_after(not_before, now)) {
		/* Reserved here, given back by td_delayed_sync(). */
		if (atomic_inc_return(&d->delayed_total) > d->cfg.max_delayed) {
			atomic_dec(&d->delayed_total);
			ret = -ENOSPC;
			goto rejected;
		}
	} else {
		not_before = 0;
	}
	*t = (struct tdispatch_task) {
		.id = id,
		.payload = payload,
		.submitted = now,
		.max_attempts = o->max_attempts,
		.state = TD_TASK_INPUT,
		.flags = flags | ext | (w ? TD_TASK_WATCHED : 0),
	};
	if (ext) {
		td_ext(t)->deadline = o->deadline;
		td_ext(t)->delay.due = not_before;
		td_ext(t)->watcher = w;
	}
	if (w)
		w->key = o->watch_key;
	/* Counted before it is visible, so drained never exceeds accepted. */
	this_cpu_inc(d->input->added);
	trace_tdispatch_submit(d, id);
	td_input_push(d, in, t, true, v, false);
	/*
	 * After the push (llist_add() is a full barrier), as a file's plain
	 * task does (td_submit_unmerged()): a merge meanwhile counts as the
	 * older of the two.
	 */
	if (unlikely(d->merge.heads) && !(flags & TD_TASK_MERGE_NODE))
		td_merge_forget_id(d, id);
	preempt_enable();
	return 0;

rejected:
	this_cpu_inc(d->input->rejected);
	preempt_enable();
	return ret;
}

/* The allocation first: one that may sleep cannot sit in td_submit_task(). */
static int td_submit(struct tdispatch *d, u64 id, void *payload,
		     const struct tdispatch_submit_opts *o, gfp_t gfp)
{
	struct tdispatch_task *t = td_task_alloc(gfp, o->deadline || o->not_before);
	/* Only a delayed task has anything to watch for. */
	struct td_watcher *w = o->watch && o->not_before ? kmalloc(sizeof(*w), gfp) : NULL;
	int ret = td_submit_task(d, t, id, payload, o, w, 0, NULL);

	if (ret) {
		kfree(w);
		if (t)
			td_task_free(t);
	}
	return ret;
}

/**
 * tdispatch_submit() - hand a task to a dispatcher
 * @d: the dispatcher
 * @id: the task's key; a newer task with the same id replaces this one
 * @payload: passed to ->process() and ->release() untouched
 * @deadline: CLOCK_MONOTONIC time after which the task is dropped as
 *	expired instead of processed; 0 for none
 * @gfp: allocation flags for the task; GFP_ATOMIC from hard or soft irq
 *	context or under a spinlock, GFP_KERNEL where sleeping is allowed
 *
 * Callable from any context that @gfp allows, hard irq included.  Never
 * waits for the acceptor; sleeps only if @gfp lets the allocation sleep.
 * On success the dispatcher owns the task and will call ->release() for
 * it exactly once; on failure @payload stays the caller's.
 *
 * Racing tdispatch_destroy(): @d must be valid when the call starts, as
 * for any object.  A caller that cannot otherwise order its submissions
 * before destroy may call this inside rcu_read_lock() (or with preemption
 * or interrupts off, and so with a @gfp that does not sleep): destroy
 * waits such sections out before it frees @d, and the call returns 0
 * (the task is then processed or cancelled and released before destroy
 * returns) or -ESHUTDOWN.
 *
 * Return: 0 if accepted; -ENOBUFS if this CPU's input list holds
 * max_input undrained tasks; -ESHUTDOWN once tdispatch_destroy() has
 * begun; -ENOMEM if the task could not be allocated.  Every failure is
 * counted as rejected.
 */
int tdispatch_submit(struct tdispatch *d, u64 id, void *payload,
		     ktime_t deadline, gfp_t gfp)
{
	struct tdispatch_submit_opts o = { .deadline = deadline };

	return td_submit(d, id, payload, &o, gfp);
}
EXPORT_SYMBOL_GPL(tdispatch_submit);

/**
 * tdispatch_submit_delayed() - hand a task to a dispatcher, to run later
 * @d: the dispatcher
 * @id: the task's key, as for tdispatch_submit()
 * @payload: as for tdispatch_submit()
 * @not_before: CLOCK_MONOTONIC time before which the task does not enter
 *	the pending set; a time not in the future means at once
 * @deadline: as for tdispatch_submit()
 * @gfp: as for tdispatch_submit()
 *
 * A delayed task waits in the dispatcher's delayed set, counted in
 * &tdispatch_stats.delayed, and enters the pending set when it is due,
 * within the acceptor's wake-up latency.  While it waits, a newer task
 * with the same id replaces it (the newer task's time wins) and
 * tdispatch_cancel() removes it.  Same contexts as tdispatch_submit().
 *
 * Return: as tdispatch_submit(), and -ENOSPC if max_delayed tasks wait.
 */
int tdispatch_submit_delayed(struct tdispatch *d, u64 id, void *payload,
			     ktime_t not_before, ktime_t deadline, gfp_t gfp)
{
	struct tdispatch_submit_opts o = { .deadline = deadline, .not_before = not_before };

	return td_submit(d, id, payload, &o, gfp);
}
EXPORT_SYMBOL_GPL(tdispatch_submit_delayed);

/**
 * tdispatch_submit_with() - hand a task to a dispatcher, with options
 * @d: the dispatcher
 * @id: the task's key, as for tdispatch_submit()
 * @payload: as for tdispatch_submit()
 * @o: its deadline, not-before time, own attempt limit and watch key; see
 *	&struct tdispatch_submit_opts
 * @gfp: as for tdispatch_submit()
 *
 * tdispatch_submit() and tdispatch_submit_delayed() are this with fewer
 * options.  Same contexts as tdispatch_submit().
 *
 * Return: as tdispatch_submit_delayed(), and -EINVAL if
 * @o->max_attempts is above %TDISPATCH_MAX_ATTEMPTS.  A watch key costs
 * one more small allocation with @gfp.
 */
int tdispatch_submit_with(struct tdispatch *d, u64 id, void *payload,
			  const struct tdispatch_submit_opts *o, gfp_t gfp)
{
	return td_submit(d, id, payload, o, gfp);
}
EXPORT_SYMBOL_GPL(tdispatch_submit_with);

/**
 * tdispatch_submit_task() - hand a task in the caller's memory to a dispatcher
 * @d: the dispatcher
 * @t: the task, typically in the same allocation as its payload
 * @id: the task's key, as for tdispatch_submit()
 * @payload: as for tdispatch_submit(); may be the object that holds @t
 *
 * As tdispatch_submit() with no deadline, but the dispatcher allocates
 * nothing: a change is one allocation of the caller's, its payload with
 * @t inside, where tdispatch_submit() allocates a task besides the
 * payload.  @t needs no setting up; at the start of a cache-aligned
 * allocation it takes one cache line on 64-bit.  The dispatcher owns it
 * from a successful call until ->release() is called for it, exactly once, and
 * touches it no more once ->release() has begun, which may free the
 * memory that holds it, as an RCU callback frees the object that holds
 * its rcu_head.  Not to be submitted again before then.
 *
 * Any context, hard irq included: it neither allocates nor sleeps.
 * Racing tdispatch_destroy(): as for tdispatch_submit().
 *
 * Return: 0 if accepted; -ENOBUFS or -ESHUTDOWN as for tdispatch_submit(),
 * counted as rejected, and @t and @payload stay the caller's.
 */
int tdispatch_submit_task(struct tdispatch *d, struct tdispatch_task *t, u64 id,
			  void *payload)
{
	struct tdispatch_submit_opts o = { };

	/* No room for a deadline or a not-before time: td_submit_task() reads this. */
	t->flags = 0;
	return td_submit_task(d, t, id, payload, &o, NULL, TD_TASK_OWNED, NULL);
}
EXPORT_SYMBOL_GPL(tdispatch_submit_task);

/* A cache line each on 64-bit, the task allocated or embedded as an item. */
static_assert(!IS_ENABLED(CONFIG_64BIT) || sizeof(struct tdispatch_task) == 64);
static_assert(sizeof(struct tdispatch_item) == sizeof(struct tdispatch_task));

/*
 * An item's task, made ready to go on @d's input list.  ->owner and
 * ->state are read by tdispatch_run_item() under another dispatcher's
 * lock, if the item is not @d's: it finds neither its own.
 */
static void td_item_prepare(struct tdispatch *d, struct tdispatch_task *t)
{
	/* Field by field: ->item_state is the submitters', changed meanwhile. */
	t->submitted = 0;
	t->attempts = 0;
	t->max_attempts = 0;
	WRITE_ONCE(t->owner, d);
	WRITE_ONCE(t->state, TD_TASK_INPUT);
	t->flags = TD_TASK_ITEM;
	t->queued = 0;
}

/*
 * Submit an item, with TD_ITEM_URGENT in @urgent for an urgent one.  A
 * submission that finds it waiting (and, if urgent, urgent already) merges
 * with no atomic read-modify-write.
 */
static int td_submit_item(struct tdispatch *d, struct tdispatch_item *it, u16 urgent)
{
	struct td_input *in;
	u16 old, new, st;
	bool merge, kick;

	/* Orders the caller's stores before the state, as queue_work() does. */
	smp_mb();
	preempt_disable();
	in = this_cpu_ptr(d->input);
	if (READ_ONCE(d->dead)) {
		this_cpu_inc(d->input->rejected);
		preempt_enable();
		return -ESHUTDOWN;
	}
	this_cpu_inc(d->input->items);
	old = READ_ONCE(it->task.item_state);
	do {
		st = old & ~TD_ITEM_URGENT;
		merge = st == TD_ITEM_QUEUED || st == TD_ITEM_AGAIN;
		if (merge && (old & urgent) == urgent) {
			new = old;	/* nothing to change */
			break;
		}
		new = (merge ? st : st == TD_ITEM_IDLE ? TD_ITEM_QUEUED : TD_ITEM_AGAIN) |
		      (old & TD_ITEM_URGENT) | urgent;
	} while (!try_cmpxchg(&it->task.item_state, &old, new));
	/*
	 * Its hint, unless it was urgent already and waits: it was given
	 * (tdispatch_item_make_urgent() gives none to an item that does not).
	 */
	kick = (new & TD_ITEM_URGENT) && !(merge && (old & TD_ITEM_URGENT));
	if (merge) {
		/* Accepted before merged: see tdispatch_get_stats(). */
		smp_wmb();
		this_cpu_inc(d->input->items_merged);
	} else if (st == TD_ITEM_IDLE) {
		td_item_prepare(d, &it->task);
		trace_tdispatch_submit(d, it->task.id);
		td_input_push(d, in, &it->task, false, NULL, kick && td_urgent_queues_worker(d));
	}
	/* Before destroy can go on: it waits for preemption to come back on. */
	if (kick)
		td_urgent_kick(d);
	preempt_enable();
	return 0;
}

/**
 * tdispatch_submit_item() - hand an item to a dispatcher
 * @d: the dispatcher
 * @it: the item, set up with tdispatch_item_init()
 *
 * Allocates nothing.  If @it waits to be processed already, this costs a
 * full barrier and a per-CPU counter, no atomic read-modify-write, and is
 * counted as accepted and overridden at once: the waiting one processes
 * the object's latest state (the caller's stores before this call are
 * seen by the ->process() that follows).  If @it is being processed, it
 * is processed again afterwards.  The item has no deadline and no
 * not-before time.
 *
 * Any context, hard irq included.  Racing tdispatch_destroy(): as for
 * tdispatch_submit().
 *
 * Return: 0 if accepted; -ESHUTDOWN once tdispatch_destroy() has begun,
 * counted as rejected.
 */
int tdispatch_submit_item(struct tdispatch *d, struct tdispatch_item *it)
{
	return td_submit_item(d, it, 0);
}
EXPORT_SYMBOL_GPL(tdispatch_submit_item);

/**
 * tdispatch_submit_item_urgent() - hand an item to a dispatcher, past its
 *	rate limit
 * @d: the dispatcher
 * @it: the item, set up with tdispatch_item_init()
 *
 * As tdispatch_submit_item(), and the item is urgent until a batch takes
 * it: while the rate limit holds the line back, a free worker takes the
 * urgent items (only those, up to max_batch, from anywhere in line)
 * without tokens, as the link watch lets a carrier that comes up past its
 * one pass a second.  Found waiting, the item becomes urgent where it
 * waits.  A hold-off after a failed batch still applies.  Costs an atomic
 * read-modify-write and a wake-up of the acceptor, or, with
 * &tdispatch_ops.lock and a max_delay_ns of 0, a queue_work() of a
 * worker, which takes the lock and cuts the batch.
 *
 * Any context, hard irq included.  Racing tdispatch_destroy(): as for
 * tdispatch_submit().
 *
 * Return: 0 if accepted; -ESHUTDOWN once tdispatch_destroy() has begun,
 * counted as rejected.
 */
int tdispatch_submit_item_urgent(struct tdispatch *d, struct tdispatch_item *it)
{
	return td_submit_item(d, it, TD_ITEM_URGENT);
}
EXPORT_SYMBOL_GPL(tdispatch_submit_item_urgent);

/**
 * tdispatch_item_make_urgent() - make an item urgent without submitting it
 * @d: the dispatcher it is submitted to
 * @it: the item
 *
 * If @it waits to be processed (submitted and in no batch yet, or
 * submitted again while processed), it becomes urgent, as
 * tdispatch_submit_item_urgent() would make it.  If not (idle, or in a
 * batch), it is marked so that its next submission is urgent, whatever
 * call makes it.  Unlike a submission, this never makes the item run.
 * For an owner that submits an item once for each state it tracks (the
 * link watch's pending bit, which holds a reference to the device) and
 * may learn of the urgency from another CPU before that submission is
 * made.  Not counted as a submission.  The object must be alive, as for a
 * submission.
 *
 * Any context, hard irq included.  Racing tdispatch_destroy(): as for
 * tdispatch_submit().
 *
 * Return: true if @it waits and is urgent; false if it does not wait, or
 * tdispatch_destroy() has begun.
 */
bool tdispatch_item_make_urgent(struct tdispatch *d, struct tdispatch_item *it)
{
	bool waits = false;
	u16 old, st;

	preempt_disable();
	if (READ_ONCE(d->dead))
		goto out;
	old = READ_ONCE(it->task.item_state);
	do {
		if (old & TD_ITEM_URGENT)
			break;
	} while (!try_cmpxchg(&it->task.item_state, &old, old | TD_ITEM_URGENT));
	st = old & ~TD_ITEM_URGENT;
	waits = st == TD_ITEM_QUEUED || st == TD_ITEM_AGAIN;
	/* Its hint, unless it was urgent already; before destroy can go on. */
	if (waits && !(old & TD_ITEM_URGENT))
		td_urgent_kick(d);
out:
	preempt_enable();
	return waits;
}
EXPORT_SYMBOL_GPL(tdispatch_item_make_urgent);

/*
 * A submission whose payload replaced that of a task of its id which
 * waits (a merge table's: merge.c): accepted and overridden at once, as
 * an item's submission that finds the item waiting, and no more is owed.
 * With preemption off (the caller holds a bit lock), which, as for
 * td_submit_task(), tdispatch_destroy() waits out after setting ->dead.
 */
int td_submit_merged(struct tdispatch *d)
{
	lockdep_assert_preemption_disabled();
	if (READ_ONCE(d->dead)) {
		this_cpu_inc(d->input->rejected);
		return -ESHUTDOWN;
	}
	this_cpu_inc(d->input->merged);
	return 0;
}

/* A batch was cut: its items are processed from now on. */
void td_items_inflight(struct tdispatch_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		if (b->tasks[i]->flags & TD_TASK_ITEM)
			/* A full barrier: see tdispatch_submit_item(). */
			xchg(&b->tasks[i]->item_state, TD_ITEM_INFLIGHT);
}

/* A task goes back to pending: an item's submission meanwhile merges into it. */
void td_item_requeued(struct tdispatch *d, struct tdispatch_task *t)
{
	u16 old;

	lockdep_assert_held(&d->lock);
	if (!(t->flags & TD_TASK_ITEM))
		return;
	/* An urgent submission meanwhile keeps its bit. */
	old = READ_ONCE(t->item_state);
	while (!try_cmpxchg(&t->item_state, &old, TD_ITEM_QUEUED | (old & TD_ITEM_URGENT)))
		;
	if ((old & ~TD_ITEM_URGENT) == TD_ITEM_AGAIN)
		d->items_merged++;
	if (old & TD_ITEM_URGENT)
		WRITE_ONCE(d->urgent, 1);
}

/*
 * td_reap() is done with an item's task, before ->release(): the item is
 * free again, or, if it was submitted while processed, is to go round
 * once more (td_item_again(), after ->release()).  Free, it is not
 * touched again here, so ->release() may let its object go, as a work
 * function may free its work_struct.  Return true if it goes round.
 */
bool td_item_ended(struct tdispatch *d, struct tdispatch_task *t,
		   enum tdispatch_outcome outcome)
{
	u16 old = READ_ONCE(t->item_state), new;
	bool again;

	/*
	 * An urgent mark made while it ran stays for its next submission,
	 * unless it ended unprocessed: then the mark was its own.
	 */
	do {
		again = (old & ~TD_ITEM_URGENT) == TD_ITEM_AGAIN;
		new = again ? TD_ITEM_QUEUED | (old & TD_ITEM_URGENT) :
		      outcome == TDISPATCH_OUTCOME_DONE ? old & TD_ITEM_URGENT : TD_ITEM_IDLE;
	} while (!try_cmpxchg(&t->item_state, &old, new));
	if (!again)
		return false;
	atomic_inc(&d->items_round);
	/* Counted before td_item_again() reads the state: see td_urgent_may_come(). */
	smp_mb__after_atomic();
	return true;
}

/*
 * The submission made while it was processed, accepted (and counted
 * queued) when it was made, goes on an input list.  Submissions since
 * td_item_ended() merged into it.
 */
void td_item_again(struct tdispatch *d, struct tdispatch_task *t)
{
	/*
	 * Read before the push: once in line, it may be processed and its
	 * object freed.  An urgent submission after the read finds the
	 * cutters setting the hint again until the count is down (see
	 * td_urgent_may_come()).
	 */
	bool urgent = READ_ONCE(t->item_state) & TD_ITEM_URGENT;

	td_item_prepare(d, t);
	preempt_disable();
	td_input_push(d, this_cpu_ptr(d->input), t, false, NULL,
		      urgent && td_urgent_queues_worker(d));
	preempt_enable();
	/* After the push, a full barrier. */
	atomic_dec(&d->items_round);
	/* Its urgent submission's hint may have been spent while it ran. */
	if (urgent)
		td_urgent_kick(d);
}

/*
 * Move @first, taken off @in (NULL: items only) in arrival order, into
 * the pending set.  Return how many items it held.
 */
unsigned int td_drain_list(struct tdispatch *d, struct td_input *in, struct llist_node *first,
			   ktime_t now, struct list_head *reap)
{
	struct tdispatch_task *t, *next;
	unsigned int n = 0, items = 0, delayed = 0;

	lockdep_assert_held(&d->lock);
	llist_for_each_entry_safe(t, next, first, input) {
		delayed += !!td_task_not_before(t);
		if (t->flags & TD_TASK_ITEM) {
			/* Stamped here, or by the express run that took it. */
			if (!t->submitted)
				t->submitted = now;
			items++;
		}
		td_pending_add(&d->pending, t, now, reap);
		n++;
	}
	/* Pairs with the submitters' READ_ONCE() against max_input. */
	if (in)
		WRITE_ONCE(in->drained, in->drained + n - items);
	d->delayed_drained += delayed;
	return items;
}

/* What express runs shared (worker.c) goes into line, in its order. */
void td_drain_shared(struct tdispatch *d, struct list_head *reap)
{
	struct td_chain *shared = &d->express_shared;

	lockdep_assert_held(&d->lock);
	if (!shared->first)
		return;
	atomic_long_sub(td_drain_list(d, NULL, shared->first, shared->at, reap),
			&d->express_inflight);
	shared->first = NULL;
}

/*
 * Move every CPU's input into the pending set, in each CPU's arrival
 * order, after what express runs shared (taken before any of it).
 */
void td_drain_input(struct tdispatch *d, ktime_t now, struct list_head *reap)
{
	int cpu;

	lockdep_assert_held(&d->lock);
	td_drain_shared(d, reap);
	for_each_possible_cpu(cpu) {
		struct td_input *in = per_cpu_ptr(d->input, cpu);
		struct llist_node *first;

		if (llist_empty(&in->list))
			continue;
		td_grow_ids_now(d, td_input_backlog_cpu(in));
		first = llist_del_all(&in->list);
		if (first)
			td_drain_list(d, in, llist_reverse_order(first), now, reap);
	}
}

/*
 * Give back the reservations of delayed tasks that left the delayed state
 * (promoted, replaced, cancelled, or due by the time they were drained):
 * those drained since the last call, less the growth of the delayed set.
 * Called before the lock is dropped wherever the delayed set may change,
 * so that delayed_total is exact whenever the lock is free.
 */
void td_delayed_sync(struct tdispatch *d)
{
	unsigned int now, back;

	lockdep_assert_held(&d->lock);
	now = d->pending.nr_delayed;
	back = d->delayed_drained + d->delayed_seen - now;
	/* Most calls, one or two a batch, give nothing back: no atomic then. */
	if (back)
		atomic_sub(back, &d->delayed_total);
	d->delayed_drained = 0;
	d->delayed_seen = now;
}

bool td_input_empty(struct tdispatch *d)
{
	int cpu;

	for_each_possible_cpu(cpu)
		if (!llist_empty(&per_cpu_ptr(d->input, cpu)->list))
			return false;
	return true;
}
