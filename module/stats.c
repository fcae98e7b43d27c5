// SPDX-License-Identifier: GPL-2.0
/*
 * What the counters and the pending set say, read under the dispatcher's
 * lock: a consistent snapshot of the counters, and where one task is.
 */
#include <linux/export.h>
#include <linux/ktime.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "dispatch.h"
#include "internal.h"
#include "pending.h"
#include "stats.h"
#include "submit.h"

/*
 * Where the task of @id is, for the char device's QUERY: absent, pending
 * (waiting behind an in-flight one counts as pending) or in flight.
 */
void td_query(struct tdispatch *d, u64 id, u32 *state, u32 *attempts, u32 *waiting,
	      u32 *delayed)
{
	struct tdispatch_task *t;
	LIST_HEAD(reap);

	mutex_lock(&d->lock);
	td_drain_input(d, ktime_get(), &reap);
	t = td_pending_lookup(&d->pending, id);
	*state = !t ? TDISPATCH_STATE_ABSENT : t->state == TD_TASK_INFLIGHT ?
		 TDISPATCH_STATE_IN_FLIGHT : TDISPATCH_STATE_PENDING;
	*attempts = t ? t->attempts : 0;
	*waiting = !!td_pending_waiter(&d->pending, id);
	*delayed = !!td_pending_lookup_delayed(&d->pending, id);
	if (!t && *delayed)
		*state = TDISPATCH_STATE_DELAYED;
	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	td_kick(d);
}

/**
 * tdispatch_get_stats() - take a consistent snapshot of the counters
 * @d: the dispatcher
 * @st: filled in
 *
 * The snapshot satisfies the equation in &struct tdispatch_stats.
 *
 * Process context; may sleep.
 */
void tdispatch_get_stats(struct tdispatch *d, struct tdispatch_stats *st)
{
	const struct td_pending *p = &d->pending;
	u64 accepted, rejected = 0, wakeups = 0, merged, umerged, express;
	int cpu;

	might_sleep();
	mutex_lock(&d->lock);
	*st = (struct tdispatch_stats) {
		.pending = p->nr_pending,
		.in_flight = p->nr_inflight,
		.done = p->outcomes[TDISPATCH_OUTCOME_DONE],
		.failed = p->outcomes[TDISPATCH_OUTCOME_FAILED] +
			  p->outcomes[TDISPATCH_OUTCOME_EXHAUSTED],
		.overridden = p->outcomes[TDISPATCH_OUTCOME_OVERRIDDEN],
		.expired = p->outcomes[TDISPATCH_OUTCOME_EXPIRED],
		.dropped = p->outcomes[TDISPATCH_OUTCOME_DROPPED],
		.cancelled = p->outcomes[TDISPATCH_OUTCOME_CANCELLED],
		.batches = d->batches,
		.retries = p->retries,
		.holdoffs = d->holdoffs,
		.looks = d->looks,
		.redelivered = d->redelivered,
		.bad_results = d->bad_results,
		.delayed = p->nr_delayed,
		.periodic_runs = d->periodic_runs,
		.exhausted = p->outcomes[TDISPATCH_OUTCOME_EXHAUSTED],
		.expedited = p->expedited,
		.key_expedites = p->key_expedites,
		.throttled_ns = d->throttled_ns,
		.rate = d->rate.rate,
		.burst = d->rate.burst,
	};
	/* A batch that waits for tokens right now has waited until now. */
	if (d->throttled_since)
		st->throttled_ns += ktime_to_ns(ktime_sub(ktime_get(), d->throttled_since));
	memcpy(st->results, d->results, sizeof(st->results));
	/*
	 * Read after the drained count under the lock: a submitter counts a
	 * task before it is on a list, so accepted >= drained here.  Periodic
	 * runs are accepted by the acceptor itself, drained at once.
	 */
	/*
	 * An item submission that found it waiting ended there, overridden.
	 * Merges are read before what was accepted (pairs with smp_wmb() in
	 * tdispatch_submit_item()), so queued never counts below zero.
	 */
	merged = d->items_merged;
	umerged = 0;
	for_each_possible_cpu(cpu) {
		merged += READ_ONCE(per_cpu_ptr(d->input, cpu)->items_merged);
		/* A user's merge is counted once, accepted and overridden in one. */
		umerged += READ_ONCE(per_cpu_ptr(d->input, cpu)->merged);
	}
	merged += umerged;
	/*
	 * An express run's items, read before what was accepted too: each
	 * was accepted before it was taken (the submitter's count, then its
	 * push; the take, then this count).
	 */
	express = atomic_long_read(&d->express_inflight);
	/* Pairs with smp_wmb() in tdispatch_submit_item(), as said above. */
	smp_rmb();
	accepted = d->periodic_runs + umerged;
	for_each_possible_cpu(cpu) {
		struct td_input *in = per_cpu_ptr(d->input, cpu);

		accepted += READ_ONCE(in->added) + READ_ONCE(in->items);
		rejected += READ_ONCE(in->rejected);
		wakeups += READ_ONCE(in->wakeups);
	}
	st->overridden += merged;
	st->in_flight += express;
	st->queued = accepted - p->drained - merged - express;
	mutex_unlock(&d->lock);
	st->accepted = accepted;
	st->rejected = rejected;
	st->wakeups = wakeups;
}
EXPORT_SYMBOL_GPL(tdispatch_get_stats);
