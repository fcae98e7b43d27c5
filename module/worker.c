// SPDX-License-Identifier: GPL-2.0
/*
 * A worker's work (td_batch_work()): an express run, or the pending set's
 * way (dispatch.c: td_worker_fill(), then its batches back to back), or,
 * with ->lock, one batch cut under it.
 *
 * Express runs: items straight from the input lists to a worker's batch.
 * While a dispatcher with no window has nothing in line and nothing
 * holding the line back (no rate limit, no hold-off, no stop), the batch
 * a worker would cut is the items it drains, in their order: a worker
 * takes them off the lists without the lock, as irq_work's runner takes
 * its list, and hands them to ->process().  The lock is taken once a
 * batch, for its counters, with no pending set, cut or clock read in it
 * (twice for a take that holds more than a batch).  An item is its own
 * coalescing point (submitters merge into it while it waits), and its
 * state keeps it out of a second worker's batch: nothing else of the
 * pending set is needed.  What a take holds beyond a batch is shared,
 * oldest first as taken: each run cuts its next batch from it before it
 * takes the lists again, so the workers share one backlog, as they share
 * the line, though a run may take newer items off the lists before
 * another's rest is shared.  A run that has made its takes queues its
 * work again, as NAPI's poll does at its budget.
 *
 * Anything else goes the pending set's way: a CPU's list that holds a
 * task (the whole list, in order, after what runs shared), a batch that
 * did not succeed whole (accounted for as a cut one, by td_end_batch(),
 * with what runs shared behind its retries), and, once any drain of the
 * input puts something in line, what runs shared.  Stats count an
 * express run's items in flight from when they are taken until their
 * batch is accounted for or a drain puts them in line.  A drain by
 * another (the acceptor, a query) that puts items in line meanwhile
 * closes the way at each run's next look; until then a run's batch may
 * hold items taken after some in line.
 */
#include <linux/llist.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

#include "dispatch.h"
#include "internal.h"
#include "pending.h"
#include "submit.h"
#include "trace.h"
#include "vec.h"
#include "worker.h"

/* May a worker of a dispatcher with no window take items past the line now? */
static bool td_express_open(struct tdispatch *d)
{
	lockdep_assert_held(&d->lock);
	return !d->holds_batches && !d->stopping && !d->pending.flush &&
	       !d->pending.nr_pending && !d->rate.rate && !d->shaper.last_congestion &&
	       !d->shaper.last_transient;
}

/*
 * Take up to a batch of what runs shared (td_express_share()) onto @c,
 * which is empty, if the way is open: older than anything on the lists.
 * Return true if there was any.
 */
static bool td_express_grab(struct tdispatch *d, struct td_chain *c)
{
	struct td_chain *shared = &d->express_shared;
	struct llist_node **end = &shared->first;
	unsigned int n = 0;

	lockdep_assert_held(&d->lock);
	if (!shared->first || !td_express_open(d))
		return false;
	while (*end && n++ < d->cfg.max_batch)
		end = &(*end)->next;
	*c = *shared;
	c->last = end;
	shared->first = *end;
	*end = NULL;
	return true;
}

/*
 * Take every CPU's input, in each CPU's arrival order, onto @c, which is
 * empty: in flight from now on.  The clock is read for a take that finds
 * input.  A CPU's list with a task on it goes into line whole instead,
 * and no more is taken: the line's order holds from there.  Return false
 * if that happened.
 */
static bool td_express_take(struct tdispatch *d, struct td_chain *c)
{
	struct llist_node **tail = &c->first;
	LIST_HEAD(reap);
	long taken = 0;
	u64 free;
	int cpu;

	c->at = 0;
	for_each_possible_cpu(cpu) {
		struct td_input *in = per_cpu_ptr(d->input, cpu);
		struct llist_node *first, *node, **end = tail;
		long items = 0;

		if (llist_empty(&in->list))
			continue;
		if (!c->at)
			c->at = ktime_get();
		first = llist_reverse_order(llist_del_all(&in->list));
		for (node = first; node; node = node->next) {
			struct tdispatch_task *t = llist_entry(node, struct tdispatch_task, input);

			if (!(t->flags & TD_TASK_ITEM))
				break;
			/* Stamped here: an item's submit reads no clock. */
			t->submitted = c->at;
			/* tdispatch_run_item() finds it in a worker's hands. */
			WRITE_ONCE(t->state, TD_TASK_INFLIGHT);
			end = &node->next;
			items++;
		}
		if (!node) {
			*tail = first;
			tail = end;
			taken += items;
			continue;
		}
		c->last = tail;
		atomic_long_add(taken, &d->express_inflight);
		mutex_lock(&d->lock);
		td_grow_ids_now(d, td_input_backlog_cpu(in));
		/* Behind what runs shared, taken before it from the lists. */
		td_drain_shared(d, &reap);
		td_drain_list(d, in, first, c->at, &reap);
		/* A free worker need not wait for this run's batch: the acceptor cuts. */
		free = d->free_workers;
		td_unlock_drained(d, &reap);
		if (free)
			td_kick(d);
		return false;
	}
	c->last = tail;
	/* After the lists' xchg(): their submissions were counted first. */
	atomic_long_add(taken, &d->express_inflight);
	return true;
}

/*
 * Give @w back; the bit before the look at the lists, as td_end_batch()
 * sets it.  Return true if the run goes on instead: input came (or runs
 * shared some), the way is open and the run has takes left (@more).  If
 * the way is open and input is left for a run that may take no more, its
 * work is queued again, as NAPI's poll is at its budget, and other works
 * run first: a submitter that saw every worker busy woke no one.
 * Otherwise set @open to whether the work is done: not if the way closed
 * with input left, nor if the line may hold what another drained
 * meanwhile, with no worker free to cut it when it looked: the pending
 * set's way follows.
 */
static bool td_express_stop(struct tdispatch *d, struct td_worker *w, bool more, bool *open)
{
	u64 bit = BIT_ULL(w - d->workers);
	bool input;

	lockdep_assert_held(&d->lock);
	d->free_workers |= bit;
	/* Pairs with the barrier of a submitter's llist_add(). */
	smp_mb();
	input = d->express_shared.first || !td_input_empty(d);
	*open = td_express_open(d);
	if (input && more && *open) {
		d->free_workers &= ~bit;
		return true;
	}
	d->express_runs--;
	if (input && *open)
		queue_work(d->wq, &w->work);
	else
		*open = *open && !input;
	return false;
}

/*
 * Account for @w's batch, which succeeded, and end it: its items are off
 * the batch before the worker can be free again.  If the way is open, the
 * run's next batch is cut onto @c, which is empty, from what runs shared
 * (while it has takes left: @more).  Return true if the run goes on; if
 * not, @open says whether the work is done (td_express_stop()).
 */
static bool td_express_end(struct tdispatch *d, struct td_worker *w, struct td_chain *c,
			   bool more, bool *open)
{
	struct tdispatch_batch *b = &w->batch;
	LIST_HEAD(reap);
	bool on, kick;

	mutex_lock(&d->lock);
	trace_tdispatch_batch_end(d, b, TDISPATCH_RESULT_SUCCESS);
	d->results[TDISPATCH_RESULT_SUCCESS]++;
	td_express_adopt(d, w);
	td_pending_complete(&d->pending, b->tasks, b->nr, TDISPATCH_OUTCOME_DONE, &reap);
	b->nr = 0;
	*open = true;
	on = (more && td_express_grab(d, c)) || td_express_stop(d, w, more, open);
	/* A waiter, or what only the acceptor does: a stop, a free worker's batch. */
	kick = d->idle_waiters || !*open;
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	if (kick)
		td_kick(d);
	return on;
}

/*
 * More than a batch was taken: the rest is shared, ahead of what comes
 * after, and a free worker's work is queued, before this one processes
 * its batch.  Each run cuts its next batch from it (td_express_grab())
 * before it takes the lists again: the workers share one backlog, in
 * order, with no pending set between them.
 */
static void td_express_share(struct tdispatch *d, struct td_chain *c)
{
	struct td_chain *shared = &d->express_shared;
	u64 free;

	mutex_lock(&d->lock);
	if (shared->first) {
		*shared->last = c->first;
		shared->last = c->last;
	} else {
		*shared = *c;
	}
	c->first = NULL;
	free = d->free_workers;
	mutex_unlock(&d->lock);
	if (free)
		queue_work(d->wq, &d->workers[__ffs64(free)].work);
}

/*
 * Up to max_batch items off @c, in flight in @w's batch.  Cut without
 * the lock, which debugfs holds to show a busy worker's batch: the count
 * is published after the tasks.
 */
static void td_express_cut(struct tdispatch *d, struct td_worker *w, struct td_chain *c)
{
	struct tdispatch_batch *b = &w->batch;
	unsigned int nr = 0;

	while (c->first && nr < d->cfg.max_batch) {
		b->tasks[nr++] = llist_entry(c->first, struct tdispatch_task, input);
		c->first = c->first->next;
	}
	/* Pairs with smp_load_acquire() in td_show_locked(). */
	smp_store_release(&b->nr, nr);
	td_items_inflight(b);
	trace_tdispatch_batch_start(d, b);
}

/* Takes of the input lists, or batches of what runs shared, a run makes. */
#define TD_EXPRESS_TAKES	16

/*
 * Run @w's work as an express run, if the way is open.
 * Return true if the work is done; false if the worker is to go the
 * pending set's way (td_worker_fill()).
 */
static bool td_express_run(struct td_worker *w)
{
	struct tdispatch *d = w->d;
	u64 bit = BIT_ULL(w - d->workers);
	struct td_chain c = { };
	unsigned int takes = 0;
	bool open, met_task = false;

	mutex_lock(&d->lock);
	/* Not free: the acceptor cut it a batch, which it runs first. */
	open = (d->free_workers & bit) && td_express_open(d);
	if (open) {
		d->free_workers &= ~bit;
		d->express_runs++;
		takes += td_express_grab(d, &c);
	}
	mutex_unlock(&d->lock);
	if (!open)
		return false;
	for (;;) {
		bool more, bad = false, on, kick;
		int res;

		if (!c.first) {
			met_task = !td_express_take(d, &c);
			takes++;
		}
		more = !met_task && takes < TD_EXPRESS_TAKES;
		if (!c.first) {
			mutex_lock(&d->lock);
			on = (more && td_express_grab(d, &c)) ||
			     td_express_stop(d, w, more, &open);
			kick = d->idle_waiters;
			mutex_unlock(&d->lock);
			if (kick)
				td_kick(d);
			if (!on)
				return open;
			takes += !!c.first;
			continue;
		}
		td_express_cut(d, w, &c);
		if (c.first)
			td_express_share(d, &c);
		res = td_process_batch(d, w, &bad);
		/*
		 * Not whole: accounted for as a cut batch, with what runs
		 * shared in line behind its retries (td_end_batch()).
		 */
		if (res != TDISPATCH_RESULT_SUCCESS || w->batch.marked) {
			w->express = true;
			if (td_end_batch(d, w, res, bad, true))
				td_run_batches(w);
			return true;
		}
		if (!td_express_end(d, w, &c, more, &open))
			return open;
		/* A batch of what runs shared counts as a take. */
		takes += !!c.first;
		cond_resched();
	}
}

/*
 * With ->lock, a worker cuts its batch only once it holds the lock, one
 * batch a work: a holder of the lock (tdispatch_run_id()) then finds each
 * task pending, or in a batch being processed, never in one cut and
 * waiting for the lock it holds.
 */
static void td_locked_work(struct tdispatch *d, struct td_worker *w)
{
	d->ops->lock(d);
	if (td_worker_fill(d, w))
		td_run_batch(d, w, false);
	else
		d->ops->unlock(d);
}

/* A worker's work: on its kworker, or in a submitter (td_vec_flush_here()). */
static void td_worker_run(struct td_worker *w)
{
	if (w->d->ops->lock) {
		td_locked_work(w->d, w);
		return;
	}
	/*
	 * With a window only the acceptor queues a worker, with its batch
	 * cut; without, a submitter may have queued it, or run it, and items
	 * may go past the pending set.
	 */
	if (w->d->direct && (td_express_run(w) || !td_worker_fill(w->d, w)))
		return;
	td_run_batches(w);
}

void td_batch_work(struct work_struct *work)
{
	td_worker_run(container_of(work, struct td_worker, work));
}

/**
 * td_vec_flush_here() - td_vec_flush() by a caller that may sleep
 * @v: the tasks' shared state
 *
 * With no window, input goes to a worker's work, queued on a kworker.
 * When ->process() only lends its batches out (the char device's parks
 * each as a lease and returns: TD_RESULT_HELD) and a worker is free, a
 * submitter that may sleep runs that work itself: the batch waits for a
 * TAKE with no kworker woken to cut it.  With every worker busy, the
 * work that only drains the input (owed only once a batch's worth waits:
 * td_input_room()) is left to a kworker, not to the producer.
 * Otherwise, or for another dispatcher, as td_vec_flush().
 *
 * Context: process context, holding nothing that ->process() or the
 * engine takes; may sleep.
 */
void td_vec_flush_here(struct td_vec *v)
{
	struct tdispatch *d = v->wake;
	u64 free;

	/* A hint, read without the lock: any worker's work drains the input. */
	free = d ? data_race(READ_ONCE(d->free_workers)) : 0;
	if (!free || !d->direct || !d->holds_batches) {
		td_vec_flush(v);
		return;
	}
	might_sleep();
	this_cpu_inc(d->input->wakeups);
	*v = (struct td_vec) { };
	td_worker_run(&d->workers[__ffs64(free)]);
}
