// SPDX-License-Identifier: GPL-2.0
/*
 * A file's merges (%TDISPATCH_TASK_MERGE), in its merge table (merge.c):
 * a task goes in when td_submit_merge() submits it and comes out when
 * lease.c's TAKE copies its payload, when td_submit_unmerged() submits its
 * id without the flag, or when it ends (user.c's ->release()); the lock
 * of the task's bucket orders all of those against the replacements.  The
 * buckets are allocated when the file's first merge comes.
 */
#include <linux/slab.h>

#include "file.h"
#include "merge.h"
#include "pending.h"
#include "submit.h"
#include "user.h"
#include "vec.h"
#include "watch.h"

/*
 * A file's buckets, allocated at its first merge as the caller's (charged
 * to its memory cgroup), after paying what @v owes; process context, may
 * sleep.
 */
static int td_merge_prepare(struct td_merge *m, struct td_vec *v)
{
	/* Pairs with cmpxchg_release() in td_merge_alloc(): the buckets are seen zeroed. */
	if (smp_load_acquire(&m->heads))
		return 0;
	if (v)
		td_vec_flush_here(v);
	return td_merge_alloc(m, TD_GFP_USER);
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
	struct td_merge_node *n = td_merge_find(b, id);
	struct td_file_task *ft;
	int ret;

	if (!n)
		return 0;
	ft = container_of(n, struct td_file_task, merge);
	if (READ_ONCE(ft->x.task.state) < TD_TASK_INPUT || ft->taking) {
		td_merge_del(n);
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
		td_merge_add(b, &task->merge, ut->id);
		ret = td_submit_task(u->d, &task->x.task, ut->id, &task->p, &o, NULL,
				     TD_TASK_OWNED | TD_TASK_MERGE, v);
		if (ret)
			td_merge_del(&task->merge);
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
	int ret;

	ret = td_submit_task(u->d, &task->x.task, id, &task->p, o, w, TD_TASK_OWNED | flags, v);
	/*
	 * Ordered after the push by llist_add()'s cmpxchg, so a merge task
	 * put in before it is seen; acquire pairs with td_merge_prepare():
	 * the buckets are seen zeroed.
	 */
	if (ret || !smp_load_acquire(&u->merge.heads))
		return ret;
	td_merge_drop_id(&u->merge, id);
	return 0;
}
