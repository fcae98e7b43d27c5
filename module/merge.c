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
#include "internal.h"
#include "merge.h"
#include "pending.h"
#include "submit.h"
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
 * A file's buckets, allocated at its first merge as the caller's (charged
 * to its memory cgroup), after paying what @v owes; process context, may
 * sleep.
 */
int td_merge_prepare(struct td_merge *m, struct td_vec *v)
{
	/* Pairs with cmpxchg_release() in td_merge_alloc(): the buckets are seen zeroed. */
	if (smp_load_acquire(&m->heads))
		return 0;
	if (v)
		td_vec_flush_here(v);
	return td_merge_alloc(m, TD_GFP_USER);
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
void td_merge_forget(struct td_merge *m, struct td_merge_node *n)
{
	struct hlist_bl_head *b;

	if (td_merge_out(n))
		return;
	b = td_merge_lock(m, n->id);
	td_merge_del(n);
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
	struct hlist_bl_head *b;
	struct td_merge_node *n;
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
	n = td_merge_find(b, id);
	if (n)
		td_merge_del(n);
	hlist_bl_unlock(b);
	return 0;
}

/*
 * A kernel dispatcher's table (%TDISPATCH_MERGE): a task of
 * tdispatch_submit_merge() is in it from its submission until a batch is
 * cut with it (td_batch_started()), a task of its id comes some other way
 * (td_submit_task()), or it ends (td_reap()).  Its submitters may come
 * from any context, hard irq included, so the buckets' locks are taken
 * with interrupts off.
 */
void td_merge_task_forget(struct tdispatch *d, struct tdispatch_task *t)
{
	unsigned long flags;

	local_irq_save(flags);
	td_merge_forget(&d->merge, &td_merge_task(t)->merge);
	local_irq_restore(flags);
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
 * task.  One cut into a batch meanwhile is still in until the cut is done
 * with the lock (td_batch_started()): ->process() reads what was
 * merged.
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

/* Into the waiting task of @id, if there is one: as td_merge_into_task(). */
static int td_merge_try(struct tdispatch *d, u64 id, void *payload, void **old)
{
	struct hlist_bl_head *b;
	unsigned long flags;
	int ret;

	local_irq_save(flags);
	b = td_merge_lock(&d->merge, id);
	ret = td_merge_into_task(d, b, id, payload, old);
	hlist_bl_unlock(b);
	local_irq_restore(flags);
	return ret;
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
 * input list, or pending, not yet cut into a batch), @payload takes the
 * place of its payload and nothing is allocated: the submission is
 * accepted and the payload it replaced, returned in @old, is counted
 * overridden.  That payload is the caller's again; ->release() is never
 * called for it.  The task keeps its place in line and its submission
 * time.  Otherwise a new task is submitted as tdispatch_submit() does,
 * with no deadline, and later calls merge into it until a batch takes it.
 * A task of @id submitted any other way takes the waiting one out of the
 * table: later merges make a task of their own, which overrides it.
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
	ret = td_merge_try(d, id, payload, old);
	if (ret)
		return min(ret, 0);
	t = td_merge_task_alloc(gfp);
	if (!t)
		return td_submit_task(d, NULL, id, payload, &o, NULL, 0, NULL);
	local_irq_save(flags);
	b = td_merge_lock(&d->merge, id);
	/* Another producer's may have gone in meanwhile. */
	ret = td_merge_into_task(d, b, id, payload, old);
	if (!ret) {
		/* In before the engine can see it: see td_merge_forget(). */
		td_merge_add(b, &td_merge_task(t)->merge, id);
		ret = td_submit_task(d, t, id, payload, &o, NULL, TD_TASK_MERGE_NODE, NULL);
		if (ret)
			td_merge_del(&td_merge_task(t)->merge);
	}
	hlist_bl_unlock(b);
	local_irq_restore(flags);
	if (ret)
		td_task_free(t);
	return min(ret, 0);
}
EXPORT_SYMBOL_GPL(tdispatch_submit_merge);
