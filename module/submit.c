// SPDX-License-Identifier: GPL-2.0
/*
 * Submission: per-CPU lockless input lists that the acceptor drains.
 *
 * A producer never waits for the acceptor: it pushes onto its CPU's llist
 * and wakes the acceptor only when that list was empty, as irq_work does.
 */
#include <linux/export.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "internal.h"
#include "trace.h"

struct tdispatch_task *td_task_alloc(gfp_t gfp)
{
	return kmem_cache_alloc(td_task_cache, gfp);
}

void td_task_free(struct tdispatch_task *t)
{
	kmem_cache_free(td_task_cache, t);
}

/*
 * Submit @t, allocated by the caller with td_task_alloc(), or NULL if that
 * failed (counted as rejected here).  On failure @t is the caller's to
 * free.  Callable from any context: it neither allocates nor sleeps.
 */
int td_submit_task(struct tdispatch *d, struct tdispatch_task *t, u64 id, void *payload,
		   ktime_t not_before, ktime_t deadline)
{
	struct td_input *in;
	ktime_t now;
	int ret;

	/*
	 * @d is only touched with preemption off, which tdispatch_destroy()
	 * waits out with synchronize_rcu() after setting ->dead; and off,
	 * the CPU cannot change under this_cpu_inc().
	 */
	preempt_disable();
	in = this_cpu_ptr(d->input);
	if (!t) {
		ret = -ENOMEM;
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
	now = ktime_get();
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
		.deadline = deadline,
		.not_before = not_before,
		.state = TD_TASK_INPUT,
	};
	/* Counted before it is visible, so drained never exceeds accepted. */
	this_cpu_inc(d->input->added);
	trace_tdispatch_submit(d, id);
	/*
	 * llist_add() is a full barrier: either the acceptor, which clears
	 * ->armed before it looks at the lists, sees this task, or we see
	 * ->armed clear and wake it.
	 */
	if ((llist_add(&t->input, &in->list) && !READ_ONCE(d->armed)) ||
	    !((this_cpu_read(d->input->added) - READ_ONCE(in->drained)) % d->cfg.max_batch)) {
		this_cpu_inc(d->input->wakeups);
		wake_up_process(d->acceptor);
	}
	preempt_enable();
	return 0;

rejected:
	this_cpu_inc(d->input->rejected);
	preempt_enable();
	return ret;
}

/* The allocation first: one that may sleep cannot sit in td_submit_task(). */
static int td_submit(struct tdispatch *d, u64 id, void *payload, ktime_t not_before,
		     ktime_t deadline, gfp_t gfp)
{
	struct tdispatch_task *t = td_task_alloc(gfp);
	int ret = td_submit_task(d, t, id, payload, not_before, deadline);

	if (ret && t)
		td_task_free(t);
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
	return td_submit(d, id, payload, 0, deadline, gfp);
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
	return td_submit(d, id, payload, not_before, deadline, gfp);
}
EXPORT_SYMBOL_GPL(tdispatch_submit_delayed);

/* Move every CPU's input into the pending set, in each CPU's arrival order. */
void td_drain_input(struct tdispatch *d, ktime_t now, struct list_head *reap)
{
	int cpu;

	lockdep_assert_held(&d->lock);
	for_each_possible_cpu(cpu) {
		struct td_input *in = per_cpu_ptr(d->input, cpu);
		struct tdispatch_task *t, *next;
		struct llist_node *first;
		int n = 0, delayed = 0;

		first = llist_del_all(&in->list);
		if (!first)
			continue;
		first = llist_reverse_order(first);
		llist_for_each_entry_safe(t, next, first, input) {
			delayed += !!t->not_before;
			td_pending_add(&d->pending, t, now, reap);
			n++;
		}
		/* Pairs with the submitters' READ_ONCE() against max_input. */
		WRITE_ONCE(in->drained, in->drained + n);
		d->delayed_drained += delayed;
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
	unsigned int now = d->pending.nr_delayed;

	lockdep_assert_held(&d->lock);
	atomic_sub(d->delayed_drained + d->delayed_seen - now, &d->delayed_total);
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
