/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A dispatcher, struct tdispatch, and what it embeds: what the files of
 * tdispatch.ko that work on one share.  Their functions are declared in
 * a header beside each file.
 */
#ifndef _TDISPATCH_INTERNAL_H
#define _TDISPATCH_INTERNAL_H

#include <linux/atomic.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/tdispatch.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "merge.h"
#include "pending.h"
#include "shaper.h"

/* From the top-level VERSION file, through Kbuild: the one place it is set. */
#ifndef TDISPATCH_MODULE_VERSION
#error "TDISPATCH_MODULE_VERSION comes from Kbuild (the VERSION file)"
#endif

#define TD_NAME_LEN		24

struct td_input;
struct td_pub;

#define TD_MAX_BUFFER		SZ_1M
#define TD_MAX_BATCH		4096U
#define TD_MAX_WORKERS		64U
#define TD_MAX_INPUT		SZ_1M
#define TD_MAX_DELAYED		SZ_16M

/*
 * Items express runs (worker.c) took and have not batched, in order: a
 * run's take, or what runs shared (->express_shared).
 */
struct td_chain {
	struct llist_node *first;
	struct llist_node **last;	/* the last one's ->next */
	ktime_t at;			/* the oldest take's time; the items carry their own */
};

/* One batch a worker may hold; there are cfg.workers of them. */
struct td_worker {
	struct work_struct work;
	struct tdispatch *d;
	bool redeliver;			/* set by td_batch_redeliver() */
	bool cut_queued;		/* the acceptor cut its batch and queued it */
	bool caller;			/* a caller's, on its stack: tdispatch_run_now() */
	/*
	 * Its batch is an express run's (worker.c), not in the pending set's
	 * books yet: for td_end_batch() when the batch did not succeed.
	 */
	bool express;
	struct tdispatch_batch batch;
};

struct tdispatch {
	char name[TD_NAME_LEN];
	struct tdispatch_config cfg;
	const struct tdispatch_ops *ops;
	void *priv;
	struct mem_cgroup *memcg;	/* charged for its id hash, or NULL */

	struct td_input __percpu *input;	/* submit.h */
	/*
	 * Set by destroy, which then waits for an RCU grace period: a
	 * submitter reads it with preemption off, so one that saw it clear
	 * has its task on an input list by the time destroy goes on.
	 */
	bool dead;
	/* With %TDISPATCH_MERGE, its waiting tasks that merges replace: merge.c. */
	struct td_merge merge;
	struct task_struct *acceptor;
	/*
	 * 0, or the acceptor will look again on its own soon enough (a timer
	 * within max_delay, or a batch ending) unless this many more tasks
	 * would make a batch due: then a submitter wakes it only when its
	 * CPU's undrained tasks reach that many, not for the first one.
	 */
	unsigned int wake_room;
	/*
	 * No window (max_delay 0): input goes straight to a worker, whose
	 * work drains it and cuts its own batch; the acceptor is left
	 * what takes time (delays, retries, the shaper, periodic runs).
	 */
	bool direct;
	/* ->process() may hold a batch: TD_RESULT_HELD, td_batch_finish(). */
	bool holds_batches;
	/*
	 * Items an express run (worker.c) took off the input lists and has
	 * not accounted for yet: in flight, for tdispatch_get_stats().
	 */
	atomic_long_t express_inflight;
	struct workqueue_struct *wq;
	bool kick;			/* acceptor: look again */
	unsigned int urgent;		/* an urgent item may wait: see td_cut_batch() */
	unsigned long idle_seq;		/* bumped each time it finds all idle */
	unsigned int idle_waiters;	/* in td_wait_idle(); under ->lock */
	wait_queue_head_t idle_wait;

	struct mutex lock;		/* everything below */
	struct td_pending pending;
	struct td_shaper shaper;
	/*
	 * Bitmap of idle struct td_worker.  Also read without the lock: as a
	 * hint of which work to queue, and, with no window, to let input
	 * gather while it is 0 (td_input_room(), paired with td_end_batch()).
	 */
	u64 free_workers;
	unsigned int express_runs;	/* workers in an express run */
	/*
	 * What express runs took beyond their batches, for the next batch of
	 * any run (td_express_share()); any drain of the input puts it in
	 * line first (td_drain_input()).
	 */
	struct td_chain express_shared;
	bool holding;			/* shaper is withholding a due batch */
	struct td_rate rate;		/* the rate limit */
	ktime_t throttled_since;	/* a due batch waits for tokens; 0: none */
	/*
	 * Set by each pass of the acceptor: the token's time it sleeps until
	 * at the latest, when it found the line throttled with a worker free;
	 * 0 otherwise.  Every pass rewrites it, so it never outlives the sleep
	 * it describes.
	 */
	ktime_t throttled_wake;
	u64 looks;			/* the acceptor's passes over the line */
	u64 throttled_ns;		/* time due batches waited for tokens */
	bool stopping;			/* destroy: no new batches, no retries */
	u64 batches;
	u64 results[TDISPATCH_NR_RESULTS];
	u64 holdoffs;
	u64 redelivered;
	u64 bad_results;		/* ->process() returned no result */
	u64 items_merged;		/* AGAIN items put back by a retry */

	/*
	 * Delayed tasks on the input lists or in the delayed set, against
	 * max_delayed; td_delayed_sync() keeps it exact under ->lock.
	 */
	atomic_t delayed_total;
	atomic_t items_round;		/* items between td_item_ended() and td_item_again() */
	unsigned int delayed_drained;	/* drained since the last sync */
	unsigned int delayed_seen;	/* nr_delayed at the last sync */
	/* Periodic registrations (periodic_run.c), under ->lock. */
	struct list_head periodic;
	unsigned int nr_periodic;
	ktime_t periodic_next;		/* when one needs the acceptor */
	u64 periodic_runs;

	/* Readers of outcome events: struct td_events, see td_reap(). */
	spinlock_t observers_lock;
	struct list_head observers;
	unsigned int nr_observers;
	struct td_pub *pub;		/* published under its name */
	void (*withdraw)(struct tdispatch *d);	/* named.c's, from the first publish */

	struct dentry *debug_dir;	/* debugfs.c */
	struct tdispatch_task **task_array;
	u8 *result_array;		/* the workers' tdispatch_batch_set_result() */
	unsigned int nr_workers;
	struct td_worker workers[] __counted_by(nr_workers);
};

/* Tell the acceptor to look again (a batch ended, a cancel, a destroy). */
static inline void td_kick(struct tdispatch *d)
{
	WRITE_ONCE(d->kick, true);
	wake_up_process(d->acceptor);
}

#endif /* _TDISPATCH_INTERNAL_H */
