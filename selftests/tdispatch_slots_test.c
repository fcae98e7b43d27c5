// SPDX-License-Identifier: GPL-2.0
/*
 * Shared slots through /dev/tdispatch: SLOTS and its errors, the mapping
 * and its errors, writes that replace the payload of the task that waits
 * in their slot, KICK through the summary and the bitmap, a slot unqueued
 * when its task ends unread, the kernel reading slots a user spoils, a
 * TAKE that fails reading nothing, and writers racing TAKE without losing
 * the newest payload of any slot.  The writer is in tdispatch_slots.h.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <linux/tdispatch.h>

#include "kselftest_harness.h"
#include "tdispatch_helpers.h"
#include "tdispatch_slots.h"

#define SUCCESS		TDISPATCH_RESULT_SUCCESS
/* Batches cut only when full, never by age. */
#define NO_AGE_CUT	(30 * SEC)

FIXTURE(slots) {
	int fd;
	struct td_map m;
};

FIXTURE_SETUP(slots)
{
	if (access(TD_DEV_PATH, F_OK))
		SKIP(return, "no %s: tdispatch.ko is not loaded", TD_DEV_PATH);
	td_pin_cpu0(_metadata, false);
	self->fd = td_open(_metadata);
	self->m.map = NULL;
}

FIXTURE_TEARDOWN(slots)
{
	if (self->m.map)
		munmap(self->m.map, self->m.a.map_len);
	close(self->fd);
}

/* Batches of @max_batch, cut when full or @max_delay old, one out at a time. */
static void td_setup(struct __test_metadata *_metadata, int fd, __u32 max_batch,
		     __u64 max_delay)
{
	struct tdispatch_create c;

	td_cfg_base(&c, "slots", max_batch, 64);
	c.max_delay_ns = max_delay;
	c.workers = 1;
	td_create(_metadata, fd, &c);
}

/* The next batch, which must hold @n tasks. */
static void td_take_n(struct __test_metadata *_metadata, int fd, struct td_taken *b,
		      unsigned int n)
{
	int ret = td_take(fd, b, 0, WAIT_NS);

	ASSERT_EQ(0, ret) TH_LOG("take: %s", strerror(-ret));
	ASSERT_EQ(n, b->tk.nr);
}

TEST_F(slots, setup_and_mapping_refuse_what_they_cannot_do)
{
	static const __u32 bad_nr[] = { 0, 1, 63, 65, TDISPATCH_SLOTS_MAX + 64, ~0U };
	struct tdispatch_slots a;
	unsigned int i;
	void *p;

	/* No dispatcher of its own (and no counters to count it in). */
	EXPECT_EQ(-ENXIO, td_slots(self->fd, &a, 64));
	EXPECT_EQ(-ENXIO, td_kick(self->fd));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->fd, 0));
	EXPECT_EQ(ENXIO, errno);
	td_setup(_metadata, self->fd, 4, NO_AGE_CUT);
	EXPECT_REJECTED(self->fd, ENXIO, "kick before slots",
			ioctl(self->fd, TDISPATCH_IOC_KICK));
	EXPECT_REJECTED(self->fd, ENXIO, "mmap before slots",
			mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->fd, 0) == MAP_FAILED ?
			-1 : 0);
	for (i = 0; i < ARRAY_SIZE(bad_nr); i++)
		EXPECT_REJECTED(self->fd, EINVAL, "a bad nr",
				td_slots(self->fd, &a, bad_nr[i]) ? -1 : 0);
	a = (struct tdispatch_slots) { .size = sizeof(a), .nr = 64, .flags = 1 };
	EXPECT_REJECTED(self->fd, EINVAL, "a flag", ioctl(self->fd, TDISPATCH_IOC_SLOTS, &a));
	a = (struct tdispatch_slots) { .size = sizeof(a), .nr = 64, .pad = 1 };
	EXPECT_REJECTED(self->fd, EINVAL, "padding", ioctl(self->fd, TDISPATCH_IOC_SLOTS, &a));

	td_map(_metadata, self->fd, &self->m, 8192);
	/* Summary, bitmap and slots in that order, in the mapping, on cache lines. */
	EXPECT_EQ(0, self->m.a.map_len % PAGE);
	EXPECT_LE(2 * sizeof(__u64), self->m.a.bitmap_off);
	EXPECT_LE(self->m.a.bitmap_off + 8192 / 8, self->m.a.slots_off);
	EXPECT_LE(self->m.a.slots_off + 8192 * sizeof(struct tdispatch_slot), self->m.a.map_len);
	EXPECT_EQ(0, self->m.a.slots_off % 64);
	EXPECT_REJECTED(self->fd, EEXIST, "slots of another number",
			td_slots(self->fd, &a, 64) ? -1 : 0);
	/* The same number: the same layout, for another process to map. */
	ASSERT_EQ(0, td_slots(self->fd, &a, 8192));
	EXPECT_EQ(self->m.a.map_len, a.map_len);
	EXPECT_EQ(self->m.a.bitmap_off, a.bitmap_off);
	EXPECT_EQ(self->m.a.slots_off, a.slots_off);
	/* Private, past the end, or not at 0: refused, and counted. */
	EXPECT_FAILED(self->fd, EINVAL, "a private mapping",
		      mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0) ==
		      MAP_FAILED ? -1 : 0, 1);
	EXPECT_FAILED(self->fd, EINVAL, "a mapping past the end",
		      mmap(NULL, self->m.a.map_len + PAGE, PROT_READ, MAP_SHARED, self->fd, 0) ==
		      MAP_FAILED ? -1 : 0, 1);
	EXPECT_FAILED(self->fd, EINVAL, "a mapping at an offset",
		      mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->fd, PAGE) ==
		      MAP_FAILED ? -1 : 0, 1);
	/* A prefix is fine, and sees the same memory. */
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	self->m.summary[0] = 5;
	EXPECT_EQ(5, __atomic_load_n((__u64 *)p, __ATOMIC_RELAXED));
	munmap(p, PAGE);
	/*
	 * Dropped from the page tables, the same page comes back; the debug
	 * kernel is built without CONFIG_ADVISE_SYSCALLS, so no madvise().
	 */
	if (madvise(self->m.map, self->m.a.map_len, MADV_DONTNEED))
		TH_LOG("madvise: %s", strerror(errno));
	EXPECT_EQ(5, self->m.summary[0]);
	self->m.summary[0] = 0;
	EXPECT_EQ(0, td_kick(self->fd)) TH_LOG("nothing marked");
}

TEST_F(slots, writes_replace_the_payload_where_the_task_waits)
{
	struct tdispatch_stats_user st;
	struct td_taken b;

	/* Batches of two: one slot's task waits until the other comes. */
	td_setup(_metadata, self->fd, 2, NO_AGE_CUT);
	td_map(_metadata, self->fd, &self->m, 64);
	EXPECT_EQ(1, td_write_pl(&self->m, 3, 100, 1)) TH_LOG("the first write owes a kick");
	EXPECT_EQ(0, td_write_pl(&self->m, 3, 100, 2));
	EXPECT_EQ(1, td_kick(self->fd));
	EXPECT_EQ(0, td_kick(self->fd)) TH_LOG("queued once");
	EXPECT_EQ(0, td_write_pl(&self->m, 3, 100, 3)) TH_LOG("its task waits");
	/* Not read yet: no writes counted, and one task, the one KICK made. */
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(1, st.accepted);
	EXPECT_EQ(0, st.slot_writes);
	EXPECT_EQ(1, td_write_pl(&self->m, 9, 101, 1));
	EXPECT_EQ(1, td_kick(self->fd));
	td_take_n(_metadata, self->fd, &b, 2);
	EXPECT_EQ(100, b.t[0].id);
	EXPECT_EQ(3, td_payload(&b, 0).ver) TH_LOG("the newest write goes out");
	EXPECT_EQ(sizeof(struct td_pl), b.t[0].payload_len);
	EXPECT_EQ(101, b.t[1].id);
	EXPECT_EQ(0, self->m.slot[3].queued) TH_LOG("read, so unqueued");
	/* Read: the next write queues a task of its own, behind the one taken. */
	EXPECT_EQ(1, td_write_pl(&self->m, 3, 100, 4));
	EXPECT_EQ(1, td_kick(self->fd));
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	EXPECT_EQ(1, td_write_pl(&self->m, 9, 101, 2));
	EXPECT_EQ(1, td_kick(self->fd));
	td_take_n(_metadata, self->fd, &b, 2);
	EXPECT_EQ(4, td_payload(&b, 0).ver);
	EXPECT_EQ(2, td_payload(&b, 1).ver);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(4, st.accepted) TH_LOG("the tasks KICK made");
	EXPECT_EQ(6, st.slot_writes) TH_LOG("every write, once read");
	EXPECT_EQ(4, st.done);
	EXPECT_EQ(0, st.overridden);
	EXPECT_EQ(0, st.rejected);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
}

TEST_F(slots, kick_finds_every_marked_slot_through_the_summary)
{
	/* 127 words of the bitmap: the summary's second word names 64 to 126. */
	static const __u32 at[] = { 0, 5, 63, 64, 4095, 4096, 8127 };
	struct tdispatch_stats_user st;
	struct td_taken b;
	unsigned int i;

	td_setup(_metadata, self->fd, ARRAY_SIZE(at), NO_AGE_CUT);
	td_map(_metadata, self->fd, &self->m, 8128);
	for (i = 0; i < ARRAY_SIZE(at); i++)
		EXPECT_EQ(1, td_write_pl(&self->m, at[i], 1000 + at[i], i));
	EXPECT_EQ(0x3 | 1ULL << 63, self->m.summary[0]);
	EXPECT_EQ(1 | 1ULL << 62, self->m.summary[1]);
	EXPECT_EQ(ARRAY_SIZE(at), td_kick(self->fd));
	EXPECT_EQ(0, self->m.summary[0] | self->m.summary[1]) TH_LOG("cleared");
	EXPECT_EQ(0, self->m.bitmap[0] | self->m.bitmap[1] | self->m.bitmap[126]);
	td_take_n(_metadata, self->fd, &b, ARRAY_SIZE(at));
	/* In the bitmap's order, each with its own payload. */
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		td_expect_item(_metadata, 1000 + at[i], b.t[i].id, "id of task", i);
		td_expect_item(_metadata, i, td_payload(&b, i).ver, "payload of task", i);
	}
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	/* A mark in the summary for a word past the bitmap names nothing. */
	self->m.summary[1] = 1ULL << 63;
	EXPECT_EQ(0, td_kick(self->fd));
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(ARRAY_SIZE(at), st.done);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
}

/*
 * The shared memory says when a task's end has unqueued its slot: there is
 * no event to wait for.
 */
static bool td_unqueued(struct tdispatch_slot *s)
{
	unsigned int i;

	for (i = 0; i < WAIT_MS && __atomic_load_n(&s->queued, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	return !__atomic_load_n(&s->queued, __ATOMIC_ACQUIRE);
}

TEST_F(slots, a_task_that_ends_unread_unqueues_its_slot)
{
	struct td_pl pl = { .id = 7, .ver = 100 };
	struct tdispatch_stats_user st;
	struct tdispatch_submit_task ut;
	struct td_taken b;

	/* Cut at 1 ms: the first task goes alone. */
	td_setup(_metadata, self->fd, 8, MSEC);
	td_map(_metadata, self->fd, &self->m, 64);
	/* A batch taken and held: with one worker, no other is cut meanwhile. */
	EXPECT_EQ(1, td_write_pl(&self->m, 0, 6, 1));
	EXPECT_EQ(1, td_kick(self->fd));
	td_take_n(_metadata, self->fd, &b, 1);
	/* Replaced by a plain submission of its id, unread. */
	EXPECT_EQ(1, td_write_pl(&self->m, 1, 7, 1));
	EXPECT_EQ(0, td_write_pl(&self->m, 1, 7, 2));
	EXPECT_EQ(1, td_kick(self->fd));
	ut = (struct tdispatch_submit_task) {
		.id = 7, .payload = uptr(&pl), .payload_len = sizeof(pl),
	};
	ASSERT_EQ(1, td_submit_vec(self->fd, &ut, 1));
	EXPECT_TRUE(td_unqueued(&self->m.slot[1])) TH_LOG("unqueued when it ended");
	/*
	 * The kernel counts the ended task's writes just after it unqueues the
	 * slot: a write before that would be counted with them (no write is
	 * lost or counted twice, but this test counts them apart).
	 */
	for (int i = 0; i < 1000; i++) {
		td_stats(_metadata, self->fd, &st);
		if (st.slot_writes == 3)	/* slot 0's read, slot 1's two */
			break;
		usleep(1000);
	}
	ASSERT_EQ(3, st.slot_writes);
	/* So a write queues again; under another id, which nothing replaces. */
	EXPECT_EQ(1, td_write_pl(&self->m, 1, 17, 3)) TH_LOG("a write queues again");
	EXPECT_EQ(1, td_kick(self->fd));
	/* Cancelled once the acceptor has it, unread. */
	EXPECT_EQ(1, td_write_pl(&self->m, 2, 8, 1));
	EXPECT_EQ(1, td_kick(self->fd));
	do {
		td_stats(_metadata, self->fd, &st);
	} while (st.queued && !usleep(1000));
	ASSERT_EQ(0, td_cancel(self->fd, 8));
	EXPECT_TRUE(td_unqueued(&self->m.slot[2])) TH_LOG("cancelled, unqueued");
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_stats(_metadata, self->fd, &st);
	/* Slot 1's first task, overridden, stood for two writes; id 17's is unread. */
	EXPECT_EQ(5, st.accepted);
	EXPECT_EQ(4, st.slot_writes);
	EXPECT_EQ(1, st.done);
	EXPECT_EQ(1, st.cancelled);
	EXPECT_EQ(1, st.overridden);
	EXPECT_EQ(2, st.queued + st.pending + st.in_flight) TH_LOG("id 7's plain task, id 17's");
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
}

/* Version @ver of id @id with TDISPATCH_TASK_MERGE: 0 or -errno. */
static int td_merge(int fd, __u64 id, __u64 ver)
{
	struct td_pl pl = { .id = id, .ver = ver };
	struct tdispatch_submit_task ut = {
		.id = id, .payload = uptr(&pl), .payload_len = sizeof(pl),
		.flags = TDISPATCH_TASK_MERGE,
	};
	int ret = td_submit_vec(fd, &ut, 1);

	return ret == 1 ? 0 : ret < 0 ? ret : ut.status;
}

/*
 * Read outcome events until @n have come, and count those of @id that
 * ended @outcome.  Each task whose end is read has let its slot go.
 */
static unsigned int td_await_outcomes(struct __test_metadata *_metadata, int fd,
				      unsigned int n, __u64 id, __u32 outcome)
{
	struct tdispatch_event ev[8];
	unsigned int i, found = 0;
	ssize_t len;

	while (n) {
		ASSERT_LT(0, td_poll(fd, POLLIN, WAIT_MS)) TH_LOG("%u outcomes still owed", n);
		len = read(fd, ev, sizeof(ev));
		ASSERT_LT(0, len) TH_LOG("read: %s", len ? strerror(errno) : "end of events");
		for (i = 0; i < len / sizeof(*ev); i++) {
			if (ev[i].type != TDISPATCH_EVENT_OUTCOME)
				continue;
			n -= !!n;
			found += ev[i].id == id && ev[i].outcome == outcome;
		}
	}
	return found;
}

/*
 * A slot's task replaces a waiting merge task of its id, as a plain task
 * does: a merge after the KICK makes a task of its own, the newest, and
 * does not land in the task the slot's replaces (where it would be lost
 * if the acceptor has not replaced it yet: a race this test can only
 * sometimes catch).
 */
TEST_F(slots, a_merge_after_a_kick_is_not_lost)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	unsigned int i;

	td_setup(_metadata, self->fd, 4, NO_AGE_CUT);
	td_map(_metadata, self->fd, &self->m, 64);
	ASSERT_EQ(0, td_merge(self->fd, 5, 1));
	EXPECT_EQ(1, td_write_pl(&self->m, 0, 5, 2));
	EXPECT_EQ(1, td_kick(self->fd));
	/* Into the first merge task, unless the acceptor has replaced it already. */
	ASSERT_EQ(0, td_merge(self->fd, 5, 3));
	/* Three more ids cut the batch; id 5's one task is the newest, version 3. */
	for (i = 1; i < 4; i++)
		EXPECT_EQ(1, td_write_pl(&self->m, i, 10 + i, 0));
	EXPECT_EQ(3, td_kick(self->fd));
	td_take_n(_metadata, self->fd, &b, 4);
	for (i = 0; i < 3 && b.t[i].id != 5; i++)
		;
	ASSERT_EQ(5, b.t[i].id);
	EXPECT_EQ(3, td_payload(&b, i).ver);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(6, st.accepted);
	EXPECT_EQ(4, st.done);
	EXPECT_EQ(2, st.overridden) TH_LOG("the first merge task and the slot's");
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
	/* Its task's end, once read, has unqueued the slot. */
	EXPECT_EQ(2, td_await_outcomes(_metadata, self->fd, 6, 5, TDISPATCH_OUTCOME_OVERRIDDEN));
	EXPECT_EQ(0, self->m.slot[0].queued) TH_LOG("its task ended unread");
}

/* The ways a TAKE that found a batch can still fail, and their errnos. */
enum { TAKE_NO_ROOM, TAKE_TASKS_UNWRITABLE, TAKE_ARG_UNWRITABLE, TAKE_FAILURES };
static const int take_failure_errno[TAKE_FAILURES] = { ENOSPC, EFAULT, EFAULT };

/*
 * A TAKE that fails @how: no room for the payloads, an array of tasks it
 * cannot write, or an argument it can read but not write back.
 */
static int td_take_failing(int fd, int how)
{
	struct tdispatch_lease_task lt[4];
	unsigned char buf[256];
	struct tdispatch_take tk = {
		.size = sizeof(tk), .tasks = uptr(lt), .buf = uptr(buf), .max_tasks = 4,
		.buf_len = sizeof(buf), .timeout_ns = WAIT_NS,
	};
	void *ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (ro == MAP_FAILED)
		return -errno;
	if (how == TAKE_NO_ROOM)
		tk.buf_len = 0;
	else if (how == TAKE_TASKS_UNWRITABLE)
		tk.tasks = uptr(ro);
	memcpy(ro, &tk, sizeof(tk));
	ret = mprotect(ro, PAGE, PROT_READ) ? -errno :
	      ioctl(fd, TDISPATCH_IOC_TAKE, how == TAKE_ARG_UNWRITABLE ? ro : (void *)&tk) ?
	      -errno : 0;
	munmap(ro, PAGE);
	return ret;
}

/*
 * A TAKE that fails reads no slot: the write after it replaces the payload
 * of the task that still waits (no KICK owed), and that one task goes out
 * once, with the newest payload.
 */
TEST_F(slots, a_take_that_fails_reads_no_slot)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	int how;

	td_setup(_metadata, self->fd, 1, NO_AGE_CUT);
	td_map(_metadata, self->fd, &self->m, 64);
	for (how = 0; how < TAKE_FAILURES; how++) {
		EXPECT_EQ(1, td_write_pl(&self->m, 5, 50, 10 * how + 1));
		EXPECT_EQ(1, td_kick(self->fd));
		EXPECT_EQ(-take_failure_errno[how], td_take_failing(self->fd, how));
		EXPECT_EQ(1, self->m.slot[5].queued) TH_LOG("failure %d: read", how);
		EXPECT_EQ(0, td_write_pl(&self->m, 5, 50, 10 * how + 2))
			TH_LOG("failure %d: a KICK owed, as if the slot was read", how);
		EXPECT_EQ(0, td_kick(self->fd));
		td_take_n(_metadata, self->fd, &b, 1);
		EXPECT_EQ(10 * how + 2, td_payload(&b, 0).ver);
		td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
		EXPECT_EQ(0, self->m.slot[5].queued);
	}
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(TAKE_FAILURES, st.accepted) TH_LOG("one task a slot write pair");
	EXPECT_EQ(TAKE_FAILURES, st.done);
	EXPECT_EQ(2 * TAKE_FAILURES, st.slot_writes);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
}

/*
 * A TAKE that fails takes no task out of the merge table: the merge after
 * it lands in the task that still waits, which goes out once, newest.
 */
TEST_F(slots, a_take_that_fails_leaves_the_merge_task_mergeable)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	int how;

	td_setup(_metadata, self->fd, 1, NO_AGE_CUT);
	for (how = 0; how < TAKE_FAILURES; how++) {
		ASSERT_EQ(0, td_merge(self->fd, 9, 10 * how + 1));
		EXPECT_EQ(-take_failure_errno[how], td_take_failing(self->fd, how));
		ASSERT_EQ(0, td_merge(self->fd, 9, 10 * how + 2));
		td_take_n(_metadata, self->fd, &b, 1);
		EXPECT_EQ(10 * how + 2, td_payload(&b, 0).ver)
			TH_LOG("failure %d: the merge made a task of its own", how);
		td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	}
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(2 * TAKE_FAILURES, st.accepted);
	EXPECT_EQ(TAKE_FAILURES, st.overridden) TH_LOG("each second merge, merged");
	EXPECT_EQ(TAKE_FAILURES, st.done);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
}

/* KICK slot 1 and three plain tasks of ids 10 to 12: a batch of four. */
static void td_fill_batch(struct __test_metadata *_metadata, int fd)
{
	struct tdispatch_submit_task ut[3];
	struct td_pl pl = { };
	unsigned int i;

	ASSERT_EQ(1, td_kick(fd));
	for (i = 0; i < 3; i++)
		ut[i] = (struct tdispatch_submit_task) { .id = 10 + i, .payload = uptr(&pl),
						   .payload_len = sizeof(pl) };
	ASSERT_EQ(3, td_submit_vec(fd, ut, 3));
}

TEST_F(slots, the_kernel_reads_a_spoilt_slot_as_it_is)
{
	struct tdispatch_stats_user st;
	struct td_taken b;
	unsigned int i;

	td_setup(_metadata, self->fd, 4, NO_AGE_CUT);
	td_map(_metadata, self->fd, &self->m, 64);
	/* Too long, a writer half way, and marks by hand alone. */
	self->m.slot[0] = (struct tdispatch_slot) { .id = 1, .seq = 2, .len = ~0U, .queued = 1 };
	memset(self->m.slot[0].payload, 0xab, sizeof(self->m.slot[0].payload));
	self->m.slot[1] = (struct tdispatch_slot) { .id = 2, .seq = 3, .len = 8, .queued = 1 };
	self->m.slot[2] = (struct tdispatch_slot) { .id = 3, .seq = 0x7ffffffe, .len = 0 };
	self->m.slot[3] = (struct tdispatch_slot) { .id = 4, .seq = 0, .len = 1 };
	self->m.bitmap[0] = 0xf;
	self->m.summary[0] = 1;
	EXPECT_EQ(4, td_kick(self->fd));
	td_take_n(_metadata, self->fd, &b, 4);
	EXPECT_EQ(TDISPATCH_SLOT_PAYLOAD_MAX, b.t[0].payload_len) TH_LOG("clamped");
	for (i = 0; i < TDISPATCH_SLOT_PAYLOAD_MAX; i++)
		td_expect_item(_metadata, 0xab, b.buf[b.t[0].payload_off + i], "byte", i);
	EXPECT_EQ(0, b.t[1].payload_len) TH_LOG("a slot being written is read as empty");
	EXPECT_EQ(0, b.t[2].payload_len);
	EXPECT_EQ(1, b.t[3].payload_len);
	/* Its writer ends: the slot was unqueued, so the write queues its own task. */
	__atomic_store_n(&self->m.slot[1].seq, 4, __ATOMIC_RELEASE);
	EXPECT_EQ(0, __atomic_exchange_n(&self->m.slot[1].queued, 1, __ATOMIC_SEQ_CST));
	self->m.bitmap[0] = 0x2;
	self->m.summary[0] = 1;
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_fill_batch(_metadata, self->fd);
	td_take_n(_metadata, self->fd, &b, 4);
	for (i = 0; i < 3 && b.t[i].id != 2; i++)
		;
	EXPECT_EQ(2, b.t[i].id);
	EXPECT_EQ(8, b.t[i].payload_len);
	td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
	td_stats(_metadata, self->fd, &st);
	EXPECT_EQ(8, st.done);
	/* Slot 2's count of 2^30 - 1 writes is the user's word: counted apart, once. */
	EXPECT_EQ(8, st.accepted);
	EXPECT_EQ(0, st.overridden);
	EXPECT_LT(1ULL << 29, st.slot_writes);
	EXPECT_GT(1ULL << 31, st.slot_writes);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
}

/* Whether a dispatcher's debugfs directory starts with @prefix. */
static bool td_debugfs_has(const char *prefix)
{
	DIR *dir = opendir("/sys/kernel/debug/tdispatch");
	struct dirent *e;
	bool found = false;

	while (dir && (e = readdir(dir)))
		found |= !strncmp(e->d_name, prefix, strlen(prefix));
	if (dir)
		closedir(dir);
	return found;
}

TEST_F(slots, the_mapping_outlives_the_descriptor)
{
	struct tdispatch_create c;
	struct td_map m;
	pid_t pid;
	int status;

	if (access("/sys/kernel/debug/tdispatch", R_OK))
		SKIP(return, "no debugfs to see the dispatcher in");
	td_cfg_base(&c, "slotsoutlive", 4, 0);
	td_create(_metadata, self->fd, &c);
	td_map(_metadata, self->fd, &m, 64);
	EXPECT_EQ(1, td_write_pl(&m, 0, 1, 1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(td_write_pl(&m, 1, 2, 1) == 1 ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status) TH_LOG("a child writes the same slots");
	EXPECT_EQ(2, td_kick(self->fd));
	ASSERT_TRUE(td_debugfs_has("slotsoutlive-"));
	/* The file, and its dispatcher, go when the last mapping does. */
	close(self->fd);
	self->fd = td_open(_metadata);
	EXPECT_TRUE(td_debugfs_has("slotsoutlive-")) TH_LOG("gone with the descriptor");
	EXPECT_EQ(0, td_write_pl(&m, 0, 1, 2));
	EXPECT_EQ(0, munmap(m.map, m.a.map_len));
	EXPECT_FALSE(td_debugfs_has("slotsoutlive-")) TH_LOG("kept after the last mapping");
}

#define RS_WRITERS	2
#define RS_SLOTS	32
#define RS_ROUNDS	2000

struct rs_writer {
	struct td_map *m;
	int fd;
	unsigned int first;
	int err;
};

/* Writers still writing: the fillers write until none is. */
static int rs_writing;

/* Versions 1 to RS_ROUNDS of each of its slots, a KICK a round if owed. */
static void *rs_write(void *arg)
{
	struct rs_writer *w = arg;
	unsigned int r, i;
	int owed;

	for (r = 1; r <= RS_ROUNDS; r++) {
		owed = 0;
		for (i = w->first; i < w->first + RS_SLOTS; i++)
			owed |= td_write_pl(w->m, i, i, r);
		if (owed && td_kick(w->fd) < 0) {
			w->err = errno;
			break;
		}
	}
	__atomic_fetch_sub(&rs_writing, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct rs_filler {
	struct td_map *m;
	unsigned long writes;
};

/* Two threads write one slot while the writers write: each read is one whole write. */
static void *rs_fill(void *arg)
{
	struct rs_filler *f = arg;
	unsigned char p[TDISPATCH_SLOT_PAYLOAD_MAX];

	while (__atomic_load_n(&rs_writing, __ATOMIC_ACQUIRE)) {
		memset(p, (unsigned char)(f->writes++ | 1), sizeof(p));
		td_write(f->m, 2 * RS_SLOTS, 1ULL << 40, p, sizeof(p));
	}
	return NULL;
}

/*
 * Writers race TAKE on their own slots, and two threads on one more: each
 * slot's versions reach the worker in order, the last one written is the
 * last one taken, every read of the shared slot is one whole write, and
 * every write is accounted for.
 */
TEST_F(slots, writers_racing_takes_lose_no_newest_payload)
{
	__u64 last[RS_WRITERS * RS_SLOTS] = { };
	struct rs_filler f[2] = { { &self->m }, { &self->m } };
	struct rs_writer w[RS_WRITERS];
	pthread_t th[RS_WRITERS + 2];
	struct tdispatch_stats_user st;
	bool joined[RS_WRITERS + 2] = { };
	struct td_taken b;
	unsigned int i, j, n;
	int ret;

	td_pin_cpu0(_metadata, true);
	td_setup(_metadata, self->fd, 8, MSEC);
	td_map(_metadata, self->fd, &self->m, 128);
	rs_writing = RS_WRITERS;
	for (i = 0; i < RS_WRITERS; i++) {
		w[i] = (struct rs_writer) { .m = &self->m, .fd = self->fd, .first = i * RS_SLOTS };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, rs_write, &w[i]));
	}
	for (; i < RS_WRITERS + 2; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, rs_fill, &f[i - RS_WRITERS]));
	for (n = 0; n < RS_WRITERS + 2; ) {
		ret = td_take(self->fd, &b, 0, 10 * MSEC);
		if (!ret) {
			for (i = 0; i < b.tk.nr; i++) {
				const unsigned char *p = b.buf + b.t[i].payload_off;
				struct td_pl pl = td_payload(&b, i);

				/* Read as it was written: its write comes in a task of its own. */
				if (!b.t[i].payload_len)
					continue;
				if (b.t[i].id == 1ULL << 40) {
					ASSERT_EQ(TDISPATCH_SLOT_PAYLOAD_MAX, b.t[i].payload_len);
					for (j = 1; j < TDISPATCH_SLOT_PAYLOAD_MAX; j++)
						ASSERT_EQ(p[0], p[j]) TH_LOG("a torn read");
					continue;
				}
				ASSERT_LT(pl.id, RS_WRITERS * RS_SLOTS);
				ASSERT_EQ(b.t[i].id, pl.id);
				ASSERT_LE(last[pl.id], pl.ver) TH_LOG("slot %llu went back", pl.id);
				last[pl.id] = pl.ver;
			}
			td_finish(_metadata, self->fd, b.tk.batch, SUCCESS);
			continue;
		}
		ASSERT_EQ(-ETIMEDOUT, ret);
		for (n = 0, i = 0; i < RS_WRITERS + 2; i++) {
			if (!joined[i])
				joined[i] = !pthread_tryjoin_np(th[i], NULL);
			n += joined[i];
		}
		/* The fillers owe a KICK they do not make: this is it. */
		if (n == RS_WRITERS + 2)
			ASSERT_LE(0, td_kick(self->fd));
		td_stats(_metadata, self->fd, &st);
		if (st.queued + st.pending + st.in_flight)
			n = 0;
	}
	for (i = 0; i < RS_WRITERS; i++)
		td_expect_item(_metadata, 0, w[i].err, "errno of writer", i);
	for (i = 0; i < RS_WRITERS * RS_SLOTS; i++)
		td_expect_item(_metadata, RS_ROUNDS, last[i], "last version taken of slot", i);
	/* Every write counted once, each slot's last one read. */
	EXPECT_EQ(RS_WRITERS * RS_SLOTS * RS_ROUNDS + f[0].writes + f[1].writes, st.slot_writes)
		td_stats_log(_metadata, &st);
	TH_LOG("%lu and %lu writes of the shared slot", f[0].writes, f[1].writes);
	EXPECT_EQ(st.accepted, st.done + st.overridden) td_stats_log(_metadata, &st);
	EXPECT_LT(st.accepted, st.slot_writes) TH_LOG("nothing replaced: the test tested nothing");
}

TEST_HARNESS_MAIN
