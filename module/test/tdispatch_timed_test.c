// SPDX-License-Identifier: GPL-2.0
/*
 * tdispatch time test: delayed tasks and supervised periodic tasks,
 * driven through the exported API with the recording processor on every
 * kernel.  The cases run at load; their KTAP is in
 * /sys/kernel/debug/tdispatch_timed_test/results.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sizes.h>
#include <linux/sort.h>

/* KASAN makes every allocation several times dearer: a tenth will do there. */
static unsigned int delayed_tasks = IS_ENABLED(CONFIG_KASAN) ? 100000 : 1000000;
module_param(delayed_tasks, uint, 0444);
MODULE_PARM_DESC(delayed_tasks,
		 "delayed tasks the million case holds (default 1000000, 100000 with KASAN)");

#include "recorder.h"

#define MS(n)		((u64)(n) * NSEC_PER_MSEC)

static const struct tdispatch_config time_cfg = {
	.name = "time",
	.max_buffer = 1024,
	.max_batch = 1,
	.workers = 1,
	.max_input = 4096,
	.max_delayed = 1024,
};

/* Far enough not to expire in any test: what ->process() should see. */
#define FAR_DEADLINE	KTIME_MAX

static int submit_at(struct recorder *r, u64 id, unsigned long payload, ktime_t when)
{
	return tdispatch_submit_delayed(r->d, id, (void *)payload, when, FAR_DEADLINE,
					GFP_KERNEL);
}

/* The record of the batch that processed @id first, or NULL. */
static struct record *rec_find(struct recorder *r, u64 id)
{
	unsigned int i;

	for (i = 0; i < min_t(unsigned int, r->nr_rec, MAX_RECORDS); i++)
		if (r->rec[i].first_id == id)
			return &r->rec[i];
	return NULL;
}

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

static s64 median(s64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), cmp_s64, NULL);
	return v[n / 2];
}

/*
 * Twenty tasks due 7 ms apart: none is processed before its time, and
 * the delay from due to processed is within one tick of the delay from
 * submitted to processed of tasks submitted at once, measured in the same
 * run: what is left is what the delayed set adds.  Medians, because a VM
 * under emulation can be descheduled at any moment.
 */
static void test_delayed_task_runs_on_time(struct tcase *t)
{
	struct recorder *r = rec_start(t, &time_cfg);
	s64 late[20], base[20], max_late = 0;
	ktime_t due[20], t0;
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < ARRAY_SIZE(base); i++) {
		T_EXPECT_EQ(t, submit(r, 100 + i, i), 0);
		rec_wait_released(t, r, i + 1);
		base[i] = ktime_to_ns(ktime_sub(r->rec[i].start, r->rec[i].submitted));
		/* A task without either is 64 bytes; ->process() reads 0 for both. */
		T_EXPECT_EQ(t, r->rec[i].not_before, 0);
		T_EXPECT_EQ(t, r->rec[i].deadline, 0);
	}
	t0 = ktime_add_ns(ktime_get(), MS(30));
	for (i = 0; i < ARRAY_SIZE(due); i++) {
		due[i] = ktime_add_ns(t0, MS(7) * i);
		T_EXPECT_EQ(t, submit_at(r, i + 1, i, due[i]), 0);
	}
	rec_wait_released(t, r, ARRAY_SIZE(base) + ARRAY_SIZE(due));
	for (i = 0; i < ARRAY_SIZE(due); i++) {
		struct record *rec = rec_find(r, i + 1);

		if (!T_EXPECT(t, rec))
			return rec_finish(t, r, TDISPATCH_DISCARD);
		late[i] = ktime_to_ns(ktime_sub(rec->start, due[i]));
		T_EXPECT(t, late[i] >= 0);
		T_EXPECT_EQ(t, rec->not_before, due[i]);
		T_EXPECT_EQ(t, rec->deadline, FAR_DEADLINE);
		max_late = max(max_late, late[i]);
	}
	t_log(t, "late: median %lld us, max %lld us; at once: median %lld us; tick %lu us",
	      median(late, ARRAY_SIZE(late)) / 1000, max_late / 1000,
	      median(base, ARRAY_SIZE(base)) / 1000, TICK_NSEC / 1000);
	T_EXPECT(t, median(late, ARRAY_SIZE(late)) <=
		 median(base, ARRAY_SIZE(base)) + (s64)TICK_NSEC);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_delayed_task_waits_in_delayed_set(struct tcase *t)
{
	struct recorder *r = rec_start(t, &time_cfg);
	struct tdispatch_stats st;

	if (!r)
		return;
	T_EXPECT_EQ(t, submit_at(r, 1, 1, ktime_add_ns(ktime_get(), 3600 * NSEC_PER_SEC)), 0);
	td_sync(t, r);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.delayed, 1);
	T_EXPECT_EQ(t, st.pending, 0);
	/* A time already passed means at once. */
	T_EXPECT_EQ(t, submit_at(r, 2, 2, ktime_sub_ns(ktime_get(), 1)), 0);
	rec_wait_released(t, r, 1);
	T_EXPECT_EQ(t, r->rec[0].first_id, 2);
	/* Destroy cancels what still waits. */
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_newer_task_overrides_waiting_delayed(struct tcase *t)
{
	struct recorder *r = rec_start(t, &time_cfg);
	ktime_t soon = ktime_add_ns(ktime_get(), MS(40));
	struct tdispatch_stats st;

	if (!r)
		return;
	/* The newer delayed task's time wins, earlier or later. */
	T_EXPECT_EQ(t, submit_at(r, 5, 1, ktime_add_ns(ktime_get(), 3600 * NSEC_PER_SEC)), 0);
	T_EXPECT_EQ(t, submit_at(r, 5, 2, soon), 0);
	/* A newer task at once replaces a waiting delayed one. */
	T_EXPECT_EQ(t, submit_at(r, 6, 3, ktime_add_ns(ktime_get(), 3600 * NSEC_PER_SEC)), 0);
	T_EXPECT_EQ(t, submit(r, 6, 4), 0);
	rec_wait_released(t, r, 4);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_OVERRIDDEN), 2);
	T_EXPECT_EQ(t, r->payload_of[5], 2);
	T_EXPECT_EQ(t, r->payload_of[6], 4);
	T_EXPECT(t, rec_find(r, 5) && !ktime_before(rec_find(r, 5)->start, soon));
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.overridden, 2);
	T_EXPECT_EQ(t, st.delayed, 0);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_cancel_waiting_delayed(struct tcase *t)
{
	struct recorder *r = rec_start(t, &time_cfg);
	struct tdispatch_stats st;

	if (!r)
		return;
	T_EXPECT_EQ(t, submit_at(r, 7, 1, ktime_add_ns(ktime_get(), 3600 * NSEC_PER_SEC)), 0);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 7), 0);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 7), -ENOENT);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.cancelled, 1);
	T_EXPECT_EQ(t, st.delayed, 0);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_CANCELLED), 1);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/* A full delayed set refuses with -ENOSPC, counted; it never drops. */
static void test_delayed_cap_refuses(struct tcase *t)
{
	struct tdispatch_config cfg = time_cfg;
	ktime_t later = ktime_add_ns(ktime_get(), 3600 * NSEC_PER_SEC);
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i;

	cfg.max_delayed = 4;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	for (i = 0; i < 4; i++)
		T_EXPECT_EQ(t, submit_at(r, 10 + i, i, later), 0);
	T_EXPECT_EQ(t, submit_at(r, 20, 0, later), -ENOSPC);
	T_EXPECT_EQ(t, submit(r, 21, 0), 0);	/* not delayed: not capped */
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 10), 0);
	T_EXPECT_EQ(t, submit_at(r, 20, 0, later), 0);
	td_sync(t, r);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.rejected, 1);
	T_EXPECT_EQ(t, st.delayed, 4);
	T_EXPECT_EQ(t, st.dropped, 0);
	cfg.max_delayed = 0;
	rec_finish(t, r, TDISPATCH_DISCARD);
	r = rec_start(t, &cfg);
	if (!r)
		return;
	T_EXPECT_EQ(t, submit_at(r, 1, 0, later), -ENOSPC);
	rec_finish(t, r, TDISPATCH_DISCARD);
}

/* A million delayed tasks: held, a tenth cancelled, the rest fire. */
static void test_million_delayed_tasks(struct tcase *t)
{
	struct tdispatch_config cfg = {
		.name = "million",
		.max_buffer = SZ_1M,
		.max_batch = 4096,
		.workers = 4,
		.max_input = SZ_1M,
		.max_delayed = SZ_1M,
	};
	unsigned int i, n = min_t(unsigned int, delayed_tasks, SZ_1M), cancelled = 0;
	struct tdispatch_stats st;
	struct recorder *r;
	ktime_t start, due;

	r = rec_start(t, &cfg);
	if (!r)
		return;
	start = ktime_get();
	/* Far enough ahead that all are waiting before the first is due. */
	due = ktime_add_ns(start, 3600 * NSEC_PER_SEC);
	for (i = 0; i < n; i++) {
		if (!T_EXPECT_EQ(t, submit_at(r, i, 0, ktime_add_ns(due, i)), 0))
			break;
		cond_resched();
	}
	td_sync(t, r);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.delayed, n);
	t_log(t, "%u delayed tasks submitted and held in %lld ms", n,
	      ktime_ms_delta(ktime_get(), start));
	for (i = 0; i < n; i += 10) {
		cancelled += !T_EXPECT_EQ(t, tdispatch_cancel(r->d, i), 0) ? 0 : 1;
		cond_resched();
	}
	/* Bring the rest forward: a newer task with a due time of now. */
	start = ktime_get();
	for (i = 0; i < n; i++) {
		if (i % 10 && submit_at(r, i, 1, start))
			break;
		cond_resched();
	}
	T_EXPECT(t, wait_event_idle_timeout(r->wait,
					    READ_ONCE(r->released) >= n + (n - cancelled),
					    WAIT_LIMIT * 5));
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.cancelled, cancelled);
	T_EXPECT_EQ(t, st.overridden, n - cancelled);
	T_EXPECT_EQ(t, st.done, n - cancelled);
	T_EXPECT_EQ(t, st.delayed, 0);
	t_log(t, "%u overridden and processed in %lld ms", n - cancelled,
	      ktime_ms_delta(ktime_get(), start));
	/* Ids beyond MAX_IDS share the recorder's busy bits: not overlaps. */
	atomic_set(&r->overlaps, 0);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/* ---- periodic tasks ------------------------------------------------------ */

#define PERIODIC_ID	42

struct runs {
	atomic_t released;
	unsigned int slow;		/* runs before this one exceed the timeout */
	unsigned int slow_ms;
};

static struct runs runs;

static void runs_release(struct tdispatch *d, void *payload)
{
	struct recorder *r = tdispatch_priv(d);

	atomic_inc(&runs.released);
	wake_up_all(&r->wait);
}

/* The first runs.slow runs of the periodic task outlast its timeout. */
static enum tdispatch_result slow_then_fast(struct recorder *r, struct tdispatch_batch *b,
					    unsigned int nth)
{
	if (tdispatch_task_id(b->tasks[0]) == PERIODIC_ID && nth < runs.slow)
		msleep(runs.slow_ms);
	return TDISPATCH_RESULT_SUCCESS;
}

static struct recorder *periodic_start(struct tcase *t, unsigned int slow,
				       unsigned int slow_ms)
{
	struct recorder *r = rec_start(t, &time_cfg);

	runs = (struct runs) { .slow = slow, .slow_ms = slow_ms };
	if (r)
		r->decide = slow_then_fast;
	return r;
}

/* Runs are accepted tasks without ->release(); the rest are released. */
static void periodic_finish(struct tcase *t, struct recorder *r)
{
	struct tdispatch_stats st;

	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DISCARD, 0), 0);
	T_EXPECT_EQ(t, atomic_read(&runs.released), 1);
	T_EXPECT_EQ(t, r->released + st.periodic_runs, st.accepted);
	rec_free(r);
}

/* @n runs recorded: ->nr_rec counts a run as it begins, before its record. */
static bool wait_runs(struct tcase *t, struct recorder *r, unsigned int n)
{
	return T_EXPECT(t, wait_event_idle_timeout(r->wait, READ_ONCE(r->nr_recorded) >= n,
						   WAIT_LIMIT));
}

/*
 * Period 100 ms, timeout 40 ms, bound 4: three runs that take 120 ms time
 * out and double the interval to 200, 400 and (capped) 400 ms; the fourth
 * succeeds and the interval is back to 100 ms.  The margins are wide
 * because a busy host can stall the VM for tens of ms.  A run falls due one
 * interval after the previous one timed out, so runs are submitted at
 * least 40 + 200, 40 + 400, 40 + 400, then 100 ms apart.
 */
static void test_periodic_backs_off_and_recovers(struct tcase *t)
{
	static const u64 min_gap_ms[] = { 240, 440, 440, 100 };
	struct tdispatch_periodic pc = {
		.id = PERIODIC_ID,
		.period_ns = MS(100),
		.timeout_ns = MS(40),
		.max_backoff = 4,
		.release = runs_release,
	};
	struct tdispatch_periodic_stats ps;
	struct recorder *r = periodic_start(t, 3, 120);
	unsigned int i;

	if (!r)
		return;
	T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), 0);
	T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), -EEXIST);
	wait_runs(t, r, 5);
	T_EXPECT_EQ(t, tdispatch_periodic_get_stats(r->d, PERIODIC_ID, &ps), 0);
	t_log(t, "runs %llu successes %llu timeouts %llu failures %llu skipped %llu %s %llu ms",
	      ps.runs, ps.successes, ps.timeouts, ps.failures, ps.skipped, "interval",
	      ps.interval_ns / NSEC_PER_MSEC);
	T_EXPECT_EQ(t, ps.timeouts, 3);
	T_EXPECT(t, ps.successes >= 1);
	T_EXPECT_EQ(t, ps.failures, 0);
	T_EXPECT_EQ(t, ps.skipped, 0);
	T_EXPECT_EQ(t, ps.interval_ns, MS(100));
	for (i = 0; i < ARRAY_SIZE(min_gap_ms); i++) {
		s64 gap = ktime_to_ns(ktime_sub(r->rec[i + 1].submitted, r->rec[i].submitted));

		t_log(t, "run %u to %u: %lld ms (at least %llu)", i + 1, i + 2,
		      gap / (s64)NSEC_PER_MSEC, min_gap_ms[i]);
		T_EXPECT(t, gap >= (s64)MS(min_gap_ms[i]));
	}
	T_EXPECT_EQ(t, tdispatch_periodic_remove(r->d, PERIODIC_ID), 0);
	T_EXPECT_EQ(t, tdispatch_periodic_remove(r->d, PERIODIC_ID), -ENOENT);
	periodic_finish(t, r);
}

/* A run still going when the next falls due is skipped, never doubled up. */
static void test_periodic_skips_while_running(struct tcase *t)
{
	struct tdispatch_periodic pc = {
		.id = PERIODIC_ID,
		.period_ns = MS(5),
		.timeout_ns = MS(2),
		.max_backoff = 1,
		.release = runs_release,
	};
	struct tdispatch_periodic_stats ps;
	struct recorder *r = periodic_start(t, 2, 200);

	if (!r)
		return;
	T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), 0);
	wait_runs(t, r, 3);
	T_EXPECT_EQ(t, tdispatch_periodic_get_stats(r->d, PERIODIC_ID, &ps), 0);
	t_log(t, "runs %llu timeouts %llu skipped %llu", ps.runs, ps.timeouts, ps.skipped);
	T_EXPECT(t, ps.skipped >= 2);
	T_EXPECT(t, ps.timeouts >= 2);
	T_EXPECT_EQ(t, ps.interval_ns, MS(5));
	T_EXPECT_EQ(t, atomic_read(&r->overlaps), 0);
	T_EXPECT(t, r->max_running == 1);
	periodic_finish(t, r);
}

/* After remove, nothing fires: the payload comes back and runs stop. */
static void test_periodic_remove_stops_it(struct tcase *t)
{
	struct tdispatch_periodic pc = {
		.id = PERIODIC_ID,
		.period_ns = MS(2),
		.timeout_ns = MS(100),
		.max_backoff = 2,
		.release = runs_release,
	};
	struct recorder *r = periodic_start(t, 0, 0);
	unsigned int seen;

	if (!r)
		return;
	T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), 0);
	wait_runs(t, r, 3);
	T_EXPECT_EQ(t, tdispatch_periodic_remove(r->d, PERIODIC_ID), 0);
	/* Its payload comes back once a run in flight, if any, has ended. */
	T_EXPECT(t, wait_event_idle_timeout(r->wait, atomic_read(&runs.released) == 1, WAIT_LIMIT));
	seen = READ_ONCE(r->nr_rec);
	/* Ten periods with nothing to wait for but the absence of a run. */
	msleep(20);
	T_EXPECT_EQ(t, READ_ONCE(r->nr_rec), seen);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DISCARD, 0), 0);
	rec_free(r);
}

/* Destroy with runs due, in flight and delayed tasks waiting. */
static void test_destroy_with_timers_armed(struct tcase *t)
{
	struct tdispatch_periodic pc = {
		.period_ns = MS(1),
		.timeout_ns = MS(1),
		.max_backoff = 8,
		.release = runs_release,
	};
	struct tdispatch_stats st;
	struct recorder *r = periodic_start(t, 0, 0);
	unsigned int i;

	if (!r)
		return;
	r->process_ms = 1;
	for (i = 0; i < 8; i++) {
		pc.id = 1000 + i;
		T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), 0);
	}
	for (i = 0; i < 100; i++)
		T_EXPECT_EQ(t, submit_at(r, i, 0, ktime_add_ns(ktime_get(), MS(i))), 0);
	wait_runs(t, r, 10);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DISCARD, 0), 0);
	T_EXPECT_EQ(t, atomic_read(&runs.released), 8);
	/* Every task that was not a run was released exactly once. */
	T_EXPECT_EQ(t, r->released, 100);
	rec_free(r);
}

static void test_periodic_rejects_bad_parameters(struct tcase *t)
{
	struct tdispatch_periodic good = {
		.id = 1, .period_ns = MS(10), .timeout_ns = MS(10), .max_backoff = 2,
	}, pc;
	struct recorder *r = rec_start(t, &time_cfg);

	if (!r)
		return;
	pc = good;
	pc.period_ns = 0;
	T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), -EINVAL);
	pc = good;
	pc.timeout_ns = MS(1) - 1;
	T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), -EINVAL);
	pc = good;
	pc.max_backoff = 0;
	T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), -EINVAL);
	pc.max_backoff = 1025;
	T_EXPECT_EQ(t, tdispatch_periodic_add(r->d, &pc), -EINVAL);
	T_EXPECT_EQ(t, tdispatch_periodic_remove(r->d, 1), -ENOENT);
	rec_finish(t, r, TDISPATCH_DISCARD);
}

static const struct td_case cases[] = {
	CASE(delayed_task_waits_in_delayed_set),
	CASE(delayed_task_runs_on_time),
	CASE(newer_task_overrides_waiting_delayed),
	CASE(cancel_waiting_delayed),
	CASE(delayed_cap_refuses),
	CASE(million_delayed_tasks),
	CASE(periodic_rejects_bad_parameters),
	CASE(periodic_backs_off_and_recovers),
	CASE(periodic_skips_while_running),
	CASE(periodic_remove_stops_it),
	CASE(destroy_with_timers_armed),
};

static int __init tdispatch_timed_test_init(void)
{
	return td_run_cases(cases, ARRAY_SIZE(cases));
}

static void __exit tdispatch_timed_test_exit(void)
{
	td_cases_exit();
}

module_init(tdispatch_timed_test_init);
module_exit(tdispatch_timed_test_exit);
MODULE_DESCRIPTION("tdispatch tests of delayed and periodic tasks");
MODULE_LICENSE("GPL");
