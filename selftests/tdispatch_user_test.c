// SPDX-License-Identifier: GPL-2.0
/*
 * Dispatchers owned by a /dev/tdispatch file and worked on from userspace:
 * the success paths of CREATE, SUBMIT, TAKE, COMPLETE, CANCEL, QUERY and
 * STATS, leases and their redelivery, outcome events through read() and
 * readiness through poll and epoll.  Every bad input is in
 * tdispatch_user_input_test.c.
 *
 * Every snapshot of the counters is checked against the accounting
 * equation, and every event record's sequence number against the one
 * before it.  Nothing sleeps for a fixed time: the tests wait for a batch
 * (TAKE, poll) or an event (poll, read), with a timeout only as a bound;
 * only an expiring lease or a hold-off is waited for by time, through
 * TAKE's own timeout.
 */
#include "kselftest_harness.h"
#include "tdispatch_helpers.h"
#include "tdispatch_user.h"

/* Success paths */

/*
 * A program built against a later header passes larger structs, whose
 * fields this kernel does not know left zero: they work, and only what
 * the kernel knows is written back, as the size field then says.
 */
TEST_F(user, a_later_callers_larger_structs_work)
{
	struct {
		struct tdispatch_create c;
		__u64 later;
	} create = { .later = 0 };
	struct {
		struct tdispatch_stats_user st;
		__u64 later;
	} stats = { .st.size = sizeof(stats), .later = 0 };
	struct tdispatch_submit_task ut;
	struct td_pl pl;

	td_cfg(&create.c, 1, 0);
	create.c.size = sizeof(create);
	ASSERT_EQ(0, ioctl(self->fd, TDISPATCH_IOC_CREATE, &create))
		TH_LOG("create: %s", strerror(errno));
	td_task(&ut, &pl, 1, 1);
	ASSERT_EQ(1, td_submit_vec(self->fd, &ut, 1)) TH_LOG("submit: %s", strerror(errno));
	stats.st.delayed = 0;
	ASSERT_EQ(0, ioctl(self->fd, TDISPATCH_IOC_STATS, &stats))
		TH_LOG("stats: %s", strerror(errno));
	EXPECT_EQ(1, stats.st.accepted);
	EXPECT_EQ(sizeof(stats.st), stats.st.size);
	EXPECT_EQ(0, stats.later);
	/* A field it does not know, set: E2BIG, and nothing written. */
	stats.st.size = sizeof(stats);
	stats.later = 1;
	stats.st.accepted = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TDISPATCH_IOC_STATS, &stats));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(0, stats.st.accepted);
}

TEST_F(user, create_without_events_works_and_has_nothing_to_read)
{
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	struct tdispatch_event ev;
	struct td_taken b;
	__u64 lease;

	td_cfg(&c, 2, 0);
	c.workers = 1;
	lease = td_take_pair(_metadata, self->fd, &c, &b);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	/* One worker: the next batch is cut only once the first was accounted for. */
	SUBMIT_IDS(self->fd, 3, 4);
	lease = TAKE_IDS(self->fd, &b, 0, 3, 4);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(4, st.accepted);
	EXPECT_EQ(2, st.done);
	EXPECT_EQ(2, st.in_flight);
	EXPECT_EQ(2, st.batches);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_REJECTED(self->fd, ENXIO, "read without TDISPATCH_CREATE_EVENTS",
			read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(0, td_poll(self->fd, POLL_ALL, 0));
}

TEST_F(user, success_is_reported_done)
{
	struct tdispatch_stats_user st;
	__u64 lease, t0, first = ~0ULL;
	struct td_taken b;
	unsigned int i;

	td_setup(_metadata, self->fd, 3, 16);
	t0 = now_ns();
	SUBMIT_IDS(self->fd, 10, 11, 12);
	lease = TAKE_IDS(self->fd, &b, 0, 10, 11, 12);
	for (i = 0; i < b.tk.nr; i++)
		first = first < b.t[i].submitted_ns ? first : b.t[i].submitted_ns;
	EXPECT_LE(t0, first) TH_LOG("submitted_ns is the time of SUBMIT");
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 10, DONE, 0 }, { 11, DONE, 0 }, { 12, DONE, 0 });
	td_expect_no_events(_metadata, self->fd);
	EXPECT_ENDS(self->fd, &st, [DONE] = 3);
	EXPECT_EQ(1, st.batches);
	EXPECT_EQ(0, st.retries);
	EXPECT_EQ(0, st.rejected_calls);
}

/* One vector with good tasks and every kind of bad one. */
enum { PL_SMALL, PL_BIG, PL_UNMAPPED };

static const struct td_mixed {
	__u64 id;
	__u32 len;
	int where;
	__s32 status;
} td_mixed[] = {
	{ 1, sizeof(struct td_pl), PL_SMALL, 0 },
	{ 2, 0, PL_SMALL, -EINVAL },
	{ 3, sizeof(struct td_pl), PL_SMALL, 0 },
	{ 4, TDISPATCH_PAYLOAD_MAX + 1, PL_BIG, -EINVAL },
	{ 5, sizeof(struct td_pl), PL_UNMAPPED, -EFAULT },
	{ 6, TDISPATCH_PAYLOAD_MAX, PL_BIG, 0 },
};

/* Submit td_mixed: each task's status as listed, the call itself fine. */
static void td_submit_mixed(struct __test_metadata *_metadata, int fd)
{
	struct tdispatch_submit_task ut[ARRAY_SIZE(td_mixed)];
	struct td_pl pl[ARRAY_SIZE(td_mixed)];
	char *edge = td_edge(_metadata);
	__u64 before = td_rejected_calls(_metadata, fd);
	unsigned int i, good = 0;

	memset(td_big, 0x6b, sizeof(td_big));
	for (i = 0; i < ARRAY_SIZE(td_mixed); i++) {
		const struct td_mixed *m = &td_mixed[i];

		td_task(&ut[i], &pl[i], m->id, 0);
		ut[i].payload_len = m->len;
		if (m->where == PL_BIG)
			ut[i].payload = uptr(td_big);
		else if (m->where == PL_UNMAPPED)
			ut[i].payload = uptr(edge + PAGE);
		good += !m->status;
	}
	EXPECT_EQ(good, td_submit_vec(fd, ut, ARRAY_SIZE(ut)));
	for (i = 0; i < ARRAY_SIZE(td_mixed); i++)
		td_expect_item(_metadata, td_mixed[i].status, ut[i].status,
			       "status of the task of id", td_mixed[i].id);
	EXPECT_EQ(before, td_rejected_calls(_metadata, fd)) TH_LOG("the call itself did not fail");
	munmap(edge, 2 * PAGE);
}

TEST_F(user, vectored_submit_reports_each_task)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	unsigned int i;

	/* The three good tasks make a batch. */
	td_setup(_metadata, self->fd, 3, 16);
	td_submit_mixed(_metadata, self->fd);
	ASSERT_EQ(0, td_take(self->fd, &b, 0, WAIT_NS));
	ASSERT_EQ(3, b.tk.nr);
	for (i = 0; i < b.tk.nr; i++) {
		const struct tdispatch_lease_task *t = &b.t[i];
		const struct td_mixed *m;
		bool same;

		ASSERT_LT(0, t->id);
		ASSERT_GE(ARRAY_SIZE(td_mixed), t->id);
		m = &td_mixed[t->id - 1];
		EXPECT_EQ(0, m->status) TH_LOG("refused id %llu was taken", t->id);
		EXPECT_EQ(m->len, t->payload_len) TH_LOG("id %llu", t->id);
		same = m->where == PL_BIG ?
		       !memcmp(td_big, b.buf + t->payload_off, t->payload_len) :
		       td_payload(&b, i).id == t->id;
		EXPECT_TRUE(same) TH_LOG("payload of id %llu", t->id);
	}
	td_finish(_metadata, self->fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 1, DONE, 0 }, { 3, DONE, 0 }, { 6, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 3);
	EXPECT_EQ(3, st.accepted);
}

/*
 * A small task's memory is kept when it ends and reused by the next
 * SUBMIT: what a worker takes out is the new task's payload at its own
 * length, never bytes of the task before it.
 */
TEST_F(user, reused_task_memory_carries_only_the_new_payload)
{
	unsigned char older[64], newer[5];
	struct tdispatch_event ev[TD_NR];
	struct tdispatch_submit_task ut[16];
	unsigned int round, got, i, k;
	struct td_taken b;

	memset(older, 0xa5, sizeof(older));
	memset(newer, 0x3c, sizeof(newer));
	td_setup(_metadata, self->fd, 16, 64);
	for (round = 0; round < 3; round++) {
		const unsigned char *pl = round & 1 ? newer : older;
		__u32 len = round & 1 ? sizeof(newer) : sizeof(older);

		for (i = 0; i < 16; i++)
			ut[i] = (struct tdispatch_submit_task) {
				.id = round * 16 + i, .payload = uptr(pl), .payload_len = len,
			};
		ASSERT_EQ(16, td_submit_vec(self->fd, ut, 16));
		ASSERT_EQ(0, td_take(self->fd, &b, 0, WAIT_NS));
		ASSERT_EQ(16, b.tk.nr);
		for (i = 0; i < 16; i++) {
			EXPECT_EQ(len, b.t[i].payload_len) TH_LOG("round %u", round);
			EXPECT_EQ(0, memcmp(pl, b.buf + b.t[i].payload_off, len))
				TH_LOG("round %u, id %llu", round, b.t[i].id);
		}
		td_finish(_metadata, self->fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS);
		/*
		 * Their outcomes come as they are released, so the next round
		 * finds most of their memory kept (which userspace cannot see;
		 * what it can see, each round checks).
		 */
		for (got = 0; got < 16; ) {
			k = td_read_records(_metadata, self->fd, ev, 16 - got);
			for (i = 0; i < k; i++)
				got += ev[i].type == TDISPATCH_EVENT_OUTCOME;
		}
	}
}

TEST_F(user, refused_tasks_count_as_rejected)
{
	struct tdispatch_stats_user st;

	td_setup(_metadata, self->fd, TD_NR, 0);
	td_submit_mixed(_metadata, self->fd);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(3, st.accepted);
	/* uapi: rejected counts tasks refused at submission, bad payloads too. */
	EXPECT_EQ(3, st.rejected) TH_LOG("zero-length, too long and unreadable payloads");
}

TEST_F(user, same_id_before_a_take_keeps_the_newest)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	unsigned int i;
	__u64 lease;

	td_pin_cpu0(_metadata, false);
	td_setup(_metadata, self->fd, 2, 16);
	/* Versions 0, 1 and 2: id 1 twice, then id 2 fills the batch. */
	td_submit(_metadata, self->fd, (const __u64[]){ 1, 1, 2 }, 3, 0);
	EXPECT_OUTCOMES(self->fd, { 1, OVERRIDDEN, 0 });
	lease = TAKE_IDS(self->fd, &b, 0, 1, 2);
	for (i = 0; i < b.tk.nr; i++)
		td_expect_item(_metadata, b.t[i].id == 1 ? 1 : 2, td_payload(&b, i).ver,
			       "payload version of id", b.t[i].id);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 1, DONE, 0 }, { 2, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 2, [OVERRIDDEN] = 1);
	EXPECT_EQ(3, st.accepted);
	EXPECT_EQ(1, st.batches);
}

TEST_F(user, newer_task_waits_behind_the_one_in_flight)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	__u64 lease;

	td_pin_cpu0(_metadata, false);
	td_setup(_metadata, self->fd, 1, 16);
	SUBMIT_IDS(self->fd, 7);
	lease = TAKE_IDS(self->fd, &b, 0, 7);
	/* Version 1 waits behind the worker's 7; version 2 replaces it. */
	td_submit(_metadata, self->fd, (const __u64[]){ 7, 7 }, 2, 1);
	EXPECT_OUTCOMES(self->fd, { 7, OVERRIDDEN, 0 });
	td_query(_metadata, self->fd, 7, TDISPATCH_STATE_IN_FLIGHT, 0, 1);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	lease = TAKE_IDS(self->fd, &b, 0, 7);
	EXPECT_EQ(2, td_payload(&b, 0).ver);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 7, DONE, 0 }, { 7, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 2, [OVERRIDDEN] = 1);
}

TEST_F(user, query_reports_where_a_task_is)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	__u64 lease;

	td_setup(_metadata, self->fd, 2, 16);
	td_query(_metadata, self->fd, 5, TDISPATCH_STATE_ABSENT, 0, 0);
	SUBMIT_IDS(self->fd, 5);
	td_query(_metadata, self->fd, 5, TDISPATCH_STATE_PENDING, 0, 0);
	SUBMIT_IDS(self->fd, 6);
	lease = TAKE_IDS(self->fd, &b, 0, 5, 6);
	td_query(_metadata, self->fd, 5, TDISPATCH_STATE_IN_FLIGHT, 0, 0);
	SUBMIT_IDS(self->fd, 5);
	td_query(_metadata, self->fd, 5, TDISPATCH_STATE_IN_FLIGHT, 0, 1);
	/* The retried 5 loses to the newer one; 6 comes back tried once. */
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_TRANSIENT);
	EXPECT_OUTCOMES(self->fd, { 5, OVERRIDDEN, 1 });
	ASSERT_EQ(0, td_take(self->fd, &b, 0, WAIT_NS));
	ASSERT_EQ(2, b.tk.nr);
	td_query(_metadata, self->fd, 5, TDISPATCH_STATE_IN_FLIGHT, 0, 0);
	td_query(_metadata, self->fd, 6, TDISPATCH_STATE_IN_FLIGHT, 1, 0);
	td_finish(_metadata, self->fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 5, DONE, 0 }, { 6, DONE, 1 });
	td_query(_metadata, self->fd, 5, TDISPATCH_STATE_ABSENT, 0, 0);
	td_query(_metadata, self->fd, 6, TDISPATCH_STATE_ABSENT, 0, 0);
	EXPECT_ENDS(self->fd, &st, [DONE] = 2, [OVERRIDDEN] = 1);
	EXPECT_EQ(1, st.retries);
}

TEST_F(user, cancel_pending_busy_and_unknown)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	__u64 lease;

	td_setup(_metadata, self->fd, 2, 16);
	SUBMIT_IDS(self->fd, 1);
	EXPECT_EQ(0, td_cancel(self->fd, 1));
	/* The cancelled task was released before CANCEL returned. */
	EXPECT_OUTCOMES(self->fd, { 1, CANCELLED, 0 });
	EXPECT_REJECTED(self->fd, ENOENT, "cancel a cancelled id", td_cancel(self->fd, 1));
	EXPECT_REJECTED(self->fd, ENOENT, "cancel an unknown id", td_cancel(self->fd, 99));
	SUBMIT_IDS(self->fd, 2, 3);
	lease = TAKE_IDS(self->fd, &b, 0, 2, 3);
	EXPECT_REJECTED(self->fd, EBUSY, "cancel an id only in flight", td_cancel(self->fd, 2));
	SUBMIT_IDS(self->fd, 2);
	EXPECT_EQ(0, td_cancel(self->fd, 2)) TH_LOG("the newer 2 waiting behind the worker's");
	EXPECT_OUTCOMES(self->fd, { 2, CANCELLED, 0 });
	td_query(_metadata, self->fd, 2, TDISPATCH_STATE_IN_FLIGHT, 0, 0);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 2, DONE, 0 }, { 3, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 2, [CANCELLED] = 2);
	EXPECT_EQ(3, st.rejected_calls);
}

/*
 * A batch completed with @result comes back at the head of the line, tried
 * once more, after the hold-off of that result.  The other result's delay
 * is long, so taking the retry in time shows which delay applied.
 */
static void td_check_retry(struct __test_metadata *_metadata, int fd, __u32 result)
{
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	struct td_taken b;
	__u64 lease, t0;

	td_cfg(&c, 2, 16);
	c.congestion_delay_ns = result == TDISPATCH_RESULT_CONGESTION ? HOLD_NS : 20 * SEC;
	c.transient_delay_ns = result == TDISPATCH_RESULT_TRANSIENT ? HOLD_NS : 20 * SEC;
	lease = td_take_pair(_metadata, fd, &c, &b);
	t0 = now_ns();
	td_finish(_metadata, fd, lease, result);
	lease = TAKE_IDS(fd, &b, 1, 1, 2);
	EXPECT_LE(t0 + HOLD_NS, now_ns()) TH_LOG("retried before the hold-off ended");
	td_finish(_metadata, fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(fd, { 1, DONE, 1 }, { 2, DONE, 1 });
	EXPECT_ENDS(fd, &st, [DONE] = 2);
	EXPECT_EQ(2, st.retries);
	EXPECT_EQ(1, st.holdoffs);
	EXPECT_EQ(2, st.batches);
	EXPECT_EQ(0, st.redelivered);
}

TEST_F(user, transient_is_retried_after_its_delay)
{
	td_check_retry(_metadata, self->fd, TDISPATCH_RESULT_TRANSIENT);
}

TEST_F(user, congestion_is_retried_after_its_delay)
{
	td_check_retry(_metadata, self->fd, TDISPATCH_RESULT_CONGESTION);
}

TEST_F(user, permanent_fails_the_batch)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	__u64 lease;

	lease = td_take_pair(_metadata, self->fd, NULL, &b);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_PERMANENT);
	EXPECT_OUTCOMES(self->fd, { 1, FAILED, 0 }, { 2, FAILED, 0 });
	EXPECT_ENDS(self->fd, &st, [FAILED] = 2);
	EXPECT_EQ(0, st.retries);
	EXPECT_EQ(0, st.holdoffs);
}

TEST_F(user, past_deadline_expires_unprocessed)
{
	struct tdispatch_stats_user st;
	struct tdispatch_submit_task ut[2];
	struct td_pl pl[2];
	struct td_taken b;
	__u64 lease;

	td_setup(_metadata, self->fd, 1, 16);
	td_task(&ut[0], &pl[0], 1, 0);
	ut[0].deadline_ns = now_ns() - 1;
	td_task(&ut[1], &pl[1], 2, 0);
	ut[1].deadline_ns = now_ns() + 60 * SEC;
	ASSERT_EQ(2, td_submit_vec(self->fd, ut, 2));
	lease = TAKE_IDS(self->fd, &b, 0, 2);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 1, EXPIRED, 0 }, { 2, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 1, [EXPIRED] = 1);
}

TEST_F(user, full_pending_set_drops_the_oldest)
{
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	struct td_taken b;
	__u64 lease;

	td_pin_cpu0(_metadata, false);
	td_cfg(&c, 2, 16);
	c.max_buffer = 2;
	c.workers = 1;
	lease = td_take_pair(_metadata, self->fd, &c, &b);
	/* The only worker is busy: 3 and 4 fill the set, 5 pushes 3 out. */
	SUBMIT_IDS(self->fd, 3, 4, 5);
	EXPECT_OUTCOMES(self->fd, { 3, DROPPED, 0 });
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(2, st.pending);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	lease = TAKE_IDS(self->fd, &b, 0, 4, 5);
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 1, DONE, 0 }, { 2, DONE, 0 }, { 4, DONE, 0 }, { 5, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 4, [DROPPED] = 1);
}

/*
 * The batch of ids 1 and 2 under lease @old was given up: it comes back at
 * once, tried once more, under a new lease, and @old is gone.  Returns when
 * it came back.
 */
static __u64 td_expect_redelivered(struct __test_metadata *_metadata, int fd, __u64 old)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	__u64 lease, back;

	lease = TAKE_IDS(fd, &b, 1, 1, 2);
	back = now_ns();
	EXPECT_NE(old, lease) TH_LOG("a redelivered batch needs a new lease");
	td_stats(_metadata, fd, &st);
	EXPECT_EQ(1, st.redelivered);
	EXPECT_EQ(2, st.retries);
	EXPECT_EQ(0, st.holdoffs) TH_LOG("redelivery does not hold off");
	EXPECT_REJECTED(fd, ENOENT, "complete the given-up lease",
			td_complete(fd, old, TDISPATCH_RESULT_SUCCESS));
	td_finish(_metadata, fd, lease, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(fd, { 1, DONE, 1 }, { 2, DONE, 1 });
	EXPECT_ENDS(fd, &st, [DONE] = 2);
	EXPECT_EQ(2, st.batches);
	return back;
}

TEST_F(user, expired_lease_is_redelivered)
{
	struct tdispatch_create c;
	struct td_taken b;
	__u64 old, t0;

	td_cfg(&c, 2, 16);
	c.lease_ns = LEASE_NS;
	td_create(_metadata, self->fd, &c);
	SUBMIT_IDS(self->fd, 1, 2);
	ASSERT_EQ(POLLRDBAND, td_poll(self->fd, POLLRDBAND, WAIT_MS));
	t0 = now_ns();
	old = TAKE_IDS(self->fd, &b, 0, 1, 2);
	EXPECT_LE(t0 + LEASE_NS, td_expect_redelivered(_metadata, self->fd, old))
		TH_LOG("redelivered before the lease ran out");
}

TEST_F(user, killed_worker_lease_is_redelivered_at_once)
{
	struct td_taken b;
	__u64 old = 0;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	/* A 60 s lease: only the worker's exit can bring it back in time. */
	td_setup(_metadata, self->fd, 2, 16);
	SUBMIT_IDS(self->fd, 1, 2);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (!td_take(self->fd, &b, 0, WAIT_NS) && b.tk.nr == 2)
			old = b.tk.batch;
		if (write(p[1], &old, sizeof(old)) != sizeof(old))
			_exit(1);
		pause();
		_exit(0);
	}
	n = read(p[0], &old, sizeof(old));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(sizeof(old), n);
	ASSERT_NE(0, old) TH_LOG("the child did not get the batch");
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	td_expect_redelivered(_metadata, self->fd, old);
	close(p[0]);
	close(p[1]);
}

TEST_F(user, closing_a_descriptor_redelivers_its_leases)
{
	struct td_taken b;
	__u64 old;
	int fd;

	old = td_take_pair(_metadata, self->fd, NULL, &b);
	fd = dup(self->fd);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, close(fd));
	td_expect_redelivered(_metadata, self->fd, old);
}

/* The dispatcher's batch tracepoints, in a tracefs instance of our own. */
#define TRACE_INST	"/sys/kernel/tracing/instances/tdispatch-close"

static int td_trace_write(const char *file, const char *val)
{
	char path[160];

	snprintf(path, sizeof(path), TRACE_INST "/%s", file);
	return td_write_file(path, val);
}

/* Lines of the instance's trace that contain @what. */
static unsigned int td_trace_count(const char *what)
{
	char line[512];
	unsigned int n = 0;
	FILE *f = fopen(TRACE_INST "/trace", "re");

	if (!f)
		return ~0U;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, what);
	fclose(f);
	return n;
}

/*
 * The last close of a file with parked and taken batches: each batch
 * ends once, cancelled, and no batch is cut again on the way out.
 */
TEST_F(user, last_close_cancels_parked_batches_without_recutting_them)
{
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	struct td_taken b;
	int i;

	rmdir(TRACE_INST);
	if (mkdir(TRACE_INST, 0755))
		SKIP(return, "no tracefs instances: %s", strerror(errno));
	ASSERT_EQ(0, td_trace_write("events/tdispatch/enable", "1"));
	td_cfg_base(&c, "td-closing", 1, 0);
	c.workers = 4;
	td_create(_metadata, self->fd, &c);
	td_submit(_metadata, self->fd, (const __u64[]){ 1, 2, 3, 4, 5, 6, 7, 8 }, 8, 0);
	/* Four batches parked on kworkers, two of them taken. */
	for (i = 0; i < WAIT_MS; i++) {
		td_stats(_metadata, self->fd, &st);
		if (st.in_flight == 4)
			break;
		usleep(1000);
	}
	ASSERT_EQ(4, st.in_flight);
	ASSERT_EQ(0, td_take(self->fd, &b, 0, WAIT_NS));
	ASSERT_EQ(0, td_take(self->fd, &b, 0, WAIT_NS));
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	EXPECT_EQ(4, td_trace_count("tdispatch_batch_start: td-closing "));
	EXPECT_EQ(4, td_trace_count("tdispatch_batch_end: td-closing "));
	EXPECT_EQ(8, td_trace_count(" reason=cancelled"));
	td_trace_write("events/tdispatch/enable", "0");
	rmdir(TRACE_INST);
}

TEST_F(user, events_overflow_reports_lost)
{
	static const struct {
		__u32 type;
		__u64 id;
		__u64 lost;
	} want[] = {
		{ TDISPATCH_EVENT_OUTCOME, 1 },
		{ TDISPATCH_EVENT_OUTCOME, 2 },
		{ TDISPATCH_EVENT_OUTCOME, 3 },
		{ TDISPATCH_EVENT_OUTCOME, 4 },
		{ TDISPATCH_EVENT_LOST, 0, 6 },		/* 5 to 10 */
		{ TDISPATCH_EVENT_OUTCOME, 11 },
		{ TDISPATCH_EVENT_LOST, 0, 1 },		/* 12 */
	};
	struct tdispatch_event ev[ARRAY_SIZE(want) + 1];
	struct tdispatch_stats_user st;
	unsigned int i, n;
	__u64 id;

	td_setup(_metadata, self->fd, TD_NR, 4);
	SUBMIT_IDS(self->fd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
	/* A cancel releases at once: its event is queued before it returns. */
	for (id = 1; id <= 10; id++)
		td_cancel_ok(_metadata, self->fd, id);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(6, st.events_lost);
	n = td_read_records(_metadata, self->fd, ev, 2);
	/* Room again: the loss is recorded where it happened, then 11. */
	td_cancel_ok(_metadata, self->fd, 11);
	td_cancel_ok(_metadata, self->fd, 12);
	while (n < ARRAY_SIZE(want))
		n += td_read_records(_metadata, self->fd, ev + n, ARRAY_SIZE(ev) - n);
	ASSERT_EQ(ARRAY_SIZE(want), n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(want[i].type, ev[i].type) TH_LOG("record %u", i);
		EXPECT_EQ(want[i].lost, ev[i].lost) TH_LOG("record %u", i);
		if (want[i].type != TDISPATCH_EVENT_OUTCOME)
			continue;
		EXPECT_EQ(want[i].id, ev[i].id) TH_LOG("record %u", i);
		EXPECT_EQ(CANCELLED, ev[i].outcome) TH_LOG("record %u", i);
	}
	EXPECT_EQ(12, td_seq);
	td_expect_no_events(_metadata, self->fd);
	EXPECT_ENDS(self->fd, &st, [CANCELLED] = 12);
	EXPECT_EQ(7, st.events_lost);
}

TEST_F(user, poll_and_epoll_readiness)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDBAND };
	struct tdispatch_stats_user st;
	struct td_taken b;
	__u64 lease;
	int ep;

	EXPECT_EQ(0, td_poll(self->fd, POLL_ALL, 0)) TH_LOG("ready without a dispatcher");
	td_setup(_metadata, self->fd, 2, 16);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &e));
	EXPECT_EQ(0, epoll_wait(ep, &e, 1, 0));
	EXPECT_EQ(0, td_poll(self->fd, POLL_ALL, 0));
	SUBMIT_IDS(self->fd, 1, 2);
	/* The acceptor cuts the batch and a kworker parks it: wait for that. */
	EXPECT_EQ(POLLRDBAND, td_poll(self->fd, POLL_ALL, WAIT_MS));
	ASSERT_EQ(1, epoll_wait(ep, &e, 1, 0));
	EXPECT_EQ(EPOLLRDBAND, e.events);
	lease = TAKE_IDS(self->fd, &b, 0, 1, 2);
	EXPECT_EQ(0, td_poll(self->fd, POLL_ALL, 0)) TH_LOG("nothing left to take");
	EXPECT_EQ(0, epoll_wait(ep, &e, 1, 0));
	td_finish(_metadata, self->fd, lease, TDISPATCH_RESULT_SUCCESS);
	ASSERT_EQ(1, epoll_wait(ep, &e, 1, WAIT_MS));
	EXPECT_EQ(EPOLLIN, e.events);
	EXPECT_EQ(POLLIN | POLLRDNORM, td_poll(self->fd, POLL_ALL, 0));
	EXPECT_OUTCOMES(self->fd, { 1, DONE, 0 }, { 2, DONE, 0 });
	EXPECT_EQ(0, td_poll(self->fd, POLL_ALL, 0));
	EXPECT_EQ(0, epoll_wait(ep, &e, 1, 0));
	EXPECT_ENDS(self->fd, &st, [DONE] = 2);
	close(ep);
}

TEST_F(user, epoll_added_before_create_hears_the_dispatcher)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDBAND };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &e));
	EXPECT_EQ(0, epoll_wait(ep, &e, 1, 0)) TH_LOG("ready without a dispatcher");
	td_setup(_metadata, self->fd, 2, 16);
	EXPECT_EQ(0, epoll_wait(ep, &e, 1, 0));
	SUBMIT_IDS(self->fd, 1, 2);
	/* The same file, now with a dispatcher and a batch ready. */
	ASSERT_EQ(1, epoll_wait(ep, &e, 1, WAIT_MS)) TH_LOG("no wakeup for a batch");
	EXPECT_EQ(EPOLLRDBAND, e.events);
	close(ep);
}

TEST_F(user, nonblocking_and_timed_take)
{
	struct tdispatch_stats_user st;
	struct tdispatch_event ev;
	struct td_taken b;
	__u64 t0;
	int fl;

	td_setup(_metadata, self->fd, 2, 16);
	EXPECT_WAIT_FAILS(self->fd, EAGAIN, "TDISPATCH_TAKE_NONBLOCK",
			  td_take(self->fd, &b, TDISPATCH_TAKE_NONBLOCK, 0));
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_WAIT_FAILS(self->fd, EAGAIN, "take on an O_NONBLOCK file",
			  td_take(self->fd, &b, 0, WAIT_NS));
	EXPECT_WAIT_FAILS(self->fd, EAGAIN, "read on an O_NONBLOCK file",
			  read(self->fd, &ev, sizeof(ev)));
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, fl));
	t0 = now_ns();
	EXPECT_WAIT_FAILS(self->fd, ETIMEDOUT, "take with a 20 ms timeout",
			  td_take(self->fd, &b, 0, 20 * MSEC));
	EXPECT_LE(t0 + 20 * MSEC, now_ns());
	SUBMIT_IDS(self->fd, 1, 2);
	EXPECT_EQ(POLLRDBAND, td_poll(self->fd, POLLRDBAND, WAIT_MS));
	ASSERT_EQ(0, td_take(self->fd, &b, TDISPATCH_TAKE_NONBLOCK, 0));
	td_check_batch(_metadata, &b, (const __u64[]){ 1, 2 }, 2, 0);
	td_finish(_metadata, self->fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS);
	EXPECT_OUTCOMES(self->fd, { 1, DONE, 0 }, { 2, DONE, 0 });
	EXPECT_ENDS(self->fd, &st, [DONE] = 2);
}

TEST_HARNESS_MAIN
