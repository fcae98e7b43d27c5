// SPDX-License-Identifier: GPL-2.0
/*
 * A file's merge table: for each id, the one task of its dispatcher whose
 * payload a %TDISPATCH_TASK_MERGE submission may still replace, as an
 * item's submission merges into the item while it waits.  A task goes in
 * when td_submit_merge() submits it and comes out when lease.c's TAKE
 * copies its payload, when td_submit_unmerged() submits its id without the
 * flag, or when it ends (user.c's ->release()); the lock of the task's
 * bucket orders all of those against the replacements.
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

#include "file.h"
#include "merge.h"
#include "pending.h"
#include "user.h"
#include "vec.h"
#include "watch.h"

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
		td_vec_flush_here(v);
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
struct td_file_task *td_merge_find(struct hlist_bl_head *b, u64 id)
{
	struct hlist_bl_node *pos;
	struct td_file_task *ft;

	hlist_bl_for_each_entry(ft, pos, b, mnode)
		if (ft->x.task.id == id)
			return ft;
	return NULL;
}

/* In, by its task's id: it has none in its locked bucket @b. */
void td_merge_add(struct hlist_bl_head *b, struct td_file_task *ft)
{
	hlist_bl_add_head(&ft->mnode, b);
}

/* Out of its locked bucket, if it is in; it never goes in again. */
void td_merge_del(struct td_file_task *ft)
{
	if (hlist_bl_unhashed(&ft->mnode))
		return;
	__hlist_bl_del(&ft->mnode);
	ft->mnode.next = NULL;
	/* Last, for td_merge_out(). */
	smp_store_release(&ft->mnode.pprev, NULL);
}

/*
 * Whether a task is out of the table, without its lock: for good, and
 * with every payload that merges wrote before seen.
 */
bool td_merge_out(struct td_file_task *ft)
{
	/* Pairs with smp_store_release() in td_merge_del(). */
	return !smp_load_acquire(&ft->mnode.pprev);
}

/*
 * Out, if it is in, for a task that ends.  A task goes in before the
 * engine can see it, so one out now is out for good.
 */
void td_merge_forget(struct td_merge *m, struct td_file_task *ft)
{
	struct hlist_bl_head *b;

	if (td_merge_out(ft))
		return;
	b = td_merge_lock(m, ft->x.task.id);
	td_merge_del(ft);
	hlist_bl_unlock(b);
}

/*
 * In @id's locked bucket @b of the merge table: if a task of @id is in
 * it, its payload becomes the @len bytes at @data and the submission is
 * counted merged (1); 0 if none is; or the engine's refusal.  A task that
 * has ended but is not released yet (td_task_end() stores its outcome
 * first), or whose payload a TAKE is copying out, leaves the table here,
 * and the submission makes a new one.
 */
static int td_merge_into(struct td_user *u, struct hlist_bl_head *b, u64 id, const u8 *data,
			 u32 len)
{
	struct td_file_task *ft = td_merge_find(b, id);
	int ret;

	if (!ft)
		return 0;
	if (READ_ONCE(ft->x.task.state) < TD_TASK_INPUT || ft->taking) {
		td_merge_del(ft);
		return 0;
	}
	ret = td_submit_merged(u->d);
	if (ret)
		return ret;
	ft->p.len = len;
	memcpy(ft->p.data, data, len);
	return 1;
}

/*
 * %TDISPATCH_TASK_MERGE: into the waiting task of its id, or a task of
 * its own that later ones merge into.  The payload is read first, outside
 * the lock.  A new task goes into the table before the engine can see it
 * (see td_merge_forget()) and is submitted under the lock, so that none
 * merges into a task the engine then refuses.
 */
int td_submit_merge(struct td_user *u, const struct tdispatch_submit_task *ut,
		    struct td_vec *v)
{
	static const struct tdispatch_submit_opts o = { };
	u32 len = ut->payload_len;
	u8 data[TD_FILE_TASK_SMALL];
	struct hlist_bl_head *b;
	struct td_file_task *task;
	int ret;

	/* Nothing a merge could not carry over: no deadline, delay or own attempts. */
	ret = -EINVAL;
	if (ut->flags != TDISPATCH_TASK_MERGE || ut->deadline_ns || ut->not_before_ns ||
	    ut->max_attempts || !len || len > TDISPATCH_MERGE_PAYLOAD_MAX)
		goto rejected;
	ret = -EFAULT;
	if (td_vec_copy_from_user(v, data, u64_to_user_ptr(ut->payload), len))
		goto rejected;
	ret = td_merge_prepare(&u->merge, v);
	if (ret)
		goto rejected;
	b = td_merge_lock(&u->merge, ut->id);
	ret = td_merge_into(u, b, ut->id, data, len);
	hlist_bl_unlock(b);
	if (ret)
		return min(ret, 0);

	task = td_file_task_get(u, len, false, v);
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		goto rejected;
	}
	memcpy(task->p.data, data, len);
	task->x.task.id = ut->id;
	b = td_merge_lock(&u->merge, ut->id);
	/* Another producer's may have come in meanwhile. */
	ret = td_merge_into(u, b, ut->id, data, len);
	if (!ret) {
		td_merge_add(b, task);
		ret = td_submit_task(u->d, &task->x.task, ut->id, &task->p, &o, NULL,
				     TD_TASK_OWNED | TD_TASK_MERGE, v);
		if (ret)
			td_merge_del(task);
	}
	hlist_bl_unlock(b);
	/* Not submitted: no %TD_TASK_MERGE, and out of the table. */
	if (ret)
		td_payload_free(u, &task->p);
	/* The engine counted its own refusals. */
	return min(ret, 0);

rejected:
	atomic_long_inc(&u->rejected);
	return ret;
}

/*
 * A task without %TDISPATCH_TASK_MERGE (a plain one, or with
 * %TD_TASK_SLOT in @flags a shared slot's), which, once accepted, takes its
 * id's task out of the merge table (if the file ever merged): a merge
 * after it must not replace a task that it, the newer, replaces in the
 * pending set.  A merge between the push and the removal is concurrent
 * with this call, and counts as the older of the two.  (Newer as seen
 * from one CPU: the acceptor drains the CPUs' input in turn, so a task
 * submitted on one CPU may still be taken in before an older one from
 * another, as for any two submissions of an id.)
 */
int td_submit_unmerged(struct td_user *u, struct td_file_task *task, u64 id,
		       const struct tdispatch_submit_opts *o, struct td_watcher *w,
			      u8 flags, struct td_vec *v)
{
	struct hlist_bl_head *b;
	struct td_file_task *ft;
	int ret;

	ret = td_submit_task(u->d, &task->x.task, id, &task->p, o, w, TD_TASK_OWNED | flags, v);
	/*
	 * Ordered after the push by llist_add()'s cmpxchg, so a merge task
	 * put in before it is seen; acquire pairs with td_merge_prepare():
	 * the buckets are seen zeroed.
	 */
	if (ret || !smp_load_acquire(&u->merge.heads))
		return ret;
	b = td_merge_lock(&u->merge, id);
	ft = td_merge_find(b, id);
	if (ft)
		td_merge_del(ft);
	hlist_bl_unlock(b);
	return 0;
}
