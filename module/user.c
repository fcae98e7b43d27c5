// SPDX-License-Identifier: GPL-2.0
/*
 * Dispatchers owned by an open /dev/tdispatch file, worked on by userspace.
 *
 * The engine's ->process() runs on a kworker that parks the batch as a
 * lease on the file's ready list and sleeps until a userspace worker takes
 * it (TDISPATCH_IOC_TAKE) and completes it (TDISPATCH_IOC_COMPLETE).  A
 * lease that is not completed within lease_ns, or whose taker closes the
 * file (->flush() with its files_struct), is redelivered: the batch goes
 * back to the head of the line without a shaper hold-off.
 */
#include <linux/bsearch.h>
#include <linux/fs.h>
#include <linux/llist.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include <uapi/linux/tdispatch.h>

#include "internal.h"
#include "uslots.h"

#define TD_USER_MAX_BUFFER	65536U
#define TD_USER_MAX_BATCH	1024U
#define TD_USER_MAX_BYTES	(16U << 20)	/* task bytes held per dispatcher */
#define TD_USER_MAX_DELAYED	SZ_1M
#define TD_LEASE_MIN_NS		NSEC_PER_MSEC
/*
 * A task of up to TD_UTASK_SMALL payload bytes is allocated at that size
 * and, when it ends, kept for the next SUBMIT, up to TD_USER_MAX_SPARE of
 * them per dispatcher (at most 192 KiB, charged to the memory cgroup that
 * allocated them, beside TD_USER_MAX_BYTES).
 */
#define TD_UTASK_SMALL		64U
#define TD_USER_MAX_SPARE	1024

/* A merge replaces a payload where it is: every small task has the room. */
static_assert(TD_UTASK_SMALL == TDISPATCH_MERGE_PAYLOAD_MAX);
/* A slot's payload is read through the bounce buffer of a small one. */
static_assert(TDISPATCH_SLOT_PAYLOAD_MAX <= TD_UTASK_SMALL);

static_assert(sizeof(struct tdispatch_create) == TDISPATCH_CREATE_SIZE_VER2);
static_assert(sizeof(struct tdispatch_take) == TDISPATCH_TAKE_SIZE_VER0);
static_assert(sizeof(struct tdispatch_complete) == TDISPATCH_COMPLETE_SIZE_VER1);
static_assert(sizeof(struct tdispatch_task_result) == 16);
static_assert(sizeof(struct tdispatch_rate) == TDISPATCH_RATE_SIZE_VER0);
static_assert(sizeof(struct tdispatch_periodic_add) == TDISPATCH_PERIODIC_ADD_SIZE_VER0);
static_assert(sizeof(struct tdispatch_periodic_stats_user) ==
	      TDISPATCH_PERIODIC_STATS_SIZE_VER0);
static_assert(sizeof(struct tdispatch_ltask) == 32);
static_assert(sizeof(struct tdispatch_event) == 48);
static_assert(TDISPATCH_RESULT_PERMANENT == TDISPATCH_PERMANENT);
static_assert(TDISPATCH_OUTCOME_CANCELLED == TDISPATCH_CANCELLED);
static_assert(TDISPATCH_OUTCOME_EXHAUSTED == TDISPATCH_EXHAUSTED);

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
	unsigned long filed;		/* td_batch_filed() once it is filed */
	u64 id;
	fl_owner_t owner;
	bool flushed;			/* its owner closed the file while COPYING */
	enum td_lease_state state;
	enum tdispatch_result result;
};

struct td_payload {
	u32 len;
	u32 held;	/* bytes counted against the bound, given back at free */
	u8 data[];
};

/*
 * A task SUBMIT made, with its deadline, not-before time and key (struct
 * td_task_ext) and its payload in the same allocation: the engine frees
 * nothing of it (%TD_TASK_OWNED), td_user_task_release() frees it
 * all.  A periodic registration's payload is one too, its task unused.
 * One submitted with %TDISPATCH_UTASK_MERGE (%TD_TASK_MERGE) is in the
 * file's merge table until its payload is taken, a submission of its id
 * without the flag comes, or it ends; while a TAKE copies its payload out
 * (->taking, under its bucket's lock) merges make a task of their own.
 */
struct td_utask {
	struct td_task_ext x;
	bool taking;
	struct td_payload p;
};

/*
 * The payload of a task of a shared slot (%TD_TASK_SLOT), which KICK made:
 * its slot, the sequence count a TAKE copied it out at, and whether a TAKE
 * that succeeded read it.
 */
struct td_slot_ref {
	u32 index;
	u32 seq;
	bool read;
};

/*
 * What a task of @len payload bytes holds: the bound counts all of it,
 * its watch key too (freed earlier than the task, so counted to the end).
 */
static size_t td_task_bytes(u32 len, bool watch)
{
	return sizeof(struct td_utask) + len + (watch ? sizeof(struct td_watcher) : 0);
}

struct td_user {
	struct tdispatch *d;
	struct td_ctx ctx;		/* for the calls ioctl.c shares */
	struct td_charge charge;	/* against max_user_dispatchers */
	struct td_charge events_charge;	/* against max_user_observers */
	u64 lease_ns;
	struct mutex lock;		/* leases, events */
	struct list_head ready;
	struct list_head copying;
	struct list_head taken;
	u64 next_lease;
	bool closing;
	wait_queue_head_t *wait;	/* the file's: readers and pollers */
	wait_queue_head_t take_wait;	/* TAKE callers, one woken per ready batch */
	wait_queue_head_t lease_wait;	/* kworkers holding leases */
	atomic_long_t bytes;		/* payload bytes held */
	atomic_long_t rejected;		/* tasks refused before the engine saw them */
	atomic64_t slot_writes;		/* by the slots' own counts: see td_slot_count() */
	/*
	 * Small tasks that ended, for td_utask_get() to reuse: a task is
	 * allocated on the submitter's CPU and freed on a worker's, where
	 * SLUB keeps the freed objects' slabs, so the submitter's CPU kept
	 * taking fresh slabs (and shuffling each one's free list).  Put from
	 * any context, taken under ->spare_lock.
	 */
	struct llist_head spare;
	spinlock_t spare_lock;		/* serialises takers of ->spare */
	atomic_t nr_spare;		/* >= the nodes on ->spare */
	struct td_merge merge;
	struct td_uslots *slots;	/* set once by SLOTS */
	/* KICKs the kernel owes: see td_slot_read(). */
	struct delayed_work kick_retry;
	unsigned long kick_backoff;	/* jiffies; under the work's own serialisation */
	bool has_events;
	struct td_events events;
};

/* A kept small task, or NULL; process context. */
static struct td_utask *td_spare_get(struct td_user *u)
{
	struct llist_node *n;

	if (llist_empty(&u->spare))
		return NULL;
	/* llist_del_first() allows one taker at a time; putters are free. */
	spin_lock(&u->spare_lock);
	n = llist_del_first(&u->spare);
	spin_unlock(&u->spare_lock);
	if (!n)
		return NULL;
	atomic_dec(&u->nr_spare);
	return container_of(n, struct td_utask, x.task.input);
}

/*
 * @writes to a slot, by its sequence count, that a read or an ended task
 * stands for.  The count is the user's word, so it is kept apart from the
 * engine's: accepted and overridden count the tasks KICK made.
 */
static void td_slot_count(struct td_user *u, u32 writes)
{
	atomic64_add(writes, &u->slot_writes);
}

/*
 * A slot's task ends: unread, its slot is unqueued, so that the next write
 * queues another, and the writes since the last read end with it.
 */
static void td_slot_forget(struct td_user *u, struct td_slot_ref *r)
{
	if (!READ_ONCE(r->read))
		td_slot_count(u, td_uslots_unqueue(u->slots, r->index));
}

/* Frees the task the payload came with, or keeps it to reuse. */
static void td_payload_free(struct td_user *u, struct td_payload *p)
{
	struct td_utask *ut = container_of(p, struct td_utask, p);

	if (ut->x.task.flags & TD_TASK_MERGE)
		td_merge_forget(&u->merge, &ut->x);
	if (ut->x.task.flags & TD_TASK_SLOT)
		td_slot_forget(u, (struct td_slot_ref *)p->data);
	atomic_long_sub(p->held, &u->bytes);
	if (p->len <= TD_UTASK_SMALL) {
		if (atomic_inc_return(&u->nr_spare) <= TD_USER_MAX_SPARE) {
			llist_add(&ut->x.task.input, &u->spare);
			return;
		}
		atomic_dec(&u->nr_spare);
	}
	kfree(ut);
}

/*
 * A small payload is copied through the stack: the hardened usercopy check
 * of a copy whose size is known only at run time is cheap for a stack
 * object and, for a heap one, costs more than the copy.
 */
static int td_payload_copy_in(struct td_vec *v, struct td_payload *p, const void __user *from)
{
	u8 bounce[TD_UTASK_SMALL];

	if (p->len > TD_UTASK_SMALL)
		return td_vec_copy_from_user(v, p->data, from, p->len);
	if (td_vec_copy_from_user(v, bounce, from, p->len))
		return -EFAULT;
	memcpy(p->data, bounce, p->len);
	return 0;
}

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
	struct td_utask *ut = container_of(p, struct td_utask, p);
	struct td_slot_ref *r = (struct td_slot_ref *)p->data;
	struct hlist_bl_head *b;

	if (ut->x.task.flags & TD_TASK_SLOT) {
		*len = td_uslots_peek(u->slots, r->index, bounce, &r->seq);
		return *len <= room ? bounce : NULL;
	}
	if (!(ut->x.task.flags & TD_TASK_MERGE) || td_merge_out(&ut->x)) {
		*len = p->len;
		if (*len > room)
			return NULL;
		if (*len > TD_UTASK_SMALL)
			return p->data;
		memcpy(bounce, p->data, *len);
		return bounce;
	}
	b = td_merge_lock(&u->merge, ut->x.task.id);
	*len = p->len;
	if (*len <= room) {
		ut->taking = !td_merge_out(&ut->x);
		memcpy(bounce, p->data, *len);
	}
	hlist_bl_unlock(b);
	return *len <= room ? bounce : NULL;
}

static int td_slot_submit(struct td_user *u, struct td_uslots *s, u32 i, struct td_vec *v);
static void td_kick_retry(struct work_struct *work);

/*
 * A slot task's payload reached the caller: the slot is read.  A write
 * that landed between the copy and now, and queued nothing, gets a task
 * of its own; if the dispatcher refuses it (input full, 16 MiB held, no
 * memory), the slot is marked and the kernel owes the KICK its writer
 * does not know of: td_kick_retry() makes it, later.
 */
static void td_slot_read(struct td_user *u, struct td_slot_ref *r, struct td_vec *v)
{
	u32 writes;

	WRITE_ONCE(r->read, true);
	if (td_uslots_commit(u->slots, r->index, r->seq, &writes) &&
	    td_slot_submit(u, u->slots, r->index, v)) {
		td_uslots_mark_slot(u->slots, r->index);
		mod_delayed_work(system_wq, &u->kick_retry, 1);
	}
	td_slot_count(u, writes);
}

/*
 * After td_payload_take(): a payload that reached the caller (@taken) is
 * read, a merge task's out of the merge table for good; one that did not
 * is left as it was, merges landing in it again.
 */
static void td_payload_settle(struct td_user *u, struct td_payload *p, bool taken,
			      struct td_vec *v)
{
	struct td_utask *ut = container_of(p, struct td_utask, p);
	struct hlist_bl_head *b;

	if (ut->x.task.flags & TD_TASK_SLOT) {
		if (taken)
			td_slot_read(u, (struct td_slot_ref *)p->data, v);
		return;
	}
	if (!ut->taking)
		return;
	b = td_merge_lock(&u->merge, ut->x.task.id);
	if (taken)
		td_merge_del(&ut->x);
	ut->taking = false;
	hlist_bl_unlock(b);
}

/*
 * A user's task for a payload of @len bytes, counted against the
 * dispatcher's bound; give it back with td_payload_free().
 */
static struct td_utask *td_utask_get(struct td_user *u, u32 len, bool watch, struct td_vec *v)
{
	u32 size = max(len, TD_UTASK_SMALL);
	struct td_utask *ut;
	size_t bytes;

	if (!len || len > TDISPATCH_PAYLOAD_MAX)
		return ERR_PTR(-EINVAL);
	bytes = td_task_bytes(size, watch);
	if (atomic_long_add_return(bytes, &u->bytes) > TD_USER_MAX_BYTES) {
		atomic_long_sub(bytes, &u->bytes);
		return ERR_PTR(-ENOSPC);
	}
	ut = size == TD_UTASK_SMALL ? td_spare_get(u) : NULL;
	if (!ut)
		ut = td_vec_kmalloc(v, struct_size(ut, p.data, size), TD_GFP_USER);
	if (!ut) {
		atomic_long_sub(bytes, &u->bytes);
		return ERR_PTR(-ENOMEM);
	}
	ut->x.task.flags = TD_TASK_EXT;
	ut->taking = false;
	ut->p.len = len;
	ut->p.held = bytes;
	return ut;
}

/* As td_utask_get(), with the @len payload bytes at @uptr copied in. */
static struct td_utask *td_utask_new(struct td_user *u, u64 uptr, u32 len, bool watch,
				     struct td_vec *v)
{
	struct td_utask *ut = td_utask_get(u, len, watch, v);

	if (IS_ERR(ut) || !td_payload_copy_in(v, &ut->p, u64_to_user_ptr(uptr)))
		return ut;
	td_payload_free(u, &ut->p);
	return ERR_PTR(-EFAULT);
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

static enum tdispatch_result td_user_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	struct td_user *u = tdispatch_priv(d);
	struct td_lease l = {
		.batch = b,
		.filed = td_batch_filed(b) + 1,
		.state = TD_LEASE_READY,
	};
	enum tdispatch_result res;

	mutex_lock(&u->lock);
	if (u->closing) {
		/* The engine stopped cutting batches first: this one is cancelled. */
		mutex_unlock(&u->lock);
		td_batch_redeliver(b);
		return TDISPATCH_SUCCESS;
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
		res = TDISPATCH_SUCCESS;
	}
	mutex_unlock(&u->lock);
	return res;
}

static void td_user_task_release(struct tdispatch *d, struct tdispatch_task *t,
				 enum tdispatch_outcome outcome)
{
	td_payload_free(tdispatch_priv(d), tdispatch_task_payload(t));
}

static const struct tdispatch_ops td_user_ops = {
	.process = td_user_process,
	.release = td_user_task_release,
};

static void td_user_free(struct td_user *u)
{
	struct td_utask *ut, *next;

	llist_for_each_entry_safe(ut, next, llist_del_all(&u->spare), x.task.input)
		kfree(ut);
	td_merge_free(&u->merge);
	td_uslots_free(u->slots);
	td_events_free(&u->events);
	td_limit_uncharge(&u->events_charge);
	td_limit_uncharge(&u->charge);
	kfree(u);
}

int td_user_create(struct td_file *f, const struct file *file, void __user *uarg)
{
	struct tdispatch_create c;
	struct tdispatch_config cfg;
	struct td_user *u;
	int ret;

	ret = td_copy_in(&c, sizeof(c), uarg, TDISPATCH_CREATE_SIZE_VER0);
	if (ret)
		return ret;
	if ((c.flags & ~TDISPATCH_CREATE_EVENTS) || c.pad || c.pad2 || c.pad3 ||
	    c.max_attempts > TDISPATCH_MAX_ATTEMPTS || c.burst > TD_USER_MAX_BUFFER ||
	    !memchr(c.name, 0, sizeof(c.name)) ||
	    c.max_buffer > TD_USER_MAX_BUFFER || c.max_batch > TD_USER_MAX_BATCH ||
	    c.max_input > TD_USER_MAX_BUFFER || c.max_delayed > TD_USER_MAX_DELAYED ||
	    c.lease_ns < TD_LEASE_MIN_NS || c.lease_ns > TDISPATCH_LEASE_MAX_NS ||
	    !(c.flags & TDISPATCH_CREATE_EVENTS) != !c.event_queue ||
	    c.event_queue > TD_USER_MAX_EVENTS)
		return -EINVAL;

	u = kzalloc(sizeof(*u), TD_GFP_USER);
	if (!u)
		return -ENOMEM;
	mutex_init(&u->lock);
	spin_lock_init(&u->spare_lock);
	INIT_LIST_HEAD(&u->ready);
	INIT_LIST_HEAD(&u->copying);
	INIT_LIST_HEAD(&u->taken);
	init_waitqueue_head(&u->lease_wait);
	init_waitqueue_head(&u->take_wait);
	INIT_DELAYED_WORK(&u->kick_retry, td_kick_retry);
	u->kick_backoff = 1;
	u->lease_ns = c.lease_ns;
	u->wait = &f->wait;
	ret = td_limit_charge(&u->charge, file, TD_LIMIT_DISPATCHER);
	if (!ret && c.event_queue) {
		u->has_events = true;
		ret = td_limit_charge(&u->events_charge, file, TD_LIMIT_OBSERVER);
		if (!ret && td_events_init(&u->events, c.event_queue, &f->wait))
			ret = -ENOMEM;
		/* Its own dispatcher's only reader: no share to keep. */
		u->events.exempt = true;
	}
	if (ret) {
		td_user_free(u);
		return ret;
	}

	cfg = (struct tdispatch_config) {
		.name = c.name,
		.max_buffer = c.max_buffer,
		.max_batch = c.max_batch,
		.max_delay_ns = c.max_delay_ns,
		.workers = c.workers,
		.congestion_delay_ns = c.congestion_delay_ns,
		.transient_delay_ns = c.transient_delay_ns,
		.max_input = c.max_input,
		.max_delayed = c.max_delayed,
		.max_attempts = c.max_attempts,
		.rate = c.rate,
		.burst = c.burst,
		/* No real-time thread for unprivileged callers. */
		.flags = TDISPATCH_NORMAL_PRIORITY,
	};
	mutex_lock(&f->lock);
	if (f->user || f->attach) {
		ret = -EEXIST;
		goto fail;
	}
	u->d = td_create(&cfg, &td_user_ops, u, TD_GFP_USER);
	if (IS_ERR(u->d)) {
		ret = PTR_ERR(u->d);
		goto fail;
	}
	u->ctx.d = u->d;
	/* What the engine may hold at once of a merge task: see merge.c. */
	td_merge_init(&u->merge, min_t(u64, UINT_MAX, cfg.max_buffer + cfg.workers * cfg.max_batch +
				       (u64)num_possible_cpus() * cfg.max_input));
	/* The first observer of a new dispatcher: only max_observers=0 refuses. */
	ret = u->has_events ? td_events_attach(u->d, &u->events) : 0;
	if (ret) {
		tdispatch_destroy(u->d, TDISPATCH_DISCARD, 0);
		goto fail;
	}
	/* Pairs with smp_load_acquire() in td_file_user(): a user seen is complete. */
	smp_store_release(&f->user, u);
	mutex_unlock(&f->lock);
	return 0;

fail:
	mutex_unlock(&f->lock);
	td_user_free(u);
	return ret;
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
	struct td_task_ext *x = td_merge_find(b, id);
	struct td_utask *ut;
	int ret;

	if (!x)
		return 0;
	ut = container_of(x, struct td_utask, x);
	if (READ_ONCE(x->task.state) < TD_TASK_INPUT || ut->taking) {
		td_merge_del(x);
		return 0;
	}
	ret = td_submit_merged(u->d);
	if (ret)
		return ret;
	ut->p.len = len;
	memcpy(ut->p.data, data, len);
	return 1;
}

/*
 * %TDISPATCH_UTASK_MERGE: into the waiting task of its id, or a task of
 * its own that later ones merge into.  The payload is read first, outside
 * the lock.  A new task goes into the table before the engine can see it
 * (see td_merge_forget()) and is submitted under the lock, so that none
 * merges into a task the engine then refuses.
 */
static int td_submit_merge(struct td_user *u, const struct tdispatch_utask *ut,
			   struct td_vec *v)
{
	static const struct tdispatch_submit_opts o = { };
	u32 len = ut->payload_len;
	u8 data[TD_UTASK_SMALL];
	struct hlist_bl_head *b;
	struct td_utask *task;
	int ret;

	/* Nothing a merge could not carry over: no deadline, delay or own attempts. */
	ret = -EINVAL;
	if (ut->flags != TDISPATCH_UTASK_MERGE || ut->deadline_ns || ut->not_before_ns ||
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

	task = td_utask_get(u, len, false, v);
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
		td_merge_add(b, &task->x);
		ret = td_submit_task(u->d, &task->x.task, ut->id, &task->p, &o, NULL,
				     TD_TASK_OWNED | TD_TASK_MERGE, v);
		if (ret)
			td_merge_del(&task->x);
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
 * A task without %TDISPATCH_UTASK_MERGE (a plain one, or with
 * %TD_TASK_SLOT in @flags a shared slot's), which, once accepted, takes its
 * id's task out of the merge table (if the file ever merged): a merge
 * after it must not replace a task that it, the newer, replaces in the
 * pending set.  A merge between the push and the removal is concurrent
 * with this call, and counts as the older of the two.  (Newer as seen
 * from one CPU: the acceptor drains the CPUs' input in turn, so a task
 * submitted on one CPU may still be taken in before an older one from
 * another, as for any two submissions of an id.)
 */
static int td_submit_unmerged(struct td_user *u, struct td_utask *task, u64 id,
			      const struct tdispatch_submit_opts *o, struct td_watcher *w,
			      u8 flags, struct td_vec *v)
{
	struct hlist_bl_head *b;
	struct td_task_ext *x;
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
	x = td_merge_find(b, id);
	if (x)
		td_merge_del(x);
	hlist_bl_unlock(b);
	return 0;
}

static int td_submit_one(void *ctx, struct tdispatch_utask *ut, u32 flags, struct td_vec *v)
{
	struct tdispatch_submit_opts o = {
		.deadline = ut->deadline_ns,
		.not_before = td_not_before(ut, flags),
		.max_attempts = ut->max_attempts,
		.watch = ut->flags & TDISPATCH_UTASK_WATCH,
		.watch_key = ut->watch_key,
	};
	/* Only a delayed task has anything to watch for. */
	bool watch = o.watch && o.not_before;
	struct td_watcher *w = NULL;
	struct td_user *u = ctx;
	struct td_utask *task;
	int ret;

	if (ut->flags & TDISPATCH_UTASK_MERGE)
		return td_submit_merge(u, ut, v);
	task = (ut->flags & ~TDISPATCH_UTASK_WATCH) ? ERR_PTR(-EINVAL) :
		td_utask_new(u, ut->payload, ut->payload_len, watch, v);
	if (IS_ERR(task)) {
		atomic_long_inc(&u->rejected);
		return PTR_ERR(task);
	}
	if (watch)
		w = td_vec_kmalloc(v, sizeof(*w), TD_GFP_USER);
	/*
	 * The engine counts its own refusals.  The file's dispatcher outlives
	 * the call: the vector's tasks may share @v.
	 */
	ret = td_submit_unmerged(u, task, ut->id, &o, w, 0, v);
	if (ret) {
		kfree(w);
		td_payload_free(u, &task->p);
	}
	return ret;
}

/*
 * Copy a taken batch out; *@copied: how many tasks td_payload_take() saw,
 * for td_take_settle().
 */
static int td_take_copy(struct td_user *u, struct tdispatch_take *tk,
			struct tdispatch_batch *b, u32 *copied)
{
	struct tdispatch_ltask __user *out = u64_to_user_ptr(tk->tasks);
	u8 __user *buf = u64_to_user_ptr(tk->buf);
	u64 off = 0;
	u32 i;

	*copied = 0;
	if (b->nr > tk->max_tasks)
		return -ENOSPC;
	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *t = tdispatch_batch_task(b, i);
		struct tdispatch_ltask lt = {
			.id = t->id,
			.attempts = t->attempts,
			.payload_off = off,
			.submitted_ns = ktime_to_ns(t->submitted),
		};
		u8 bounce[TD_UTASK_SMALL];
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

static int td_ioctl_take(struct td_user *u, struct file *file, void __user *uarg)
{
	struct tdispatch_take tk;
	struct td_lease *l;
	u32 copied;
	ktime_t end;
	int ret;

	ret = td_copy_in(&tk, sizeof(tk), uarg, TDISPATCH_TAKE_SIZE_VER0);
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

/*
 * SLOTS: the file's shared slots, made once; the same @nr again (another
 * process sharing the file, say) is told where they are.
 */
static int td_ioctl_slots(struct td_user *u, void __user *uarg)
{
	struct td_uslots *s, *old;
	struct tdispatch_slots a;
	int ret;

	/* The marks are 64-bit words that the kernel and the user change atomically. */
	if (!IS_ENABLED(CONFIG_64BIT))
		return -EOPNOTSUPP;
	ret = td_copy_in(&a, sizeof(a), uarg, TDISPATCH_SLOTS_SIZE_VER0);
	if (ret)
		return ret;
	if (a.flags || a.pad || !a.nr || a.nr % TDISPATCH_SLOTS_MIN || a.nr > TDISPATCH_SLOTS_MAX)
		return -EINVAL;
	/* Pairs with cmpxchg_release() below, as the others do. */
	s = smp_load_acquire(&u->slots);
	if (!s) {
		s = td_uslots_new(a.nr);
		if (!s)
			return -ENOMEM;
		/* Pairs with smp_load_acquire() here, in KICK and mmap(): seen whole. */
		old = cmpxchg_release(&u->slots, NULL, s);
		if (old) {
			td_uslots_free(s);
			s = old;
		}
	}
	if (s->nr != a.nr)
		return -EEXIST;
	a.map_len = s->map_len;
	a.bitmap_off = s->bitmap_off;
	a.slots_off = s->slots_off;
	return td_copy_out(uarg, &a, sizeof(a));
}

int td_user_mmap(struct td_user *u, struct vm_area_struct *vma)
{
	/* Pairs with cmpxchg_release() in SLOTS: the slots are seen whole. */
	struct td_uslots *s = smp_load_acquire(&u->slots);

	return s ? td_uslots_mmap(s, vma) : -ENXIO;
}

/* A task of slot @i, by the id the slot has now; TAKE reads its payload. */
static int td_slot_submit(struct td_user *u, struct td_uslots *s, u32 i, struct td_vec *v)
{
	static const struct tdispatch_submit_opts o = { };
	struct td_slot_ref *r;
	struct td_utask *ut;
	int ret;

	ut = td_utask_get(u, sizeof(*r), false, v);
	if (IS_ERR(ut)) {
		atomic_long_inc(&u->rejected);
		return PTR_ERR(ut);
	}
	r = (struct td_slot_ref *)ut->p.data;
	r->index = i;
	r->read = false;
	/* It replaces a waiting merge task of its id: no merge may land there. */
	ret = td_submit_unmerged(u, ut, td_uslots_id(s, i), &o, NULL, TD_TASK_SLOT, v);
	/* Refused: no %TD_TASK_SLOT, so the slot stays queued for the next KICK. */
	if (ret)
		td_payload_free(u, &ut->p);
	return ret;
}

/*
 * The marked slots of bitmap word @w: a task each, those after a refusal
 * marked again.
 */
static int td_slots_kick_word(struct td_user *u, struct td_uslots *s, u32 w, struct td_vec *v,
			      int *queued)
{
	u64 bits;
	int ret;

	for (bits = td_uslots_grab(&s->bitmap[w]); bits; bits &= bits - 1) {
		ret = td_slot_submit(u, s, w * 64 + __ffs64(bits), v);
		if (ret) {
			td_uslots_mark(&s->bitmap[w], bits);
			return ret;
		}
		if (++*queued % TD_VEC_FLUSH == 0)
			td_vec_flush(v);
	}
	return 0;
}

/*
 * KICK: a task for each marked slot, found through the summary, as a
 * vector's tasks are submitted (one clock reading, a wake-up owed per
 * %TD_VEC_FLUSH).  Those after a refusal stay marked, and the refusal is
 * the call's result: their writers owe no KICK any more.  Up to 65536 tasks
 * a call, so it yields the CPU between words, and stops (the rest left
 * marked) at a fatal signal.
 */
static int td_slots_kick(struct td_user *u, struct td_uslots *s)
{
	u32 sw, w, words = s->nr / 64;
	struct td_vec v = { };
	int queued = 0, ret = 0;
	u64 sb;

	for (sw = 0; sw < DIV_ROUND_UP(words, 64) && !ret; sw++) {
		for (sb = td_uslots_grab(&s->summary[sw]); sb; sb &= sb - 1) {
			/* A mark the user set beyond the bitmap names nothing. */
			w = sw * 64 + __ffs64(sb);
			if (need_resched()) {
				td_vec_flush(&v);
				cond_resched();
			}
			ret = fatal_signal_pending(current) ? -EINTR :
			      w < words ? td_slots_kick_word(u, s, w, &v, &queued) : 0;
			if (ret) {
				td_uslots_mark(&s->summary[sw], sb);
				break;
			}
		}
	}
	td_vec_flush(&v);
	/* A refusal is said even after some were queued: the caller kicks again. */
	return ret ?: queued;
}

static int td_ioctl_kick(struct td_user *u)
{
	/* Pairs with cmpxchg_release() in SLOTS: the slots are seen whole. */
	struct td_uslots *s = smp_load_acquire(&u->slots);

	return s ? td_slots_kick(u, s) : -ENXIO;
}

/*
 * The KICK a TAKE owes (td_slot_read()), in a kworker, charged to the
 * file's memory cgroup: again after a refusal, waiting twice as long each
 * time, up to a second.  The file's release cancels it before its
 * dispatcher goes.
 */
static void td_kick_retry(struct work_struct *work)
{
	struct td_user *u = container_of(to_delayed_work(work), struct td_user, kick_retry);
	struct mem_cgroup *old = set_active_memcg(u->d->memcg);
	int ret = td_slots_kick(u, u->slots);

	set_active_memcg(old);
	if (ret >= 0) {
		u->kick_backoff = 1;
		return;
	}
	u->kick_backoff = min_t(unsigned long, 2 * u->kick_backoff, HZ);
	queue_delayed_work(system_wq, &u->kick_retry, u->kick_backoff);
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

static int td_ioctl_complete(struct td_user *u, void __user *uarg)
{
	struct tdispatch_task_result *r;
	struct tdispatch_batch *batch = NULL;
	struct tdispatch_complete c;
	unsigned long filed = 0;
	struct td_lease *l;
	int ret;

	ret = td_copy_in(&c, sizeof(c), uarg, TDISPATCH_COMPLETE_SIZE_VER0);
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
			filed = l->filed;
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
	wait_event_killable(u->d->filed_wait,
			    (long)(td_batch_filed(batch) - filed) >= 0);
	return 0;
}

static int td_ioctl_set_rate(struct td_user *u, void __user *uarg)
{
	struct tdispatch_rate r;
	int ret;

	ret = td_copy_in(&r, sizeof(r), uarg, TDISPATCH_RATE_SIZE_VER0);
	if (ret)
		return ret;
	if (r.flags || r.burst > TD_USER_MAX_BUFFER)
		return -EINVAL;
	return tdispatch_set_rate(u->d, r.rate, r.burst);
}

/* A registration's payload, held until its last run ended. */
static void td_user_periodic_release(struct tdispatch *d, void *payload)
{
	td_payload_free(tdispatch_priv(d), payload);
}

static int td_ioctl_periodic_add(struct td_user *u, void __user *uarg)
{
	struct tdispatch_periodic_add a;
	struct tdispatch_periodic pc;
	struct td_utask *ut;
	int ret;

	ret = td_copy_in(&a, sizeof(a), uarg, TDISPATCH_PERIODIC_ADD_SIZE_VER0);
	if (ret)
		return ret;
	if (a.flags)
		return -EINVAL;
	ut = td_utask_new(u, a.payload, a.payload_len, false, NULL);
	if (IS_ERR(ut))
		return PTR_ERR(ut);
	pc = (struct tdispatch_periodic) {
		.id = a.id,
		.payload = &ut->p,
		.period_ns = a.period_ns,
		.timeout_ns = a.timeout_ns,
		.max_backoff = a.max_backoff,
		.release = td_user_periodic_release,
	};
	ret = tdispatch_periodic_add(u->d, &pc);
	if (ret)
		td_payload_free(u, &ut->p);
	return ret;
}

static int td_ioctl_periodic_del(struct td_user *u, void __user *uarg)
{
	u64 id;
	int ret = td_copy_id(uarg, &id);

	return ret ?: tdispatch_periodic_remove(u->d, id);
}

static int td_ioctl_periodic_stats(struct td_user *u, void __user *uarg)
{
	struct tdispatch_periodic_stats_user s;
	struct tdispatch_periodic_stats st;
	u32 usize;
	int ret;

	ret = td_copy_in(&s, sizeof(s), uarg, TDISPATCH_PERIODIC_STATS_SIZE_VER0);
	if (ret)
		return ret;
	if (s.flags)
		return -EINVAL;
	usize = s.size;
	ret = tdispatch_periodic_get_stats(u->d, s.id, &st);
	if (ret)
		return ret;
	s = (struct tdispatch_periodic_stats_user) {
		.size = min_t(u32, usize, sizeof(s)),
		.id = s.id,
		.runs = st.runs,
		.successes = st.successes,
		.timeouts = st.timeouts,
		.failures = st.failures,
		.skipped = st.skipped,
		.interval_ns = st.interval_ns,
	};
	return td_copy_out(uarg, &s, sizeof(s));
}

long td_user_ioctl(struct td_file *f, struct td_user *u, struct file *file,
		   unsigned int cmd, void __user *uarg)
{
	switch (cmd) {
	case TDISPATCH_IOC_SUBMIT:
		return td_submit_vector(uarg, td_submit_one, u);
	case TDISPATCH_IOC_TAKE:
		return td_ioctl_take(u, file, uarg);
	case TDISPATCH_IOC_COMPLETE:
		return td_ioctl_complete(u, uarg);
	case TDISPATCH_IOC_CANCEL:
		return td_ioctl_by_id(&u->ctx, uarg, tdispatch_cancel);
	case TDISPATCH_IOC_RELEASE:
		return td_ioctl_by_id(&u->ctx, uarg, tdispatch_release);
	case TDISPATCH_IOC_RELEASE_KEY:
		return td_ioctl_release_key(&u->ctx, uarg);
	case TDISPATCH_IOC_SET_RATE:
		return td_ioctl_set_rate(u, uarg);
	case TDISPATCH_IOC_QUERY:
		return td_ioctl_query(&u->ctx, uarg);
	case TDISPATCH_IOC_STATS:
		return td_ioctl_stats(&u->ctx, uarg, &(struct td_file_counts) {
			.rejected = atomic_long_read(&u->rejected),
			.rejected_calls = atomic_long_read(&f->rejected_calls),
			.events_lost = u->has_events ? td_events_lost(&u->events) : 0,
			.slot_writes = atomic64_read(&u->slot_writes),
		});
	case TDISPATCH_IOC_PERIODIC_ADD:
		return td_ioctl_periodic_add(u, uarg);
	case TDISPATCH_IOC_PERIODIC_DEL:
		return td_ioctl_periodic_del(u, uarg);
	case TDISPATCH_IOC_PERIODIC_STATS:
		return td_ioctl_periodic_stats(u, uarg);
	case TDISPATCH_IOC_SLOTS:
		return td_ioctl_slots(u, uarg);
	case TDISPATCH_IOC_KICK:
		return td_ioctl_kick(u);
	default:
		return -ENOTTY;
	}
}

ssize_t td_user_read(struct td_user *u, struct file *file, char __user *buf, size_t len)
{
	if (!u->has_events)
		return -ENXIO;
	return td_events_read(&u->events, file, buf, len);
}

__poll_t td_user_poll(struct td_user *u)
{
	__poll_t mask = 0;

	if (!list_empty_careful(&u->ready))
		mask |= EPOLLRDBAND;
	if (u->has_events && td_events_ready(&u->events))
		mask |= EPOLLIN | EPOLLRDNORM;
	return mask;
}

/* Redeliver at once the leases @owner holds, or all of them and stop. */
static void td_user_abandon(struct td_user *u, fl_owner_t owner, bool all)
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

/* Each close() of a descriptor: the closer's leases are redelivered. */
void td_user_flush(struct td_user *u, fl_owner_t id)
{
	td_user_abandon(u, id, false);
}

/*
 * The last reference is gone: cancel what is left and free it all.  The
 * engine stops cutting batches before the parked ones are let go, so
 * that they end cancelled instead of going round again until destroy.
 */
void td_user_release(struct td_user *u)
{
	cancel_delayed_work_sync(&u->kick_retry);
	td_stop_batches(u->d);
	td_user_abandon(u, NULL, true);
	tdispatch_destroy(u->d, TDISPATCH_DISCARD, 0);
	td_user_free(u);
}
