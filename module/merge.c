// SPDX-License-Identifier: GPL-2.0
/*
 * Merge tables: for each id, the one task of a dispatcher whose payload a
 * later submission of the id may still replace, as an item's submission
 * merges into the item while it waits.  A file's (umerge.c) holds the
 * tasks of %TDISPATCH_TASK_MERGE submissions; a kernel dispatcher's, made
 * with %TDISPATCH_MERGE, those of tdispatch_submit_merge() (below).
 *
 * A lock a bucket (a bit of its head, as the dcache's hash has), so that
 * producers on different CPUs meet only on one id's bucket, and a size
 * fixed from what the dispatcher can hold at once (pending, input, in
 * flight) at two a bucket.  Keyed by hsiphash with a key of the table's
 * own, as the pending set's id hash is: the ids may be a user's, and the
 * engine's kworkers take the locks too, so no one may choose the chains.
 *
 * A kernel dispatcher's task is in its table from its submission until
 * its batch goes to ->process() (td_merge_batch_close()), a task of its
 * id comes some other way (td_submit_task()), or it ends (td_reap()).
 * Its submitters may come from any context, hard irq included, so the
 * buckets' locks are taken with interrupts off there.
 */
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "internal.h"
#include "merge.h"
#include "pending.h"
#include "submit.h"
#include "vec.h"

#define TD_MERGE_MIN_BITS	6
#define TD_MERGE_MAX_BITS	15	/* 256 KiB of buckets */

/* @held: the most tasks the table may hold (pending, input, in flight). */
void td_merge_init(struct td_merge *m, unsigned int held)
{
	m->bits = clamp_t(int, order_base_2(held) - 1, TD_MERGE_MIN_BITS, TD_MERGE_MAX_BITS);
	get_random_bytes(&m->key, sizeof(m->key));
}

/* What a dispatcher of @cfg may hold at once of its tasks: pending, input, in flight. */
unsigned int td_merge_held(const struct tdispatch_config *cfg)
{
	return min_t(u64, UINT_MAX, cfg->max_buffer + cfg->workers * cfg->max_batch +
		     (u64)num_possible_cpus() * cfg->max_input);
}

/* Every task is out by the time the table's dispatcher is gone. */
void td_merge_free(struct td_merge *m)
{
	kvfree(m->heads);
}

/* The buckets, with @gfp; process context, may sleep. */
int td_merge_alloc(struct td_merge *m, gfp_t gfp)
{
	struct hlist_bl_head *heads = kvcalloc(1U << m->bits, sizeof(*heads), gfp);

	if (!heads)
		return -ENOMEM;
	/* Zeroed heads are empty and unlocked; a racing first merge wins. */
	if (cmpxchg_release(&m->heads, NULL, heads))
		kvfree(heads);
	return 0;
}

/*
 * @id's bucket, locked (hlist_bl_unlock() it); only once
 * td_merge_prepare() succeeded.  Sparse knows a bit lock as "bitlock".
 */
struct hlist_bl_head *td_merge_lock(struct td_merge *m, u64 id)
	__acquires(bitlock)
{
	struct hlist_bl_head *b;

	b = &READ_ONCE(m->heads)[hsiphash_2u32(id, id >> 32, &m->key) >> (32 - m->bits)];
	hlist_bl_lock(b);
	return b;
}

/* The task of @id in its locked bucket @b, or NULL. */
struct td_merge_node *td_merge_find(struct hlist_bl_head *b, u64 id)
{
	struct hlist_bl_node *pos;
	struct td_merge_node *n;

	hlist_bl_for_each_entry(n, pos, b, node)
		if (n->id == id)
			return n;
	return NULL;
}

/* In, as @id's task: @id has none in its locked bucket @b. */
void td_merge_add(struct hlist_bl_head *b, struct td_merge_node *n, u64 id)
{
	n->id = id;
	n->head = b;
	hlist_bl_add_head(&n->node, b);
}

/* Out of its locked bucket, if it is in; it never goes in again. */
void td_merge_del(struct td_merge_node *n)
{
	if (hlist_bl_unhashed(&n->node))
		return;
	__hlist_bl_del(&n->node);
	n->node.next = NULL;
	/* Last, for td_merge_out(). */
	smp_store_release(&n->node.pprev, NULL);
}

/*
 * Whether a task is out of the table, without its lock: for good, and
 * with every payload that merges wrote before seen.
 */
bool td_merge_out(struct td_merge_node *n)
{
	/* Pairs with smp_store_release() in td_merge_del(). */
	return !smp_load_acquire(&n->node.pprev);
}

/*
 * Out, if it is in, for a task that ends.  A task goes in before the
 * engine can see it, so one out now is out for good.
 */
void td_merge_forget(struct td_merge_node *n)
{
	if (td_merge_out(n))
		return;
	hlist_bl_lock(n->head);
	td_merge_del(n);
	hlist_bl_unlock(n->head);
}

/* A task of tdispatch_submit_merge() ends: out of the table, if it is in. */
void td_merge_task_end(struct tdispatch_task *t)
{
	unsigned long flags;

	local_irq_save(flags);
	td_merge_forget(&td_merge_task(t)->merge);
	local_irq_restore(flags);
}

/*
 * A batch goes to ->process(): its tasks of tdispatch_submit_merge() take
 * no more merges, and ->process() reads what the last one wrote.  Done
 * here, by the worker outside the dispatcher's lock, not at the cut:
 * merges may land in a cut batch until then.
 */
void td_merge_batch_close(struct tdispatch_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		if (b->tasks[i]->flags & TD_TASK_MERGE_NODE)
			td_merge_task_end(b->tasks[i]);
}

/* A task of @id came not by a merge: the one in the table merges no more. */
void td_merge_forget_id(struct tdispatch *d, u64 id)
{
	struct hlist_bl_head *b;
	struct td_merge_node *n;
	unsigned long flags;

	local_irq_save(flags);
	b = td_merge_lock(&d->merge, id);
	n = td_merge_find(b, id);
	if (n)
		td_merge_del(n);
	hlist_bl_unlock(b);
	local_irq_restore(flags);
}

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
 * @payload: passed to ->process() and ->release() untouched
 * @gfp: allocation flags for a new task, as for tdispatch_submit()
 * @old: set to the payload this one replaced, or to NULL
 *
 * If a task of @id that this call or an earlier one made waits (on an
 * input list, pending, or in a batch not yet handed to ->process(); not
 * one back in line for a retry), @payload takes the place of its payload:
 * the submission is accepted and the payload it replaced, returned in
 * @old, is counted overridden.  That payload is the caller's again; ->release() is never
 * called for it.  The task keeps its place in line and its submission
 * time.  Otherwise a new task is submitted as tdispatch_submit() does,
 * with no deadline, and later calls merge into it until a batch takes it.
 * A task of @id submitted any other way (not a periodic run's) takes the
 * waiting one out of the table: later merges make a task of their own,
 * which overrides it.
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
