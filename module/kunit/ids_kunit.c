// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the id hash (ids.c): on its own, with tasks that are
 * nothing but an id and a chain pointer, and as the pending set resizes
 * it with tasks in every state.
 */
#include "pending_kunit.h"

#define TD_IDS_N	300

static bool td_ids_has(struct td_ids *h, struct tdispatch_task *t)
{
	struct tdispatch_task *c;

	for (c = td_ids_chain(h, t->id); c; c = c->hnext)
		if (c == t)
			return true;
	return false;
}

/*
 * Link, find through the id's chain, replace and unlink; then move into
 * larger buckets and back into the hash's own, every task found each time.
 */
static void td_ids_test_link_move(struct kunit *test)
{
	struct tdispatch_task *t, *again, **nb, **old;
	struct td_ids *h;
	unsigned int i, bits;

	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	t = kunit_kcalloc(test, TD_IDS_N, sizeof(*t), GFP_KERNEL);
	again = kunit_kzalloc(test, sizeof(*again), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, h && t && again);
	td_ids_init(h);
	for (i = 0; i < TD_IDS_N; i++) {
		/* Two tasks an id, as a pending one and the one waiting behind it. */
		t[i].id = i / 2;
		td_ids_link(h, &t[i]);
	}
	KUNIT_EXPECT_EQ(test, h->nr, TD_IDS_N);
	for (i = 0; i < TD_IDS_N; i++)
		KUNIT_EXPECT_TRUE(test, td_ids_has(h, &t[i]));
	/* One task takes another's place: the old is gone, the count unchanged. */
	again->id = t[7].id;
	td_ids_replace(h, &t[7], again);
	KUNIT_EXPECT_FALSE(test, td_ids_has(h, &t[7]));
	KUNIT_EXPECT_TRUE(test, td_ids_has(h, again));
	KUNIT_EXPECT_EQ(test, h->nr, TD_IDS_N);

	/* Past two a bucket: as many buckets as tasks, rounded up. */
	bits = td_ids_bits(h, h->nr);
	KUNIT_EXPECT_EQ(test, bits, order_base_2(TD_IDS_N));
	nb = kvcalloc(1U << bits, sizeof(*nb), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, nb);
	KUNIT_EXPECT_NULL(test, td_ids_move(h, nb, bits));
	KUNIT_EXPECT_EQ(test, td_ids_bits(h, h->nr), bits);
	for (i = 0; i < TD_IDS_N; i++)
		KUNIT_EXPECT_EQ(test, td_ids_has(h, &t[i]), i != 7);

	for (i = 0; i < TD_IDS_N; i++)
		if (i != 7)
			td_ids_unlink(h, &t[i]);
	td_ids_unlink(h, again);
	KUNIT_EXPECT_EQ(test, h->nr, 0);
	/* Empty: back into the hash's own buckets; the array is the caller's. */
	KUNIT_EXPECT_EQ(test, td_ids_bits(h, 0), TD_IDS_MIN_BITS);
	old = td_ids_move(h, NULL, TD_IDS_MIN_BITS);
	KUNIT_EXPECT_PTR_EQ(test, old, nb);
	KUNIT_EXPECT_PTR_EQ(test, h->bucket, &h->first[0]);
	kvfree(old);
	td_ids_link(h, &t[0]);
	KUNIT_EXPECT_TRUE(test, td_ids_has(h, &t[0]));
	td_ids_unlink(h, &t[0]);
	td_ids_free(h);
}

static void td_resize(struct td_kunit *k)
{
	unsigned int bits = td_ids_bits(&k->p.ids, k->p.ids.nr);
	struct tdispatch_task **nb = NULL;

	if (bits == k->p.ids.bits)
		return;
	if (bits > TD_IDS_MIN_BITS) {
		nb = kvcalloc(1U << bits, sizeof(*nb), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(k->test, nb);
	}
	kvfree(td_ids_move(&k->p.ids, nb, bits));
}

/*
 * The id hash grows past two tasks a bucket and shrinks back when they go,
 * with tasks in every state: pending, in flight, waiting and delayed.
 */
static void td_test_ids_resize(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 1024, 4);
	struct tdispatch_task *w;
	unsigned int i, nr = 600;
	struct td_batch b;

	for (i = 1; i <= nr; i++)
		td_add(k, i, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2, 3, 4));
	w = td_add(k, 2, 100);
	for (i = 1; i <= 10; i++)
		td_add_later(k, i, 1000, 100);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, TD_IDS_MIN_BITS);
	td_resize(k);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, order_base_2(nr + 11));
	KUNIT_EXPECT_PTR_NE(test, k->p.ids.bucket, &k->p.ids.first[0]);
	for (i = 1; i <= nr; i++) {
		KUNIT_EXPECT_NOT_NULL(test, td_pending_lookup(&k->p, i));
		if (i <= 10)
			KUNIT_EXPECT_NOT_NULL(test, td_pending_lookup_delayed(&k->p, i));
	}
	KUNIT_EXPECT_PTR_EQ(test, td_pending_waiter(&k->p, 2), w);
	td_check(k);
	/* Between one in four and two a bucket: no change. */
	td_resize(k);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, order_base_2(nr + 11));
	/* Below one in four: a smaller allocated array. */
	for (i = 100; i <= nr; i++)
		td_cancel(k, i);
	td_resize(k);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, order_base_2(99 + 11));
	KUNIT_EXPECT_PTR_NE(test, k->p.ids.bucket, &k->p.ids.first[0]);
	td_check(k);
	/* The in-flight batch ends: its waiter moves up, in the new buckets. */
	td_complete(k, &b, TDISPATCH_OUTCOME_DONE);
	td_expect_lookup(k, 2, w);
	KUNIT_EXPECT_EQ(test, w->state, TD_TASK_PENDING);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
	td_resize(k);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, TD_IDS_MIN_BITS);
	KUNIT_EXPECT_PTR_EQ(test, k->p.ids.bucket, &k->p.ids.first[0]);
	td_add(k, 7, 200);
	td_expect_lookup(k, 7, list_first_entry(&k->p.order, struct tdispatch_task, order));
	td_pending_free(&k->p);
}

static struct kunit_case td_ids_cases[] = {
	KUNIT_CASE(td_ids_test_link_move),
	KUNIT_CASE(td_test_ids_resize),
	{}
};

TD_SUITE(ids);

kunit_test_suites(&td_ids_suite);

MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests of tdispatch's id hash");
