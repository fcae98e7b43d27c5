// SPDX-License-Identifier: GPL-2.0
/*
 * The task life cycle through /dev/tdispatch: a COMPLETE that gives some
 * tasks of the batch their own result, and every bad vector with its
 * errno and its count; the dispatcher's and a task's own max_attempts,
 * ending EXHAUSTED; EXPEDITE of a delayed task and EXPEDITE_KEY of the
 * delayed tasks that watch a key; the rate limit, set at create and with
 * SET_RATE; and submissions with TDISPATCH_TASK_MERGE, whose payload
 * replaces that of the waiting task of their id until TAKE copies it;
 * and threads blocked in TAKE, woken one per batch, longest waiting first.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <linux/tdispatch.h>

#include "kselftest_harness.h"
#include "tdispatch_helpers.h"

#define SUCCESS		TDISPATCH_RESULT_SUCCESS
#define CONGESTION	TDISPATCH_RESULT_CONGESTION
#define TRANSIENT	TDISPATCH_RESULT_TRANSIENT
#define PERMANENT	TDISPATCH_RESULT_PERMANENT
/* Batches are cut only when full, never by age. */
#define NO_AGE_CUT	(30 * SEC)

FIXTURE(life) {
	int fd;
};

FIXTURE_SETUP(life)
{
	if (access(TD_DEV_PATH, F_OK))
		SKIP(return, "no %s: tdispatch.ko is not loaded", TD_DEV_PATH);
	td_pin_cpu0(_metadata, false);
	self->fd = td_open(_metadata);
}

FIXTURE_TEARDOWN(life)
{
	close(self->fd);
}

/* A dispatcher cutting batches of @max_batch, with events and @max_attempts. */
static void td_setup(struct __test_metadata *_metadata, int fd, __u32 max_batch,
		     __u32 max_attempts)
{
	struct tdispatch_create c;

	td_cfg_base(&c, "life", max_batch, 64);
	c.max_delay_ns = NO_AGE_CUT;
	c.max_delayed = 16;
	c.transient_delay_ns = MSEC;
	c.congestion_delay_ns = MSEC;
	c.max_attempts = max_attempts;
	/* One batch out at a time: they reach TAKE in the order they were cut. */
	c.workers = 1;
	td_create(_metadata, fd, &c);
}

/* Submit ids @first to @first + @n - 1, each with its own @max_attempts. */
static void td_submit_range(struct __test_metadata *_metadata, int fd, __u64 first,
			    unsigned int n, __u32 max_attempts, __u64 not_before)
{
	struct tdispatch_submit_task ut[TD_NR] = {};
	struct td_pl pl[TD_NR];
	unsigned int i;

	for (i = 0; i < n; i++) {
		pl[i] = (struct td_pl) { .id = first + i };
		ut[i] = (struct tdispatch_submit_task) {
			.id = first + i,
			.payload = uptr(&pl[i]),
			.payload_len = sizeof(pl[i]),
			.max_attempts = max_attempts,
			.not_before_ns = not_before,
		};
	}
	ASSERT_EQ((int)n, td_submit_flags(fd, ut, n, not_before ? TDISPATCH_SUBMIT_RELATIVE : 0));
}

/* The next batch, which must hold @n tasks, the first of id @first. */
static void td_take_n(struct __test_metadata *_metadata, int fd, struct td_taken *b,
		      unsigned int n, __u64 first, __u32 attempts)
{
	int ret = td_take(fd, b, 0, WAIT_NS);

	ASSERT_EQ(0, ret) TH_LOG("take: %s", strerror(-ret));
	ASSERT_EQ(n, b->tk.nr);
	EXPECT_EQ(first, b->t[0].id);
	EXPECT_EQ(attempts, b->t[0].attempts);
}

/* EXPEDITE the delayed task of @id: 0 or -errno. */
static int td_expedite(int fd, __u64 id)
{
	struct tdispatch_id a = { .size = sizeof(a), .id = id };

	return ioctl(fd, TDISPATCH_IOC_EXPEDITE, &a) ? -errno : 0;
}

/* COMPLETE @batch with @result and @n results of its own: 0 or -errno. */
static int td_complete_vec(int fd, __u64 batch, __u32 result,
			   const struct tdispatch_task_result *r, __u32 n)
{
	struct tdispatch_complete c = {
		.size = sizeof(c),
		.batch = batch,
		.result = result,
		.results = uptr(r),
		.nr_results = n,
	};

	return ioctl(fd, TDISPATCH_IOC_COMPLETE, &c) ? -errno : 0;
}

/* Read outcome events until one for @id comes: its outcome and attempts. */
static void td_expect_event(struct __test_metadata *_metadata, int fd, __u64 id,
			    __u32 outcome, __u32 attempts)
{
	struct tdispatch_event ev;

	for (;;) {
		ASSERT_LT(0, td_poll(fd, POLLIN, WAIT_MS)) TH_LOG("no event for id %llu", id);
		ASSERT_EQ(sizeof(ev), read(fd, &ev, sizeof(ev)));
		if (ev.type == TDISPATCH_EVENT_OUTCOME && ev.id == id)
			break;
	}
	EXPECT_EQ(outcome, ev.outcome) TH_LOG("id %llu", id);
	EXPECT_EQ(attempts, ev.attempts) TH_LOG("id %llu", id);
}

TEST_F(life, complete_gives_tasks_their_own_results)
{
	struct tdispatch_task_result r[] = {
		{ .id = 3, .result = PERMANENT },
		{ .id = 2, .result = TRANSIENT },
	};
	struct tdispatch_stats_user st;
	struct td_taken b;

	td_setup(_metadata, self->fd, 4, 0);
	td_submit_range(_metadata, self->fd, 1, 4, 0, 0);
	td_take_n(_metadata, self->fd, &b, 4, 1, 0);
	/* The batch's result for the others: done; 3 failed; 2 alone goes again. */
	ASSERT_EQ(0, td_complete_vec(self->fd, b.tk.batch, SUCCESS, r, 2));
	td_expect_event(_metadata, self->fd, 3, TDISPATCH_OUTCOME_FAILED, 0);
	/* Batches of four: the retry waits for three more tasks. */
	td_submit_range(_metadata, self->fd, 10, 3, 0, 0);
	td_take_n(_metadata, self->fd, &b, 4, 2, 1);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_expect_event(_metadata, self->fd, 2, TDISPATCH_OUTCOME_DONE, 1);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(7, st.accepted);
	EXPECT_EQ(6, st.done);
	EXPECT_EQ(1, st.failed);
	EXPECT_EQ(1, st.retries);
	EXPECT_EQ(0, st.rejected_calls);
}

TEST_F(life, bad_result_vectors_fail_and_leave_the_lease)
{
	struct tdispatch_task_result r[3];
	struct tdispatch_stats_user st;
	struct tdispatch_complete c;
	struct td_taken b;
	char *edge = td_edge(_metadata);

	td_setup(_metadata, self->fd, 2, 0);
	td_submit_range(_metadata, self->fd, 1, 2, 0, 0);
	td_take_n(_metadata, self->fd, &b, 2, 1, 0);

	r[0] = (struct tdispatch_task_result) { .id = 9, .result = SUCCESS };
	EXPECT_REJECTED(self->fd, EINVAL, "an id not in the batch",
			td_complete_vec(self->fd, b.tk.batch, SUCCESS, r, 1));
	r[0] = (struct tdispatch_task_result) { .id = 1, .result = TRANSIENT };
	r[1] = (struct tdispatch_task_result) { .id = 1, .result = SUCCESS };
	EXPECT_REJECTED(self->fd, EINVAL, "an id twice",
			td_complete_vec(self->fd, b.tk.batch, SUCCESS, r, 2));
	r[1] = (struct tdispatch_task_result) { .id = 2, .result = 4 };
	EXPECT_REJECTED(self->fd, EINVAL, "a result out of range",
			td_complete_vec(self->fd, b.tk.batch, SUCCESS, r, 2));
	r[1] = (struct tdispatch_task_result) { .id = 2, .result = SUCCESS, .pad = 1 };
	EXPECT_REJECTED(self->fd, EINVAL, "padding not zero",
			td_complete_vec(self->fd, b.tk.batch, SUCCESS, r, 2));
	r[1].pad = 0;
	r[2] = (struct tdispatch_task_result) { .id = 3, .result = SUCCESS };
	EXPECT_REJECTED(self->fd, EINVAL, "more results than tasks",
			td_complete_vec(self->fd, b.tk.batch, SUCCESS, r, 3));
	EXPECT_REJECTED(self->fd, EFAULT, "results in unmapped memory",
			td_complete_vec(self->fd, b.tk.batch, SUCCESS,
					(void *)(edge + PAGE - sizeof(r[0])), 2));
	EXPECT_REJECTED(self->fd, EINVAL, "nr_results above any batch",
			td_complete_vec(self->fd, b.tk.batch, SUCCESS, r, 1u << 20));
	c = (struct tdispatch_complete) {
		.size = sizeof(c), .batch = b.tk.batch, .pad2 = 1,
	};
	EXPECT_REJECTED(self->fd, EINVAL, "pad2 not zero",
			ioctl(self->fd, TDISPATCH_IOC_COMPLETE, &c));
	/* Nothing of the bad vectors was applied: a good one ends the lease. */
	r[0] = (struct tdispatch_task_result) { .id = 2, .result = PERMANENT };
	EXPECT_EQ(0, td_complete_vec(self->fd, b.tk.batch, SUCCESS, r, 1));
	td_expect_event(_metadata, self->fd, 2, TDISPATCH_OUTCOME_FAILED, 0);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(1, st.done);
	EXPECT_EQ(1, st.failed);
	EXPECT_EQ(8, st.rejected_calls);
	munmap(edge, 2 * PAGE);
}

TEST_F(life, max_attempts_end_exhausted)
{
	struct tdispatch_create c;
	struct tdispatch_stats_user st;
	struct tdispatch_submit_task ut = {};
	struct td_taken b;
	struct td_pl pl;
	int fd;

	/* The dispatcher's limit: two attempts. */
	td_setup(_metadata, self->fd, 1, 2);
	td_submit_range(_metadata, self->fd, 7, 1, 0, 0);
	td_take_n(_metadata, self->fd, &b, 1, 7, 0);
	td_finish(_metadata, self->fd, b.tk.batch, TRANSIENT);
	td_take_n(_metadata, self->fd, &b, 1, 7, 1);
	td_finish(_metadata, self->fd, b.tk.batch, CONGESTION);
	td_expect_event(_metadata, self->fd, 7, TDISPATCH_OUTCOME_EXHAUSTED, 2);
	/* A task's own: one attempt. */
	td_submit_range(_metadata, self->fd, 8, 1, 1, 0);
	td_take_n(_metadata, self->fd, &b, 1, 8, 0);
	td_finish(_metadata, self->fd, b.tk.batch, TRANSIENT);
	td_expect_event(_metadata, self->fd, 8, TDISPATCH_OUTCOME_EXHAUSTED, 1);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(2, st.exhausted);
	EXPECT_EQ(2, st.failed) TH_LOG("failed counts the exhausted too");
	EXPECT_EQ(0, st.pending + st.in_flight);

	/* Out of range, or an unknown flag: the task's status says so. */
	pl = (struct td_pl) { .id = 9 };
	ut = (struct tdispatch_submit_task) {
		.id = 9, .payload = uptr(&pl), .payload_len = sizeof(pl),
		.max_attempts = 65536,
	};
	EXPECT_EQ(0, td_submit_vec(self->fd, &ut, 1));
	EXPECT_EQ(-EINVAL, ut.status);
	ut.max_attempts = 1;
	ut.flags = 2;
	EXPECT_EQ(0, td_submit_vec(self->fd, &ut, 1));
	EXPECT_EQ(-EINVAL, ut.status);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(2, st.rejected);

	fd = td_open(_metadata);
	td_cfg_base(&c, "life", 1, 0);
	c.max_attempts = 65536;
	EXPECT_EQ(-1, ioctl(fd, TDISPATCH_IOC_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.max_attempts = 0;
	c.pad = 1;
	EXPECT_EQ(-1, ioctl(fd, TDISPATCH_IOC_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_F(life, expedite_lets_a_delayed_task_in_now)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	__u64 t0;

	td_setup(_metadata, self->fd, 1, 0);
	t0 = now_ns();
	td_submit_range(_metadata, self->fd, 5, 2, 0, 3600 * SEC);
	EXPECT_REJECTED(self->fd, ENOENT, "expedite an id with no delayed task",
			td_expedite(self->fd, 4));
	ASSERT_EQ(0, td_expedite(self->fd, 6));
	td_take_n(_metadata, self->fd, &b, 1, 6, 0);
	EXPECT_GT(t0 + 3600 * SEC, now_ns());
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_expect_event(_metadata, self->fd, 6, TDISPATCH_OUTCOME_DONE, 0);
	EXPECT_REJECTED(self->fd, ENOENT, "expedite it twice", td_expedite(self->fd, 6));
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(1, st.expedited);
	EXPECT_EQ(1, st.delayed) TH_LOG("id 5 still waits");
	EXPECT_EQ(1, st.done);
}

/* A task of @id delayed an hour, watching @key if @watch. */
static void td_submit_watching(struct __test_metadata *_metadata, int fd, __u64 id, __u64 key,
			       bool watch)
{
	struct td_pl pl = { .id = id };
	struct tdispatch_submit_task ut = {
		.id = id,
		.payload = uptr(&pl),
		.payload_len = sizeof(pl),
		.not_before_ns = 3600 * SEC,
		.flags = watch ? TDISPATCH_TASK_WATCH : 0,
		.watch_key = key,
	};

	ASSERT_EQ(1, td_submit_flags(fd, &ut, 1, TDISPATCH_SUBMIT_RELATIVE));
}

/* EXPEDITE_KEY: how many it let in, or -errno. */
static int td_expedite_key(int fd, __u64 key)
{
	struct tdispatch_id a = { .size = sizeof(a), .id = key };
	int ret = ioctl(fd, TDISPATCH_IOC_EXPEDITE_KEY, &a);

	return ret < 0 ? -errno : ret;
}

TEST_F(life, expedite_key_lets_in_the_tasks_that_watch_it)
{
	struct tdispatch_stats_user st;
	struct td_taken b;

	td_setup(_metadata, self->fd, 1, 0);
	td_submit_watching(_metadata, self->fd, 20, 77, true);
	td_submit_watching(_metadata, self->fd, 21, 77, true);
	td_submit_watching(_metadata, self->fd, 22, 78, true);
	td_submit_watching(_metadata, self->fd, 23, 77, false);
	/* Replaced while it waits: the newer task's key is the one. */
	td_submit_watching(_metadata, self->fd, 24, 79, true);
	td_submit_watching(_metadata, self->fd, 24, 80, true);

	EXPECT_EQ(2, td_expedite_key(self->fd, 77));
	td_take_n(_metadata, self->fd, &b, 1, 20, 0);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_take_n(_metadata, self->fd, &b, 1, 21, 0);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	EXPECT_REJECTED(self->fd, ENOENT, "a key nothing watches any more",
			td_expedite_key(self->fd, 77));
	EXPECT_REJECTED(self->fd, ENOENT, "the key of a replaced task",
			td_expedite_key(self->fd, 79));
	ASSERT_EQ(0, td_cancel(self->fd, 22));
	EXPECT_REJECTED(self->fd, ENOENT, "the key of a cancelled task",
			td_expedite_key(self->fd, 78));
	EXPECT_EQ(1, td_expedite_key(self->fd, 80));
	td_take_n(_metadata, self->fd, &b, 1, 24, 0);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	/* The first task of id 24 was replaced, then the second is done. */
	td_expect_event(_metadata, self->fd, 24, TDISPATCH_OUTCOME_OVERRIDDEN, 0);
	td_expect_event(_metadata, self->fd, 24, TDISPATCH_OUTCOME_DONE, 0);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(3, st.expedited);
	EXPECT_EQ(2, st.key_expedites);
	EXPECT_EQ(1, st.delayed) TH_LOG("id 23 watches nothing and still waits");
	EXPECT_EQ(3, st.done);
	EXPECT_EQ(1, st.overridden);
	EXPECT_EQ(1, st.cancelled);
	EXPECT_EQ(3, st.rejected_calls) TH_LOG("a EXPEDITE_KEY that let tasks in did not fail");
}

/* SET_RATE: 0 or -errno. */
static int td_set_rate(int fd, __u32 rate, __u32 burst, __u32 flags)
{
	struct tdispatch_rate r = {
		.size = sizeof(r), .flags = flags, .rate = rate, .burst = burst,
	};

	return ioctl(fd, TDISPATCH_IOC_SET_RATE, &r) ? -errno : 0;
}

TEST_F(life, rate_limit_paces_takes_and_can_change)
{
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	struct td_taken b;
	unsigned int i;
	__u64 t0;
	int fd;

	/* 50 a second, one at a time: five tasks take 80 ms at the least. */
	td_cfg_base(&c, "rate", 1, 0);
	c.rate = 50;
	c.burst = 1;
	td_create(_metadata, self->fd, &c);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(50, st.rate);
	EXPECT_EQ(1, st.burst);
	/* Before the submission: the acceptor may spend the first token in it. */
	t0 = now_ns();
	td_submit_range(_metadata, self->fd, 1, 5, 0, 0);
	for (i = 0; i < 5; i++) {
		td_take_n(_metadata, self->fd, &b, 1, 1 + i, 0);
		td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	}
	EXPECT_LE(t0 + 75 * MSEC, now_ns()) TH_LOG("faster than the rate limit");
	td_stats(_metadata, self->fd, &st);
	EXPECT_LT(0, st.throttled_ns);

	/* Lifted; burst 0 is the max batch. */
	EXPECT_EQ(0, td_set_rate(self->fd, 0, 0, 0));
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(0, st.rate);
	EXPECT_EQ(1, st.burst);
	EXPECT_REJECTED(self->fd, EINVAL, "SET_RATE with flags", td_set_rate(self->fd, 1, 1, 1));
	EXPECT_REJECTED(self->fd, EINVAL, "SET_RATE burst above 65536",
			td_set_rate(self->fd, 1, 65537, 0));

	fd = td_open(_metadata);
	EXPECT_EQ(-ENXIO, td_set_rate(fd, 1, 1, 0)) TH_LOG("no dispatcher yet");
	td_cfg_base(&c, "rate", 1, 0);
	c.burst = 65537;
	EXPECT_EQ(-1, ioctl(fd, TDISPATCH_IOC_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/*
 * SUBMIT one task of @id with %TDISPATCH_TASK_MERGE and the payload
 * { @id, @ver } cut to @len bytes: its status.
 */
static int td_merge(int fd, __u64 id, __u64 ver, __u32 len)
{
	struct td_pl pl = { .id = id, .ver = ver };
	struct tdispatch_submit_task ut = {
		.id = id, .payload = uptr(&pl), .payload_len = len,
		.flags = TDISPATCH_TASK_MERGE,
	};
	int ret = td_submit_vec(fd, &ut, 1);

	return ret == 1 ? 0 : ret < 0 ? ret : ut.status;
}

/* Ids @first to @first + @n - 1, version 0, without the flag. */
#define td_fill(fd, first, n)	td_submit_range(_metadata, fd, first, n, 0, 0)

TEST_F(life, merge_replaces_the_payload_where_it_waits)
{
	struct tdispatch_stats_user st;
	struct td_taken b;

	td_setup(_metadata, self->fd, 4, 0);
	ASSERT_EQ(0, td_merge(self->fd, 1, 0, sizeof(struct td_pl)));
	ASSERT_EQ(0, td_merge(self->fd, 1, 1, sizeof(struct td_pl)));
	/* Shorter: the length is the newest payload's too. */
	ASSERT_EQ(0, td_merge(self->fd, 1, 2, sizeof(__u64)));
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(3, st.accepted);
	EXPECT_EQ(2, st.overridden) TH_LOG("merged at submit, counted at once");
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
	td_fill(self->fd, 2, 3);
	td_take_n(_metadata, self->fd, &b, 4, 1, 0);
	EXPECT_EQ(sizeof(__u64), b.t[0].payload_len);
	ASSERT_EQ(0, td_merge(self->fd, 1, 3, sizeof(struct td_pl)));
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_expect_event(_metadata, self->fd, 1, TDISPATCH_OUTCOME_DONE, 0);
	/* Taken, so the last one is a task of its own, first of the next batch. */
	td_fill(self->fd, 10, 3);
	td_take_n(_metadata, self->fd, &b, 4, 1, 0);
	EXPECT_EQ(3, td_payload(&b, 0).ver);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(10, st.accepted);
	EXPECT_EQ(8, st.done);
	EXPECT_EQ(2, st.overridden);
	EXPECT_EQ(0, st.rejected);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
}

TEST_F(life, merge_reaches_a_cut_batch_until_it_is_taken)
{
	struct tdispatch_stats_user st;
	struct td_taken b;

	td_setup(_metadata, self->fd, 1, 0);
	ASSERT_EQ(0, td_merge(self->fd, 7, 0, sizeof(struct td_pl)));
	/* Cut at once (batches of one), and waiting for a TAKE. */
	ASSERT_LT(0, td_poll(self->fd, POLLRDBAND, WAIT_MS));
	ASSERT_EQ(0, td_merge(self->fd, 7, 1, sizeof(struct td_pl)));
	td_take_n(_metadata, self->fd, &b, 1, 7, 0);
	EXPECT_EQ(1, td_payload(&b, 0).ver) TH_LOG("the newest payload goes out");
	/* Taken: these two wait behind it as one task, the newer payload. */
	ASSERT_EQ(0, td_merge(self->fd, 7, 2, sizeof(struct td_pl)));
	ASSERT_EQ(0, td_merge(self->fd, 7, 3, sizeof(struct td_pl)));
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_take_n(_metadata, self->fd, &b, 1, 7, 0);
	EXPECT_EQ(3, td_payload(&b, 0).ver);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_expect_event(_metadata, self->fd, 7, TDISPATCH_OUTCOME_DONE, 0);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(4, st.accepted);
	EXPECT_EQ(2, st.done);
	EXPECT_EQ(2, st.overridden);
	EXPECT_EQ(2, st.batches);
}

TEST_F(life, merge_still_reaches_a_batch_a_take_had_no_room_for)
{
	struct tdispatch_stats_user st;
	struct td_taken b;

	td_setup(_metadata, self->fd, 1, 0);
	ASSERT_EQ(0, td_merge(self->fd, 3, 0, sizeof(struct td_pl)));
	ASSERT_LT(0, td_poll(self->fd, POLLRDBAND, WAIT_MS));
	td_take_arg(&b, 0, WAIT_NS);
	b.tk.buf_len = sizeof(struct td_pl) - 1;
	ASSERT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_TAKE, &b.tk));
	ASSERT_EQ(ENOSPC, errno);
	/* The batch stays ready, and its task mergeable. */
	ASSERT_EQ(0, td_merge(self->fd, 3, 1, sizeof(struct td_pl)));
	td_take_n(_metadata, self->fd, &b, 1, 3, 0);
	EXPECT_EQ(1, td_payload(&b, 0).ver);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(2, st.accepted);
	EXPECT_EQ(1, st.done);
	EXPECT_EQ(1, st.overridden);
}

TEST_F(life, merge_never_reaches_a_task_a_newer_one_replaces)
{
	struct tdispatch_stats_user st;
	struct td_taken b;

	td_setup(_metadata, self->fd, 4, 0);
	ASSERT_EQ(0, td_merge(self->fd, 1, 0, sizeof(struct td_pl)));
	/* Without the flag, version 0 of id 1: newer than the merge task. */
	td_fill(self->fd, 1, 1);
	/* Must not go into the task that the one before replaces. */
	ASSERT_EQ(0, td_merge(self->fd, 1, 5, sizeof(struct td_pl)));
	td_fill(self->fd, 2, 3);
	td_take_n(_metadata, self->fd, &b, 4, 1, 0);
	EXPECT_EQ(5, td_payload(&b, 0).ver) TH_LOG("the newest submission is lost");
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(6, st.accepted);
	EXPECT_EQ(4, st.done);
	EXPECT_EQ(2, st.overridden);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
}

#define MS_PRODUCERS	2
#define MS_IDS		16	/* each producer's own */
#define MS_ROUNDS	2000

struct ms_producer {
	int fd;
	__u64 first;
	unsigned int rounds;	/* done so far, and MS_ROUNDS + 1 at the end: atomic */
	int err;
};

/* Versions 1 to MS_ROUNDS of each of its ids, a vector of them a round. */
static void *ms_produce(void *arg)
{
	struct ms_producer *p = arg;
	struct tdispatch_submit_task ut[MS_IDS];
	struct td_pl pl[MS_IDS];
	unsigned int r, i;
	int ret;

	for (r = 1; r <= MS_ROUNDS && !p->err; r++) {
		for (i = 0; i < MS_IDS; i++) {
			pl[i] = (struct td_pl) { .id = p->first + i, .ver = r };
			ut[i] = (struct tdispatch_submit_task) {
				.id = p->first + i, .payload = uptr(&pl[i]),
				.payload_len = sizeof(pl[i]), .flags = TDISPATCH_TASK_MERGE,
			};
		}
		ret = td_submit_vec(p->fd, ut, MS_IDS);
		/* The call's errno, or the first task's that was refused. */
		for (i = 0; ret != MS_IDS && !p->err && i < MS_IDS; i++)
			p->err = ret < 0 ? -ret : -ut[i].status;
		__atomic_store_n(&p->rounds, r, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&p->rounds, MS_ROUNDS + 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Hold a taken batch until every producer has begun and ended another
 * round (or ended): merges of its ids must then make tasks of their own.
 */
static void ms_hold(struct ms_producer *p)
{
	unsigned int seen[MS_PRODUCERS], i;

	for (i = 0; i < MS_PRODUCERS; i++)
		seen[i] = __atomic_load_n(&p[i].rounds, __ATOMIC_ACQUIRE);
	for (i = 0; i < MS_PRODUCERS; i++)
		while (__atomic_load_n(&p[i].rounds, __ATOMIC_ACQUIRE) < seen[i] + 2 &&
		       __atomic_load_n(&p[i].rounds, __ATOMIC_ACQUIRE) <= MS_ROUNDS)
			sched_yield();
}

/*
 * Two producer threads, free to run on any CPU, merge while a worker
 * takes, and holds each batch
 * while they submit another round: each id's versions reach the worker in
 * order, and the last one submitted is the last one processed, so no
 * merge was lost; every submission is accounted for.
 */
TEST_F(life, merges_racing_takes_lose_no_newest_payload)
{
	struct ms_producer p[MS_PRODUCERS];
	__u64 last[MS_PRODUCERS * MS_IDS] = { };
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	bool joined[MS_PRODUCERS] = { };
	pthread_t th[MS_PRODUCERS];
	struct td_taken b;
	unsigned int i, n;
	int ret;

	td_pin_cpu0(_metadata, true);
	td_cfg_base(&c, "mstress", 8, 0);
	c.max_delay_ns = MSEC;
	td_create(_metadata, self->fd, &c);
	for (i = 0; i < MS_PRODUCERS; i++) {
		p[i] = (struct ms_producer) { .fd = self->fd, .first = i * MS_IDS };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, ms_produce, &p[i]));
	}
	for (n = 0; n < MS_PRODUCERS; ) {
		ret = td_take(self->fd, &b, 0, 10 * MSEC);
		if (!ret) {
			for (i = 0; i < b.tk.nr; i++) {
				struct td_pl pl = td_payload(&b, i);

				ASSERT_LT(pl.id, MS_PRODUCERS * MS_IDS);
				ASSERT_LT(last[pl.id], pl.ver) TH_LOG("id %llu went back", pl.id);
				last[pl.id] = pl.ver;
			}
			ms_hold(p);
			td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
			continue;
		}
		ASSERT_EQ(-ETIMEDOUT, ret);
		/* Every producer done, and nothing left: the end. */
		for (n = 0, i = 0; i < MS_PRODUCERS; i++) {
			if (!joined[i])
				joined[i] = !pthread_tryjoin_np(th[i], NULL);
			n += joined[i];
		}
		td_stats(_metadata, self->fd, &st);
		if (st.queued + st.pending + st.in_flight)
			n = 0;
	}
	for (i = 0; i < MS_PRODUCERS; i++)
		td_expect_item(_metadata, 0, p[i].err, "errno of producer", i);
	for (i = 0; i < MS_PRODUCERS * MS_IDS; i++)
		td_expect_item(_metadata, MS_ROUNDS, last[i], "last version processed of id", i);
	EXPECT_EQ(MS_PRODUCERS * MS_IDS * MS_ROUNDS, st.accepted);
	EXPECT_EQ(st.accepted, st.done + st.overridden) td_stats_log(_metadata, &st);
	EXPECT_LT(0, st.overridden) TH_LOG("nothing merged: the test tested nothing");
}

TEST_F(life, merge_refuses_what_it_cannot_keep)
{
	struct td_pl pl[9] = { };
	struct tdispatch_submit_task ut[] = {
		{ .deadline_ns = now_ns() + 60 * SEC },
		{ .not_before_ns = SEC },
		{ .max_attempts = 3 },
		{ .flags = TDISPATCH_TASK_WATCH, .not_before_ns = SEC, .watch_key = 1 },
		{ .payload_len = TDISPATCH_MERGE_PAYLOAD_MAX + 1 },
		{ .payload_len = 0 },
		{ .flags = 1U << 31 },
		{ .payload = 16 },
		{ },
	};
	struct tdispatch_stats_user st;
	unsigned int i, n = ARRAY_SIZE(ut);

	td_setup(_metadata, self->fd, 4, 0);
	for (i = 0; i < n; i++) {
		ut[i].id = i;
		ut[i].flags |= TDISPATCH_TASK_MERGE;
		if (!ut[i].payload)
			ut[i].payload = uptr(pl);
		if (!ut[i].payload_len && i != 5)
			ut[i].payload_len = sizeof(pl[0]);
	}
	EXPECT_EQ(1, td_submit_flags(self->fd, ut, n, TDISPATCH_SUBMIT_RELATIVE));
	for (i = 0; i + 2 < n; i++)
		td_expect_item(_metadata, -EINVAL, ut[i].status, "status of task", i);
	EXPECT_EQ(-EFAULT, ut[n - 2].status) TH_LOG("unreadable payload");
	EXPECT_EQ(0, ut[n - 1].status);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(1, st.accepted);
	EXPECT_EQ(n - 1, st.rejected);
	EXPECT_EQ(0, st.rejected_calls);
}

/* ---- TAKE wakes one waiter per batch, the longest waiting first -------- */

#define TAKERS	4

struct taker {
	int fd;
	pid_t tid;
	int entering;		/* about to block in TAKE */
	int served;		/* 0, or its place among the takers served */
	__u64 id;		/* the task it took */
	int err;
};

static int takers_served;

static void *taker_fn(void *arg)
{
	struct taker *t = arg;
	struct td_taken b;

	t->tid = syscall(SYS_gettid);
	__atomic_store_n(&t->entering, 1, __ATOMIC_SEQ_CST);
	t->err = td_take(t->fd, &b, 0, WAIT_NS);
	if (t->err)
		return NULL;
	t->id = b.t[0].id;
	t->err = td_complete(t->fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS);
	__atomic_store_n(&t->served, __atomic_add_fetch(&takers_served, 1, __ATOMIC_SEQ_CST),
			 __ATOMIC_SEQ_CST);
	return NULL;
}

/* A thread's scheduler state ('S', 'R', ...) and voluntary switches. */
static char task_state(pid_t tid, long *vcs)
{
	char path[64], line[256], st = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "State:", 6))
			sscanf(line + 6, " %c", &st);
		else if (vcs && !strncmp(line, "voluntary_ctxt_switches:", 24))
			*vcs = atol(line + 24);
	}
	fclose(f);
	return st;
}

/* Until thread @tid sleeps; false after WAIT_NS. */
static bool await_sleeping(pid_t tid)
{
	__u64 end = now_ns() + WAIT_NS;

	while (task_state(tid, NULL) != 'S')
		if (now_ns() > end)
			return false;
	return true;
}

TEST_F(life, take_wakes_one_waiter_a_batch_longest_waiting_first)
{
	struct taker tk[TAKERS] = {};
	pthread_t th[TAKERS];
	long vcs[TAKERS] = {}, now;
	unsigned int i, k;

	td_setup(_metadata, self->fd, 1, 0);
	takers_served = 0;
	/* Into TAKE one after another: each sleeps there before the next starts. */
	for (i = 0; i < TAKERS; i++) {
		tk[i].fd = self->fd;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, taker_fn, &tk[i]));
		while (!__atomic_load_n(&tk[i].entering, __ATOMIC_SEQ_CST))
			sched_yield();
		ASSERT_TRUE(await_sleeping(tk[i].tid)) TH_LOG("taker %u never slept in TAKE", i);
	}
	for (k = 0; k < TAKERS; k++) {
		for (i = k; i < TAKERS; i++)
			task_state(tk[i].tid, &vcs[i]);
		/* One batch: the longest waiting taker gets it, and no one else wakes. */
		td_submit_range(_metadata, self->fd, 100 + k, 1, 0, 0);
		ASSERT_EQ(0, pthread_join(th[k], NULL));
		EXPECT_EQ(0, tk[k].err) TH_LOG("taker %u: %s", k, strerror(-tk[k].err));
		EXPECT_EQ((int)k + 1, tk[k].served) TH_LOG("taker %u served out of turn", k);
		EXPECT_EQ(100 + k, tk[k].id);
		for (i = k + 1; i < TAKERS; i++) {
			ASSERT_TRUE(await_sleeping(tk[i].tid));
			task_state(tk[i].tid, &now);
			EXPECT_EQ(vcs[i], now) TH_LOG("taker %u was woken for batch %u", i, k);
		}
	}
}

TEST_HARNESS_MAIN
