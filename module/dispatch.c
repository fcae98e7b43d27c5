// SPDX-License-Identifier: GPL-2.0
/*
 * The acceptor kthread and the workers.
 *
 * The acceptor drains the input lists into the pending set and cuts
 * batches into free workers, at most one each, queueing each on the
 * dispatcher's workqueue.  A worker runs ->process() without any lock,
 * then files the result: done, failed, or back to the head of the line
 * with the shaper told to hold the acceptor off.  A ->process() that
 * holds its batch (the char device's lease) has it filed later, by
 * td_batch_finish() in whoever ends it.
 */
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "dispatch.h"
#include "events.h"
#include "ids.h"
#include "internal.h"
#include "merge.h"
#include "pending.h"
#include "periodic.h"
#include "shaper.h"
#include "submit.h"
#include "trace.h"
#include "vec.h"

/* Longest the acceptor lets input gather without looking at it. */
#define TD_GATHER_NS	NSEC_PER_MSEC

/* Release what ended, outside the lock: trace, ->release(), free. */
void td_reap(struct tdispatch *d, struct list_head *reap)
{
	struct tdispatch_task *t, *next;
	unsigned int n = 0;

	list_for_each_entry_safe(t, next, reap, order) {
		enum tdispatch_outcome outcome = t->state;
		bool observed = !list_empty(&d->observers);
		struct tdispatch_event e;

		if (outcome == TDISPATCH_OUTCOME_OVERRIDDEN)
			trace_tdispatch_coalesce(d, t);
		else if (outcome != TDISPATCH_OUTCOME_DONE)
			trace_tdispatch_drop(d, t, outcome);
		if (observed)
			e = td_outcome_event(t, outcome);
		/*
		 * A periodic run lives in its registration, an item in its
		 * object; an owned task is gone once ->release() returns.
		 */
		if (t->flags & TD_TASK_PERIODIC) {
			td_periodic_run_reaped(d, t);
		} else if (t->flags & TD_TASK_ITEM) {
			bool again = td_item_ended(d, t, outcome);

			d->ops->release(d, t, outcome);
			if (again)
				td_item_again(d, t);
		} else if (t->flags & TD_TASK_OWNED) {
			d->ops->release(d, t, outcome);
		} else {
			if (t->flags & TD_TASK_MERGE_NODE)
				td_merge_task_end(t);
			d->ops->release(d, t, outcome);
			td_task_free(t);
		}
		/*
		 * After ->release(): whoever reads the outcome finds what the
		 * task held let go (a shared slot unqueued, a merge closed).
		 */
		if (observed)
			td_events_observe(d, &e);
		/* A destroy's reap may be a million long; a batch's is not. */
		if (!(++n % 64))
			cond_resched();
	}
}

/*
 * For a ->process() that gives its batch back at once because its
 * dispatcher is closing (the char device's): whatever it returns, the
 * batch goes back to the head of the line without a hold-off (cancelled
 * once destroy stops batches).
 */
void td_batch_redeliver(struct tdispatch_batch *b)
{
	container_of(b, struct td_worker, batch)->redeliver = true;
}

/*
 * An urgent item whose hint a cutter spent may not be in line yet: on an
 * input list (drained after its submitter's kick), or going round again
 * after its batch (td_item_again() pushes it, which wakes the acceptor).
 * The counter first: td_item_again() pushes before it counts down.
 */
static bool td_urgent_may_come(struct tdispatch *d)
{
	if (atomic_read(&d->items_round))
		return true;
	/* A count seen down means its push is seen: it came first. */
	smp_rmb();
	return !td_input_empty(d);
}

/* A due batch no longer waits for tokens: count the time it did. */
void td_throttle_end(struct tdispatch *d, ktime_t now)
{
	if (d->throttled_since) {
		d->throttled_ns += ktime_to_ns(ktime_sub(now, d->throttled_since));
		d->throttled_since = 0;
	}
}

/*
 * Cut the next batch for @w, which is free, if one is due and the
 * shaper and the rate limit let it go now.  Return true if it was cut;
 * otherwise set @next to when the acceptor must look again by time alone.
 * With @w NULL, cut nothing: say whether a batch would go now (with
 * ->lock, the acceptor claims a worker for it: td_dispatch_batches()).
 */
static bool td_cut_batch(struct tdispatch *d, struct td_worker *w, ktime_t now,
			 struct list_head *reap, ktime_t *next)
{
	bool by_batch = d->cfg.flags & TDISPATCH_RATE_BATCHES;
	struct td_pending *p = &d->pending;

	lockdep_assert_held(&d->lock);
	while (!d->stopping) {
		u64 hold = td_shaper_holdoff(&d->shaper, now);
		unsigned int allow, nr;
		ktime_t when;
		bool due;

		due = td_pending_due(p, now, &when);
		if (hold) {
			td_throttle_end(d, now);
			if (due && !d->holding) {
				d->holding = true;
				d->holdoffs++;
				trace_tdispatch_holdoff(d, hold);
			}
			/* A batch falling due meanwhile is held off too: look then. */
			*next = due ? ktime_add_ns(now, hold) :
				      min_t(ktime_t, ktime_add_ns(now, hold), when);
			return false;
		}
		d->holding = false;
		if (!due) {
			td_throttle_end(d, now);
			*next = when;
			return false;
		}
		/*
		 * Destroy's flush does not wait for tokens; others wait for a
		 * batch's, or for one if tokens are batches.
		 */
		if (p->flush)
			allow = p->max_batch;
		else if (by_batch)
			allow = td_rate_allow(&d->rate, now, 1, 1, &when) ? p->max_batch : 0;
		else
			allow = td_rate_allow(&d->rate, now, p->max_batch,
					      min(p->nr_pending - p->nr_waiting, p->max_batch),
					      &when);
		if (!allow) {
			if (!d->throttled_since)
				d->throttled_since = now;
			*next = when;
			/*
			 * Urgent items go past it, taking no tokens.  The hint is
			 * cleared before the walk: a submitter sets it after its
			 * item's bit, then kicks us, or with ->lock queues a
			 * worker (td_urgent_kick()).
			 */
			if (!xchg(&d->urgent, 0))
				return false;
			if (w) {
				nr = td_pending_cut_urgent(p, now, p->max_batch, w->batch.tasks,
							   reap);
				w->batch.nr = nr;
			} else {
				nr = td_pending_urgent_waits(p, now, reap);
			}
			/*
			 * More may wait (a probe leaves them all to the worker's
			 * cut); or the hint's item is not in line yet.
			 */
			if ((w ? nr == p->max_batch : nr) || td_urgent_may_come(d))
				WRITE_ONCE(d->urgent, 1);
			if (!nr || !w)
				return nr;
		} else {
			td_throttle_end(d, now);
			if (!w)
				return true;
			w->batch.nr = td_pending_cut(p, now, allow, w->batch.tasks, reap);
			td_rate_take(&d->rate, by_batch ? !!w->batch.nr : w->batch.nr);
			if (!w->batch.nr)
				continue;	/* everything met had expired */
		}
		td_items_inflight(&w->batch);
		d->free_workers &= ~BIT_ULL(w - d->workers);
		d->batches++;
		trace_tdispatch_batch_start(d, &w->batch);
		return true;
	}
	*next = KTIME_MAX;
	return false;
}

/*
 * Cut batches for the free workers and queue them.  Return when the
 * acceptor must look again by time alone.
 */
static ktime_t td_dispatch_batches(struct tdispatch *d, ktime_t now,
				   struct list_head *reap)
{
	ktime_t next;

	/* With no worker free, the next batch ends a batch, not a timer. */
	while (d->free_workers) {
		struct td_worker *w = &d->workers[__ffs64(d->free_workers)];

		/*
		 * With ->lock, claim one worker, which cuts its batch once it
		 * holds the lock and kicks us if more is due: td_locked_work().
		 */
		if (d->ops->lock) {
			if (!td_cut_batch(d, NULL, now, reap, &next))
				return next;
			d->free_workers &= ~BIT_ULL(w - d->workers);
			queue_work(d->wq, &w->work);
			break;
		}
		if (!td_cut_batch(d, w, now, reap, &next))
			return next;
		/* Its work may be run by a submitter first: td_worker_fill(). */
		w->cut_queued = d->direct;
		queue_work(d->wq, &w->work);
	}
	return KTIME_MAX;
}

bool td_idle(struct tdispatch *d)
{
	return !d->pending.nr_pending && !d->pending.nr_inflight && !d->express_runs &&
	       !d->express_shared.first && td_input_empty(d);
}

/*
 * The acceptor sleeps until it is kicked, until @until, or, unless armed
 * (@room: see ->wake_room), until input arrives.  Armed, it lets input
 * gather: a producer that never sleeps would otherwise be preempted by a
 * real-time acceptor once per task.  With no window, input that came while
 * it was unarmed woke a worker (td_wake_for_input()) or, with every
 * worker busy, waits for a batch's end (td_input_room()), so it looks
 * only when it was armed: a submitter that saw that room woke no one.
 */
static void td_acceptor_sleep(struct tdispatch *d, ktime_t until, unsigned int room)
{
	/* Ours alone to write. */
	bool armed = d->wake_room;

	WRITE_ONCE(d->wake_room, room);
	/* Pairs with llist_add() in the submitter: see td_input_push(). */
	set_current_state(TASK_IDLE);
	if (kthread_should_stop() || READ_ONCE(d->kick) ||
	    (!room && (!d->direct || armed) && !td_input_empty(d))) {
		__set_current_state(TASK_RUNNING);
		return;
	}
	if (until == KTIME_MAX)
		schedule();
	else
		schedule_hrtimeout_range(&until, 20 * NSEC_PER_USEC, HRTIMER_MODE_ABS);
	__set_current_state(TASK_RUNNING);
}

int td_acceptor_fn(void *arg)
{
	struct tdispatch *d = arg;

	/*
	 * With no window, input goes to workers (td_wake_for_input()): a
	 * first pass of our own, with nothing to do yet, would race the first
	 * submitters for their input, and a batch cut here for a worker and
	 * queued on a kworker would miss the SUBMIT that leases it before
	 * returning (td_vec_flush_here()).  We wait for a kick.
	 */
	if (d->direct)
		td_acceptor_sleep(d, KTIME_MAX, 0);
	while (!kthread_should_stop()) {
		unsigned int room = 0, bits, want;
		ktime_t now, next, cut_next;
		bool idle, resize;
		LIST_HEAD(reap);

		/* Before the drain: a kick that follows a push is not lost. */
		smp_store_mb(d->kick, false);
		want = td_presize_ids(d);
		mutex_lock(&d->lock);
		now = ktime_get();
		td_drain_input(d, now, &reap);
		td_pending_promote(&d->pending, now, &reap);
		bits = td_ids_bits(&d->pending.ids, d->pending.ids.nr);
		/* Not below what the backlog asked for: it may be there again. */
		bits = max(bits, min(want, d->pending.ids.bits));
		resize = bits != d->pending.ids.bits;
		next = min(td_periodic_run_due(d, now, &reap),
			   td_pending_next_delayed(&d->pending));
		cut_next = td_dispatch_batches(d, now, &reap);
		next = min(next, cut_next);
		/* Throttled, a token is the time to look (cut_next: a worker is free). */
		d->throttled_wake = d->throttled_since && cut_next != KTIME_MAX ? cut_next : 0;
		d->looks++;
		idle = td_idle(d);
		if (idle)
			WRITE_ONCE(d->idle_seq, d->idle_seq + 1);
		/*
		 * New input can wait while we wake by ourselves within its
		 * max_delay (and a millisecond at most), unless it makes a batch
		 * due first or nears max_input; with every worker busy (a
		 * worker that ends a batch cuts the next itself, and kicks us
		 * only when it cut none), it is still drained that soon, for
		 * coalescing and the bound.  Flushing for destroy, nothing
		 * waits.
		 */
		if (!d->pending.flush && d->cfg.max_delay_ns) {
			ktime_t within = ktime_add_ns(now, min(d->cfg.max_delay_ns, TD_GATHER_NS));

			/* Throttled, as with no worker free: input can gather. */
			if (!d->free_workers || d->throttled_since) {
				next = min(next, within);
				room = td_pending_gather_room(&d->pending, d->cfg.max_input, true);
			} else if (ktime_before(next, within)) {
				room = td_pending_gather_room(&d->pending, d->cfg.max_input, false);
			}
		} else if (!d->pending.flush && d->throttled_since && cut_next != KTIME_MAX &&
			   !READ_ONCE(d->urgent)) {
			/*
			 * Throttled with no window, the rate limit having held a
			 * batch back for a free worker: nothing goes before the
			 * next token, by which we wake (@cut_next), but urgent
			 * items, which kick us or, with ->lock, queue a worker
			 * (td_urgent_kick()), so input gathers till then, tasks
			 * up to a room a CPU.  Not when a worker was claimed (it
			 * kicks us only if something waits when its batch ends),
			 * nor while the urgent hint is kept: an urgent item going
			 * round again is pushed without a kick.
			 */
			room = td_pending_gather_room(&d->pending, d->cfg.max_input, true);
		}
		td_delayed_sync(d);
		mutex_unlock(&d->lock);

		td_reap(d, &reap);
		if (resize)
			td_resize_ids(d, bits);
		if (idle && wq_has_sleeper(&d->idle_wait))
			wake_up_all(&d->idle_wait);
		td_acceptor_sleep(d, next, room);
	}
	return 0;
}

/* A task ->process() gave no result of its own. */
#define TD_RESULT_NONE	0xff

/**
 * tdispatch_batch_set_result() - give one task of a batch its own result
 * @b: the batch ->process() was handed
 * @i: the task's index, below @b->nr
 * @res: its result
 *
 * The result ->process() returns applies to the tasks not given one.
 * Tasks that end %TDISPATCH_RESULT_SUCCESS are done and %TDISPATCH_RESULT_PERMANENT
 * failed at once; only those that end %TDISPATCH_RESULT_CONGESTION or
 * %TDISPATCH_RESULT_TRANSIENT go back to the head of the line, in batch order,
 * and each of those results present makes the acceptor hold off as it
 * would for a whole batch.  A later call for the same task wins.
 *
 * Call only from the ->process() that was handed @b, before it returns
 * (or, for a batch it holds, before the module's td_batch_finish()).
 *
 * Return: 0, or -EINVAL if @i or @res is out of range.
 */
int tdispatch_batch_set_result(struct tdispatch_batch *b, unsigned int i,
			       enum tdispatch_result res)
{
	if (i >= b->nr || (unsigned int)res >= TDISPATCH_NR_RESULTS)
		return -EINVAL;
	if (!b->marked) {
		memset(b->results, TD_RESULT_NONE, b->nr);
		b->marked = true;
	}
	b->results[i] = res;
	return 0;
}
EXPORT_SYMBOL_GPL(tdispatch_batch_set_result);

/* The @i-th task's own result if ->process() gave it one, else @res. */
static int td_task_result(const struct tdispatch_batch *b, unsigned int i, int res)
{
	return b->marked && b->results[i] != TD_RESULT_NONE ? b->results[i] : res;
}

/*
 * Account for every task of a finished batch by its result: done and
 * failed ones end, in order; those to retry go back to the head of the line in their
 * order, or are cancelled once the dispatcher is stopping.  A redelivered
 * batch (@res is TD_RESULT_REDELIVER) goes back whole, whatever results
 * its tasks were given.  Sets @periodic if it held a periodic run.
 */
static void td_account_batch(struct tdispatch *d, struct tdispatch_batch *b, int res,
			     ktime_t now, struct list_head *reap, bool *periodic)
{
	struct td_pending *p = &d->pending;
	bool congestion = false, transient = false;
	unsigned int i, nr = 0;

	lockdep_assert_held(&d->lock);
	if (res == TD_RESULT_REDELIVER)
		b->marked = false;
	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *t = b->tasks[i];
		int r = td_task_result(b, i, res);

		*periodic |= !!(t->flags & TD_TASK_PERIODIC);
		if ((t->flags & TD_TASK_PERIODIC) && td_periodic_run_ended(d, t, r, now, reap))
			continue;
		switch (r) {
		case TDISPATCH_RESULT_SUCCESS:
			td_pending_complete(p, &t, 1, TDISPATCH_OUTCOME_DONE, reap);
			break;
		case TDISPATCH_RESULT_PERMANENT:
			td_pending_complete(p, &t, 1, TDISPATCH_OUTCOME_FAILED, reap);
			break;
		default:
			congestion |= r == TDISPATCH_RESULT_CONGESTION;
			transient |= r == TDISPATCH_RESULT_TRANSIENT;
			b->tasks[nr++] = t;
			break;
		}
	}
	if (congestion)
		td_shaper_record(&d->shaper, TDISPATCH_RESULT_CONGESTION, now);
	if (transient)
		td_shaper_record(&d->shaper, TDISPATCH_RESULT_TRANSIENT, now);
	if (d->stopping) {
		for (i = 0; i < nr; i++)
			td_item_requeued(d, b->tasks[i]);
		td_pending_complete(p, b->tasks, nr, TDISPATCH_OUTCOME_CANCELLED, reap);
		return;
	}
	td_pending_requeue(p, b->tasks, nr, reap);
	/*
	 * Only a task that went back takes an item's submission meanwhile; one
	 * that ended (exhausted, dropped, overridden) leaves it to
	 * td_item_ended() and td_item_again(), which submit the item again.
	 */
	for (i = 0; i < nr; i++)
		if (b->tasks[i]->state == TD_TASK_PENDING)
			td_item_requeued(d, b->tasks[i]);
}

/*
 * The id hash's size no longer fits the tasks it holds: the acceptor,
 * which resizes it outside the lock, should look.  A worker only grows it
 * at once for a burst (td_grow_ids_now()), without sleeping.  Shrinking
 * waits until nothing is pending or waiting to be drained: the acceptor
 * keeps the size a backlog asked for, and would be kicked for nothing.
 */
static bool td_ids_misfit(struct tdispatch *d)
{
	unsigned int bits = td_ids_bits(&d->pending.ids, d->pending.ids.nr);

	lockdep_assert_held(&d->lock);
	if (bits > d->pending.ids.bits)
		return true;
	return bits < d->pending.ids.bits && !d->pending.nr_pending && td_input_empty(d);
}

/*
 * What a worker that drained the input leaves to the acceptor, whatever
 * else it did: the times of delayed tasks it drained (the acceptor's sleep
 * must end by the earliest) and an id hash whose size no longer fits.
 */
static bool td_acceptor_owed(struct tdispatch *d)
{
	lockdep_assert_held(&d->lock);
	return d->delayed_drained || td_ids_misfit(d);
}

/*
 * Drop ->lock after a drain that leaves nothing else to the acceptor but
 * what the drain owes it (a delayed task's time, the id hash's size), as
 * a worker's does: kick it for that, after the reap.
 */
void td_unlock_drained(struct tdispatch *d, struct list_head *reap)
{
	bool kick = td_acceptor_owed(d);

	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, reap);
	if (kick)
		td_kick(d);
}

/*
 * Tasks wait while the rate limit holds them back: does the acceptor look
 * again by itself by the time the tokens for them come?  It does if its
 * last pass found the line throttled with a worker free: that pass set
 * ->throttled_wake and sleeps until then at the latest, and a later pass
 * would have rewritten it.  Nothing else goes before the tokens but
 * urgent items, which queue a worker or kick it themselves; a hint left
 * for more of them still wants it.  The tokens' time is taken for what
 * waits now (fewer tasks need fewer tokens); tdispatch_set_rate() kicks.
 */
static bool td_acceptor_looks_by_token(struct tdispatch *d, ktime_t now)
{
	struct td_pending *p = &d->pending;
	unsigned int need = 1;
	ktime_t when;

	lockdep_assert_held(&d->lock);
	if (!d->throttled_since || !d->throttled_wake || !d->rate.rate || p->flush ||
	    READ_ONCE(d->urgent))
		return false;
	if (!(d->cfg.flags & TDISPATCH_RATE_BATCHES))
		need = max(1U, min(p->nr_pending - p->nr_waiting, p->max_batch));
	if (td_rate_allow(&d->rate, now, need, need, &when))
		return false;
	return !ktime_before(when, d->throttled_wake);
}

/*
 * After a batch that cut no next one, must the acceptor look again?  Only
 * if it has something to do: tasks left pending (put back, waiting for an
 * id in flight, or due with no worker free) that it would not look at by
 * itself in time, a result other than success (the shaper's hold-off), a
 * periodic task's next time, a stop or drain, or someone in
 * td_wait_idle().  At light load a batch that ended with nothing left,
 * or an urgent one that passed the rate limit, then costs no wake-up of
 * the acceptor, which would only find nothing to do.
 */
static bool td_acceptor_wanted(struct tdispatch *d, int res, bool periodic, ktime_t now)
{
	lockdep_assert_held(&d->lock);
	if (res != TDISPATCH_RESULT_SUCCESS || periodic || d->stopping || d->pending.flush ||
	    d->idle_waiters)
		return true;
	return d->pending.nr_pending && !td_acceptor_looks_by_token(d, now);
}

/*
 * An express run's batch (worker.c) joins the pending set's books, in
 * flight, as if it had been cut: to be ended as any batch is.
 */
void td_express_adopt(struct tdispatch *d, struct td_worker *w)
{
	unsigned int nr = w->batch.nr;

	lockdep_assert_held(&d->lock);
	d->batches++;
	d->pending.drained += nr;
	d->pending.nr_inflight += nr;
	atomic_long_sub(nr, &d->express_inflight);
}

/*
 * Account for the batch in @w, which ended with @res (a result, or
 * TD_RESULT_REDELIVER; @bad: ->process() returned none); an express run's
 * with what runs shared behind its retries and ahead of what came since
 * (td_drain_input()), all in one hold of the lock.  Return true if
 * the next batch was cut for @w at once, which the worker goes on with
 * (while @again): no wake-up of the acceptor, no queueing, while batches
 * are due back to back.  With ->lock, a worker (not a caller) comes
 * holding it, and it is dropped here.
 */
bool td_end_batch(struct tdispatch *d, struct td_worker *w, int res, bool bad, bool again)
{
	struct tdispatch_batch *b = &w->batch;
	bool locked = d->ops->lock && !w->caller;
	bool periodic = false, more, kick;
	LIST_HEAD(reap);
	ktime_t now, next;

	mutex_lock(&d->lock);
	now = ktime_get();
	d->bad_results += bad;
	if (w->express) {
		td_express_adopt(d, w);
		d->express_runs--;
	}
	trace_tdispatch_batch_end(d, b, res);
	if (res != TD_RESULT_REDELIVER)
		d->results[res]++;
	else if (!d->stopping)
		d->redelivered++;
	td_account_batch(d, b, res, now, &reap, &periodic);
	b->nr = 0;
	w->express = false;
	if (!w->caller)
		d->free_workers |= BIT_ULL(w - d->workers);
	/*
	 * The bit before the drain's first look at the lists (a plain
	 * llist_empty()): a submitter that saw every worker busy queued no
	 * work for its task (td_input_room()), and pairs with this after its
	 * llist_add(), so the drain takes its task or it sees the bit.
	 */
	smp_mb();
	/* What came meanwhile joins at once: a busy worker feeds itself. */
	td_drain_input(d, now, &reap);
	more = again && td_cut_batch(d, w, now, &reap, &next);
	/* Left for the acceptor: what it must cut for a free worker, or time. */
	kick = (td_acceptor_wanted(d, res, periodic, now) && (!more || d->free_workers)) ||
	       td_acceptor_owed(d);
	td_delayed_sync(d);
	mutex_unlock(&d->lock);

	td_reap(d, &reap);
	/* Accounted for and released under the caller's lock: see ->lock. */
	if (locked)
		d->ops->unlock(d);
	if (kick)
		td_kick(d);
	return more;
}

/*
 * Hand the batch in @w to ->process(): its result, TD_RESULT_REDELIVER, or
 * TD_RESULT_HELD if ->process() holds it for td_batch_finish().  A result
 * out of range is a driver bug, not ours to WARN about: counted (@bad),
 * and taken as PERMANENT.
 */
int td_process_batch(struct tdispatch *d, struct td_worker *w, bool *bad)
{
	struct tdispatch_batch *b = &w->batch;
	int res;

	w->redeliver = false;
	b->marked = false;
	if (d->merge.heads)
		td_merge_batch_close(b);
	res = d->ops->process(d, b);
	/* Held: @w is another's to end, and maybe to reuse, from now on. */
	if (res == TD_RESULT_HELD && d->holds_batches)
		return res;
	if (w->redeliver)
		return TD_RESULT_REDELIVER;
	if ((unsigned int)res >= TDISPATCH_NR_RESULTS) {
		pr_err_ratelimited("tdispatch %s: ->process() returned %d, taken as PERMANENT\n",
				   d->name, res);
		*bad = true;
		return TDISPATCH_RESULT_PERMANENT;
	}
	return res;
}

/*
 * Process the batch in @w and account for it, unless ->process() holds it
 * for td_batch_finish().  Return as td_end_batch().
 */
bool td_run_batch(struct tdispatch *d, struct td_worker *w, bool again)
{
	bool bad = false;
	int res = td_process_batch(d, w, &bad);

	if (res == TD_RESULT_HELD)
		return false;
	return td_end_batch(d, w, res, bad, again);
}

/* Batches one work item runs back to back before it lets the acceptor queue the next. */
#define TD_BATCHES_PER_WORK	16

/* Run the batch cut for @w, and those cut for it after, up to a work item's share. */
void td_run_batches(struct td_worker *w)
{
	unsigned int n = 1;

	while (td_run_batch(w->d, w, n++ < TD_BATCHES_PER_WORK))
		cond_resched();
}

/**
 * td_batch_finish() - end a batch that ->process() held
 * @b: the batch
 * @res: its result, or TD_RESULT_REDELIVER
 *
 * The batch is accounted for as if ->process() had returned @res.  If the
 * next batch can be cut for its worker at once, it is, and handed to
 * ->process() here, as the worker's kworker would: a holder that ends
 * its batches itself (the char device's COMPLETE) keeps a backlog moving
 * with no kworker woken.  Only a dispatcher without ->lock holds batches,
 * and only a worker's, never a caller's (tdispatch_run_now()).
 *
 * Context: process context, holding nothing that ->process() takes; may
 * sleep.
 */
void td_batch_finish(struct tdispatch_batch *b, int res)
{
	struct td_worker *w = container_of(b, struct td_worker, batch);

	might_sleep();
	if (td_end_batch(w->d, w, res, false, true))
		td_run_batches(w);
}

/* Which of its dispatcher's workers holds @b: 0 to workers - 1. */
unsigned int td_batch_worker(const struct tdispatch_batch *b)
{
	const struct td_worker *w = container_of(b, struct td_worker, batch);

	return w - w->d->workers;
}

/* Most tasks tdispatch_run_now() hands over at once: the batch is on the stack. */
#define TD_RUN_NOW_MAX	16

/*
 * A batch run in the caller's context: the pending task of @id (@one), the
 * item @it, or the head of the line, whatever the window, the rate limit
 * or the shaper say.  Return the tasks processed, or an error.
 */
static int td_run_caller(struct tdispatch *d, u64 id, bool one, struct tdispatch_item *it)
{
	struct tdispatch_task *tasks[TD_RUN_NOW_MAX], *t;
	u8 results[TD_RUN_NOW_MAX];
	struct td_worker w = {
		.d = d,
		.caller = true,
		.batch = { .tasks = tasks, .results = results },
	};
	LIST_HEAD(reap);
	ktime_t now;
	int ret = 0;

	might_sleep();
	mutex_lock(&d->lock);
	now = ktime_get();
	td_drain_input(d, now, &reap);
	if (d->stopping) {
		ret = -ESHUTDOWN;
	} else if (one || it) {
		if (!it)
			t = td_pending_take(&d->pending, id, now, &reap);
		else if (READ_ONCE(it->task.owner) == d)
			t = td_pending_take_task(&d->pending, &it->task, now, &reap);
		else
			t = NULL;	/* never submitted, or another's: td_item_prepare() */
		if (IS_ERR(t))
			ret = PTR_ERR(t);
		else if (t)
			tasks[w.batch.nr++] = t;
	} else {
		w.batch.nr = td_pending_cut(&d->pending, now, TD_RUN_NOW_MAX, tasks, &reap);
	}
	if (w.batch.nr) {
		td_items_inflight(&w.batch);
		d->batches++;
		trace_tdispatch_batch_start(d, &w.batch);
	}
	td_unlock_drained(d, &reap);
	if (!w.batch.nr)
		return ret;
	ret = w.batch.nr;
	td_run_batch(d, &w, false);
	return ret;
}

/**
 * tdispatch_run_now() - process the head of the line in the caller's context
 * @d: the dispatcher
 *
 * Cuts a batch from the head of the line (at most max_batch and at most
 * 16 tasks, passing over ids in flight), whatever the window, the rate
 * limit or a hold-off say, and hands it to ->process() in the caller's
 * context, as a worker would.  It is accounted for as a worker's is: when
 * this returns, its tasks that ended have been released and those to
 * retry are back at the head of the line.  Every task submitted before the
 * call is considered; batches that workers hold are not waited for (with
 * &tdispatch_ops.lock, workers cut theirs under it).  The caller holds what
 * &tdispatch_ops.lock takes, if there is one: it is not called.  Call again
 * for more, but not after a CONGESTION or TRANSIENT result of the
 * caller's own batch: its tasks are back at the head of the line.
 *
 * Process context; may sleep.  Not while tdispatch_destroy() may run: the
 * caller holds its dispatcher until this returns.
 *
 * Return: the number of tasks handed to ->process() (0 if none was
 * pending), or -ESHUTDOWN once tdispatch_destroy() stops batches.
 */
int tdispatch_run_now(struct tdispatch *d)
{
	return td_run_caller(d, 0, false, NULL);
}
EXPORT_SYMBOL_GPL(tdispatch_run_now);

/**
 * tdispatch_run_id() - process the pending task of one id in the caller's
 *	context
 * @d: the dispatcher
 * @id: the id
 *
 * As tdispatch_run_now(), for a batch of the one task of @id that waits
 * in the pending set (not a delayed one, nor an item: see
 * tdispatch_run_item()), submitted before the call.
 *
 * Process context; may sleep.  Not while tdispatch_destroy() may run.
 *
 * Return: 1 if it was processed; 0 if @id had no task pending; -EBUSY if
 * @id is in a worker's batch (a newer task of it waits for that batch;
 * with &tdispatch_ops.lock, only a batch being processed);
 * -ESHUTDOWN once tdispatch_destroy() stops batches.
 */
int tdispatch_run_id(struct tdispatch *d, u64 id)
{
	return td_run_caller(d, id, true, NULL);
}
EXPORT_SYMBOL_GPL(tdispatch_run_id);

/**
 * tdispatch_run_item() - process an item in the caller's context
 * @d: the dispatcher
 * @it: the item, set up with tdispatch_item_init()
 *
 * As tdispatch_run_id(), for @it if it waits in the pending set: submitted
 * to @d before the call and not yet in a batch (an item submitted to
 * another dispatcher is not @d's to run: 0).  An item is found by its
 * address, never by its id (tdispatch_run_id() finds no item).
 *
 * Process context; may sleep.  Not while tdispatch_destroy() may run.
 *
 * Return: 1 if it was processed; 0 if it was not pending (nor, for an
 * instant, while an express run takes it off its input list); -EBUSY if
 * it is in a worker's batch (submitted meanwhile, it is processed again
 * after that batch), or an express run has taken it and not yet cut or
 * shared it (what runs shared beyond a batch is put in line and run
 * here); -ESHUTDOWN once tdispatch_destroy() stops batches.
 */
int tdispatch_run_item(struct tdispatch *d, struct tdispatch_item *it)
{
	return td_run_caller(d, 0, false, it);
}
EXPORT_SYMBOL_GPL(tdispatch_run_item);

/*
 * With no window (d->direct), a worker's work drains the input first,
 * under the lock, whoever queued it: a submitter whose task was the first
 * on its CPU's list or filled its room (td_wake_for_input()), which may
 * have found the worker free, or the acceptor, which cut a batch into it
 * (and then the submitter's queue_work() found the work pending, its
 * wake-up folded into this run).  A free worker gets a batch cut for it
 * here; a busy one runs the batch the acceptor cut for it, but not one
 * that ->process() holds (td_batch_finish() ends that).  What is left goes
 * to the acceptor: tasks pending while another worker is free, a delayed
 * task's time, the id hash's size.  Return true if @w holds a batch to run.
 *
 * With ->lock, the same, under it, whatever the window: such a worker
 * holds no batch before this, being free, claimed by the acceptor, or
 * queued for an urgent item (td_urgent_kick(); if it was busy, this run
 * follows its batch).
 */
bool td_worker_fill(struct tdispatch *d, struct td_worker *w)
{
	bool cut = true, kick;
	LIST_HEAD(reap);
	ktime_t now, next;

	mutex_lock(&d->lock);
	now = ktime_get();
	td_drain_input(d, now, &reap);
	if (d->ops->lock)
		d->free_workers |= BIT_ULL(w - d->workers);
	if (d->free_workers & BIT_ULL(w - d->workers))
		cut = td_cut_batch(d, w, now, &reap, &next);
	else
		cut = w->cut_queued;
	w->cut_queued = false;
	kick = (d->pending.nr_pending && d->free_workers && !td_acceptor_looks_by_token(d, now)) ||
	       td_acceptor_owed(d);
	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	if (kick)
		td_kick(d);
	return cut;
}
