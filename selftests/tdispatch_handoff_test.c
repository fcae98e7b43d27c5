// SPDX-License-Identifier: GPL-2.0
/*
 * The direct hand-off: with no batching window (max_delay 0) a task on an
 * empty input list queues a worker, which drains the input and cuts its
 * own batch, and a batch that ends with nothing left wakes nobody.  The
 * acceptor kthread sleeps through it all: what the test counts is its
 * voluntary context switches (/proc/<pid>/status), one per wake-up.
 * With a window, every batch goes through the acceptor, which the same
 * count shows.  And with no window no kworker stands between userspace
 * and its leases: the SUBMIT that brings input to an empty list, and the
 * COMPLETE that ends a batch, lease the next due batch before they return.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/tdispatch.h>

#include "kselftest_harness.h"
#include "tdispatch_helpers.h"

#define ROUNDS		200
#define SUCCESS		TDISPATCH_RESULT_SUCCESS

/* The pid of the kthread named @comm, or 0. */
static pid_t td_thread_pid(const char *comm)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	char path[300], name[32];
	pid_t pid = 0;
	FILE *f;

	while (dir && !pid && (e = readdir(dir))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && !strncmp(name, comm, strlen(comm)) &&
		    name[strlen(comm)] == '\n')
			pid = atoi(e->d_name);
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return pid;
}

/* Times @pid went to sleep of its own accord. */
static unsigned long td_sleeps(pid_t pid)
{
	unsigned long n = ~0UL;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			n = strtoul(line + 24, NULL, 10);
	if (f)
		fclose(f);
	return n;
}

/*
 * ROUNDS tasks, one at a time, each taken and completed before the next:
 * how many times the acceptor of a dispatcher with @max_delay woke.
 */
static unsigned long td_acceptor_wakeups(struct __test_metadata *_metadata, __u64 max_delay,
					 const char *name)
{
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	struct td_pl pl = { };
	struct tdispatch_submit_task ut;
	char comm[32];
	unsigned long before, after;
	struct td_taken b;
	int fd = td_open(_metadata), i;
	pid_t pid;

	td_cfg_base(&c, name, 64, 0);
	c.max_delay_ns = max_delay;
	c.workers = 1;
	td_create(_metadata, fd, &c);
	snprintf(comm, sizeof(comm), "tdispatch/%s", name);
	pid = td_thread_pid(comm);
	EXPECT_NE(0, pid) TH_LOG("no kthread %s", comm);
	/* The first task settles what creating left to do. */
	ut = (struct tdispatch_submit_task) {
		.id = 1, .payload = uptr(&pl), .payload_len = sizeof(pl),
	};
	EXPECT_EQ(1, td_submit_vec(fd, &ut, 1));
	EXPECT_EQ(0, td_take(fd, &b, 0, WAIT_NS));
	td_finish(_metadata, fd, b.tk.batch, SUCCESS);
	before = td_sleeps(pid);
	for (i = 0; i < ROUNDS; i++) {
		pl.ver = i;
		EXPECT_EQ(1, td_submit_vec(fd, &ut, 1));
		EXPECT_EQ(0, td_take(fd, &b, 0, WAIT_NS));
		EXPECT_EQ(1, b.tk.nr);
		td_finish(_metadata, fd, b.tk.batch, SUCCESS);
	}
	after = td_sleeps(pid);
	td_stats(_metadata, fd, &st);
	EXPECT_EQ(ROUNDS + 1, st.done);
	close(fd);
	return after - before;
}

TEST(no_window_hands_each_task_to_a_worker_without_the_acceptor)
{
	unsigned long direct, windowed;

	if (access(TD_DEV_PATH, F_OK))
		SKIP(return, "no %s: tdispatch.ko is not loaded", TD_DEV_PATH);
	direct = td_acceptor_wakeups(_metadata, 0, "hand0");
	windowed = td_acceptor_wakeups(_metadata, 100 * 1000, "hand1");
	TH_LOG("acceptor wake-ups for %d tasks one at a time: %lu with no window, %lu with 100 us",
	       ROUNDS, direct, windowed);
	/* A few for the scheduler's own reasons (migration), never one a task. */
	EXPECT_GT(ROUNDS / 20, direct);
	EXPECT_LE(ROUNDS, windowed) TH_LOG("the windowed run did not use the acceptor");
}

/*
 * Three tasks, one a batch, one worker: each batch is there for a TAKE
 * that does not wait, as soon as the call before it returned.  On a new
 * dispatcher, whose acceptor may still be starting when SUBMIT comes.
 */
static void td_lease_before_returning(struct __test_metadata *_metadata)
{
	struct tdispatch_submit_task ut[3];
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	struct td_pl pl[3] = { };
	struct td_taken b;
	int fd, i, ret;

	fd = td_open(_metadata);
	td_cfg_base(&c, "hand2", 1, 0);
	c.workers = 1;
	td_create(_metadata, fd, &c);
	for (i = 0; i < 3; i++)
		ut[i] = (struct tdispatch_submit_task) {
			.id = i + 1, .payload = uptr(&pl[i]), .payload_len = sizeof(pl[i]),
		};
	ASSERT_EQ(3, td_submit_vec(fd, ut, 3));
	for (i = 0; i < 3; i++) {
		ret = td_take(fd, &b, TDISPATCH_TAKE_NONBLOCK, 0);
		ASSERT_EQ(0, ret) TH_LOG("batch %d not leased by the call before: %s", i + 1,
					 strerror(-ret));
		ASSERT_EQ(1, b.tk.nr);
		EXPECT_EQ(i + 1, b.t[0].id);
		td_finish(_metadata, fd, b.tk.batch, SUCCESS);
	}
	EXPECT_EQ(-EAGAIN, td_take(fd, &b, TDISPATCH_TAKE_NONBLOCK, 0));
	td_stats(_metadata, fd, &st);
	EXPECT_EQ(3, st.done);
	close(fd);
}

TEST(no_window_submit_and_complete_lease_the_next_batch_before_returning)
{
	int round;

	if (access(TD_DEV_PATH, F_OK))
		SKIP(return, "no %s: tdispatch.ko is not loaded", TD_DEV_PATH);
	for (round = 0; round < 16 && !_metadata->exit_code; round++)
		td_lease_before_returning(_metadata);
}

TEST_HARNESS_MAIN
