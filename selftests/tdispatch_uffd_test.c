// SPDX-License-Identifier: GPL-2.0
/*
 * No call of /dev/tdispatch holds a lock that others need while it
 * touches user memory.  Each test parks one thread's call inside a copy
 * to or from a page that a userfaultfd holds (write-protected, or not
 * there at all), awaits the fault's message to know the call is stuck
 * there, and then requires that close(), LIST, ATTACH, TAKE, withdrawing
 * the test driver's dispatcher and unloading the test driver all finish
 * within a few seconds.  Only then is the fault resolved, and the parked
 * call must end cleanly.
 *
 * Needs root (userfaultfd for kernel faults) and, for the named cases,
 * the test driver tdispatch_testdrv.ko; skips without them.
 */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>

#include <linux/tdispatch.h>

#include "kselftest_harness.h"
#include "tdispatch_helpers.h"
#include "tdispatch_slots.h"

#define RW		"testdrv-rw"
/* What "a few seconds" is: everything here takes milliseconds. */
#define PROMPT_NS	(5 * SEC)

/* A page whose writes (WP) or any access (MISSING) wait for the test. */
struct td_trap {
	int uffd;
	char *page;
	bool wp;
};

static int td_trap_set(struct td_trap *t, bool wp)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = wp ? UFFDIO_REGISTER_MODE_WP :
						    UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_writeprotect prot = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	t->wp = wp;
	t->uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (t->uffd < 0 || ioctl(t->uffd, UFFDIO_API, &api))
		return -errno;
	t->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->page == MAP_FAILED)
		return -errno;
	/* Write protection needs the page there; MISSING needs it not. */
	if (wp)
		memset(t->page, 0, PAGE);
	reg.range = (struct uffdio_range) { .start = uptr(t->page), .len = PAGE };
	if (ioctl(t->uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	prot.range = reg.range;
	if (wp && ioctl(t->uffd, UFFDIO_WRITEPROTECT, &prot))
		return -errno;
	return 0;
}

/* Await the fault: the parked call is inside its copy now. */
static int td_trap_sprung(struct td_trap *t)
{
	struct uffd_msg msg;
	int ret = td_poll(t->uffd, POLLIN, WAIT_MS);

	if (ret <= 0)
		return ret ? ret : -ETIMEDOUT;
	if (read(t->uffd, &msg, sizeof(msg)) != sizeof(msg))
		return -errno;
	return msg.event == UFFD_EVENT_PAGEFAULT ? 0 : -EPROTO;
}

/* Let the parked call go on. */
static int td_trap_release(struct td_trap *t)
{
	struct uffdio_range range = { .start = uptr(t->page), .len = PAGE };
	struct uffdio_writeprotect prot = { .range = range };
	struct uffdio_zeropage zero = { .range = range };

	if (t->wp)
		return ioctl(t->uffd, UFFDIO_WRITEPROTECT, &prot) ? -errno : 0;
	return ioctl(t->uffd, UFFDIO_ZEROPAGE, &zero) ? -errno : 0;
}

static void td_trap_close(struct td_trap *t)
{
	if (t->page != MAP_FAILED)
		munmap(t->page, PAGE);
	if (t->uffd >= 0)
		close(t->uffd);
}

/* A call parked on its own thread: @fn(@fd, @arg) -> ret, -errno. */
struct td_parked {
	pthread_t thread;
	long (*fn)(int fd, void *arg);
	int fd;
	void *arg;
	long ret;
};

static void *td_parked_run(void *p)
{
	struct td_parked *c = p;

	c->ret = c->fn(c->fd, c->arg);
	return NULL;
}

static long td_call(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static long td_list_call(int fd, void *arg)
{
	return td_call(fd, TDISPATCH_IOC_LIST, arg);
}

static long td_stats_call(int fd, void *arg)
{
	return td_call(fd, TDISPATCH_IOC_STATS, arg);
}

static long td_take_call(int fd, void *arg)
{
	return td_call(fd, TDISPATCH_IOC_TAKE, arg);
}

static long td_submit_call(int fd, void *arg)
{
	return td_call(fd, TDISPATCH_IOC_SUBMIT, arg);
}

/* rmmod and insmod the test driver: 0 or -errno. */
static int td_reload_testdrv(void)
{
	return td_rmmod_testdrv() ?: td_insmod_testdrv();
}

/* @call, which must return 0 and take less than PROMPT_NS. */
#define EXPECT_PROMPT(what, call) do {						\
	const char *__what = (what);						\
	__u64 __t0 = now_ns();							\
	long __ret = (call);							\
	__u64 __took = now_ns() - __t0;					\
	EXPECT_EQ(0, __ret) TH_LOG("%s: %s", __what, strerror(-__ret));	\
	EXPECT_GT(PROMPT_NS, __took) TH_LOG("%s took %llu ms", __what, __took / MSEC); \
} while (0)

static long td_close_dup(int fd)
{
	int d = dup(fd);

	return d < 0 || close(d) ? -errno : 0;
}

/*
 * Counters once @done tasks are done: the kworkers account for a batch after its
 * COMPLETE returns, and no event says when, so the counters are polled.
 */
static void td_await_done(struct __test_metadata *_metadata, int fd,
			  struct tdispatch_stats_user *st, __u64 done)
{
	unsigned int i;

	for (i = 0; i < WAIT_MS; i++) {
		td_stats(_metadata, fd, st);
		if (st->done == done)
			break;
		usleep(1000);
	}
}

FIXTURE(uffd) {
	struct td_trap trap;
	struct td_parked parked;
	bool testdrv;
	bool started;
};

FIXTURE_VARIANT(uffd) {
	bool wp;
};

FIXTURE_SETUP(uffd)
{
	int fd = open(TD_DEV_PATH, O_RDWR | O_CLOEXEC), ret;

	self->trap = (struct td_trap) { .uffd = -1, .page = MAP_FAILED };
	if (fd < 0)
		SKIP(return, "no %s: tdispatch.ko is not loaded", TD_DEV_PATH);
	close(fd);
	self->testdrv = !access(TD_PUBLISHED, W_OK) && !access(TESTDRV_KO, R_OK);
	if (self->testdrv)
		ASSERT_EQ(0, td_publish(1));
	ret = td_trap_set(&self->trap, variant->wp);
	if (ret)
		SKIP(return, "userfaultfd %s: %s", variant->wp ? "WP" : "MISSING",
		     strerror(-ret));
}

FIXTURE_TEARDOWN(uffd)
{
	if (self->started) {
		td_trap_release(&self->trap);
		pthread_join(self->parked.thread, NULL);
	}
	td_trap_close(&self->trap);
	if (self->testdrv)
		td_publish(1);
}

/* Copies out: the page is there but writes wait. */
FIXTURE_VARIANT_ADD(uffd, copy_out) {
	.wp = true,
};

/* Copies in: the page is not there. */
FIXTURE_VARIANT_ADD(uffd, copy_in) {
	.wp = false,
};

/* Start @call(@file, @call_arg) on a thread of its own; await it on the trap. */
#define td_park(call, file, call_arg) do {					\
	self->parked = (struct td_parked) {					\
		.fn = (call), .fd = (file), .arg = (call_arg),			\
	};									\
	ASSERT_EQ(0, pthread_create(&self->parked.thread, NULL, td_parked_run,	\
				    &self->parked));				\
	self->started = true;							\
	ASSERT_EQ(0, td_trap_sprung(&self->trap))				\
		TH_LOG("the call never reached the page");			\
} while (0)

/* Let the parked call go; it must end with @want. */
#define td_unpark(want) do {							\
	long __want = (want);							\
	ASSERT_EQ(0, td_trap_release(&self->trap));				\
	ASSERT_EQ(0, pthread_join(self->parked.thread, NULL));			\
	self->started = false;							\
	EXPECT_EQ(__want, self->parked.ret)					\
		TH_LOG("the parked call: %s", strerror(-self->parked.ret));	\
} while (0)

/* The driver can withdraw, go and come back; others list and attach. */
static void td_driver_goes_and_comes(struct __test_metadata *_metadata, bool testdrv)
{
	struct tdispatch_entry e[8];
	struct tdispatch_list l = {
		.size = sizeof(l), .entries = uptr(e), .max_entries = 8,
	};
	int fd = td_open(_metadata), fd2 = td_open(_metadata);

	EXPECT_PROMPT("another file's LIST", td_call(fd, TDISPATCH_IOC_LIST, &l));
	if (testdrv) {
		EXPECT_PROMPT("another file's ATTACH", td_attach(fd2, RW, 0, 0));
		EXPECT_PROMPT("withdraw " RW, td_publish(0));
		EXPECT_PROMPT("publish " RW " again", td_publish(1));
		EXPECT_PROMPT("rmmod and insmod the test driver", td_reload_testdrv());
	}
	close(fd);
	close(fd2);
}

/* LIST's entries on the page. */
TEST_F(uffd, list_holds_up_no_publish_attach_or_rmmod)
{
	struct tdispatch_list l = {
		.size = sizeof(l), .entries = uptr(self->trap.page), .max_entries = 8,
	};
	int fd = td_open(_metadata);

	if (!variant->wp)
		SKIP(close(fd); return, "LIST only copies out");
	/* With nothing published, LIST copies nothing out. */
	if (!self->testdrv)
		SKIP(close(fd); return, "the test driver is not loaded");
	td_park(td_list_call, fd, &l);
	td_driver_goes_and_comes(_metadata, self->testdrv);
	EXPECT_PROMPT("close a dup of the parked file", td_close_dup(fd));
	td_unpark(0);
	close(fd);
}

/* An attached file's STATS, the whole struct on the page (read, then written). */
TEST_F(uffd, named_stats_hold_up_no_withdrawal_or_rmmod)
{
	struct tdispatch_stats_user *st = (void *)self->trap.page;
	int fd = td_open(_metadata);

	if (!self->testdrv)
		SKIP(close(fd); return, "the test driver is not loaded");
	ASSERT_EQ(0, td_attach(fd, RW, 0, 0));
	if (variant->wp) {
		/* Readable as it is: the size field says how much to write. */
		struct uffdio_writeprotect prot = {
			.range = { .start = uptr(st), .len = PAGE },
		};

		ASSERT_EQ(0, ioctl(self->trap.uffd, UFFDIO_WRITEPROTECT, &prot));
		st->size = sizeof(*st);
		prot.mode = UFFDIO_WRITEPROTECT_MODE_WP;
		ASSERT_EQ(0, ioctl(self->trap.uffd, UFFDIO_WRITEPROTECT, &prot));
	}
	td_park(td_stats_call, fd, st);
	td_driver_goes_and_comes(_metadata, true);
	EXPECT_PROMPT("close a dup of the parked file", td_close_dup(fd));
	/* Copying in it had not reached the dispatcher, which is gone now. */
	td_unpark(variant->wp ? 0 : -EINVAL);
	close(fd);
}

/* An attached file's SUBMIT with its payload on the page. */
TEST_F(uffd, named_submit_holds_up_no_withdrawal_or_rmmod)
{
	struct tdispatch_submit_task ut = {
		.id = 1, .payload = uptr(self->trap.page), .payload_len = 16,
	};
	struct tdispatch_submit s = {
		.size = sizeof(s), .tasks = uptr(&ut), .count = 1, .task_size = sizeof(ut),
	};
	int fd = td_open(_metadata);

	if (!self->testdrv || variant->wp)
		SKIP(close(fd); return, "a payload is only copied in; needs the test driver");
	ASSERT_EQ(0, td_attach(fd, RW, TDISPATCH_ATTACH_SUBMIT, 0));
	td_park(td_submit_call, fd, &s);
	td_driver_goes_and_comes(_metadata, true);
	td_unpark(0);
	/* It reached for the dispatcher only after its copy, and found it gone. */
	EXPECT_EQ(0, s.accepted);
	EXPECT_EQ(-ENODEV, ut.status);
	close(fd);
}

/*
 * TAKE with its task array on the page: the file's kworkers, its other
 * takers, COMPLETE, STATS and close() go on; the batch is the taker's
 * once the copy ends, and every task is accounted for.
 */
TEST_F_TIMEOUT(uffd, take_holds_up_no_other_taker_or_close, 60)
{
	struct tdispatch_lease_task *lt = (void *)self->trap.page;
	struct tdispatch_create c;
	struct tdispatch_stats_user st;
	struct tdispatch_take tk;
	struct td_pl pl[2] = { { .id = 1 }, { .id = 2 } };
	struct tdispatch_submit_task ut[2];
	struct td_taken other;
	static char buf[TDISPATCH_PAYLOAD_MAX];
	int fd = td_open(_metadata), i;

	if (!variant->wp)
		SKIP(close(fd); return, "TAKE only copies out");
	td_cfg_base(&c, "uffd-take", 1, 0);
	c.workers = 2;
	td_create(_metadata, fd, &c);
	for (i = 0; i < 2; i++)
		ut[i] = (struct tdispatch_submit_task) {
			.id = i + 1, .payload = uptr(&pl[i]), .payload_len = sizeof(pl[i]),
		};
	ASSERT_EQ(2, td_submit_vec(fd, ut, 2));
	tk = (struct tdispatch_take) {
		.size = sizeof(tk), .tasks = uptr(lt), .buf = uptr(buf),
		.max_tasks = 1, .buf_len = sizeof(buf), .timeout_ns = WAIT_NS,
	};
	td_park(td_take_call, fd, &tk);

	EXPECT_PROMPT("close a dup of the taking file", td_close_dup(fd));
	EXPECT_PROMPT("the other batch's TAKE", td_take(fd, &other, 0, WAIT_NS));
	EXPECT_EQ(1, other.tk.nr);
	EXPECT_PROMPT("its COMPLETE", td_complete(fd, other.tk.batch, TDISPATCH_RESULT_SUCCESS));
	EXPECT_PROMPT("STATS", td_stats_try(fd, &st));
	EXPECT_TRUE(td_equation_holds(&st));

	td_unpark(0);
	EXPECT_EQ(1, tk.nr);
	EXPECT_NE(other.tk.batch, tk.batch);
	EXPECT_NE(other.t[0].id, lt[0].id);
	/*
	 * Its owner closed a descriptor of the file while it copied: like a
	 * lease taken before the close, it is redelivered, not stranded.
	 */
	EXPECT_EQ(-ENOENT, td_complete(fd, tk.batch, TDISPATCH_RESULT_SUCCESS));
	EXPECT_EQ(0, td_take(fd, &other, 0, WAIT_NS));
	EXPECT_EQ(lt[0].id, other.t[0].id);
	EXPECT_EQ(0, td_complete(fd, other.tk.batch, TDISPATCH_RESULT_SUCCESS));
	/* Both done once the kworkers have accounted for them. */
	td_await_done(_metadata, fd, &st, 2);
	EXPECT_EQ(2, st.done);
	EXPECT_EQ(1, st.redelivered);
	close(fd);
}

/*
 * A slot written while a TAKE copies its payload out (parked on the page
 * the payload goes to): the write finds the slot still queued and owes no
 * KICK, the TAKE hands out the payload from before it, and the kernel
 * queues the newer write a task of its own when the TAKE succeeds.
 */
TEST_F_TIMEOUT(uffd, a_slot_written_while_take_copies_it_is_queued_again, 60)
{
	struct tdispatch_stats_user st;
	struct tdispatch_lease_task lt[1];
	struct tdispatch_create c;
	struct tdispatch_take tk;
	struct td_taken b;
	struct td_map m;
	struct td_pl pl;
	int fd = td_open(_metadata);

	if (!variant->wp)
		SKIP(close(fd); return, "TAKE only copies out");
	td_cfg_base(&c, "uffd-slot", 1, 0);
	td_create(_metadata, fd, &c);
	td_map(_metadata, fd, &m, 64);
	EXPECT_EQ(1, td_write_pl(&m, 0, 7, 1));
	EXPECT_EQ(1, td_kick(fd));
	tk = (struct tdispatch_take) {
		.size = sizeof(tk), .tasks = uptr(lt), .buf = uptr(self->trap.page),
		.max_tasks = 1, .buf_len = PAGE, .timeout_ns = WAIT_NS,
	};
	td_park(td_take_call, fd, &tk);
	EXPECT_EQ(0, td_write_pl(&m, 0, 7, 2)) TH_LOG("the slot was read before the copy");
	td_unpark(0);
	ASSERT_EQ(1, tk.nr);
	memcpy(&pl, self->trap.page + lt[0].payload_off, sizeof(pl));
	EXPECT_EQ(1, pl.ver) TH_LOG("the payload as it was when copied");
	EXPECT_EQ(0, td_complete(fd, tk.batch, TDISPATCH_RESULT_SUCCESS));
	/* No KICK: the kernel owes the second write its task. */
	ASSERT_EQ(0, td_take(fd, &b, 0, WAIT_NS)) TH_LOG("the second write is lost");
	ASSERT_EQ(1, b.tk.nr);
	EXPECT_EQ(7, b.t[0].id);
	EXPECT_EQ(2, td_payload(&b, 0).ver);
	EXPECT_EQ(0, td_complete(fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS));
	td_await_done(_metadata, fd, &st, 2);
	EXPECT_EQ(2, st.done);
	EXPECT_EQ(2, st.accepted);
	EXPECT_EQ(2, st.slot_writes);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
	munmap(m.map, m.a.map_len);
	close(fd);
}

/*
 * Tasks of @len payload bytes, ids from @id, until the file's bytes are
 * used up (ENOSPC): how many were accepted.
 */
static unsigned int td_fill_bytes(int fd, __u64 id, __u32 len)
{
	static char payload[TDISPATCH_PAYLOAD_MAX];
	struct tdispatch_submit_task ut[64];
	unsigned int n = 0, i;
	int ret;

	for (;;) {
		for (i = 0; i < 64; i++)
			ut[i] = (struct tdispatch_submit_task) {
				.id = id + n + i, .payload = uptr(payload), .payload_len = len,
			};
		ret = td_submit_vec(fd, ut, 64);
		if (ret < 0 || n > 1000000)
			return n;
		n += ret;
		for (i = 0; i < 64; i++)
			if (ut[i].status == -ENOSPC)
				return n;
	}
}

/*
 * As above, with the file's 16 MiB of tasks used up, so that the kernel
 * cannot queue the newer write's task when the TAKE returns: the slot is
 * marked, and a kworker makes the KICK its writer does not know it owes,
 * once there is room again.  No KICK from the test.
 */
TEST_F_TIMEOUT(uffd, a_refused_requeue_is_kicked_by_the_kernel_later, 120)
{
	struct tdispatch_stats_user st, before;
	struct tdispatch_lease_task lt[1];
	struct tdispatch_create c;
	struct tdispatch_take tk;
	struct td_taken b;
	struct td_map m;
	unsigned int big, seen = 0, i;
	bool found = false;
	__u64 end;
	int fd = td_open(_metadata);

	if (!variant->wp)
		SKIP(close(fd); return, "TAKE only copies out");
	/* Batches of two big tasks: what struct td_taken has room for. */
	td_cfg_base(&c, "uffd-full", 2, 0);
	c.workers = 1;
	c.max_buffer = 65536;
	c.max_input = 65536;
	td_create(_metadata, fd, &c);
	td_map(_metadata, fd, &m, 64);
	EXPECT_EQ(1, td_write_pl(&m, 0, 7, 1));
	EXPECT_EQ(1, td_kick(fd));
	/* Its batch cut, alone, before the others come. */
	end = now_ns() + WAIT_NS;
	do
		td_stats(_metadata, fd, &st);
	while (st.in_flight != 1 && now_ns() < end);
	ASSERT_EQ(1, st.in_flight);
	/* Big tasks, then small ones, so that not even a slot's task fits. */
	big = td_fill_bytes(fd, 1000, TDISPATCH_PAYLOAD_MAX);
	ASSERT_LT(0, big);
	big += td_fill_bytes(fd, 1000 + big, 1);
	td_stats(_metadata, fd, &before);
	tk = (struct tdispatch_take) {
		.size = sizeof(tk), .tasks = uptr(lt), .buf = uptr(self->trap.page),
		.max_tasks = 1, .buf_len = PAGE, .timeout_ns = WAIT_NS,
	};
	td_park(td_take_call, fd, &tk);
	EXPECT_EQ(0, td_write_pl(&m, 0, 7, 2)) TH_LOG("the slot was read before the copy");
	td_unpark(0);
	ASSERT_EQ(1, tk.nr);
	EXPECT_EQ(7, lt[0].id) TH_LOG("the slot's task goes first");
	td_stats(_metadata, fd, &st);
	EXPECT_LE(before.rejected + 1, st.rejected) TH_LOG("the kernel's task was not refused");
	EXPECT_EQ(0, td_complete(fd, tk.batch, TDISPATCH_RESULT_SUCCESS));
	/* The big tasks go, and with room again the slot's newer write comes. */
	end = now_ns() + 10 * WAIT_NS;
	while (!found && now_ns() < end) {
		if (td_take(fd, &b, 0, WAIT_NS))
			break;
		for (i = 0; i < b.tk.nr; i++) {
			if (b.t[i].id == 7) {
				EXPECT_EQ(2, td_payload(&b, i).ver);
				found = true;
			} else {
				seen++;
			}
		}
		EXPECT_EQ(0, td_complete(fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS));
	}
	EXPECT_TRUE(found) TH_LOG("the second write never came (%u of %u big tasks seen)", seen,
				  big);
	td_await_done(_metadata, fd, &st, big + 2);
	EXPECT_EQ(big + 2, st.done);
	EXPECT_EQ(2, st.slot_writes);
	EXPECT_TRUE(td_equation_holds(&st)) td_stats_log(_metadata, &st);
	munmap(m.map, m.a.map_len);
	close(fd);
}

/*
 * A SUBMIT parked after a task of its vector went onto its CPU's input:
 * on its second task's payload (MISSING), or on the copy out of its own
 * struct, which sits on the page (WP).  The first task's wake-up of the
 * acceptor is paid before the call sleeps, so that task, and another
 * submitter's on the same CPU's list, are taken at once.
 */
TEST_F_TIMEOUT(uffd, parked_submit_holds_back_no_task, 60)
{
	struct td_pl pl[2] = { { .id = 1 }, { .id = 3 } };
	struct tdispatch_submit_task ut[2] = {
		{ .id = 1, .payload = uptr(&pl[0]), .payload_len = sizeof(pl[0]) },
		{ .id = 2, .payload = uptr(self->trap.page), .payload_len = 16 },
	};
	struct tdispatch_submit_task other = {
		.id = 3, .payload = uptr(&pl[1]), .payload_len = sizeof(pl[1]),
	};
	struct tdispatch_submit on_stack, *s = &on_stack;
	unsigned int seen = 0, i, nr = variant->wp ? 1 : 2;
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	struct td_taken b;
	struct uffdio_writeprotect prot = {
		.range = { .start = uptr(self->trap.page), .len = PAGE },
	};
	cpu_set_t cpu;
	int fd = td_open(_metadata);

	if (variant->wp) {
		/* Readable as it is; the count written back waits. */
		ASSERT_EQ(0, ioctl(self->trap.uffd, UFFDIO_WRITEPROTECT, &prot));
		s = (void *)self->trap.page;
	}
	*s = (struct tdispatch_submit) {
		.size = sizeof(*s), .tasks = uptr(ut), .count = nr, .task_size = sizeof(*ut),
	};
	ut[0].status = 1;	/* written back as 0 */
	if (variant->wp) {
		prot.mode = UFFDIO_WRITEPROTECT_MODE_WP;
		ASSERT_EQ(0, ioctl(self->trap.uffd, UFFDIO_WRITEPROTECT, &prot));
	}
	/* One CPU, so one input list, for both submitters (threads inherit it). */
	CPU_ZERO(&cpu);
	CPU_SET(sched_getcpu(), &cpu);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu), &cpu));
	td_cfg_base(&c, "uffd-wake", TD_NR, 0);
	td_create(_metadata, fd, &c);
	td_park(td_submit_call, fd, s);

	EXPECT_PROMPT("another SUBMIT on the same CPU",
		      td_submit_vec(fd, &other, 1) == 1 ? 0 : -EIO);
	while (seen != 0xaU) {
		long ret = td_take(fd, &b, 0, PROMPT_NS);

		ASSERT_EQ(0, ret) TH_LOG("ids 1 and 3 not taken in 5 s (seen %#x): %s", seen,
					 strerror(-ret));
		for (i = 0; i < b.tk.nr; i++)
			seen |= 1U << b.t[i].id;
		EXPECT_EQ(0, td_complete(fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS));
	}
	EXPECT_EQ(0xaU, seen);

	td_unpark(0);
	EXPECT_EQ(nr, s->accepted);
	EXPECT_EQ(0, ut[0].status);
	if (!variant->wp) {
		ASSERT_EQ(0, td_take(fd, &b, 0, WAIT_NS));
		ASSERT_EQ(1, b.tk.nr);
		EXPECT_EQ(2, b.t[0].id);
		EXPECT_EQ(0, td_complete(fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS));
	}
	td_await_done(_metadata, fd, &st, nr + 1);
	EXPECT_EQ(nr + 1, st.done);
	EXPECT_TRUE(td_equation_holds(&st));
	close(fd);
}

TEST_HARNESS_MAIN
