// SPDX-License-Identifier: GPL-2.0
/*
 * Supervised periodic tasks: what a driver calls to register, remove and
 * count them, and their end when the dispatcher is destroyed.  The state
 * of one registration is periodic.c's; starting its runs and hearing how
 * they ended is the engine's (periodic_run.c).
 */
#include <linux/export.h>
#include <linux/slab.h>

#include "dispatch.h"
#include "file.h"
#include "internal.h"
#include "pending.h"
#include "periodic.h"
#include "submit.h"

#define TD_MAX_PERIODIC		1024U
#define TD_PERIODIC_MIN_NS	NSEC_PER_MSEC
#define TD_PERIODIC_MAX_NS	(86400ULL * NSEC_PER_SEC)
#define TD_PERIODIC_MAX_BACKOFF	1024U

static struct td_periodic_reg *td_periodic_find(struct tdispatch *d, u64 id)
{
	struct td_periodic_reg *s;

	list_for_each_entry(s, &d->periodic, pr.node)
		if (s->pr.id == id)
			return s;
	return NULL;
}

/* Take @s off the list and cancel its run if it has not started. */
static bool td_periodic_remove(struct tdispatch *d, struct td_periodic_reg *s,
			       struct list_head *reap)
{
	struct tdispatch_task *t = s->pr.run;

	list_del(&s->pr.node);
	d->nr_periodic--;
	s->pr.removed = true;
	if (t && (t->state == TD_TASK_PENDING || t->state == TD_TASK_WAITING))
		td_pending_cancel_task(&d->pending, t, reap);
	return td_periodic_reg_put(s);
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
	struct td_periodic_reg *s;
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
	else if (td_periodic_find(d, pc->id))
		ret = -EEXIST;
	else if (d->nr_periodic >= TD_MAX_PERIODIC)
		ret = -ENOSPC;
	if (!ret) {
		td_periodic_init(&s->pr, pc->id, pc->period_ns, pc->timeout_ns,
				 pc->max_backoff, pc->payload, ktime_get());
		list_add_tail(&s->pr.node, &d->periodic);
		d->nr_periodic++;
		td_periodic_reg_wake_at(d, s);
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
	struct td_periodic_reg *s;
	LIST_HEAD(reap);
	bool last;

	might_sleep();
	mutex_lock(&d->lock);
	s = td_periodic_find(d, id);
	if (!s) {
		mutex_unlock(&d->lock);
		return -ENOENT;
	}
	last = td_periodic_remove(d, s, &reap);
	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	if (last)
		td_periodic_reg_free(d, s);
	return 0;
}
EXPORT_SYMBOL_GPL(tdispatch_periodic_remove);

/* Destroy: remove every registration; runs in batches end as usual. */
void td_periodic_stop(struct tdispatch *d)
{
	struct td_periodic_reg *s, *next;
	LIST_HEAD(gone);
	LIST_HEAD(reap);

	mutex_lock(&d->lock);
	list_for_each_entry_safe(s, next, &d->periodic, pr.node)
		if (td_periodic_remove(d, s, &reap))
			list_add(&s->pr.node, &gone);
	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	list_for_each_entry_safe(s, next, &gone, pr.node)
		td_periodic_reg_free(d, s);
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
	struct td_periodic_reg *s;

	might_sleep();
	mutex_lock(&d->lock);
	s = td_periodic_find(d, id);
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
