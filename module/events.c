// SPDX-License-Identifier: GPL-2.0
/*
 * Outcome events for userspace readers: a bounded ring per reader, filled
 * by the engine as tasks end (td_reap()) and drained by read().
 *
 * A full ring loses events; the next event that finds room is preceded by
 * a LOST record saying how many, so that the reader sees the gap where it
 * happened.  Readers are serialized by a mutex so that a record is only
 * consumed once it reached userspace; the engine only ever appends, under
 * a spinlock, and never waits for a reader.
 */
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/linux/tdispatch.h>

#include "events.h"
#include "file.h"
#include "internal.h"
#include "limits.h"

int td_events_init(struct td_events *ev, u32 cap, wait_queue_head_t *wait)
{
	*ev = (struct td_events) { .cap = cap, .wait = wait };
	spin_lock_init(&ev->lock);
	mutex_init(&ev->read_lock);
	INIT_LIST_HEAD(&ev->node);
	ev->ring = kvcalloc(cap, sizeof(*ev->ring), TD_GFP_USER);
	return ev->ring ? 0 : -ENOMEM;
}

void td_events_free(struct td_events *ev)
{
	kvfree(ev->ring);
	ev->ring = NULL;
}

/* Readers of @d that @who holds; they are few, see td_events_attach(). */
static unsigned int td_events_held(struct tdispatch *d, const struct td_who *who)
{
	struct td_events *ev;
	unsigned int n = 0;

	list_for_each_entry(ev, &d->observers, node)
		n += ev->who.ns == who->ns && uid_eq(ev->who.uid, who->uid);
	return n;
}

/*
 * The engine reports every outcome to the readers on its observer list,
 * each costing the acceptor or a worker a ring push: -EBUSY beyond
 * max_observers of them, or beyond a quarter of that for one user (unless
 * CAP_SYS_RESOURCE), so that one user cannot take every place.
 */
int td_events_attach(struct tdispatch *d, struct td_events *ev)
{
	unsigned int cap = td_limit_observers();
	int ret = 0;

	spin_lock(&d->observers_lock);
	if (d->nr_observers >= cap ||
	    (!ev->exempt && td_events_held(d, &ev->who) >= max(cap / 4, 1U))) {
		ret = -EBUSY;
	} else {
		list_add_tail(&ev->node, &d->observers);
		d->nr_observers++;
	}
	spin_unlock(&d->observers_lock);
	if (ret)
		td_limit_refused_observer();
	return ret;
}

/* No more events will come: a blocked reader gets what is left, then ENODEV. */
void td_events_detach(struct tdispatch *d, struct td_events *ev)
{
	spin_lock(&d->observers_lock);
	list_del_init(&ev->node);
	d->nr_observers--;
	spin_unlock(&d->observers_lock);
	WRITE_ONCE(ev->gone, true);
	wake_up_interruptible_poll(ev->wait, EPOLLIN | EPOLLHUP);
}

/* The LOST record carries the sequence number of the last event lost. */
static void td_events_push_lost(struct td_events *ev)
{
	ev->ring[(ev->head + ev->count++) % ev->cap] = (struct tdispatch_event) {
		.seq = ev->seq,
		.type = TDISPATCH_EVENT_LOST,
		.lost = ev->lost,
	};
	ev->lost = 0;
}

static void td_events_push(struct td_events *ev, const struct tdispatch_event *e)
{
	spin_lock(&ev->lock);
	if (ev->lost && ev->count < ev->cap)
		td_events_push_lost(ev);
	ev->seq++;
	if (ev->count < ev->cap) {
		struct tdispatch_event *rec = &ev->ring[(ev->head + ev->count++) % ev->cap];

		*rec = *e;
		rec->seq = ev->seq;
	} else {
		ev->lost++;
		ev->lost_total++;
	}
	spin_unlock(&ev->lock);
	wake_up_interruptible_poll(ev->wait, EPOLLIN | EPOLLRDNORM);
}

/*
 * Called by td_reap() for every task that ended, outside the engine lock,
 * with the event it made before ->release().
 */
void td_events_observe(struct tdispatch *d, const struct tdispatch_event *e)
{
	struct td_events *ev;

	spin_lock(&d->observers_lock);
	list_for_each_entry(ev, &d->observers, node)
		td_events_push(ev, e);
	spin_unlock(&d->observers_lock);
}

static bool td_events_pending(struct td_events *ev)
{
	return READ_ONCE(ev->count) || READ_ONCE(ev->lost);
}

/* Something for read(): an event, or the news that none will come. */
bool td_events_ready(struct td_events *ev)
{
	return td_events_pending(ev) || READ_ONCE(ev->gone);
}

u64 td_events_lost(struct td_events *ev)
{
	u64 lost;

	spin_lock(&ev->lock);
	lost = ev->lost_total;
	spin_unlock(&ev->lock);
	return lost;
}

/*
 * Take the next record, a pending LOST record first once the ring is
 * drained, without consuming it: false if there is none.
 */
static bool td_events_peek(struct td_events *ev, struct tdispatch_event *e)
{
	bool found;

	spin_lock(&ev->lock);
	if (!ev->count && ev->lost)
		td_events_push_lost(ev);
	found = ev->count;
	if (found)
		*e = ev->ring[ev->head];
	spin_unlock(&ev->lock);
	return found;
}

static void td_events_consume(struct td_events *ev)
{
	spin_lock(&ev->lock);
	ev->head = (ev->head + 1) % ev->cap;
	ev->count--;
	spin_unlock(&ev->lock);
}

/* Whole records only; blocks for the first unless the file is O_NONBLOCK. */
ssize_t td_events_read(struct td_events *ev, struct file *file,
		       char __user *buf, size_t len)
{
	struct tdispatch_event e;
	size_t done = 0;
	int ret;

	if (len < sizeof(e))
		return -EINVAL;
	for (;;) {
		if (mutex_lock_interruptible(&ev->read_lock))
			return -ERESTARTSYS;
		if (td_events_pending(ev))
			break;
		mutex_unlock(&ev->read_lock);
		if (READ_ONCE(ev->gone))
			return -ENODEV;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(*ev->wait, td_events_ready(ev));
		if (ret)
			return ret;
	}
	/* Only we consume, so the record peeked is still the head after. */
	while (len - done >= sizeof(e) && td_events_peek(ev, &e)) {
		if (copy_to_user(buf + done, &e, sizeof(e))) {
			mutex_unlock(&ev->read_lock);
			return done ? done : -EFAULT;
		}
		td_events_consume(ev);
		done += sizeof(e);
	}
	mutex_unlock(&ev->read_lock);
	return done;
}
