// SPDX-License-Identifier: GPL-2.0
/*
 * Messages, the device and its descriptor, the versions of the module
 * and the helpers every command uses.
 */
#include "tdctl.h"

const char *dev_path = "/dev/" TDISPATCH_DEV_NAME;
/* -n NAME, before the command or among its options: a named dispatcher. */
const char *target;

const char * const result_names[TDISPATCH_RESULT_PERMANENT + 1] = {
	[TDISPATCH_RESULT_SUCCESS]	= "success",
	[TDISPATCH_RESULT_CONGESTION]	= "congestion",
	[TDISPATCH_RESULT_TRANSIENT]	= "transient",
	[TDISPATCH_RESULT_PERMANENT]	= "permanent",
};

const char * const outcome_names[TDISPATCH_OUTCOME_EXHAUSTED + 1] = {
	[TDISPATCH_OUTCOME_DONE]	= "done",
	[TDISPATCH_OUTCOME_FAILED]	= "failed",
	[TDISPATCH_OUTCOME_OVERRIDDEN]	= "overridden",
	[TDISPATCH_OUTCOME_EXPIRED]	= "expired",
	[TDISPATCH_OUTCOME_DROPPED]	= "dropped",
	[TDISPATCH_OUTCOME_CANCELLED]	= "cancelled",
	[TDISPATCH_OUTCOME_EXHAUSTED]	= "exhausted",
};

const char * const state_names[TDISPATCH_STATE_DELAYED + 1] = {
	[TDISPATCH_STATE_ABSENT]	= "absent (neither pending nor in flight)",
	[TDISPATCH_STATE_PENDING]	= "pending",
	[TDISPATCH_STATE_IN_FLIGHT]	= "in flight",
	[TDISPATCH_STATE_DELAYED]	= "delayed (waiting for its not-before time)",
};

/* Ends a message of fail(); returns 1, the exit status of a failure. */
int failed(void)
{
	fputc('\n', stderr);
	return 1;
}

/* What an errno most likely means when /dev/tdispatch returns it. */
const char *errno_hint(int err)
{
	switch (err) {
	case ENXIO:
		return " (this file has no dispatcher, or it queues no events)";
	case ENOTTY:
		return " (not /dev/tdispatch)";
	case EINVAL:
		return " (a value is out of range; see 'tdctl help')";
	case ENOBUFS:
		return " (this CPU's input list is full; see --max-input)";
	case ENOSPC:
		return " (the dispatcher holds 16 MiB of payloads already)";
	case ESHUTDOWN:
		return " (the dispatcher is going away)";
	case ENODEV:
		return " (its driver withdrew the named dispatcher)";
	case EBADF:
		return " (the file is attached to a named dispatcher without submit rights)";
	case EOPNOTSUPP:
		return " (a named dispatcher's batches are processed by its driver)";
	default:
		return "";
	}
}

/* ioctl() that reports a failure as "tdctl: WHAT: error (hint)". */
int td_ioctl(int fd, unsigned long req, void *arg, const char *what)
{
	if (!ioctl(fd, req, arg))
		return 0;
	return fail("%s: %s%s", what, strerror(errno), errno_hint(errno));
}

unsigned long long ull(__u64 v)
{
	return v;
}

/* Decimal, or hexadecimal with 0x; nothing else, no sign, no junk. */
int parse_u64(const char *s, __u64 *v)
{
	unsigned long long x;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	x = strtoull(s, &end, s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

__u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

void sleep_ms(__u64 ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * NSEC_PER_MSEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

const char *plural(unsigned long n)
{
	return n == 1 ? "" : "s";
}

const char *retries(unsigned long n)
{
	return n == 1 ? "retry" : "retries";
}

/* The status a shell would report: the exit code, or 128 + signal. */
int wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fail("waitpid: %s", strerror(errno));
			return 127;
		}
	}
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

int open_dev(void)
{
	int fd = open(dev_path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		fail("%s: %s (is tdispatch.ko loaded?)", dev_path, strerror(errno));
	return fd;
}

/* The dispatcher's file, inherited from "tdctl create" through FD_ENV. */
int env_fd(void)
{
	const char *s = getenv(FD_ENV);
	__u64 fd;

	if (!s) {
		fail("%s is not set: run this command from the one 'tdctl create -- CMD' runs\n"
		     "       (try 'tdctl help create')", FD_ENV);
		return -1;
	}
	if (parse_u64(s, &fd) || fd > INT_MAX || fcntl(fd, F_GETFD) < 0) {
		fail("%s=%s is not an open file descriptor", FD_ENV, s);
		return -1;
	}
	return fd;
}

/*
 * libtdispatch's handle on @fd, which asked the module its version once:
 * tdctl works on one file per process.  @what: the call to name when the
 * module does not answer (NULL: quietly).  The handle never closes @fd.
 */
struct tdl *td_lib(int fd, const char *what)
{
	static struct tdl t = { .fd = -1 };
	int ret;

	if (fd < 0)
		return NULL;
	if (t.fd == fd)
		return &t;
	ret = tdl_adopt(&t, fd);
	if (ret) {
		if (what)
			fail("%s: %s%s", what, strerror(-ret), errno_hint(-ret));
		return NULL;
	}
	/* A take never needs room for more than the largest max_batch. */
	t.max_batch = BATCH_MAX;
	return &t;
}

/* The counters, in the struct the module knows (libtdispatch sees to it). */
int get_stats(int fd, struct tdispatch_stats_user *s)
{
	struct tdl *t = td_lib(fd, "stats");
	int ret;

	if (!t)
		return 1;
	ret = tdl_stats(t, s);
	if (ret)
		return fail("stats: %s%s", strerror(-ret), errno_hint(-ret));
	return 0;
}

int lookup(const char * const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

const char *name_of(const char * const *names, size_t n, __u32 i)
{
	return i < n && names[i] ? names[i] : "unknown";
}
