// SPDX-License-Identifier: GPL-2.0
/*
 * Supervised periodic tasks: the engine's side of periodic.c (what drivers
 * call is in periodic_api.c).
 *
 * The acceptor starts each run when it falls due, as an ordinary task with
 * the registration's id and payload, and notes timeouts; a worker reports
 * how the run's batch ended.  Runs are not retried: a run whose batch ends
 * with CONGESTION or TRANSIENT ends failed, and the next run, an interval
 * that has doubled later, is the retry.  A registration lives until it is
 * removed and its last run has been reaped; only then does its payload go
 * back to its owner.
 */
#include <linux/slab.h>

#include "dispatch.h"
#include "internal.h"
#include "pending.h"
#include "periodic.h"
#include "trace.h"

void td_periodic_reg_free(struct tdispatch *d, struct td_periodic_reg *s)
{
	if (s->release)
		s->release(d, s->pr.payload);
	kfree(s);
}

/* The next time the acceptor must look at the registrations. */
void td_periodic_reg_wake_at(struct tdispatch *d, struct td_periodic_reg *s)
{
	ktime_t when = td_periodic_when(&s->pr);

	if (ktime_before(when, d->periodic_next))
		d->periodic_next = when;
}

static void td_periodic_start_run(struct tdispatch *d, struct td_periodic_reg *s, ktime_t now,
				  struct list_head *reap)
{
	struct tdispatch_task *t = &s->run_task;

	*t = (struct tdispatch_task) {
		.id = s->pr.id,
		.payload = s->pr.payload,
		.submitted = now,
		.state = TD_TASK_INPUT,
		.flags = TD_TASK_PERIODIC,
	};
	s->refs++;
	s->run_busy = true;
	s->pr.run = t;
	/* Accepted like any submission (counted so), drained at once. */
	d->periodic_runs++;
	trace_tdispatch_submit(d, t->id);
	td_pending_add(&d->pending, t, now, reap);
}

/**
 * td_periodic_run_due() - start the runs that are due and note timeouts
 * @d: the dispatcher, locked
 * @now: the current time
 * @reap: where tasks that end are put
 *
 * Return: when to look again, KTIME_MAX for never.
 */
ktime_t td_periodic_run_due(struct tdispatch *d, ktime_t now, struct list_head *reap)
{
	struct td_periodic_reg *s;

	lockdep_assert_held(&d->lock);
	if (ktime_before(now, d->periodic_next))
		return d->periodic_next;
	d->periodic_next = KTIME_MAX;
	list_for_each_entry(s, &d->periodic, pr.node) {
		/* Ended, not reaped yet: td_periodic_run_reaped() kicks us then. */
		if (s->run_busy && !s->pr.running)
			continue;
		if (td_periodic_tick(&s->pr, now) == TD_PERIODIC_RUN)
			td_periodic_start_run(d, s, now, reap);
		td_periodic_reg_wake_at(d, s);
	}
	return d->periodic_next;
}

/*
 * A periodic task @t of a finished batch, with its result @res (or
 * TD_RESULT_REDELIVER): the run's registration hears how it went.  Runs
 * are not retried: unless @res ended it, the run ends failed here.
 *
 * Return: true if @t ended here, false if the caller files it.
 */
bool td_periodic_run_ended(struct tdispatch *d, struct tdispatch_task *t, int res,
			   ktime_t now, struct list_head *reap)
{
	struct td_periodic_reg *s = container_of(t, struct td_periodic_reg, run_task);

	lockdep_assert_held(&d->lock);
	if (s->pr.run == t) {
		td_periodic_ended(&s->pr, res == TD_RESULT_REDELIVER ? -1 : res, now);
		s->pr.run = NULL;
		td_periodic_reg_wake_at(d, s);
	}
	if (res == TDISPATCH_RESULT_SUCCESS || res == TDISPATCH_RESULT_PERMANENT)
		return false;
	td_pending_complete(&d->pending, &t, 1, TDISPATCH_OUTCOME_FAILED, reap);
	return true;
}

/* td_reap() of a periodic run, which has no ->release() of its own. */
void td_periodic_run_reaped(struct tdispatch *d, struct tdispatch_task *t)
{
	struct td_periodic_reg *s = container_of(t, struct td_periodic_reg, run_task);
	bool last, kick;

	mutex_lock(&d->lock);
	if (s->pr.run == t) {
		/* Ended without a batch result: overridden, dropped, cancelled... */
		td_periodic_ended(&s->pr, -1, ktime_get());
		s->pr.run = NULL;
	}
	/* td_periodic_run_due() passed over it while busy: look at it again. */
	s->run_busy = false;
	if (!s->pr.removed)
		td_periodic_reg_wake_at(d, s);
	last = td_periodic_reg_put(s);
	/* Its next run may now be due earlier; destroy has no acceptor left. */
	kick = !last && !d->stopping;
	mutex_unlock(&d->lock);
	if (last)
		td_periodic_reg_free(d, s);
	if (kick)
		td_kick(d);
}
