/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Supervised periodic tasks: their state (periodic.c; the caller locks and
 * passes the time) and the registrations the engine runs (periodic_run.c).
 */
#ifndef _TDISPATCH_PERIODIC_H
#define _TDISPATCH_PERIODIC_H

#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/tdispatch.h>
#include <linux/types.h>

/*
 * A supervised periodic task, as Eureka's TimedSupervisorTask: a run is
 * submitted every interval; a run that times out, or ends with CONGESTION
 * or TRANSIENT, doubles the interval up to max_interval_ns, and a SUCCESS
 * resets it to the period.  Pure state like the pending set: the caller
 * locks and passes the time.
 */
struct td_periodic {
	u64 id;
	void *payload;
	u64 period_ns, timeout_ns, max_interval_ns;	/* max = period * bound */
	u64 interval_ns;		/* current */
	ktime_t next;			/* KTIME_MAX while a run goes, not timed out */
	ktime_t run_deadline;		/* the running run times out at */
	bool running, timed_out, removed;
	u64 runs, successes, timeouts, failures, skipped;
	struct list_head node;		/* the engine's list of registrations */
	void *run;			/* the engine's task of the current run */
};

enum td_periodic_action {
	TD_PERIODIC_NONE,
	TD_PERIODIC_RUN,		/* the caller must submit a run now */
};

bool td_periodic_valid(u64 period_ns, u64 timeout_ns, unsigned int bound);
void td_periodic_init(struct td_periodic *pr, u64 id, u64 period_ns,
		      u64 timeout_ns, unsigned int bound, void *payload,
		      ktime_t now);
enum td_periodic_action td_periodic_tick(struct td_periodic *pr, ktime_t now);
void td_periodic_ended(struct td_periodic *pr, int result, ktime_t now);
ktime_t td_periodic_when(const struct td_periodic *pr);

/*
 * periodic_run.c: the engine's side of periodic tasks; periodic_api.c:
 * td_periodic_stop(), their end when the dispatcher is destroyed.
 */
struct tdispatch;
struct tdispatch_task;
struct list_head;

/*
 * A registration carries the task its runs are submitted as, so that the
 * acceptor never allocates: one run at a time, and the next starts only
 * once td_reap() is done with the last (->run_busy).
 */
struct td_periodic_reg {
	struct td_periodic pr;
	void (*release)(struct tdispatch *d, void *payload);
	unsigned int refs;		/* the registration's and each run's */
	bool run_busy;			/* ->run_task not reaped yet */
	struct tdispatch_task run_task;
};

/* Drop a reference; true if the caller must release and free @s. */
static inline bool td_periodic_reg_put(struct td_periodic_reg *s)
{
	return !--s->refs;
}

void td_periodic_reg_free(struct tdispatch *d, struct td_periodic_reg *s);
void td_periodic_reg_wake_at(struct tdispatch *d, struct td_periodic_reg *s);
ktime_t td_periodic_run_due(struct tdispatch *d, ktime_t now, struct list_head *reap);
bool td_periodic_run_ended(struct tdispatch *d, struct tdispatch_task *t, int res,
			   ktime_t now, struct list_head *reap);
void td_periodic_run_reaped(struct tdispatch *d, struct tdispatch_task *t);
void td_periodic_stop(struct tdispatch *d);

#endif /* _TDISPATCH_PERIODIC_H */
