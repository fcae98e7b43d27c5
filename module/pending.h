/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A task's place and flags, what a delayed or watching task adds to it,
 * and the pending set that holds tasks by id and in order (pending.c).
 */
#ifndef _TDISPATCH_PENDING_H
#define _TDISPATCH_PENDING_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/list_bl.h>
#include <linux/siphash.h>
#include <linux/tdispatch.h>
#include <linux/types.h>

#include "ids.h"
#include "watch.h"
#include "wheel.h"

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
#define TD_TASK_PERIODIC	BIT(4)	/* the run_task of a struct td_periodic_reg */
/* Two bits the owner of %TD_TASK_OWNED tasks keeps for itself. */
#define TD_TASK_OWNER0		BIT(5)
#define TD_TASK_OWNER1		BIT(6)
/* A struct td_merge_task, in its dispatcher's merge table until processed: merge.c */
#define TD_TASK_MERGE_NODE	BIT(7)

/*
 * What only a task with a deadline, a not-before time or a watch key needs,
 * in front of it in one allocation (as delayed_work is a work_struct and
 * a timer): the rest keep to a 64-byte struct tdispatch_task.  A delayed
 * task waits in the wheel through ->delay, whose due time is the task's
 * not-before time (0: none) from submission to its end.
 */
struct td_task_ext {
	ktime_t deadline;
	struct td_wheel_node delay;
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
	return t->flags & TD_TASK_EXT ? (ktime_t)td_ext(t)->delay.due : 0;
}

static inline bool td_task_expired(const struct tdispatch_task *t, ktime_t now)
{
	ktime_t deadline = td_task_deadline(t);

	return deadline && ktime_after(now, deadline);
}

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
 * Or'ed into QUEUED or AGAIN by tdispatch_submit_item_urgent(): past the
 * rate limit; a batch cut clears it with INFLIGHT.  tdispatch_item_make_urgent()
 * may set it in IDLE or INFLIGHT too, for the next submission.
 */
#define TD_ITEM_URGENT	0x8000

static inline bool td_task_urgent(const struct tdispatch_task *t)
{
	return (t->flags & TD_TASK_ITEM) && (READ_ONCE(t->item_state) & TD_ITEM_URGENT);
}

/*
 * The pending set: pure bookkeeping, no locking and no clock of its own
 * (callers pass "now"), so KUnit can drive it directly; no allocation
 * either: the acceptor allocates the id hash's buckets.
 *
 * The id hash holds every task the set has but items, at most three per
 * id: the pending one or the in-flight one with, behind it, the newer
 * task that waits for it; and the delayed one.  Their ->state tells them
 * apart.  An item is keyed by its address (its ->item_state coalesces),
 * so it stays out of the hash: nothing is found by an item's id.
 * A bucket is a chain of ->hnext, one pointer a task.  The order list holds
 * every pending task, waiting ones included, oldest place in line first,
 * retries at the head.
 *
 * Tasks whose not_before time has not come wait in ->delayed, a timing
 * wheel (module/wheel.c) through td_task_ext's ->delay,
 * which lets them in by not_before time, equal times in arrival order.
 * They touch nothing in the set proper until td_pending_promote().
 */
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
	u64 expedited;			/* delayed tasks let in early */
	u64 key_expedites;		/* expedite_key calls that let one in */
	u64 outcomes[TDISPATCH_NR_OUTCOMES];
};

/* The task of @id in one of the states in the mask @states. */
#define TD_IN(state)	BIT((state) - TD_TASK_INPUT)

static inline struct tdispatch_task *td_pending_find(struct td_pending *p, u64 id,
						     unsigned int states)
{
	struct tdispatch_task *t;

	for (t = td_ids_chain(&p->ids, id); t; t = t->hnext)
		if (t->id == id && (TD_IN(t->state) & states))
			return t;
	return NULL;
}

void td_pending_init(struct td_pending *p, unsigned int max_buffer,
		     unsigned int max_batch, u64 max_delay_ns);
void td_pending_free(struct td_pending *p);
void td_pending_add(struct td_pending *p, struct tdispatch_task *t, ktime_t now,
		    struct list_head *reap);
bool td_pending_due(struct td_pending *p, ktime_t now, ktime_t *when);
unsigned int td_pending_gather_room(struct td_pending *p, unsigned int max_input, bool busy);
unsigned int td_pending_cut(struct td_pending *p, ktime_t now, unsigned int max,
			    struct tdispatch_task **batch, struct list_head *reap);
unsigned int td_pending_cut_urgent(struct td_pending *p, ktime_t now, unsigned int max,
				   struct tdispatch_task **batch, struct list_head *reap);
bool td_pending_urgent_waits(struct td_pending *p, ktime_t now, struct list_head *reap);
struct tdispatch_task *td_pending_take(struct td_pending *p, u64 id, ktime_t now,
				       struct list_head *reap);
struct tdispatch_task *td_pending_take_task(struct td_pending *p, struct tdispatch_task *t,
					    ktime_t now, struct list_head *reap);
void td_pending_requeue(struct td_pending *p, struct tdispatch_task **batch,
			unsigned int nr, struct list_head *reap);
void td_pending_complete(struct td_pending *p, struct tdispatch_task **batch,
			 unsigned int nr, enum tdispatch_outcome outcome,
			 struct list_head *reap);
int td_pending_cancel(struct td_pending *p, u64 id, struct list_head *reap);
int td_pending_expedite(struct td_pending *p, u64 id, ktime_t now, struct list_head *reap);
int td_pending_expedite_key(struct td_pending *p, u64 key, unsigned int max, ktime_t now,
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

#endif /* _TDISPATCH_PENDING_H */
