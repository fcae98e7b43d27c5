// SPDX-License-Identifier: GPL-2.0
/*
 * Leases: the engine's ->process() runs on a kworker that parks the batch
 * as a lease on the file's ready list and sleeps until a userspace worker
 * takes it (TDISPATCH_IOC_TAKE) and completes it (TDISPATCH_IOC_COMPLETE).
 * A lease that is not completed within lease_ns, or whose taker closes the
 * file (->flush() with its files_struct), is redelivered: the batch goes
 * back to the head of the line without a shaper hold-off.
 */
#include <linux/bsearch.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "dispatch.h"
#include "file.h"
#include "internal.h"
#include "merge.h"
#include "user.h"
#include "uslots.h"
#include "vec.h"

static_assert(sizeof(struct tdispatch_task_result) == 16);
static_assert(sizeof(struct tdispatch_lease_task) == 32);

enum td_lease_state {
	TD_LEASE_READY,		/* on the ready list */
	TD_LEASE_COPYING,	/* a TAKE copies it out, on no list, lock dropped */
	TD_LEASE_TAKEN,		/* a worker holds it */
	TD_LEASE_DONE,		/* completed with ->result */
	TD_LEASE_ABANDONED,	/* expired, holder gone, or file closing */
};

/* Lives on the stack of the kworker in td_user_process(). */
struct td_lease {
	struct list_head node;		/* ready, copying or taken list */
	struct tdispatch_batch *batch;
	unsigned long accounted;	/* td_batch_accounted() once it is */
	u64 id;
	fl_owner_t owner;
	bool flushed;			/* its owner closed the file while COPYING */
	enum td_lease_state state;
	enum tdispatch_result result;
};

/*
 * The payload to copy out, @len bytes, or NULL if that is more than
 * @room: a small one through @bounce.  Nothing is read for good yet: TAKE
 * settles each task with td_payload_settle() once it knows whether the
 * payload reached the caller.  A slot's is peeked at; a merge task's is
 * copied under its bucket's lock and marked ->taking, so that no merge
 * replaces what TAKE hands out (one meanwhile makes a task of its own).
 */
static const void *td_payload_take(struct td_user *u, struct td_payload *p, u8 *bounce,
				   u32 *len, u64 room)
{
	struct td_file_task *ft = container_of(p, struct td_file_task, p);
	struct td_slot_ref *r = (struct td_slot_ref *)p->data;
	struct hlist_bl_head *b;

	if (ft->x.task.flags & TD_TASK_SLOT) {
		*len = td_uslots_peek(u->slots, r->index, bounce, &r->seq);
		return *len <= room ? bounce : NULL;
	}
	if (!(ft->x.task.flags & TD_TASK_MERGE) || td_merge_out(ft)) {
		*len = p->len;
		if (*len > room)
			return NULL;
		if (*len > TD_FILE_TASK_SMALL)
			return p->data;
		memcpy(bounce, p->data, *len);
		return bounce;
	}
	b = td_merge_lock(&u->merge, ft->x.task.id);
	*len = p->len;
	if (*len <= room) {
		ft->taking = !td_merge_out(ft);
		memcpy(bounce, p->data, *len);
	}
	hlist_bl_unlock(b);
	return *len <= room ? bounce : NULL;
}

/*
 * After td_payload_take(): a payload that reached the caller (@taken) is
 * read, a merge task's out of the merge table for good; one that did not
 * is left as it was, merges landing in it again.
 */
static void td_payload_settle(struct td_user *u, struct td_payload *p, bool taken,
			      struct td_vec *v)
{
	struct td_file_task *ft = container_of(p, struct td_file_task, p);
	struct hlist_bl_head *b;

	if (ft->x.task.flags & TD_TASK_SLOT) {
		if (taken)
			td_slot_read(u, (struct td_slot_ref *)p->data, v);
		return;
	}
	if (!ft->taking)
		return;
	b = td_merge_lock(&u->merge, ft->x.task.id);
	if (taken)
		td_merge_del(ft);
	ft->taking = false;
	hlist_bl_unlock(b);
}

static bool td_lease_ended(struct td_lease *l)
{
	return READ_ONCE(l->state) >= TD_LEASE_DONE;
}

/* Taken or ended: no TAKE is looking at the batch any more. */
static bool td_lease_left(struct td_lease *l)
{
	return READ_ONCE(l->state) > TD_LEASE_COPYING;
}

/*
 * Wait out a taken lease: until it ends or lease_ns has passed by the
 * monotonic clock.  The wait itself is in ticks, which never end early
 * by jiffies, but jiffies can lag the clock by a few ticks (a stalled
 * tick, as under TCG): the time left is looked at again after each.
 */
static void td_lease_wait(struct td_user *u, struct td_lease *l)
{
	u64 end = ktime_get_ns() + u->lease_ns;
	u64 now;

	while (!td_lease_ended(l) && (now = ktime_get_ns()) < end)
		wait_event_idle_timeout(u->lease_wait, td_lease_ended(l),
					nsecs_to_jiffies(end - now) + 1);
}

/* A lease went on ->ready: tell pollers, and one TAKE waiter. */
static void td_batch_ready(struct td_user *u)
{
	wake_up_interruptible_poll(u->wait, EPOLLRDBAND);
	wake_up_interruptible(&u->take_wait);
}

enum tdispatch_result td_user_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	struct td_user *u = tdispatch_priv(d);
	struct td_lease l = {
		.batch = b,
		.accounted = td_batch_accounted(b) + 1,
		.state = TD_LEASE_READY,
	};
	enum tdispatch_result res;

	mutex_lock(&u->lock);
	if (u->closing) {
		/* The engine stopped cutting batches first: this one is cancelled. */
		mutex_unlock(&u->lock);
		td_batch_redeliver(b);
		return TDISPATCH_RESULT_SUCCESS;
	}
	list_add_tail(&l.node, &u->ready);
	mutex_unlock(&u->lock);
	td_batch_ready(u);

	/*
	 * Idle, not uninterruptible: nobody may take it for a long time, and
	 * a TAKE may copy it out for as long as the user's memory takes.
	 */
	wait_event_idle(u->lease_wait, td_lease_left(&l));
	td_lease_wait(u, &l);

	mutex_lock(&u->lock);
	if (l.state == TD_LEASE_DONE) {
		res = l.result;
	} else {
		if (l.state == TD_LEASE_TAKEN)
			list_del(&l.node);
		l.state = TD_LEASE_ABANDONED;
		td_batch_redeliver(b);
		res = TDISPATCH_RESULT_SUCCESS;
	}
	mutex_unlock(&u->lock);
	return res;
}

/*
 * Copy a taken batch out; *@copied: how many tasks td_payload_take() saw,
 * for td_take_settle().
 */
static int td_take_copy(struct td_user *u, struct tdispatch_take *tk,
			struct tdispatch_batch *b, u32 *copied)
{
	struct tdispatch_lease_task __user *out = u64_to_user_ptr(tk->tasks);
	u8 __user *buf = u64_to_user_ptr(tk->buf);
	u64 off = 0;
	u32 i;

	*copied = 0;
	if (b->nr > tk->max_tasks)
		return -ENOSPC;
	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *t = tdispatch_batch_task(b, i);
		struct tdispatch_lease_task lt = {
			.id = t->id,
			.attempts = t->attempts,
			.payload_off = off,
			.submitted_ns = ktime_to_ns(t->submitted),
		};
		u8 bounce[TD_FILE_TASK_SMALL];
		const void *data;
		u32 len;

		data = td_payload_take(u, tdispatch_task_payload(t), bounce, &len,
				       tk->buf_len - off);
		if (!data)
			return -ENOSPC;
		*copied = i + 1;
		lt.payload_len = len;
		if (copy_to_user(&out[i], &lt, sizeof(lt)) || copy_to_user(buf + off, data, len))
			return -EFAULT;
		off += len;
	}
	return 0;
}

/*
 * The first @copied tasks of a batch that TAKE copied out: read if the
 * caller was told of them (@taken), else as they were before the TAKE.
 */
static void td_take_settle(struct td_user *u, struct tdispatch_batch *b, u32 copied, bool taken)
{
	struct td_vec v = { };
	u32 i;

	for (i = 0; i < copied; i++)
		td_payload_settle(u, tdispatch_task_payload(tdispatch_batch_task(b, i)), taken, &v);
	td_vec_flush(&v);
}

static bool td_user_ready(struct td_user *u)
{
	return !list_empty_careful(&u->ready) || READ_ONCE(u->closing);
}

/*
 * Wait in TAKE until a batch is ready, the file closes, @end (an absolute
 * CLOCK_MONOTONIC time, KTIME_MAX for none) passes or a signal comes.
 * Exclusive, as accept() is: each batch made ready wakes one waiter, the
 * one that waited longest, not every thread of a worker pool.  A waiter
 * that leaves for a signal while a batch is ready passes its wake-up on.
 *
 * Return: 0, or -ERESTARTSYS for a signal.
 */
static int td_take_wait(struct td_user *u, ktime_t end)
{
	DEFINE_WAIT(wait);
	int ret = 0;

	for (;;) {
		prepare_to_wait_exclusive(&u->take_wait, &wait, TASK_INTERRUPTIBLE);
		if (td_user_ready(u))
			break;
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (end == KTIME_MAX)
			schedule();
		else if (!schedule_hrtimeout_range(&end, 0, HRTIMER_MODE_ABS))
			break;	/* timed out: the caller tells */
	}
	finish_wait(&u->take_wait, &wait);
	if (ret && td_user_ready(u))
		wake_up_interruptible(&u->take_wait);
	return ret;
}

int td_ioctl_take(struct td_user *u, struct file *file, void __user *uarg)
{
	struct tdispatch_take tk;
	struct td_lease *l;
	u32 copied;
	ktime_t end;
	int ret;

	ret = td_copy_in(&tk, sizeof(tk), uarg);
	if (ret)
		return ret;
	if ((tk.flags & ~TDISPATCH_TAKE_NONBLOCK) || tk.pad || !tk.max_tasks)
		return -EINVAL;
	/* An hrtimer, not jiffies: a timed TAKE never ends before its time. */
	end = tk.timeout_ns ? ktime_add_ns(ktime_get(), min_t(u64, tk.timeout_ns, KTIME_MAX / 2)) :
			      KTIME_MAX;

	for (;;) {
		mutex_lock(&u->lock);
		l = list_first_entry_or_null(&u->ready, struct td_lease, node);
		if (l)
			break;
		mutex_unlock(&u->lock);
		if ((tk.flags & TDISPATCH_TAKE_NONBLOCK) || (file->f_flags & O_NONBLOCK))
			return -EAGAIN;
		if (end != KTIME_MAX && ktime_sub(end, ktime_get()) <= 0)
			return -ETIMEDOUT;
		ret = td_take_wait(u, end);
		if (ret)
			return ret;
	}
	/*
	 * Off the ready list, so no other TAKE finds it, and COPYING, so its
	 * kworker keeps waiting: the copy runs without u->lock, which the
	 * kworkers, other takers and close() need, for as long as the user's
	 * memory takes to fault in.  Only this file's release could end the
	 * lease meanwhile, and it cannot run while we are in an ioctl.
	 */
	list_move_tail(&l->node, &u->copying);
	l->owner = current->files;
	l->flushed = false;
	WRITE_ONCE(l->state, TD_LEASE_COPYING);
	tk.batch = ++u->next_lease;
	mutex_unlock(&u->lock);

	tk.nr = l->batch->nr;
	ret = td_take_copy(u, &tk, l->batch, &copied);
	if (!ret)
		ret = td_copy_out(uarg, &tk, sizeof(tk));
	/* A payload counts as read only once the caller can know it has it. */
	td_take_settle(u, l->batch, copied, !ret);

	mutex_lock(&u->lock);
	if (ret) {
		/* A caller that cannot be told its lease leaves it for others. */
		list_move(&l->node, &u->ready);
		WRITE_ONCE(l->state, TD_LEASE_READY);
		mutex_unlock(&u->lock);
		td_batch_ready(u);
		return ret;
	}
	l->id = tk.batch;
	if (l->flushed) {
		/* Closed by its owner meanwhile: redelivered, as if taken before. */
		list_del(&l->node);
		WRITE_ONCE(l->state, TD_LEASE_ABANDONED);
	} else {
		list_move_tail(&l->node, &u->taken);
		WRITE_ONCE(l->state, TD_LEASE_TAKEN);
	}
	mutex_unlock(&u->lock);
	wake_up_all(&u->lease_wait);
	return 0;
}

static int td_result_cmp(const void *a, const void *b)
{
	const struct tdispatch_task_result *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * A COMPLETE's own results, copied in and sorted by id: NULL for none,
 * or an ERR_PTR() for a bad vector (a bad result, padding, an id twice).
 */
static struct tdispatch_task_result *td_results_in(const struct tdispatch_complete *c)
{
	struct tdispatch_task_result *r;
	u32 i;

	if (!c->nr_results)
		return NULL;
	if (c->nr_results > TD_USER_MAX_BATCH)
		return ERR_PTR(-EINVAL);
	r = kvmalloc_array(c->nr_results, sizeof(*r), TD_GFP_USER);
	if (!r)
		return ERR_PTR(-ENOMEM);
	if (copy_from_user(r, u64_to_user_ptr(c->results), c->nr_results * sizeof(*r))) {
		kvfree(r);
		return ERR_PTR(-EFAULT);
	}
	sort(r, c->nr_results, sizeof(*r), td_result_cmp, NULL);
	for (i = 0; i < c->nr_results; i++) {
		if (r[i].result >= TDISPATCH_NR_RESULTS || r[i].pad ||
		    (i && r[i].id == r[i - 1].id)) {
			kvfree(r);
			return ERR_PTR(-EINVAL);
		}
	}
	return r;
}

/* The result @r gives the task of @id, or NULL. */
static const struct tdispatch_task_result *td_result_of(const struct tdispatch_task_result *r,
							u32 n, u64 id)
{
	struct tdispatch_task_result key = { .id = id };

	return n ? bsearch(&key, r, n, sizeof(*r), td_result_cmp) : NULL;
}

/*
 * Give the tasks of @b the results @r names (sorted, distinct ids), all
 * or none: -EINVAL if one of them is not in the batch.
 */
static int td_results_apply(struct tdispatch_batch *b, const struct tdispatch_task_result *r,
			    u32 n)
{
	const struct tdispatch_task_result *found;
	u32 i, matched = 0;

	if (n > b->nr)
		return -EINVAL;
	for (i = 0; i < b->nr; i++)
		matched += !!td_result_of(r, n, tdispatch_task_id(b->tasks[i]));
	if (matched != n)
		return -EINVAL;
	for (i = 0; i < b->nr && n; i++) {
		found = td_result_of(r, n, tdispatch_task_id(b->tasks[i]));
		if (found)
			tdispatch_batch_set_result(b, i, found->result);
	}
	return 0;
}

int td_ioctl_complete(struct td_user *u, void __user *uarg)
{
	struct tdispatch_task_result *r;
	struct tdispatch_batch *batch = NULL;
	struct tdispatch_complete c;
	unsigned long accounted = 0;
	struct td_lease *l;
	int ret;

	ret = td_copy_in(&c, sizeof(c), uarg);
	if (ret)
		return ret;
	if (c.flags || c.pad || c.pad2 || c.result >= TDISPATCH_NR_RESULTS)
		return -EINVAL;
	/* The user's memory first: u->lock is not held across it. */
	r = td_results_in(&c);
	if (IS_ERR(r))
		return PTR_ERR(r);
	/* Never leased, completed already, or redelivered after its lease. */
	ret = -ENOENT;
	mutex_lock(&u->lock);
	list_for_each_entry(l, &u->taken, node) {
		if (l->id != c.batch)
			continue;
		ret = td_results_apply(l->batch, r, c.nr_results);
		if (!ret) {
			list_del(&l->node);
			l->result = c.result;
			batch = l->batch;
			accounted = l->accounted;
			/* @l is the kworker's, gone once it sees this. */
			WRITE_ONCE(l->state, TD_LEASE_DONE);
		}
		break;
	}
	mutex_unlock(&u->lock);
	kvfree(r);
	if (ret)
		return ret;
	wake_up_all(&u->lease_wait);
	/*
	 * Read your own completion: return once the kworker has counted the
	 * batch and queued its events, so that STATS, QUERY and read() that
	 * follow show it.  No lock is held; a fatal signal cuts it short.
	 */
	wait_event_killable(u->d->accounted_wait,
			    (long)(td_batch_accounted(batch) - accounted) >= 0);
	return 0;
}

/* Redeliver at once the leases @owner holds, or all of them and stop. */
void td_user_abandon(struct td_user *u, fl_owner_t owner, bool all)
{
	struct td_lease *l, *next;

	mutex_lock(&u->lock);
	if (all) {
		u->closing = true;
		list_for_each_entry_safe(l, next, &u->ready, node) {
			list_del(&l->node);
			WRITE_ONCE(l->state, TD_LEASE_ABANDONED);
		}
	}
	list_for_each_entry_safe(l, next, &u->taken, node) {
		if (all || l->owner == owner) {
			list_del(&l->node);
			WRITE_ONCE(l->state, TD_LEASE_ABANDONED);
		}
	}
	/* Its TAKE is still copying: that TAKE redelivers it when done. */
	list_for_each_entry(l, &u->copying, node)
		if (l->owner == owner)
			l->flushed = true;
	mutex_unlock(&u->lock);
	wake_up_all(&u->lease_wait);
	wake_up_all(u->wait);
	if (all)
		wake_up_all(&u->take_wait);
}
