// SPDX-License-Identifier: GPL-2.0
/*
 * Merge tables: for each id, the one task of a dispatcher whose payload a
 * later submission of the id may still replace, as an item's submission
 * merges into the item while it waits.  A file's (umerge.c) holds the
 * tasks of %TDISPATCH_TASK_MERGE submissions; a kernel dispatcher's, made
 * with %TDISPATCH_MERGE, those of tdispatch_submit_merge() (merge_api.c).
 *
 * A lock a bucket (a bit of its head, as the dcache's hash has), so that
 * producers on different CPUs meet only on one id's bucket, and a size
 * fixed from what the dispatcher can hold at once (pending, input, in
 * flight) at two a bucket.  Keyed by hsiphash with a key of the table's
 * own, as the pending set's id hash is: the ids may be a user's, and the
 * engine's kworkers take the locks too, so no one may choose the chains.
 *
 * A kernel dispatcher's task (merge_api.c) is in its table from its
 * submission until its batch goes to ->process() (td_merge_batch_close()),
 * a task of its id comes some other way (td_submit_task()), or it ends
 * (td_reap()).  Its submitters may come from any context, hard irq
 * included, so the buckets' locks are taken with interrupts off there.
 */
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "internal.h"
#include "merge.h"
#include "pending.h"

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
 * @id's bucket, locked (hlist_bl_unlock() it); only once the buckets are
 * allocated (a file's at its first merge, a kernel dispatcher's at
 * create).  Sparse knows a bit lock as "bitlock".
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

/* Out of its locked bucket, if it is in; its task never goes in again. */
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

/* @id's task, if one is in the table, out of it; a bucket lock taken. */
void td_merge_drop_id(struct td_merge *m, u64 id)
{
	struct hlist_bl_head *b = td_merge_lock(m, id);
	struct td_merge_node *n = td_merge_find(b, id);

	if (n)
		td_merge_del(n);
	hlist_bl_unlock(b);
}

/*
 * A task of tdispatch_submit_merge() ends: out of the table, if it is in
 * (a processed one is out already: no interrupts turned off for it).
 */
void td_merge_task_end(struct tdispatch_task *t)
{
	struct td_merge_node *n = &td_merge_task(t)->merge;
	unsigned long flags;

	if (td_merge_out(n))
		return;
	local_irq_save(flags);
	td_merge_forget(n);
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
	unsigned long flags;

	local_irq_save(flags);
	td_merge_drop_id(&d->merge, id);
	local_irq_restore(flags);
}
