// SPDX-License-Identifier: GPL-2.0
/*
 * What drivers call to merge into the waiting task of an id: a kernel
 * dispatcher's merge table (merge.c) holds the tasks of
 * tdispatch_submit_merge(), each from its submission until its batch goes
 * to ->process(), a task of its id comes some other way, or it ends.
 */
#include <linux/export.h>
#include <linux/irqflags.h>

#include "internal.h"
#include "merge.h"
#include "pending.h"
#include "submit.h"
#include "vec.h"

/*
 * In @id's locked bucket @b of @d's table: if a task of @id is in it, its
 * payload becomes @payload, the one it had goes to @old and the
 * submission is counted merged (1); 0 if none is; or the engine's
 * refusal.  One that ended and is not released yet (td_task_end() stores
 * its outcome first) leaves the table, and the submission makes a new
 * task.  One cut into a batch is still in until its worker closes the
 * batch (td_merge_batch_close()): ->process() reads what was merged.
 */
static int td_merge_into_task(struct tdispatch *d, struct hlist_bl_head *b, u64 id,
			      void *payload, void **old)
{
	struct td_merge_node *n = td_merge_find(b, id);
	struct tdispatch_task *t;
	int ret;

	if (!n)
		return 0;
	t = &container_of(n, struct td_merge_task, merge)->task;
	if (READ_ONCE(t->state) < TD_TASK_INPUT) {
		td_merge_del(n);
		return 0;
	}
	ret = td_submit_merged(d);
	if (ret)
		return ret;
	*old = t->payload;
	t->payload = payload;
	return 1;
}

/**
 * tdispatch_submit_merge() - hand a task to a dispatcher, or replace the
 *	payload of the one of its id that waits
 * @d: the dispatcher, created with %TDISPATCH_MERGE
 * @id: the task's key
 * @payload: passed to ->process() and ->release() untouched, unless a
 *	later merge replaces it (then handed back to that caller in its @old)
 * @gfp: allocation flags for a task, as for tdispatch_submit(): every
 *	call allocates one first, and gives it back if it merges
 * @old: set to the payload this one replaced, or to NULL
 *
 * If a task of @id that an earlier call made waits (on an input list,
 * pending, or in a batch not yet handed to ->process(); not one back in
 * line for a retry), @payload takes the place of its payload: the
 * submission is accepted and the payload it replaced, returned in @old,
 * is counted overridden.  That payload is the caller's again; ->release()
 * is never called for it.  The task keeps its place in line and its
 * submission time.  Otherwise a new task is submitted as
 * tdispatch_submit() does, with no deadline, and later calls merge into
 * it until its batch goes to ->process().  A task of @id submitted with
 * tdispatch_submit(), tdispatch_submit_task() or their kin (not an item,
 * not a periodic run) takes the waiting one out of the table: later
 * merges make a task of their own, which overrides it.
 *
 * As xchg() into an object's pointer is for the kernel's own coalescers,
 * without the object: producers on different CPUs meet only on the lock
 * of the id's bucket in the dispatcher's table.
 *
 * Callable from any context that @gfp allows, hard irq included.  Racing
 * tdispatch_destroy(): as for tdispatch_submit().
 *
 * Return: 0 if accepted (merged, with @old set, or a new task); -EINVAL if
 * @d was not created with %TDISPATCH_MERGE; otherwise as
 * tdispatch_submit().  Every failure is counted as rejected, and @payload
 * stays the caller's.
 */
int tdispatch_submit_merge(struct tdispatch *d, u64 id, void *payload, gfp_t gfp,
			   void **old)
{
	static const struct tdispatch_submit_opts o = { };
	struct tdispatch_task *t;
	struct hlist_bl_head *b;
	unsigned long flags;
	int ret;

	*old = NULL;
	if (!d->merge.heads) {
		this_cpu_inc(d->input->rejected);
		return -EINVAL;
	}
	/* First, where it may sleep: one hold of the lock, merged or not. */
	t = td_merge_task_alloc(gfp);
	local_irq_save(flags);
	b = td_merge_lock(&d->merge, id);
	ret = td_merge_into_task(d, b, id, payload, old);
	if (!ret) {
		/* In before the engine can see it: see td_merge_forget(). */
		if (t)
			td_merge_add(b, &td_merge_task(t)->merge, id);
		ret = td_submit_task(d, t, id, payload, &o, NULL, TD_TASK_MERGE_NODE, NULL);
		if (ret && t)
			td_merge_del(&td_merge_task(t)->merge);
	}
	hlist_bl_unlock(b);
	local_irq_restore(flags);
	/* Not needed (merged), or not submitted. */
	if (ret && t)
		td_task_free(t);
	return min(ret, 0);
}
EXPORT_SYMBOL_GPL(tdispatch_submit_merge);
