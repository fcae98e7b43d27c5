// SPDX-License-Identifier: GPL-2.0
/*
 * tdispatch life test: items submitted again while they wait or run,
 * per-task results, attempts, expedite and the rate limit, through the
 * exported API.
 * Drives the exported API with a recording processor, as Eureka's batcher
 * tests do with their RecordingProcessor, on every kernel (KUnit is not
 * built into the stock ones).  The cases run at load; their KTAP is in
 * /sys/kernel/debug/tdispatch_life_test/results.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/stop_machine.h>
#include <linux/tdispatch.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>

/* The most max_buffer and burst may be, as the API documents them. */
#define MAX_BUFFER_LIMIT	BIT(20)

#include "recorder.h"

/* Calls of tdispatch_batch_set_result() with bad arguments that failed. */
static atomic_t bad_marks;

/* A batch of four: the second task retries, the third fails, the rest done. */
static enum tdispatch_result mark_some(struct recorder *r, struct tdispatch_batch *b,
				       unsigned int nth)
{
	if (b->nr != 4)
		return TDISPATCH_RESULT_SUCCESS;
	tdispatch_batch_set_result(b, 1, TDISPATCH_RESULT_CONGESTION);
	tdispatch_batch_set_result(b, 1, TDISPATCH_RESULT_TRANSIENT);
	tdispatch_batch_set_result(b, 2, TDISPATCH_RESULT_PERMANENT);
	if (tdispatch_batch_set_result(b, 4, TDISPATCH_RESULT_PERMANENT) == -EINVAL)
		atomic_inc(&bad_marks);
	if (tdispatch_batch_set_result(b, 0, TDISPATCH_NR_RESULTS) == -EINVAL)
		atomic_inc(&bad_marks);
	return TDISPATCH_RESULT_SUCCESS;
}

static void test_per_task_results_retry_only_what_failed(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i;

	cfg.max_batch = 4;
	cfg.max_delay_ns = 20 * NSEC_PER_MSEC;
	/* Longer than max_delay: the retry falls due while it holds. */
	cfg.transient_delay_ns = 100 * NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	atomic_set(&bad_marks, 0);
	r->gated = true;
	r->decide = mark_some;
	T_EXPECT_EQ(t, submit(r, 100, 100), 0);
	gate_wait_entered(t, r);
	for (i = 1; i <= 4; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	td_sync(t, r);
	complete(&r->gate);
	if (rec_wait_released(t, r, 5)) {
		/* The gate's batch, the four, then the retry of id 2 alone. */
		T_EXPECT_EQ(t, r->nr_rec, 3);
		T_EXPECT_EQ(t, r->rec[1].nr, 4);
		T_EXPECT_EQ(t, r->rec[2].nr, 1);
		T_EXPECT_EQ(t, r->rec[2].first_id, 2);
		T_EXPECT_EQ(t, r->rec[2].first_attempts, 1);
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 4);
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_FAILED], 1);
		T_EXPECT_EQ(t, atomic_read(&bad_marks), 2);
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.retries, 1);
		T_EXPECT_EQ(t, st.failed, 1);
		/* The batch said SUCCESS; the shaper heard its worst task. */
		T_EXPECT_EQ(t, st.results[TDISPATCH_RESULT_SUCCESS], 3);
		T_EXPECT_EQ(t, st.holdoffs, 1);
		T_EXPECT(t, ktime_ms_delta(r->rec[2].start, r->rec[1].end) >= 100);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static enum tdispatch_result transient_always(struct recorder *r, struct tdispatch_batch *b,
					      unsigned int nth)
{
	return TDISPATCH_RESULT_TRANSIENT;
}

static void test_max_attempts_end_exhausted(struct tcase *t)
{
	struct tdispatch_submit_opts once = { .max_attempts = 1 };
	struct tdispatch_submit_opts bad = { .max_attempts = TDISPATCH_MAX_ATTEMPTS + 1 };
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;

	cfg.max_attempts = 3;
	cfg.transient_delay_ns = NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = transient_always;
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 2, NULL, &bad, GFP_KERNEL), -EINVAL);
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 2, (void *)2, &once, GFP_KERNEL), 0);
	if (rec_wait_released(t, r, 2)) {
		/* Three attempts of id 1, one of id 2. */
		T_EXPECT_EQ(t, r->nr_rec, 4);
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_EXHAUSTED], 2);
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.exhausted, 2);
		T_EXPECT_EQ(t, st.failed, 2);
		T_EXPECT_EQ(t, st.retries, 2);
		T_EXPECT_EQ(t, st.rejected, 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/* tdispatch_expedite_key() lets watchers in 256 at a time. */
#define TD_MANY_WATCHERS	600

static void test_expedite_lets_a_delayed_task_in(struct tcase *t)
{
	struct tdispatch_submit_opts watch = { .watch = true, .watch_key = 9 };
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	ktime_t later;
	unsigned int i;

	cfg.max_delayed = 1024;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	later = ktime_add_ns(ktime_get(), 60 * NSEC_PER_SEC);
	T_EXPECT_EQ(t, tdispatch_submit_delayed(r->d, 5, (void *)5, later, 0, GFP_KERNEL), 0);
	T_EXPECT_EQ(t, tdispatch_expedite(r->d, 6), -ENOENT);
	T_EXPECT_EQ(t, tdispatch_expedite(r->d, 5), 0);
	if (rec_wait_released(t, r, 1)) {
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 1);
		T_EXPECT_EQ(t, r->payload_of[5], 5);
	}
	T_EXPECT_EQ(t, tdispatch_expedite(r->d, 5), -ENOENT);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.expedited, 1);
	T_EXPECT_EQ(t, st.delayed, 0);

	/* Two tasks watch key 9 (one of them due at once, so not really). */
	watch.not_before = later;
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 6, (void *)6, &watch, GFP_KERNEL), 0);
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 7, (void *)7, &watch, GFP_KERNEL), 0);
	watch.not_before = 0;
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 8, (void *)8, &watch, GFP_KERNEL), 0);
	T_EXPECT_EQ(t, tdispatch_expedite_key(r->d, 10), -ENOENT);
	T_EXPECT_EQ(t, tdispatch_expedite_key(r->d, 9), 2);
	if (rec_wait_released(t, r, 4))
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 4);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.expedited, 3);
	T_EXPECT_EQ(t, st.key_expedites, 1);

	/*
	 * More watchers than one chunk of the expedite, most of them still on
	 * the input lists: one call lets every one in, counted once.
	 */
	watch.watch_key = 11;
	watch.not_before = later;
	for (i = 0; i < TD_MANY_WATCHERS; i++)
		T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 100 + i, (void *)1, &watch,
						     GFP_KERNEL), 0);
	T_EXPECT_EQ(t, tdispatch_expedite_key(r->d, 11), TD_MANY_WATCHERS);
	if (rec_wait_released(t, r, 4 + TD_MANY_WATCHERS))
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 4 + TD_MANY_WATCHERS);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.expedited, 3 + TD_MANY_WATCHERS);
	T_EXPECT_EQ(t, st.key_expedites, 2);
	T_EXPECT_EQ(t, st.delayed, 0);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * 40 tasks at 200 a second in bursts of 4: never faster than the bucket
 * lets them go; while it holds them they wait pending and still coalesce.
 */
static void test_rate_limit_paces_batches(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	ktime_t start;
	unsigned int i;

	cfg.max_batch = 4;
	cfg.rate = 200;
	cfg.burst = 4;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	start = ktime_get();
	for (i = 0; i < 40; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	if (rec_wait_released(t, r, 40)) {
		/* 4 at once, then 36 more at 5 ms each. */
		T_EXPECT(t, ktime_ms_delta(ktime_get(), start) >= 175);
		for (i = 0; i < min_t(unsigned int, r->nr_rec, MAX_RECORDS); i++)
			T_EXPECT(t, r->rec[i].nr <= 4);
	}
	tdispatch_get_stats(r->d, &st);
	T_EXPECT(t, st.throttled_ns > 0);
	T_EXPECT_EQ(t, st.rate, 200);
	T_EXPECT_EQ(t, st.burst, 4);

	/* One a second: what comes meanwhile waits, and coalesces. */
	T_EXPECT_EQ(t, tdispatch_set_rate(r->d, 1, MAX_BUFFER_LIMIT + 1), -EINVAL);
	T_EXPECT_EQ(t, tdispatch_set_rate(r->d, 1, 1), 0);
	T_EXPECT_EQ(t, submit(r, 50, 50), 0);
	for (i = 0; i < 5; i++)
		T_EXPECT_EQ(t, submit(r, 100, 100 + i), 0);
	td_sync(t, r);
	T_EXPECT_EQ(t, tdispatch_set_rate(r->d, 0, 0), 0);
	if (rec_wait_released(t, r, 46)) {
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_OVERRIDDEN], 4);
		T_EXPECT_EQ(t, r->payload_of[100], 104);
	}
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.rate, 0);
	T_EXPECT_EQ(t, st.burst, 4);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * TDISPATCH_RATE_BATCHES: 12 tasks at 10 batches a second, one at a time:
 * a batch of up to 4 takes one token, so they go in 3 or 4 batches (12
 * with tokens for tasks), paced by the tokens: 100 ms apart, less the
 * jitter of a batch's start after its cut.
 */
static void test_rate_in_batches_paces_whole_batches(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i, n;

	cfg.max_batch = 4;
	cfg.rate = 10;
	cfg.flags = TDISPATCH_RATE_BATCHES;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	for (i = 0; i < 12; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	if (rec_wait_released(t, r, 12)) {
		n = r->nr_rec;
		/* The first may hold what had come when a worker first looked. */
		T_EXPECT(t, n >= 3 && n <= 4);
		for (i = 1; i < n; i++)
			T_EXPECT(t, ktime_ms_delta(r->rec[i].start, r->rec[i - 1].start) >= 50);
	}
	tdispatch_get_stats(r->d, &st);
	T_EXPECT(t, st.throttled_ns > 0);
	T_EXPECT_EQ(t, st.rate, 10);
	T_EXPECT_EQ(t, st.burst, 1);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * A recorder for @cfg and @n items, with ids 0 to @n - 1, in *@itp, which
 * the caller frees; NULL if either could not be had.
 */
static struct recorder *items_start(struct tcase *t, const struct tdispatch_config *cfg,
				    unsigned int n, struct tdispatch_item **itp)
{
	struct tdispatch_item *it = kcalloc(n, sizeof(*it), GFP_KERNEL);
	struct recorder *r = it ? rec_start(t, cfg) : NULL;
	unsigned int i;

	if (!r) {
		kfree(it);
		return NULL;
	}
	for (i = 0; i < n; i++)
		tdispatch_item_init(&it[i], i, NULL);
	*itp = it;
	return r;
}

/*
 * Drain and destroy: every item submission was released once, unless it
 * merged into one waiting; @done of them were processed.
 */
static void item_finish(struct tcase *t, struct recorder *r, unsigned int merged,
			unsigned int done)
{
	struct tdispatch_stats st;

	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, r->released + merged, st.accepted);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DONE), done);
	T_EXPECT_EQ(t, atomic_read(&r->overlaps), 0);
	rec_free(r);
}

/*
 * Items: embedded, nothing allocated.  Submitted while processed, an item
 * runs once more after; submitted again while it waits, it merges (counted
 * accepted and overridden at once); ->release() once per time it leaves.
 */
static void test_item_submitted_while_processed_runs_again(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	struct tdispatch_item it;
	struct tdispatch_stats st;
	int i;

	if (!r)
		return;
	r->gated = true;
	tdispatch_item_init(&it, 7, NULL);
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it), 0);
	if (!T_EXPECT(t, wait_for_completion_timeout(&r->entered, WAIT_LIMIT)))
		goto out;
	/* In ->process() now: the first goes round again, the others merge. */
	for (i = 0; i < 3; i++)
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it), 0);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.accepted, 4);
	T_EXPECT_EQ(t, st.overridden, 2);
	complete(&r->gate);
	if (rec_wait_released(t, r, 2)) {
		T_EXPECT_EQ(t, r->nr_rec, 2);
		T_EXPECT_EQ(t, r->rec[1].first_id, 7);
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DONE), 2);
		tdispatch_get_stats(r->d, &st);
		check_stats(t, &st);
		T_EXPECT_EQ(t, st.done, 2);
	}
out:
	complete(&r->gate);
	item_finish(t, r, 2, 2);
	/* Free again once released: it may be submitted to another one. */
	T_EXPECT_EQ(t, READ_ONCE(it.task.item_state), 0);
}

static enum tdispatch_result transient_first(struct recorder *r, struct tdispatch_batch *b,
					     unsigned int nth)
{
	return nth ? TDISPATCH_RESULT_SUCCESS : TDISPATCH_RESULT_TRANSIENT;
}

/*
 * With no window and nothing in line, a worker takes items straight off
 * the input lists (worker.c).  Its batch counts in flight while it runs;
 * one that fails goes back to the head of the line as a cut one would,
 * ahead of a task and items submitted meanwhile; and once the line is
 * empty again, items go the express way once more.
 */
static void test_express_items_count_in_flight_and_retry_first(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_item *it;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i;

	cfg.max_batch = 16;
	cfg.transient_delay_ns = NSEC_PER_MSEC;
	r = items_start(t, &cfg, 8, &it);
	if (!r)
		return;
	r->gated = true;
	r->decide = transient_first;
	for (i = 0; i < 4; i++)
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[i]), 0);
	if (!T_EXPECT(t, wait_for_completion_timeout(&r->entered, WAIT_LIMIT)))
		goto out;
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	/*
	 * Item 0 is in the first batch, whatever else the worker took; the
	 * others wait on the lists, or in line if the acceptor passed.
	 */
	T_EXPECT(t, st.in_flight >= 1);
	T_EXPECT_EQ(t, st.in_flight + st.queued + st.pending, 4);
	T_EXPECT_EQ(t, tdispatch_run_item(r->d, &it[0]), -EBUSY);
	T_EXPECT_EQ(t, submit(r, 100, 0), 0);
	for (i = 4; i < 6; i++)
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[i]), 0);
	complete(&r->gate);
	if (rec_wait_released(t, r, 7)) {
		T_EXPECT_EQ(t, r->rec[0].result, TDISPATCH_RESULT_TRANSIENT);
		T_EXPECT_EQ(t, r->rec[1].first_id, 0);
		T_EXPECT_EQ(t, r->rec[1].first_attempts, 1);
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DONE), 7);
	}
	/* The line is empty: the next ones go the express way, and succeed. */
	for (i = 6; i < 8; i++)
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[i]), 0);
	rec_wait_released(t, r, 9);
out:
	complete(&r->gate);
	item_finish(t, r, 0, 9);
	kfree(it);
}

/*
 * ->release() may free an item's object, as a work function may free its
 * work_struct: an item not submitted again is not touched after it is
 * released (KASAN and the slab's poison see to it).
 */
static void test_release_may_free_an_items_object(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	struct tdispatch_item *it;
	unsigned int i;

	if (!r)
		return;
	r->free_payloads = 1;	/* rec_release() frees each payload: the item */
	for (i = 0; i < 64; i++) {
		it = kmalloc(sizeof(*it), GFP_KERNEL);
		if (!T_EXPECT(t, it))
			break;
		tdispatch_item_init(it, i, it);
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, it), 0);
	}
	rec_wait_released(t, r, i);
	item_finish(t, r, 0, i);
}

static void test_items_waiting_merge_and_stand_apart_from_tasks(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_item *it;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i, round;

	cfg.max_batch = 64;
	cfg.max_delay_ns = 10 * NSEC_PER_SEC;	/* they wait: nothing is cut */
	r = items_start(t, &cfg, 16, &it);
	if (!r)
		return;
	for (round = 0; round < 3; round++)
		for (i = 0; i < 16; i++)
			T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[i]), 0);
	/*
	 * A plain task of an item's id is a task of its own: it neither
	 * replaces the item nor merges into it, and cancelling the id finds
	 * the task only.
	 */
	T_EXPECT_EQ(t, submit(r, 3, 0x33), 0);
	td_sync(t, r);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.accepted, 49);
	T_EXPECT_EQ(t, st.overridden, 32);
	T_EXPECT_EQ(t, st.pending, 17);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 3), 0);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 3), -ENOENT);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_CANCELLED), 1);
	T_EXPECT(t, READ_ONCE(it[3].task.item_state));	/* still waiting */
	item_finish(t, r, 32, 16);
	for (i = 0; i < 16; i++)
		T_EXPECT_EQ(t, READ_ONCE(it[i].task.item_state), 0);
	kfree(it);
}

/*
 * Urgent items pass a rate limit that holds the line back: at one batch a
 * second, with the first batch's token spent, the urgent ones (one found
 * waiting, one new) go next, alone, ahead of older ones, and take no token.
 * tdispatch_item_make_urgent() makes one that waits urgent, and one that
 * does not urgent when next submitted.
 */
static void test_urgent_items_pass_the_rate_limit(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_item *it;
	struct recorder *r;
	unsigned int i;

	cfg.max_batch = 4;
	cfg.rate = 1;
	cfg.flags = TDISPATCH_RATE_BATCHES;
	r = items_start(t, &cfg, 10, &it);
	if (!r)
		return;
	r->gated = true;
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[0]), 0);
	if (!T_EXPECT(t, wait_for_completion_timeout(&r->entered, WAIT_LIMIT)))
		goto out;
	/* The one worker holds the first batch and its token. */
	for (i = 1; i < 8; i++)
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[i]), 0);
	/* Made urgent where it waits; idle, it is not run, but marked. */
	T_EXPECT(t, tdispatch_item_make_urgent(r->d, &it[6]));
	T_EXPECT(t, tdispatch_item_make_urgent(r->d, &it[6]));
	T_EXPECT(t, !tdispatch_item_make_urgent(r->d, &it[8]));
	T_EXPECT_EQ(t, tdispatch_submit_item_urgent(r->d, &it[6]), 0);
	/* Its next submission, whatever the call, is urgent. */
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[8]), 0);
	T_EXPECT_EQ(t, tdispatch_submit_item_urgent(r->d, &it[9]), 0);
	complete(&r->gate);
	if (rec_wait_released(t, r, 10)) {
		T_EXPECT_EQ(t, r->nr_rec, 4);
		T_EXPECT_EQ(t, r->rec[1].nr, 3);
		T_EXPECT_EQ(t, r->rec[1].first_id, 6);
		T_EXPECT_EQ(t, r->rec[2].first_id, 1);
		T_EXPECT(t, ktime_ms_delta(r->rec[2].start, r->rec[1].start) >= 500);
	}
out:
	complete(&r->gate);
	item_finish(t, r, 1, 10);
	for (i = 0; i < 10; i++)
		T_EXPECT_EQ(t, READ_ONCE(it[i].task.item_state), 0);
	kfree(it);
}

/*
 * Throttled with no window, a dispatcher is woken by no submission of an
 * item: with the token spent, the acceptor sleeps until the next one, and
 * input gathers meanwhile (the link watch's case: carrier events at any
 * rate, one pass a second).  The submissions are paced 20 ms apart, so
 * that each one, had it woken the acceptor, would most likely have been
 * drained before the next came to an empty input list: eight would wake
 * it about eight times.  An urgent pass between tokens leaves the
 * acceptor as it found it.
 */
static void test_throttled_input_wakes_no_one(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct tdispatch_item *it;
	struct recorder *r;
	unsigned int i;
	u64 wakeups;

	cfg.max_batch = 8;
	cfg.rate = 1;
	cfg.flags = TDISPATCH_RATE_BATCHES;
	r = items_start(t, &cfg, 9, &it);
	if (!r)
		return;
	/* The first batch spends the token. */
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[0]), 0);
	i = 1;
	if (!rec_wait_released(t, r, 1))
		goto out;
	tdispatch_get_stats(r->d, &st);
	wakeups = st.wakeups;
	for (; i < 9; i++) {
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[i]), 0);
		usleep_range(20000, 21000);
	}
	/*
	 * The first wakes it, to find the line throttled; a few more may
	 * come before it goes to sleep for the token, on a slow machine.
	 */
	tdispatch_get_stats(r->d, &st);
	T_EXPECT(t, st.wakeups - wakeups <= 4);
	if (!rec_wait_released(t, r, 9))
		goto out;
	T_EXPECT_EQ(t, r->nr_rec, 2);
	T_EXPECT_EQ(t, r->rec[1].nr, 8);
	/*
	 * An urgent pass past the limit leaves nothing waiting; what comes
	 * after it must still wake the acceptor, or wait for the next token.
	 */
	T_EXPECT_EQ(t, tdispatch_submit_item_urgent(r->d, &it[0]), 0);
	i++;
	if (!rec_wait_released(t, r, 10))
		goto out;
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[1]), 0);
	i++;
	if (rec_wait_released(t, r, 11))
		T_EXPECT_EQ(t, r->rec[3].first_id, 1);
out:
	item_finish(t, r, 0, i);
	kfree(it);
}

/*
 * tdispatch_run_now() and tdispatch_run_id(): batches in the caller's
 * context, whatever the window says, accounted for and released by the
 * time they return; an id a worker holds is not taken.
 */
static void test_run_now_processes_in_the_callers_context(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i;

	cfg.max_batch = 8;
	cfg.max_delay_ns = 10 * NSEC_PER_SEC;	/* no worker cuts the seven */
	r = rec_start(t, &cfg);
	if (!r)
		return;
	for (i = 1; i <= 6; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	T_EXPECT_EQ(t, submit(r, 10, 10), 0);
	T_EXPECT_EQ(t, tdispatch_run_id(r->d, 10), 1);
	T_EXPECT_EQ(t, READ_ONCE(r->released), 1);
	T_EXPECT_EQ(t, tdispatch_run_id(r->d, 10), 0);
	T_EXPECT_EQ(t, tdispatch_run_now(r->d), 6);
	T_EXPECT_EQ(t, READ_ONCE(r->released), 7);
	T_EXPECT_EQ(t, tdispatch_run_now(r->d), 0);
	T_EXPECT_EQ(t, r->nr_rec, 2);
	for (i = 0; i < 2; i++)
		T_EXPECT_EQ(t, r->rec[i].pid, current->pid);
	T_EXPECT_EQ(t, r->rec[0].first_id, 10);
	T_EXPECT_EQ(t, r->rec[1].first_id, 1);
	T_EXPECT_EQ(t, r->rec[1].nr, 6);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.done, 7);
	T_EXPECT_EQ(t, st.batches, 2);
	rec_finish(t, r, TDISPATCH_DRAIN);

	/* A worker holds id 7: neither its task nor the newer one is taken. */
	r = rec_start(t, &base_cfg);
	if (!r)
		return;
	r->gated = true;
	T_EXPECT_EQ(t, submit(r, 7, 1), 0);
	if (T_EXPECT(t, wait_for_completion_timeout(&r->entered, WAIT_LIMIT))) {
		T_EXPECT_EQ(t, tdispatch_run_id(r->d, 7), -EBUSY);
		T_EXPECT_EQ(t, submit(r, 7, 2), 0);
		T_EXPECT_EQ(t, tdispatch_run_id(r->d, 7), -EBUSY);
		T_EXPECT_EQ(t, tdispatch_run_now(r->d), 0);
	}
	complete(&r->gate);
	/* The newer one ran after the worker's, not in the caller's context. */
	if (rec_wait_released(t, r, 2))
		T_EXPECT_EQ(t, r->payload_of[7], 2);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * tdispatch_run_item(): an item, found by its address, never by its id,
 * runs in the caller's context; one a worker holds is left to it, and
 * goes round again if submitted meanwhile.
 */
static void test_run_item_finds_an_item_by_its_address(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r, *other;
	struct tdispatch_item *it;

	cfg.max_batch = 8;
	cfg.max_delay_ns = 10 * NSEC_PER_SEC;	/* no worker cuts them */
	r = items_start(t, &cfg, 2, &it);
	if (!r)
		return;
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[1]), 0);
	T_EXPECT_EQ(t, tdispatch_run_id(r->d, 1), 0);
	T_EXPECT_EQ(t, tdispatch_run_item(r->d, &it[0]), 0);
	/* Another dispatcher's pending item is not this one's to run. */
	other = rec_start(t, &cfg);
	if (other) {
		T_EXPECT_EQ(t, tdispatch_run_item(other->d, &it[1]), 0);
		item_finish(t, other, 0, 0);
	}
	T_EXPECT_EQ(t, tdispatch_run_item(r->d, &it[1]), 1);
	T_EXPECT_EQ(t, READ_ONCE(r->released), 1);
	T_EXPECT_EQ(t, tdispatch_run_item(r->d, &it[1]), 0);
	if (T_EXPECT_EQ(t, r->nr_rec, 1)) {
		T_EXPECT_EQ(t, r->rec[0].pid, current->pid);
		T_EXPECT_EQ(t, r->rec[0].first_id, 1);
	}
	item_finish(t, r, 0, 1);

	r = rec_start(t, &base_cfg);
	if (!r)
		goto out;
	r->gated = true;
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[0]), 0);
	if (T_EXPECT(t, wait_for_completion_timeout(&r->entered, WAIT_LIMIT))) {
		T_EXPECT_EQ(t, tdispatch_run_item(r->d, &it[0]), -EBUSY);
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[0]), 0);
		T_EXPECT_EQ(t, tdispatch_run_item(r->d, &it[0]), -EBUSY);
	}
	complete(&r->gate);
	rec_wait_released(t, r, 2);
	T_EXPECT_EQ(t, r->nr_rec, 2);
	item_finish(t, r, 0, 2);
out:
	kfree(it);
}

/* The lock that ->lock takes in the next case, and what ->unlock saw. */
static DEFINE_MUTEX(user_lock);
static unsigned int released_at_unlock, unlocked_batches;

static enum tdispatch_result locked_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	if (!mutex_is_locked(&user_lock))
		unlocked_batches++;
	return rec_process(d, b);
}

/* Completed when a worker comes to take the lock, if set. */
static struct completion *lock_wanted;

static void user_lock_take(struct tdispatch *d)
{
	struct completion *c = READ_ONCE(lock_wanted);

	if (c)
		complete(c);
	mutex_lock(&user_lock);
}

static void user_lock_drop(struct tdispatch *d)
{
	released_at_unlock = READ_ONCE(((struct recorder *)tdispatch_priv(d))->released);
	mutex_unlock(&user_lock);
}

static const struct tdispatch_ops locked_ops = {
	.process = locked_process,
	.release = rec_release,
	.lock = user_lock_take,
	.unlock = user_lock_drop,
};

/*
 * The recorder's dispatcher, destroyed and made again with @cfg under the
 * lock's ops (rec_start() gives rec_ops).  Return false, @r freed, if not.
 */
static bool rec_restart_locked(struct tcase *t, struct recorder *r,
			       const struct tdispatch_config *cfg)
{
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	r->released = 0;	/* rec_finish() counts the new one's */
	r->d = tdispatch_create(cfg, &locked_ops, r);
	if (T_EXPECT(t, !IS_ERR(r->d)))
		return true;
	rec_free(r);
	return false;
}

/*
 * ->lock and ->unlock: a worker's batch runs under the user's lock and is
 * released before it is dropped; a holder of the lock runs batches itself.
 */
static void test_lock_ops_hold_the_users_lock_around_a_batch(struct tcase *t)
{
	static const struct tdispatch_ops half = {
		.process = rec_process, .release = rec_release, .lock = user_lock_take,
	};
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i;

	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &half, NULL)), -EINVAL);
	r = rec_start(t, &cfg);
	if (!r || !rec_restart_locked(t, r, &cfg))
		return;
	for (i = 1; i <= 3; i++) {
		T_EXPECT_EQ(t, submit(r, i, i), 0);
		/* Each one's batch was released before the lock was dropped. */
		if (rec_wait_released(t, r, i)) {
			mutex_lock(&user_lock);
			T_EXPECT_EQ(t, released_at_unlock, i);
			mutex_unlock(&user_lock);
		}
	}
	cfg.max_batch = 4;
	cfg.max_delay_ns = 10 * NSEC_PER_SEC;	/* no worker cuts it */
	if (!rec_restart_locked(t, r, &cfg))
		return;
	T_EXPECT_EQ(t, submit(r, 4, 4), 0);
	mutex_lock(&user_lock);
	T_EXPECT_EQ(t, tdispatch_run_now(r->d), 1);
	mutex_unlock(&user_lock);
	T_EXPECT_EQ(t, unlocked_batches, 0);
	T_EXPECT_EQ(t, r->nr_rec, 4);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * A worker waiting for ->lock has cut nothing: the lock's holder runs
 * the task itself (the link watch's linkwatch_sync_dev() under RTNL).
 */
static void test_lock_holder_reaches_a_task_a_worker_waits_for(struct tcase *t)
{
	DECLARE_COMPLETION_ONSTACK(wanted);
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;

	r = rec_start(t, &cfg);
	if (!r || !rec_restart_locked(t, r, &cfg))
		return;
	mutex_lock(&user_lock);
	WRITE_ONCE(lock_wanted, &wanted);
	T_EXPECT_EQ(t, submit(r, 9, 9), 0);
	if (T_EXPECT(t, wait_for_completion_timeout(&wanted, WAIT_LIMIT))) {
		T_EXPECT_EQ(t, tdispatch_run_id(r->d, 9), 1);
		T_EXPECT_EQ(t, r->nr_rec, 1);
	}
	WRITE_ONCE(lock_wanted, NULL);
	mutex_unlock(&user_lock);
	/* The worker, given the lock, found nothing to cut. */
	rec_finish(t, r, TDISPATCH_DRAIN);
	T_EXPECT_EQ(t, unlocked_batches, 0);
}

/*
 * The same with ->lock, two workers and a delayed task: the acceptor
 * claims a worker, which cuts under the lock, and the delayed task's time
 * comes while the line is throttled.  The items gather as before, and the
 * token takes them with the task, in one batch; an urgent item between
 * tokens is processed, and one submitted after it waits for the token.
 */
static void test_throttled_locked_input_gathers_with_a_delayed_task(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_item *it = NULL;	/* items_start() frees its own */
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int n;
	u64 wakeups;

	cfg.max_batch = 8;
	cfg.workers = 2;
	cfg.rate = 1;
	cfg.max_delayed = 4;
	cfg.flags = TDISPATCH_RATE_BATCHES;
	r = items_start(t, &cfg, 8, &it);
	if (!r || !rec_restart_locked(t, r, &cfg)) {
		kfree(it);
		return;
	}
	/* The first batch spends the token. */
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[0]), 0);
	n = 1;
	if (!rec_wait_released(t, r, 1))
		goto out;
	tdispatch_get_stats(r->d, &st);
	wakeups = st.wakeups;
	T_EXPECT_EQ(t, tdispatch_submit_delayed(r->d, 100, NULL,
						ktime_add_ms(ktime_get(), 50), KTIME_MAX,
						GFP_KERNEL), 0);
	n++;
	for (; n < 9; n++) {
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[n - 1]), 0);
		usleep_range(20000, 21000);
	}
	/* Eight submissions and a task's time: five wake-ups at most. */
	tdispatch_get_stats(r->d, &st);
	T_EXPECT(t, st.wakeups - wakeups <= 5);
	if (!rec_wait_released(t, r, 9))
		goto out;
	T_EXPECT_EQ(t, r->nr_rec, 2);
	T_EXPECT_EQ(t, r->rec[1].nr, 8);
	T_EXPECT(t, ktime_ms_delta(r->rec[1].start, r->rec[0].start) >= 500);
	T_EXPECT_EQ(t, tdispatch_submit_item_urgent(r->d, &it[0]), 0);
	n++;
	if (!rec_wait_released(t, r, 10))
		goto out;
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[1]), 0);
	n++;
	if (rec_wait_released(t, r, 11)) {
		T_EXPECT_EQ(t, r->rec[3].first_id, 1);
		T_EXPECT(t, ktime_ms_delta(r->rec[3].start, r->rec[1].start) >= 500);
	}
out:
	item_finish(t, r, 0, n);
	T_EXPECT_EQ(t, unlocked_batches, 0);
	kfree(it);
}

/*
 * With ->lock and no window, an urgent item queues a worker itself: its
 * push wakes no acceptor (counted in @wakeups), where a plain item's,
 * the first on an empty input list, does.
 */
static void test_urgent_item_with_lock_queues_a_worker(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_item *it = NULL;
	struct tdispatch_stats st;
	struct recorder *r;

	r = items_start(t, &cfg, 2, &it);
	if (!r || !rec_restart_locked(t, r, &cfg)) {
		kfree(it);
		return;
	}
	T_EXPECT_EQ(t, tdispatch_submit_item_urgent(r->d, &it[0]), 0);
	if (rec_wait_released(t, r, 1)) {
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.wakeups, 0);
	}
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[1]), 0);
	if (rec_wait_released(t, r, 2)) {
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.wakeups, 1);
	}
	item_finish(t, r, 0, 2);
	T_EXPECT_EQ(t, unlocked_batches, 0);
	kfree(it);
}

/*
 * The acceptor's pass found the line throttled with @nr tasks pending:
 * the snapshot in @st is of that pass (and those before it).  It has no
 * event to wait on: polled, within the limit.
 */
static bool wait_throttled(struct tcase *t, struct recorder *r, u64 nr,
			   struct tdispatch_stats *st)
{
	unsigned long end = jiffies + WAIT_LIMIT;

	for (;;) {
		tdispatch_get_stats(r->d, st);
		if ((st->pending == nr && st->throttled_ns) || time_after(jiffies, end))
			break;
		usleep_range(1000, 2000);
	}
	return T_EXPECT(t, st->pending == nr && st->throttled_ns);
}

/*
 * An urgent pass between tokens, with ->lock, leaves a plain item
 * waiting: the acceptor, asleep until the token, is not woken when the
 * urgent batch ends, and looks once, at the token.
 */
static void test_urgent_pass_leaves_the_acceptor_asleep(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_item *it = NULL;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int n = 0;
	u64 looks;

	cfg.max_batch = 8;
	cfg.rate = 1;
	cfg.flags = TDISPATCH_RATE_BATCHES;
	r = items_start(t, &cfg, 3, &it);
	if (!r || !rec_restart_locked(t, r, &cfg)) {
		kfree(it);
		return;
	}
	/* The first batch spends the token. */
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[0]), 0);
	n++;
	if (!rec_wait_released(t, r, 1))
		goto out;
	/* The acceptor finds this one throttled and sleeps till the token. */
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[1]), 0);
	n++;
	if (!wait_throttled(t, r, 1, &st))
		goto out;
	looks = st.looks;
	T_EXPECT_EQ(t, tdispatch_submit_item_urgent(r->d, &it[2]), 0);
	n++;
	if (!rec_wait_released(t, r, 2) || !rec_wait_released(t, r, 3))
		goto out;
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.looks - looks, 1);
	T_EXPECT_EQ(t, r->rec[1].first_id, 2);
	T_EXPECT_EQ(t, r->rec[2].first_id, 1);
	T_EXPECT(t, ktime_ms_delta(r->rec[2].start, r->rec[0].start) >= 500);
out:
	item_finish(t, r, 0, n);
	T_EXPECT_EQ(t, unlocked_batches, 0);
	kfree(it);
}

static const struct td_case cases[] = {
	CASE(run_now_processes_in_the_callers_context),
	CASE(run_item_finds_an_item_by_its_address),
	CASE(lock_ops_hold_the_users_lock_around_a_batch),
	CASE(lock_holder_reaches_a_task_a_worker_waits_for),
	CASE(item_submitted_while_processed_runs_again),
	CASE(express_items_count_in_flight_and_retry_first),
	CASE(release_may_free_an_items_object),
	CASE(items_waiting_merge_and_stand_apart_from_tasks),
	CASE(per_task_results_retry_only_what_failed),
	CASE(max_attempts_end_exhausted),
	CASE(expedite_lets_a_delayed_task_in),
	CASE(rate_limit_paces_batches),
	CASE(rate_in_batches_paces_whole_batches),
	CASE(urgent_items_pass_the_rate_limit),
	CASE(throttled_input_wakes_no_one),
	CASE(throttled_locked_input_gathers_with_a_delayed_task),
	CASE(urgent_item_with_lock_queues_a_worker),
	CASE(urgent_pass_leaves_the_acceptor_asleep),
};

static int __init tdispatch_life_test_init(void)
{
	return td_run_cases(cases, ARRAY_SIZE(cases));
}

static void __exit tdispatch_life_test_exit(void)
{
	td_cases_exit();
}

module_init(tdispatch_life_test_init);
module_exit(tdispatch_life_test_exit);
MODULE_DESCRIPTION("tdispatch API tests: items and the task life cycle");
MODULE_LICENSE("GPL");
