/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tests of dispatchers owned by a file share: a dispatcher set up,
 * tasks submitted and batches taken by id, the outcome tallies and the
 * event records checked against what was expected, and the fixture.
 * After kselftest_harness.h and tdispatch_helpers.h.
 */
#ifndef TDISPATCH_USER_H
#define TDISPATCH_USER_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/tdispatch.h>

#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif

/* The longest max_delay: a batch is cut only once max_batch tasks are ready. */
#define NO_AGE_CUT		(30 * SEC)
/* Hold-off after CONGESTION or TRANSIENT, and a short lease. */
#define HOLD_NS			(50 * MSEC)
#define LEASE_NS		(250 * MSEC)
/* Payload bytes one dispatcher holds at most. */
#define BYTES_MAX		(16U << 20)

/* Outcomes, short, to index tallies and to write expected events. */
enum {
	DONE = TDISPATCH_OUTCOME_DONE,
	FAILED = TDISPATCH_OUTCOME_FAILED,
	OVERRIDDEN = TDISPATCH_OUTCOME_OVERRIDDEN,
	EXPIRED = TDISPATCH_OUTCOME_EXPIRED,
	DROPPED = TDISPATCH_OUTCOME_DROPPED,
	CANCELLED = TDISPATCH_OUTCOME_CANCELLED,
	NR_ENDS,
};

/* How many tasks ended each way, by outcome; the rest none. */
struct td_ends {
	__u64 n[NR_ENDS];
};

/* An expected outcome event. */
struct td_want {
	__u64 id;
	__u32 outcome;
	__u32 attempts;
};

/* Keep this process on CPU 0, so that all it submits drains in its order. */
#define POLL_ALL	(POLLIN | POLLRDNORM | POLLRDBAND)

/*
 * A dispatcher that cuts a batch only when @max_batch tasks are free to go,
 * with room for @events outcome events, or none.
 */
static inline void td_cfg(struct tdispatch_create *c, __u32 max_batch, __u32 events)
{
	td_cfg_base(c, "ut", max_batch, events);
	c->max_delay_ns = NO_AGE_CUT;
}

static inline void td_setup(struct __test_metadata *_metadata, int fd, __u32 max_batch,
			    __u32 events)
{
	struct tdispatch_create c;

	td_cfg(&c, max_batch, events);
	td_create(_metadata, fd, &c);
}

/*
 * After the last outcome: nothing is queued, pending or in flight, and the
 * tasks ended as @want, indexed by outcome, says.
 */
static inline void td_expect_ends(struct __test_metadata *_metadata, int fd,
				  struct tdispatch_stats_user *st, const struct td_ends *want)
{
	__u64 have[NR_ENDS];
	unsigned int i;

	td_stats(_metadata, fd, st);
	have[DONE] = st->done;
	have[FAILED] = st->failed;
	have[OVERRIDDEN] = st->overridden;
	have[EXPIRED] = st->expired;
	have[DROPPED] = st->dropped;
	have[CANCELLED] = st->cancelled;
	EXPECT_EQ(0, st->queued + st->pending + st->in_flight) td_stats_log(_metadata, st);
	for (i = 0; i < NR_ENDS; i++)
		td_expect_item(_metadata, want->n[i], have[i], "tasks ended with outcome", i);
}

#define EXPECT_ENDS(fd, st, ...) \
	td_expect_ends(_metadata, fd, st, &(const struct td_ends){ .n = { __VA_ARGS__ } })

/* One task of @id whose payload @pl says @ver. */
static inline void td_task(struct tdispatch_submit_task *ut, struct td_pl *pl, __u64 id, __u64 ver)
{
	pl->id = id;
	pl->ver = ver;
	*ut = (struct tdispatch_submit_task) {
		.id = id,
		.payload = uptr(pl),
		.payload_len = sizeof(*pl),
		.status = 1,	/* the kernel must write every status */
	};
}

/* Submit a task per id, the i-th with payload version @ver + i; all must go in. */
static inline void td_submit(struct __test_metadata *_metadata, int fd, const __u64 *ids,
			     unsigned int n, __u64 ver)
{
	struct tdispatch_submit_task ut[TD_NR];
	struct td_pl pl[TD_NR];
	unsigned int i;
	int ret;

	ASSERT_GE(TD_NR, n);
	for (i = 0; i < n; i++)
		td_task(&ut[i], &pl[i], ids[i], ver + i);
	ret = td_submit_vec(fd, ut, n);
	ASSERT_EQ((int)n, ret) TH_LOG("submit %u tasks: %s", n, strerror(ret < 0 ? -ret : 0));
	for (i = 0; i < n; i++)
		td_expect_item(_metadata, 0, ut[i].status, "status of the task of id", ids[i]);
}

#define NR_IDS(...)	(sizeof((const __u64[]){ __VA_ARGS__ }) / sizeof(__u64))
#define SUBMIT_IDS(fd, ...) \
	td_submit(_metadata, fd, (const __u64[]){ __VA_ARGS__ }, NR_IDS(__VA_ARGS__), 0)

static inline unsigned int td_index(const __u64 *ids, unsigned int n, __u64 id)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			break;
	return i;
}

/* @b holds the tasks of @ids, each once, each tried @attempts times before. */
static inline void td_check_batch(struct __test_metadata *_metadata, const struct td_taken *b,
				  const __u64 *ids, unsigned int n, __u32 attempts)
{
	__u64 seen = 0, now = now_ns();
	unsigned int i, j;

	ASSERT_EQ(n, b->tk.nr) TH_LOG("a batch of %u tasks, want %u", b->tk.nr, n);
	for (i = 0; i < n; i++) {
		const struct tdispatch_lease_task *t = &b->t[i];

		j = td_index(ids, n, t->id);
		EXPECT_GT(n, j) TH_LOG("task %u: unexpected id %llu", i, t->id);
		EXPECT_FALSE(j < n && (seen & (1ULL << j))) TH_LOG("id %llu twice", t->id);
		seen |= j < n ? 1ULL << j : 0;
		EXPECT_EQ(attempts, t->attempts) TH_LOG("id %llu", t->id);
		EXPECT_EQ(sizeof(struct td_pl), t->payload_len) TH_LOG("id %llu", t->id);
		EXPECT_LE(t->payload_off + t->payload_len, b->tk.buf_len) TH_LOG("id %llu", t->id);
		EXPECT_EQ(t->id, td_payload(b, i).id) TH_LOG("payload of id %llu", t->id);
		EXPECT_GE(now, t->submitted_ns) TH_LOG("id %llu", t->id);
	}
}

/* Wait for the next batch, which must be @ids tried @attempts times; its lease. */
static inline __u64 td_take_ids(struct __test_metadata *_metadata, int fd, struct td_taken *b,
				__u32 attempts, const __u64 *ids, unsigned int n)
{
	int ret = td_take(fd, b, 0, WAIT_NS);

	ASSERT_EQ(0, ret) TH_LOG("take: %s", strerror(-ret));
	td_check_batch(_metadata, b, ids, n, attempts);
	return b->tk.batch;
}

#define TAKE_IDS(fd, b, attempts, ...) \
	td_take_ids(_metadata, fd, b, attempts, (const __u64[]){ __VA_ARGS__ }, NR_IDS(__VA_ARGS__))

/*
 * Create the dispatcher @c (NULL: batches of two, with events) and take its
 * first batch, of ids 1 and 2: the lease.
 */
static inline __u64 td_take_pair(struct __test_metadata *_metadata, int fd,
				 const struct tdispatch_create *c, struct td_taken *b)
{
	if (c)
		td_create(_metadata, fd, c);
	else
		td_setup(_metadata, fd, 2, 16);
	SUBMIT_IDS(fd, 1, 2);
	return TAKE_IDS(fd, b, 0, 1, 2);
}

static inline void td_cancel_ok(struct __test_metadata *_metadata, int fd, __u64 id)
{
	int ret = td_cancel(fd, id);

	ASSERT_EQ(0, ret) TH_LOG("cancel %llu: %s", id, strerror(-ret));
}

static inline void td_query(struct __test_metadata *_metadata, int fd, __u64 id, __u32 state,
			    __u32 attempts, __u32 waiting)
{
	struct tdispatch_query q = { .size = sizeof(q), .id = id };

	ASSERT_EQ(0, ioctl(fd, TDISPATCH_IOC_QUERY, &q)) TH_LOG("query: %s", strerror(errno));
	EXPECT_EQ(state, q.state) TH_LOG("state of id %llu", id);
	EXPECT_EQ(attempts, q.attempts) TH_LOG("attempts of id %llu", id);
	EXPECT_EQ(waiting, q.waiting) TH_LOG("waiting of id %llu", id);
}

/*
 * The sequence number of the last event record read.  Each test runs in a
 * process of its own and reads the events of one dispatcher.
 */
/* The largest payload and a byte more: big tasks and refused ones. */
static unsigned char td_big[TDISPATCH_PAYLOAD_MAX + 1];

static __u64 td_seq;

/* A record follows the one before it: one number per event, lost ones too. */
static inline void td_check_seq(struct __test_metadata *_metadata, const struct tdispatch_event *ev)
{
	bool lost = ev->type == TDISPATCH_EVENT_LOST;

	EXPECT_TRUE(lost || ev->type == TDISPATCH_EVENT_OUTCOME) TH_LOG("type %u", ev->type);
	EXPECT_EQ(td_seq + (lost ? ev->lost : 1), ev->seq)
		TH_LOG("seq %llu after %llu (type %u, lost %llu)", ev->seq, td_seq, ev->type,
		       ev->lost);
	if (lost) {
		EXPECT_LT(0, ev->lost);
	} else {
		EXPECT_EQ(0, ev->lost);
		EXPECT_LT(0, ev->latency_ns) TH_LOG("id %llu", ev->id);
	}
	EXPECT_EQ(0, ev->pad);
	td_seq = ev->seq;
}

/* Wait for events, read at most @room records and check them; how many. */
static inline unsigned int td_read_records(struct __test_metadata *_metadata, int fd,
					   struct tdispatch_event *ev, unsigned int room)
{
	unsigned int i;
	bool ready;
	ssize_t n;

	ready = td_poll(fd, POLLIN, WAIT_MS) == POLLIN;
	if (!ready) {
		struct tdispatch_stats_user st;

		td_stats(_metadata, fd, &st);
		td_stats_log(_metadata, &st);
	}
	ASSERT_TRUE(ready) TH_LOG("no event within %d ms after seq %llu", WAIT_MS, td_seq);
	n = read(fd, ev, room * sizeof(*ev));
	ASSERT_LT(0, n) TH_LOG("read events: %s", strerror(errno));
	ASSERT_EQ(0, n % sizeof(*ev)) TH_LOG("read %zd bytes", n);
	for (i = 0; i < n / sizeof(*ev); i++)
		td_check_seq(_metadata, &ev[i]);
	return i;
}

static inline bool td_want_matches(const struct td_want *w, const struct tdispatch_event *e)
{
	return w->id == e->id && w->outcome == e->outcome && w->attempts == e->attempts;
}

/* Read @n outcome events, exactly those of @want in any order. */
static inline void td_expect_outcomes(struct __test_metadata *_metadata, int fd,
				      const struct td_want *want, unsigned int n)
{
	struct tdispatch_event ev[TD_NR];
	bool used[TD_NR] = { false };
	unsigned int got = 0, i, j, k;

	ASSERT_GE(TD_NR, n);
	while (got < n) {
		k = td_read_records(_metadata, fd, ev, n - got);
		for (i = 0; i < k; i++) {
			const struct tdispatch_event *e = &ev[i];

			if (e->type != TDISPATCH_EVENT_OUTCOME)
				continue;
			got++;
			for (j = 0; j < n; j++)
				if (!used[j] && td_want_matches(&want[j], e))
					break;
			EXPECT_GT(n, j) TH_LOG("unexpected event: id %llu outcome %u attempts %u",
					       e->id, e->outcome, e->attempts);
			if (j < n)
				used[j] = true;
		}
	}
}

#define EXPECT_OUTCOMES(fd, ...) \
	td_expect_outcomes(_metadata, fd, (const struct td_want[]){ __VA_ARGS__ }, \
			   sizeof((const struct td_want[]){ __VA_ARGS__ }) / sizeof(struct td_want))

static inline void td_expect_no_events(struct __test_metadata *_metadata, int fd)
{
	EXPECT_EQ(0, td_poll(fd, POLLIN, 0)) TH_LOG("an event is readable");
}

FIXTURE(user) {
	int fd;
};

FIXTURE_SETUP(user)
{
	self->fd = td_open(_metadata);
	td_seq = 0;
}

FIXTURE_TEARDOWN(user)
{
	if (self->fd >= 0)
		close(self->fd);
}

#endif /* TDISPATCH_USER_H */
