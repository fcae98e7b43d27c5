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
 * batch, for its counters, with no pending set, cut or clock read in it.
 * An item is its own coalescing point (submitters merge into it while it
 * waits), and its state keeps it out of a second worker's batch: nothing
 * else of the pending set is needed.
 *
 * Anything else goes the pending set's way: a CPU's list that holds a
 * task (it and everything after it on that list, in order), a batch that
 * did not succeed whole (accounted for as a cut one, by td_end_batch(),
 * with the items taken after it behind its retries), more than a batch
 * taken while another worker is free (the rest, for that worker to cut),
 * and, once the line holds something again, the items taken and not yet
 * batched.  Stats count an express run's items in flight from when they
 * are taken until their batch is accounted for.  A drain by another (the
 * acceptor, a query) that puts items in line meanwhile closes the way at
 * the run's next look; until then items taken later may go first.
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

/* The items taken and not batched go into line, in their order. */
static void td_express_spill(struct tdispatch *d, struct llist_node **chain, ktime_t now,
			     struct list_head *reap)
{
	lockdep_assert_held(&d->lock);
	if (*chain)
		atomic_long_sub(td_drain_list(d, NULL, *chain, now, reap), &d->express_inflight);
	*chain = NULL;
}

/*
 * Take every CPU's input, in each CPU's arrival order, onto @chain, which
 * is empty: in flight from now on.  The clock is read for a take that finds
 * input, into @now.  A CPU's list with a task on it goes into line whole
 * instead, and no more is taken: the line's order holds from there.
 * Return false if that happened.
 */
static bool td_express_take(struct tdispatch *d, struct llist_node **chain, ktime_t *now)
{
	struct llist_node **tail = chain;
	LIST_HEAD(reap);
	long taken = 0;
	u64 free;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct td_input *in = per_cpu_ptr(d->input, cpu);
		struct llist_node *first, *node, **end = tail;
		long items = 0;

		if (llist_empty(&in->list))
			continue;
		if (!*now)
			*now = ktime_get();
		first = llist_reverse_order(llist_del_all(&in->list));
		for (node = first; node; node = node->next) {
			struct tdispatch_task *t = llist_entry(node, struct tdispatch_task, input);

			if (!(t->flags & TD_TASK_ITEM))
				break;
			/* Stamped here: an item's submit reads no clock. */
			t->submitted = *now;
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
		atomic_long_add(taken, &d->express_inflight);
		mutex_lock(&d->lock);
		td_grow_ids_now(d, td_input_backlog_cpu(in));
		td_drain_list(d, in, first, *now, &reap);
		/* A free worker need not wait for this run's batch: the acceptor cuts. */
		free = d->free_workers;
		td_unlock_drained(d, &reap);
		if (free)
			td_kick(d);
		return false;
	}
	/* After the lists' xchg(): their submissions were counted first. */
	atomic_long_add(taken, &d->express_inflight);
	return true;
}

/*
 * Give @w back; the bit before the look at the lists, as td_end_batch()
 * sets it.  Return true if the run goes on instead: input came, the way
 * is open and the run has takes left (@more).  Otherwise set @open to
 * whether the work is done: not if the way closed (the line may hold
 * what another drained meanwhile, with no worker free to cut it when it
 * looked), nor if input is left that this run does not take (a
 * submitter that saw every worker busy woke no one): the pending set's
 * way follows.
 */
static bool td_express_stop(struct tdispatch *d, struct td_worker *w, bool more, bool *open)
{
	u64 bit = BIT_ULL(w - d->workers);
	bool input;

	lockdep_assert_held(&d->lock);
	d->free_workers |= bit;
	/* Pairs with the barrier of a submitter's llist_add(). */
	smp_mb();
	input = !td_input_empty(d);
	*open = td_express_open(d);
	if (input && more && *open) {
		d->free_workers &= ~bit;
		return true;
	}
	d->express_runs--;
	*open = *open && !input;
	return false;
}

/*
 * Account for @w's batch, which succeeded, and end it: its items are off
 * the batch before the worker can be free again.  If the way closed, the
 * items taken and not batched go into line.  Return true if the run goes
 * on; if not, @open says whether the work is done (td_express_stop()).
 */
static bool td_express_end(struct tdispatch *d, struct td_worker *w, struct llist_node **chain,
			   bool more, ktime_t now, bool *open)
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
	*open = td_express_open(d);
	if (!*open)
		td_express_spill(d, chain, now, &reap);
	on = *chain || td_express_stop(d, w, more, open);
	/* A waiter, or what only the acceptor does: a stop, a free worker's batch. */
	kick = d->idle_waiters || !*open;
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	if (kick)
		td_kick(d);
	return on;
}

/*
 * More than a batch was taken and another worker is free: the rest goes
 * into line, for that worker to cut while this one processes its batch,
 * as the workers share a backlog.  An express run is for light input.
 */
static void td_express_share(struct tdispatch *d, struct td_worker *w,
			     struct llist_node **chain, ktime_t now)
{
	LIST_HEAD(reap);
	u64 free;

	mutex_lock(&d->lock);
	free = d->free_workers;
	if (free)
		td_express_spill(d, chain, now, &reap);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	if (free)
		queue_work(d->wq, &d->workers[__ffs64(free)].work);
}

/*
 * Up to max_batch items off @chain, in flight in @w's batch.  Cut without
 * the lock, which debugfs holds to show a busy worker's batch: the count
 * is published after the tasks.
 */
static void td_express_cut(struct tdispatch *d, struct td_worker *w, struct llist_node **chain)
{
	struct tdispatch_batch *b = &w->batch;
	unsigned int nr = 0;

	while (*chain && nr < d->cfg.max_batch) {
		b->tasks[nr++] = llist_entry(*chain, struct tdispatch_task, input);
		*chain = (*chain)->next;
	}
	/* Pairs with smp_load_acquire() in td_show_locked(). */
	smp_store_release(&b->nr, nr);
	td_items_inflight(b);
	trace_tdispatch_batch_start(d, b);
}

/* Takes of the input lists one express run makes before the pending set's way. */
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
	struct llist_node *chain = NULL;
	unsigned int takes = 0;
	bool open, met_task = false;
	ktime_t now = 0;

	mutex_lock(&d->lock);
	/* Not free: the acceptor cut it a batch, which it runs first. */
	open = (d->free_workers & bit) && td_express_open(d);
	if (open) {
		d->free_workers &= ~bit;
		d->express_runs++;
	}
	mutex_unlock(&d->lock);
	if (!open)
		return false;
	for (;;) {
		bool more, bad = false, on, kick;
		int res;

		if (!chain) {
			now = 0;
			met_task = !td_express_take(d, &chain, &now);
			takes++;
		}
		more = !met_task && takes < TD_EXPRESS_TAKES;
		if (!chain) {
			mutex_lock(&d->lock);
			on = td_express_stop(d, w, more, &open);
			kick = d->idle_waiters;
			mutex_unlock(&d->lock);
			if (kick)
				td_kick(d);
			if (!on)
				return open;
			continue;
		}
		td_express_cut(d, w, &chain);
		/* A hint, read without the lock; td_express_share() looks again. */
		if (chain && data_race(READ_ONCE(d->free_workers)))
			td_express_share(d, w, &chain, now);
		res = td_process_batch(d, w, &bad);
		/*
		 * Not whole: accounted for as a cut batch, with the items
		 * taken after it in line behind its retries (td_end_batch()).
		 */
		if (res != TDISPATCH_RESULT_SUCCESS || w->batch.marked) {
			w->express = true;
			w->taken = chain;
			if (td_end_batch(d, w, res, bad, true))
				td_run_batches(w);
			return true;
		}
		if (!td_express_end(d, w, &chain, more, now, &open))
			return open;
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
