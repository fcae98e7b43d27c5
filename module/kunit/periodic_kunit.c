// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of periodic registrations as pure state (periodic.c): the
 * interval doubling on timeouts and failures up to its bound, resetting on
 * success, and skipped turns.  Callers pass "now": nothing sleeps.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/string.h>

#include "../periodic.h"

#define TD_T0		(10 * NSEC_PER_SEC)	/* an arbitrary now */

/* Periodic registrations */

#define TD_P		1000	/* period */
#define TD_TIMEOUT	300
#define TD_BOUND	8

struct td_periodic_counts {
	u64 runs, successes, timeouts, failures, skipped;
};

static void td_expect_counts(struct kunit *test, const struct td_periodic *pr,
			     struct td_periodic_counts c)
{
	KUNIT_EXPECT_EQ(test, pr->runs, c.runs);
	KUNIT_EXPECT_EQ(test, pr->successes, c.successes);
	KUNIT_EXPECT_EQ(test, pr->timeouts, c.timeouts);
	KUNIT_EXPECT_EQ(test, pr->failures, c.failures);
	KUNIT_EXPECT_EQ(test, pr->skipped, c.skipped);
}

/* Nothing to do 1 ns before @at; a run starts at @at. */
static void td_expect_run_at(struct kunit *test, struct td_periodic *pr, ktime_t at)
{
	KUNIT_EXPECT_EQ(test, td_periodic_when(pr), at);
	KUNIT_EXPECT_EQ(test, td_periodic_tick(pr, at - 1), TD_PERIODIC_NONE);
	KUNIT_EXPECT_FALSE(test, pr->running);
	KUNIT_EXPECT_EQ(test, td_periodic_tick(pr, at), TD_PERIODIC_RUN);
	KUNIT_EXPECT_TRUE(test, pr->running);
	KUNIT_EXPECT_FALSE(test, pr->timed_out);
	KUNIT_EXPECT_EQ(test, pr->run_deadline, at + pr->timeout_ns);
	KUNIT_EXPECT_EQ(test, pr->next, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, td_periodic_when(pr), at + pr->timeout_ns);
}

static void td_test_periodic_due(struct kunit *test)
{
	struct td_periodic pr;
	int payload;

	td_periodic_init(&pr, 7, TD_P, TD_TIMEOUT, TD_BOUND, &payload, TD_T0);
	KUNIT_EXPECT_EQ(test, pr.id, 7);
	KUNIT_EXPECT_PTR_EQ(test, pr.payload, (void *)&payload);
	KUNIT_EXPECT_EQ(test, pr.interval_ns, TD_P);
	KUNIT_EXPECT_EQ(test, pr.max_interval_ns, TD_P * TD_BOUND);
	td_expect_run_at(test, &pr, TD_T0);
	/* Running, not timed out: nothing until the timeout. */
	KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, TD_T0 + TD_TIMEOUT - 1),
			TD_PERIODIC_NONE);
	td_periodic_ended(&pr, TDISPATCH_RESULT_SUCCESS, TD_T0 + 100);
	KUNIT_EXPECT_FALSE(test, pr.running);
	KUNIT_EXPECT_EQ(test, pr.next, TD_T0 + 100 + TD_P);
	td_expect_run_at(test, &pr, TD_T0 + 100 + TD_P);
	td_expect_counts(test, &pr, (struct td_periodic_counts){
		.runs = 2, .successes = 1 });
}

/* Each timeout doubles the interval up to period * bound; SUCCESS resets. */
static void td_test_periodic_timeout_backoff(struct kunit *test)
{
	static const u64 intervals[] = { TD_P, 2 * TD_P, 4 * TD_P, 8 * TD_P, 8 * TD_P };
	struct td_periodic pr;
	ktime_t start = TD_T0, timeout;
	unsigned int i;

	td_periodic_init(&pr, 1, TD_P, TD_TIMEOUT, TD_BOUND, NULL, TD_T0);
	for (i = 0; i + 1 < ARRAY_SIZE(intervals); i++) {
		KUNIT_EXPECT_EQ(test, pr.interval_ns, intervals[i]);
		td_expect_run_at(test, &pr, start);
		timeout = start + TD_TIMEOUT;
		KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, timeout), TD_PERIODIC_NONE);
		KUNIT_EXPECT_TRUE(test, pr.timed_out);
		KUNIT_EXPECT_EQ(test, pr.interval_ns, intervals[i + 1]);
		start = timeout + intervals[i + 1];
		KUNIT_EXPECT_EQ(test, pr.next, start);
		KUNIT_EXPECT_EQ(test, td_periodic_when(&pr), start);
		/* Ending late counts nothing more and changes nothing. */
		td_periodic_ended(&pr, i % 2 ? TDISPATCH_RESULT_SUCCESS :
				  TDISPATCH_RESULT_CONGESTION, timeout + 1);
		KUNIT_EXPECT_FALSE(test, pr.running);
		KUNIT_EXPECT_EQ(test, pr.interval_ns, intervals[i + 1]);
		KUNIT_EXPECT_EQ(test, pr.next, start);
	}
	td_expect_run_at(test, &pr, start);
	td_periodic_ended(&pr, TDISPATCH_RESULT_SUCCESS, start + 10);
	KUNIT_EXPECT_EQ(test, pr.interval_ns, TD_P);
	KUNIT_EXPECT_EQ(test, pr.next, start + 10 + TD_P);
	td_expect_counts(test, &pr, (struct td_periodic_counts){
		.runs = i + 1, .successes = 1, .timeouts = i });
}

/* What each result does to the interval, starting from the period. */
static void td_test_periodic_results(struct kunit *test)
{
	static const struct {
		int result;
		u64 interval;
	} steps[] = {
		{ TDISPATCH_RESULT_CONGESTION, 2 * TD_P },
		{ TDISPATCH_RESULT_TRANSIENT, 4 * TD_P },
		{ TDISPATCH_RESULT_PERMANENT, 4 * TD_P },
		{ -1, 4 * TD_P },
		{ TDISPATCH_RESULT_TRANSIENT, 8 * TD_P },
		{ TDISPATCH_RESULT_CONGESTION, 8 * TD_P },
		{ TDISPATCH_RESULT_SUCCESS, TD_P },
		{ TDISPATCH_RESULT_PERMANENT, TD_P },
	};
	struct td_periodic pr;
	ktime_t start = TD_T0;
	unsigned int i;

	td_periodic_init(&pr, 1, TD_P, TD_TIMEOUT, TD_BOUND, NULL, TD_T0);
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		td_expect_run_at(test, &pr, start);
		td_periodic_ended(&pr, steps[i].result, start + 50);
		KUNIT_EXPECT_EQ_MSG(test, pr.interval_ns, steps[i].interval, "step %u", i);
		start += 50 + steps[i].interval;
		KUNIT_EXPECT_EQ(test, pr.next, start);
	}
	td_expect_counts(test, &pr, (struct td_periodic_counts){
		.runs = 8, .successes = 1, .failures = 7 });
}

/* A bound that is not a power of two caps the doubling, not a step. */
static void td_test_periodic_cap(struct kunit *test)
{
	static const u64 intervals[] = { 2 * TD_P, 3 * TD_P, 3 * TD_P };
	const u64 huge = KTIME_MAX / 4;
	struct td_periodic pr;
	unsigned int i;

	td_periodic_init(&pr, 1, TD_P, TD_TIMEOUT, 3, NULL, TD_T0);
	for (i = 0; i < ARRAY_SIZE(intervals); i++) {
		KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, td_periodic_when(&pr)),
				TD_PERIODIC_RUN);
		td_periodic_ended(&pr, TDISPATCH_RESULT_TRANSIENT, pr.run_deadline - 1);
		KUNIT_EXPECT_EQ(test, pr.interval_ns, intervals[i]);
	}
	td_periodic_init(&pr, 1, TD_P, TD_TIMEOUT, 1, NULL, TD_T0);
	KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, TD_T0), TD_PERIODIC_RUN);
	td_periodic_ended(&pr, TDISPATCH_RESULT_CONGESTION, TD_T0 + 1);
	KUNIT_EXPECT_EQ(test, pr.interval_ns, TD_P);
	/* Near the top of ktime_t: no overflow, and times saturate. */
	KUNIT_ASSERT_TRUE(test, td_periodic_valid(huge, U64_MAX, 4));
	td_periodic_init(&pr, 1, huge, U64_MAX, 4, NULL, TD_T0);
	for (i = 0; i < 3; i++) {
		ktime_t at = pr.next;

		KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, at), TD_PERIODIC_RUN);
		KUNIT_EXPECT_EQ(test, pr.run_deadline, KTIME_MAX);
		td_periodic_ended(&pr, TDISPATCH_RESULT_CONGESTION, at);
	}
	KUNIT_EXPECT_EQ(test, pr.interval_ns, 4 * huge);
	KUNIT_EXPECT_EQ(test, pr.next, KTIME_MAX);
}

/* A timed-out run still going when the next falls due: that turn is skipped. */
static void td_test_periodic_skipped(struct kunit *test)
{
	const ktime_t timeout = TD_T0 + TD_TIMEOUT;
	const ktime_t due = timeout + 2 * TD_P;
	struct td_periodic pr;

	td_periodic_init(&pr, 1, TD_P, TD_TIMEOUT, TD_BOUND, NULL, TD_T0);
	KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, TD_T0), TD_PERIODIC_RUN);
	KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, timeout - 1), TD_PERIODIC_NONE);
	KUNIT_EXPECT_FALSE(test, pr.timed_out);
	KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, timeout), TD_PERIODIC_NONE);
	KUNIT_EXPECT_TRUE(test, pr.timed_out);
	KUNIT_EXPECT_EQ(test, td_periodic_when(&pr), due);
	KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, due - 1), TD_PERIODIC_NONE);
	KUNIT_EXPECT_EQ(test, pr.skipped, 0);
	KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, due), TD_PERIODIC_NONE);
	KUNIT_EXPECT_EQ(test, pr.skipped, 1);
	KUNIT_EXPECT_EQ(test, td_periodic_when(&pr), due + 2 * TD_P);
	/* Ticked late, the next one is an interval from then. */
	KUNIT_EXPECT_EQ(test, td_periodic_tick(&pr, due + 2 * TD_P + 5), TD_PERIODIC_NONE);
	KUNIT_EXPECT_EQ(test, pr.skipped, 2);
	KUNIT_EXPECT_EQ(test, td_periodic_when(&pr), due + 4 * TD_P + 5);
	td_periodic_ended(&pr, TDISPATCH_RESULT_SUCCESS, due + 3 * TD_P);
	KUNIT_EXPECT_EQ(test, pr.interval_ns, 2 * TD_P);
	td_expect_run_at(test, &pr, due + 4 * TD_P + 5);
	td_expect_counts(test, &pr, (struct td_periodic_counts){
		.runs = 2, .timeouts = 1, .skipped = 2 });
}

static void td_test_periodic_valid(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, td_periodic_valid(TD_P, TD_TIMEOUT, TD_BOUND));
	KUNIT_EXPECT_TRUE(test, td_periodic_valid(1, 1, 1));
	KUNIT_EXPECT_FALSE(test, td_periodic_valid(0, TD_TIMEOUT, TD_BOUND));
	KUNIT_EXPECT_FALSE(test, td_periodic_valid(TD_P, 0, TD_BOUND));
	KUNIT_EXPECT_FALSE(test, td_periodic_valid(TD_P, TD_TIMEOUT, 0));
	KUNIT_EXPECT_TRUE(test, td_periodic_valid(KTIME_MAX, TD_TIMEOUT, 1));
	KUNIT_EXPECT_FALSE(test, td_periodic_valid(KTIME_MAX, TD_TIMEOUT, 2));
	KUNIT_EXPECT_FALSE(test, td_periodic_valid(U64_MAX / 2 + 1, TD_TIMEOUT, 2));
	KUNIT_EXPECT_FALSE(test, td_periodic_valid(U64_MAX, TD_TIMEOUT, UINT_MAX));
}

static struct kunit_case td_periodic_cases[] = {
	KUNIT_CASE(td_test_periodic_due),
	KUNIT_CASE(td_test_periodic_timeout_backoff),
	KUNIT_CASE(td_test_periodic_results),
	KUNIT_CASE(td_test_periodic_cap),
	KUNIT_CASE(td_test_periodic_skipped),
	KUNIT_CASE(td_test_periodic_valid),
	{}
};

static struct kunit_suite td_periodic_suite = {
	.name = "tdispatch_periodic",
	.test_cases = td_periodic_cases,
};

kunit_test_suite(td_periodic_suite);

MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
MODULE_DESCRIPTION("KUnit tests of the tdispatch periodic registrations");
