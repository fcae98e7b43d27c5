// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the pending set's delayed tasks (pending.c) and of the
 * timing wheel they wait in (wheel.c): order by time and arrival,
 * overrides, expiry, cancel, expedite by id and by watch key, and the
 * wheel's levels, cascades and random walks.
 */
#include "pending_kunit.h"

/* Delayed tasks */

static void td_test_delayed_waits(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *t, *at_once;

	t = td_add_later(k, 1, 2000, 100);
	KUNIT_EXPECT_EQ(test, t->state, TD_TASK_DELAYED);
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 1);
	KUNIT_EXPECT_EQ(test, k->p.nr_pending, 0);
	td_expect_lookup(k, 1, NULL);
	td_expect_delayed_lookup(k, 1, t);
	td_expect_due(k, 1999, false, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 2000);
	/* A not_before of now or earlier is no delay. */
	at_once = td_add_later(k, 2, 100, 100);
	KUNIT_EXPECT_EQ(test, at_once->state, TD_TASK_PENDING);
	td_expect_order(k, TD_IDS(2));
	td_promote(k, 1999, 0);
	KUNIT_EXPECT_EQ(test, t->state, TD_TASK_DELAYED);
	td_promote(k, 2000, 1);
	KUNIT_EXPECT_EQ(test, t->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, t->queued, 2000);
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 0);
	td_expect_lookup(k, 1, t);
	td_expect_delayed_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2, 1));
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), KTIME_MAX);
	td_promote(k, 5000, 0);
	/* Drained once, not again when promoted. */
	KUNIT_EXPECT_EQ(test, k->p.drained, 2);
	td_expect_outcomes(k, TD_OUTCOMES());
}

static void td_test_delayed_order(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 8);

	td_add_later(k, 1, 3000, 100);
	td_add_later(k, 2, 2000, 101);
	td_add_later(k, 3, 3000, 102);
	td_add_later(k, 4, 1000, 103);
	td_add_later(k, 5, 2000, 104);
	/* Equal times keep their arrival order. */
	td_expect_delayed(k, TD_IDS(4, 2, 5, 1, 3));
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 1000);
	td_promote(k, 2500, 3);
	td_expect_order(k, TD_IDS(4, 2, 5));
	td_expect_delayed(k, TD_IDS(1, 3));
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 3000);
	td_promote(k, 3000, 2);
	td_expect_order(k, TD_IDS(4, 2, 5, 1, 3));
	td_expect_delayed(k, TD_NONE);
}

/* The newest task of an id wins, with its own not_before time. */
static void td_test_delayed_overridden(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *first, *later, *earlier;

	first = td_add_later(k, 1, 2000, 100);
	td_add_later(k, 2, 2500, 100);
	later = td_add_later(k, 1, 3000, 200);
	td_expect_ended(k, first, TDISPATCH_OUTCOME_OVERRIDDEN);
	td_expect_delayed_lookup(k, 1, later);
	td_expect_delayed(k, TD_IDS(2, 1));
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 2);
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 2500);
	td_promote(k, 2000, 0);
	earlier = td_add_later(k, 1, 1500, 300);
	td_expect_ended(k, later, TDISPATCH_OUTCOME_OVERRIDDEN);
	td_expect_delayed(k, TD_IDS(1, 2));
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 1500);
	td_promote(k, 1500, 1);
	td_expect_lookup(k, 1, earlier);
	td_expect_order(k, TD_IDS(1));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_OVERRIDDEN] = 2));
}

static void td_test_delayed_overridden_at_once(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *d, *t;

	d = td_add_later(k, 1, 2000, 100);
	t = td_add(k, 1, 200);
	td_expect_ended(k, d, TDISPATCH_OUTCOME_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, t->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, t->queued, 200);
	td_expect_lookup(k, 1, t);
	td_expect_delayed_lookup(k, 1, NULL);
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), KTIME_MAX);
	td_promote(k, 2000, 0);
	td_expect_order(k, TD_IDS(1));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_OVERRIDDEN] = 1));
}

/* It leaves a pending task of its id alone until it is promoted. */
static void td_test_delayed_leaves_pending(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *p1, *d;
	struct td_batch b;

	p1 = td_add(k, 1, 100);
	td_add(k, 2, 150);
	d = td_add_later(k, 1, 2000, 200);
	KUNIT_EXPECT_EQ(test, p1->state, TD_TASK_PENDING);
	td_expect_lookup(k, 1, p1);
	td_expect_delayed_lookup(k, 1, d);
	td_expect_outcomes(k, TD_OUTCOMES());
	td_promote(k, 2000, 1);
	td_expect_ended(k, p1, TDISPATCH_OUTCOME_OVERRIDDEN);
	td_expect_lookup(k, 1, d);
	/* It takes the overridden task's place in line, as any newer one. */
	KUNIT_EXPECT_EQ(test, d->queued, 100);
	td_expect_order(k, TD_IDS(1, 2));
	td_cut(k, &b, 2000, TD_IDS(1, 2));
	KUNIT_EXPECT_PTR_EQ(test, b.tasks[0], d);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_OVERRIDDEN] = 1));
}

static void td_test_delayed_behind_inflight(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *d;
	struct td_batch b;

	td_add(k, 1, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	d = td_add_later(k, 1, 2000, 200);
	KUNIT_EXPECT_NULL(test, td_pending_waiter(&k->p, b.tasks[0]->id));
	td_promote(k, 2000, 1);
	KUNIT_EXPECT_EQ(test, d->state, TD_TASK_WAITING);
	KUNIT_EXPECT_PTR_EQ(test, td_pending_waiter(&k->p, b.tasks[0]->id), d);
	KUNIT_EXPECT_EQ(test, d->queued, 2000);
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_EQ(test, d->state, TD_TASK_PENDING);
	td_expect_lookup(k, 1, d);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DONE] = 1));
}

/* A promoted task that needs a place makes room as any other. */
static void td_test_delayed_makes_room(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 2, 2);
	struct tdispatch_task *oldest;

	/* Delayed tasks are not pending: the bound does not count them. */
	td_add_later(k, 3, 1000, 100);
	td_add_later(k, 4, 1000, 100);
	oldest = td_add(k, 1, 100);
	td_add(k, 2, 200);
	td_expect_outcomes(k, TD_OUTCOMES());
	td_promote(k, 1000, 2);
	td_expect_ended(k, oldest, TDISPATCH_OUTCOME_DROPPED);
	td_expect_order(k, TD_IDS(3, 4));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DROPPED] = 2));
}

static void td_test_delayed_expires(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *d, *stale, *edge;

	d = td_add_at(k, 1, 2000, 1500, 100);
	KUNIT_EXPECT_EQ(test, d->state, TD_TASK_DELAYED);
	/* Expired on arrival: it does not displace the delayed one. */
	stale = td_add_at(k, 1, 3000, 50, 100);
	td_expect_ended(k, stale, TDISPATCH_OUTCOME_EXPIRED);
	td_expect_delayed_lookup(k, 1, d);
	/* A deadline equal to the promotion time has not passed. */
	edge = td_add_at(k, 2, 2000, 2000, 100);
	td_promote(k, 2000, 2);
	td_expect_ended(k, d, TDISPATCH_OUTCOME_EXPIRED);
	KUNIT_EXPECT_EQ(test, edge->state, TD_TASK_PENDING);
	td_expect_order(k, TD_IDS(2));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_EXPIRED] = 2));
}

static void td_test_cancel_delayed(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *d1, *p2, *d2, *d3;
	struct td_batch b;

	d1 = td_add_later(k, 1, 2000, 100);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), 0);
	td_expect_ended(k, d1, TDISPATCH_OUTCOME_CANCELLED);
	td_expect_delayed_lookup(k, 1, NULL);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -ENOENT);
	/* Both the pending and the delayed task of an id go. */
	p2 = td_add(k, 2, 100);
	d2 = td_add_later(k, 2, 2000, 100);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 2), 0);
	td_expect_ended(k, p2, TDISPATCH_OUTCOME_CANCELLED);
	td_expect_ended(k, d2, TDISPATCH_OUTCOME_CANCELLED);
	td_expect_lookup(k, 2, NULL);
	/* In flight and delayed: the delayed one can be recalled. */
	td_add(k, 3, 100);
	td_cut(k, &b, 100, TD_IDS(3));
	d3 = td_add_later(k, 3, 2000, 100);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 3), 0);
	td_expect_ended(k, d3, TDISPATCH_OUTCOME_CANCELLED);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 3), -EBUSY);
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 0);
	td_promote(k, 2000, 0);
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_CANCELLED] = 4,
					  [TDISPATCH_OUTCOME_DONE] = 1));
}

static void td_test_cancel_all_delayed(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 1);
	struct td_batch b;

	td_add_ids(k, 1, 2, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	td_add(k, 1, 200);
	td_add_later(k, 1, 3000, 200);
	td_add_later(k, 2, 2000, 200);
	td_add_later(k, 3, 1000, 200);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
	td_expect_order(k, TD_NONE);
	td_expect_delayed(k, TD_NONE);
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 1);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_CANCELLED] = 5));
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
}

/* The wheel: far due times, cascades, order and a random walk */

#define TD_MS		NSEC_PER_MSEC
#define TD_HOUR		(3600ULL * NSEC_PER_SEC)

/* A delayed task let in early: pending at once, overriding a pending one. */
static void td_test_expedite_delayed(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *p1, *d1, *d2;

	p1 = td_add(k, 1, 100);
	d1 = td_add_later(k, 1, 5000, 100);
	d2 = td_add_later(k, 2, 5000, 100);
	KUNIT_EXPECT_EQ(test, td_pending_expedite(&k->p, 2, 200, &k->reap), 0);
	td_check(k);
	td_expect_order(k, TD_IDS(1, 2));
	KUNIT_EXPECT_EQ(test, d2->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, td_pending_expedite(&k->p, 1, 200, &k->reap), 0);
	td_check(k);
	td_expect_ended(k, p1, TDISPATCH_OUTCOME_OVERRIDDEN);
	td_expect_lookup(k, 1, d1);
	KUNIT_EXPECT_EQ(test, td_pending_expedite(&k->p, 1, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_pending_expedite(&k->p, 3, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, k->p.expedited, 2);
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 0);
}

/* Expediting a key lets in exactly the delayed tasks that watch it. */
static void td_test_expedite_key(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *a, *b, *c, *o, *n, *now;

	a = td_add_task(k, td_task_watching(k, 7), 1, 5000, 0, 100);
	b = td_add_task(k, td_task_watching(k, 7), 2, 5000, 0, 100);
	c = td_add_task(k, td_task_watching(k, 8), 3, 5000, 0, 100);
	td_add_later(k, 4, 5000, 100);
	/* Due at once: no watcher kept. */
	now = td_add_task(k, td_task_watching(k, 7), 5, 0, 0, 100);
	KUNIT_EXPECT_FALSE(test, now->flags & TD_TASK_WATCHED);
	/* Replaced while delayed: the newer task's key counts. */
	o = td_add_task(k, td_task_watching(k, 9), 6, 5000, 0, 100);
	n = td_add_task(k, td_task_watching(k, 10), 6, 5000, 0, 100);
	td_expect_ended(k, o, TDISPATCH_OUTCOME_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, td_nr_watchers(k), 4);

	KUNIT_EXPECT_EQ(test, td_pending_expedite_key(&k->p, 7, 1, 200, &k->reap), 1);
	KUNIT_EXPECT_EQ(test, b->state, TD_TASK_DELAYED);
	KUNIT_EXPECT_EQ(test, td_pending_expedite_key(&k->p, 7, 8, 200, &k->reap), 1);
	td_check(k);
	KUNIT_EXPECT_EQ(test, a->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, b->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, c->state, TD_TASK_DELAYED);
	td_expect_order(k, TD_IDS(5, 1, 2));
	KUNIT_EXPECT_EQ(test, td_pending_expedite_key(&k->p, 7, 8, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_pending_expedite_key(&k->p, 9, 8, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_pending_expedite_key(&k->p, 10, 8, 200, &k->reap), 1);
	KUNIT_EXPECT_EQ(test, n->state, TD_TASK_PENDING);
	/* Cancelled: it watches no more. */
	KUNIT_EXPECT_EQ(test, td_cancel(k, 3), 0);
	KUNIT_EXPECT_EQ(test, td_pending_expedite_key(&k->p, 8, 8, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_nr_watchers(k), 0);
	KUNIT_EXPECT_EQ(test, k->p.expedited, 3);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
}

/*
 * Follow td_pending_next_delayed() to a task's time: each step may only
 * move tasks nearer (a cascade) until the wheel names the due time itself;
 * nothing is let in early, and at its time the task is let in at once.
 */
static void td_wheel_walk_to(struct td_kunit *k, struct tdispatch_task *t)
{
	unsigned int steps = 0;
	ktime_t next;

	while ((next = td_pending_next_delayed(&k->p)) < td_task_not_before(t)) {
		KUNIT_ASSERT_LT(k->test, steps++, 2 * TD_WHEEL_LEVELS);
		td_promote(k, next, 0);
	}
	KUNIT_EXPECT_EQ(k->test, next, td_task_not_before(t));
	td_promote(k, td_task_not_before(t) - 1, 0);
	KUNIT_EXPECT_EQ(k->test, t->state, TD_TASK_DELAYED);
	td_promote(k, td_task_not_before(t), 1);
	KUNIT_EXPECT_EQ(k->test, t->state, TD_TASK_PENDING);
}

/* From a millisecond to beyond the top level, each one exactly on time. */
static void td_test_wheel_levels(struct kunit *test)
{
	static const u64 after[] = {
		3 * TD_MS + 7, 500 * TD_MS + 1, 30ULL * NSEC_PER_SEC + 11,
		TD_HOUR + 3, 30 * 24 * TD_HOUR + 5, 5 * 365 * 24 * TD_HOUR + 13,
	};
	struct td_kunit *k = td_setup(test, 16, 4);
	struct tdispatch_task *t[ARRAY_SIZE(after)];
	ktime_t now = 10 * NSEC_PER_SEC;
	unsigned int i;

	td_promote(k, now, 0);
	for (i = 0; i < ARRAY_SIZE(after); i++)
		t[i] = td_add_later(k, i + 1, now + after[i], now);
	/* One per level up to 3; then 30 days and 5 years, both in the top one. */
	for (i = 0; i < TD_WHEEL_LEVELS; i++)
		KUNIT_EXPECT_EQ_MSG(test, hweight64(k->p.delayed.map[i]),
				    i < 4 ? 1 : i == TD_WHEEL_LEVELS - 1 ? 2 : 0, "level %u", i);
	for (i = 0; i < ARRAY_SIZE(after); i++)
		td_wheel_walk_to(k, t[i]);
	td_expect_order(k, TD_IDS(1, 2, 3, 4, 5, 6));
	for (i = 0; i < TD_WHEEL_LEVELS; i++)
		KUNIT_EXPECT_EQ(test, k->p.delayed.map[i], 0);
}

/*
 * Equal times keep their arrival order even when the first comes down
 * from a higher level after the later ones were put lower or near: 1 waits
 * in level 2 for its bucket (which starts 5 ms before its time) while 2 goes
 * into level 0 and, once that bucket has come, 3 straight into the rbtree.
 */
static void td_test_wheel_equal_times(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 16, 4);
	ktime_t bucket2 = 26ULL << td_wheel_shift(2), due = bucket2 + 5 * TD_MS;

	td_add_later(k, 1, due, 0);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 1);
	td_promote(k, bucket2 - 2 * TD_MS, 0);
	td_add_later(k, 2, due, bucket2 - 2 * TD_MS);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[0]), 1);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 1);
	td_promote(k, due - TD_MS / 2, 0);
	KUNIT_EXPECT_EQ(test, k->p.delayed.map[2], 0);
	td_add_later(k, 3, due, due - TD_MS / 2);
	td_add_later(k, 4, due - 1, due - TD_MS / 2);
	td_expect_delayed(k, TD_IDS(4, 1, 2, 3));
	td_promote(k, due, 4);
	td_expect_order(k, TD_IDS(4, 1, 2, 3));
}

/*
 * A group due at one instant reaches the near rbtree in arrival order or
 * the reverse, by how many times it moved (each move reverses a bucket's
 * list): 1, 2 and 3 moves here.  Two tasks that came before it, due just
 * before and just after it, show the order: moved newest first, the group
 * and both go in at an end of the tree without a walk; oldest first, the
 * group goes in between the two by a walk.  Either way, by arrival.
 */
static void td_test_wheel_group(struct kunit *test)
{
	static const struct {
		ktime_t due, step;	/* step: a promotion before the last two */
	} cases[] = {
		{ 10 * TD_MS, 0 },			/* level 0, then near */
		{ 100 * TD_MS, 0 },			/* level 1, 0, near */
		{ 5000 * TD_MS, 1ULL << 32 },		/* level 2, 1, 0, near */
	};
	unsigned int c;
	u64 id;

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		struct td_kunit *k = td_setup(test, TD_ORDER_MAX, 4);
		ktime_t due = cases[c].due;

		td_add_later(k, 13, due + 1, 0);
		td_add_later(k, 14, due - 1, 0);
		for (id = 1; id <= 12; id++)
			td_add_later(k, id, due, id);
		if (cases[c].step)
			td_promote(k, cases[c].step, 0);
		td_promote(k, due - TD_MS, 0);
		td_promote(k, due + 1, 14);
		td_expect_order(k, TD_IDS(14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13));
	}
}

/* Cancel and expedite take tasks from buckets, and the maps follow. */
static void td_test_wheel_cancel(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 16, 4);
	ktime_t now = NSEC_PER_SEC;

	td_promote(k, now, 0);
	td_add_later(k, 1, now + 20ULL * NSEC_PER_SEC, now);
	td_add_later(k, 2, now + 20ULL * NSEC_PER_SEC + 1, now);
	td_add_later(k, 3, now + 40ULL * NSEC_PER_SEC, now);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 2);
	KUNIT_EXPECT_EQ(test, td_pending_cancel(&k->p, 1, &k->reap), 0);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 2);
	KUNIT_EXPECT_EQ(test, td_pending_expedite(&k->p, 2, now, &k->reap), 0);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 1);
	KUNIT_EXPECT_EQ(test, td_pending_cancel(&k->p, 3, &k->reap), 0);
	KUNIT_EXPECT_EQ(test, k->p.delayed.map[2], 0);
	td_check(k);
	td_expect_order(k, TD_IDS(2));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_CANCELLED] = 2));
}

#define TD_WALK_TASKS	400

static u64 td_walk_rng(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Random due times over every level, random cancels and expedites, time
 * moving in random steps: at each promotion exactly the tasks due by then
 * come in, in (due, arrival) order, none before its time.
 */
static void td_test_wheel_random(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, TD_WALK_TASKS, 4);
	struct tdispatch_task **t;
	ktime_t now = 5 * NSEC_PER_SEC, last = now;
	unsigned int i, left, added = 0, steps = 0;
	u64 rng = 0x9e3779b97f4a7c15ULL;
	int ret;

	t = kunit_kcalloc(test, TD_WALK_TASKS, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	while (added < TD_WALK_TASKS || k->p.nr_delayed) {
		u64 r = td_walk_rng(&rng);
		unsigned int due_now = 0, n, seen = 0;
		struct tdispatch_task *it, *prev;

		/* A lost task would keep the walk going: fail instead. */
		KUNIT_ASSERT_LT(test, steps++, 100000);
		if (added < TD_WALK_TASKS && r % 3) {
			/* 1 ns to about 4.9 hours ahead: every level but the top. */
			u64 ahead = 1 + (td_walk_rng(&rng) >> (20 + r % 44));

			t[added] = td_add_later(k, added + 1, now + ahead, now);
			added++;
			continue;
		}
		if (added && !(r % 5)) {
			it = t[td_walk_rng(&rng) % added];
			if (it->state != TD_TASK_DELAYED)
				continue;
			ret = r & 8 ? td_pending_cancel(&k->p, it->id, &k->reap) :
				      td_pending_expedite(&k->p, it->id, now, &k->reap);
			KUNIT_EXPECT_EQ(test, ret, 0);
			td_check(k);
			continue;
		}
		/* To the wheel's next time, or a random step past it. */
		now = td_pending_next_delayed(&k->p);
		if (now == KTIME_MAX || r & 16)
			now = last + (td_walk_rng(&rng) >> (24 + r % 40));
		now = max(now, last);
		for (i = 0; i < added; i++)
			due_now += t[i]->state == TD_TASK_DELAYED &&
				   td_task_not_before(t[i]) <= now;
		n = k->p.nr_pending;
		td_promote(k, now, due_now);
		for (i = 0; i < added; i++)
			if (t[i]->state == TD_TASK_DELAYED)
				KUNIT_EXPECT_GT(test, td_task_not_before(t[i]), now);
		/* The newcomers are at the tail of the line, by (due, arrival). */
		prev = NULL;
		list_for_each_entry(it, &k->p.order, order) {
			if (seen++ < n)
				continue;
			KUNIT_EXPECT_LE(test, td_task_not_before(it), now);
			if (prev) {
				ktime_t a = td_task_not_before(prev), b = td_task_not_before(it);

				KUNIT_EXPECT_TRUE(test, a < b || (a == b && prev->id < it->id));
			}
			prev = it;
		}
		last = now;
		/* Batch the line away, to keep room for what comes next. */
		while (k->p.nr_pending) {
			struct td_batch b;

			b.nr = td_pending_cut(&k->p, now, k->p.max_batch, b.tasks, &k->reap);
			KUNIT_ASSERT_GT(test, b.nr, 0);
			td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
		}
	}
	for (i = 0, left = 0; i < added; i++)
		left += t[i]->state == TD_TASK_DELAYED;
	KUNIT_EXPECT_EQ(test, left, 0);
	for (i = 0; i < TD_WHEEL_LEVELS; i++)
		KUNIT_EXPECT_EQ(test, k->p.delayed.map[i], 0);
}

static struct kunit_case td_delayed_cases[] = {
	KUNIT_CASE(td_test_delayed_waits),
	KUNIT_CASE(td_test_delayed_order),
	KUNIT_CASE(td_test_delayed_overridden),
	KUNIT_CASE(td_test_delayed_overridden_at_once),
	KUNIT_CASE(td_test_delayed_leaves_pending),
	KUNIT_CASE(td_test_delayed_behind_inflight),
	KUNIT_CASE(td_test_delayed_makes_room),
	KUNIT_CASE(td_test_delayed_expires),
	KUNIT_CASE(td_test_cancel_delayed),
	KUNIT_CASE(td_test_cancel_all_delayed),
	KUNIT_CASE(td_test_expedite_delayed),
	KUNIT_CASE(td_test_expedite_key),
	{}
};

static struct kunit_case td_wheel_cases[] = {
	KUNIT_CASE(td_test_wheel_levels),
	KUNIT_CASE(td_test_wheel_equal_times),
	KUNIT_CASE(td_test_wheel_group),
	KUNIT_CASE(td_test_wheel_cancel),
	KUNIT_CASE(td_test_wheel_random),
	{}
};

TD_SUITE(delayed);
TD_SUITE(wheel);

kunit_test_suites(&td_delayed_suite, &td_wheel_suite);

MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests of tdispatch's delayed tasks and timing wheel");
