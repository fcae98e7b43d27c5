// SPDX-License-Identifier: GPL-2.0
/*
 * Dispatcher life cycle and the calls that need the whole dispatcher:
 * create, cancel, expedite, the rate, destroy.
 */
#include <linux/export.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "core.h"
#include "debugfs.h"
#include "dispatch.h"
#include "internal.h"
#include "pending.h"
#include "periodic.h"
#include "shaper.h"
#include "submit.h"
#include "worker.h"

/* Watchers of a key let in under one hold of the lock. */
#define TD_EXPEDITE_CHUNK	256

static bool td_config_valid(const struct tdispatch_config *cfg)
{
	return cfg->max_buffer >= 1 && cfg->max_buffer <= TD_MAX_BUFFER &&
	       cfg->max_batch >= 1 && cfg->max_batch <= TD_MAX_BATCH &&
	       cfg->max_batch <= cfg->max_buffer &&
	       cfg->workers >= 1 && cfg->workers <= TD_MAX_WORKERS &&
	       cfg->max_input >= 1 && cfg->max_input <= TD_MAX_INPUT &&
	       cfg->max_delayed <= TD_MAX_DELAYED &&
	       cfg->max_attempts <= TDISPATCH_MAX_ATTEMPTS &&
	       cfg->burst <= TD_MAX_BUFFER &&
	       !(cfg->flags & ~(TDISPATCH_NORMAL_PRIORITY | TDISPATCH_RATE_BATCHES |
				TDISPATCH_MERGE)) &&
	       cfg->max_delay_ns <= TDISPATCH_MAX_DELAY_NS;
}

/* A burst of 0: a batch's worth of tokens. */
static unsigned int td_default_burst(const struct tdispatch *d)
{
	return d->cfg.flags & TDISPATCH_RATE_BATCHES ? 1 : d->cfg.max_batch;
}

static void td_free(struct tdispatch *d)
{
	if (d->wq)
		destroy_workqueue(d->wq);
	free_percpu(d->input);
	kvfree(d->task_array);
	kvfree(d->result_array);
	td_pending_free(&d->pending);
	td_merge_free(&d->merge);
	mem_cgroup_put(d->memcg);
	kfree(d);
}

/**
 * tdispatch_create() - create a dispatcher and start its acceptor
 * @cfg: its shape, validated and copied; see &struct tdispatch_config
 * @ops: its callbacks; ->process and ->release are required; must outlive
 *	the dispatcher
 * @priv: returned by tdispatch_priv()
 *
 * Process context; may sleep.
 *
 * Return: the dispatcher, or ERR_PTR(-EINVAL) for a bad config or ops,
 * ERR_PTR(-ENOMEM), or the error of starting the acceptor kthread.
 */
struct tdispatch *tdispatch_create(const struct tdispatch_config *cfg,
				   const struct tdispatch_ops *ops, void *priv)
{
	return td_create(cfg, ops, priv, GFP_KERNEL);
}
EXPORT_SYMBOL_GPL(tdispatch_create);

/* A dispatcher whose memory is allocated with @gfp: the char device charges it. */
struct tdispatch *td_create(const struct tdispatch_config *cfg,
			    const struct tdispatch_ops *ops, void *priv, gfp_t gfp)
{
	struct task_struct *acceptor;
	struct tdispatch *d;
	unsigned int i;
	int cpu;

	might_sleep();
	if (!cfg || !ops || !ops->process || !ops->release || !ops->lock != !ops->unlock ||
	    !td_config_valid(cfg))
		return ERR_PTR(-EINVAL);

	d = kzalloc(struct_size(d, workers, cfg->workers), gfp);
	if (!d)
		return ERR_PTR(-ENOMEM);
	d->nr_workers = cfg->workers;
	d->cfg = *cfg;
	strscpy(d->name, cfg->name ?: "anon", sizeof(d->name));
	d->cfg.name = d->name;
	d->ops = ops;
	d->priv = priv;
	/*
	 * What the acceptor allocates as the tasks grow is charged as @d is
	 * (the char device's caller sets the active memcg).  The reference
	 * keeps an offlined memcg around until @d goes.
	 */
	if (gfp & __GFP_ACCOUNT)
		d->memcg = get_mem_cgroup_from_mm(NULL);
	init_waitqueue_head(&d->idle_wait);
	mutex_init(&d->lock);
	spin_lock_init(&d->observers_lock);
	INIT_LIST_HEAD(&d->observers);
	INIT_LIST_HEAD(&d->periodic);
	d->periodic_next = KTIME_MAX;
	td_pending_init(&d->pending, cfg->max_buffer, cfg->max_batch, cfg->max_delay_ns);
	d->pending.max_attempts = cfg->max_attempts;
	td_rate_set(&d->rate, cfg->rate, cfg->burst ?: td_default_burst(d), ktime_get());
	td_shaper_init(&d->shaper, cfg->congestion_delay_ns, cfg->transient_delay_ns);

	d->task_array = kvcalloc(cfg->workers * cfg->max_batch,
				 sizeof(*d->task_array), gfp);
	d->result_array = kvmalloc(cfg->workers * cfg->max_batch, gfp);
	d->input = alloc_percpu_gfp(struct td_input, gfp);
	if (!d->task_array || !d->result_array || !d->input)
		goto nomem;
	if (cfg->flags & TDISPATCH_MERGE) {
		td_merge_init(&d->merge, td_merge_held(cfg));
		if (td_merge_alloc(&d->merge, gfp))
			goto nomem;
	}
	for_each_possible_cpu(cpu)
		init_llist_head(&per_cpu_ptr(d->input, cpu)->list);
	for (i = 0; i < cfg->workers; i++) {
		d->workers[i].d = d;
		d->workers[i].batch.tasks = d->task_array + i * cfg->max_batch;
		d->workers[i].batch.results = d->result_array + i * cfg->max_batch;
		INIT_WORK(&d->workers[i].work, td_batch_work);
	}
	d->free_workers = GENMASK_ULL(cfg->workers - 1, 0);
	/*
	 * With ->lock, input goes to the acceptor, which queues a worker
	 * only when a batch would go: a worker must take the lock before it
	 * looks (td_locked_work()), and should not for nothing.  An urgent
	 * item with no window queues one itself (td_urgent_kick()).
	 */
	d->direct = !cfg->max_delay_ns && !ops->lock;

	/*
	 * Room for each worker's work twice: once running and once queued
	 * again (a submitter, the acceptor and the worker itself may queue
	 * it while it runs).  With room for one each, a work queued again
	 * behind its running self held another worker's cut batch inactive
	 * until that ->process() returned.  A work item never runs beside
	 * itself, so no more than ->workers batches run at once.
	 */
	d->wq = alloc_workqueue("tdispatch-%s", WQ_UNBOUND |
				(cfg->flags & TDISPATCH_NORMAL_PRIORITY ? 0 : WQ_HIGHPRI),
				2 * cfg->workers, d->name);
	if (!d->wq)
		goto nomem;

	acceptor = kthread_create(td_acceptor_fn, d, "tdispatch/%s", d->name);
	if (IS_ERR(acceptor)) {
		td_free(d);
		return ERR_CAST(acceptor);
	}
	if (!(cfg->flags & TDISPATCH_NORMAL_PRIORITY))
		sched_set_fifo_low(acceptor);
	/* Workers wake it until the very end of destroy; keep it around. */
	d->acceptor = get_task_struct(acceptor);
	wake_up_process(acceptor);
	td_debugfs_add(d);
	return d;

nomem:
	td_free(d);
	return ERR_PTR(-ENOMEM);
}

/**
 * tdispatch_priv() - the private pointer given to tdispatch_create()
 * @d: the dispatcher
 *
 * Any context.
 *
 * Return: the pointer.
 */
void *tdispatch_priv(const struct tdispatch *d)
{
	return d->priv;
}
EXPORT_SYMBOL_GPL(tdispatch_priv);

/*
 * @op on the pending set under the lock, every submission made before the
 * call drained first; what ended is released after.
 */
static int td_locked_op(struct tdispatch *d, u64 arg,
			int (*op)(struct td_pending *p, u64 arg, ktime_t now,
				  struct list_head *reap))
{
	LIST_HEAD(reap);
	ktime_t now;
	int ret;

	might_sleep();
	mutex_lock(&d->lock);
	now = ktime_get();
	td_drain_input(d, now, &reap);
	ret = op(&d->pending, arg, now, &reap);
	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	td_kick(d);
	return ret;
}

static int td_cancel_op(struct td_pending *p, u64 id, ktime_t now, struct list_head *reap)
{
	return td_pending_cancel(p, id, reap);
}

/**
 * tdispatch_cancel() - cancel the pending task of an id
 * @d: the dispatcher
 * @id: the id
 *
 * Every task with @id submitted before the call is considered, including
 * those the acceptor has not drained yet; items are not (see &struct
 * tdispatch_item).  A task already in a worker's
 * batch cannot be recalled.  The cancelled task's ->release() has run
 * when this returns.
 *
 * Process context; may sleep.
 *
 * Return: 0 if a task was cancelled; -EBUSY if @id is only in flight;
 * -ENOENT if no task with @id is pending.
 */
int tdispatch_cancel(struct tdispatch *d, u64 id)
{
	return td_locked_op(d, id, td_cancel_op);
}
EXPORT_SYMBOL_GPL(tdispatch_cancel);

/**
 * tdispatch_expedite() - let the delayed task of an id in now
 * @d: the dispatcher
 * @id: the id
 *
 * As mod_delayed_work() with no delay: the task that waits for its
 * not-before time enters the pending set at once, as if its time had
 * come (it overrides a pending task of @id, and past its deadline it
 * expires), counted in &tdispatch_stats.expedited.  Every task submitted
 * before the call is considered.
 *
 * Process context; may sleep.
 *
 * Return: 0, or -ENOENT if no task of @id is delayed.
 */
int tdispatch_expedite(struct tdispatch *d, u64 id)
{
	return td_locked_op(d, id, td_pending_expedite);
}
EXPORT_SYMBOL_GPL(tdispatch_expedite);

/*
 * One chunk of tdispatch_expedite_key(), the lock dropped after it, so that
 * the acceptor and the workers go on while a key that a million tasks
 * watch is let in; no more than were delayed when it began (input
 * drained), lest newcomers keep it busy.  @kr starts zeroed and adds up.
 * Process context.  Return: whether tasks watching @key may be left.
 */
bool td_expedite_key_chunk(struct tdispatch *d, u64 key, struct td_key_expedite *kr)
{
	LIST_HEAD(reap);
	ktime_t now;
	int nr;

	mutex_lock(&d->lock);
	now = ktime_get();
	td_drain_input(d, now, &reap);
	if (!kr->total)
		kr->limit = d->pending.nr_delayed;
	nr = td_pending_expedite_key(&d->pending, key, TD_EXPEDITE_CHUNK, now, &reap);
	if (nr > 0 && !kr->total)
		d->pending.key_expedites++;
	td_delayed_sync(d);
	mutex_unlock(&d->lock);
	td_reap(d, &reap);
	td_kick(d);
	if (nr > 0)
		kr->total += nr;
	return nr == TD_EXPEDITE_CHUNK && kr->total < kr->limit;
}

/**
 * tdispatch_expedite_key() - let in every delayed task that watches a key
 * @d: the dispatcher
 * @key: the key their tdispatch_submit_with() named
 *
 * As tdispatch_expedite() for each of them, in one call: Kafka's purgatory
 * completing the operations that watch a key.  Counted in
 * &tdispatch_stats.expedited (each) and .key_expedites (the call).  Keys
 * are found in O(log n).  The tasks are let in a chunk at a time, the
 * dispatcher's lock dropped in between: a watcher submitted meanwhile may
 * be let in too.
 *
 * Process context; may sleep.
 *
 * Return: how many tasks were let in, or -ENOENT if none watches @key.
 */
int tdispatch_expedite_key(struct tdispatch *d, u64 key)
{
	struct td_key_expedite kr = { };

	might_sleep();
	while (td_expedite_key_chunk(d, key, &kr))
		cond_resched();
	return kr.total ?: -ENOENT;
}
EXPORT_SYMBOL_GPL(tdispatch_expedite_key);

/**
 * tdispatch_set_rate() - change a dispatcher's rate limit
 * @d: the dispatcher
 * @rate: most tasks (or batches) a second handed to workers; 0 for no limit
 * @burst: most tasks at once after a quiet spell, 1 to 1048576; 0 for
 *	max_batch (with %TDISPATCH_RATE_BATCHES, both count batches, and 0 is
 *	one batch)
 *
 * As &tdispatch_config.rate and .burst, from now on.  The tokens saved up
 * are kept, up to the new @burst.
 *
 * Process context; may sleep.
 *
 * Return: 0, or -EINVAL if @burst is out of range.
 */
int tdispatch_set_rate(struct tdispatch *d, unsigned int rate, unsigned int burst)
{
	might_sleep();
	if (burst > TD_MAX_BUFFER)
		return -EINVAL;
	mutex_lock(&d->lock);
	td_rate_set(&d->rate, rate, burst ?: td_default_burst(d), ktime_get());
	mutex_unlock(&d->lock);
	td_kick(d);
	return 0;
}
EXPORT_SYMBOL_GPL(tdispatch_set_rate);

/*
 * Cut no more batches; a batch that ends wanting a retry or a redelivery
 * is cancelled instead.  Destroy's last stage, which the char device
 * starts early, before it lets its parked batches go.
 */
void td_stop_batches(struct tdispatch *d)
{
	mutex_lock(&d->lock);
	d->stopping = true;
	/* No batch waits for tokens any more. */
	td_throttle_end(d, ktime_get());
	mutex_unlock(&d->lock);
}

/* Wait until nothing is queued, pending or in flight, or @timeout passes. */
static int td_wait_idle(struct tdispatch *d, unsigned long timeout)
{
	unsigned long end = jiffies + timeout;
	int ret = 0;

	/* Counted under the lock: each batch that ends after our look kicks. */
	mutex_lock(&d->lock);
	d->idle_waiters++;
	mutex_unlock(&d->lock);
	for (;;) {
		unsigned long seq = READ_ONCE(d->idle_seq);
		long left;
		bool idle;

		mutex_lock(&d->lock);
		idle = td_idle(d);
		mutex_unlock(&d->lock);
		if (idle)
			break;
		left = (long)(end - jiffies);
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		td_kick(d);
		wait_event_timeout(d->idle_wait, READ_ONCE(d->idle_seq) != seq, left);
	}
	mutex_lock(&d->lock);
	d->idle_waiters--;
	mutex_unlock(&d->lock);
	return ret;
}

/**
 * tdispatch_destroy() - stop a dispatcher and free it
 * @d: the dispatcher
 * @mode: %TDISPATCH_DRAIN to process what is pending first,
 *	%TDISPATCH_DISCARD to cancel it
 * @timeout: in jiffies, how long %TDISPATCH_DRAIN may take; ignored for
 *	%TDISPATCH_DISCARD
 *
 * A published dispatcher is withdrawn first (tdispatch_unpublish()).
 * Submissions fail with -ESHUTDOWN from the moment this is called.  Then,
 * for %TDISPATCH_DRAIN, batches are cut without waiting for max_delay and
 * retried (the shaper still holds off) until nothing is pending or in
 * flight, or @timeout passes.  After that no batch is
 * cut; batches already in ->process() are waited for, and their retries
 * are cancelled; everything still pending is cancelled.  Every task has
 * been released when this returns.
 *
 * Process context; may sleep.  Must not be called from ->process() or
 * ->release() of @d itself.
 *
 * Return: 0, or -ETIMEDOUT if %TDISPATCH_DRAIN left tasks to cancel.
 */
int tdispatch_destroy(struct tdispatch *d, enum tdispatch_destroy_mode mode,
		      unsigned long timeout)
{
	void (*withdraw)(struct tdispatch *d);
	LIST_HEAD(reap);
	int ret = 0;

	might_sleep();
	/* Withdrawn from userspace first: tdispatch_unpublish(), set by named.c. */
	withdraw = READ_ONCE(d->withdraw);
	if (withdraw)
		withdraw(d);
	/* No reader of its state is left after this. */
	td_debugfs_remove(d);
	WRITE_ONCE(d->dead, true);
	/* Submitters that saw ->dead clear have their tasks on the lists. */
	synchronize_rcu();
	/* Nothing new starts: no submission, no periodic run. */
	td_periodic_stop(d);
	if (mode != TDISPATCH_DRAIN)
		td_stop_batches(d);

	if (mode == TDISPATCH_DRAIN) {
		/* Nothing more will join a batch: stop waiting for max_delay. */
		mutex_lock(&d->lock);
		d->pending.flush = true;
		mutex_unlock(&d->lock);
		ret = td_wait_idle(d, timeout);
	}

	td_stop_batches(d);
	/* Running batches finish; their retries become cancellations. */
	drain_workqueue(d->wq);
	kthread_stop(d->acceptor);
	put_task_struct(d->acceptor);

	mutex_lock(&d->lock);
	td_drain_input(d, ktime_get(), &reap);
	td_pending_cancel_all(&d->pending, &reap);
	WARN_ON(d->pending.nr_inflight || d->free_workers != GENMASK_ULL(d->nr_workers - 1, 0) ||
		d->pending.ids.nr || d->express_runs || atomic_long_read(&d->express_inflight));
	td_delayed_sync(d);
	WARN_ON(atomic_read(&d->delayed_total));
	mutex_unlock(&d->lock);
	td_reap(d, &reap);

	td_free(d);
	return ret;
}
EXPORT_SYMBOL_GPL(tdispatch_destroy);
