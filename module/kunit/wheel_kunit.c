// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the timing wheel on its own (wheel.c): entries that are
 * nothing but a struct td_wheel_node and an id, as any user of the unit
 * embeds it.  delayed_kunit.c tests it as the pending set uses it.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/slab.h>

#include "../wheel.h"

#define TD_MS		NSEC_PER_MSEC

struct td_entry {
	struct td_wheel_node node;
	unsigned int id;
	bool in;
};

struct td_wheel_kunit {
	struct kunit *test;
	struct td_wheel w;
	u64 last_due;		/* of the entry popped last */
	u64 last_seq;
	unsigned int popped;
};

static struct td_wheel_kunit *td_wheel_setup(struct kunit *test)
{
	struct td_wheel_kunit *k = kunit_kzalloc(test, sizeof(*k), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, k);
	k->test = test;
	td_wheel_init(&k->w);
	return k;
}

static void td_wheel_put(struct td_wheel_kunit *k, struct td_entry *e, u64 due)
{
	e->node.due = due;
	e->in = true;
	td_wheel_add(&k->w, &e->node);
}

/*
 * Move time to @now and pop what is due: never an entry before its time,
 * in order of due time and then of arrival, and none left due after.
 */
static void td_wheel_pop(struct td_wheel_kunit *k, u64 now)
{
	struct td_wheel_node *n;

	td_wheel_advance(&k->w, now);
	while ((n = td_wheel_first(&k->w)) && n->due <= now) {
		struct td_entry *e = container_of(n, struct td_entry, node);

		KUNIT_EXPECT_TRUE(k->test, e->in);
		if (k->popped)
			KUNIT_EXPECT_TRUE(k->test, n->due > k->last_due ||
					  (n->due == k->last_due && n->seq > k->last_seq));
		k->last_due = n->due;
		k->last_seq = n->seq;
		k->popped++;
		td_wheel_del(&k->w, n);
		e->in = false;
	}
	/* Never later than the first due time, or popping would be late. */
	if (n)
		KUNIT_EXPECT_GT(k->test, n->due, now);
}

/* One entry per level, and one beyond the top: each out at its time. */
static void td_wheel_test_levels(struct kunit *test)
{
	static const u64 due[] = {
		3 * TD_MS, 500 * TD_MS, 30ULL * NSEC_PER_SEC, 3600ULL * NSEC_PER_SEC,
		30ULL * 86400 * NSEC_PER_SEC, 5ULL * 365 * 86400 * NSEC_PER_SEC,
	};
	struct td_wheel_kunit *k = td_wheel_setup(test);
	struct td_entry e[ARRAY_SIZE(due)] = { };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(due); i++)
		td_wheel_put(k, &e[i], due[i]);
	for (i = 0; i < ARRAY_SIZE(due); i++) {
		unsigned int steps = 0;
		u64 next;

		/* Each step may only move entries nearer, until the time itself. */
		while ((next = td_wheel_next(&k->w)) < due[i]) {
			KUNIT_ASSERT_LT(test, steps++, 2 * TD_WHEEL_LEVELS);
			td_wheel_pop(k, next);
		}
		KUNIT_EXPECT_EQ(test, next, due[i]);
		td_wheel_pop(k, due[i] - 1);
		KUNIT_EXPECT_TRUE(test, e[i].in);
		td_wheel_pop(k, due[i]);
		KUNIT_EXPECT_FALSE(test, e[i].in);
	}
	KUNIT_EXPECT_EQ(test, k->popped, ARRAY_SIZE(due));
	KUNIT_EXPECT_EQ(test, td_wheel_next(&k->w), U64_MAX);
	KUNIT_EXPECT_NULL(test, td_wheel_any(&k->w));
}

/*
 * Random due times over every level, random cancels and random steps of
 * time: every entry not cancelled comes out once, in order, on time.
 */
static void td_wheel_test_random(struct kunit *test)
{
	struct td_wheel_kunit *k = td_wheel_setup(test);
	unsigned int i, nr = 2000, cancelled = 0;
	struct rnd_state rnd;
	struct td_entry *e;
	u64 now = 0;

	prandom_seed_state(&rnd, 42);
	e = kunit_kcalloc(test, nr, sizeof(*e), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, e);
	for (i = 0; i < nr; i++) {
		unsigned int shift = prandom_u32_state(&rnd) % 40;

		e[i].id = i;
		td_wheel_put(k, &e[i], (u64)prandom_u32_state(&rnd) << (shift % 24) |
				       (1ULL << shift));
	}
	for (i = 0; i < nr; i += 7) {
		td_wheel_del(&k->w, &e[i].node);
		e[i].in = false;
		cancelled++;
	}
	while (td_wheel_next(&k->w) != U64_MAX) {
		u64 next = td_wheel_next(&k->w);

		now = max(now, next) + prandom_u32_state(&rnd) % (2 * TD_MS);
		td_wheel_pop(k, now);
	}
	KUNIT_EXPECT_EQ(test, k->popped + cancelled, nr);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_FALSE(test, e[i].in);
}

/* td_wheel_any() finds every entry, wherever it waits, for emptying. */
static void td_wheel_test_any(struct kunit *test)
{
	struct td_wheel_kunit *k = td_wheel_setup(test);
	struct td_entry e[4] = { };
	struct td_wheel_node *n;
	unsigned int i = 0;

	td_wheel_put(k, &e[0], 100);
	td_wheel_put(k, &e[1], 10 * TD_MS);
	td_wheel_put(k, &e[2], 10ULL * NSEC_PER_SEC);
	td_wheel_put(k, &e[3], 10 * TD_MS);
	while ((n = td_wheel_any(&k->w))) {
		KUNIT_ASSERT_LT(test, i++, ARRAY_SIZE(e));
		td_wheel_del(&k->w, n);
		container_of(n, struct td_entry, node)->in = false;
	}
	KUNIT_EXPECT_EQ(test, i, ARRAY_SIZE(e));
	KUNIT_EXPECT_EQ(test, td_wheel_next(&k->w), U64_MAX);
}

static struct kunit_case td_wheel_unit_cases[] = {
	KUNIT_CASE(td_wheel_test_levels),
	KUNIT_CASE(td_wheel_test_random),
	KUNIT_CASE(td_wheel_test_any),
	{}
};

static struct kunit_suite td_wheel_unit_suite = {
	.name = "tdispatch_wheel_unit",
	.test_cases = td_wheel_unit_cases,
};

kunit_test_suite(td_wheel_unit_suite);

MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests of tdispatch's timing wheel on its own");
