// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the pending set (pending.c): order, coalescing, the
 * bound, batches, expiry, per-id exclusion and cancel.  delayed_kunit.c
 * tests its delayed tasks, ids_kunit.c its id hash.
 */
#include "pending_kunit.h"

/* The pending set */

static void td_test_add_keeps_order(struct kunit *test)
{
	static const u64 ids[] = { 5, 3, 9, 1, 12, 7, 2, 11, 4, 10, 8, 6, 0 };
	struct td_kunit *k = td_setup(test, TD_ORDER_MAX, 4);
	struct tdispatch_task *t;
	unsigned int i;

	for (i = 0; ids[i]; i++)
		td_add(k, ids[i], 100 + i);
	td_expect_order(k, ids);
	for (i = 0; ids[i]; i++) {
		t = td_pending_lookup(&k->p, ids[i]);
		KUNIT_ASSERT_NOT_NULL(test, t);
		KUNIT_EXPECT_EQ(test, t->id, ids[i]);
		KUNIT_EXPECT_EQ(test, t->state, TD_TASK_PENDING);
		KUNIT_EXPECT_EQ(test, t->queued, 100 + i);
	}
	td_expect_lookup(k, 13, NULL);
	KUNIT_EXPECT_EQ(test, k->p.nr_pending, i);
	KUNIT_EXPECT_EQ(test, k->p.drained, i);
	td_expect_outcomes(k, TD_OUTCOMES());
}

/* As the acceptor resizes the id hash. */
static void td_test_coalesce(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *old, *new;
	struct td_batch b;

	old = td_add_dl(k, 1, 5000, 100);
	td_add(k, 2, 200);
	new = td_add_dl(k, 1, 9000, 300);
	td_expect_ended(k, old, TDISPATCH_OUTCOME_OVERRIDDEN);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_OVERRIDDEN] = 1));
	td_expect_lookup(k, 1, new);
	KUNIT_EXPECT_EQ(test, new->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, new->queued, 100);
	KUNIT_EXPECT_EQ(test, k->p.nr_pending, 2);
	td_expect_order(k, TD_IDS(1, 2));
	/* Aged from the older one's arrival. */
	td_expect_due(k, 100 + TD_DELAY - 1, false, 100 + TD_DELAY);
	/* Past the old deadline, before the new one: the newer is cut. */
	td_cut(k, &b, 6000, TD_IDS(1, 2));
	KUNIT_EXPECT_PTR_EQ(test, b.tasks[0], new);
	KUNIT_EXPECT_PTR_EQ(test, tdispatch_task_payload(b.tasks[0]), new->payload);
	KUNIT_EXPECT_PTR_NE(test, new->payload, old->payload);
}

/* Overflow and retries */

static void td_test_overflow_drops_oldest(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 3, 2);
	struct tdispatch_task *first = td_add(k, 1, 100);

	td_add_ids(k, 2, 4, 200);
	td_expect_ended(k, first, TDISPATCH_OUTCOME_DROPPED);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2, 3, 4));
	/* Coalescing takes no new place: nothing more is dropped. */
	td_add(k, 3, 300);
	td_expect_order(k, TD_IDS(2, 3, 4));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DROPPED] = 1,
					  [TDISPATCH_OUTCOME_OVERRIDDEN] = 1));
}

static void td_test_requeue_to_head(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct td_batch b;

	td_add_ids(k, 1, 4, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_add(k, 5, 200);
	td_requeue(k, &b);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 0);
	KUNIT_EXPECT_EQ(test, b.tasks[0]->state, TD_TASK_PENDING);
	td_expect_lookup(k, 2, b.tasks[1]);
	td_expect_order(k, TD_IDS(1, 2, 3, 4, 5));
	td_cut(k, &b, 300, TD_IDS(1, 2));
	td_expect_outcomes(k, TD_OUTCOMES());
}

static void td_test_full_drops_retry_first(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 4, 2);
	struct td_batch b;

	td_add_ids(k, 1, 3, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_requeue(k, &b);
	td_add(k, 4, 200);
	td_expect_order(k, TD_IDS(1, 2, 3, 4));
	td_add(k, 5, 300);
	td_expect_ended(k, b.tasks[0], TDISPATCH_OUTCOME_DROPPED);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2, 3, 4, 5));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DROPPED] = 1));
}

static void td_test_requeue_full_drops_retries(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 3, 2);
	struct td_batch b;

	td_add_ids(k, 1, 2, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_add_ids(k, 3, 5, 200);
	td_requeue(k, &b);
	td_expect_ended(k, b.tasks[0], TDISPATCH_OUTCOME_DROPPED);
	td_expect_ended(k, b.tasks[1], TDISPATCH_OUTCOME_DROPPED);
	td_expect_lookup(k, 1, NULL);
	td_expect_lookup(k, 2, NULL);
	td_expect_order(k, TD_IDS(3, 4, 5));
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 0);
	KUNIT_EXPECT_EQ(test, k->p.retries, 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DROPPED] = 2));
}

static void td_test_retries_counted(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct td_batch b;
	unsigned int i;

	td_add_ids(k, 1, 2, 100);
	for (i = 1; i <= 3; i++) {
		td_cut(k, &b, 100 * i, TD_IDS(1, 2));
		td_requeue(k, &b);
		KUNIT_EXPECT_EQ(test, tdispatch_task_attempts(b.tasks[0]), i);
		KUNIT_EXPECT_EQ(test, tdispatch_task_attempts(b.tasks[1]), i);
		KUNIT_EXPECT_EQ(test, k->p.retries, 2 * i);
	}
	td_cut(k, &b, 1000, TD_IDS(1, 2));
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	td_expect_ended(k, b.tasks[1], TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_EQ(test, b.tasks[1]->attempts, 3);
	KUNIT_EXPECT_EQ(test, k->p.retries, 6);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DONE] = 2));
}

/* A task that came back from its last attempt ends exhausted, not pending. */
static void td_test_max_attempts_exhaust(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *t1, *t2;
	struct td_batch b;

	k->p.max_attempts = 2;
	t1 = td_add(k, 1, 100);
	t2 = td_add(k, 2, 100);
	/* Its own limit wins over the set's. */
	t2->max_attempts = 3;
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_requeue(k, &b);
	td_expect_order(k, TD_IDS(1, 2));
	td_cut(k, &b, 200, TD_IDS(1, 2));
	td_requeue(k, &b);
	td_expect_ended(k, t1, TDISPATCH_OUTCOME_EXHAUSTED);
	KUNIT_EXPECT_EQ(test, t1->attempts, 2);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2));
	td_cut(k, &b, 300, TD_IDS(2));
	td_requeue(k, &b);
	td_expect_ended(k, t2, TDISPATCH_OUTCOME_EXHAUSTED);
	KUNIT_EXPECT_EQ(test, k->p.retries, 3);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_EXHAUSTED] = 2));
}

/* ->attempts stops at TDISPATCH_MAX_ATTEMPTS; a limit that high still ends a task there. */
static void td_test_attempts_saturate(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *t1, *t2;
	struct td_batch b;

	t1 = td_add(k, 1, 100);
	t2 = td_add(k, 2, 100);
	/* No limit: retried for ever, its count stopped at the top. */
	t1->attempts = TDISPATCH_MAX_ATTEMPTS - 1;
	t2->attempts = TDISPATCH_MAX_ATTEMPTS - 1;
	t2->max_attempts = TDISPATCH_MAX_ATTEMPTS;
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_requeue(k, &b);
	td_expect_ended(k, t2, TDISPATCH_OUTCOME_EXHAUSTED);
	KUNIT_EXPECT_EQ(test, t2->attempts, TDISPATCH_MAX_ATTEMPTS);
	KUNIT_EXPECT_EQ(test, t1->attempts, TDISPATCH_MAX_ATTEMPTS);
	td_cut(k, &b, 200, TD_IDS(1));
	td_requeue(k, &b);
	KUNIT_EXPECT_EQ(test, t1->attempts, TDISPATCH_MAX_ATTEMPTS);
	td_expect_order(k, TD_IDS(1));
	td_cut(k, &b, 300, TD_IDS(1));
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	td_expect_ended(k, t1, TDISPATCH_OUTCOME_DONE);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_EXHAUSTED] = 1,
					  [TDISPATCH_OUTCOME_DONE] = 1));
}

/* Batch cut */

static void td_test_due_at_max_batch(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 3);

	td_expect_due(k, 100, false, KTIME_MAX);
	td_add_ids(k, 1, 2, 100);
	td_expect_due(k, 101, false, 100 + TD_DELAY);
	td_add(k, 3, 102);
	td_expect_due(k, 102, true, 0);
}

static void td_test_due_after_max_delay(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct td_batch b;

	td_add(k, 1, 100);
	td_add(k, 2, 500);
	td_expect_due(k, 100, false, 100 + TD_DELAY);
	td_expect_due(k, 100 + TD_DELAY - 1, false, 100 + TD_DELAY);
	td_expect_due(k, 100 + TD_DELAY, true, 0);
	td_expect_due(k, 100 * TD_DELAY, true, 0);
	td_cut(k, &b, 100 + TD_DELAY, TD_IDS(1, 2));
	td_expect_due(k, 100 * TD_DELAY, false, KTIME_MAX);
}

/* While destroy drains, anything ready is due, however young. */
static void td_test_due_when_flushing(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);

	td_add(k, 1, 100);
	td_expect_due(k, 101, false, 100 + TD_DELAY);
	k->p.flush = true;
	td_expect_due(k, 101, true, 0);
}

/* Full but short of a batch: only possible with tasks waiting. */
static void td_test_due_when_full(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 3, 3);
	struct td_batch b;

	td_add(k, 1, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	td_add(k, 1, 200);
	td_add(k, 2, 300);
	/* The waiting task is not what ages a batch. */
	td_expect_due(k, 300, false, 300 + TD_DELAY);
	td_add(k, 3, 400);
	KUNIT_EXPECT_EQ(test, k->p.nr_pending, 3);
	td_expect_due(k, 400, true, 0);
}

/*
 * Input that may gather before a producer wakes the acceptor: never past
 * max_input, where the producer would be refused with the acceptor still
 * asleep (workers that chain batches no longer kick it at each batch end).
 */
static void td_test_gather_room(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 16, 8);
	struct td_batch b;

	/* Busy: a whole batch. */
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, true), 8);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 4, true), 4);
	/* A worker free: what makes the next batch due by count. */
	td_add_ids(k, 1, 3, 100);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, false), 5);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 2, false), 2);
	/* A task that waits behind an in-flight one is not ready. */
	td_cut(k, &b, 100, TD_IDS(1, 2, 3));
	td_add(k, 1, 200);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, false), 8);
	/* A batch ready already: the first task wakes it. */
	td_add_ids(k, 10, 17, 300);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, false), 1);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, true), 8);
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
}

static void td_test_cut_max_batch(struct kunit *test)
{
	const u64 *cuts[] = { TD_IDS(1, 2, 3), TD_IDS(4, 5, 6), TD_IDS(7), TD_NONE };
	struct td_kunit *k = td_setup(test, 8, 3);
	struct td_batch b[ARRAY_SIZE(cuts)];
	unsigned int i;

	td_add_ids(k, 1, 7, 100);
	for (i = 0; i < ARRAY_SIZE(cuts); i++)
		td_cut(k, &b[i], 200, cuts[i]);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 7);
	for (i = 0; i < ARRAY_SIZE(cuts); i++)
		td_complete(k, &b[i], TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DONE] = 7));
}

static void td_test_single_item(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 4, 1);
	struct td_batch b1, b2;

	td_add(k, 1, 100);
	td_expect_due(k, 100, true, 0);
	td_add_ids(k, 2, 3, 100);
	td_cut(k, &b1, 100, TD_IDS(1));
	td_cut(k, &b2, 100, TD_IDS(2));
	td_expect_order(k, TD_IDS(3));
	td_complete(k, &b1, TDISPATCH_OUTCOME_DONE);
	td_complete(k, &b2, TDISPATCH_OUTCOME_FAILED);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DONE] = 1,
					  [TDISPATCH_OUTCOME_FAILED] = 1));
}

/* Expiry */

static void td_test_expired_on_add(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *late, *on_time, *stale;

	late = td_add_dl(k, 1, 99, 100);
	td_expect_ended(k, late, TDISPATCH_OUTCOME_EXPIRED);
	td_expect_lookup(k, 1, NULL);
	on_time = td_add_dl(k, 2, 100, 100);
	KUNIT_EXPECT_EQ(test, on_time->state, TD_TASK_PENDING);
	td_add_dl(k, 3, 0, 100 * NSEC_PER_SEC);
	/* An expired newer task does not displace a live one. */
	stale = td_add_dl(k, 2, 50, 200);
	td_expect_ended(k, stale, TDISPATCH_OUTCOME_EXPIRED);
	td_expect_lookup(k, 2, on_time);
	td_expect_order(k, TD_IDS(2, 3));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_EXPIRED] = 2));
}

static void td_test_expires_while_pending(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *a, *c;
	struct td_batch b;

	a = td_add_dl(k, 1, 500, 100);
	td_add_dl(k, 2, 0, 100);
	c = td_add_dl(k, 3, 600, 100);
	td_add_dl(k, 4, 2 * NSEC_PER_SEC, 100);
	td_add(k, 5, 100);
	/* The expired ones do not count towards max_batch. */
	td_cut(k, &b, NSEC_PER_SEC, TD_IDS(2, 4));
	td_expect_ended(k, a, TDISPATCH_OUTCOME_EXPIRED);
	td_expect_ended(k, c, TDISPATCH_OUTCOME_EXPIRED);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(5));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_EXPIRED] = 2));
}

/* Per-id exclusion */

static void td_test_waits_behind_inflight(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *w1, *w2;
	struct td_batch b1, b2;

	td_add_ids(k, 1, 2, 100);
	td_cut(k, &b1, 100, TD_IDS(1, 2));
	w1 = td_add(k, 1, 200);
	KUNIT_EXPECT_EQ(test, w1->state, TD_TASK_WAITING);
	KUNIT_EXPECT_EQ(test, k->p.nr_waiting, 1);
	KUNIT_EXPECT_PTR_EQ(test, td_pending_waiter(&k->p, b1.tasks[0]->id), w1);
	td_expect_lookup(k, 1, b1.tasks[0]);
	td_expect_due(k, 100 * TD_DELAY, false, KTIME_MAX);
	/* Passed over, keeping its place; the ones behind it go. */
	td_add_ids(k, 3, 4, 300);
	td_cut(k, &b2, 300, TD_IDS(3, 4));
	td_expect_order(k, TD_IDS(1));
	/* A further one replaces the waiter in its place. */
	w2 = td_add(k, 1, 400);
	td_expect_ended(k, w1, TDISPATCH_OUTCOME_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, w2->state, TD_TASK_WAITING);
	KUNIT_EXPECT_EQ(test, w2->queued, 200);
	KUNIT_EXPECT_PTR_EQ(test, td_pending_waiter(&k->p, b1.tasks[0]->id), w2);
	td_add(k, 5, 500);
	td_expect_order(k, TD_IDS(1, 5));
	/* The in-flight one ends: the waiter is free to go, first. */
	td_complete(k, &b1, TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_EQ(test, w2->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, k->p.nr_waiting, 0);
	td_expect_lookup(k, 1, w2);
	td_cut(k, &b1, 600, TD_IDS(1, 5));
	KUNIT_EXPECT_PTR_EQ(test, b1.tasks[0], w2);
	td_complete(k, &b1, TDISPATCH_OUTCOME_DONE);
	td_complete(k, &b2, TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DONE] = 6,
					  [TDISPATCH_OUTCOME_OVERRIDDEN] = 1));
}

static void td_test_requeue_loses_to_waiter(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *w;
	struct td_batch b;

	td_add_ids(k, 1, 2, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2));
	w = td_add(k, 1, 200);
	td_requeue(k, &b);
	td_expect_ended(k, b.tasks[0], TDISPATCH_OUTCOME_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, w->state, TD_TASK_PENDING);
	td_expect_lookup(k, 1, w);
	td_expect_order(k, TD_IDS(2, 1));
	KUNIT_EXPECT_EQ(test, k->p.nr_waiting, 0);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 0);
	KUNIT_EXPECT_EQ(test, k->p.retries, 1);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_OVERRIDDEN] = 1));
}

static void td_test_waiter_expires(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *w;
	struct td_batch b1, b2;

	td_add(k, 1, 100);
	td_cut(k, &b1, 100, TD_IDS(1));
	w = td_add_dl(k, 1, 300, 200);
	td_cut(k, &b2, 400, TD_NONE);
	td_expect_ended(k, w, TDISPATCH_OUTCOME_EXPIRED);
	KUNIT_EXPECT_NULL(test, td_pending_waiter(&k->p, b1.tasks[0]->id));
	td_complete(k, &b1, TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_DONE] = 1,
					  [TDISPATCH_OUTCOME_EXPIRED] = 1));
}

/* Cancel */

static void td_test_cancel_pending(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *t = td_add(k, 1, 100);

	td_add(k, 2, 100);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), 0);
	td_expect_ended(k, t, TDISPATCH_OUTCOME_CANCELLED);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2));
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 99), -ENOENT);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_CANCELLED] = 1));
}

static void td_test_cancel_inflight(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *w;
	struct td_batch b;

	td_add(k, 1, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -EBUSY);
	td_expect_outcomes(k, TD_OUTCOMES());
	w = td_add(k, 1, 200);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), 0);
	td_expect_ended(k, w, TDISPATCH_OUTCOME_CANCELLED);
	KUNIT_EXPECT_NULL(test, td_pending_waiter(&k->p, b.tasks[0]->id));
	KUNIT_EXPECT_EQ(test, k->p.nr_waiting, 0);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -EBUSY);
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	td_expect_lookup(k, 1, NULL);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_CANCELLED] = 1,
					  [TDISPATCH_OUTCOME_DONE] = 1));
}

/* One id's pending task taken into flight: not one in flight, nor an expired one. */
static void td_test_take_one_id(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *late;
	struct td_batch b = { .nr = 1 };

	td_add_ids(k, 1, 3, 100);
	b.tasks[0] = td_pending_take(&k->p, 2, 110, &k->reap);
	td_check(k);
	KUNIT_ASSERT_NOT_NULL(test, b.tasks[0]);
	KUNIT_EXPECT_EQ(test, b.tasks[0]->id, 2);
	KUNIT_EXPECT_EQ(test, b.tasks[0]->state, TD_TASK_INFLIGHT);
	td_expect_order(k, TD_IDS(1, 3));
	KUNIT_EXPECT_EQ(test, PTR_ERR(td_pending_take(&k->p, 2, 110, &k->reap)), -EBUSY);
	KUNIT_EXPECT_NULL(test, td_pending_take(&k->p, 9, 110, &k->reap));
	late = td_add_dl(k, 5, 150, 110);
	KUNIT_EXPECT_NULL(test, td_pending_take(&k->p, 5, 200, &k->reap));
	td_check(k);
	td_expect_ended(k, late, TDISPATCH_OUTCOME_EXPIRED);
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_EXPIRED] = 1,
					  [TDISPATCH_OUTCOME_DONE] = 1));
}

/*
 * An item is known by its address: it neither merges with nor waits for a
 * task of its id, nor loses to one when it is retried, and is not found by
 * id; td_pending_take_task() takes it, as td_pending_take() takes an id's.
 */
static void td_test_items_out_of_the_id_hash(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 4, 4);
	struct tdispatch_task *it, *task, *w;
	struct td_batch b, one = { .nr = 1 };

	it = td_add_item(k, 1, false, 100);
	task = td_add(k, 1, 101);
	td_expect_order(k, TD_IDS(1, 1));
	td_expect_lookup(k, 1, task);
	KUNIT_EXPECT_EQ(test, k->p.ids.nr, 1);
	td_expect_outcomes(k, TD_OUTCOMES());
	/* Both in one batch: the item excludes no task. */
	td_cut(k, &b, 200, TD_IDS(1, 1));
	KUNIT_EXPECT_PTR_EQ(test, b.tasks[0], it);
	KUNIT_EXPECT_PTR_EQ(test, b.tasks[1], task);
	/* A newer task of id 1 waits for the task, not the item. */
	w = td_add(k, 1, 300);
	KUNIT_EXPECT_EQ(test, w->state, TD_TASK_WAITING);
	td_requeue(k, &b);
	td_expect_ended(k, task, TDISPATCH_OUTCOME_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, it->state, TD_TASK_PENDING);
	td_expect_order(k, TD_IDS(1, 1));
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&k->p.order, struct tdispatch_task, order), it);
	/* Cancelled by id, the task goes; the item stays. */
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), 0);
	td_expect_ended(k, w, TDISPATCH_OUTCOME_CANCELLED);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -ENOENT);
	KUNIT_EXPECT_NULL(test, td_pending_take(&k->p, 1, 400, &k->reap));
	one.tasks[0] = td_pending_take_task(&k->p, it, 400, &k->reap);
	td_check(k);
	KUNIT_EXPECT_PTR_EQ(test, one.tasks[0], it);
	KUNIT_EXPECT_EQ(test, PTR_ERR(td_pending_take_task(&k->p, it, 400, &k->reap)), -EBUSY);
	td_complete(k, &one, TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_NULL(test, td_pending_take_task(&k->p, it, 400, &k->reap));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_OVERRIDDEN] = 1,
					  [TDISPATCH_OUTCOME_CANCELLED] = 1,
					  [TDISPATCH_OUTCOME_DONE] = 1));
	/* The bound counts items: the oldest place goes first, an item or not. */
	it = td_add_item(k, 7, false, 500);
	td_add_ids(k, 2, 5, 501);
	td_expect_ended(k, it, TDISPATCH_OUTCOME_DROPPED);
	td_expect_order(k, TD_IDS(2, 3, 4, 5));
	KUNIT_EXPECT_EQ(test, k->p.ids.nr, 4);
}

/*
 * Urgent items from anywhere in line, oldest first, none waiting behind its
 * id; td_pending_urgent_waits() says whether there is one.
 */
static void td_test_cut_urgent(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct td_batch b;
	unsigned int i;

	for (i = 1; i <= 5; i++)
		td_add_item(k, i, !(i % 2), 100 + i);
	KUNIT_EXPECT_TRUE(test, td_pending_urgent_waits(&k->p, 200, &k->reap));
	b.nr = td_pending_cut_urgent(&k->p, 200, 8, b.tasks, &k->reap);
	td_check(k);
	td_expect_ids(k, b.tasks, b.nr, TD_IDS(2, 4));
	td_expect_order(k, TD_IDS(1, 3, 5));
	KUNIT_EXPECT_FALSE(test, td_pending_urgent_waits(&k->p, 200, &k->reap));
	KUNIT_EXPECT_EQ(test, td_pending_cut_urgent(&k->p, 200, 8, b.tasks + b.nr, &k->reap), 0);
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
}

static void td_test_cancel_all(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 1);
	struct td_batch b;

	td_add_ids(k, 1, 3, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	td_add(k, 1, 200);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
	td_expect_order(k, TD_NONE);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 1);
	KUNIT_EXPECT_NULL(test, td_pending_waiter(&k->p, b.tasks[0]->id));
	td_expect_lookup(k, 1, b.tasks[0]);
	td_expect_lookup(k, 2, NULL);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OUTCOME_CANCELLED] = 3));
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
}

static struct kunit_case td_pending_cases[] = {
	KUNIT_CASE(td_test_add_keeps_order),
	KUNIT_CASE(td_test_coalesce),
	{}
};

static struct kunit_case td_overflow_cases[] = {
	KUNIT_CASE(td_test_overflow_drops_oldest),
	KUNIT_CASE(td_test_requeue_to_head),
	KUNIT_CASE(td_test_full_drops_retry_first),
	KUNIT_CASE(td_test_requeue_full_drops_retries),
	KUNIT_CASE(td_test_retries_counted),
	KUNIT_CASE(td_test_max_attempts_exhaust),
	KUNIT_CASE(td_test_attempts_saturate),
	{}
};

static struct kunit_case td_batch_cases[] = {
	KUNIT_CASE(td_test_due_at_max_batch),
	KUNIT_CASE(td_test_due_after_max_delay),
	KUNIT_CASE(td_test_due_when_full),
	KUNIT_CASE(td_test_due_when_flushing),
	KUNIT_CASE(td_test_gather_room),
	KUNIT_CASE(td_test_cut_max_batch),
	KUNIT_CASE(td_test_single_item),
	KUNIT_CASE(td_test_take_one_id),
	KUNIT_CASE(td_test_items_out_of_the_id_hash),
	KUNIT_CASE(td_test_cut_urgent),
	{}
};

static struct kunit_case td_expiry_cases[] = {
	KUNIT_CASE(td_test_expired_on_add),
	KUNIT_CASE(td_test_expires_while_pending),
	{}
};

static struct kunit_case td_exclusion_cases[] = {
	KUNIT_CASE(td_test_waits_behind_inflight),
	KUNIT_CASE(td_test_requeue_loses_to_waiter),
	KUNIT_CASE(td_test_waiter_expires),
	{}
};

static struct kunit_case td_cancel_cases[] = {
	KUNIT_CASE(td_test_cancel_pending),
	KUNIT_CASE(td_test_cancel_inflight),
	KUNIT_CASE(td_test_cancel_all),
	{}
};

TD_SUITE(pending);
TD_SUITE(overflow);
TD_SUITE(batch);
TD_SUITE(expiry);
TD_SUITE(exclusion);
TD_SUITE(cancel);

kunit_test_suites(&td_pending_suite, &td_overflow_suite, &td_batch_suite,
		  &td_expiry_suite, &td_exclusion_suite, &td_cancel_suite);

MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests of the tdispatch pending set");
