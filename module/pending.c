// SPDX-License-Identifier: GPL-2.0
/*
 * The pending set: coalescing by id, the bound, the order of the line,
 * batch cutting, per-id exclusion and tasks delayed until a set time.
 *
 * Nothing here locks, allocates or reads a clock; the caller holds the
 * dispatcher's lock and passes the time.  It frees watch keys.  A task
 * that ends is moved to the caller's reap list with its outcome in
 * ->state, so that payloads are released after the lock is dropped.
 */
#include <kunit/visibility.h>
#include <linux/err.h>
#include <linux/mm.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "ids.h"
#include "pending.h"
#include "watch.h"
#include "wheel.h"

void td_pending_init(struct td_pending *p, unsigned int max_buffer,
		     unsigned int max_batch, u64 max_delay_ns)
{
	/* Field by field: the wheel makes the struct too big for the stack. */
	memset(p, 0, sizeof(*p));
	td_ids_init(&p->ids);
	p->watchers = RB_ROOT;
	p->max_buffer = max_buffer;
	p->max_batch = max_batch;
	p->max_delay_ns = max_delay_ns;
	INIT_LIST_HEAD(&p->order);
	td_wheel_init(&p->delayed);
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_init);

/* Free the id hash's buckets if they were allocated; the set holds no task. */
void td_pending_free(struct td_pending *p)
{
	td_ids_free(&p->ids);
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_free);

static void td_task_end(struct td_pending *p, struct tdispatch_task *t,
			enum tdispatch_outcome outcome, struct list_head *reap)
{
	/* Read without the lock by a task's owner: see td_merge_into(). */
	WRITE_ONCE(t->state, outcome);
	p->outcomes[outcome]++;
	list_add_tail(&t->order, reap);
}

/**
 * td_pending_lookup() - the pending or in-flight task of an id
 * @p: the pending set
 * @id: the id
 *
 * Return: the task, or NULL; not one that waits behind an in-flight task.
 */
struct tdispatch_task *td_pending_lookup(struct td_pending *p, u64 id)
{
	return td_pending_find(p, id, TD_IN(TD_TASK_PENDING) | TD_IN(TD_TASK_INFLIGHT));
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_lookup);

/**
 * td_pending_waiter() - the task of an id that waits behind an in-flight one
 * @p: the pending set
 * @id: the id
 *
 * Return: the task, or NULL.
 */
struct tdispatch_task *td_pending_waiter(struct td_pending *p, u64 id)
{
	/* Most ids have none: no walk of the chain to find out. */
	if (!p->nr_waiting)
		return NULL;
	return td_pending_find(p, id, TD_IN(TD_TASK_WAITING));
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_waiter);

/**
 * td_pending_lookup_delayed() - the task of an id waiting for its time
 * @p: the pending set
 * @id: the id
 *
 * Return: the delayed task of @id, or NULL if none waits.
 */
struct tdispatch_task *td_pending_lookup_delayed(struct td_pending *p, u64 id)
{
	return td_pending_find(p, id, TD_IN(TD_TASK_DELAYED));
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_lookup_delayed);

/* @t, now delayed, watches its key. */
static void td_watch_link(struct td_pending *p, struct tdispatch_task *t)
{
	if (t->flags & TD_TASK_WATCHED) {
		td_ext(t)->watcher->t = t;
		td_watch_add(&p->watchers, td_ext(t)->watcher);
	}
}

/* @t watches no more: out of the key tree if @linked, and freed. */
static void td_watch_drop(struct td_pending *p, struct tdispatch_task *t, bool linked)
{
	if (!(t->flags & TD_TASK_WATCHED))
		return;
	if (linked)
		td_watch_del(&p->watchers, td_ext(t)->watcher);
	kfree(td_ext(t)->watcher);
	td_ext(t)->watcher = NULL;
	t->flags &= ~TD_TASK_WATCHED;
}

/* Take a delayed task out of the wheel and the id hash, without ending it. */
static void td_delayed_unlink(struct td_pending *p, struct tdispatch_task *t)
{
	td_wheel_del(&p->delayed, &td_ext(t)->delay);
	td_ids_unlink(&p->ids, t);
	td_watch_drop(p, t, true);
	p->nr_delayed--;
}

/*
 * Whether @t is in the id hash.  An item is not: it is its own coalescing
 * point (its ->item_state merges submissions and holds back one made
 * while it is processed), so it is keyed by its address, never found by
 * its id, and neither merges with nor waits for a task of the same id.
 */
static bool td_keyed(const struct tdispatch_task *t)
{
	return !(t->flags & TD_TASK_ITEM);
}

/* Take a pending (or waiting) task out of the set, without ending it. */
static void td_pending_unlink(struct td_pending *p, struct tdispatch_task *t)
{
	list_del(&t->order);
	p->nr_pending--;
	p->nr_waiting -= t->state == TD_TASK_WAITING;
	if (td_keyed(t))
		td_ids_unlink(&p->ids, t);
}

/* The in-flight @t is finished with: its waiting successor takes its place. */
static void td_pending_id_done(struct td_pending *p, struct tdispatch_task *t)
{
	struct tdispatch_task *w;

	p->nr_inflight--;
	if (!td_keyed(t))
		return;
	w = td_pending_waiter(p, t->id);
	td_ids_unlink(&p->ids, t);
	if (w) {
		w->state = TD_TASK_PENDING;
		p->nr_waiting--;
	}
}

/* Make room for one more: the oldest place in line, retries first, goes. */
static void td_pending_make_room(struct td_pending *p, struct list_head *reap)
{
	while (p->nr_pending >= p->max_buffer) {
		struct tdispatch_task *old = list_first_entry(&p->order,
						struct tdispatch_task, order);

		td_pending_unlink(p, old);
		td_task_end(p, old, TDISPATCH_OUTCOME_DROPPED, reap);
	}
}

/* @t takes @old's place in line; @old is overridden. */
static void td_pending_override(struct td_pending *p, struct tdispatch_task *old,
				struct tdispatch_task *t, struct list_head *reap)
{
	t->queued = old->queued;
	list_replace(&old->order, &t->order);
	td_task_end(p, old, TDISPATCH_OUTCOME_OVERRIDDEN, reap);
}

/*
 * @t, due now and not expired, joins the set: it replaces a pending task
 * of its id, waits behind an in-flight one, or takes a new place in line.
 */
static void td_pending_enter(struct td_pending *p, struct tdispatch_task *t,
			     ktime_t now, struct list_head *reap)
{
	struct tdispatch_task *old;

	t->state = TD_TASK_PENDING;
	if (td_keyed(t)) {
		old = td_pending_lookup(p, t->id);
		if (old && old->state == TD_TASK_INFLIGHT) {
			t->state = TD_TASK_WAITING;
			old = td_pending_waiter(p, t->id);
		}
		if (old) {
			td_ids_replace(&p->ids, old, t);
			td_pending_override(p, old, t, reap);
			return;
		}
		/* Before room is made: the oldest to go is never @t. */
		td_ids_link(&p->ids, t);
	}
	td_pending_make_room(p, reap);
	t->queued = now;
	list_add_tail(&t->order, &p->order);
	p->nr_pending++;
	p->nr_waiting += t->state == TD_TASK_WAITING;
}

/*
 * @t waits for its not_before time.  It replaces a delayed task of its id
 * in the wheel and the id hash, under its own time, but leaves a pending
 * or in-flight task of its id alone until it is promoted.
 */
static void td_pending_delay(struct td_pending *p, struct tdispatch_task *t,
			     struct list_head *reap)
{
	struct tdispatch_task *old = td_pending_lookup_delayed(p, t->id);

	t->state = TD_TASK_DELAYED;
	td_watch_link(p, t);
	if (old) {
		td_ids_replace(&p->ids, old, t);
		td_wheel_del(&p->delayed, &td_ext(old)->delay);
		td_watch_drop(p, old, true);
		td_wheel_add(&p->delayed, &td_ext(t)->delay);
		td_task_end(p, old, TDISPATCH_OUTCOME_OVERRIDDEN, reap);
	} else {
		td_ids_link(&p->ids, t);
		td_wheel_add(&p->delayed, &td_ext(t)->delay);
		p->nr_delayed++;
	}
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
 * the oldest when the set is full.  An item, keyed by itself (its
 * submitters merge into it while it waits), always takes a new place.
 *
 * A task whose not_before time is still to come is delayed instead, until
 * td_pending_promote() lets it in as above.  Either way it replaces a
 * delayed task of its id: the newest task's not_before time wins.
 */
void td_pending_add(struct td_pending *p, struct tdispatch_task *t, ktime_t now,
		    struct list_head *reap)
{
	struct tdispatch_task *old;

	p->drained++;
	/* As with pending ones, an expired newer task displaces nothing. */
	if (td_task_expired(t, now)) {
		td_watch_drop(p, t, false);
		td_task_end(p, t, TDISPATCH_OUTCOME_EXPIRED, reap);
		return;
	}
	if (ktime_after(td_task_not_before(t), now)) {
		td_pending_delay(p, t, reap);
		return;
	}
	/* Due at once: nothing to watch for. */
	td_watch_drop(p, t, false);
	/* Most sets hold no delayed task: no walk of the chain for one. */
	old = p->nr_delayed && td_keyed(t) ? td_pending_lookup_delayed(p, t->id) : NULL;
	if (old) {
		td_delayed_unlink(p, old);
		td_task_end(p, old, TDISPATCH_OUTCOME_OVERRIDDEN, reap);
	}
	td_pending_enter(p, t, now, reap);
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_add);

/**
 * td_pending_promote() - let in the delayed tasks whose time has come
 * @p: the pending set
 * @now: the current time
 * @reap: where tasks that end are put
 *
 * Every delayed task with a not_before time at or before @now enters the
 * set, earliest time first, as td_pending_add() would take it in at @now:
 * it may expire, replace a pending task of its id, wait behind an
 * in-flight one or make room by dropping the oldest.  A task that takes a
 * new place in line is queued at @now, for max_delay.
 *
 * Return: how many tasks left the delayed set, expired ones included.
 */
unsigned int td_pending_promote(struct td_pending *p, ktime_t now,
				struct list_head *reap)
{
	struct td_wheel_node *e;
	unsigned int n = 0;

	td_wheel_advance(&p->delayed, now);
	while ((e = td_wheel_first(&p->delayed)) && e->due <= (u64)now) {
		struct tdispatch_task *t = &container_of(e, struct td_task_ext, delay)->task;

		td_delayed_unlink(p, t);
		n++;
		if (td_task_expired(t, now))
			td_task_end(p, t, TDISPATCH_OUTCOME_EXPIRED, reap);
		else
			td_pending_enter(p, t, now, reap);
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_promote);

/**
 * td_pending_next_delayed() - when td_pending_promote() next has work
 * @p: the pending set
 *
 * Return: a time no later than the earliest not_before time of the
 * delayed tasks (earlier when the wheel must move tasks closer to their
 * time first), KTIME_MAX if there are none.
 */
ktime_t td_pending_next_delayed(struct td_pending *p)
{
	u64 next = td_wheel_next(&p->delayed);

	return next > (u64)KTIME_MAX ? KTIME_MAX : next;
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_next_delayed);

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
EXPORT_SYMBOL_IF_KUNIT(td_pending_due);

/**
 * td_pending_gather_room() - how much input may gather unseen
 * @p: the pending set
 * @max_input: the bound on a CPU's undrained tasks
 * @busy: no batch can be cut now (every worker busy, or throttled)
 *
 * While the acceptor waits for a time of its own, a producer wakes it only
 * when its CPU's undrained tasks reach this many.  Busy, a whole batch may
 * gather; otherwise only what makes the next batch due by count.  Never
 * more than @max_input, where the producer would be refused instead.
 *
 * Return: the number of undrained tasks on a CPU that wakes the acceptor.
 */
unsigned int td_pending_gather_room(struct td_pending *p, unsigned int max_input, bool busy)
{
	unsigned int ready = p->nr_pending - p->nr_waiting;
	unsigned int room = busy ? p->max_batch :
				   p->max_batch - min(ready, p->max_batch - 1);

	return min(room, max_input);
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_gather_room);

/* A pending task leaves the line for a batch: in flight. */
static void td_pending_fly(struct td_pending *p, struct tdispatch_task *t)
{
	list_del(&t->order);
	p->nr_pending--;
	p->nr_inflight++;
	t->state = TD_TASK_INFLIGHT;
}

/* The line from its head: every task, or only the urgent items. */
static unsigned int td_pending_cut_line(struct td_pending *p, ktime_t now, unsigned int max,
					struct tdispatch_task **batch, struct list_head *reap,
					bool urgent)
{
	struct tdispatch_task *t, *tmp;
	unsigned int n = 0;

	max = min(max, p->max_batch);
	list_for_each_entry_safe(t, tmp, &p->order, order) {
		if (n == max)
			break;
		if (td_task_expired(t, now)) {
			td_pending_unlink(p, t);
			td_task_end(p, t, TDISPATCH_OUTCOME_EXPIRED, reap);
			continue;
		}
		if (t->state == TD_TASK_WAITING || (urgent && !td_task_urgent(t)))
			continue;
		if (!batch)
			return 1;	/* td_pending_urgent_waits(): found one */
		td_pending_fly(p, t);
		batch[n++] = t;
	}
	return n;
}

/**
 * td_pending_cut() - take the next batch from the head of the line
 * @p: the pending set
 * @now: the current time
 * @max: most tasks to take, at most max_batch (the rate limit may allow fewer)
 * @batch: array of at least @max entries to fill
 * @reap: where expired tasks met on the way are put
 *
 * Tasks waiting behind an in-flight task of their id are passed over and
 * keep their place; expired tasks are dropped.
 *
 * Return: the number of tasks put in @batch, now in flight.
 */
unsigned int td_pending_cut(struct td_pending *p, ktime_t now, unsigned int max,
			    struct tdispatch_task **batch, struct list_head *reap)
{
	return td_pending_cut_line(p, now, max, batch, reap, false);
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_cut);

/**
 * td_pending_cut_urgent() - take the urgent items from anywhere in line
 * @p: the pending set
 * @now: the current time
 * @max: most tasks to take, at most max_batch
 * @batch: array of at least @max entries to fill
 * @reap: where expired tasks met on the way are put
 *
 * What a batch may hold while the rate limit holds the line back: only
 * items submitted with tdispatch_submit_item_urgent(), oldest place first,
 * as td_pending_cut() takes tasks.  A walk of the line, as the link watch
 * walks its list for urgent devices.
 *
 * Return: the number of tasks put in @batch, now in flight.
 */
unsigned int td_pending_cut_urgent(struct td_pending *p, ktime_t now, unsigned int max,
				   struct tdispatch_task **batch, struct list_head *reap)
{
	return td_pending_cut_line(p, now, max, batch, reap, true);
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_cut_urgent);

/**
 * td_pending_urgent_waits() - would td_pending_cut_urgent() take a task?
 * @p: the pending set
 * @now: the current time
 * @reap: where expired tasks met on the way are put
 *
 * Return: true if an urgent item waits that is not behind its id.
 */
bool td_pending_urgent_waits(struct td_pending *p, ktime_t now, struct list_head *reap)
{
	return td_pending_cut_line(p, now, 1, NULL, reap, true);
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_urgent_waits);

/**
 * td_pending_take() - take the pending task of one id, as td_pending_cut()
 * takes the head of the line
 * @p: the pending set
 * @id: the id
 * @now: the current time
 * @reap: where it goes if it has expired
 *
 * Return: the task, now in flight; NULL if @id has none pending (or it
 * had expired); ERR_PTR(-EBUSY) if @id is in flight.
 */
struct tdispatch_task *td_pending_take(struct td_pending *p, u64 id, ktime_t now,
				       struct list_head *reap)
{
	return td_pending_take_task(p, td_pending_lookup(p, id), now, reap);
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_take);

/**
 * td_pending_take_task() - take one task, as td_pending_take() takes an id's
 * @p: the pending set
 * @t: the task, pending or in flight in @p; an item submitted to the set's
 *	dispatcher may also be on an input list, or ended: it is then not
 *	taken.
 * @now: the current time
 * @reap: where it goes if it has expired
 *
 * Return: @t, now in flight; NULL if @t is not pending (or had expired);
 * ERR_PTR(-EBUSY) if @t is in flight.
 */
struct tdispatch_task *td_pending_take_task(struct td_pending *p, struct tdispatch_task *t,
					    ktime_t now, struct list_head *reap)
{
	/* An idle item's submitter may write ->state: it writes TD_TASK_INPUT. */
	u8 state = t ? READ_ONCE(t->state) : 0;

	if (state == TD_TASK_INFLIGHT)
		return ERR_PTR(-EBUSY);
	if (state != TD_TASK_PENDING)
		return NULL;
	if (td_task_expired(t, now)) {
		td_pending_unlink(p, t);
		td_task_end(p, t, TDISPATCH_OUTCOME_EXPIRED, reap);
		return NULL;
	}
	td_pending_fly(p, t);
	return t;
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_take_task);

/**
 * td_pending_requeue() - put a retried batch back at the head of the line
 * @p: the pending set
 * @batch: the batch's tasks, in flight
 * @nr: number of tasks
 * @reap: where tasks that end are put
 *
 * The batch keeps its order, ahead of everything else.  A task whose id
 * has a newer task waiting loses to it (overridden); one that has had its
 * last allowed attempt is exhausted; when the set is full the retries are
 * dropped rather than newer work.
 */
void td_pending_requeue(struct td_pending *p, struct tdispatch_task **batch,
			unsigned int nr, struct list_head *reap)
{
	while (nr--) {
		struct tdispatch_task *t = batch[nr];
		unsigned int limit = t->max_attempts ?: p->max_attempts;

		/* Saturates: TDISPATCH_MAX_ATTEMPTS is the most a limit can be. */
		if (t->attempts < TDISPATCH_MAX_ATTEMPTS)
			t->attempts++;
		if (td_keyed(t) && td_pending_waiter(p, t->id)) {
			td_pending_id_done(p, t);
			td_task_end(p, t, TDISPATCH_OUTCOME_OVERRIDDEN, reap);
		} else if (limit && t->attempts >= limit) {
			td_pending_id_done(p, t);
			td_task_end(p, t, TDISPATCH_OUTCOME_EXHAUSTED, reap);
		} else if (p->nr_pending >= p->max_buffer) {
			td_pending_id_done(p, t);
			td_task_end(p, t, TDISPATCH_OUTCOME_DROPPED, reap);
		} else {
			p->nr_inflight--;
			t->state = TD_TASK_PENDING;
			list_add(&t->order, &p->order);
			p->nr_pending++;
			p->retries++;
		}
	}
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_requeue);

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
		td_pending_id_done(p, batch[i]);
		td_task_end(p, batch[i], outcome, reap);
	}
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_complete);

/* A delayed task let in before its time: pending now, or expired. */
static void td_delayed_let_in(struct td_pending *p, struct tdispatch_task *t, ktime_t now,
			      struct list_head *reap)
{
	td_delayed_unlink(p, t);
	p->expedited++;
	if (td_task_expired(t, now))
		td_task_end(p, t, TDISPATCH_OUTCOME_EXPIRED, reap);
	else
		td_pending_enter(p, t, now, reap);
}

/**
 * td_pending_expedite() - let the delayed task of an id in now
 * @p: the pending set
 * @id: the id
 * @now: the current time
 * @reap: where tasks that end are put
 *
 * It enters the pending set as if its not-before time had come: a task of
 * the id already pending is overridden by it, and past its deadline it
 * expires instead.
 *
 * Return: 0, or -ENOENT if no task of @id is delayed.
 */
int td_pending_expedite(struct td_pending *p, u64 id, ktime_t now, struct list_head *reap)
{
	struct tdispatch_task *t = td_pending_lookup_delayed(p, id);

	if (!t)
		return -ENOENT;
	td_delayed_let_in(p, t, now, reap);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_expedite);

/**
 * td_pending_expedite_key() - let in delayed tasks that watch a key
 * @p: the pending set
 * @key: the key
 * @max: most tasks to let in
 * @now: the current time
 * @reap: where tasks that end are put
 *
 * Each enters as td_pending_expedite() lets one in, in the order they were
 * delayed.  At most @max, so that the caller can drop the lock between
 * chunks of a key that many tasks watch.
 *
 * Return: how many were let in, or -ENOENT if no delayed task watches @key.
 */
int td_pending_expedite_key(struct td_pending *p, u64 key, unsigned int max, ktime_t now,
			    struct list_head *reap)
{
	struct td_watcher *w = td_watch_first(&p->watchers, key), *next;
	int nr = 0;

	for (; w && nr < max; nr++, w = next) {
		/* Read before the watcher goes with its task. */
		next = td_watch_next(w);
		td_delayed_let_in(p, w->t, now, reap);
	}
	return nr ?: -ENOENT;
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_expedite_key);

/**
 * td_pending_cancel() - cancel the pending and the delayed task of an id
 * @p: the pending set
 * @id: the id
 * @reap: where the cancelled tasks are put
 *
 * Return: 0 if a pending or delayed task (or both) was cancelled, -EBUSY
 * if the id is only in flight (a running batch cannot be recalled),
 * -ENOENT if it is unknown.
 */
int td_pending_cancel(struct td_pending *p, u64 id, struct list_head *reap)
{
	struct tdispatch_task *t = td_pending_lookup(p, id);
	bool busy = t && t->state == TD_TASK_INFLIGHT;
	int ret = busy ? -EBUSY : -ENOENT;

	if (busy)
		t = td_pending_waiter(p, id);
	if (t) {
		td_pending_unlink(p, t);
		td_task_end(p, t, TDISPATCH_OUTCOME_CANCELLED, reap);
		ret = 0;
	}
	t = td_pending_lookup_delayed(p, id);
	if (t) {
		td_delayed_unlink(p, t);
		td_task_end(p, t, TDISPATCH_OUTCOME_CANCELLED, reap);
		ret = 0;
	}
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_cancel);

/**
 * td_pending_cancel_task() - cancel one task that waits for a batch
 * @p: the pending set
 * @t: the task, pending or waiting behind an in-flight task of its id
 * @reap: where it is put
 *
 * Unlike td_pending_cancel(), other tasks of its id are left alone.
 */
void td_pending_cancel_task(struct td_pending *p, struct tdispatch_task *t,
			    struct list_head *reap)
{
	td_pending_unlink(p, t);
	td_task_end(p, t, TDISPATCH_OUTCOME_CANCELLED, reap);
}

/**
 * td_pending_cancel_all() - cancel every pending and every delayed task
 * @p: the pending set
 * @reap: where they are put
 *
 * Process context: it reschedules between tasks.
 */
void td_pending_cancel_all(struct td_pending *p, struct list_head *reap)
{
	struct tdispatch_task *t;
	struct td_wheel_node *e;

	/* Destroy's: the set may hold millions, on a kernel without preemption. */
	while (!list_empty(&p->order)) {
		t = list_first_entry(&p->order, struct tdispatch_task, order);
		td_pending_unlink(p, t);
		td_task_end(p, t, TDISPATCH_OUTCOME_CANCELLED, reap);
		cond_resched();
	}
	while ((e = td_wheel_any(&p->delayed))) {
		t = &container_of(e, struct td_task_ext, delay)->task;
		td_delayed_unlink(p, t);
		td_task_end(p, t, TDISPATCH_OUTCOME_CANCELLED, reap);
		cond_resched();
	}
}
EXPORT_SYMBOL_IF_KUNIT(td_pending_cancel_all);
