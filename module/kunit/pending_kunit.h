/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KUnit tests of the pending set share (pending_kunit.c, the set
 * itself; delayed_kunit.c, its delayed tasks and the timing wheel they
 * wait in).  The units are included whole, so that their static helpers
 * come along; callers pass "now", so nothing here sleeps.
 *
 * Every operation on a pending set goes through a wrapper that checks the
 * accounting afterwards: each task taken in is pending, in flight, delayed
 * or on the reap list with its outcome, exactly once.
 */
#ifndef _TDISPATCH_PENDING_KUNIT_H
#define _TDISPATCH_PENDING_KUNIT_H

#include <kunit/test.h>
#include <linux/module.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "../ids.h"
#include "../pending.h"
#include "../watch.h"
#include "../wheel.h"

#define TD_BATCH_MAX	8	/* largest max_batch any case uses */
#define TD_ORDER_MAX	16	/* longest order list any case checks */
#define TD_DELAY	1000	/* max_delay_ns of the pending sets */

/* A 0-terminated list of task ids; ids in these tests start at 1. */
#define TD_IDS(...)	((const u64[]){ __VA_ARGS__, 0 })
#define TD_NONE		((const u64[]){ 0 })
/* Expected p->outcomes[], by designated initializers; the rest are 0. */
#define TD_OUTCOMES(...) ((const u64[TDISPATCH_NR_OUTCOMES]) { __VA_ARGS__ })

struct td_batch {
	unsigned int nr;
	struct tdispatch_task *tasks[TD_BATCH_MAX];
};

struct td_kunit {
	struct kunit *test;
	struct td_pending p;
	struct list_head reap;
	unsigned long serial;	/* payload of the last task made */
	unsigned int items;	/* items added (td_add_item()), ended or not */
};

/* How many tasks of @state the id hash holds. */
static inline unsigned int td_ids_count(struct td_pending *p, u8 state)
{
	struct tdispatch_task *t;
	unsigned int b, nr = 0;

	for (b = 0; b < 1U << p->ids.bits; b++)
		for (t = p->ids.bucket[b]; t; t = t->hnext)
			nr += t->state == state;
	return nr;
}

/* Pending and in-flight ids: none once every task has ended. */
static inline unsigned int td_ids_live(struct td_pending *p)
{
	return td_ids_count(p, TD_TASK_PENDING) + td_ids_count(p, TD_TASK_INFLIGHT);
}

/* In the order the wheel lets them in: by not_before, then by arrival. */
static inline int td_cmp_delayed(const void *a, const void *b)
{
	const struct tdispatch_task *x = *(const struct tdispatch_task **)a;
	const struct tdispatch_task *y = *(const struct tdispatch_task **)b;

	if (td_task_not_before(x) != td_task_not_before(y))
		return td_task_not_before(x) < td_task_not_before(y) ? -1 : 1;
	return td_ext(x)->delay.seq < td_ext(y)->delay.seq ? -1 :
	       td_ext(x)->delay.seq > td_ext(y)->delay.seq;
}

/*
 * Every delayed task, in the order they will be let in, after checking
 * that each is where the wheel's invariants put it: before the horizon in
 * the near rbtree (whose last entry the wheel knows), else in a bucket
 * that the level's map shows.
 */
static inline struct tdispatch_task **td_delayed_tasks(struct td_kunit *k, unsigned int *nr)
{
	struct td_wheel *w = &k->p.delayed;
	unsigned int lvl, i, n = 0, cap = k->p.nr_delayed;
	struct tdispatch_task **all, *t;
	struct td_wheel_node *e;
	struct rb_node *rb;

	all = kunit_kcalloc(k->test, cap + 1, sizeof(*all), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(k->test, all);
	KUNIT_EXPECT_EQ(k->test, w->horizon % (1ULL << TD_WHEEL_SHIFT), 0);
	/* The near rbtree's last entry, which placing at either end relies on. */
	KUNIT_EXPECT_PTR_EQ(k->test, w->last, rb_last(&w->near.rb_root));
	for (rb = rb_first_cached(&w->near); rb; rb = rb_next(rb)) {
		t = &container_of(rb, struct td_task_ext, delay.rb)->task;
		KUNIT_EXPECT_LT(k->test, (u64)td_task_not_before(t), w->horizon);
		KUNIT_ASSERT_LT(k->test, n, cap);
		all[n++] = t;
	}
	for (lvl = 0; lvl < TD_WHEEL_LEVELS; lvl++) {
		for (i = 0; i < TD_WHEEL_SIZE; i++) {
			KUNIT_EXPECT_EQ(k->test, !hlist_empty(&w->bucket[lvl][i]),
					!!(w->map[lvl] & BIT_ULL(i)));
			hlist_for_each_entry(e, &w->bucket[lvl][i], bucket) {
				t = &container_of(e, struct td_task_ext, delay)->task;
				KUNIT_EXPECT_GE(k->test, (u64)td_task_not_before(t), w->horizon);
				KUNIT_ASSERT_LT(k->test, n, cap);
				all[n++] = t;
			}
		}
	}
	sort(all, n, sizeof(*all), td_cmp_delayed, NULL);
	*nr = n;
	return all;
}

/* The wheel and the id hash hold the same nr_delayed tasks. */
static inline void td_check_delayed(struct td_kunit *k)
{
	struct td_pending *p = &k->p;
	struct tdispatch_task **all;
	unsigned int i, nr;

	all = td_delayed_tasks(k, &nr);
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_EQ(k->test, all[i]->state, TD_TASK_DELAYED);
		KUNIT_EXPECT_PTR_EQ(k->test, td_pending_lookup_delayed(p, all[i]->id), all[i]);
	}
	/* Never later than the first due time, or promotion would be late. */
	if (nr)
		KUNIT_EXPECT_LE(k->test, td_pending_next_delayed(p), td_task_not_before(all[0]));
	else
		KUNIT_EXPECT_EQ(k->test, td_pending_next_delayed(p), KTIME_MAX);
	KUNIT_EXPECT_EQ(k->test, nr, p->nr_delayed);
	KUNIT_EXPECT_EQ(k->test, td_ids_count(p, TD_TASK_DELAYED), p->nr_delayed);
	kunit_kfree(k->test, all);
}

/*
 * drained == sum(outcomes) + nr_pending + nr_inflight + nr_delayed, and the
 * lists, the wheel and the id hash agree.
 */
static inline void td_check(struct td_kunit *k)
{
	unsigned int reaped[TDISPATCH_NR_OUTCOMES] = {};
	unsigned int nr = 0, waiting = 0, o;
	unsigned int items_ended = 0, items_pending = 0, items_live;
	struct td_pending *p = &k->p;
	struct tdispatch_task *t;
	u64 ended = 0;

	list_for_each_entry(t, &k->reap, order) {
		KUNIT_ASSERT_LT(k->test, t->state, TDISPATCH_NR_OUTCOMES);
		reaped[t->state]++;
		items_ended += !!(t->flags & TD_TASK_ITEM);
	}
	for (o = 0; o < TDISPATCH_NR_OUTCOMES; o++) {
		KUNIT_EXPECT_EQ_MSG(k->test, p->outcomes[o], reaped[o],
				    "outcome %u: counter vs reap list", o);
		ended += p->outcomes[o];
	}
	list_for_each_entry(t, &p->order, order) {
		KUNIT_EXPECT_GE(k->test, t->state, TD_TASK_PENDING);
		KUNIT_EXPECT_LE(k->test, t->state, TD_TASK_WAITING);
		/*
		 * Found by its id, an item never (it waits behind nothing);
		 * a waiting one only behind an in-flight one.
		 */
		if (t->flags & TD_TASK_ITEM) {
			KUNIT_EXPECT_EQ(k->test, t->state, TD_TASK_PENDING);
			KUNIT_EXPECT_PTR_NE(k->test, td_pending_lookup(p, t->id), t);
			items_pending++;
		} else if (t->state == TD_TASK_WAITING) {
			struct tdispatch_task *cur = td_pending_lookup(p, t->id);

			KUNIT_EXPECT_PTR_EQ(k->test, td_pending_waiter(p, t->id), t);
			KUNIT_EXPECT_TRUE(k->test, cur && cur->state == TD_TASK_INFLIGHT);
			waiting++;
		} else {
			KUNIT_EXPECT_PTR_EQ(k->test, td_pending_lookup(p, t->id), t);
		}
		nr++;
	}
	KUNIT_EXPECT_EQ(k->test, nr, p->nr_pending);
	KUNIT_EXPECT_EQ(k->test, waiting, p->nr_waiting);
	/* Every task the set holds but items is in the id hash, once. */
	items_live = k->items - items_ended;
	KUNIT_EXPECT_LE(k->test, items_live - items_pending, p->nr_inflight);
	KUNIT_EXPECT_EQ(k->test, td_ids_live(p),
			p->nr_inflight + p->nr_pending - p->nr_waiting - items_live);
	KUNIT_EXPECT_EQ(k->test, td_ids_count(p, TD_TASK_WAITING), p->nr_waiting);
	KUNIT_EXPECT_EQ(k->test, p->ids.nr,
			p->nr_inflight + p->nr_pending + p->nr_delayed - items_live);
	td_check_delayed(k);
	KUNIT_EXPECT_EQ(k->test, p->drained,
			ended + p->nr_pending + p->nr_inflight + p->nr_delayed);
}

static inline struct td_kunit *td_setup(struct kunit *test, unsigned int max_buffer,
					unsigned int max_batch)
{
	struct td_kunit *k = kunit_kzalloc(test, sizeof(*k), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, k);
	KUNIT_ASSERT_LE(test, max_batch, TD_BATCH_MAX);
	k->test = test;
	INIT_LIST_HEAD(&k->reap);
	td_pending_init(&k->p, max_buffer, max_batch, TD_DELAY);
	return k;
}

/* A task with room for a deadline and a not-before time, as the engine's. */
static inline struct tdispatch_task *td_task_new(struct td_kunit *k)
{
	struct td_task_ext *x = kunit_kzalloc(k->test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(k->test, x);
	x->task.flags = TD_TASK_EXT;
	return &x->task;
}

/* A task that watches @key; pending.c frees the watcher, as it does in the engine. */
static inline struct tdispatch_task *td_task_watching(struct td_kunit *k, u64 key)
{
	struct tdispatch_task *t = td_task_new(k);
	struct td_watcher *w = kzalloc(sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(k->test, w);
	w->key = key;
	td_ext(t)->watcher = w;
	t->flags |= TD_TASK_WATCHED;
	return t;
}

static inline struct tdispatch_task *td_add_task(struct td_kunit *k, struct tdispatch_task *t,
						 u64 id, ktime_t not_before, ktime_t deadline,
						 ktime_t now)
{
	t->id = id;
	t->payload = (void *)(++k->serial);
	t->submitted = now;
	td_ext(t)->deadline = deadline;
	td_ext(t)->delay.due = not_before;
	td_pending_add(&k->p, t, now, &k->reap);
	td_check(k);
	return t;
}

static inline struct tdispatch_task *td_add_at(struct td_kunit *k, u64 id,
					       ktime_t not_before, ktime_t deadline,
					ktime_t now)
{
	return td_add_task(k, td_task_new(k), id, not_before, deadline, now);
}

static inline unsigned int td_nr_watchers(struct td_kunit *k)
{
	struct rb_node *n;
	unsigned int nr = 0;

	for (n = rb_first(&k->p.watchers); n; n = rb_next(n))
		nr++;
	return nr;
}

static inline struct tdispatch_task *td_add_dl(struct td_kunit *k, u64 id,
					       ktime_t deadline, ktime_t now)
{
	return td_add_at(k, id, 0, deadline, now);
}

/* Add a task of @id that may enter no earlier than @not_before. */
static inline struct tdispatch_task *td_add_later(struct td_kunit *k, u64 id,
						  ktime_t not_before, ktime_t now)
{
	return td_add_at(k, id, not_before, 0, now);
}

static inline struct tdispatch_task *td_add(struct td_kunit *k, u64 id, ktime_t now)
{
	return td_add_dl(k, id, 0, now);
}

/*
 * An item of @id, as tdispatch_submit_item() makes one (@urgent: with
 * tdispatch_submit_item_urgent()); it stays out of the id hash.
 */
static inline struct tdispatch_task *td_add_item(struct td_kunit *k, u64 id, bool urgent,
						 ktime_t now)
{
	struct tdispatch_task *t = td_task_new(k);

	t->flags |= TD_TASK_ITEM;
	t->item_state = TD_ITEM_QUEUED | (urgent ? TD_ITEM_URGENT : 0);
	k->items++;
	return td_add_task(k, t, id, 0, 0, now);
}

/* Add ids @first to @last, arriving 1 ns apart from @now. */
static inline void td_add_ids(struct td_kunit *k, u64 first, u64 last, ktime_t now)
{
	u64 id;

	for (id = first; id <= last; id++)
		td_add(k, id, now + id - first);
}

/* The ids of @tasks are @ids, in that order. */
static inline void td_expect_ids(struct td_kunit *k, struct tdispatch_task **tasks,
				 unsigned int nr, const u64 *ids)
{
	unsigned int i;

	for (i = 0; i < nr && ids[i]; i++)
		KUNIT_EXPECT_EQ_MSG(k->test, tasks[i]->id, ids[i], "at %u", i);
	KUNIT_EXPECT_EQ_MSG(k->test, i, nr, "fewer ids expected than found");
	KUNIT_EXPECT_EQ_MSG(k->test, ids[i], 0, "more ids expected than found");
}

/* The order list holds @ids, head first. */
static inline void td_expect_order(struct td_kunit *k, const u64 *ids)
{
	struct tdispatch_task *seen[TD_ORDER_MAX], *t;
	unsigned int nr = 0;

	list_for_each_entry(t, &k->p.order, order) {
		KUNIT_ASSERT_LT(k->test, nr, TD_ORDER_MAX);
		seen[nr++] = t;
	}
	td_expect_ids(k, seen, nr, ids);
}

/* @t ended with @outcome and is on the reap list. */
static inline void td_expect_ended(struct td_kunit *k, struct tdispatch_task *t,
				   enum tdispatch_outcome outcome)
{
	struct tdispatch_task *r;
	bool found = false;

	list_for_each_entry(r, &k->reap, order)
		found |= r == t;
	KUNIT_EXPECT_TRUE_MSG(k->test, found, "task %llu not reaped", t->id);
	KUNIT_EXPECT_EQ(k->test, t->state, outcome);
}

static inline void td_expect_outcomes(struct td_kunit *k, const u64 *want)
{
	unsigned int o;

	for (o = 0; o < TDISPATCH_NR_OUTCOMES; o++)
		KUNIT_EXPECT_EQ_MSG(k->test, k->p.outcomes[o], want[o], "outcome %u", o);
}

static inline void td_expect_lookup(struct td_kunit *k, u64 id, struct tdispatch_task *t)
{
	KUNIT_EXPECT_PTR_EQ(k->test, td_pending_lookup(&k->p, id), t);
}

static inline void td_expect_delayed_lookup(struct td_kunit *k, u64 id,
					    struct tdispatch_task *t)
{
	KUNIT_EXPECT_PTR_EQ(k->test, td_pending_lookup_delayed(&k->p, id), t);
}

/* The delayed tasks are @ids, in the order they will be promoted. */
static inline void td_expect_delayed(struct td_kunit *k, const u64 *ids)
{
	struct tdispatch_task **all;
	unsigned int nr;

	all = td_delayed_tasks(k, &nr);
	td_expect_ids(k, all, nr, ids);
	kunit_kfree(k->test, all);
}

/* Promote at @now and expect @nr tasks to leave the delayed set. */
static inline void td_promote(struct td_kunit *k, ktime_t now, unsigned int nr)
{
	KUNIT_EXPECT_EQ(k->test, td_pending_promote(&k->p, now, &k->reap), nr);
	td_check(k);
}

/* td_pending_due() says @due; if not, that it will be by age at @when. */
static inline void td_expect_due(struct td_kunit *k, ktime_t now, bool due, ktime_t when)
{
	ktime_t w;

	KUNIT_EXPECT_EQ(k->test, td_pending_due(&k->p, now, &w), due);
	if (!due)
		KUNIT_EXPECT_EQ(k->test, w, when);
}

/* Cut a batch into @b and expect it to hold @ids, now in flight. */
static inline void td_cut(struct td_kunit *k, struct td_batch *b, ktime_t now,
			  const u64 *ids)
{
	unsigned int i;

	b->nr = td_pending_cut(&k->p, now, k->p.max_batch, b->tasks, &k->reap);
	td_check(k);
	KUNIT_ASSERT_LE(k->test, b->nr, k->p.max_batch);
	td_expect_ids(k, b->tasks, b->nr, ids);
	for (i = 0; i < b->nr; i++) {
		KUNIT_EXPECT_EQ(k->test, b->tasks[i]->state, TD_TASK_INFLIGHT);
		if (!(b->tasks[i]->flags & TD_TASK_ITEM))
			td_expect_lookup(k, b->tasks[i]->id, b->tasks[i]);
	}
}

static inline void td_requeue(struct td_kunit *k, struct td_batch *b)
{
	td_pending_requeue(&k->p, b->tasks, b->nr, &k->reap);
	td_check(k);
}

static inline void td_complete(struct td_kunit *k, struct td_batch *b,
			       enum tdispatch_outcome outcome)
{
	td_pending_complete(&k->p, b->tasks, b->nr, outcome, &k->reap);
	td_check(k);
}

static inline int td_cancel(struct td_kunit *k, u64 id)
{
	int ret = td_pending_cancel(&k->p, id, &k->reap);

	td_check(k);
	return ret;
}

/* A suite of the cases td_<name>_cases. */
#define TD_SUITE(_name)						\
	static struct kunit_suite td_##_name##_suite = {		\
		.name = "tdispatch_" #_name,				\
		.test_cases = td_##_name##_cases,			\
	}

#endif /* _TDISPATCH_PENDING_KUNIT_H */
