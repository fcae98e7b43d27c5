// SPDX-License-Identifier: GPL-2.0
/*
 * Dispatchers owned by an open /dev/tdispatch file, worked on by userspace:
 * CREATE, the file's ioctls (each sent to the unit that does it: leases,
 * merging, shared slots), its periodic tasks, and its last close.
 */
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/linux/tdispatch.h>

#include "core.h"
#include "events.h"
#include "file.h"
#include "limits.h"
#include "merge.h"
#include "pending.h"
#include "user.h"
#include "uslots.h"
#include "vec.h"
#include "watch.h"

/* A task that ends leaves the merge table, and its slot if it was unread. */
static void td_user_task_release(struct tdispatch *d, struct tdispatch_task *t,
				 enum tdispatch_outcome outcome)
{
	struct td_payload *p = tdispatch_task_payload(t);
	struct td_user *u = tdispatch_priv(d);

	if (t->flags & TD_TASK_MERGE)
		td_merge_forget(&container_of(td_ext(t), struct td_file_task, x)->merge);
	if (t->flags & TD_TASK_SLOT)
		td_slot_forget(u, (struct td_slot_ref *)p->data);
	td_payload_free(u, p);
}

static const struct tdispatch_ops td_user_ops = {
	.process = td_user_process,
	.release = td_user_task_release,
};

static void td_user_free(struct td_user *u)
{
	struct td_file_task *ft, *next;

	llist_for_each_entry_safe(ft, next, llist_del_all(&u->spare), x.task.input)
		kfree(ft);
	td_merge_free(&u->merge);
	td_uslots_free(u->slots);
	td_events_free(&u->events);
	kfree(u->leases);
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

	ret = td_copy_in(&c, sizeof(c), uarg);
	if (ret)
		return ret;
	if ((c.flags & ~TDISPATCH_CREATE_EVENTS) || c.pad ||
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
	td_merge_init(&u->merge, td_merge_held(&cfg));
	ret = td_leases_init(u);
	/* The first observer of a new dispatcher: only max_observers=0 refuses. */
	if (!ret && u->has_events)
		ret = td_events_attach(u->d, &u->events);
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

static int td_submit_one(void *ctx, struct tdispatch_submit_task *ut, u32 flags, struct td_vec *v)
{
	struct tdispatch_submit_opts o = {
		.deadline = ut->deadline_ns,
		.not_before = td_not_before(ut, flags),
		.max_attempts = ut->max_attempts,
		.watch = ut->flags & TDISPATCH_TASK_WATCH,
		.watch_key = ut->watch_key,
	};
	/* Only a delayed task has anything to watch for. */
	bool watch = o.watch && o.not_before;
	struct td_watcher *w = NULL;
	struct td_user *u = ctx;
	struct td_file_task *task;
	int ret;

	if (ut->flags & TDISPATCH_TASK_MERGE)
		return td_submit_merge(u, ut, v);
	task = (ut->flags & ~TDISPATCH_TASK_WATCH) ? ERR_PTR(-EINVAL) :
		td_file_task_new(u, ut->payload, ut->payload_len, watch, v);
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

static int td_ioctl_set_rate(struct td_user *u, void __user *uarg)
{
	struct tdispatch_rate r;
	int ret;

	ret = td_copy_in(&r, sizeof(r), uarg);
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
	struct td_file_task *ft;
	int ret;

	ret = td_copy_in(&a, sizeof(a), uarg);
	if (ret)
		return ret;
	if (a.flags)
		return -EINVAL;
	ft = td_file_task_new(u, a.payload, a.payload_len, false, NULL);
	if (IS_ERR(ft))
		return PTR_ERR(ft);
	pc = (struct tdispatch_periodic) {
		.id = a.id,
		.payload = &ft->p,
		.period_ns = a.period_ns,
		.timeout_ns = a.timeout_ns,
		.max_backoff = a.max_backoff,
		.release = td_user_periodic_release,
	};
	ret = tdispatch_periodic_add(u->d, &pc);
	if (ret)
		td_payload_free(u, &ft->p);
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

	ret = td_copy_in(&s, sizeof(s), uarg);
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
	case TDISPATCH_IOC_EXPEDITE:
		return td_ioctl_by_id(&u->ctx, uarg, tdispatch_expedite);
	case TDISPATCH_IOC_EXPEDITE_KEY:
		return td_ioctl_expedite_key(&u->ctx, uarg);
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
	td_leases_stop(u);
	tdispatch_destroy(u->d, TDISPATCH_DISCARD, 0);
	td_user_free(u);
}
