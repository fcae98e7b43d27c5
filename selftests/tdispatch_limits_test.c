// SPDX-License-Identifier: GPL-2.0
/*
 * What an unprivileged user can make the kernel hold through
 * /dev/tdispatch, and that it is bounded and charged:
 *
 *   - max_user_dispatchers and max_user_observers per user (EMFILE),
 *     lifted by CAP_SYS_RESOURCE, a user in a namespace that root made
 *     being a uid of that namespace, counted apart, and one in a namespace
 *     that a user made counting as that user; max_userns_* for all the
 *     users of a namespace that root made (EMFILE);
 *     max_dispatchers system-wide (ENFILE)
 *     and max_observers per dispatcher (EBUSY) for everyone; each
 *     refusal counted in /sys/class/misc/tdispatch/refused_*;
 *   - a flood of creates, large payloads and delayed tasks from a memory
 *     cgroup with a small memory.max, and the most shared slots there,
 *     get ENOMEM, never the OOM killer,
 *     the memory is charged to that group, and it all comes back at close.
 *
 * The limits are module parameters; each test sets the ones it needs and
 * the fixture puts them back.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/tdispatch.h>

#include "kselftest_harness.h"
#include "tdispatch_helpers.h"

#define PARAMS		"/sys/module/tdispatch/parameters/"
#define MISC		"/sys/class/misc/" TDISPATCH_DEV_NAME "/"
#define TESTDRV_RW	"testdrv-rw"
#define CGROOT		"/sys/fs/cgroup"
#define CG		CGROOT "/tdispatch-limits"

static const char * const td_limits[] = {
	"max_dispatchers", "max_user_dispatchers", "max_userns_dispatchers",
	"max_observers", "max_user_observers", "max_userns_observers",
};

#define NR_LIMITS	ARRAY_SIZE(td_limits)

/* A number from a sysfs file: 0 and *@v, or -errno. */
static int sysfs_read(const char *path, unsigned long long *v)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	*v = strtoull(buf, NULL, 10);
	return 0;
}

static unsigned long long td_sys(struct __test_metadata *_metadata, const char *path)
{
	unsigned long long v = 0;

	EXPECT_EQ(0, sysfs_read(path, &v)) TH_LOG("read %s", path);
	return v;
}

static void td_set_limit(struct __test_metadata *_metadata, const char *name,
			 unsigned long long v)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), PARAMS "%s", name);
	snprintf(val, sizeof(val), "%llu", v);
	ASSERT_EQ(0, td_write_file(path, val)) TH_LOG("set %s to %llu", name, v);
}

/* CREATE a small dispatcher on @fd, with an event ring if @events: 0 or -errno. */
static int td_create_small(int fd, __u32 events)
{
	struct tdispatch_create c;

	td_cfg_base(&c, "limits", 4, events);
	c.workers = 1;
	return ioctl(fd, TDISPATCH_IOC_CREATE, &c) ? -errno : 0;
}

static int td_attach_events(int fd, const char *name)
{
	struct tdispatch_attach a = {
		.size = sizeof(a),
		.flags = TDISPATCH_ATTACH_EVENTS,
		.event_queue = 16,
	};

	snprintf(a.name, sizeof(a.name), "%s", name);
	return ioctl(fd, TDISPATCH_IOC_ATTACH, &a) ? -errno : 0;
}

FIXTURE(limits) {
	unsigned long long saved[NR_LIMITS];
};

FIXTURE_SETUP(limits)
{
	unsigned int i;

	if (access(PARAMS "max_dispatchers", W_OK))
		SKIP(return, "tdispatch.ko with limits is not loaded");
	for (i = 0; i < NR_LIMITS; i++) {
		char path[128];

		snprintf(path, sizeof(path), PARAMS "%s", td_limits[i]);
		ASSERT_EQ(0, sysfs_read(path, &self->saved[i]));
	}
}

FIXTURE_TEARDOWN(limits)
{
	unsigned int i;

	for (i = 0; i < NR_LIMITS; i++)
		td_set_limit(_metadata, td_limits[i], self->saved[i]);
}

/* The limits are there for an admin to read and set, and have sane defaults. */
TEST_F(limits, are_module_parameters_an_admin_sets_at_runtime)
{
	unsigned int i;

	for (i = 0; i < NR_LIMITS; i++) {
		char path[128];
		struct stat st;

		snprintf(path, sizeof(path), PARAMS "%s", td_limits[i]);
		ASSERT_EQ(0, stat(path, &st)) TH_LOG("%s", path);
		EXPECT_EQ(0644, st.st_mode & 0777) TH_LOG("%s", path);
		EXPECT_LT(0, self->saved[i]) TH_LOG("%s defaults to 0", td_limits[i]);
		EXPECT_GE(4096, self->saved[i]) TH_LOG("%s lets a flood through", td_limits[i]);
	}
	td_set_limit(_metadata, "max_user_dispatchers", 7);
	EXPECT_EQ(7, td_sys(_metadata, PARAMS "max_user_dispatchers"));
}

struct td_flood {
	unsigned int limit;
	unsigned int tries;
};

/*
 * As nobody: open and CREATE until refused.  Exactly @limit succeed, the
 * rest get EMFILE; closing one makes room for one more.
 */
static int td_flood_as_nobody(void *arg)
{
	const struct td_flood *fl = arg;
	int *fds = calloc(fl->tries, sizeof(*fds));
	unsigned int i, made = 0, refused = 0;
	int fd;

	child_become_nobody();
	CHILD_CHECK(fds, "calloc");
	for (i = 0; i < fl->tries; i++) {
		int ret;

		fds[i] = child_open();
		ret = td_create_small(fds[i], 0);
		if (!ret) {
			made++;
			continue;
		}
		CHILD_CHECK(ret == -EMFILE, "create %u: %s, want EMFILE", i, strerror(-ret));
		refused++;
	}
	CHILD_CHECK(made == fl->limit, "%u dispatchers made, the limit is %u", made, fl->limit);
	CHILD_CHECK(refused == fl->tries - fl->limit, "%u refused", refused);
	/* A file that failed to create may try again once there is room. */
	close(fds[0]);
	CHILD_OK("create after a close", td_create_small(fds[fl->tries - 1], 0));
	fd = child_open();
	CHILD_ERRNO(EMFILE, "create at the limit again", td_create_small(fd, 0));
	for (i = 1; i < fl->tries; i++)
		close(fds[i]);
	close(fd);
	free(fds);
	return 0;
}

/* The reproduction: nobody's 1000 creates, a thread each, are stopped. */
TEST_F_TIMEOUT(limits, nobody_cannot_create_more_than_max_user_dispatchers, 120)
{
	struct td_flood fl = { .limit = 8, .tries = 1000 };
	unsigned long long refused = td_sys(_metadata, MISC "refused_dispatchers");
	unsigned long long held = td_sys(_metadata, MISC "dispatchers");

	td_set_limit(_metadata, "max_user_dispatchers", fl.limit);
	td_run_child(_metadata, td_flood_as_nobody, &fl);
	EXPECT_EQ(refused + fl.tries - fl.limit + 1, td_sys(_metadata, MISC "refused_dispatchers"));
	/* Every charge was given back when the files closed. */
	EXPECT_EQ(held, td_sys(_metadata, MISC "dispatchers"));
}

/*
 * Per user namespace: two namespaces that root made (as container runtimes
 * do), with the same uid map, so that their users have the same kernel
 * uids.  With 2 dispatchers a user, 4 a namespace and room for 8 in all,
 * each namespace runs its steps in a child of its own, which keeps its
 * files open until the parent has checked the system-wide limit.
 */
#define NS_MAP		"0 100000 65536"

static int ns_open_create(int *fd, int *n)
{
	fd[*n] = child_open();
	return td_create_small(fd[(*n)++], 0);
}

/*
 * The first namespace: its users each get their share until the
 * namespace's is used up; then no user of it, nor of a namespace its root
 * makes below it, gets more.
 */
static void ns_fill(int *fd, int *n)
{
	CHILD_OK("become 1000", setresuid(1000, 1000, 0));
	CHILD_OK("1000's first", ns_open_create(fd, n));
	CHILD_OK("1000's second", ns_open_create(fd, n));
	CHILD_ERRNO(EMFILE, "1000's third, past its own", ns_open_create(fd, n));
	CHILD_OK("back to root", setresuid(0, 0, 0));
	CHILD_OK("become 1001", setresuid(1001, 1001, 0));
	CHILD_OK("1001's first", ns_open_create(fd, n));
	CHILD_OK("1001's second", ns_open_create(fd, n));
	CHILD_OK("back to root", setresuid(0, 0, 0));
	CHILD_OK("become 1002", setresuid(1002, 1002, 0));
	CHILD_ERRNO(EMFILE, "1002's first, the namespace full", ns_open_create(fd, n));
	CHILD_OK("back to root", setresuid(0, 0, 0));
	/* Changing credentials made /proc/self root's; it must be ours to map. */
	CHILD_OK("dumpable", prctl(PR_SET_DUMPABLE, 1));
	CHILD_OK("unshare below", unshare(CLONE_NEWUSER));
	CHILD_OK("map", td_write_file("/proc/self/uid_map", "0 0 1"));
	CHILD_ERRNO(EMFILE, "below it, the namespace full", ns_open_create(fd, n));
}

/*
 * The second namespace, the first full: its users still get their share;
 * one who makes a namespace of its own counts as itself inside it.
 */
static void ns_own(int *fd, int *n)
{
	CHILD_OK("become 1000", setresuid(1000, 1000, 0));
	CHILD_OK("1000's first", ns_open_create(fd, n));
	CHILD_OK("back to root", setresuid(0, 0, 0));
	CHILD_OK("become 1001", setresuid(1001, 1001, 1001));
	CHILD_OK("dumpable", prctl(PR_SET_DUMPABLE, 1));
	CHILD_OK("1001 makes a namespace", unshare(CLONE_NEWUSER));
	CHILD_OK("maps itself to its root", td_write_file("/proc/self/uid_map", "0 1001 1"));
	CHILD_OK("1001's first, as root of its own", ns_open_create(fd, n));
	CHILD_OK("1001's second", ns_open_create(fd, n));
	CHILD_ERRNO(EMFILE, "1001's third, counted as 1001", ns_open_create(fd, n));
}

/* In a namespace of its own, mapped by the parent: 0, or the failed check. */
static int ns_steps(int go, int done, bool first)
{
	int fd[16], n = 0;
	char c = 0;

	child_step = 0;
	CHILD_OK("unshare", unshare(CLONE_NEWUSER));
	CHILD_CHECK(write(done, &c, 1) == 1, "tell the parent");
	CHILD_CHECK(read(go, &c, 1) == 1, "wait for the map");
	CHILD_OK("become root of the namespace", setresgid(0, 0, 0) ?: setresuid(0, 0, 0));
	if (first)
		ns_fill(fd, &n);
	else
		ns_own(fd, &n);
	CHILD_CHECK(write(done, &c, 1) == 1, "tell the parent");
	CHILD_CHECK(read(go, &c, 1) == 1, "wait to close");
	while (n--)
		close(fd[n]);
	return 0;
}

struct ns_child {
	pid_t pid;
	int go[2], done[2];
};

/*
 * A namespace's child started, mapped and through its steps: true.  No
 * ASSERT here or after the limits are set: the test must put them back.
 */
static bool ns_start(struct ns_child *ch, bool first)
{
	char path[64], c;

	if (pipe(ch->go) || pipe(ch->done))
		return false;
	ch->pid = fork();
	if (ch->pid < 0)
		return false;
	if (!ch->pid) {
		close(ch->go[1]);
		close(ch->done[0]);
		child_dev_dir = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
		_exit(ns_steps(ch->go[0], ch->done[1], first));
	}
	/* So that a child that fails is read as an end of file, not waited for. */
	close(ch->go[0]);
	close(ch->done[1]);
	if (read(ch->done[0], &c, 1) != 1)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/uid_map", ch->pid);
	if (td_write_file(path, NS_MAP))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/gid_map", ch->pid);
	return !td_write_file(path, NS_MAP) && write(ch->go[1], &c, 1) == 1 &&
	       read(ch->done[0], &c, 1) == 1;
}

/* Let the child close its files, and reap it. */
static void ns_stop(struct __test_metadata *_metadata, struct ns_child *ch)
{
	char c = 0;
	int status;

	if (ch->pid <= 0)
		return;
	if (write(ch->go[1], &c, 1) != 1)
		kill(ch->pid, SIGKILL);
	EXPECT_EQ(ch->pid, waitpid(ch->pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("child: status %#x; a check failed, see above", status);
}

TEST_F_TIMEOUT(limits, users_are_counted_by_user_namespace_and_uid, 120)
{
	unsigned long long held = td_sys(_metadata, MISC "dispatchers");
	struct ns_child a = { .pid = -1 }, b = { .pid = -1 };
	int fd[2], probe, status;

	/* A child that failed has closed its end: EPIPE, not the end of the test. */
	signal(SIGPIPE, SIG_IGN);
	probe = fork();
	ASSERT_LE(0, probe);
	if (!probe)
		_exit(unshare(CLONE_NEWUSER) ? 1 : 0);
	ASSERT_EQ(probe, waitpid(probe, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		SKIP(return, "no user namespaces");
	td_set_limit(_metadata, "max_user_dispatchers", 2);
	td_set_limit(_metadata, "max_userns_dispatchers", 4);
	td_set_limit(_metadata, "max_dispatchers", held + 8);
	EXPECT_TRUE(ns_start(&a, true)) TH_LOG("the first namespace's steps");
	EXPECT_TRUE(ns_start(&b, false)) TH_LOG("the second namespace's steps");
	EXPECT_EQ(held + 7, td_sys(_metadata, MISC "dispatchers"));
	/* The system-wide limit holds over them all, root's own too. */
	fd[0] = td_open(_metadata);
	fd[1] = td_open(_metadata);
	EXPECT_EQ(0, td_create_small(fd[0], 0));
	EXPECT_EQ(-ENFILE, td_create_small(fd[1], 0));
	close(fd[0]);
	close(fd[1]);
	ns_stop(_metadata, &a);
	ns_stop(_metadata, &b);
	EXPECT_EQ(held, td_sys(_metadata, MISC "dispatchers")) TH_LOG("a charge was kept");
}

/* CAP_SYS_RESOURCE lifts the per-user limit, as it lifts rlimits. */
TEST_F(limits, root_is_not_held_to_the_per_user_limit)
{
	int fd[3], i;

	td_set_limit(_metadata, "max_user_dispatchers", 1);
	for (i = 0; i < 3; i++) {
		fd[i] = td_open(_metadata);
		EXPECT_EQ(0, td_create_small(fd[i], 0)) TH_LOG("create %d as root", i);
	}
	for (i = 0; i < 3; i++)
		close(fd[i]);
}

/* The system-wide limit holds for root too: ENFILE, counted. */
TEST_F(limits, max_dispatchers_holds_for_everyone)
{
	unsigned long long held = td_sys(_metadata, MISC "dispatchers");
	unsigned long long refused = td_sys(_metadata, MISC "refused_dispatchers");
	int fd[3], i;

	td_set_limit(_metadata, "max_dispatchers", held + 2);
	for (i = 0; i < 3; i++)
		fd[i] = td_open(_metadata);
	EXPECT_EQ(0, td_create_small(fd[0], 0));
	EXPECT_EQ(0, td_create_small(fd[1], 0));
	EXPECT_EQ(-ENFILE, td_create_small(fd[2], 0));
	EXPECT_EQ(refused + 1, td_sys(_metadata, MISC "refused_dispatchers"));
	EXPECT_EQ(held + 2, td_sys(_metadata, MISC "dispatchers"));
	close(fd[1]);
	EXPECT_EQ(0, td_create_small(fd[2], 0)) TH_LOG("room again after a close");
	close(fd[0]);
	close(fd[2]);
	EXPECT_EQ(held, td_sys(_metadata, MISC "dispatchers"));
}

/*
 * As nobody: event readers, on a driver's dispatcher and on one's own,
 * count against max_user_observers.
 */
static int td_observers_as_nobody(void *arg)
{
	int fd[4], i;

	child_become_nobody();
	for (i = 0; i < 4; i++)
		fd[i] = child_open();
	CHILD_OK("attach with events 1", td_attach_events(fd[0], TESTDRV_RW));
	CHILD_OK("create with events 2", td_create_small(fd[1], 16));
	CHILD_ERRNO(EMFILE, "attach with events 3", td_attach_events(fd[2], TESTDRV_RW));
	CHILD_ERRNO(EMFILE, "create with events 3", td_create_small(fd[2], 16));
	/* Without events a file holds no reader. */
	CHILD_OK("create without events", td_create_small(fd[3], 0));
	close(fd[0]);
	CHILD_OK("attach with events after a close", td_attach_events(fd[2], TESTDRV_RW));
	for (i = 1; i < 4; i++)
		close(fd[i]);
	return 0;
}

TEST_F(limits, nobody_holds_at_most_max_user_observers)
{
	unsigned long long refused = td_sys(_metadata, MISC "refused_observers");
	int fd = td_open(_metadata);

	if (td_attach_events(fd, TESTDRV_RW) == -ENOENT)
		SKIP(close(fd); return, "the test driver is not loaded");
	close(fd);
	td_set_limit(_metadata, "max_user_observers", 2);
	td_run_child(_metadata, td_observers_as_nobody, NULL);
	EXPECT_EQ(refused + 2, td_sys(_metadata, MISC "refused_observers"));
}

/* Every outcome costs the driver a push per reader: capped, for root too. */
TEST_F(limits, a_driver_dispatcher_has_at_most_max_observers)
{
	unsigned long long refused = td_sys(_metadata, MISC "refused_observers");
	int fd[3], i, ret;

	for (i = 0; i < 3; i++)
		fd[i] = td_open(_metadata);
	ret = td_attach_events(fd[0], TESTDRV_RW);
	if (ret == -ENOENT)
		SKIP(goto out, "the test driver is not loaded");
	ASSERT_EQ(0, ret);
	td_set_limit(_metadata, "max_observers", 2);
	EXPECT_EQ(0, td_attach_events(fd[1], TESTDRV_RW));
	EXPECT_EQ(-EBUSY, td_attach_events(fd[2], TESTDRV_RW));
	EXPECT_EQ(refused + 1, td_sys(_metadata, MISC "refused_observers"));
	/* An attachment without events is no reader. */
	EXPECT_EQ(0, ioctl(fd[2], TDISPATCH_IOC_ATTACH, &(struct tdispatch_attach) {
		.size = sizeof(struct tdispatch_attach), .name = TESTDRV_RW }));
	close(fd[1]);
	i = td_open(_metadata);
	EXPECT_EQ(0, td_attach_events(i, TESTDRV_RW)) TH_LOG("room again after a close");
	close(i);
out:
	for (i = 0; i < 3; i++)
		close(fd[i]);
}

/* As nobody: a quarter of a dispatcher's reader places, not more. */
static int td_share_as_nobody(void *arg)
{
	int fd[3], i;

	child_become_nobody();
	for (i = 0; i < 3; i++)
		fd[i] = child_open();
	CHILD_OK("reader 1", td_attach_events(fd[0], TESTDRV_RW));
	CHILD_OK("reader 2", td_attach_events(fd[1], TESTDRV_RW));
	CHILD_ERRNO(EBUSY, "reader 3 of a quarter of 8", td_attach_events(fd[2], TESTDRV_RW));
	for (i = 0; i < 3; i++)
		close(fd[i]);
	return 0;
}

TEST_F(limits, one_user_takes_at_most_a_quarter_of_a_dispatchers_readers)
{
	int fd = td_open(_metadata);

	if (td_attach_events(fd, TESTDRV_RW) == -ENOENT)
		SKIP(close(fd); return, "the test driver is not loaded");
	close(fd);
	td_set_limit(_metadata, "max_observers", 8);
	td_run_child(_metadata, td_share_as_nobody, NULL);
}

/* The memory cgroup part. */

#define CG_MAX		(24 << 20)
/* The per-CPU charge caches memcg keeps (64 pages a CPU) and slab slack. */
#define CG_SLACK	(2 << 20)
#define FLOOD_FILES	48

static unsigned long long cg_read(const char *file)
{
	char path[128];
	unsigned long long v = ~0ULL;

	snprintf(path, sizeof(path), CG "/%s", file);
	sysfs_read(path, &v);
	return v;
}

/* "key value" from a flat-keyed cgroup file. */
static unsigned long long cg_key(const char *path, const char *key)
{
	char line[128];
	unsigned long long v = 0;
	size_t len = strlen(key);
	FILE *f = fopen(path, "re");

	if (!f)
		return ~0ULL;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ' ')
			v = strtoull(line + len + 1, NULL, 10);
	fclose(f);
	return v;
}

static unsigned long long vm_oom_kills(void)
{
	return cg_key("/proc/vmstat", "oom_kill");
}

static unsigned char flood_payload[TDISPATCH_PAYLOAD_MAX];

static void flood_warm(void)
{
	memset(flood_payload, 'x', sizeof(flood_payload));
	cg_key(CG "/memory.events", "oom_kill");
}

/* Submit 64 of the largest tasks (delayed by an hour if @delayed); note a refusal. */
static int flood_submit(int fd, unsigned int round, bool delayed, int *refusal)
{
	struct tdispatch_submit_task ut[64];
	unsigned int i;
	int n;

	for (i = 0; i < 64; i++)
		ut[i] = (struct tdispatch_submit_task) {
			.id = round * 64 + i,
			.payload = uptr(flood_payload),
			.payload_len = sizeof(flood_payload),
			.not_before_ns = delayed ? 3600 * SEC : 0,
		};
	n = td_submit_flags(fd, ut, 64, delayed ? TDISPATCH_SUBMIT_RELATIVE : 0);
	for (i = 0; n >= 0 && i < 64; i++)
		if (ut[i].status && !*refusal)
			*refusal = -ut[i].status;
	return n;
}

/* SLOTS with the most slots: 0 or -errno. */
static int child_slots(int fd)
{
	struct tdispatch_slots a = { .size = sizeof(a), .nr = TDISPATCH_SLOTS_MAX };

	return ioctl(fd, TDISPATCH_IOC_SLOTS, &a) ? -errno : 0;
}

/*
 * In the group, as nobody: creates, then tasks with the largest payloads,
 * pending and delayed, until the group's limit refuses, and the most shared
 * slots there, which it refuses too (and allows once the files are closed).  It stops itself
 * where the parent measures: at the limit even reading a file would charge
 * the group (a seq_file buffer), so the child reads nothing there.
 */
static int td_memcg_flood(void *arg)
{
	int fd[FLOOD_FILES], made = 0, refusal = 0, i, round, ret;
	struct tdispatch_stats_user st;
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	CHILD_OK("join the group", td_write_file(CG "/cgroup.procs", pid));
	child_become_nobody();
	/* What this process touches is charged before the baseline. */
	memset(&st, 0, sizeof(st));
	flood_warm();
	raise(SIGSTOP);		/* the parent reads the baseline */

	for (i = 0; i < FLOOD_FILES; i++) {
		struct tdispatch_create c;

		fd[i] = child_open();
		td_cfg_base(&c, "memcg", 1024, 4096);
		c.workers = 64;
		c.max_buffer = 65536;
		c.max_input = 65536;
		c.max_delayed = 65536;
		if (ioctl(fd[i], TDISPATCH_IOC_CREATE, &c)) {
			CHILD_CHECK(errno == ENOMEM, "create %d: %s, want ENOMEM", i,
				    strerror(errno));
			break;
		}
		made++;
	}
	CHILD_CHECK(made > 0 && made < FLOOD_FILES, "%d of %d creates before ENOMEM", made,
		    FLOOD_FILES);
	/* Room again: close half, then fill it with tasks. */
	for (i = made / 2; i <= made && i < FLOOD_FILES; i++)
		close(fd[i]);
	made /= 2;
	for (round = 0; !refusal && round < 4096; round++)
		flood_submit(fd[round % made], round, round & 1, &refusal);
	CHILD_CHECK(refusal == ENOMEM, "submits refused with %s, want ENOMEM",
		    strerror(refusal));
	/* The most shared slots, 4 MiB, at the limit: ENOMEM, not the OOM killer. */
	ret = child_slots(fd[0]);
	CHILD_CHECK(ret == -ENOMEM, "slots at the limit: %s, want ENOMEM", strerror(-ret));
	raise(SIGSTOP);		/* the parent reads the peak */
	for (i = 0, round = 0; i < made; i++) {
		child_stats(fd[i], &st);
		round += st.accepted;
		close(fd[i]);
	}
	CHILD_CHECK(round > 0, "no task was accepted");
	/* With the memory given back, the same slots fit. */
	fd[0] = child_open();
	CHILD_OK("create with room", td_create_small(fd[0], 0));
	ret = child_slots(fd[0]);
	CHILD_CHECK(!ret, "slots with room: %s", strerror(-ret));
	close(fd[0]);
	return 0;
}

/* Wait for the child to stop itself (true) or end (false). */
static bool td_child_stopped(struct __test_metadata *_metadata, pid_t pid, int *status)
{
	EXPECT_EQ(pid, waitpid(pid, status, WUNTRACED));
	return WIFSTOPPED(*status);
}

TEST_F_TIMEOUT(limits, a_flood_from_a_memory_cgroup_gets_enomem_and_gives_it_back, 300)
{
	unsigned long long base = 0, peak, now = 0, oom_before = vm_oom_kills();
	char max[32];
	int status, i;
	pid_t pid;

	if (access(CGROOT "/cgroup.controllers", F_OK))
		SKIP(return, "no cgroup2 at %s", CGROOT);
	if (td_write_file(CGROOT "/cgroup.subtree_control", "+memory"))
		SKIP(return, "no memory controller");
	rmdir(CG);
	ASSERT_EQ(0, mkdir(CG, 0755));
	snprintf(max, sizeof(max), "%d", CG_MAX);
	ASSERT_EQ(0, td_write_file(CG "/memory.max", max));
	/* Enough dispatchers for the group's memory to run out first. */
	td_set_limit(_metadata, "max_user_dispatchers", FLOOD_FILES);
	td_set_limit(_metadata, "max_user_observers", FLOOD_FILES);

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		child_step = 0;
		_exit(td_memcg_flood(NULL));
	}
	ASSERT_TRUE(td_child_stopped(_metadata, pid, &status)) goto reap;
	base = cg_read("memory.current");
	kill(pid, SIGCONT);
	ASSERT_TRUE(td_child_stopped(_metadata, pid, &status)) goto reap;
	peak = cg_read("memory.current");
	EXPECT_LT(base + CG_MAX / 2, peak) TH_LOG("only %llu bytes were charged to the group",
						  peak - base);
	kill(pid, SIGCONT);
reap:
	if (WIFSTOPPED(status)) {
		kill(pid, SIGCONT);
		waitpid(pid, &status, 0);
	}
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d", WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child check %d failed, see above",
						 WEXITSTATUS(status));
	EXPECT_EQ(oom_before, vm_oom_kills()) TH_LOG("the OOM killer ran");
	EXPECT_EQ(0, cg_key(CG "/memory.events", "oom_kill")) TH_LOG("the group saw an OOM kill");
	/* Freed at close; the per-CPU charge caches are the slack. */
	for (i = 0; i < 1000; i++) {
		now = cg_read("memory.current");
		if (now <= base + CG_SLACK)
			break;
		usleep(10000);
	}
	EXPECT_GE(base + CG_SLACK, now)
		TH_LOG("memory.current %llu after close, %llu before", now, base);
	EXPECT_EQ(0, rmdir(CG)) TH_LOG("rmdir %s: %s", CG, strerror(errno));
}

TEST_HARNESS_MAIN
