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
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include <uapi/linux/tdispatch.h>

#include "internal.h"

#define TD_USER_MAX_BUFFER	65536U
#define TD_USER_MAX_BATCH	1024U
#define TD_USER_MAX_BYTES	(16U << 20)	/* payload bytes held per dispatcher */
#define TD_USER_MAX_EVENTS	65536U
#define TD_LEASE_MIN_NS		NSEC_PER_MSEC

static_assert(sizeof(struct tdispatch_create) == TDISPATCH_CREATE_SIZE_VER0);
static_assert(sizeof(struct tdispatch_submit) == TDISPATCH_SUBMIT_SIZE_VER0);
static_assert(sizeof(struct tdispatch_take) == TDISPATCH_TAKE_SIZE_VER0);
static_assert(sizeof(struct tdispatch_complete) == TDISPATCH_COMPLETE_SIZE_VER0);
static_assert(sizeof(struct tdispatch_id) == TDISPATCH_ID_SIZE_VER0);
static_assert(sizeof(struct tdispatch_query) == TDISPATCH_QUERY_SIZE_VER0);
static_assert(sizeof(struct tdispatch_stats_user) == TDISPATCH_STATS_SIZE_VER0);
static_assert(sizeof(struct tdispatch_utask) == 32);
static_assert(sizeof(struct tdispatch_ltask) == 32);
static_assert(sizeof(struct tdispatch_event) == 48);
static_assert(TDISPATCH_RESULT_PERMANENT == TDISPATCH_PERMANENT);
static_assert(TDISPATCH_OUTCOME_CANCELLED == TDISPATCH_CANCELLED);

enum td_lease_state {
	TD_LEASE_READY,		/* on the ready list */
	TD_LEASE_TAKEN,		/* a worker holds it */
	TD_LEASE_DONE,		/* completed with ->result */
	TD_LEASE_ABANDONED,	/* expired, holder gone, or file closing */
};

/* Lives on the stack of the kworker in td_user_process(). */
struct td_lease {
	struct list_head node;		/* ready list or taken list */
	struct tdispatch_batch *batch;
	u64 id;
	fl_owner_t owner;
	enum td_lease_state state;
	enum tdispatch_result result;
};

struct td_payload {
	u32 len;
	u8 data[];
};

struct td_user {
	struct tdispatch *d;
	u64 lease_ns;
	struct mutex lock;		/* leases, events */
	struct list_head ready;
	struct list_head taken;
	u64 next_lease;
	bool closing;
	wait_queue_head_t *wait;	/* the file's: takers, readers, pollers */
	wait_queue_head_t lease_wait;	/* kworkers holding leases */
	atomic_long_t bytes;		/* payload bytes held */
	atomic_long_t rejected;		/* tasks refused before the engine saw them */
	/* outcome events, a ring of ev_cap records */
	struct tdispatch_event *events;
	u32 ev_cap, ev_head, ev_count;
	u64 ev_seq;
	u64 ev_lost;			/* not yet reported to the reader */
	u64 ev_lost_total;
};

/* One per open file. */
struct td_file {
	struct mutex lock;		/* ->user creation */
	struct td_user *user;
	/* Per file, so that poll() before CREATE hears the dispatcher. */
	wait_queue_head_t wait;
	atomic_long_t rejected_calls;
};

static bool td_lease_ended(struct td_lease *l)
{
	return READ_ONCE(l->state) >= TD_LEASE_DONE;
}

static enum tdispatch_result td_user_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	struct td_user *u = tdispatch_priv(d);
	struct td_lease l = { .batch = b, .state = TD_LEASE_READY };
	enum tdispatch_result res;

	mutex_lock(&u->lock);
	if (u->closing) {
		mutex_unlock(&u->lock);
		return TD_RESULT_REDELIVER;
	}
	list_add_tail(&l.node, &u->ready);
	mutex_unlock(&u->lock);
	wake_up_interruptible_poll(u->wait, EPOLLRDBAND);

	/* Idle, not uninterruptible: nobody may take it for a long time. */
	wait_event_idle(u->lease_wait, READ_ONCE(l.state) != TD_LEASE_READY);
	wait_event_idle_timeout(u->lease_wait, td_lease_ended(&l),
				nsecs_to_jiffies(u->lease_ns) + 1);

	mutex_lock(&u->lock);
	if (l.state == TD_LEASE_DONE) {
		res = l.result;
	} else {
		if (l.state == TD_LEASE_TAKEN)
			list_del(&l.node);
		l.state = TD_LEASE_ABANDONED;
		res = TD_RESULT_REDELIVER;
	}
	mutex_unlock(&u->lock);
	return res;
}

/* The LOST record carries the sequence number of the last event lost. */
static void td_user_push_lost(struct td_user *u)
{
	u->events[(u->ev_head + u->ev_count++) % u->ev_cap] = (struct tdispatch_event) {
		.seq = u->ev_seq,
		.type = TDISPATCH_EVENT_LOST,
		.lost = u->ev_lost,
	};
	u->ev_lost = 0;
}

/*
 * Queue an outcome event.  When the ring is full the event is lost; the
 * next event that finds room is preceded by a LOST record saying how
 * many, so that the reader sees the gap where it happened.
 */
static void td_user_event(struct td_user *u, struct tdispatch_task *t,
			  enum tdispatch_outcome outcome)
{
	struct tdispatch_event ev = {
		.seq = 0,
		.type = TDISPATCH_EVENT_OUTCOME,
		.outcome = outcome,
		.id = t->id,
		.latency_ns = ktime_to_ns(ktime_sub(ktime_get(), t->submitted)),
		.attempts = t->attempts,
	};

	mutex_lock(&u->lock);
	if (u->ev_lost && u->ev_count < u->ev_cap)
		td_user_push_lost(u);
	ev.seq = ++u->ev_seq;
	if (u->ev_count < u->ev_cap) {
		u->events[(u->ev_head + u->ev_count++) % u->ev_cap] = ev;
	} else {
		u->ev_lost++;
		u->ev_lost_total++;
	}
	mutex_unlock(&u->lock);
	wake_up_interruptible_poll(u->wait, EPOLLIN | EPOLLRDNORM);
}

static void td_user_task_release(struct tdispatch *d, struct tdispatch_task *t,
				 enum tdispatch_outcome outcome)
{
	struct td_user *u = tdispatch_priv(d);
	struct td_payload *p = tdispatch_task_payload(t);

	if (u->events)
		td_user_event(u, t, outcome);
	atomic_long_sub(p->len, &u->bytes);
	kfree(p);
}

static const struct tdispatch_ops td_user_ops = {
	.process = td_user_process,
	.release = td_user_task_release,
};

/*
 * Copy a growing struct in: at least @ver0 bytes, at most a page, and any
 * bytes beyond what we know must be zero (E2BIG otherwise).
 */
static int td_copy_in(void *karg, size_t ksize, const void __user *uarg, size_t ver0)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < ver0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(karg, ksize, uarg, usize);
}

/* Copy the kernel's view out, no more than the caller's struct holds. */
static int td_copy_out(void __user *uarg, const void *karg, size_t ksize)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (copy_to_user(uarg, karg, min_t(size_t, usize, ksize)))
		return -EFAULT;
	return 0;
}

static void td_user_free(struct td_user *u)
{
	kvfree(u->events);
	kfree(u);
}

static int td_ioctl_create(struct td_file *f, void __user *uarg)
{
	struct tdispatch_create c;
	struct tdispatch_config cfg;
	struct td_user *u;
	int ret;

	ret = td_copy_in(&c, sizeof(c), uarg, TDISPATCH_CREATE_SIZE_VER0);
	if (ret)
		return ret;
	if ((c.flags & ~TDISPATCH_CREATE_EVENTS) || c.pad ||
	    !memchr(c.name, 0, sizeof(c.name)) ||
	    c.max_buffer > TD_USER_MAX_BUFFER || c.max_batch > TD_USER_MAX_BATCH ||
	    c.max_input > TD_USER_MAX_BUFFER ||
	    c.lease_ns < TD_LEASE_MIN_NS || c.lease_ns > TDISPATCH_LEASE_MAX_NS ||
	    !(c.flags & TDISPATCH_CREATE_EVENTS) != !c.event_queue ||
	    c.event_queue > TD_USER_MAX_EVENTS)
		return -EINVAL;

	u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
	if (!u)
		return -ENOMEM;
	mutex_init(&u->lock);
	INIT_LIST_HEAD(&u->ready);
	INIT_LIST_HEAD(&u->taken);
	init_waitqueue_head(&u->lease_wait);
	u->lease_ns = c.lease_ns;
	if (c.event_queue) {
		u->events = kvcalloc(c.event_queue, sizeof(*u->events), GFP_KERNEL_ACCOUNT);
		if (!u->events) {
			td_user_free(u);
			return -ENOMEM;
		}
		u->ev_cap = c.event_queue;
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
	};
	u->wait = &f->wait;
	mutex_lock(&f->lock);
	if (f->user) {
		ret = -EEXIST;
		goto fail;
	}
	u->d = tdispatch_create(&cfg, &td_user_ops, u);
	if (IS_ERR(u->d)) {
		ret = PTR_ERR(u->d);
		goto fail;
	}
	/* Pairs with smp_load_acquire() in td_file_user(). */
	smp_store_release(&f->user, u);
	mutex_unlock(&f->lock);
	return 0;

fail:
	mutex_unlock(&f->lock);
	td_user_free(u);
	return ret;
}

static struct td_user *td_file_user(struct td_file *f)
{
	/* Pairs with smp_store_release() in create: a user seen is complete. */
	return smp_load_acquire(&f->user);
}

static int td_submit_one(struct td_user *u, struct tdispatch_utask *ut)
{
	struct td_payload *p;
	int ret;

	if (!ut->payload_len || ut->payload_len > TDISPATCH_PAYLOAD_MAX) {
		atomic_long_inc(&u->rejected);
		return -EINVAL;
	}
	if (atomic_long_add_return(ut->payload_len, &u->bytes) > TD_USER_MAX_BYTES) {
		ret = -ENOSPC;
		goto unaccount;
	}
	p = kmalloc(struct_size(p, data, ut->payload_len), GFP_KERNEL_ACCOUNT);
	if (!p) {
		ret = -ENOMEM;
		goto unaccount;
	}
	p->len = ut->payload_len;
	if (copy_from_user(p->data, u64_to_user_ptr(ut->payload), p->len)) {
		ret = -EFAULT;
		goto free;
	}
	/* The engine counts its own refusals. */
	ret = tdispatch_submit(u->d, ut->id, p, ut->deadline_ns, GFP_KERNEL_ACCOUNT);
	if (!ret)
		return 0;
	kfree(p);
	atomic_long_sub(ut->payload_len, &u->bytes);
	return ret;
free:
	kfree(p);
unaccount:
	atomic_long_sub(ut->payload_len, &u->bytes);
	atomic_long_inc(&u->rejected);
	return ret;
}

static int td_ioctl_submit(struct td_user *u, void __user *uarg)
{
	struct tdispatch_utask __user *utasks;
	struct tdispatch_submit s;
	u32 i;
	int ret;

	ret = td_copy_in(&s, sizeof(s), uarg, TDISPATCH_SUBMIT_SIZE_VER0);
	if (ret)
		return ret;
	if (s.flags || !s.count || s.count > TDISPATCH_SUBMIT_MAX)
		return -EINVAL;
	utasks = u64_to_user_ptr(s.tasks);
	s.accepted = 0;
	for (i = 0; i < s.count; i++) {
		struct tdispatch_utask ut;

		/* Tasks before a bad element stay accepted: see their status. */
		if (copy_from_user(&ut, &utasks[i], sizeof(ut)))
			return -EFAULT;
		ut.status = td_submit_one(u, &ut);
		if (put_user(ut.status, &utasks[i].status))
			return -EFAULT;
		s.accepted += !ut.status;
	}
	return td_copy_out(uarg, &s, sizeof(s));
}

/* Copy a taken batch out; returns the number of payload bytes used. */
static int td_take_copy(struct tdispatch_take *tk, struct tdispatch_batch *b)
{
	struct tdispatch_ltask __user *out = u64_to_user_ptr(tk->tasks);
	u8 __user *buf = u64_to_user_ptr(tk->buf);
	u64 off = 0;
	u32 i;

	if (b->nr > tk->max_tasks)
		return -ENOSPC;
	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *t = tdispatch_batch_task(b, i);
		struct td_payload *p = tdispatch_task_payload(t);
		struct tdispatch_ltask lt = {
			.id = t->id,
			.attempts = t->attempts,
			.payload_len = p->len,
			.payload_off = off,
			.submitted_ns = ktime_to_ns(t->submitted),
		};

		if (off + p->len > tk->buf_len)
			return -ENOSPC;
		if (copy_to_user(&out[i], &lt, sizeof(lt)) ||
		    copy_to_user(buf + off, p->data, p->len))
			return -EFAULT;
		off += p->len;
	}
	return 0;
}

static bool td_user_ready(struct td_user *u)
{
	return !list_empty_careful(&u->ready) || READ_ONCE(u->closing);
}

static int td_ioctl_take(struct td_user *u, struct file *file, void __user *uarg)
{
	struct tdispatch_take tk;
	struct td_lease *l;
	long left;
	int ret;

	ret = td_copy_in(&tk, sizeof(tk), uarg, TDISPATCH_TAKE_SIZE_VER0);
	if (ret)
		return ret;
	if ((tk.flags & ~TDISPATCH_TAKE_NONBLOCK) || tk.pad || !tk.max_tasks)
		return -EINVAL;
	left = tk.timeout_ns ? nsecs_to_jiffies(tk.timeout_ns) + 1 : MAX_SCHEDULE_TIMEOUT;

	for (;;) {
		mutex_lock(&u->lock);
		l = list_first_entry_or_null(&u->ready, struct td_lease, node);
		if (l)
			break;
		mutex_unlock(&u->lock);
		if ((tk.flags & TDISPATCH_TAKE_NONBLOCK) || (file->f_flags & O_NONBLOCK))
			return -EAGAIN;
		left = wait_event_interruptible_timeout(*u->wait, td_user_ready(u), left);
		if (left < 0)
			return left;
		if (!left)
			return -ETIMEDOUT;
	}
	/*
	 * Still ours under the lock: its kworker waits for the state to move.
	 * Everything is copied out before the lease is taken, so a caller that
	 * cannot be told its lease id leaves the batch ready for others.
	 */
	tk.batch = u->next_lease + 1;
	tk.nr = l->batch->nr;
	ret = td_take_copy(&tk, l->batch);
	if (!ret)
		ret = td_copy_out(uarg, &tk, sizeof(tk));
	if (ret) {
		mutex_unlock(&u->lock);
		return ret;
	}
	u->next_lease = tk.batch;
	l->id = tk.batch;
	l->owner = current->files;
	list_move_tail(&l->node, &u->taken);
	WRITE_ONCE(l->state, TD_LEASE_TAKEN);
	mutex_unlock(&u->lock);
	wake_up_all(&u->lease_wait);
	return 0;
}

static int td_ioctl_complete(struct td_user *u, void __user *uarg)
{
	struct tdispatch_complete c;
	struct td_lease *l;
	int ret;

	ret = td_copy_in(&c, sizeof(c), uarg, TDISPATCH_COMPLETE_SIZE_VER0);
	if (ret)
		return ret;
	if (c.flags || c.pad || c.result >= TDISPATCH_NR_RESULTS)
		return -EINVAL;
	mutex_lock(&u->lock);
	list_for_each_entry(l, &u->taken, node) {
		if (l->id == c.batch) {
			list_del(&l->node);
			l->result = c.result;
			WRITE_ONCE(l->state, TD_LEASE_DONE);
			mutex_unlock(&u->lock);
			wake_up_all(&u->lease_wait);
			return 0;
		}
	}
	mutex_unlock(&u->lock);
	/* Never leased, completed already, or redelivered after its lease. */
	return -ENOENT;
}

static int td_ioctl_cancel(struct td_user *u, void __user *uarg)
{
	struct tdispatch_id a;
	int ret;

	ret = td_copy_in(&a, sizeof(a), uarg, TDISPATCH_ID_SIZE_VER0);
	if (ret)
		return ret;
	if (a.flags)
		return -EINVAL;
	return tdispatch_cancel(u->d, a.id);
}

static int td_ioctl_query(struct td_user *u, void __user *uarg)
{
	struct tdispatch_query q;
	int ret;

	ret = td_copy_in(&q, sizeof(q), uarg, TDISPATCH_QUERY_SIZE_VER0);
	if (ret)
		return ret;
	if (q.flags || q.pad)
		return -EINVAL;
	td_query(u->d, q.id, &q.state, &q.attempts, &q.waiting);
	return td_copy_out(uarg, &q, sizeof(q));
}

static int td_ioctl_stats(struct td_file *f, struct td_user *u, void __user *uarg)
{
	struct tdispatch_stats_user s;
	struct tdispatch_stats st;
	int ret;

	ret = td_copy_in(&s, sizeof(s), uarg, TDISPATCH_STATS_SIZE_VER0);
	if (ret)
		return ret;
	if (s.flags)
		return -EINVAL;
	tdispatch_get_stats(u->d, &st);
	mutex_lock(&u->lock);
	s = (struct tdispatch_stats_user) {
		.size = sizeof(s),
		.accepted = st.accepted,
		.rejected = st.rejected + atomic_long_read(&u->rejected),
		.queued = st.queued,
		.pending = st.pending,
		.in_flight = st.in_flight,
		.done = st.done,
		.failed = st.failed,
		.overridden = st.overridden,
		.expired = st.expired,
		.dropped = st.dropped,
		.cancelled = st.cancelled,
		.batches = st.batches,
		.retries = st.retries,
		.holdoffs = st.holdoffs,
		.redelivered = st.redelivered,
		.rejected_calls = atomic_long_read(&f->rejected_calls),
		.events_lost = u->ev_lost_total,
	};
	mutex_unlock(&u->lock);
	return td_copy_out(uarg, &s, sizeof(s));
}

/* Every failed call on a file is counted, whatever it was. */
void td_file_rejected(struct file *file)
{
	struct td_file *f = file->private_data;

	atomic_long_inc(&f->rejected_calls);
}

long td_user_ioctl(struct file *file, unsigned int cmd, void __user *uarg)
{
	struct td_file *f = file->private_data;
	struct td_user *u = td_file_user(f);
	long ret;

	switch (cmd) {
	case TDISPATCH_IOC_CREATE:
	case TDISPATCH_IOC_SUBMIT:
	case TDISPATCH_IOC_TAKE:
	case TDISPATCH_IOC_COMPLETE:
	case TDISPATCH_IOC_CANCEL:
	case TDISPATCH_IOC_QUERY:
	case TDISPATCH_IOC_STATS:
		break;
	default:
		return -ENOTTY;	/* whether or not there is a dispatcher */
	}
	if (cmd == TDISPATCH_IOC_CREATE) {
		ret = td_ioctl_create(f, uarg);
	} else if (!u) {
		ret = -ENXIO;
	} else {
		switch (cmd) {
		case TDISPATCH_IOC_SUBMIT:
			ret = td_ioctl_submit(u, uarg);
			break;
		case TDISPATCH_IOC_TAKE:
			ret = td_ioctl_take(u, file, uarg);
			break;
		case TDISPATCH_IOC_COMPLETE:
			ret = td_ioctl_complete(u, uarg);
			break;
		case TDISPATCH_IOC_CANCEL:
			ret = td_ioctl_cancel(u, uarg);
			break;
		case TDISPATCH_IOC_QUERY:
			ret = td_ioctl_query(u, uarg);
			break;
		default:	/* TDISPATCH_IOC_STATS */
			ret = td_ioctl_stats(f, u, uarg);
			break;
		}
	}
	return ret;
}

/* Events: whole records only; a LOST record first if any were dropped. */
ssize_t td_user_read(struct file *file, char __user *buf, size_t len, loff_t *pos)
{
	struct td_file *f = file->private_data;
	struct td_user *u = td_file_user(f);
	struct tdispatch_event ev;
	size_t done = 0;
	int ret;

	if (!u || !u->events)
		return -ENXIO;
	if (len < sizeof(ev))
		return -EINVAL;
	for (;;) {
		mutex_lock(&u->lock);
		if (u->ev_count || u->ev_lost)
			break;
		mutex_unlock(&u->lock);
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(*u->wait, READ_ONCE(u->ev_count) ||
					       READ_ONCE(u->ev_lost));
		if (ret)
			return ret;
	}
	while (len - done >= sizeof(ev)) {
		/* The ring is drained but losses are pending: report them now. */
		if (!u->ev_count && u->ev_lost)
			td_user_push_lost(u);
		if (!u->ev_count)
			break;
		ev = u->events[u->ev_head];
		if (copy_to_user(buf + done, &ev, sizeof(ev))) {
			mutex_unlock(&u->lock);
			return done ? done : -EFAULT;
		}
		done += sizeof(ev);
		u->ev_head = (u->ev_head + 1) % u->ev_cap;
		u->ev_count--;
	}
	mutex_unlock(&u->lock);
	return done;
}

__poll_t td_user_poll(struct file *file, poll_table *pt)
{
	struct td_file *f = file->private_data;
	struct td_user *u = td_file_user(f);
	__poll_t mask = 0;

	poll_wait(file, &f->wait, pt);
	if (!u)
		return 0;
	if (!list_empty_careful(&u->ready))
		mask |= EPOLLRDBAND;
	if (u->events && (READ_ONCE(u->ev_count) || READ_ONCE(u->ev_lost)))
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
	mutex_unlock(&u->lock);
	wake_up_all(&u->lease_wait);
	wake_up_all(u->wait);
}

/* Each close() of a descriptor: the closer's leases are redelivered. */
int td_user_flush(struct file *file, fl_owner_t id)
{
	struct td_file *f = file->private_data;
	struct td_user *u = td_file_user(f);

	if (u)
		td_user_abandon(u, id, false);
	return 0;
}

int td_user_open(struct inode *inode, struct file *file)
{
	struct td_file *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	init_waitqueue_head(&f->wait);
	file->private_data = f;
	return 0;
}

/* The last reference is gone: cancel what is left and free it all. */
int td_user_release(struct inode *inode, struct file *file)
{
	struct td_file *f = file->private_data;
	struct td_user *u = f->user;

	if (u) {
		td_user_abandon(u, NULL, true);
		tdispatch_destroy(u->d, TDISPATCH_DISCARD, 0);
		td_user_free(u);
	}
	kfree(f);
	return 0;
}
