// SPDX-License-Identifier: GPL-2.0
/*
 * A file's merge table: for each id, the one task of its dispatcher whose
 * payload a %TDISPATCH_UTASK_MERGE submission may still replace, as an
 * item's submission merges into the item while it waits.  user.c puts a
 * task in when it submits it and takes it out when TAKE copies its
 * payload, when a submission of its id without the flag comes, or when it
 * ends; the lock of the task's bucket orders all of those against the
 * replacements.
 *
 * A lock a bucket (a bit of its head, as the dcache's hash has), so that
 * producers on different CPUs meet only on one id's bucket, and a size
 * fixed from what the dispatcher can hold at once (pending, input, in
 * flight) at two a bucket, allocated when the first merge comes.  Keyed
 * by hsiphash with a key of the file's own, as the pending set's id hash
 * is: the ids are the user's, and the engine's kworkers take the locks
 * too, so no one may choose the chains.
 */
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "internal.h"

#define TD_MERGE_MIN_BITS	6
#define TD_MERGE_MAX_BITS	15	/* 256 KiB of buckets */

/* @held: the most tasks the table may hold (pending, input, in flight). */
void td_merge_init(struct td_merge *m, unsigned int held)
{
	m->bits = clamp_t(int, order_base_2(held) - 1, TD_MERGE_MIN_BITS, TD_MERGE_MAX_BITS);
	get_random_bytes(&m->key, sizeof(m->key));
}

/* Every task is out by the time the file's dispatcher is gone. */
void td_merge_free(struct td_merge *m)
{
	kvfree(m->heads);
}

/*
 * The buckets, allocated at the first merge as the caller's (charged to
 * its memory cgroup), after paying what @v owes; process context, may
 * sleep.
 */
int td_merge_prepare(struct td_merge *m, struct td_vec *v)
{
	struct hlist_bl_head *heads;

	/* Pairs with cmpxchg_release() below: the buckets are seen zeroed. */
	if (smp_load_acquire(&m->heads))
		return 0;
	if (v)
		td_vec_flush(v);
	heads = kvcalloc(1U << m->bits, sizeof(*heads), TD_GFP_USER);
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
struct td_task_ext *td_merge_find(struct hlist_bl_head *b, u64 id)
{
	struct hlist_bl_node *pos;
	struct td_task_ext *x;

	hlist_bl_for_each_entry(x, pos, b, mnode)
		if (x->task.id == id)
			return x;
	return NULL;
}

/* In, by its ->task.id: it has none in its locked bucket @b. */
void td_merge_add(struct hlist_bl_head *b, struct td_task_ext *x)
{
	hlist_bl_add_head(&x->mnode, b);
}

/* Out of its locked bucket, if it is in; it never goes in again. */
void td_merge_del(struct td_task_ext *x)
{
	if (hlist_bl_unhashed(&x->mnode))
		return;
	__hlist_bl_del(&x->mnode);
	x->mnode.next = NULL;
	/* Last, for td_merge_out(). */
	smp_store_release(&x->mnode.pprev, NULL);
}

/*
 * Whether a task is out of the table, without its lock: for good, and
 * with every payload that merges wrote before seen.
 */
bool td_merge_out(struct td_task_ext *x)
{
	/* Pairs with smp_store_release() in td_merge_del(). */
	return !smp_load_acquire(&x->mnode.pprev);
}

/*
 * Out, if it is in, for a task that ends.  A task goes in before the
 * engine can see it, so one out now is out for good.
 */
void td_merge_forget(struct td_merge *m, struct td_task_ext *x)
{
	struct hlist_bl_head *b;

	if (td_merge_out(x))
		return;
	b = td_merge_lock(m, x->task.id);
	td_merge_del(x);
	hlist_bl_unlock(b);
}
