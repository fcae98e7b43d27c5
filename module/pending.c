// SPDX-License-Identifier: GPL-2.0
/*
 * The pending set: coalescing by id, the bound, the order of the line,
 * batch cutting and per-id exclusion.
 *
 * Nothing here locks, allocates, sleeps or reads a clock; the caller holds
 * the dispatcher's lock and passes the time.  A task that ends is moved to
 * the caller's reap list with its outcome in ->state, so that payloads are
 * released after the lock is dropped.
 */
#include <linux/rbtree.h>

#include "internal.h"

void td_pending_init(struct td_pending *p, unsigned int max_buffer,
		     unsigned int max_batch, u64 max_delay_ns)
{
	*p = (struct td_pending) {
		.tree = RB_ROOT,
		.max_buffer = max_buffer,
		.max_batch = max_batch,
		.max_delay_ns = max_delay_ns,
	};
	INIT_LIST_HEAD(&p->order);
}

static void td_task_end(struct td_pending *p, struct tdispatch_task *t,
			enum tdispatch_outcome outcome, struct list_head *reap)
{
	t->state = outcome;
	p->outcomes[outcome]++;
	list_add_tail(&t->order, reap);
}

static bool td_task_expired(const struct tdispatch_task *t, ktime_t now)
{
	return t->deadline && ktime_after(now, t->deadline);
}

struct tdispatch_task *td_pending_lookup(struct td_pending *p, u64 id)
{
	struct rb_node *n = p->tree.rb_node;

	while (n) {
		struct tdispatch_task *t = rb_entry(n, struct tdispatch_task, node);

		if (id < t->id)
			n = n->rb_left;
		else if (id > t->id)
			n = n->rb_right;
		else
			return t;
	}
	return NULL;
}

static void td_pending_link(struct td_pending *p, struct tdispatch_task *t)
{
	struct rb_node **link = &p->tree.rb_node, *parent = NULL;

	while (*link) {
		struct tdispatch_task *cur = rb_entry(*link, struct tdispatch_task, node);

		parent = *link;
		link = t->id < cur->id ? &parent->rb_left : &parent->rb_right;
	}
	rb_link_node(&t->node, parent, link);
	rb_insert_color(&t->node, &p->tree);
}

/* Take a pending (or waiting) task out of the set, without ending it. */
static void td_pending_unlink(struct td_pending *p, struct tdispatch_task *t)
{
	list_del(&t->order);
	p->nr_pending--;
	if (t->state == TD_TASK_WAITING) {
		td_pending_lookup(p, t->id)->waiting = NULL;
		p->nr_waiting--;
	} else {
		rb_erase(&t->node, &p->tree);
	}
}

/* The in-flight @t is finished with: its waiting successor takes its place. */
static void td_pending_release_id(struct td_pending *p, struct tdispatch_task *t)
{
	struct tdispatch_task *w = t->waiting;

	p->nr_inflight--;
	if (w) {
		rb_replace_node(&t->node, &w->node, &p->tree);
		w->state = TD_TASK_PENDING;
		p->nr_waiting--;
		t->waiting = NULL;
	} else {
		rb_erase(&t->node, &p->tree);
	}
}

/* Make room for one more: the oldest place in line, retries first, goes. */
static void td_pending_make_room(struct td_pending *p, struct list_head *reap)
{
	while (p->nr_pending >= p->max_buffer) {
		struct tdispatch_task *old = list_first_entry(&p->order,
						struct tdispatch_task, order);

		td_pending_unlink(p, old);
		td_task_end(p, old, TDISPATCH_DROPPED, reap);
	}
}

/* @t takes @old's place in line; @old is overridden. */
static void td_pending_override(struct td_pending *p, struct tdispatch_task *old,
				struct tdispatch_task *t, struct list_head *reap)
{
	t->queued = old->queued;
	list_replace(&old->order, &t->order);
	td_task_end(p, old, TDISPATCH_OVERRIDDEN, reap);
}

/**
 * td_pending_add() - take a newly drained task into the pending set
 * @p: the pending set
 * @t: the task, off its input list
 * @now: the current time
 * @reap: where tasks that end are put
 *
 * A task with an id already pending replaces that task in its place in
 * line.  A task whose id is in flight waits behind it, replacing an
 * earlier waiter.  A task that needs a new place makes room by dropping
 * the oldest when the set is full.
 */
void td_pending_add(struct td_pending *p, struct tdispatch_task *t, ktime_t now,
		    struct list_head *reap)
{
	struct tdispatch_task *cur;

	p->drained++;
	t->waiting = NULL;
	if (td_task_expired(t, now)) {
		td_task_end(p, t, TDISPATCH_EXPIRED, reap);
		return;
	}

	cur = td_pending_lookup(p, t->id);
	if (!cur) {
		td_pending_make_room(p, reap);
		t->state = TD_TASK_PENDING;
		t->queued = now;
		td_pending_link(p, t);
		list_add_tail(&t->order, &p->order);
		p->nr_pending++;
	} else if (cur->state == TD_TASK_PENDING) {
		t->state = TD_TASK_PENDING;
		rb_replace_node(&cur->node, &t->node, &p->tree);
		td_pending_override(p, cur, t, reap);
	} else if (cur->waiting) {
		struct tdispatch_task *old = cur->waiting;

		t->state = TD_TASK_WAITING;
		cur->waiting = t;
		td_pending_override(p, old, t, reap);
	} else {
		td_pending_make_room(p, reap);
		t->state = TD_TASK_WAITING;
		t->queued = now;
		cur->waiting = t;
		list_add_tail(&t->order, &p->order);
		p->nr_pending++;
		p->nr_waiting++;
	}
}

/**
 * td_pending_due() - whether a batch should be cut now
 * @p: the pending set
 * @now: the current time
 * @when: if not due, set to when it will be by age alone (KTIME_MAX: never)
 *
 * Due when max_batch tasks are free to go, when the set is full, when
 * the oldest free task has waited max_delay, or at once while flushing.
 *
 * Return: true if a batch should be cut now.
 */
bool td_pending_due(struct td_pending *p, ktime_t now, ktime_t *when)
{
	unsigned int ready = p->nr_pending - p->nr_waiting;
	struct tdispatch_task *t;

	*when = KTIME_MAX;
	if (!ready)
		return false;
	if (ready >= p->max_batch || p->nr_pending >= p->max_buffer || p->flush)
		return true;
	/* Waiting tasks are skipped; there are at most nr_inflight of them. */
	list_for_each_entry(t, &p->order, order) {
		if (t->state == TD_TASK_WAITING)
			continue;
		*when = ktime_add_ns(t->queued, p->max_delay_ns);
		return !ktime_before(now, *when);
	}
	return false;
}

/**
 * td_pending_cut() - take the next batch from the head of the line
 * @p: the pending set
 * @now: the current time
 * @batch: array of at least max_batch entries to fill
 * @reap: where expired tasks met on the way are put
 *
 * Tasks waiting behind an in-flight task of their id are passed over and
 * keep their place; expired tasks are dropped.
 *
 * Return: the number of tasks put in @batch, now in flight.
 */
unsigned int td_pending_cut(struct td_pending *p, ktime_t now,
			    struct tdispatch_task **batch, struct list_head *reap)
{
	struct tdispatch_task *t, *tmp;
	unsigned int n = 0;

	list_for_each_entry_safe(t, tmp, &p->order, order) {
		if (n == p->max_batch)
			break;
		if (td_task_expired(t, now)) {
			td_pending_unlink(p, t);
			td_task_end(p, t, TDISPATCH_EXPIRED, reap);
			continue;
		}
		if (t->state == TD_TASK_WAITING)
			continue;
		list_del(&t->order);
		p->nr_pending--;
		p->nr_inflight++;
		t->state = TD_TASK_INFLIGHT;
		batch[n++] = t;
	}
	return n;
}

/**
 * td_pending_requeue() - put a retried batch back at the head of the line
 * @p: the pending set
 * @batch: the batch's tasks, in flight
 * @nr: number of tasks
 * @reap: where tasks that end are put
 *
 * The batch keeps its order, ahead of everything else.  A task whose id
 * has a newer task waiting loses to it (overridden); when the set is full
 * the retries are dropped rather than newer work.
 */
void td_pending_requeue(struct td_pending *p, struct tdispatch_task **batch,
			unsigned int nr, struct list_head *reap)
{
	while (nr--) {
		struct tdispatch_task *t = batch[nr];

		t->attempts++;
		if (t->waiting) {
			td_pending_release_id(p, t);
			td_task_end(p, t, TDISPATCH_OVERRIDDEN, reap);
		} else if (p->nr_pending >= p->max_buffer) {
			td_pending_release_id(p, t);
			td_task_end(p, t, TDISPATCH_DROPPED, reap);
		} else {
			p->nr_inflight--;
			t->state = TD_TASK_PENDING;
			list_add(&t->order, &p->order);
			p->nr_pending++;
			p->retries++;
		}
	}
}

/**
 * td_pending_complete() - end every task of a finished batch
 * @p: the pending set
 * @batch: the batch's tasks, in flight
 * @nr: number of tasks
 * @outcome: how they ended
 * @reap: where they are put
 *
 * A task waiting behind one of them becomes free to be batched, in the
 * place in line it already has.
 */
void td_pending_complete(struct td_pending *p, struct tdispatch_task **batch,
			 unsigned int nr, enum tdispatch_outcome outcome,
			 struct list_head *reap)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		td_pending_release_id(p, batch[i]);
		td_task_end(p, batch[i], outcome, reap);
	}
}

/**
 * td_pending_cancel() - cancel the pending task of an id
 * @p: the pending set
 * @id: the id
 * @reap: where the cancelled task is put
 *
 * Return: 0 if a pending task was cancelled, -EBUSY if the id is only in
 * flight (a running batch cannot be recalled), -ENOENT if it is unknown.
 */
int td_pending_cancel(struct td_pending *p, u64 id, struct list_head *reap)
{
	struct tdispatch_task *t = td_pending_lookup(p, id);

	if (!t)
		return -ENOENT;
	if (t->state == TD_TASK_INFLIGHT) {
		t = t->waiting;
		if (!t)
			return -EBUSY;
	}
	td_pending_unlink(p, t);
	td_task_end(p, t, TDISPATCH_CANCELLED, reap);
	return 0;
}

/**
 * td_pending_cancel_all() - cancel every pending task
 * @p: the pending set
 * @reap: where they are put
 */
void td_pending_cancel_all(struct td_pending *p, struct list_head *reap)
{
	while (!list_empty(&p->order)) {
		struct tdispatch_task *t = list_first_entry(&p->order,
						struct tdispatch_task, order);

		td_pending_unlink(p, t);
		td_task_end(p, t, TDISPATCH_CANCELLED, reap);
	}
}
