// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the shaper's hold-off after failures and the rate
 * limit's tokens (shaper.c).  Callers pass "now": nothing sleeps.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/string.h>

#include "../shaper.h"

#define TD_T0		(10 * NSEC_PER_SEC)	/* an arbitrary now */

/* The shaper */

struct td_shaper_case {
	const char *name;
	enum tdispatch_result result;
	u64 congestion_ns;
	u64 transient_ns;
	u64 holdoff_ns;		/* what recording @result starts */
};

static const struct td_shaper_case td_shaper_params[] = {
	{ "congestion", TDISPATCH_RESULT_CONGESTION, 1000, 5000, 1000 },
	{ "transient", TDISPATCH_RESULT_TRANSIENT, 5000, 2000, 2000 },
	{ "congestion-capped", TDISPATCH_RESULT_CONGESTION, 2 * TDISPATCH_MAX_DELAY_NS, 0,
	  TDISPATCH_MAX_DELAY_NS },
	{ "transient-capped", TDISPATCH_RESULT_TRANSIENT, 0, U64_MAX, TDISPATCH_MAX_DELAY_NS },
	{ "success", TDISPATCH_RESULT_SUCCESS, 1000, 1000, 0 },
	{ "permanent", TDISPATCH_RESULT_PERMANENT, 1000, 1000, 0 },
};

static void td_shaper_case_desc(const struct td_shaper_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(td_shaper, td_shaper_params, td_shaper_case_desc);

/* holdoff(t0 + x) is D - x for x < D and 0 from D on. */
static void td_test_shaper_holdoff(struct kunit *test)
{
	const struct td_shaper_case *c = test->param_value;
	const u64 d = c->holdoff_ns;
	const u64 at[] = { 0, 1, d / 2, d - 1, d, d + 1, 2 * d };
	struct td_shaper s;
	unsigned int i;

	td_shaper_init(&s, c->congestion_ns, c->transient_ns);
	KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, 0), 0);
	KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0), 0);
	td_shaper_record(&s, c->result, TD_T0);
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		if (at[i] > 2 * d)	/* d - 1 when d is 0 */
			continue;
		KUNIT_EXPECT_EQ_MSG(test, td_shaper_holdoff(&s, TD_T0 + at[i]),
				    at[i] < d ? d - at[i] : 0, "at t0 + %llu", at[i]);
	}
}

static void td_test_shaper_congestion_first(struct kunit *test)
{
	struct td_shaper s;

	td_shaper_init(&s, 1000, 3000);
	td_shaper_record(&s, TDISPATCH_RESULT_TRANSIENT, TD_T0);
	td_shaper_record(&s, TDISPATCH_RESULT_CONGESTION, TD_T0);
	KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0), 1000);
	KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 400), 600);
	KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 1000), 2000);
	KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 2999), 1);
	KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 3000), 0);
}

/* The rate limit: full at first, a token a millisecond at 1000/s. */
static void td_test_rate(struct kunit *test)
{
	struct td_rate b = {};
	ktime_t when = 0;

	td_rate_set(&b, 1000, 10, 0);
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 0, 64, 1, &when), 10);
	td_rate_take(&b, 10);
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 0, 64, 1, &when), 0);
	KUNIT_EXPECT_EQ(test, when, NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 5 * NSEC_PER_MSEC, 64, 1, &when), 5);
	td_rate_take(&b, 3);
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 5 * NSEC_PER_MSEC, 64, 1, &when), 2);
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 5 * NSEC_PER_MSEC, 1, 1, &when), 1);
	/* A batch of 4 waits for 4 tokens: 2 more, 2 ms away. */
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 5 * NSEC_PER_MSEC, 64, 4, &when), 0);
	KUNIT_EXPECT_EQ(test, when, 7 * NSEC_PER_MSEC);
	/* Half a token saved: the next whole one is half a millisecond away. */
	td_rate_take(&b, 2);
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 5 * NSEC_PER_MSEC + NSEC_PER_MSEC / 2, 64, 0,
					    &when), 0);
	KUNIT_EXPECT_EQ(test, when, 6 * NSEC_PER_MSEC);
	/* Never more than the burst, however long it was quiet. */
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 100 * NSEC_PER_SEC, 64, 1, &when), 10);
	/* Needing more than the burst is needing the burst. */
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 100 * NSEC_PER_SEC, 64, 99, &when), 10);
	/* A smaller burst caps what was saved; rate 0 lifts the limit. */
	td_rate_set(&b, 1000, 4, 100 * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 100 * NSEC_PER_SEC, 64, 1, &when), 4);
	td_rate_set(&b, 0, 4, 100 * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, td_rate_allow(&b, 100 * NSEC_PER_SEC, 64, 1, &when), 64);
}

static void td_test_shaper_restart(struct kunit *test)
{
	static const enum tdispatch_result results[] = {
		TDISPATCH_RESULT_CONGESTION, TDISPATCH_RESULT_TRANSIENT,
	};
	struct td_shaper s;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(results); i++) {
		td_shaper_init(&s, 1000, 1000);
		td_shaper_record(&s, results[i], TD_T0);
		KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 600), 400);
		td_shaper_record(&s, results[i], TD_T0 + 600);
		KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 600), 1000);
		KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 1500), 100);
		KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 1600), 0);
		/* After one has run out, a new failure starts afresh. */
		td_shaper_record(&s, results[i], TD_T0 + 5000);
		KUNIT_EXPECT_EQ(test, td_shaper_holdoff(&s, TD_T0 + 5000), 1000);
	}
}

static struct kunit_case td_shaper_cases[] = {
	KUNIT_CASE_PARAM(td_test_shaper_holdoff, td_shaper_gen_params),
	KUNIT_CASE(td_test_shaper_congestion_first),
	KUNIT_CASE(td_test_shaper_restart),
	KUNIT_CASE(td_test_rate),
	{}
};

static struct kunit_suite td_shaper_suite = {
	.name = "tdispatch_shaper",
	.test_cases = td_shaper_cases,
};

kunit_test_suite(td_shaper_suite);

MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests of the tdispatch shaper and rate limit");
