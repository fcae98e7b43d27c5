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

#include "limits.h"
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
 * Where a task is.  A task that has ended holds its enum tdispatch_outcome
 * in ->state instead, so these start above TDISPATCH_NR_OUTCOMES.
 */
enum td_task_state {
	TD_TASK_INPUT = 16,	/* on a per-CPU input list */
	TD_TASK_PENDING,	/* in the pending set, free to be batched */
	TD_TASK_WAITING,	/* pending, behind an in-flight task of its id */
	TD_TASK_INFLIGHT,	/* in a batch that a worker holds */
	TD_TASK_DELAYED,	/* waiting for its not_before time */
};

/* ->flags of a task */
#define TD_TASK_ITEM		BIT(0)	/* embedded in a struct tdispatch_item */
#define TD_TASK_WATCHED		BIT(1)	/* its td_task_ext's ->watcher is set */
#define TD_TASK_OWNED		BIT(2)	/* ->release() frees the task too */
#define TD_TASK_EXT		BIT(3)	/* in a struct td_task_ext */
#define TD_TASK_PERIODIC	BIT(4)	/* the run_task of a struct td_sup */
#define TD_TASK_MERGE		BIT(5)	/* user.c's, in a merge table: td_merge_* */
#define TD_TASK_SLOT		BIT(6)	/* user.c's, its payload in a shared slot */

/*
 * What only a task with a deadline, a not-before time or a watch key needs,
 * in front of it in one allocation (as delayed_work is a work_struct and
 * a timer): the rest keep to a 64-byte struct tdispatch_task.  Delayed
 * tasks are the wheel's entries, through ->tnode or ->task.tslot; a
 * %TD_TASK_MERGE task, never delayed, is in its file's merge table
 * through ->mnode instead.
 */
struct td_task_ext {
	ktime_t deadline;
	ktime_t not_before;
	union {
		struct rb_node tnode;
		struct hlist_bl_node mnode;
	};
	struct td_watcher *watcher;	/* before it is due: its watch key */
	struct tdispatch_task task;
};

static inline struct td_task_ext *td_ext(const struct tdispatch_task *t)
{
	return container_of((struct tdispatch_task *)t, struct td_task_ext, task);
}

static inline ktime_t td_task_deadline(const struct tdispatch_task *t)
{
	return t->flags & TD_TASK_EXT ? td_ext(t)->deadline : 0;
}

static inline ktime_t td_task_not_before(const struct tdispatch_task *t)
{
	return t->flags & TD_TASK_EXT ? td_ext(t)->not_before : 0;
}

/*
 * A delayed task's watch key, allocated with the task when it is
 * submitted and freed when it leaves the delayed set (or at once, if it is
 * due at once).  In td_pending.watchers by key, equal keys in the order
 * they were delayed, so that all watchers of a key are one walk from the
 * first.
 */
struct td_watcher {
	struct rb_node node;
	u64 key;
	struct tdispatch_task *t;
};

/*
 * An item's ->state.  Submitters move it out of IDLE and INFLIGHT; the
 * engine moves it on from QUEUED (a batch is cut) and, once the task has
 * left the dispatcher, back to IDLE or, if it was submitted again while
 * processed (AGAIN), onto an input list once more.
 */
enum td_item_state {
	TD_ITEM_IDLE,
	TD_ITEM_QUEUED,		/* on an input list or pending */
	TD_ITEM_INFLIGHT,	/* in a batch, or ended and not reaped yet */
	TD_ITEM_AGAIN,		/* INFLIGHT, and submitted meanwhile */
};

/*
 * The pending set: pure bookkeeping, no locking and no clock of its own
 * (callers pass "now"), so KUnit can drive it directly; no allocation
 * either: the acceptor allocates the id hash's buckets.
 *
 * The id hash holds every task the set has, at most three per id: the
 * pending one or the in-flight one with, behind it, the newer task that
 * waits for it; and the delayed one.  Their ->state tells them apart.
 * A bucket is a chain of ->hnext, one pointer a task.  The order list holds
 * every pending task, waiting ones included, oldest place in line first,
 * retries at the head.
 *
 * Tasks whose not_before time has not come wait in ->delayed, a timing
 * wheel (module/wheel.c) through td_task_ext's ->tnode or ->task.tslot,
 * which lets them in by not_before time, equal times in arrival order.
 * They touch nothing in the set proper until td_pending_promote().
 */
#define TD_IDS_MIN_BITS		4
#define TD_IDS_MAX_BITS		22

struct td_ids {
	struct tdispatch_task **bucket;
	unsigned int bits;
	unsigned int nr;
	hsiphash_key_t key;
	u64 last_id;			/* td_ids_bucket()'s last, and its hash */
	u32 last_hash;
	struct tdispatch_task *first[1U << TD_IDS_MIN_BITS];	/* until it grows */
};

struct td_pending {
	struct td_ids ids;
	struct list_head order;
	unsigned int nr_pending;	/* on the order list */
	unsigned int nr_waiting;	/* of those, behind an in-flight id */
	unsigned int nr_inflight;	/* in batches */
	struct td_wheel delayed;
	unsigned int nr_delayed;
	struct rb_root watchers;	/* of the delayed tasks that watch a key */
	unsigned int max_buffer;
	unsigned int max_batch;
	unsigned int max_attempts;	/* 0: no limit */
	u64 max_delay_ns;
	bool flush;			/* draining: cut whatever is ready */
	u64 drained;			/* tasks taken from the input lists */
	u64 retries;
	u64 released;			/* delayed tasks let in early */
	u64 key_releases;		/* release_key calls that let one in */
	u64 outcomes[TDISPATCH_NR_OUTCOMES];
};

void td_pending_init(struct td_pending *p, unsigned int max_buffer,
		     unsigned int max_batch, u64 max_delay_ns);
unsigned int td_pending_ids_bits(struct td_pending *p, unsigned int nr);
struct tdispatch_task **td_pending_ids_move(struct td_pending *p, struct tdispatch_task **nb,
					    unsigned int bits);
void td_pending_free(struct td_pending *p);
void td_pending_add(struct td_pending *p, struct tdispatch_task *t, ktime_t now,
		    struct list_head *reap);
bool td_pending_due(struct td_pending *p, ktime_t now, ktime_t *when);
unsigned int td_pending_gather_room(struct td_pending *p, unsigned int max_input, bool busy);
unsigned int td_pending_cut(struct td_pending *p, ktime_t now, unsigned int max,
			    struct tdispatch_task **batch, struct list_head *reap);
void td_pending_requeue(struct td_pending *p, struct tdispatch_task **batch,
			unsigned int nr, struct list_head *reap);
void td_pending_complete(struct td_pending *p, struct tdispatch_task **batch,
			 unsigned int nr, enum tdispatch_outcome outcome,
			 struct list_head *reap);
int td_pending_cancel(struct td_pending *p, u64 id, struct list_head *reap);
int td_pending_release(struct td_pending *p, u64 id, ktime_t now, struct list_head *reap);
int td_pending_release_key(struct td_pending *p, u64 key, unsigned int max, ktime_t now,
			   struct list_head *reap);
void td_pending_cancel_task(struct td_pending *p, struct tdispatch_task *t,
			    struct list_head *reap);
void td_pending_cancel_all(struct td_pending *p, struct list_head *reap);
struct tdispatch_task *td_pending_lookup(struct td_pending *p, u64 id);
struct tdispatch_task *td_pending_waiter(struct td_pending *p, u64 id);
unsigned int td_pending_promote(struct td_pending *p, ktime_t now,
				struct list_head *reap);
ktime_t td_pending_next_delayed(struct td_pending *p);
struct tdispatch_task *td_pending_lookup_delayed(struct td_pending *p, u64 id);

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

/* The traffic shaper: how long the acceptor holds off after a failure. */
struct td_shaper {
	u64 congestion_delay_ns;
	u64 transient_delay_ns;
	ktime_t last_congestion;	/* 0: none in effect */
	ktime_t last_transient;
};

void td_shaper_init(struct td_shaper *s, u64 congestion_delay_ns,
		    u64 transient_delay_ns);
void td_shaper_record(struct td_shaper *s, enum tdispatch_result result,
		      ktime_t now);
u64 td_shaper_holdoff(struct td_shaper *s, ktime_t now);

/* The rate limit's token bucket, in shaper.c; pure state like the shaper. */
struct td_bucket {
	u32 rate;			/* tasks a second; 0: no limit */
	u32 burst;			/* most tokens, in tasks */
	u64 tokens;			/* in billionths of a task */
	ktime_t last;			/* when it was last filled */
};

void td_bucket_set(struct td_bucket *b, u32 rate, u32 burst, ktime_t now);
unsigned int td_bucket_allow(struct td_bucket *b, ktime_t now, unsigned int want,
			     unsigned int need, ktime_t *when);
void td_bucket_take(struct td_bucket *b, unsigned int n);

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
/*
 * What the tasks of one SUBMIT vector share: a clock reading (0 until the
 * first reads it) and a wake-up of @wake's acceptor owed since the last
 * td_vec_flush(), which comes every TD_VEC_FLUSH tasks.  The acceptor
 * wakes once for them, not on and off as they arrive.
 */
struct td_vec {
	ktime_t now;
	struct tdispatch *wake;
};

#define TD_VEC_FLUSH		32

int td_submit_task(struct tdispatch *d, struct tdispatch_task *t, u64 id, void *payload,
		   const struct tdispatch_submit_opts *o, struct td_watcher *w, u8 flags,
		   struct td_vec *v);
void td_vec_flush(struct td_vec *v);
void *td_vec_kmalloc(struct td_vec *v, size_t size, gfp_t gfp);

int td_submit_merged(struct tdispatch *d);

/*
 * A file's merge table (merge.c): the tasks whose payload a submission
 * with %TDISPATCH_UTASK_MERGE may replace, one an id, by ->task.id.
 */
struct td_merge {
	struct hlist_bl_head *heads;	/* 1 << bits; NULL until the first merge */
	unsigned int bits;
	hsiphash_key_t key;
};

void td_merge_init(struct td_merge *m, unsigned int held);
void td_merge_free(struct td_merge *m);
int td_merge_prepare(struct td_merge *m, struct td_vec *v);
struct hlist_bl_head *td_merge_lock(struct td_merge *m, u64 id) __acquires(bitlock);
struct td_task_ext *td_merge_find(struct hlist_bl_head *b, u64 id);
void td_merge_add(struct hlist_bl_head *b, struct td_task_ext *x);
void td_merge_del(struct td_task_ext *x);
bool td_merge_out(struct td_task_ext *x);
void td_merge_forget(struct td_merge *m, struct td_task_ext *x);

/* Whether @v holds a wake-up or a clock reading that a sleep must not hold. */
static inline bool td_vec_owes(const struct td_vec *v)
{
	return v && (v->wake || v->now);
}

/*
 * The user copies of a vector's tasks, which may sleep on a page fault:
 * tried first with page faults off, and only when that fails, after what
 * @v owes is paid.  A submitter that sleeps (a page being read in, or
 * held back on purpose with userfaultfd) must not hold back the acceptor's
 * wake-up that other tasks on its CPU's list wait for, nor a clock
 * reading that ages while it sleeps.  Inline, so that a copy of a size
 * known at build time skips the hardened usercopy check of its object.
 */
static __always_inline int td_vec_copy_from_user(struct td_vec *v, void *to,
						 const void __user *from, size_t n)
{
	unsigned long left;

	if (td_vec_owes(v)) {
		pagefault_disable();
		left = copy_from_user(to, from, n);
		pagefault_enable();
		if (!left)
			return 0;
		td_vec_flush(v);
	}
	return copy_from_user(to, from, n) ? -EFAULT : 0;
}

static inline int td_vec_put_user(struct td_vec *v, s32 x, s32 __user *to)
{
	int ret;

	if (td_vec_owes(v)) {
		pagefault_disable();
		ret = put_user(x, to);
		pagefault_enable();
		if (!ret)
			return 0;
		td_vec_flush(v);
	}
	return put_user(x, to);
}

void td_stop_batches(struct tdispatch *d);
void td_batch_redeliver(struct tdispatch_batch *b);
unsigned long td_batch_filed(struct tdispatch_batch *b);
bool td_idle(struct tdispatch *d);
int td_acceptor_fn(void *arg);
void td_batch_work(struct work_struct *work);

void td_query(struct tdispatch *d, u64 id, u32 *state, u32 *attempts, u32 *waiting,
	      u32 *delayed);

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

/* Drop a reference; true if the caller must release and free @s. */
static inline bool td_sup_put(struct td_sup *s)
{
	return !--s->refs;
}

void td_sup_free(struct tdispatch *d, struct td_sup *s);
void td_sup_wake_at(struct tdispatch *d, struct td_sup *s);
ktime_t td_supervise(struct tdispatch *d, ktime_t now, struct list_head *reap);
bool td_supervise_task(struct tdispatch *d, struct tdispatch_task *t, int res,
		       ktime_t now, struct list_head *reap);
void td_supervise_reap(struct tdispatch *d, struct tdispatch_task *t);
void td_supervise_stop(struct tdispatch *d);

/* A bounded ring of outcome events for one userspace reader. */
struct td_events {
	struct list_head node;		/* on the dispatcher's observers */
	spinlock_t lock;		/* the ring */
	struct mutex read_lock;		/* one reader at a time */
	wait_queue_head_t *wait;	/* the reader's file's */
	struct td_who who;		/* whose, for the per-user share */
	bool exempt;			/* CAP_SYS_RESOURCE: no per-user share */
	struct tdispatch_event *ring;
	u32 cap, head, count;
	u64 seq, lost, lost_total;
	bool gone;			/* the dispatcher was withdrawn */
};

int td_events_init(struct td_events *ev, u32 cap, wait_queue_head_t *wait);
void td_events_free(struct td_events *ev);
int td_events_attach(struct tdispatch *d, struct td_events *ev);
void td_events_detach(struct tdispatch *d, struct td_events *ev);
void td_events_observe(struct tdispatch *d, struct tdispatch_task *t,
		       enum tdispatch_outcome outcome);
bool td_events_ready(struct td_events *ev);
u64 td_events_lost(struct td_events *ev);
ssize_t td_events_read(struct td_events *ev, struct file *file,
		       char __user *buf, size_t len);

/* One per open /dev/tdispatch file: it owns a dispatcher or attaches to one. */
struct td_file {
	struct mutex lock;		/* ->user and ->attach are set once, under it */
	struct td_user *user;
	struct td_attach *attach;
	struct mem_cgroup *memcg;	/* the opener's, charged for all it holds */
	/* Per file, so that poll() before CREATE or ATTACH hears it. */
	wait_queue_head_t wait;
	atomic_long_t rejected_calls;
};

#define TD_USER_MAX_EVENTS	65536U
/*
 * What the engine and a file's calls allocate on a caller's behalf:
 * charged to its memory cgroup, and at the cgroup's limit an errno for the
 * caller, not the OOM killer.
 */
#define TD_GFP_USER		(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

int td_copy_in(void *karg, size_t ksize, const void __user *uarg, size_t ver0);
int td_copy_out(void __user *uarg, const void *karg, size_t ksize);
int td_submit_vector(void __user *uarg,
		     int (*submit_one)(void *ctx, struct tdispatch_utask *ut, u32 flags,
				       struct td_vec *v),
		     void *ctx);
ktime_t td_not_before(const struct tdispatch_utask *ut, u32 flags);
int td_copy_id(void __user *uarg, u64 *id);
/*
 * The dispatcher a shared call works on: a file's own, which lives as long
 * as the file, or a published one (@published), which may be withdrawn at any
 * time and is reached only between td_ctx_enter() and td_ctx_exit(), never
 * across user memory.
 */
struct td_ctx {
	struct tdispatch *d;
	struct tdispatch __rcu **published;	/* td_published_srcu */
};

extern struct srcu_struct td_published_srcu;

struct tdispatch *td_ctx_enter(const struct td_ctx *c, int *idx);
void td_ctx_exit(const struct td_ctx *c, int idx);
int td_ioctl_by_id(const struct td_ctx *c, void __user *uarg,
		   int (*op)(struct tdispatch *d, u64 id));
int td_ioctl_query(const struct td_ctx *c, void __user *uarg);
int td_ioctl_release_key(const struct td_ctx *c, void __user *uarg);
/* What a file counts of its own, beside its dispatcher's counters. */
struct td_file_counts {
	u64 rejected;		/* tasks refused before the engine saw them */
	u64 rejected_calls;
	u64 events_lost;
	u64 slot_writes;
};

int td_ioctl_stats(const struct td_ctx *c, void __user *uarg, const struct td_file_counts *fc);

int td_user_create(struct td_file *f, const struct file *file, void __user *uarg);
struct vm_area_struct;
int td_user_mmap(struct td_user *u, struct vm_area_struct *vma);
long td_user_ioctl(struct td_file *f, struct td_user *u, struct file *file,
		   unsigned int cmd, void __user *uarg);
ssize_t td_user_read(struct td_user *u, struct file *file, char __user *buf, size_t len);
__poll_t td_user_poll(struct td_user *u);
void td_user_flush(struct td_user *u, fl_owner_t id);
void td_user_release(struct td_user *u);

int td_named_list(void __user *uarg, const struct cred *cred);
int td_named_attach(struct td_file *f, const struct file *file, void __user *uarg);
long td_named_ioctl(struct td_file *f, struct td_attach *a, unsigned int cmd,
		    void __user *uarg);
ssize_t td_named_read(struct td_attach *a, struct file *file, char __user *buf, size_t len);
__poll_t td_named_poll(struct td_attach *a);
void td_named_release(struct td_attach *a);

int td_chardev_init(void);
void td_chardev_exit(void);

#endif /* _TDISPATCH_INTERNAL_H */
