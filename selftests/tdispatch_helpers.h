/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the tdispatch kselftests share: opening the device, creating a
 * dispatcher, reading the counters with the accounting equation checked,
 * errno expectations, and the SUBMIT, TAKE, COMPLETE and CANCEL calls.
 *
 * Include after kselftest_harness.h.  Every function is static inline so
 * that a test which does not use one is not warned about it.
 */
#ifndef TDISPATCH_HELPERS_H
#define TDISPATCH_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/tdispatch.h>

#define TD_DEV_PATH		"/dev/" TDISPATCH_DEV_NAME
#define MSEC			1000000ULL
#define SEC			(1000 * MSEC)
/* The longest anything awaited may take. */
#define WAIT_NS			(10 * SEC)
#define WAIT_MS			10000
/* Most tasks a helper submits, takes or reads at once. */
#define TD_NR			64
#define PAGE			4096
/* nobody and nogroup in the VM's initramfs */
#define NOBODY			65534

/* Every payload says which submission it came from. */
struct td_pl {
	__u64 id;
	__u64 ver;
};

/* A TAKE argument with room for TD_NR tasks and their payloads. */
struct td_taken {
	struct tdispatch_take tk;
	struct tdispatch_lease_task t[TD_NR];
	unsigned char buf[2 * TDISPATCH_PAYLOAD_MAX];
};

/* One field of an ioctl argument set to @val, and the errno that earns. */
struct td_field_case {
	const char *what;
	unsigned short off;
	unsigned short len;
	__u64 val;
	int err;
};

#define FIELD_CASE(type, field, len, v, e)	{ #field " " #v, offsetof(type, field), len, v, e }

static inline __u64 uptr(const void *p)
{
	return (unsigned long)p;
}

static inline __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* Store @val in the @len (4 or 8) bytes at @off, or fill @len bytes with it. */
static inline void set_field(void *base, size_t off, size_t len, __u64 val)
{
	__u32 v32 = val;

	if (len == sizeof(v32))
		memcpy((char *)base + off, &v32, len);
	else if (len == sizeof(val))
		memcpy((char *)base + off, &val, len);
	else
		memset((char *)base + off, (int)val, len);
}

/* poll() for @events: the revents, 0 when none, or -errno. */
static inline int td_poll(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, ms);

	if (n < 0)
		return -errno;
	return n ? p.revents : 0;
}

/*
 * Run on CPU 0 only, so that what is submitted reaches the acceptor in
 * that order (it drains the CPUs' input lists in turn); @all: on every
 * CPU again.
 */
static inline void td_pin_cpu0(struct __test_metadata *_metadata, bool all)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	for (i = 0; i < (all ? CPU_SETSIZE : 1); i++)
		CPU_SET(i, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
}

static inline int td_open(struct __test_metadata *_metadata)
{
	int fd = open(TD_DEV_PATH, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd) TH_LOG("open %s: %s", TD_DEV_PATH, strerror(errno));
	return fd;
}

/* Two pages, the second unmapped: for arguments that run into it. */
static inline char *td_edge(struct __test_metadata *_metadata)
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mprotect(p + PAGE, PAGE, PROT_NONE));
	return p;
}

/*
 * The settings the tests' dispatchers share: cut at @max_batch tasks, room
 * for @events outcome events (none if 0), a lease of a minute.
 */
static inline void td_cfg_base(struct tdispatch_create *c, const char *name, __u32 max_batch,
			       __u32 events)
{
	*c = (struct tdispatch_create) {
		.size = sizeof(*c),
		.flags = events ? TDISPATCH_CREATE_EVENTS : 0,
		.max_buffer = 1024,
		.max_batch = max_batch,
		.workers = 4,
		.max_input = 4096,
		.lease_ns = 60 * SEC,
		.event_queue = events,
	};
	snprintf(c->name, sizeof(c->name), "%s", name);
}

static inline void td_create(struct __test_metadata *_metadata, int fd,
			     const struct tdispatch_create *c)
{
	ASSERT_EQ(0, ioctl(fd, TDISPATCH_IOC_CREATE, c)) TH_LOG("create: %s", strerror(errno));
}

static inline void td_stats_log(struct __test_metadata *_metadata,
				const struct tdispatch_stats_user *st)
{
	TH_LOG("accepted %llu rejected %llu queued %llu delayed %llu pending %llu in_flight %llu",
	       st->accepted, st->rejected, st->queued, st->delayed, st->pending, st->in_flight);
	TH_LOG("done %llu failed %llu overridden %llu expired %llu dropped %llu cancelled %llu",
	       st->done, st->failed, st->overridden, st->expired, st->dropped, st->cancelled);
	TH_LOG("batches %llu retries %llu holdoffs %llu redelivered %llu",
	       st->batches, st->retries, st->holdoffs, st->redelivered);
	TH_LOG("rejected_calls %llu events_lost %llu periodic_runs %llu",
	       st->rejected_calls, st->events_lost, st->periodic_runs);
}

/* STATS: 0 or -errno. */
static inline int td_stats_try(int fd, struct tdispatch_stats_user *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ioctl(fd, TDISPATCH_IOC_STATS, st) ? -errno : 0;
}

/* The right-hand side of the accounting equation: what @accepted must be. */
static inline __u64 td_accounted(const struct tdispatch_stats_user *st)
{
	return st->queued + st->delayed + st->pending + st->in_flight + st->done + st->failed +
	       st->overridden + st->expired + st->dropped + st->cancelled;
}

static inline bool td_equation_holds(const struct tdispatch_stats_user *st)
{
	return st->accepted == td_accounted(st);
}

/* Read the counters and check the accounting equation on them. */
static inline void td_stats(struct __test_metadata *_metadata, int fd,
			    struct tdispatch_stats_user *st)
{
	int ret = td_stats_try(fd, st);

	ASSERT_EQ(0, ret) TH_LOG("stats: %s", strerror(-ret));
	EXPECT_EQ(sizeof(*st), st->size);
	EXPECT_EQ(st->accepted, td_accounted(st)) {
		TH_LOG("the accounting equation does not hold:");
		td_stats_log(_metadata, st);
	}
}

static inline __u64 td_rejected_calls(struct __test_metadata *_metadata, int fd)
{
	struct tdispatch_stats_user st;

	td_stats(_metadata, fd, &st);
	return st.rejected_calls;
}

static inline void td_expect_errno(struct __test_metadata *_metadata, long ret, int err,
				   int want, const char *what)
{
	EXPECT_GT(0, ret) TH_LOG("%s: returned %ld, want %s", what, ret, strerror(want));
	EXPECT_EQ(want, err) TH_LOG("%s: %s, want %s", what, strerror(err), strerror(want));
}

static inline void td_check_failed(struct __test_metadata *_metadata, int fd, long ret,
				   int err, int want, const char *what, __u64 before,
				   __u64 counted)
{
	td_expect_errno(_metadata, ret, err, want, what);
	EXPECT_EQ(before + counted, td_rejected_calls(_metadata, fd))
		TH_LOG("%s: rejected_calls should go up by %llu", what, counted);
}

/* @call must fail with errno @want, and go up @counted in rejected_calls. */
#define EXPECT_FAILED(fd, want, what, call, counted) do {			\
	int __fd = (fd);							\
	__u64 __before = td_rejected_calls(_metadata, __fd);			\
	long __ret = (call);							\
	td_check_failed(_metadata, __fd, __ret, errno, want, what, __before, counted); \
} while (0)

/* A bad call: counted once in rejected_calls. */
#define EXPECT_REJECTED(fd, want, what, call)	EXPECT_FAILED(fd, want, what, call, 1)
/* A wait that ended without a batch or an event: not a bad call. */
#define EXPECT_WAIT_FAILS(fd, want, what, call)	EXPECT_FAILED(fd, want, what, call, 0)

/* EXPECT_EQ as a single statement for loops, naming the item that differs. */
static inline void td_expect_item(struct __test_metadata *_metadata, long long want,
				  long long have, const char *what, __u64 item)
{
	EXPECT_EQ(want, have) TH_LOG("%s %llu", what, item);
}

/* SUBMIT @n tasks with @flags: how many were accepted, or -errno. */
static inline int td_submit_flags(int fd, struct tdispatch_submit_task *ut, __u32 n, __u32 flags)
{
	struct tdispatch_submit s = {
		.size = sizeof(s),
		.flags = flags,
		.tasks = uptr(ut),
		.count = n,
		.task_size = sizeof(*ut),
	};

	if (ioctl(fd, TDISPATCH_IOC_SUBMIT, &s))
		return -errno;
	return s.accepted;
}

/* SUBMIT @n tasks: how many were accepted, or -errno. */
static inline int td_submit_vec(int fd, struct tdispatch_submit_task *ut, __u32 n)
{
	return td_submit_flags(fd, ut, n, 0);
}

static inline void td_take_arg(struct td_taken *b, __u32 flags, __u64 timeout_ns)
{
	b->tk = (struct tdispatch_take) {
		.size = sizeof(b->tk),
		.flags = flags,
		.timeout_ns = timeout_ns,
		.tasks = uptr(b->t),
		.buf = uptr(b->buf),
		.max_tasks = TD_NR,
		.buf_len = sizeof(b->buf),
	};
}

/* TAKE into @b: 0 or -errno. */
static inline int td_take(int fd, struct td_taken *b, __u32 flags, __u64 timeout_ns)
{
	td_take_arg(b, flags, timeout_ns);
	return ioctl(fd, TDISPATCH_IOC_TAKE, &b->tk) ? -errno : 0;
}

/* The payload of the @i-th task of @b. */
static inline struct td_pl td_payload(const struct td_taken *b, unsigned int i)
{
	struct td_pl pl = { .id = ~0ULL };

	if (b->t[i].payload_off + sizeof(pl) <= sizeof(b->buf))
		memcpy(&pl, b->buf + b->t[i].payload_off, sizeof(pl));
	return pl;
}

/* COMPLETE: 0 or -errno. */
static inline int td_complete(int fd, __u64 batch, __u32 result)
{
	struct tdispatch_complete c = {
		.size = sizeof(c),
		.batch = batch,
		.result = result,
	};

	return ioctl(fd, TDISPATCH_IOC_COMPLETE, &c) ? -errno : 0;
}

static inline void td_finish(struct __test_metadata *_metadata, int fd, __u64 batch,
			     __u32 result)
{
	int ret = td_complete(fd, batch, result);

	ASSERT_EQ(0, ret) TH_LOG("complete lease %llu with %u: %s", batch, result, strerror(-ret));
}

/* CANCEL: 0 or -errno. */
static inline int td_cancel(int fd, __u64 id)
{
	struct tdispatch_id a = { .size = sizeof(a), .id = id };

	return ioctl(fd, TDISPATCH_IOC_CANCEL, &a) ? -errno : 0;
}

/*
 * Checks in a forked child (one that dropped privileges, say): a failed
 * one exits with its number, which td_run_child() reports.
 */
static inline int *td_child_step(void)
{
	static int step;

	return &step;
}

#define child_step	(*td_child_step())

#define CHILD_CHECK(cond, ...) do {						\
	child_step++;								\
	if (!(cond)) {								\
		fprintf(stderr, "# child check %d (line %d) failed: ",		\
			child_step, __LINE__);					\
		fprintf(stderr, __VA_ARGS__);					\
		fputc('\n', stderr);						\
		_exit(child_step);						\
	}									\
} while (0)

/* @call must return 0. */
#define CHILD_OK(what, call) do {						\
	int __ret = (call);							\
	CHILD_CHECK(!__ret, "%s: %s", what, strerror(__ret < 0 ? -__ret : errno)); \
} while (0)

/* @call must fail with errno @want: -1 and errno, or -errno. */
#define CHILD_ERRNO(want, what, call) do {					\
	int __want = (want);							\
	long __ret = (call);							\
	int __err = __ret == -1 ? errno : (int)-__ret;				\
	CHILD_CHECK(__ret < 0 && __err == __want, "%s: returned %ld (%s), want %s", \
		    what, __ret, strerror(__err), strerror(__want));		\
} while (0)

/*
 * /dev, opened while still root: the initramfs's root directory may not
 * let others through, and what is tested here is the device, not that.
 */
static inline int *td_child_dev_dir(void)
{
	static int fd = -1;

	return &fd;
}

#define child_dev_dir	(*td_child_dev_dir())

static inline void child_become_nobody(void)
{
	child_dev_dir = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHILD_CHECK(child_dev_dir >= 0, "open /dev: %s", strerror(errno));
	CHILD_OK("setgroups", setgroups(0, NULL));
	CHILD_OK("setgid", setgid(NOBODY));
	CHILD_OK("setuid", setuid(NOBODY));
	/* Changing credentials cleared it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CHILD_CHECK(geteuid() == NOBODY && getegid() == NOBODY, "still uid %d gid %d",
		    geteuid(), getegid());
}

/* Open the device as the child now is. */
static inline int child_open(void)
{
	int fd = openat(child_dev_dir, TDISPATCH_DEV_NAME, O_RDWR | O_CLOEXEC);

	CHILD_CHECK(fd >= 0, "open %s: %s", TD_DEV_PATH, strerror(errno));
	return fd;
}

static inline void child_stats(int fd, struct tdispatch_stats_user *st)
{
	CHILD_OK("stats", td_stats_try(fd, st));
	CHILD_CHECK(td_equation_holds(st), "the accounting equation does not hold");
}

/* Write @val to the file at @path (sysfs, tracefs, /proc): 0 or -errno. */
static inline int td_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -errno;
	close(fd);
	return ret;
}

/* The test driver's switch: testdrv-rw withdrawn (0) or published (1). */
#define TD_PUBLISHED		"/sys/module/tdispatch_testdrv/parameters/published"

static inline int td_publish(int on)
{
	return td_write_file(TD_PUBLISHED, on ? "1" : "0");
}

/* The test driver's module, where the VM's initramfs keeps it. */
#define TESTDRV			"tdispatch_testdrv"
#define TESTDRV_KO		"/lib/tdispatch/testdrv/" TESTDRV ".ko"

/* rmmod the test driver, failing rather than waiting: 0 or -errno. */
static inline int td_rmmod_testdrv(void)
{
	return syscall(__NR_delete_module, TESTDRV, O_NONBLOCK) ? -errno : 0;
}

/* insmod the test driver: 0 or -errno. */
static inline int td_insmod_testdrv(void)
{
	int ko = open(TESTDRV_KO, O_RDONLY | O_CLOEXEC), ret = 0;

	if (ko < 0)
		return -errno;
	if (syscall(__NR_finit_module, ko, "", 0))
		ret = -errno;
	close(ko);
	return ret;
}

/* ATTACH @fd to the named dispatcher @name: 0 or -errno. */
static inline int td_attach(int fd, const char *name, __u32 flags, __u32 queue)
{
	struct tdispatch_attach a = {
		.size = sizeof(a),
		.flags = flags,
		.event_queue = queue,
	};

	snprintf(a.name, sizeof(a.name), "%s", name);
	return ioctl(fd, TDISPATCH_IOC_ATTACH, &a) ? -errno : 0;
}

/* Run @fn(@arg) in a child; it must exit 0. */
static inline void td_run_child(struct __test_metadata *_metadata, int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		child_step = 0;
		_exit(fn(arg));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child check %d failed, see above",
						 WEXITSTATUS(status));
}

#endif /* TDISPATCH_HELPERS_H */
