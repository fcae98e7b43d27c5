/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU input lists and the tasks on them (submit.c): what a
 * submission puts there, and what the acceptor and the workers take off.
 */
#ifndef _TDISPATCH_SUBMIT_H
#define _TDISPATCH_SUBMIT_H

#include <linux/cache.h>
#include <linux/gfp.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/minmax.h>
#include <linux/tdispatch.h>
#include <linux/types.h>

struct tdispatch;

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
	unsigned long merged;		/* submissions merged into a task that waits */
} ____cacheline_aligned_in_smp;

/*
 * About how many tasks wait on @in, for the id hash (items stay out of
 * it): read without the lock, a hint.
 */
static inline unsigned int td_input_backlog_cpu(struct td_input *in)
{
	long tasks = READ_ONCE(in->added) - READ_ONCE(in->drained);

	return min_t(unsigned long, max(tasks, 0L), UINT_MAX);
}

int td_task_cache_init(void);
void td_task_cache_exit(void);
struct tdispatch_task *td_task_alloc(gfp_t gfp, bool ext);
struct tdispatch_task *td_merge_task_alloc(gfp_t gfp);
void td_task_free(struct tdispatch_task *t);
void td_drain_shared(struct tdispatch *d, struct list_head *reap);
unsigned int td_drain_list(struct tdispatch *d, struct td_input *in, struct llist_node *first,
			   ktime_t now, struct list_head *reap);
void td_drain_input(struct tdispatch *d, ktime_t now, struct list_head *reap);
bool td_input_empty(struct tdispatch *d);
void td_delayed_sync(struct tdispatch *d);
void td_items_inflight(struct tdispatch_batch *b);
void td_item_requeued(struct tdispatch *d, struct tdispatch_task *t);
bool td_item_ended(struct tdispatch *d, struct tdispatch_task *t,
		   enum tdispatch_outcome outcome);
void td_item_again(struct tdispatch *d, struct tdispatch_task *t);

#endif /* _TDISPATCH_SUBMIT_H */
