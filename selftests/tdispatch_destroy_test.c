// SPDX-License-Identifier: GPL-2.0
/*
 * Destroy under load: everything that ends a dispatcher or a user of it,
 * while the others are busy with it.
 *
 *   - workers SIGKILLed between TAKE and COMPLETE: their leases come back
 *     and every task still ends
 *   - creators killed, or exiting, while their forked workers take and
 *     complete: the last exit destroys the dispatcher
 *   - a descriptor closed while other threads are inside SUBMIT, TAKE,
 *     read() and poll() on it
 *   - the test driver withdrawing and republishing testdrv-rw, then being
 *     removed, while files are attached, submitting and reading events
 *   - debugfs state files read while their dispatchers come and go
 *
 * "Nothing lost" is the accounting equation with nothing left pending or
 * in flight; for the driver's dispatchers, the driver checks at unload
 * that it released every task it accepted (a WARN fails the run).  The
 * harness fails the run on any kernel report as well.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/tdispatch.h>

#include "kselftest_harness.h"
#include "tdispatch_helpers.h"

#define WORKERS		3
#define IDS		1024
#define RW		"testdrv-rw"
#define NR_DISPATCHERS	"/sys/class/misc/tdispatch/dispatchers"

FIXTURE(destroy) {
};

FIXTURE_SETUP(destroy)
{
	if (access(TD_DEV_PATH, F_OK))
		SKIP(return, "no %s: tdispatch.ko is not loaded", TD_DEV_PATH);
}

FIXTURE_TEARDOWN(destroy)
{
}

/* Submit @n tasks with ids from @first on, each with a payload. */
static int submit_round(int fd, __u64 first, unsigned int n)
{
	static __thread struct td_pl pl[TD_NR];
	struct tdispatch_submit_task ut[TD_NR];
	unsigned int i;

	memset(ut, 0, sizeof(ut));
	for (i = 0; i < n && i < TD_NR; i++) {
		/* Even ids: the test driver refuses a payload starting with '!'. */
		pl[i] = (struct td_pl) { .id = (first + i) % IDS * 2, .ver = first };
		ut[i] = (struct tdispatch_submit_task) {
			.id = pl[i].id,
			.payload = uptr(&pl[i]),
			.payload_len = sizeof(pl[i]),
		};
	}
	return td_submit_vec(fd, ut, i);
}

/*
 * Take and complete until killed, also when the parent dies: every fifth
 * batch fails transiently and goes round again.  Any error but a timeout
 * ends the worker with a code.
 */
static void worker_loop(int fd, pid_t parent)
{
	static struct td_taken b;
	int ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		raise(SIGKILL);
	for (;;) {
		ret = td_take(fd, &b, 0, 100 * MSEC);
		if (ret == -ETIMEDOUT)
			continue;
		if (ret)
			_exit(10);
		ret = td_complete(fd, b.tk.batch, b.tk.batch % 5 ? TDISPATCH_RESULT_SUCCESS :
						  TDISPATCH_RESULT_TRANSIENT);
		if (ret)
			_exit(11);
	}
}

static pid_t spawn_worker(struct __test_metadata *_metadata, int fd)
{
	pid_t parent = getpid(), pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		worker_loop(fd, parent);
	return pid;
}

static void kill_and_reap(struct __test_metadata *_metadata, pid_t pid)
{
	int status;

	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* Killed, not ended by an error of its own. */
	EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("worker exited with %d", WEXITSTATUS(status));
}

/* Nothing queued, pending, delayed or in flight. */
static bool settled(const struct tdispatch_stats_user *st)
{
	return !(st->queued | st->pending | st->delayed | st->in_flight);
}

/* Be the last worker: take and complete until every task has ended. */
static void drain(struct __test_metadata *_metadata, int fd, struct tdispatch_stats_user *st)
{
	static struct td_taken b;
	int ret;

	for (;;) {
		td_stats(_metadata, fd, st);
		if (settled(st))
			return;
		ret = td_take(fd, &b, 0, 200 * MSEC);
		if (ret == -ETIMEDOUT)
			continue;
		ASSERT_EQ(0, ret) TH_LOG("take: %s", strerror(-ret));
		td_finish(_metadata, fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS);
	}
}

TEST_F_TIMEOUT(destroy, workers_killed_between_take_and_complete_lose_nothing, 120)
{
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	pid_t w[WORKERS];
	__u64 submitted = 0;
	unsigned int round, i;
	int fd, n;

	fd = td_open(_metadata);
	td_cfg_base(&c, "killed-workers", 16, 0);
	c.max_buffer = 4096;
	td_create(_metadata, fd, &c);
	for (i = 0; i < WORKERS; i++)
		w[i] = spawn_worker(_metadata, fd);
	for (round = 0; round < 400; round++) {
		n = submit_round(fd, (__u64)round * TD_NR, TD_NR);
		if (n == -ENOBUFS) {
			sched_yield();
			continue;
		}
		ASSERT_LE(0, n) TH_LOG("submit: %s", strerror(-n));
		submitted += n;
		/* A worker dies, whatever it is doing; another takes its place. */
		if (round % 16 == 15) {
			i = round / 16 % WORKERS;
			kill_and_reap(_metadata, w[i]);
			w[i] = spawn_worker(_metadata, fd);
		}
	}
	for (i = 0; i < WORKERS; i++)
		kill_and_reap(_metadata, w[i]);
	drain(_metadata, fd, &st);
	EXPECT_EQ(submitted, st.accepted);
	EXPECT_EQ(0, st.failed);
	EXPECT_EQ(0, st.cancelled);
	TH_LOG("%llu accepted: %llu done, %llu overridden, %llu dropped", st.accepted, st.done,
	       st.overridden, st.dropped);
	TH_LOG("%llu redelivered, %llu retries", st.redelivered, st.retries);
	close(fd);
}

static long nr_dispatchers(void)
{
	char v[32] = "";
	int fd = open(NR_DISPATCHERS, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (read(fd, v, sizeof(v) - 1) <= 0)
		v[0] = 0;
	close(fd);
	return v[0] ? atol(v) : -1;
}

/*
 * A creator that forks its workers and submits, writing a byte to @report
 * after each round, until it is killed or, after @rounds, exits.
 */
static void creator(int report, unsigned int rounds)
{
	pid_t self = getpid();
	struct tdispatch_create c;
	unsigned int r, i;
	int fd, n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(TD_DEV_PATH, O_RDWR | O_CLOEXEC);
	td_cfg_base(&c, "creator", 16, 64);
	if (fd < 0 || ioctl(fd, TDISPATCH_IOC_CREATE, &c))
		_exit(20);
	for (i = 0; i < 2; i++)
		if (!fork())
			worker_loop(fd, self);
	for (r = 0; r < rounds; r++) {
		n = submit_round(fd, (__u64)r * TD_NR, TD_NR);
		if (n < 0 && n != -ENOBUFS)
			_exit(21);
		if (write(report, "", 1) != 1)
			_exit(22);
	}
	_exit(0);
}

TEST_F_TIMEOUT(destroy, creators_killed_or_exiting_under_their_workers, 120)
{
	long before = nr_dispatchers();
	unsigned int iter;
	int p[2], status;
	char byte;
	pid_t pid;

	if (before < 0)
		SKIP(return, "no %s", NR_DISPATCHERS);
	/* The workers of a dead creator become ours, so that we can reap them. */
	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	for (iter = 0; iter < 24; iter++) {
		unsigned int rounds = 1 + iter % 6;
		bool killed = iter % 2;

		ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(p[0]);
			creator(p[1], killed ? 1000000 : rounds);
		}
		close(p[1]);
		/* Killed after some rounds, or left to exit: its workers go on. */
		while (rounds-- && read(p[0], &byte, 1) == 1)
			;
		if (killed)
			kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(killed, WIFSIGNALED(status));
		EXPECT_EQ(0, WIFEXITED(status) ? WEXITSTATUS(status) : 0);
		close(p[0]);
		/* The creator's death killed its workers: reap them all. */
		while (waitpid(-1, &status, 0) > 0)
			EXPECT_TRUE(WIFSIGNALED(status));
		/* The last of them closed the file: the dispatcher is gone. */
		EXPECT_EQ(before, nr_dispatchers()) TH_LOG("iteration %u", iter);
	}
}

/* Threads inside calls on one descriptor while another thread closes it. */
enum { T_SUBMIT, T_TAKE, T_POLL, T_READ, T_SPARE, NR_T };

struct closing {
	int fd;			/* closed under the threads */
	int spare;		/* a dup() of it that stays open */
	atomic_uint calls[NR_T];
	atomic_uint unexpected[NR_T];
	atomic_bool stop;
};

static void note(struct closing *cl, int t, bool ok)
{
	atomic_fetch_add(&cl->calls[t], 1);
	if (!ok)
		atomic_fetch_add(&cl->unexpected[t], 1);
}

static void *submitter(void *arg)
{
	struct closing *cl = arg;
	__u64 r = 0;
	int n;

	while ((n = submit_round(cl->fd, r++ * 16, 16)) != -EBADF)
		note(cl, T_SUBMIT, n >= 0 || n == -ENOBUFS);
	return NULL;
}

/* Leases taken through a descriptor the process closes come back. */
static void *taker_on(struct closing *cl, int fd, int t)
{
	static __thread struct td_taken b;
	int ret;

	while (!atomic_load(&cl->stop)) {
		ret = td_take(fd, &b, 0, 20 * MSEC);
		if (ret == -EBADF)
			break;
		if (!ret) {
			ret = td_complete(fd, b.tk.batch, TDISPATCH_RESULT_SUCCESS);
			note(cl, t, !ret || ret == -EBADF || ret == -ENOENT);
		} else {
			note(cl, t, ret == -ETIMEDOUT);
		}
	}
	return NULL;
}

static void *taker(void *arg)
{
	struct closing *cl = arg;

	return taker_on(cl, cl->fd, T_TAKE);
}

static void *spare_taker(void *arg)
{
	struct closing *cl = arg;

	return taker_on(cl, cl->spare, T_SPARE);
}

static void *poller(void *arg)
{
	struct closing *cl = arg;
	int ret;

	while ((ret = td_poll(cl->fd, POLLIN, 20)) < 0 || !(ret & POLLNVAL))
		note(cl, T_POLL, ret >= 0);
	return NULL;
}

/* Blocks in read(): events keep coming while the spare fd is worked. */
static void *reader(void *arg)
{
	struct tdispatch_event ev[16];
	struct closing *cl = arg;
	ssize_t n;

	while ((n = read(cl->fd, ev, sizeof(ev))) >= 0 || errno != EBADF)
		note(cl, T_READ, n > 0);
	return NULL;
}

TEST_F_TIMEOUT(destroy, close_while_threads_are_inside_calls, 120)
{
	void *(*fn[NR_T])(void *) = { submitter, taker, poller, reader, spare_taker };
	static struct closing cl;
	struct tdispatch_stats_user st;
	struct tdispatch_create c;
	pthread_t th[NR_T];
	unsigned int t;
	__u64 r = 0;

	cl.fd = td_open(_metadata);
	td_cfg_base(&c, "closing", 16, 256);
	td_create(_metadata, cl.fd, &c);
	cl.spare = dup(cl.fd);
	ASSERT_LE(0, cl.spare);
	for (t = 0; t < NR_T; t++)
		ASSERT_EQ(0, pthread_create(&th[t], NULL, fn[t], &cl));
	/* Every thread well into its calls... */
	for (t = 0; t < NR_T; t++)
		while (atomic_load(&cl.calls[t]) < 20)
			sched_yield();
	/* ...and the descriptor goes away under them. */
	ASSERT_EQ(0, close(cl.fd));
	for (t = T_SUBMIT; t <= T_POLL; t++)
		pthread_join(th[t], NULL);
	/* The reader returns with the next events, then sees EBADF. */
	while (pthread_tryjoin_np(th[T_READ], NULL))
		submit_round(cl.spare, r++ * 16, 16);
	atomic_store(&cl.stop, true);
	pthread_join(th[T_SPARE], NULL);
	drain(_metadata, cl.spare, &st);
	for (t = 0; t < NR_T; t++)
		EXPECT_EQ(0, atomic_load(&cl.unexpected[t])) TH_LOG("thread %u", t);
	EXPECT_EQ(0, st.failed);
	EXPECT_EQ(0, st.cancelled);
	TH_LOG("%llu accepted: %llu done, %llu overridden, %llu dropped; %llu redelivered",
	       st.accepted, st.done, st.overridden, st.dropped, st.redelivered);
	close(cl.spare);
}

/*
 * Files attached to testdrv-rw submit and read events while the driver
 * withdraws and republishes it, and then goes away.  Each thread attaches
 * a new file whenever its file was cut off.
 */
struct attached {
	atomic_uint calls;
	atomic_uint cutoffs;
	atomic_uint unexpected;
	atomic_bool stop;
};

/* Submit and read events on one attached file until it is cut off. */
static void attached_file_loop(struct attached *at, int fd)
{
	struct tdispatch_event ev[16];
	__u64 r = 0;
	ssize_t n;
	int ret;

	while (!atomic_load(&at->stop)) {
		ret = submit_round(fd, r++ * 8, 8);
		if (ret == -ENODEV)
			return;
		atomic_fetch_add(&at->calls, 1);
		if (ret < 0 && ret != -ENOBUFS)
			atomic_fetch_add(&at->unexpected, 1);
		ret = td_poll(fd, POLLIN, 20);
		if (ret & POLLHUP)
			return;
		if (!(ret & POLLIN))
			continue;
		n = read(fd, ev, sizeof(ev));
		if (n < 0 && errno == ENODEV)
			return;
		if (n <= 0)
			atomic_fetch_add(&at->unexpected, 1);
	}
}

static void *attacher(void *arg)
{
	struct attached *at = arg;
	int fd, ret;

	while (!atomic_load(&at->stop)) {
		fd = open(TD_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			atomic_fetch_add(&at->unexpected, 1);
			return NULL;
		}
		ret = td_attach(fd, RW, TDISPATCH_ATTACH_SUBMIT | TDISPATCH_ATTACH_EVENTS, 64);
		/* ENOENT: withdrawn, or the driver is gone. */
		if (!ret)
			attached_file_loop(at, fd);
		else if (ret != -ENOENT)
			atomic_fetch_add(&at->unexpected, 1);
		atomic_fetch_add(&at->cutoffs, 1);
		close(fd);
		sched_yield();
	}
	return NULL;
}

/* Let the attached threads make @n more calls or be cut off @n more times. */
static void progress(struct attached *at, unsigned int n)
{
	unsigned int calls = atomic_load(&at->calls), cut = atomic_load(&at->cutoffs);

	while (atomic_load(&at->calls) < calls + n && atomic_load(&at->cutoffs) < cut + n)
		sched_yield();
}

TEST_F_TIMEOUT(destroy, driver_withdraws_and_unloads_under_attached_files, 120)
{
	static struct attached at;
	pthread_t th[4];
	unsigned int i;
	int ret;

	if (geteuid())
		SKIP(return, "needs root to reload the test driver");
	if (access(TD_PUBLISHED, W_OK) || access(TESTDRV_KO, R_OK))
		SKIP(return, "the test driver is not loaded or not at %s", TESTDRV_KO);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, attacher, &at));
	for (i = 0; i < 8; i++) {
		progress(&at, 50);
		ASSERT_EQ(0, td_publish(0));
		progress(&at, 50);
		ASSERT_EQ(0, td_publish(1));
	}
	progress(&at, 50);
	/* Nothing the attached files do keeps the driver: out at once. */
	ret = td_rmmod_testdrv();
	EXPECT_EQ(0, ret) TH_LOG("rmmod %s: %s", TESTDRV, strerror(-ret));
	/* Every thread now finds nothing to attach to. */
	i = atomic_load(&at.cutoffs);
	while (atomic_load(&at.cutoffs) < i + 20)
		sched_yield();
	atomic_store(&at.stop, true);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(0, atomic_load(&at.unexpected));
	TH_LOG("%u calls, %u files cut off", atomic_load(&at.calls), atomic_load(&at.cutoffs));
	/* Back for the tests after this one. */
	ret = td_insmod_testdrv();
	EXPECT_EQ(0, ret) TH_LOG("insmod %s: %s", TESTDRV_KO, strerror(-ret));
}

#define DEBUG_DIR	"/sys/kernel/debug/tdispatch"

/* Read the state file of @dir into @buf: its length, or -errno. */
static int read_state(const char *dir, char *buf, size_t len)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), DEBUG_DIR "/%s/state", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

/* The state of the one dispatcher whose directory starts with @prefix. */
static int read_state_of(const char *prefix, char *buf, size_t len)
{
	DIR *dir = opendir(DEBUG_DIR);
	struct dirent *e;
	int ret = -ENOENT;

	if (!dir)
		return -errno;
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			ret = read_state(e->d_name, buf, len);
	closedir(dir);
	return ret;
}

static void *churn(void *arg)
{
	struct tdispatch_create c;
	unsigned int i;

	for (i = 0; i < 200; i++) {
		int fd = open(TD_DEV_PATH, O_RDWR | O_CLOEXEC);

		td_cfg_base(&c, "churn", 4, 0);
		if (fd < 0 || ioctl(fd, TDISPATCH_IOC_CREATE, &c))
			atomic_fetch_add((atomic_uint *)arg, 1);
		else
			submit_round(fd, i, 8);
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

/*
 * Root reads every dispatcher's state while others are created and
 * destroyed under it: a file may vanish (ENOENT, or EIO once open),
 * never fault.  The state
 * is bounded: the oldest 16 pending tasks of 100.
 */
TEST_F_TIMEOUT(destroy, debugfs_state_survives_destroy, 120)
{
	static char buf[16384];
	struct tdispatch_create c;
	atomic_uint failed = 0;
	unsigned int reads = 0;
	struct dirent *e;
	pthread_t th;
	DIR *dir;
	int fd, n;

	if (access(DEBUG_DIR, R_OK))
		SKIP(return, "no %s (debugfs not mounted, or not root)", DEBUG_DIR);
	fd = td_open(_metadata);
	td_cfg_base(&c, "dbg-own", 128, 0);
	c.max_delay_ns = 30 * SEC;
	td_create(_metadata, fd, &c);
	for (n = 0; n < 100; n += TD_NR / 2)
		ASSERT_LE(0, submit_round(fd, 1000 + n, 100 - n < TD_NR / 2 ? 100 - n : TD_NR / 2));
	/* CANCEL drains every submission into the pending set first; none is 9. */
	EXPECT_EQ(-ENOENT, td_cancel(fd, 9));
	ASSERT_LT(0, read_state_of("dbg-own-", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "name dbg-own\n")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "pending shown 16 of 100\n")) TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "tasks accepted 100 ")) TH_LOG("%s", buf);

	ASSERT_EQ(0, pthread_create(&th, NULL, churn, &failed));
	while (pthread_tryjoin_np(th, NULL)) {
		dir = opendir(DEBUG_DIR);
		if (!dir) {
			EXPECT_NE(NULL, dir);
			pthread_join(th, NULL);
			break;
		}
		while ((e = readdir(dir))) {
			if (e->d_name[0] == '.')
				continue;
			n = read_state(e->d_name, buf, sizeof(buf));
			/* ENOENT: gone before the open; EIO: removed while open. */
			EXPECT_TRUE(n > 0 || n == -ENOENT || n == -EIO)
				TH_LOG("%s: %s", e->d_name, strerror(-n));
			reads += n > 0;
		}
		closedir(dir);
	}
	EXPECT_EQ(0, atomic_load(&failed));
	TH_LOG("%u state files read while 200 dispatchers came and went", reads);
	close(fd);
	EXPECT_EQ(-ENOENT, read_state_of("dbg-own-", buf, sizeof(buf)))
		TH_LOG("gone with its file");
}

TEST_HARNESS_MAIN
