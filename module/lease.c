// SPDX-License-Identifier: GPL-2.0
/*
 * Leases: the engine's ->process() parks the batch as a lease on the
 * file's ready list and returns, holding it (TD_RESULT_HELD), until a
 * userspace worker takes it (TDISPATCH_IOC_TAKE) and completes it
 * (TDISPATCH_IOC_COMPLETE), which ends the batch in the caller's context:
 * no kworker waits for the user.  A lease that is not completed within
 * lease_ns, or whose taker closes the file (->flush() with its
 * files_struct), is redelivered: the batch goes back to the head of the
 * line without a shaper hold-off.
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
	TD_LEASE_FREE,		/* its worker's batch is not lent out */
	TD_LEASE_READY,		/* on the ready list */
	TD_LEASE_COPYING,	/* a TAKE copies it out, on ->copying, lock dropped */
	TD_LEASE_TAKEN,		/* a worker holds it, on ->taken */
};

/* One per engine worker: its batch, while lent out.  Under u->lock. */
struct td_lease {
	struct list_head node;		/* ready, copying or taken list */
	struct td_user *u;
	struct tdispatch_batch *batch;
	u64 id;
	u64 deadline;			/* ktime_get_ns(): a taken lease's end */
	fl_owner_t owner;
	bool flushed;			/* its owner closed the file while COPYING */
	enum td_lease_state state;
	struct delayed_work expire;	/* td_lease_expire() */
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
	if (!(ft->x.task.flags & TD_TASK_MERGE) || td_merge_out(&ft->merge)) {
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
		ft->taking = !td_merge_out(&ft->merge);
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
		td_merge_del(&ft->merge);
	ft->taking = false;
	hlist_bl_unlock(b);
}

/*
 * The lease's batch is no longer lent out: off its list, to be ended by
 * the caller with td_batch_finish() once u->lock is dropped (which may
 * lend the worker's next batch through @l again).
 */
static struct tdispatch_batch *td_lease_end(struct td_lease *l)
{
	lockdep_assert_held(&l->u->lock);
	list_del_init(&l->node);
	l->state = TD_LEASE_FREE;
	return l->batch;
}

/*
 * Look at a taken lease again by its deadline.  The wait is in jiffies,
 * which can lag the monotonic clock by a few ticks (a stalled tick, as
 * under TCG): td_lease_expire() looks at the time left again.
 */
static void td_lease_arm(struct td_lease *l, u64 now)
{
	mod_delayed_work(system_wq, &l->expire, nsecs_to_jiffies(l->deadline - now) + 1);
}

/* A taken lease not completed within lease_ns: redelivered. */
static void td_lease_expire(struct work_struct *work)
{
	struct td_lease *l = container_of(to_delayed_work(work), struct td_lease, expire);
	struct tdispatch_batch *b = NULL;
	struct td_user *u = l->u;
	u64 now = ktime_get_ns();

	mutex_lock(&u->lock);
	/* Completed meanwhile, or lent again and taken with a later deadline. */
	if (l->state == TD_LEASE_TAKEN) {
		if (now >= l->deadline)
			b = td_lease_end(l);
		else
			td_lease_arm(l, now);
	}
	mutex_unlock(&u->lock);
	if (b)
		td_batch_finish(b, TD_RESULT_REDELIVER);
}

int td_leases_init(struct td_user *u)
{
	unsigned int i, n = u->d->nr_workers;

	u->leases = kcalloc(n, sizeof(*u->leases), TD_GFP_USER);
	if (!u->leases)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		INIT_LIST_HEAD(&u->leases[i].node);
		u->leases[i].u = u;
		INIT_DELAYED_WORK(&u->leases[i].expire, td_lease_expire);
	}
	/* Before anything is submitted: no batch is cut before the leases are there. */
	u->d->holds_batches = true;
	return 0;
}

/* After td_user_abandon() of them all: no lease is taken, none is lent again. */
void td_leases_stop(struct td_user *u)
{
	unsigned int i;

	for (i = 0; i < u->d->nr_workers; i++)
		cancel_delayed_work_sync(&u->leases[i].expire);
}

/* A lease went on ->ready: tell pollers, and one TAKE waiter. */
static void td_batch_ready(struct td_user *u)
{
	wake_up_interruptible_poll(u->wait, EPOLLRDBAND);
	wake_up_interruptible(&u->take_wait);
}

/*
 * Runs on a kworker; in a SUBMIT, a KICK (or its retry) or a TAKE's
 * settling of slots that brought input while a worker was free
 * (td_vec_flush_here()); or in td_batch_finish() for whatever
 * ended the worker's last batch (COMPLETE, the expiry, a close, a TAKE
 * whose taker closed meanwhile).  Returns TD_RESULT_HELD, outside the
 * enum, which the engine takes from a dispatcher that holds batches.
 */
enum tdispatch_result td_user_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	struct td_user *u = tdispatch_priv(d);
	struct td_lease *l = &u->leases[td_batch_worker(b)];

	mutex_lock(&u->lock);
	/* A worker's batch is lent once: its last lease has ended. */
	WARN_ON_ONCE(l->state != TD_LEASE_FREE || !list_empty(&l->node));
	if (u->closing) {
		/* The engine stopped cutting batches first: this one is cancelled. */
		mutex_unlock(&u->lock);
		td_batch_redeliver(b);
		return TDISPATCH_RESULT_SUCCESS;
	}
	l->batch = b;
	l->state = TD_LEASE_READY;
	list_add_tail(&l->node, &u->ready);
	mutex_unlock(&u->lock);
	td_batch_ready(u);
	return TD_RESULT_HELD;
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
	/* No lock held: a slot written meanwhile may be leased here. */
	td_vec_flush_here(&v);
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
	struct tdispatch_batch *b;
	struct tdispatch_take tk;
	struct td_lease *l;
	u32 copied;
	ktime_t end;
	u64 now;
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
	 * Off the ready list, so no other TAKE finds it, and COPYING, so
	 * nothing ends it: the copy runs without u->lock, which the engine's
	 * workers, other takers and close() need, for as long as the user's
	 * memory takes to fault in.  Only this file's release could end the
	 * lease meanwhile, and it cannot run while we are in an ioctl.
	 */
	list_move_tail(&l->node, &u->copying);
	l->owner = current->files;
	l->flushed = false;
	l->state = TD_LEASE_COPYING;
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
		l->state = TD_LEASE_READY;
		mutex_unlock(&u->lock);
		td_batch_ready(u);
		return ret;
	}
	l->id = tk.batch;
	if (l->flushed) {
		/* Closed by its owner meanwhile: redelivered, as if taken before. */
		b = td_lease_end(l);
		mutex_unlock(&u->lock);
		td_batch_finish(b, TD_RESULT_REDELIVER);
		return 0;
	}
	list_move_tail(&l->node, &u->taken);
	l->state = TD_LEASE_TAKEN;
	now = ktime_get_ns();
	l->deadline = now + u->lease_ns;
	td_lease_arm(l, now);
	mutex_unlock(&u->lock);
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
			batch = td_lease_end(l);
			/* No wake-up for nothing; one that runs finds it FREE. */
			cancel_delayed_work(&l->expire);
		}
		break;
	}
	mutex_unlock(&u->lock);
	kvfree(r);
	if (ret)
		return ret;
	/*
	 * Ended here: the batch is counted and its events queued before we
	 * return, so that STATS, QUERY and read() that follow show it.
	 */
	td_batch_finish(batch, c.result);
	return 0;
}

/* Redeliver at once the leases @owner holds, or all of them and stop. */
void td_user_abandon(struct td_user *u, fl_owner_t owner, bool all)
{
	struct td_lease *l, *next;
	LIST_HEAD(gone);

	mutex_lock(&u->lock);
	if (all) {
		u->closing = true;
		list_splice_init(&u->ready, &gone);
	}
	list_for_each_entry_safe(l, next, &u->taken, node)
		if (all || l->owner == owner)
			list_move_tail(&l->node, &gone);
	list_for_each_entry(l, &gone, node)
		l->state = TD_LEASE_FREE;
	/* Its TAKE is still copying: that TAKE redelivers it when done. */
	list_for_each_entry(l, &u->copying, node)
		if (l->owner == owner)
			l->flushed = true;
	mutex_unlock(&u->lock);
	/* One at a time off the list: ending one may lend its worker's next. */
	while ((l = list_first_entry_or_null(&gone, struct td_lease, node))) {
		list_del_init(&l->node);
		td_batch_finish(l->batch, TD_RESULT_REDELIVER);
	}
	wake_up_all(u->wait);
	if (all)
		wake_up_all(&u->take_wait);
}
