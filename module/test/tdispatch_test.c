// SPDX-License-Identifier: GPL-2.0
/*
 * tdispatch API test: the pending set, batches, cancel, the shaper and
 * destroy, through the exported API.
 * Drives the exported API with a recording processor, as Eureka's batcher
 * tests do with their RecordingProcessor, on every kernel (KUnit is not
 * built into the stock ones).  The cases run at load; their KTAP is in
 * /sys/kernel/debug/tdispatch_test/results.
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

/* ---- the cases ----------------------------------------------------------- */

static void test_single_item_mode(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < 5; i++)
		T_EXPECT_EQ(t, submit(r, i, 100 + i), 0);
	if (rec_wait_released(t, r, 5)) {
		T_EXPECT_EQ(t, r->nr_rec, 5);
		for (i = 0; i < 5; i++) {
			T_EXPECT_EQ(t, r->rec[i].nr, 1);
			T_EXPECT_EQ(t, r->payload_of[i], 100 + i);
		}
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DONE), 5);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_batch_never_exceeds_max_batch(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i, total = 0, full = 0;

	cfg.max_batch = 4;
	cfg.max_delay_ns = 50 * NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	for (i = 0; i < 30; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	if (rec_wait_released(t, r, 30)) {
		for (i = 0; i < r->nr_rec; i++) {
			T_EXPECT(t, r->rec[i].nr >= 1 && r->rec[i].nr <= 4);
			total += r->rec[i].nr;
			full += r->rec[i].nr == 4;
		}
		T_EXPECT_EQ(t, total, 30);
		T_EXPECT(t, full >= 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_newer_task_overrides_older(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;

	/* Nothing is cut before destroy flushes: both meet in the set. */
	cfg.max_batch = 8;
	cfg.max_delay_ns = TDISPATCH_MAX_DELAY_NS;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	T_EXPECT_EQ(t, submit(r, 7, 1), 0);
	T_EXPECT_EQ(t, submit(r, 8, 2), 0);
	T_EXPECT_EQ(t, submit(r, 7, 3), 0);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, r->nr_rec, 1);
	T_EXPECT_EQ(t, r->rec[0].nr, 2);
	/* The newer payload won, in the older one's place in line. */
	T_EXPECT_EQ(t, r->rec[0].first_id, 7);
	T_EXPECT_EQ(t, r->payload_of[7], 3);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_OVERRIDDEN], 1);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 2);
	rec_free(r);
}

/* A change as tdispatch_submit_task() takes it: the task in the payload. */
struct own_task {
	u64 version;			/* the payload; the task need not come first */
	struct tdispatch_task task;
};

/*
 * Tasks in the caller's memory coalesce as allocated ones do, and each is
 * released once, by ->release(), which frees the memory that holds it
 * (the debug kernel's KASAN sees any touch of it after that).  Nothing in
 * them is set up before the call: every bit set, a task's flags would
 * claim room for a deadline in front of it, which the engine would write.
 */
static void test_own_tasks_override_and_are_released(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	static const u64 ids[] = { 7, 8, 7 };
	struct own_task *ot[ARRAY_SIZE(ids)];
	struct recorder *r;
	unsigned int i, accepted = 0;

	/* Nothing is cut before destroy flushes: the two of id 7 meet in the set. */
	cfg.max_batch = 8;
	cfg.max_delay_ns = TDISPATCH_MAX_DELAY_NS;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->free_payloads = 1;	/* rec_release() frees each payload: the task's memory */
	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		ot[i] = kmalloc(sizeof(*ot[i]), GFP_KERNEL);
		if (!T_EXPECT(t, ot[i]))
			break;
		memset(ot[i], 0xff, sizeof(*ot[i]));
		if (T_EXPECT_EQ(t, tdispatch_submit_task(r->d, &ot[i]->task, ids[i], ot[i]), 0))
			accepted++;
		else
			kfree(ot[i]);	/* refused: still ours */
	}
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, r->nr_rec, 1);
	T_EXPECT_EQ(t, r->rec[0].nr, 2);
	/* The newer one won, in the older one's place in line. */
	T_EXPECT_EQ(t, r->rec[0].first_id, 7);
	T_EXPECT_EQ(t, r->payload_of[7], (unsigned long)ot[2]);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_OVERRIDDEN], 1);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 2);
	T_EXPECT_EQ(t, r->released, accepted);
	rec_free(r);
}

static inline int merge(struct recorder *r, u64 id, unsigned long payload, unsigned long *old)
{
	void *o;
	int ret = tdispatch_submit_merge(r->d, id, (void *)payload, GFP_KERNEL, &o);

	*old = (unsigned long)o;
	return ret;
}

/*
 * tdispatch_submit_merge() replaces the payload of the waiting task of its
 * id and hands the old one back, counted overridden; a task of the id
 * submitted the plain way takes the waiting one out of the table, and the
 * next merge makes a task that overrides it in the set.  A dispatcher
 * without %TDISPATCH_MERGE refuses, counted.
 */
static void test_merge_replaces_the_waiting_payload(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned long old;

	r = rec_start(t, &cfg);
	if (!r)
		return;
	T_EXPECT_EQ(t, merge(r, 7, 1, &old), -EINVAL);
	T_EXPECT_EQ(t, old, 0);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.rejected, 1);
	T_EXPECT_EQ(t, st.accepted, 0);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	rec_free(r);

	/* Nothing is cut before destroy flushes. */
	cfg.max_batch = 8;
	cfg.max_delay_ns = TDISPATCH_MAX_DELAY_NS;
	cfg.flags = TDISPATCH_MERGE;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	T_EXPECT_EQ(t, merge(r, 7, 1, &old), 0);
	T_EXPECT_EQ(t, old, 0);
	T_EXPECT_EQ(t, merge(r, 8, 2, &old), 0);
	T_EXPECT_EQ(t, old, 0);
	T_EXPECT_EQ(t, merge(r, 7, 3, &old), 0);
	T_EXPECT_EQ(t, old, 1);
	T_EXPECT_EQ(t, merge(r, 7, 4, &old), 0);
	T_EXPECT_EQ(t, old, 3);
	T_EXPECT_EQ(t, submit(r, 8, 5), 0);
	T_EXPECT_EQ(t, merge(r, 8, 6, &old), 0);
	T_EXPECT_EQ(t, old, 0);
	T_EXPECT_EQ(t, merge(r, 8, 7, &old), 0);
	T_EXPECT_EQ(t, old, 6);
	td_sync(t, r);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.accepted, 7);
	T_EXPECT_EQ(t, st.pending, 2);
	/* Three merged, and id 8's first two tasks overridden in the set. */
	T_EXPECT_EQ(t, st.overridden, 5);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_OVERRIDDEN], 2);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, r->nr_rec, 1);
	T_EXPECT_EQ(t, r->rec[0].nr, 2);
	/* The newest payloads, in the first tasks' places in line. */
	T_EXPECT_EQ(t, r->rec[0].first_id, 7);
	T_EXPECT_EQ(t, r->payload_of[7], 4);
	T_EXPECT_EQ(t, r->payload_of[8], 7);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 2);
	/* The merged payloads came back to us, never to ->release(). */
	T_EXPECT_EQ(t, r->released, 4);
	rec_free(r);
}

/*
 * A task cut into a batch takes no more merges: ->process() sees the
 * payload it was cut with, and a merge meanwhile makes a task that waits
 * behind it and takes the merges after it.
 */
static void test_merge_never_touches_a_batch(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned long old;

	cfg.flags = TDISPATCH_MERGE;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->gated = true;
	T_EXPECT_EQ(t, merge(r, 100, 1, &old), 0);
	gate_wait_entered(t, r);
	T_EXPECT_EQ(t, merge(r, 100, 2, &old), 0);
	T_EXPECT_EQ(t, old, 0);
	T_EXPECT_EQ(t, merge(r, 100, 3, &old), 0);
	T_EXPECT_EQ(t, old, 2);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.accepted, 3);
	T_EXPECT_EQ(t, st.overridden, 1);
	complete(&r->gate);
	rec_wait_released(t, r, 2);
	rec_wait_batches(t, r, 2);
	T_EXPECT_EQ(t, r->rec[0].first_payload, 1);
	T_EXPECT_EQ(t, r->rec[1].first_payload, 3);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 2);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	/* The merged payload came back to us. */
	T_EXPECT_EQ(t, r->released, 2);
	rec_free(r);
}

static enum tdispatch_result transient_first(struct recorder *r,
					     struct tdispatch_batch *b,
					     unsigned int nth)
{
	return nth == 0 ? TDISPATCH_RESULT_TRANSIENT : TDISPATCH_RESULT_SUCCESS;
}

static void test_retried_task_goes_first(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);

	if (!r)
		return;
	r->gated = true;
	r->decide = transient_first;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	gate_wait_entered(t, r);
	T_EXPECT_EQ(t, submit(r, 2, 2), 0);
	T_EXPECT_EQ(t, submit(r, 3, 3), 0);
	td_sync(t, r);
	complete(&r->gate);
	if (rec_wait_released(t, r, 3)) {
		T_EXPECT_EQ(t, r->nr_rec, 4);
		T_EXPECT_EQ(t, r->rec[0].first_id, 1);
		T_EXPECT_EQ(t, r->rec[1].first_id, 1);
		T_EXPECT_EQ(t, r->rec[1].first_attempts, 1);
		T_EXPECT_EQ(t, r->rec[2].first_id, 2);
		T_EXPECT_EQ(t, r->rec[3].first_id, 3);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_oldest_dropped_on_overflow(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i;

	cfg.max_buffer = 3;
	r = rec_start_gated(t, &cfg);
	if (!r)
		return;
	for (i = 1; i <= 4; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	td_sync(t, r);
	/* The acceptor may have dropped it and be releasing it right now. */
	rec_wait_released(t, r, 1);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DROPPED), 1);
	complete(&r->gate);
	if (rec_wait_released(t, r, 5)) {
		T_EXPECT_EQ(t, r->nr_rec, 4);
		T_EXPECT_EQ(t, r->payload_of[1], 0);	/* never processed */
		for (i = 2; i <= 4; i++)
			T_EXPECT_EQ(t, r->rec[i - 1].first_id, i);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_tasks_within_max_delay_share_a_batch(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;

	cfg.max_batch = 10;
	cfg.max_delay_ns = 500 * NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	T_EXPECT_EQ(t, submit(r, 2, 2), 0);
	/* Cut by age, not by size or destroy. */
	if (rec_wait_released(t, r, 2)) {
		T_EXPECT_EQ(t, r->nr_rec, 1);
		T_EXPECT_EQ(t, r->rec[0].nr, 2);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_expired_tasks_are_not_processed(struct tcase *t)
{
	struct recorder *r = rec_start_gated(t, &base_cfg);
	ktime_t soon;

	if (!r)
		return;
	/* Already past its deadline when submitted: expired on arrival. */
	T_EXPECT_EQ(t, tdispatch_submit(r->d, 1, (void *)1, ktime_sub_ns(ktime_get(), 1),
					GFP_KERNEL), 0);
	/* Expires while it waits behind the busy worker. */
	soon = ktime_add_ms(ktime_get(), 20);
	T_EXPECT_EQ(t, tdispatch_submit(r->d, 2, (void *)2, soon, GFP_KERNEL), 0);
	T_EXPECT_EQ(t, submit(r, 3, 3), 0);
	td_sync(t, r);
	rec_wait_released(t, r, 1);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_EXPIRED), 1);
	/* Waiting for time itself to pass: there is no other event. */
	while (ktime_before(ktime_get(), soon))
		usleep_range(2000, 5000);
	complete(&r->gate);
	if (rec_wait_released(t, r, 4)) {
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_EXPIRED), 2);
		T_EXPECT_EQ(t, r->nr_rec, 2);
		T_EXPECT_EQ(t, r->payload_of[1] + r->payload_of[2], 0);
		T_EXPECT_EQ(t, r->payload_of[3], 3);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * With no window and its only worker busy, input gathers on the lists with
 * no wake-up until a batch's worth waits on a CPU (the submissions kept on
 * one): the batch's end drains it and cuts the next, the newest task of
 * each id only.  The acceptor, if it passes meanwhile (its first pass after
 * create can come late on a real-time kernel), drains the lists itself and
 * leaves no batch's worth to wake for: that round says nothing of the
 * wake-ups, and returns false.
 */
static bool busy_worker_input_gathers_unwoken(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i;
	u64 wakeups, looks;
	bool judged;

	cfg.max_batch = 8;
	r = rec_start_gated(t, &cfg);
	if (!r)
		return true;
	migrate_disable();
	tdispatch_get_stats(r->d, &st);
	wakeups = st.wakeups;
	looks = st.looks;
	for (i = 1; i <= 5; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	T_EXPECT_EQ(t, submit(r, 1, 11), 0);
	T_EXPECT_EQ(t, submit(r, 6, 6), 0);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.wakeups, wakeups);
	/* The eighth is a batch's worth: it queues the worker's work. */
	T_EXPECT_EQ(t, submit(r, 7, 7), 0);
	tdispatch_get_stats(r->d, &st);
	judged = st.looks == looks;
	if (judged) {
		T_EXPECT_EQ(t, st.queued, 8);
		T_EXPECT_EQ(t, st.wakeups, wakeups + 1);
	}
	migrate_enable();
	complete(&r->gate);
	if (rec_wait_released(t, r, 9)) {
		T_EXPECT_EQ(t, r->nr_rec, 2);
		T_EXPECT_EQ(t, r->rec[1].nr, 7);
		T_EXPECT_EQ(t, r->payload_of[1], 11);
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_OVERRIDDEN), 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
	return judged;
}

/* Up to three rounds, for one the acceptor left alone. */
static void test_busy_worker_input_gathers_unwoken(struct tcase *t)
{
	unsigned int round;

	for (round = 0; round < 3; round++)
		if (busy_worker_input_gathers_unwoken(t))
			break;
	/* An acceptor that looks in every round does not sleep while it should. */
	T_EXPECT(t, round < 3);
}

static void test_batches_spread_across_workers(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i, j, distinct = 0;

	cfg.workers = 4;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->hold_until_running = 4;
	for (i = 0; i < 8; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	if (rec_wait_released(t, r, 8)) {
		T_EXPECT_EQ(t, r->max_running, 4);
		for (i = 0; i < 4; i++) {
			for (j = 0; j < i; j++)
				if (r->rec[j].pid == r->rec[i].pid)
					break;
			distinct += j == i;
		}
		/* The first four ran at once, so on four kworkers. */
		T_EXPECT_EQ(t, distinct, 4);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_cancel(struct tcase *t)
{
	struct recorder *r = rec_start_gated(t, &base_cfg);

	if (!r)
		return;
	T_EXPECT_EQ(t, submit(r, 5, 5), 0);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 5), 0);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_CANCELLED), 1);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 5), -ENOENT);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 100), -EBUSY);
	/* A newer 100 waits behind the running one and can be cancelled. */
	T_EXPECT_EQ(t, submit(r, 100, 101), 0);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 100), 0);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_CANCELLED), 2);
	complete(&r->gate);
	if (rec_wait_released(t, r, 3)) {
		T_EXPECT_EQ(t, r->nr_rec, 1);
		T_EXPECT_EQ(t, r->payload_of[5], 0);
		T_EXPECT_EQ(t, r->payload_of[100], 100);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static enum tdispatch_result first_result(struct recorder *r,
					  struct tdispatch_batch *b,
					  unsigned int nth)
{
	return nth == 0 ? (enum tdispatch_result)tdispatch_task_id(b->tasks[0]) :
			  TDISPATCH_RESULT_SUCCESS;
}

/* After @result the next batch starts no sooner than @delay_ms later. */
static void check_holdoff(struct tcase *t, enum tdispatch_result result,
			  unsigned int delay_ms)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	s64 gap;

	cfg.congestion_delay_ns = 300 * NSEC_PER_MSEC;
	cfg.transient_delay_ns = 150 * NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = first_result;
	r->gated = true;
	/* The id says what the first batch returns. */
	T_EXPECT_EQ(t, submit(r, result, 0), 0);
	gate_wait_entered(t, r);
	T_EXPECT_EQ(t, submit(r, 50, 50), 0);
	td_sync(t, r);
	complete(&r->gate);
	if (rec_wait_released(t, r, 2)) {
		T_EXPECT_EQ(t, r->nr_rec, 3);
		T_EXPECT_EQ(t, r->rec[1].first_id, result);
		gap = ktime_ms_delta(r->rec[1].start, r->rec[0].end);
		T_EXPECT(t, gap >= delay_ms);
		/* Capped: a hold-off never stretches into seconds. */
		T_EXPECT(t, gap < delay_ms + 5000);
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.holdoffs, 1);
		T_EXPECT_EQ(t, st.retries, 1);
		T_EXPECT_EQ(t, st.results[result], 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_shaper_holds_off_after_congestion(struct tcase *t)
{
	check_holdoff(t, TDISPATCH_RESULT_CONGESTION, 300);
}

static void test_shaper_holds_off_after_transient(struct tcase *t)
{
	check_holdoff(t, TDISPATCH_RESULT_TRANSIENT, 150);
}

static enum tdispatch_result permanent_always(struct recorder *r,
					      struct tdispatch_batch *b,
					      unsigned int nth)
{
	return TDISPATCH_RESULT_PERMANENT;
}

static void test_permanent_failure_is_dropped(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);

	if (!r)
		return;
	r->decide = permanent_always;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	if (rec_wait_released(t, r, 1)) {
		T_EXPECT_EQ(t, r->nr_rec, 1);
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_FAILED), 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_destroy_drain_processes_everything(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i;

	cfg.max_batch = 4;
	cfg.max_delay_ns = TDISPATCH_MAX_DELAY_NS;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->process_ms = 20;
	for (i = 0; i < 20; i++)
		T_EXPECT_EQ(t, submit(r, i, i + 1), 0);
	/* Some are in flight, the rest pending: all must be done. */
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 20);
	T_EXPECT_EQ(t, r->released, 20);
	rec_free(r);
}

static void test_destroy_discard_cancels_pending(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	unsigned int i;

	if (!r)
		return;
	r->process_ms = 200;
	for (i = 0; i < 10; i++)
		T_EXPECT_EQ(t, submit(r, i, i + 1), 0);
	/* The running batch finishes; everything behind it is cancelled. */
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DISCARD, 0), 0);
	T_EXPECT_EQ(t, r->released, 10);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE] +
		       r->outcome[TDISPATCH_OUTCOME_CANCELLED], 10);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_CANCELLED] >= 5);
	rec_free(r);
}

static void test_destroy_drain_times_out(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;

	cfg.transient_delay_ns = TDISPATCH_MAX_DELAY_NS;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = transient_first;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	rec_wait_batches(t, r, 1);
	/* The retry is held off for 30 s; the drain gives up after 100 ms. */
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, msecs_to_jiffies(100)),
		    -ETIMEDOUT);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_CANCELLED], 1);
	T_EXPECT_EQ(t, r->released, 1);
	rec_free(r);
}

/*
 * A ->process() that returns no result: the engine's own redelivery value
 * first, then garbage.  Both are failures, counted, never redeliveries.
 */
static enum tdispatch_result out_of_range(struct recorder *r, struct tdispatch_batch *b,
					  unsigned int nth)
{
	return nth ? 99 : TDISPATCH_NR_RESULTS;
}

static void test_out_of_range_result_is_a_counted_failure(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	struct tdispatch_stats st;

	if (!r)
		return;
	r->decide = out_of_range;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	T_EXPECT_EQ(t, submit(r, 2, 2), 0);
	if (rec_wait_released(t, r, 2)) {
		tdispatch_get_stats(r->d, &st);
		check_stats(t, &st);
		T_EXPECT_EQ(t, r->nr_rec, 2);
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_FAILED), 2);
		T_EXPECT_EQ(t, st.bad_results, 2);
		T_EXPECT_EQ(t, st.results[TDISPATCH_RESULT_PERMANENT], 2);
		T_EXPECT_EQ(t, st.redelivered, 0);
		T_EXPECT_EQ(t, st.retries, 0);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_create_rejects_bad_config(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_ops no_release = { .process = rec_process };

	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &no_release, NULL)), -EINVAL);
	cfg.max_batch = 0;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.max_batch = cfg.max_buffer + 1;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.workers = 65;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.max_delay_ns = TDISPATCH_MAX_DELAY_NS + 1;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.max_attempts = TDISPATCH_MAX_ATTEMPTS + 1;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.burst = MAX_BUFFER_LIMIT + 1;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
}

static const struct td_case cases[] = {
	CASE(create_rejects_bad_config),
	CASE(single_item_mode),
	CASE(batch_never_exceeds_max_batch),
	CASE(busy_worker_input_gathers_unwoken),
	CASE(newer_task_overrides_older),
	CASE(own_tasks_override_and_are_released),
	CASE(merge_replaces_the_waiting_payload),
	CASE(merge_never_touches_a_batch),
	CASE(retried_task_goes_first),
	CASE(oldest_dropped_on_overflow),
	CASE(tasks_within_max_delay_share_a_batch),
	CASE(expired_tasks_are_not_processed),
	CASE(batches_spread_across_workers),
	CASE(cancel),
	CASE(shaper_holds_off_after_congestion),
	CASE(shaper_holds_off_after_transient),
	CASE(permanent_failure_is_dropped),
	CASE(destroy_drain_processes_everything),
	CASE(destroy_discard_cancels_pending),
	CASE(destroy_drain_times_out),
	CASE(out_of_range_result_is_a_counted_failure),
};

static int __init tdispatch_test_init(void)
{
	return td_run_cases(cases, ARRAY_SIZE(cases));
}

static void __exit tdispatch_test_exit(void)
{
	td_cases_exit();
}

module_init(tdispatch_test_init);
module_exit(tdispatch_test_exit);
MODULE_DESCRIPTION("tdispatch API tests: the pending set, the shaper, destroy");
MODULE_LICENSE("GPL");
