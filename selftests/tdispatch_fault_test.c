// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection: every allocation a call makes fails in turn
 * (/proc/thread-self/fail-nth, with failslab and fail_page_alloc told not
 * to spare allocations that may sleep), for CREATE, SUBMIT, ATTACH,
 * PERIODIC_ADD, SLOTS and KICK.  Each injected failure must come back as ENOMEM (for the
 * call, or as a task's status) or leave the call successful, never a
 * warning or a leak (the harness scans for both), and the accounting
 * equation must hold after every step.  Needs a kernel with
 * CONFIG_FAULT_INJECTION and debugfs (the debug kernel); skips elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <linux/tdispatch.h>

#include "kselftest_harness.h"
#include "tdispatch_helpers.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define DBG		"/sys/kernel/debug/"
/* More allocation points than any call has. */
#define MAX_NTH		400

/* Fail the @n-th allocation from now on (0: none). */
static int fail_nth(unsigned int n)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", n);
	return td_write_file(FAIL_NTH, v);
}

/* Was the failure set up by fail_nth() injected?  Clears it either way. */
static bool injected(void)
{
	char v[16] = "";
	int fd = open(FAIL_NTH, O_RDONLY | O_CLOEXEC);
	bool yes;

	yes = fd >= 0 && read(fd, v, sizeof(v) - 1) > 0 && atoi(v) == 0;
	if (fd >= 0)
		close(fd);
	fail_nth(0);
	return yes;
}

static void td_check_equation(struct __test_metadata *_metadata, int fd, const char *what,
			      unsigned int n)
{
	struct tdispatch_stats_user st;

	if (td_stats_try(fd, &st))
		return;
	EXPECT_TRUE(td_equation_holds(&st)) TH_LOG("%s, allocation %u failed", what, n);
}

FIXTURE(fault) {
	int unused;
};

FIXTURE_SETUP(fault)
{
	if (access(FAIL_NTH, W_OK) || access(DBG "failslab/ignore-gfp-wait", W_OK))
		SKIP(return, "no fault injection in this kernel");
	/* Quiet: an injected failure's stack trace would read as a report. */
	ASSERT_EQ(0, td_write_file(DBG "failslab/verbose", "0"));
	ASSERT_EQ(0, td_write_file(DBG "failslab/ignore-gfp-wait", "N"));
	if (!access(DBG "fail_page_alloc/ignore-gfp-wait", W_OK)) {
		ASSERT_EQ(0, td_write_file(DBG "fail_page_alloc/verbose", "0"));
		ASSERT_EQ(0, td_write_file(DBG "fail_page_alloc/ignore-gfp-wait", "N"));
		ASSERT_EQ(0, td_write_file(DBG "fail_page_alloc/min-order", "0"));
	}
}

FIXTURE_TEARDOWN(fault)
{
	fail_nth(0);
	td_write_file(DBG "failslab/ignore-gfp-wait", "Y");
	td_write_file(DBG "fail_page_alloc/ignore-gfp-wait", "Y");
}

/* CREATE, failing each of its allocations: ENOMEM, and the file is usable. */
TEST_F(fault, create_fails_cleanly_at_every_allocation)
{
	struct tdispatch_create c;
	unsigned int n, hits = 0;
	int ret = -1;

	td_cfg_base(&c, "fault", 16, 64);
	for (n = 1; n < MAX_NTH; n++) {
		int fd = td_open(_metadata);

		ASSERT_EQ(0, fail_nth(n));
		ret = ioctl(fd, TDISPATCH_IOC_CREATE, &c) ? -errno : 0;
		if (!injected()) {
			EXPECT_EQ(0, ret);
			close(fd);
			break;
		}
		hits++;
		if (ret) {
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", n);
			/* Nothing was left half made: it may try again. */
			EXPECT_EQ(0, ioctl(fd, TDISPATCH_IOC_CREATE, &c)) TH_LOG("after %u", n);
		}
		td_check_equation(_metadata, fd, "create", n);
		close(fd);
	}
	TH_LOG("%u allocations of CREATE failed in turn", hits);
	EXPECT_LT(3, hits);
	EXPECT_GT(MAX_NTH, n) TH_LOG("CREATE still allocating after %u", n);
}

/* SUBMIT of four tasks: each refused one is ENOMEM, counted, the rest go in. */
TEST_F(fault, submit_fails_cleanly_at_every_allocation)
{
	struct tdispatch_create c;
	struct tdispatch_submit_task ut[4];
	struct td_pl pl[4];
	unsigned int n, i, hits = 0;
	int fd = td_open(_metadata), ret;

	td_cfg_base(&c, "fault", 16, 64);
	c.max_delayed = 16;
	td_create(_metadata, fd, &c);
	for (n = 1; n < MAX_NTH; n++) {
		for (i = 0; i < 4; i++) {
			pl[i] = (struct td_pl) { .id = i, .ver = n };
			ut[i] = (struct tdispatch_submit_task) {
				.id = i, .payload = uptr(&pl[i]), .payload_len = sizeof(pl[i]),
				.not_before_ns = i == 3 ? SEC : 0,
			};
		}
		ASSERT_EQ(0, fail_nth(n));
		ret = td_submit_flags(fd, ut, 4, TDISPATCH_SUBMIT_RELATIVE);
		if (!injected()) {
			EXPECT_EQ(4, ret);
			break;
		}
		hits++;
		if (ret < 0) {
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", n);
		} else {
			for (i = 0; i < 4; i++) {
				if (ut[i].status) {
					EXPECT_EQ(-ENOMEM, ut[i].status)
						TH_LOG("allocation %u", n);
				}
			}
		}
		td_check_equation(_metadata, fd, "submit", n);
		/* Gone with the others, or refused: never left behind. */
		td_cancel(fd, 3);
	}
	TH_LOG("%u allocations of SUBMIT failed in turn", hits);
	EXPECT_LT(1, hits);
	td_check_equation(_metadata, fd, "submit", 0);
	close(fd);
}

/* ATTACH with events to the test driver's dispatcher. */
TEST_F(fault, attach_fails_cleanly_at_every_allocation)
{
	struct tdispatch_attach a = {
		.size = sizeof(a), .flags = TDISPATCH_ATTACH_EVENTS, .event_queue = 64,
		.name = "testdrv-rw",
	};
	unsigned int n, hits = 0;
	int ret;

	for (n = 1; n < MAX_NTH; n++) {
		int fd = td_open(_metadata);

		ASSERT_EQ(0, fail_nth(n));
		ret = ioctl(fd, TDISPATCH_IOC_ATTACH, &a) ? -errno : 0;
		if (!injected()) {
			close(fd);
			if (ret == -ENOENT)
				SKIP(return, "the test driver is not loaded");
			EXPECT_EQ(0, ret);
			break;
		}
		hits++;
		if (ret)
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", n);
		close(fd);
	}
	TH_LOG("%u allocations of ATTACH failed in turn", hits);
	EXPECT_LT(1, hits);
}

/* PERIODIC_ADD: the registration carries its run's task, allocated here. */
TEST_F(fault, periodic_add_fails_cleanly_at_every_allocation)
{
	struct tdispatch_periodic_add p;
	struct tdispatch_create c;
	struct td_pl pl = { .id = 9 };
	unsigned int n, hits = 0;
	int fd = td_open(_metadata), ret;

	td_cfg_base(&c, "fault", 16, 0);
	td_create(_metadata, fd, &c);
	p = (struct tdispatch_periodic_add) {
		.size = sizeof(p), .id = 9, .payload = uptr(&pl), .payload_len = sizeof(pl),
		.period_ns = SEC, .timeout_ns = SEC, .max_backoff = 2,
	};
	for (n = 1; n < MAX_NTH; n++) {
		ASSERT_EQ(0, fail_nth(n));
		ret = ioctl(fd, TDISPATCH_IOC_PERIODIC_ADD, &p) ? -errno : 0;
		if (!injected()) {
			EXPECT_EQ(0, ret);
			break;
		}
		hits++;
		if (ret) {
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", n);
		} else {
			struct tdispatch_id id = { .size = sizeof(id), .id = 9 };

			EXPECT_EQ(0, ioctl(fd, TDISPATCH_IOC_PERIODIC_DEL, &id));
		}
		td_check_equation(_metadata, fd, "periodic add", n);
	}
	TH_LOG("%u allocations of PERIODIC_ADD failed in turn", hits);
	EXPECT_LT(0, hits);
	close(fd);
}

/*
 * SLOTS (its map, the kernel's counts), then KICK of eight slots marked by
 * hand: a refused slot and those after it stay marked, and the next KICK
 * queues them, so every slot is queued once.
 */
TEST_F(fault, slots_and_kick_fail_cleanly_at_every_allocation)
{
	struct tdispatch_slots a = { .size = sizeof(a), .nr = 64 };
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	unsigned int n, hits = 0;
	__u64 *summary, *bitmap, before;
	int fd = td_open(_metadata), ret;
	void *map;

	td_cfg_base(&c, "fault", 16, 0);
	td_create(_metadata, fd, &c);
	for (n = 1; n < MAX_NTH; n++) {
		ASSERT_EQ(0, fail_nth(n));
		ret = ioctl(fd, TDISPATCH_IOC_SLOTS, &a) ? -errno : 0;
		if (!injected()) {
			EXPECT_EQ(0, ret);
			break;
		}
		hits++;
		if (ret)
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", n);
	}
	TH_LOG("%u allocations of SLOTS failed in turn", hits);
	EXPECT_LT(1, hits);
	ASSERT_EQ(0, ioctl(fd, TDISPATCH_IOC_SLOTS, &a));
	map = mmap(NULL, a.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	summary = map;
	bitmap = (__u64 *)((char *)map + a.bitmap_off);
	for (hits = 0, n = 1; n < MAX_NTH; n++) {
		ASSERT_EQ(0, td_stats_try(fd, &st));
		before = st.accepted;
		bitmap[0] = 0xff;
		summary[0] = 1;
		ASSERT_EQ(0, fail_nth(n));
		ret = ioctl(fd, TDISPATCH_IOC_KICK);
		ret = ret < 0 ? -errno : ret;
		if (!injected()) {
			EXPECT_EQ(8, ret);
			break;
		}
		hits++;
		if (ret < 0) {
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %u", n);
			EXPECT_LT(0, ioctl(fd, TDISPATCH_IOC_KICK)) TH_LOG("the rest, marked");
		}
		ASSERT_EQ(0, td_stats_try(fd, &st));
		EXPECT_EQ(before + 8, st.accepted) TH_LOG("allocation %u", n);
		EXPECT_EQ(0, summary[0] | bitmap[0]);
		td_check_equation(_metadata, fd, "kick", n);
	}
	TH_LOG("%u allocations of KICK failed in turn", hits);
	EXPECT_LT(0, hits);
	munmap(map, a.map_len);
	close(fd);
}

TEST_HARNESS_MAIN
