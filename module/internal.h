/* SPDX-License-Identifier: GPL-2.0 */
/* Declarations shared between the files of tdispatch.ko; not an API. */
#ifndef _TDISPATCH_INTERNAL_H
#define _TDISPATCH_INTERNAL_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/list.h>
#include <linux/list_bl.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/siphash.h>
#include <linux/srcu.h>
#include <linux/sizes.h>
#include <linux/tdispatch.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "events.h"
#include "file.h"
#include "limits.h"
#include "merge.h"
#include "pending.h"
#include "periodic.h"
#include "shaper.h"
#include "vec.h"
#include "wheel.h"

/* From the top-level VERSION file, through Kbuild: the one place it is set. */
#ifndef TDISPATCH_MODULE_VERSION
#error "TDISPATCH_MODULE_VERSION comes from Kbuild (the VERSION file)"
#endif

#define TD_NAME_LEN		24

/*
 * What td_batch_work() makes of a batch that td_batch_redeliver() marked:
 * its holder went away; back to the head of the line, no hold-off.  Never
 * a value ->process() may return: that one is out of range.
 */
#define TD_RESULT_REDELIVER	TDISPATCH_NR_RESULTS
#define TD_MAX_BUFFER		SZ_1M
#define TD_MAX_BATCH		4096U
#define TD_MAX_WORKERS		64U
#define TD_MAX_INPUT		SZ_1M
#define TD_MAX_DELAYED		SZ_16M

/*
 * One CPU's submissions, waiting for the acceptor.  Submitters on this CPU
 * (preemption off) are the only writers of ->added, ->rejected, ->wakeups
 * and ->merged, with this_cpu_inc(), so that an interrupt's submission
 * cannot tear them; the acceptor is the only writer of ->drained, under
 * ->lock.
 */
struct td_input {
	struct llist_head list;
	unsigned long added;		/* accepted onto ->list */
	unsigned long drained;		/* taken off ->list */
	unsigned long rejected;
	unsigned long wakeups;		/* empty -> non-empty transitions */
	unsigned long items;		/* item submissions accepted */
	unsigned long items_merged;	/* of those, found the item waiting */
	unsigned long items_pushed;	/* items put on ->list */
	unsigned long items_drained;	/* taken off it */
	unsigned long merged;		/* user submissions merged into a task */
} ____cacheline_aligned_in_smp;

/* One batch a worker may hold; there are cfg.workers of them. */
struct td_slot {
	struct work_struct work;
	struct tdispatch *d;
	bool redeliver;			/* set by td_batch_redeliver() */
	unsigned long filed;		/* batches counted and reaped; td_batch_filed() */
	struct tdispatch_batch batch;
};

struct tdispatch {
	char name[TD_NAME_LEN];
	struct tdispatch_config cfg;
	const struct tdispatch_ops *ops;
	void *priv;
	struct mem_cgroup *memcg;	/* charged for its id hash, or NULL */

	struct td_input __percpu *input;
	/*
	 * Set by destroy, which then waits for an RCU grace period: a
	 * submitter reads it with preemption off, so one that saw it clear
	 * has its task on an input list by the time destroy goes on.
	 */
	bool dead;
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
	 * slot's work drains it and cuts its own batch; the acceptor is left
	 * what takes time (delays, retries, the shaper, periodic runs).
	 */
	bool direct;
	struct workqueue_struct *wq;
	bool kick;			/* acceptor: look again */
	unsigned long idle_seq;		/* bumped each time it finds all idle */
	unsigned int idle_waiters;	/* in td_wait_idle(); under ->lock */
	wait_queue_head_t idle_wait;
	wait_queue_head_t filed_wait;	/* td_batch_filed() moved on */

	struct mutex lock;		/* everything below */
	struct td_pending pending;
	struct td_shaper shaper;
	u64 free_slots;			/* bitmap of idle struct td_slot */
	bool holding;			/* shaper is withholding a due batch */
	struct td_bucket bucket;	/* the rate limit */
	ktime_t throttled_since;	/* a due batch waits for tokens; 0: none */
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
	unsigned int delayed_drained;	/* drained since the last sync */
	unsigned int delayed_seen;	/* nr_delayed at the last sync */
	/* Periodic registrations (supervisor.c), under ->lock. */
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
	u8 *result_array;		/* the slots' tdispatch_batch_set_result() */
	unsigned int nr_slots;
	struct td_slot slots[] __counted_by(nr_slots);
};

int td_task_cache_init(void);
void td_task_cache_exit(void);

/* Tell the acceptor to look again (a batch ended, a cancel, a destroy). */
static inline void td_kick(struct tdispatch *d)
{
	WRITE_ONCE(d->kick, true);
	wake_up_process(d->acceptor);
}

void td_drain_input(struct tdispatch *d, ktime_t now, struct list_head *reap);

/* How far a tdispatch_release_key() has got: see td_release_key_chunk(). */
struct td_key_release {
	unsigned int limit;	/* tasks delayed when it began */
	int total;		/* let in so far */
};

bool td_release_key_chunk(struct tdispatch *d, u64 key, struct td_key_release *kr);

/* About how many tasks and items wait on @in: read without the lock, a hint. */
static inline unsigned int td_input_backlog_cpu(struct td_input *in)
{
	long tasks = READ_ONCE(in->added) - READ_ONCE(in->drained);
	long items = READ_ONCE(in->items_pushed) - READ_ONCE(in->items_drained);

	return min_t(unsigned long, max(tasks, 0L) + max(items, 0L), UINT_MAX);
}

/* ids.c: the size of the id hash. */
void td_grow_ids_now(struct tdispatch *d, unsigned int nr);
unsigned int td_presize_ids(struct tdispatch *d);
void td_resize_ids(struct tdispatch *d, unsigned int bits);

bool td_input_empty(struct tdispatch *d);
void td_delayed_sync(struct tdispatch *d);
void td_reap(struct tdispatch *d, struct list_head *reap);
void td_items_inflight(struct tdispatch_batch *b);
void td_item_requeued(struct tdispatch *d, struct tdispatch_task *t);
void td_item_ended(struct tdispatch *d, struct tdispatch_task *t);
void td_throttle_end(struct tdispatch *d, ktime_t now);

/* debugfs.c */
void td_debugfs_init(void);
void td_debugfs_exit(void);
void td_debugfs_add(struct tdispatch *d);
void td_debugfs_remove(struct tdispatch *d);
struct tdispatch *td_create(const struct tdispatch_config *cfg,
			    const struct tdispatch_ops *ops, void *priv, gfp_t gfp);
struct tdispatch_task *td_task_alloc(gfp_t gfp, bool ext);
void td_task_free(struct tdispatch_task *t);
void td_stop_batches(struct tdispatch *d);
void td_batch_redeliver(struct tdispatch_batch *b);
unsigned long td_batch_filed(struct tdispatch_batch *b);
bool td_idle(struct tdispatch *d);
int td_acceptor_fn(void *arg);
void td_batch_work(struct work_struct *work);

void td_query(struct tdispatch *d, u64 id, u32 *state, u32 *attempts, u32 *waiting,
	      u32 *delayed);

#endif /* _TDISPATCH_INTERNAL_H */
