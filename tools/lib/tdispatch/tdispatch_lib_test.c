// SPDX-License-Identifier: GPL-2.0
/*
 * libtdispatch's own test: each of its calls against the running module,
 * through the library only.  Run as root with tdispatch.ko loaded (make
 * check does, in the VM).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "libtdispatch.h"

#define NR_IDS		64

/* What the worker's callback saw. */
struct rec {
	uint64_t last[NR_IDS];		/* last payload processed per id */
	unsigned int processed;
	uint64_t fail_id;		/* given PERMANENT by its own verdict */
};

FIXTURE(lib) {
	struct tdl t;
	struct tdl_worker w;
	struct rec rec;
};

FIXTURE_SETUP(lib)
{
	struct tdl_config c;

	memset(self, 0, sizeof(*self));
	self->rec.fail_id = ~0ULL;
	ASSERT_EQ(0, tdl_open(&self->t, 0));
	EXPECT_NE(0, self->t.features & TDISPATCH_FEAT_USER);
	EXPECT_NE(0, self->t.module_version[0]);
	tdl_config_init(&c, "libtest");
	c.max_buffer = 4096;
	c.max_delayed = 64;
	ASSERT_EQ(0, tdl_create(&self->t, &c));
	ASSERT_EQ(16, self->t.max_batch);
	ASSERT_EQ(0, tdl_worker_init(&self->w, &self->t));
}

FIXTURE_TEARDOWN(lib)
{
	tdl_worker_free(&self->w);
	tdl_close(&self->t);
}

/* The worker's callback: records each task's payload, one verdict apart. */
static uint32_t record(struct tdl_batch *b, void *arg)
{
	struct rec *rec = arg;
	uint32_t i, len;

	for (i = 0; i < b->nr; i++) {
		uint64_t id = b->tasks[i].id, v = 0;
		const void *p = tdl_payload(b, i, &len);

		if (len == sizeof(v))
			memcpy(&v, p, sizeof(v));
		if (id < NR_IDS)
			rec->last[id] = v;
		rec->processed++;
		if (id == rec->fail_id)
			tdl_set_result(b, i, TDISPATCH_RESULT_PERMANENT);
	}
	return TDISPATCH_RESULT_SUCCESS;
}

/* Work until nothing is queued, pending or in flight; the counters then. */
static void drain(struct __test_metadata *_metadata, struct tdl_worker *w,
		  struct rec *rec, struct tdispatch_stats_user *st)
{
	long ret;
	unsigned int idle = 0;

	for (;;) {
		ASSERT_EQ(0, tdl_stats(w->t, st));
		if (!st->queued && !st->pending && !st->in_flight)
			break;
		/* A second without a batch while some are left: a lost batch. */
		ret = tdl_worker_run(w, record, rec, 1, 100000000);
		ASSERT_LE(0, ret);
		idle = ret ? 0 : idle + 1;
		ASSERT_LT(idle, 10);
	}
	EXPECT_EQ(st->accepted, st->queued + st->delayed + st->pending + st->in_flight +
		  st->done + st->failed + st->overridden + st->expired + st->dropped +
		  st->cancelled);
}

/* Tasks 0..n-1 of 8-byte payloads @base + i over ids i % NR_IDS. */
static void make_tasks(struct tdispatch_submit_task *ut, uint64_t *pl, unsigned int n,
		       uint64_t base)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		pl[i] = base + i;
		ut[i] = tdl_task(i % NR_IDS, &pl[i], sizeof(pl[i]));
	}
}

/* A vector longer than one SUBMIT call: split, all accepted, coalesced. */
TEST_F(lib, submit_vector_and_work)
{
	static struct tdispatch_submit_task ut[3000];
	static uint64_t pl[3000];
	struct tdispatch_stats_user st;
	unsigned int i;

	make_tasks(ut, pl, 3000, 1000);
	ASSERT_EQ(3000, tdl_submit(&self->t, ut, 3000, 0));
	for (i = 0; i < 3000; i++)
		ASSERT_EQ(0, ut[i].status);
	drain(_metadata, &self->w, &self->rec, &st);
	EXPECT_EQ(3000, st.accepted);
	EXPECT_EQ(3000, st.done + st.overridden);
	EXPECT_EQ(st.done, self->rec.processed);
	/* Every id's last task is the one processed last. */
	for (i = 0; i < NR_IDS; i++)
		EXPECT_EQ(1000 + i + NR_IDS * ((3000 - 1 - i) / NR_IDS), self->rec.last[i]);
}

/*
 * Read your own completion: once COMPLETE returns, the counters, QUERY and
 * the events show the batch's tasks in their outcome.
 */
TEST_F(lib, complete_is_visible_at_once)
{
	struct tdispatch_stats_user st;
	struct tdispatch_query q;
	struct tdispatch_event ev;
	uint64_t v = 5;
	int round;

	for (round = 1; round <= 20; round++) {
		ASSERT_EQ(0, tdl_submit_one(&self->t, 9, &v, sizeof(v)));
		ASSERT_EQ(0, tdl_take(&self->w, 0, 0));
		ASSERT_EQ(1, self->w.batch.nr);
		ASSERT_EQ(0, tdl_complete(&self->w, TDISPATCH_RESULT_SUCCESS));
		ASSERT_EQ(0, tdl_stats(&self->t, &st));
		EXPECT_EQ(0, st.in_flight);
		EXPECT_EQ(round, st.done);
		ASSERT_EQ(0, tdl_query(&self->t, 9, &q));
		EXPECT_EQ(TDISPATCH_STATE_ABSENT, q.state);
		/* Without waiting: the event must be there already. */
		ASSERT_EQ(0, fcntl(self->t.fd, F_SETFL, O_NONBLOCK));
		ASSERT_EQ(1, tdl_read_events(&self->t, &ev, 1));
		ASSERT_EQ(0, fcntl(self->t.fd, F_SETFL, 0));
		EXPECT_EQ(TDISPATCH_OUTCOME_DONE, ev.outcome);
		EXPECT_EQ(9, ev.id);
	}
}

/* A per-task verdict: that task fails, the batch's result covers the rest. */
TEST_F(lib, per_task_result_and_events)
{
	struct tdispatch_event ev[8];
	struct tdispatch_stats_user st;
	struct tdispatch_submit_task ut[4];
	uint64_t pl[4];
	int n, got = 0, failed = 0, done = 0;

	self->rec.fail_id = 2;
	make_tasks(ut, pl, 4, 7);
	ASSERT_EQ(4, tdl_submit(&self->t, ut, 4, 0));
	drain(_metadata, &self->w, &self->rec, &st);
	EXPECT_EQ(3, st.done);
	EXPECT_EQ(1, st.failed);
	while (got < 4) {
		n = tdl_read_events(&self->t, ev, 8);
		ASSERT_GT(n, 0);
		for (int i = 0; i < n; i++) {
			ASSERT_EQ(TDISPATCH_EVENT_OUTCOME, ev[i].type);
			if (ev[i].outcome == TDISPATCH_OUTCOME_FAILED) {
				EXPECT_EQ(2, ev[i].id);
				failed++;
			} else {
				EXPECT_EQ(TDISPATCH_OUTCOME_DONE, ev[i].outcome);
				done++;
			}
		}
		got += n;
	}
	EXPECT_EQ(1, failed);
	EXPECT_EQ(3, done);
}

/* Delayed tasks: expedited by id and by key, cancelled, queried. */
TEST_F(lib, delayed_expedite_cancel_query)
{
	struct tdispatch_stats_user st;
	struct tdispatch_submit_task ut[5];
	struct tdispatch_query q;
	uint64_t pl[5];
	unsigned int i;

	make_tasks(ut, pl, 5, 50);
	for (i = 0; i < 5; i++) {
		ut[i].not_before_ns = 3600ULL * 1000000000ULL;	/* an hour from now */
		ut[i].flags = i < 3 ? TDISPATCH_TASK_WATCH : 0;
		ut[i].watch_key = 77;
	}
	ASSERT_EQ(5, tdl_submit(&self->t, ut, 5, TDISPATCH_SUBMIT_RELATIVE));
	ASSERT_EQ(0, tdl_query(&self->t, 4, &q));
	EXPECT_EQ(TDISPATCH_STATE_DELAYED, q.state);
	EXPECT_EQ(1, q.delayed);
	EXPECT_EQ(3, tdl_expedite_key(&self->t, 77));
	EXPECT_EQ(-ENOENT, tdl_expedite_key(&self->t, 77));
	EXPECT_EQ(0, tdl_expedite(&self->t, 3));
	EXPECT_EQ(-ENOENT, tdl_expedite(&self->t, 3));
	EXPECT_EQ(0, tdl_cancel(&self->t, 4));
	drain(_metadata, &self->w, &self->rec, &st);
	EXPECT_EQ(4, st.done);
	EXPECT_EQ(1, st.cancelled);
	EXPECT_EQ(4, st.expedited);
	EXPECT_EQ(1, st.key_expedites);
	EXPECT_EQ(0, st.delayed);
}

/* The rate limit is set and shown; bad input is refused with its errno. */
TEST_F(lib, rate_and_bad_input)
{
	struct tdispatch_stats_user st;
	struct tdl_worker none;
	struct tdl_config c;
	struct tdl other;
	char big[TDISPATCH_PAYLOAD_MAX + 1] = { 0 };

	ASSERT_EQ(0, tdl_set_rate(&self->t, 1000, 32));
	ASSERT_EQ(0, tdl_stats(&self->t, &st));
	EXPECT_EQ(1000, st.rate);
	EXPECT_EQ(32, st.burst);
	EXPECT_EQ(-EINVAL, tdl_submit_one(&self->t, 1, big, 0));
	EXPECT_EQ(-EINVAL, tdl_submit_one(&self->t, 1, big, sizeof(big)));
	tdl_config_init(&c, "a name far longer than the kernel keeps");
	EXPECT_EQ(-EINVAL, tdl_create(&self->t, &c));
	tdl_config_init(&c, "again");
	EXPECT_EQ(-EEXIST, tdl_create(&self->t, &c));
	/* A file with no dispatcher of its own has no worker. */
	ASSERT_EQ(0, tdl_open(&other, 0));
	EXPECT_EQ(-EINVAL, tdl_worker_init(&none, &other));
	EXPECT_GE(tdl_list(&other, NULL, 0), 0);
	tdl_close(&other);
}

/*
 * A file opened elsewhere (here a dup, as a child inherits one) works the
 * same dispatcher once adopted; a file that is not the device is refused
 * and stays open.
 */
TEST_F(lib, adopt_an_inherited_file)
{
	struct tdispatch_stats_user st;
	struct tdl_worker w;
	struct tdl other;
	int fd;

	fd = dup(self->t.fd);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, tdl_adopt(&other, fd));
	EXPECT_EQ(self->t.features, other.features);
	EXPECT_EQ(0, strcmp(self->t.module_version, other.module_version));
	EXPECT_EQ(0, other.max_batch);
	EXPECT_EQ(-EINVAL, tdl_worker_init(&w, &other));
	other.max_batch = 1024;
	ASSERT_EQ(0, tdl_worker_init(&w, &other));
	ASSERT_EQ(0, tdl_submit_one(&other, 5, "x", 1));
	ASSERT_EQ(0, tdl_take(&w, 0, 0));
	EXPECT_EQ(1, w.batch.nr);
	EXPECT_EQ(5, w.batch.tasks[0].id);
	ASSERT_EQ(0, tdl_complete(&w, TDISPATCH_RESULT_SUCCESS));
	ASSERT_EQ(0, tdl_stats(&self->t, &st));
	EXPECT_EQ(1, st.done);
	tdl_worker_free(&w);
	tdl_close(&other);
	EXPECT_EQ(-1, fcntl(fd, F_GETFD));

	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(-ENOTTY, tdl_adopt(&other, fd));
	EXPECT_EQ(-1, other.fd);
	EXPECT_EQ(0, fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
	close(fd);
}

/* Shared slots: writes with no call, a KICK when one is owed, newest wins. */
TEST_F(lib, slots_write_kick_and_work)
{
	struct tdispatch_stats_user st;
	struct tdl_slots sl, again;
	uint64_t v;
	unsigned int i;
	int owed = 0;

	ASSERT_EQ(0, tdl_slots_map(&self->t, &sl, 64));
	EXPECT_EQ(-EEXIST, tdl_slots_map(&self->t, &again, 128));
	/* The same number again maps the same slots. */
	ASSERT_EQ(0, tdl_slots_map(&self->t, &again, 64));
	again.slot[5].pad = 7;
	EXPECT_EQ(7, sl.slot[5].pad);
	tdl_slots_unmap(&again);
	for (v = 1; v <= 10; v++)
		for (i = 0; i < NR_IDS; i++)
			owed |= tdl_slot_write(&sl, i, i, &(uint64_t){ 100 * v + i }, sizeof(v));
	EXPECT_EQ(1, owed);
	EXPECT_EQ(-EINVAL, tdl_slot_write(&sl, 64, 0, &v, sizeof(v)));
	EXPECT_EQ(-EINVAL, tdl_slot_write(&sl, 0, 0, &v, TDISPATCH_SLOT_PAYLOAD_MAX + 1));
	EXPECT_EQ(NR_IDS, tdl_kick(&self->t));
	drain(_metadata, &self->w, &self->rec, &st);
	/* Each slot's task carried its newest write; the others were replaced in it. */
	for (i = 0; i < NR_IDS; i++)
		EXPECT_EQ(1000 + i, self->rec.last[i]);
	EXPECT_EQ(NR_IDS, st.accepted);
	EXPECT_EQ(NR_IDS * 10, st.slot_writes);
	EXPECT_EQ(NR_IDS, st.done);
	EXPECT_EQ(0, tdl_kick(&self->t));
	tdl_slots_unmap(&sl);
}

static uint32_t never_called(struct tdl_batch *b, void *arg)
{
	(void)b;
	*(int *)arg = 1;
	return TDISPATCH_RESULT_SUCCESS;
}

/*
 * A handle whose setup failed (tdl_open() without the module, tdl_create()
 * refused) gives an errno at every later call, as README's example makes
 * them, and never crashes.
 */
TEST(a_handle_whose_setup_failed_gives_errnos)
{
	struct tdl_config c;
	struct tdl_worker w;
	struct tdl t;
	int called = 0;

	/* What tdl_open() leaves when it fails. */
	memset(&t, 0, sizeof(t));
	t.fd = -1;
	tdl_config_init(&c, "failed");
	EXPECT_EQ(-EBADF, tdl_create(&t, &c));
	EXPECT_EQ(-EBADF, tdl_submit_one(&t, 42, "hello", 5));
	EXPECT_EQ(-EINVAL, tdl_worker_init(&w, &t));
	EXPECT_EQ(-EBADF, tdl_worker_run(&w, never_called, &called, 1, 0));
	EXPECT_EQ(-EBADF, tdl_take(&w, 0, 0));
	EXPECT_EQ(-EBADF, tdl_complete(&w, TDISPATCH_RESULT_SUCCESS));
	EXPECT_EQ(0, called);
	tdl_worker_free(&w);
	tdl_close(&t);
}

TEST_HARNESS_MAIN
