// SPDX-License-Identifier: GPL-2.0
/*
 * Supervised periodic tasks: the engine's side of periodic.c.
 *
 * The acceptor starts each run when it falls due, as an ordinary task with
 * the registration's id and payload, and notes timeouts; a worker reports
 * how the run's batch ended.  Runs are not retried: a run whose batch ends
 * with CONGESTION or TRANSIENT ends failed, and the next run, an interval
 * that has doubled later, is the retry.  A registration lives until it is
 * removed and its last run has been reaped; only then does its payload go
 * back to its owner.
 */
#include <linux/export.h>
#include <linux/slab.h>

#include "internal.h"
#include "trace.h"

#define TD_MAX_PERIODIC		1024U
#define TD_PERIODIC_MIN_NS	NSEC_PER_MSEC
#define TD_PERIODIC_MAX_NS	(86400ULL * NSEC_PER_SEC)
#define TD_PERIODIC_MAX_BACKOFF	1024U

/*
 * A registration carries the task its runs are submitted as, so that the
 * acceptor never allocates: one run at a time, and the next starts only
 * once td_reap() is done with the last (->run_busy).
 */
struct td_sup {
	struct td_periodic pr;
	void (*release)(struct tdispatch *d, void *payload);
	unsigned int refs;		/* the registration's and each run's */
	bool run_busy;			/* ->run_task not reaped yet */
	struct tdispatch_task run_task;
};

static struct td_sup *td_sup_find(struct tdispatch *d, u64 id)
{
	struct td_sup *s;

	list_for_each_entry(s, &d->periodic, pr.node)
		if (s->pr.id == id)
			return s;
	return NULL;
}

/* Drop a reference; true if the caller must release and free @s. */
static bool td_sup_put(struct td_sup *s)
{
	return !--s->refs;
}

static void td_sup_free(struct tdispatch *d, struct td_sup *s)
{
	if (s->release)
		s->release(d, s->pr.payload);
	kfree(s);
}

/* The next time the acceptor must look at the registrations. */
static void td_sup_wake_at(struct tdispatch *d, struct td_sup *s)
{
	ktime_t when = td_periodic_when(&s->pr);

	if (ktime_before(when, d->periodic_next))
		d->periodic_next = when;
}

static void td_sup_start_run(struct tdispatch *d, struct td_sup *s, ktime_t now,
			     struct list_head *reap)
{
	struct tdispatch_task *t = &s->run_task;

	*t = (struct tdispatch_task) {
		.id = s->pr.id,
		.payload = s->pr.payload,
		.submitted = now,
		.state = TD_TASK_INPUT,
		.periodic = s,
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
 * td_supervise() - start the runs that are due and note timeouts
 * @d: the dispatcher, locked
 * @now: the current time
 * @reap: where tasks that end are put
 *
 * Return: when to look again, KTIME_MAX for never.
 */
ktime_t td_supervise(struct tdispatch *d, ktime_t now, struct list_head *reap)
{
	struct td_sup *s;

	lockdep_assert_held(&d->lock);
	if (ktime_before(now, d->periodic_next))
		return d->periodic_next;
	d->periodic_next = KTIME_MAX;
	list_for_each_entry(s, &d->periodic, pr.node) {
		/* Ended, not reaped yet: td_supervise_reap() kicks us then. */
		if (s->run_busy && !s->pr.running)
			continue;
		if (td_periodic_tick(&s->pr, now) == TD_PERIODIC_RUN)
			td_sup_start_run(d, s, now, reap);
		td_sup_wake_at(d, s);
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
bool td_supervise_task(struct tdispatch *d, struct tdispatch_task *t, int res,
		       ktime_t now, struct list_head *reap)
{
	struct td_sup *s = t->periodic;

	lockdep_assert_held(&d->lock);
	if (s->pr.run == t) {
		td_periodic_ended(&s->pr, res == TD_RESULT_REDELIVER ? -1 : res, now);
		s->pr.run = NULL;
		td_sup_wake_at(d, s);
	}
	if (res == TDISPATCH_SUCCESS || res == TDISPATCH_PERMANENT)
		return false;
	td_pending_complete(&d->pending, &t, 1, TDISPATCH_FAILED, reap);
	return true;
}

/* td_reap() of a periodic run, which has no ->release() of its own. */
void td_supervise_reap(struct tdispatch *d, struct tdispatch_task *t)
{
	struct td_sup *s = t->periodic;
	bool last, kick;

	mutex_lock(&d->lock);
	if (s->pr.run == t) {
		/* Ended without a batch result: overridden, dropped, cancelled... */
		td_periodic_ended(&s->pr, -1, ktime_get());
		s->pr.run = NULL;
	}
	/* td_supervise() passed over it while busy: look at it again. */
	s->run_busy = false;
	if (!s->pr.removed)
		td_sup_wake_at(d, s);
	last = td_sup_put(s);
	/* Its next run may now be due earlier; destroy has no acceptor left. */
	kick = !last && !d->stopping;
	mutex_unlock(&d->lock);
	if (last)
		td_sup_free(d, s);
	if (kick)
		td_kick(d);
}

/* Take @s off the list and cancel its run if it has not started. */
static bool td_sup_remove(struct tdispatch *d, struct td_sup *s, struct list_head *reap)
{
	struct tdispatch_task *t = s->pr.run;

	list_del(&s->pr.node);
	d->nr_periodic--;
	s->pr.removed = true;
	if (t && (t->state == TD_TASK_PENDING || t->state == TD_TASK_WAITING))
		td_pending_cancel_task(&d->pending, t, reap);
	return td_sup_put(s);
}

/**
 * tdispatch_periodic_add() - register a supervised periodic task
 * @d: the dispatcher
 * @pc: the task; see &struct tdispatch_periodic
 *
 * The first run is submitted at once.
 *
 * Process context; may sleep.
 *
 * Return: 0; -EINVAL for a bad period, timeout or bound; -EEXIST if @pc's
 * id is registered already; -ENOSPC if 1024 are; -ESHUTDOWN once
 * tdispatch_destroy() has begun; -ENOMEM.
 */
int tdispatch_periodic_add(struct tdispatch *d, const struct tdispatch_periodic *pc)
{
	struct td_sup *s;
	int ret = 0;

	might_sleep();
	if (pc->period_ns < TD_PERIODIC_MIN_NS || pc->period_ns > TD_PERIODIC_MAX_NS ||
	    pc->timeout_ns < TD_PERIODIC_MIN_NS || pc->timeout_ns > TD_PERIODIC_MAX_NS ||
	    pc->max_backoff > TD_PERIODIC_MAX_BACKOFF ||
	    !td_periodic_valid(pc->period_ns, pc->timeout_ns, pc->max_backoff))
		return -EINVAL;
	s = kzalloc(sizeof(*s), TD_GFP_USER);
	if (!s)
		return -ENOMEM;
	s->release = pc->release;
	s->refs = 1;

	mutex_lock(&d->lock);
	/* Destroy sets ->dead before it takes the lock to stop every one. */
	if (READ_ONCE(d->dead))
		ret = -ESHUTDOWN;
	else if (td_sup_find(d, pc->id))
		ret = -EEXIST;
	else if (d->nr_periodic >= TD_MAX_PERIODIC)
		ret = -ENOSPC;
	if (!ret) {
		td_periodic_init(&s->pr, pc->id, pc->period_ns, pc->timeout_ns,
				 pc->max_backoff, pc->payload, ktime_get());
		list_add_tail(&s->pr.node, &d->periodic);
		d->nr_periodic++;
		td_sup_wake_at(d, s);
	}
	mutex_unlock(&d->lock);
	if (ret) {
		kfree(s);
		return ret;
	}
	td_kick(d);
	return 0;
}
EXPORT_SYMBOL_GPL(tdispatch_periodic_add);

/**
 * tdispatch_periodic_remove() - stop a periodic task
 * @d: the dispatcher
 * @id: its id
 *
 * No run starts after this is called; a run that has not reached a
 * worker yet is cancelled.  A run already in a batch ends normally, and
 * &tdispatch_periodic.release is called once it has, or before this
 * returns if there is none.
 *
 * Process context; may sleep.
 *
 * Return: 0, or -ENOENT if @id is not registered.
 */
int tdispatch_periodic_remove(struct tdispatch *d, u64 id)
{
	struct td_sup *s;
	LIST_HEAD(reap);
	bool last;

	might_sleep();
	mutex_lock(&d->lock);
	s = td_sup_find(d, id);
	if (!s) {
		mutex_unlock(&d->lock);
		return -ENOENT;
	}
	last = td_sup_remove(d, s, &reap);
	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	if (last)
		td_sup_free(d, s);
	return 0;
}
EXPORT_SYMBOL_GPL(tdispatch_periodic_remove);

/* Destroy: remove every registration; runs in batches end as usual. */
void td_supervise_stop(struct tdispatch *d)
{
	struct td_sup *s, *next;
	LIST_HEAD(gone);
	LIST_HEAD(reap);

	mutex_lock(&d->lock);
	list_for_each_entry_safe(s, next, &d->periodic, pr.node)
		if (td_sup_remove(d, s, &reap))
			list_add(&s->pr.node, &gone);
	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	list_for_each_entry_safe(s, next, &gone, pr.node)
		td_sup_free(d, s);
}

/**
 * tdispatch_periodic_get_stats() - the counters of a periodic task
 * @d: the dispatcher
 * @id: its id
 * @st: filled in
 *
 * Process context; may sleep.
 *
 * Return: 0, or -ENOENT if @id is not registered.
 */
int tdispatch_periodic_get_stats(struct tdispatch *d, u64 id,
				 struct tdispatch_periodic_stats *st)
{
	struct td_sup *s;

	might_sleep();
	mutex_lock(&d->lock);
	s = td_sup_find(d, id);
	if (s)
		*st = (struct tdispatch_periodic_stats) {
			.runs = s->pr.runs,
			.successes = s->pr.successes,
			.timeouts = s->pr.timeouts,
			.failures = s->pr.failures,
			.skipped = s->pr.skipped,
			.interval_ns = s->pr.interval_ns,
		};
	mutex_unlock(&d->lock);
	return s ? 0 : -ENOENT;
}
EXPORT_SYMBOL_GPL(tdispatch_periodic_get_stats);
