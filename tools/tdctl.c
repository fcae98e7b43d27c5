// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl: command-line front end to /dev/tdispatch.
 *
 * Built against uapi/ only, so it runs on any kernel that has the module.
 *
 * A dispatcher belongs to the open file that created it, so "tdctl create"
 * opens the device, creates one and runs a command that inherits the file;
 * every other command finds that file through TDISPATCH_FD.  A driver's
 * named dispatcher is reached instead with -n NAME: the command opens the
 * device and attaches to it, with the rights the driver grants this user.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/wait.h>

#include <linux/tdispatch.h>

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_MSEC		1000000ULL
#define MS_MAX			(UINT64_MAX / NSEC_PER_MSEC)

#define FD_ENV			"TDISPATCH_FD"
/* The largest max_batch a dispatcher may have: a take never needs more. */
#define BATCH_MAX		1024U
#define EVENTS_PER_READ		64
#define MAX_OPTS		16
/* Events an attachment to a named dispatcher queues unless --queue says. */
#define NAMED_QUEUE		4096
/* Delayed tasks a dispatcher of "tdctl create" holds unless --max-delayed says. */
#define DEFAULT_MAX_DELAYED	65536
#define MAX_DELAYED		1048576
/* Periodic tasks: period and timeout from 1 ms to a day; backoff bound. */
#define PERIODIC_MAX_MS		86400000ULL
#define PERIODIC_MAX_BACKOFF	1024

/* Exit statuses. */
#define EXIT_USAGE		2

static const char *dev_path = "/dev/" TDISPATCH_DEV_NAME;
/* -n NAME, before the command or among its options: a named dispatcher. */
static const char *target;

static const char * const result_names[] = {
	[TDISPATCH_RESULT_SUCCESS]	= "success",
	[TDISPATCH_RESULT_CONGESTION]	= "congestion",
	[TDISPATCH_RESULT_TRANSIENT]	= "transient",
	[TDISPATCH_RESULT_PERMANENT]	= "permanent",
};

static const char * const outcome_names[] = {
	[TDISPATCH_OUTCOME_DONE]	= "done",
	[TDISPATCH_OUTCOME_FAILED]	= "failed",
	[TDISPATCH_OUTCOME_OVERRIDDEN]	= "overridden",
	[TDISPATCH_OUTCOME_EXPIRED]	= "expired",
	[TDISPATCH_OUTCOME_DROPPED]	= "dropped",
	[TDISPATCH_OUTCOME_CANCELLED]	= "cancelled",
	[TDISPATCH_OUTCOME_EXHAUSTED]	= "exhausted",
};

static const char * const state_names[] = {
	[TDISPATCH_STATE_ABSENT]	= "absent (neither pending nor in flight)",
	[TDISPATCH_STATE_PENDING]	= "pending",
	[TDISPATCH_STATE_IN_FLIGHT]	= "in flight",
	[TDISPATCH_STATE_DELAYED]	= "delayed (waiting for its not-before time)",
};

/* The feature bits, as "tdctl version" names them. */
static const char * const feature_names[] = {
	"user", "named", "delayed", "periodic", "lifecycle",
};

/*
 * The counters of struct tdispatch_stats_user, in the order shown; those
 * beyond the size the kernel reports (an older module) are not.
 */
struct counter {
	const char *name;
	size_t off;
	bool gauge;		/* a level, not a running total */
};

#define COUNTER(f, g)	{ #f, offsetof(struct tdispatch_stats_user, f), g }

static const struct counter counters[] = {
	COUNTER(accepted, false),
	COUNTER(rejected, false),
	COUNTER(queued, true),
	COUNTER(delayed, true),
	COUNTER(pending, true),
	COUNTER(in_flight, true),
	COUNTER(done, false),
	COUNTER(failed, false),
	COUNTER(overridden, false),
	COUNTER(expired, false),
	COUNTER(dropped, false),
	COUNTER(cancelled, false),
	COUNTER(batches, false),
	COUNTER(retries, false),
	COUNTER(holdoffs, false),
	COUNTER(redelivered, false),
	COUNTER(rejected_calls, false),
	COUNTER(events_lost, false),
	COUNTER(periodic_runs, false),
	COUNTER(exhausted, false),
	COUNTER(released, false),
	COUNTER(key_releases, false),
	COUNTER(throttled_ns, false),
	COUNTER(rate, true),
	COUNTER(burst, true),
};

/* ---- messages and small helpers ---- */

/* Ends a message of fail(); returns 1, the exit status of a failure. */
static int failed(void)
{
	fputc('\n', stderr);
	return 1;
}

/* Print "tdctl: MESSAGE" on stderr, checked like printf; evaluates to 1. */
#define fail(...)	(fprintf(stderr, "tdctl: " __VA_ARGS__), failed())

/* What an errno most likely means when /dev/tdispatch returns it. */
static const char *errno_hint(int err)
{
	switch (err) {
	case ENXIO:
		return " (this file has no dispatcher, or it queues no events)";
	case ENOTTY:
		return " (not /dev/tdispatch, or a module without userspace dispatchers)";
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
static int td_ioctl(int fd, unsigned long req, void *arg, const char *what)
{
	if (!ioctl(fd, req, arg))
		return 0;
	return fail("%s: %s%s", what, strerror(errno), errno_hint(errno));
}

static unsigned long long ull(__u64 v)
{
	return v;
}

/* Decimal, or hexadecimal with 0x; nothing else, no sign, no junk. */
static int parse_u64(const char *s, __u64 *v)
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

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void sleep_ms(__u64 ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * NSEC_PER_MSEC };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const char *plural(unsigned long n)
{
	return n == 1 ? "" : "s";
}

static const char *retries(unsigned long n)
{
	return n == 1 ? "retry" : "retries";
}

/* The status a shell would report: the exit code, or 128 + signal. */
static int wait_child(pid_t pid)
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

/* ---- the device and the descriptor ---- */

static int open_dev(void)
{
	int fd = open(dev_path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		fail("%s: %s (is tdispatch.ko loaded?)", dev_path, strerror(errno));
	return fd;
}

static unsigned long ioc_ver0(unsigned long req, __u32 size);

/* VERSION, quietly: 0 or -1 with errno. */
static int query_version(int fd, struct tdispatch_version *v)
{
	*v = (struct tdispatch_version) { .size = sizeof(*v) };
	if (!ioctl(fd, TDISPATCH_IOC_VERSION, v))
		return 0;
	if (errno != ENOTTY)
		return -1;
	/* A module older than module_version knows only the first number. */
	v->size = TDISPATCH_VERSION_SIZE_VER0;
	return ioctl(fd, ioc_ver0(TDISPATCH_IOC_VERSION, v->size), v);
}

static int get_version(int fd, struct tdispatch_version *v)
{
	if (!query_version(fd, v))
		return 0;
	return td_ioctl(fd, TDISPATCH_IOC_VERSION, v, "version");
}

/* The dispatcher's file, inherited from "tdctl create" through FD_ENV. */
static int env_fd(void)
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
 * Whether the module predates delayed tasks.  Ioctl numbers carry the size
 * of their struct, and those of CREATE, SUBMIT and STATS grew with delayed
 * tasks: such a module answers only to the numbers of their first version,
 * ioc_ver0(), with the first version's struct.  Asked once per process:
 * tdctl talks to one module.
 */
static bool ver0_module(int fd)
{
	static int ver0 = -1;
	struct tdispatch_version v;

	/* If VERSION fails, the call itself will say what is wrong. */
	if (ver0 < 0)
		ver0 = !query_version(fd, &v) && !(v.features & TDISPATCH_FEAT_DELAYED);
	return ver0;
}

/* Ioctl @req as numbered for a struct of @size bytes. */
static unsigned long ioc_ver0(unsigned long req, __u32 size)
{
	return (req & ~((unsigned long)_IOC_SIZEMASK << _IOC_SIZESHIFT)) |
	       (unsigned long)size << _IOC_SIZESHIFT;
}

static int get_stats(int fd, struct tdispatch_stats_user *s)
{
	*s = (struct tdispatch_stats_user) { .size = sizeof(*s) };
	if (ver0_module(fd)) {
		s->size = TDISPATCH_STATS_SIZE_VER0;
		return td_ioctl(fd, ioc_ver0(TDISPATCH_IOC_STATS, s->size), s, "stats");
	}
	return td_ioctl(fd, TDISPATCH_IOC_STATS, s, "stats");
}

static __u64 counter_value(const struct tdispatch_stats_user *s, const struct counter *c)
{
	return *(const __u64 *)((const char *)s + c->off);
}

/* Whether the kernel filled in this counter: it reports the size it knows. */
static bool counter_known(const struct tdispatch_stats_user *s, const struct counter *c)
{
	return c->off + sizeof(__u64) <= s->size;
}

/* ---- options ---- */

enum opt_kind { OPT_FLAG, OPT_STR, OPT_NUM };

/* One --option of a command; @dst is a bool, a const char * or a __u64. */
struct opt {
	const char *name;
	enum opt_kind kind;
	void *dst;
	__u64 min, max;
	char letter;		/* a short option too, or 0 */
};

#define FLAG_OPT(name, dst)		{ name, OPT_FLAG, dst, 0, 0, 0 }
#define STR_OPT(name, dst)		{ name, OPT_STR, dst, 0, 0, 0 }
#define NUM_OPT(name, dst, min, max)	{ name, OPT_NUM, dst, min, max, 0 }
/* -n NAME, --name NAME: the named dispatcher to attach to. */
#define NAMED_OPT			{ "name", OPT_STR, &target, 0, 0, 'n' }
#define END_OPT				{ NULL, 0, NULL, 0, 0, 0 }

static void cmd_usage(const char *name, FILE *out, bool full);
static int parse_opts_among(int argc, char **argv, const struct opt *opts, char **operands);

static void usage_exit(const char *name)
{
	cmd_usage(name, stderr, false);
	exit(EXIT_USAGE);
}

static int set_opt(const struct opt *o, const char *arg)
{
	__u64 v;

	if (o->kind == OPT_FLAG) {
		*(bool *)o->dst = true;
		return 0;
	}
	if (o->kind == OPT_STR) {
		*(const char **)o->dst = arg;
		return 0;
	}
	if (parse_u64(arg, &v) || v < o->min || v > o->max) {
		if (o->max == UINT64_MAX || o->max == MS_MAX)
			return fail("--%s: '%s' is not a number", o->name, arg);
		return fail("--%s: '%s' is not a number from %llu to %llu",
			    o->name, arg, ull(o->min), ull(o->max));
	}
	*(__u64 *)o->dst = v;
	return 0;
}

/*
 * Parse the options of command argv[0] up to its first operand ("--"
 * ends them too); --help prints the command's help.  Returns the index
 * of the first operand; exits on a usage error.
 */
static int parse_opts(int argc, char **argv, const struct opt *opts)
{
	return parse_opts_among(argc, argv, opts, NULL);
}

/*
 * The same, with options before and after the operands: with @operands,
 * the operands, up to "--" and all after it, are gathered there in order
 * (room for argc) and their number returned.
 */
static int parse_opts_among(int argc, char **argv, const struct opt *opts, char **operands)
{
	struct option lo[MAX_OPTS + 2];
	char shorts[2 * MAX_OPTS + 3] = "+h";
	int n, c, k, len = 2, nr = 0;

	for (n = 0; opts[n].name && n < MAX_OPTS; n++) {
		lo[n] = (struct option) {
			.name = opts[n].name,
			.has_arg = opts[n].kind == OPT_FLAG ? no_argument : required_argument,
			.val = 256 + n,
		};
		if (opts[n].letter) {
			shorts[len++] = opts[n].letter;
			if (opts[n].kind != OPT_FLAG)
				shorts[len++] = ':';
		}
	}
	shorts[len] = '\0';
	lo[n++] = (struct option) { .name = "help", .val = 'h' };
	lo[n] = (struct option) { 0 };

	/* "-": getopt_long() returns each operand as the argument of option 1. */
	if (operands)
		shorts[0] = '-';
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (c == 1 && operands) {
			operands[nr++] = optarg;
			continue;
		}
		if (c == 'h') {
			cmd_usage(argv[0], stdout, true);
			exit(0);
		}
		for (k = 0; c < 256 && c != '?' && opts[k].name; k++)
			if (opts[k].letter == c)
				c = 256 + k;
		if (c < 256 || set_opt(&opts[c - 256], optarg))
			usage_exit(argv[0]);
	}
	if (!operands)
		return optind;
	while (optind < argc)
		operands[nr++] = argv[optind++];
	return nr;
}

static const struct opt no_opts[] = { END_OPT };

/* Exit with a usage error unless there are @min to @max operands. */
static void want_operands(int argc, char **argv, int first, int min, int max)
{
	if (argc - first < min || argc - first > max)
		usage_exit(argv[0]);
}

/* Options only, no operands. */
static void parse_opts_only(int argc, char **argv, const struct opt *opts)
{
	want_operands(argc, argv, parse_opts(argc, argv, opts), 0, 0);
}

static const struct opt named_opts[] = { NAMED_OPT, END_OPT };

/* The single ID operand of cancel and query. */
static __u64 id_operand(int argc, char **argv)
{
	int first = parse_opts(argc, argv, named_opts);
	__u64 id;

	want_operands(argc, argv, first, 1, 1);
	if (parse_u64(argv[first], &id)) {
		fail("%s: '%s' is not a task id (a number, decimal or 0x hex)",
		     argv[0], argv[first]);
		usage_exit(argv[0]);
	}
	return id;
}

/* ---- version, list ---- */

/* " (user, named, ...)": the bits tdctl knows, then any others in hex. */
static void print_features(__u64 features)
{
	const char *sep = " (";
	__u64 unknown = features;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(feature_names); i++) {
		if (!(features & (1ULL << i)))
			continue;
		printf("%s%s", sep, feature_names[i]);
		sep = ", ";
		unknown &= ~(1ULL << i);
	}
	if (unknown)
		printf("%sunknown %#llx", sep, ull(unknown));
	if (features)
		printf(")");
}

static int cmd_version(int argc, char **argv)
{
	struct tdispatch_version v;
	int fd, ret;

	parse_opts_only(argc, argv, no_opts);
	fd = open_dev();
	if (fd < 0)
		return 1;
	ret = get_version(fd, &v);
	close(fd);
	if (ret)
		return ret;
	printf("tdctl_version:  %s\n", TDCTL_VERSION);
	if (v.size >= TDISPATCH_VERSION_SIZE_VER1)
		printf("module_version: %.*s\n", (int)sizeof(v.module_version),
		       v.module_version);
	printf("abi_version: %u\n", v.abi_version);
	printf("features:    %#llx", ull(v.features));
	print_features(v.features);
	printf("\n");
	printf("struct_size: %u\n", v.size);
	return 0;
}

/*
 * The module must have feature @bit (what @what needs); says so if not.
 * @fd is the device or a dispatcher's file: either answers VERSION.
 */
static int need_feature(int fd, __u64 bit, const char *what)
{
	struct tdispatch_version v;

	if (get_version(fd, &v))
		return 1;
	if (!(v.features & bit))
		return fail("the loaded module (ABI %u, features %#llx) has no %s",
			    v.abi_version, ull(v.features), what);
	return 0;
}

/* The module must know named dispatchers; says so if not. */
static int check_named(int fd)
{
	return need_feature(fd, TDISPATCH_FEAT_NAMED, "named dispatchers");
}

/* Every named dispatcher, as this file's opener sees them: malloc()ed. */
static int list_named(int fd, struct tdispatch_entry **out, __u32 *n)
{
	struct tdispatch_entry *e = NULL, *more;
	struct tdispatch_list l;
	__u32 room = 0;

	for (;;) {
		l = (struct tdispatch_list) {
			.size = sizeof(l),
			.entries = (uintptr_t)e,
			.max_entries = room,
		};
		if (td_ioctl(fd, TDISPATCH_IOC_LIST, &l, "list")) {
			free(e);
			return 1;
		}
		if (l.count <= room)
			break;
		/* More than there was room for, or more since: again. */
		room = l.count + 8;
		more = realloc(e, room * sizeof(*e));
		if (!more) {
			free(e);
			return fail("list: %s", strerror(ENOMEM));
		}
		e = more;
	}
	*out = e;
	*n = l.count;
	return 0;
}

static bool may_submit(const struct tdispatch_entry *e)
{
	return (e->flags & TDISPATCH_ENTRY_SUBMIT) && (e->flags & TDISPATCH_ENTRY_MAY_WRITE);
}

static const char *may_do(const struct tdispatch_entry *e)
{
	if (!(e->flags & TDISPATCH_ENTRY_MAY_READ))
		return "nothing";
	return may_submit(e) ? "read, submit" : "read";
}

/* A name as the driver gave it, for a terminal: control bytes as '?'. */
static void print_name(const char *name, int width)
{
	int i;

	for (i = 0; i < TDISPATCH_NAME_LEN && name[i]; i++)
		putchar((unsigned char)name[i] < 0x20 || name[i] == 0x7f ? '?' : name[i]);
	for (; i < width; i++)
		putchar(' ');
}

static void print_json_string(const char *s, size_t max)
{
	size_t i;

	putchar('"');
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_list_json(const struct tdispatch_entry *e, __u32 n)
{
	__u32 i;

	printf("[");
	for (i = 0; i < n; i++) {
		printf("%s{\"name\":", i ? "," : "");
		print_json_string(e[i].name, sizeof(e[i].name));
		printf(",\"uid\":%u,\"gid\":%u,\"mode\":\"%04o\",\"submit\":%s,", e[i].uid,
		       e[i].gid, e[i].mode, e[i].flags & TDISPATCH_ENTRY_SUBMIT ? "true" : "false");
		printf("\"may_read\":%s,\"may_submit\":%s}",
		       e[i].flags & TDISPATCH_ENTRY_MAY_READ ? "true" : "false",
		       may_submit(&e[i]) ? "true" : "false");
	}
	printf("]\n");
}

static void print_list_text(const struct tdispatch_entry *e, __u32 n)
{
	char owner[24];
	__u32 i;

	if (!n) {
		printf("no named dispatchers: no driver has published one\n");
		return;
	}
	printf("%-24s %-13s %-5s %-7s %s\n", "NAME", "OWNER", "MODE", "SUBMIT", "YOU MAY");
	for (i = 0; i < n; i++) {
		snprintf(owner, sizeof(owner), "%u:%u", e[i].uid, e[i].gid);
		print_name(e[i].name, 24);
		printf(" %-13s %04o  %-7s %s\n", owner, e[i].mode,
		       e[i].flags & TDISPATCH_ENTRY_SUBMIT ? "yes" : "no", may_do(&e[i]));
	}
}

static int cmd_list(int argc, char **argv)
{
	bool json = false;
	const struct opt opts[] = {
		FLAG_OPT("json", &json),
		END_OPT,
	};
	struct tdispatch_entry *e;
	__u32 n;
	int fd, ret;

	parse_opts_only(argc, argv, opts);
	fd = open_dev();
	if (fd < 0)
		return 1;
	ret = check_named(fd) || list_named(fd, &e, &n);
	close(fd);
	if (ret)
		return 1;
	if (json)
		print_list_json(e, n);
	else
		print_list_text(e, n);
	free(e);
	return 0;
}

/* ---- reaching a dispatcher: TDISPATCH_FD or -n NAME ---- */

/* Whom @mode grants @bit (4 read, 2 write), in words, into @buf. */
static const char *grantees(char *buf, size_t len, const struct tdispatch_entry *e,
			    unsigned int bit)
{
	bool u = e->mode & (bit << 6), g = e->mode & (bit << 3), o = e->mode & bit;
	size_t at = 0;

	if (u && g && o)
		return "everyone";
	if (!u && !g && !o)
		return "no one";
	buf[0] = '\0';
	if (u)
		at += snprintf(buf + at, len - at, "its owner (uid %u)", e->uid);
	if (g && at < len)
		at += snprintf(buf + at, len - at, "%sgroup %u", at ? " and " : "", e->gid);
	if (o && at < len)
		snprintf(buf + at, len - at, "%severyone else", at ? " and " : "");
	return buf;
}

/* Why ATTACH of @name failed with EACCES, from what LIST on @fd says. */
static void explain_denied(int fd, const char *name, bool submit)
{
	struct tdispatch_entry *e, *it = NULL;
	char r[96], w[96];
	__u32 n, i;

	if (list_named(fd, &e, &n)) {
		fail("attach %s: %s", name, strerror(EACCES));
		return;
	}
	for (i = 0; i < n && !it; i++)
		if (!strncmp(e[i].name, name, sizeof(e[i].name)))
			it = &e[i];
	if (!it) {
		fail("attach %s: %s", name, strerror(EACCES));
	} else {
		fprintf(stderr, "tdctl: attach %s: %s (the driver grants read to %s", name,
			strerror(EACCES), grantees(r, sizeof(r), it, 4));
		if (it->flags & TDISPATCH_ENTRY_SUBMIT)
			fprintf(stderr, " and submit to %s", grantees(w, sizeof(w), it, 2));
		else if (submit)
			fprintf(stderr, " and takes no tasks from userspace");
		fprintf(stderr, ": owner %u:%u, mode %04o; you are uid %u, gid %u)", it->uid,
			it->gid, it->mode, (unsigned int)geteuid(), (unsigned int)getegid());
		if (submit && (it->flags & TDISPATCH_ENTRY_MAY_READ))
			fprintf(stderr, ";\ntdctl: you may read it: stats, watch, events, query");
		failed();
	}
	free(e);
}

/*
 * Open the device and attach to the dispatcher @name with @flags
 * (TDISPATCH_ATTACH_*) and @queue events: the descriptor, or -1 after
 * saying why not.
 */
static int attach_named(const char *name, __u32 flags, __u32 queue)
{
	struct tdispatch_attach a = {
		.size = sizeof(a),
		.flags = flags,
		.event_queue = queue,
	};
	int fd, err;

	if (strlen(name) >= sizeof(a.name)) {
		fail("attach %s: no dispatcher has a name that long (at most %zu bytes)",
		     name, sizeof(a.name) - 1);
		return -1;
	}
	memcpy(a.name, name, strlen(name));
	fd = open_dev();
	if (fd < 0)
		return -1;
	if (check_named(fd)) {
		close(fd);
		return -1;
	}
	if (!ioctl(fd, TDISPATCH_IOC_ATTACH, &a))
		return fd;
	err = errno;
	if (err == EACCES)
		explain_denied(fd, name, flags & TDISPATCH_ATTACH_SUBMIT);
	else if (err == ENOENT)
		fail("attach %s: no dispatcher of that name ('tdctl list' shows them)", name);
	else if (err == EOPNOTSUPP)
		fail("attach %s: its driver takes no tasks from userspace; you may read it:\n"
		     "       stats, watch, events, query", name);
	else
		fail("attach %s: %s%s", name, strerror(err), errno_hint(err));
	close(fd);
	return -1;
}

/* The file of -n NAME, attached with @flags, or the one in TDISPATCH_FD. */
static int dispatcher_fd(__u32 flags, __u32 queue)
{
	return target ? attach_named(target, flags, queue) : env_fd();
}

/* ---- create ---- */

/* In the child: keep the file open across exec, say where it is, run. */
static void exec_with_fd(int fd, char **cmdv)
{
	char *sh = getenv("SHELL");
	char *shell[2] = { NULL, NULL };
	char num[16];

	snprintf(num, sizeof(num), "%d", fd);
	if (fcntl(fd, F_SETFD, 0) || setenv(FD_ENV, num, 1)) {
		fail("create: %s", strerror(errno));
		_exit(126);
	}
	if (!cmdv[0]) {
		shell[0] = sh && *sh ? sh : "/bin/sh";
		cmdv = shell;
	}
	execvp(cmdv[0], cmdv);
	fail("%s: %s", cmdv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Run @cmdv with the dispatcher's file; the child's exit is ours. */
static int run_with_fd(int fd, char **cmdv)
{
	pid_t pid = fork();

	if (pid < 0) {
		close(fd);
		return fail("fork: %s", strerror(errno));
	}
	if (!pid)
		exec_with_fd(fd, cmdv);
	/* The dispatcher lives as long as the child and what it starts. */
	close(fd);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	return wait_child(pid);
}

static int cmd_create(int argc, char **argv)
{
	const char *name = "tdctl";
	__u64 max_buffer = 4096, max_batch = 0, max_delay = 100, workers = 4;
	__u64 lease = 30000, events = 0, max_input = 4096;
	__u64 congestion = 1000, transient = 100;
	__u64 max_delayed = UINT64_MAX;		/* not given */
	__u64 max_attempts = 0, rate = 0, burst = 0;
	const struct opt opts[] = {
		STR_OPT("name", &name),
		NUM_OPT("max-buffer", &max_buffer, 1, 65536),
		NUM_OPT("max-batch", &max_batch, 1, BATCH_MAX),
		NUM_OPT("max-delay-ms", &max_delay, 0, 30000),
		NUM_OPT("workers", &workers, 1, 64),
		NUM_OPT("lease-ms", &lease, 1, 3600000),
		NUM_OPT("events", &events, 1, 65536),
		NUM_OPT("max-input", &max_input, 1, 65536),
		NUM_OPT("congestion-delay-ms", &congestion, 0, 30000),
		NUM_OPT("transient-delay-ms", &transient, 0, 30000),
		NUM_OPT("max-delayed", &max_delayed, 0, MAX_DELAYED),
		NUM_OPT("max-attempts", &max_attempts, 0, 65535),
		NUM_OPT("rate", &rate, 0, UINT32_MAX),
		NUM_OPT("burst", &burst, 0, 65536),
		END_OPT,
	};
	int first = parse_opts(argc, argv, opts);
	struct tdispatch_create c = { .size = sizeof(c) };
	bool ver0;
	int fd;

	if (strlen(name) >= sizeof(c.name))
		return fail("create: --name: at most %zu bytes", sizeof(c.name) - 1);
	if (!max_batch)
		max_batch = max_buffer < 64 ? max_buffer : 64;
	if (max_batch > max_buffer)
		return fail("create: --max-batch %llu is more than --max-buffer %llu",
			    ull(max_batch), ull(max_buffer));
	memcpy(c.name, name, strlen(name));
	c.flags = events ? TDISPATCH_CREATE_EVENTS : 0;
	c.max_buffer = max_buffer;
	c.max_batch = max_batch;
	c.workers = workers;
	c.max_input = max_input;
	c.max_delay_ns = max_delay * NSEC_PER_MSEC;
	c.congestion_delay_ns = congestion * NSEC_PER_MSEC;
	c.transient_delay_ns = transient * NSEC_PER_MSEC;
	c.lease_ns = lease * NSEC_PER_MSEC;
	c.event_queue = events;
	c.max_attempts = max_attempts;
	c.rate = rate;
	c.burst = burst;

	fd = open_dev();
	if (fd < 0)
		return 1;
	if (need_feature(fd, TDISPATCH_FEAT_USER, "userspace dispatchers"))
		goto fail;
	/* A module without delayed tasks takes the first version of the struct. */
	ver0 = ver0_module(fd);
	if (ver0 && max_delayed != UINT64_MAX && max_delayed) {
		need_feature(fd, TDISPATCH_FEAT_DELAYED, "delayed tasks (--max-delayed)");
		goto fail;
	}
	if ((max_attempts || rate || burst) &&
	    need_feature(fd, TDISPATCH_FEAT_LIFECYCLE, "--max-attempts, --rate, --burst"))
		goto fail;
	if (ver0)
		c.size = TDISPATCH_CREATE_SIZE_VER0;
	else
		c.max_delayed = max_delayed == UINT64_MAX ? DEFAULT_MAX_DELAYED : max_delayed;
	if (td_ioctl(fd, ver0 ? ioc_ver0(TDISPATCH_IOC_CREATE, c.size) : TDISPATCH_IOC_CREATE,
		     &c, "create"))
		goto fail;
	if (first == argc)
		fprintf(stderr, "tdctl: dispatcher \"%s\" is on descriptor %d (%s) of this shell;\n"
			"tdctl: it goes away when the shell and all it started have exited\n",
			name, fd, FD_ENV);
	return run_with_fd(fd, argv + first);

fail:
	close(fd);
	return 1;
}

/* ---- submit ---- */

/* Tasks gathered for one TDISPATCH_IOC_SUBMIT call. */
struct submission {
	int fd;
	__u64 deadline_ns;
	__u64 not_before_ns;	/* a delay with TDISPATCH_SUBMIT_RELATIVE */
	__u64 max_attempts;	/* the tasks' own; 0: the dispatcher's */
	__u32 utask_flags;	/* TDISPATCH_UTASK_WATCH with --watch */
	__u64 watch_key;
	__u32 flags;
	bool ver0;		/* a module without delayed tasks: 32-byte tasks */
	const char *unit;	/* what pos[] counts: "task" or "line" */
	unsigned int n;
	struct tdispatch_utask t[TDISPATCH_SUBMIT_MAX];
	unsigned long pos[TDISPATCH_SUBMIT_MAX];	/* argument pair or line */
	char *owned[TDISPATCH_SUBMIT_MAX];		/* freed after the call */
	unsigned long accepted, rejected;
};

static void submit_reset(struct submission *s)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		free(s->owned[i]);
	s->n = 0;
}

static void report_task(const struct submission *s, unsigned int i)
{
	int err = -s->t[i].status;

	if (err == EINVAL)
		fail("submit: %s %lu, id %llu: payload must be 1 to %u bytes",
		     s->unit, s->pos[i], ull(s->t[i].id), TDISPATCH_PAYLOAD_MAX);
	else if (err == ENOSPC && s->not_before_ns && !target)
		fail("submit: %s %lu, id %llu: %s (the dispatcher holds its --max-delayed\n"
		     "       delayed tasks, none if created with --max-delayed 0, or 16 MiB of\n"
		     "       payloads already)", s->unit, s->pos[i], ull(s->t[i].id),
		     strerror(err));
	else if (err == ENOSPC && s->not_before_ns)
		fail("submit: %s %lu, id %llu: %s (the dispatcher holds as many delayed\n"
		     "       tasks as its driver allows, or none at all)", s->unit, s->pos[i],
		     ull(s->t[i].id), strerror(err));
	else
		fail("submit: %s %lu, id %llu: %s%s", s->unit, s->pos[i], ull(s->t[i].id),
		     strerror(err), errno_hint(err));
}

/*
 * SUBMIT for a module that has no delayed tasks (see ver0_module()): the
 * first version of the struct, whose tasks are the first
 * TDISPATCH_UTASK_SIZE_VER0 bytes of ours, packed.
 */
static int submit_ver0(struct submission *s, struct tdispatch_submit *arg)
{
	char *packed = malloc(s->n * TDISPATCH_UTASK_SIZE_VER0);
	unsigned int i;
	int ret;

	if (!packed)
		return fail("submit: %s", strerror(ENOMEM));
	for (i = 0; i < s->n; i++)
		memcpy(packed + i * TDISPATCH_UTASK_SIZE_VER0, &s->t[i],
		       TDISPATCH_UTASK_SIZE_VER0);
	arg->size = TDISPATCH_SUBMIT_SIZE_VER0;
	arg->tasks = (uintptr_t)packed;
	ret = td_ioctl(s->fd, ioc_ver0(TDISPATCH_IOC_SUBMIT, arg->size), arg, "submit");
	for (i = 0; !ret && i < s->n; i++)
		memcpy(&s->t[i].status, packed + i * TDISPATCH_UTASK_SIZE_VER0 +
		       offsetof(struct tdispatch_utask, status), sizeof(s->t[i].status));
	free(packed);
	return ret;
}

static int submit_flush(struct submission *s)
{
	struct tdispatch_submit arg = {
		.size = sizeof(arg),
		.flags = s->flags,
		.tasks = (uintptr_t)s->t,
		.count = s->n,
		.task_size = sizeof(s->t[0]),
	};
	unsigned int i;
	int ret = 0;

	if (!s->n)
		return 0;
	if (s->ver0)
		ret = submit_ver0(s, &arg);
	else
		ret = td_ioctl(s->fd, TDISPATCH_IOC_SUBMIT, &arg, "submit");
	if (!ret) {
		for (i = 0; i < s->n; i++)
			if (s->t[i].status)
				report_task(s, i);
		s->accepted += arg.accepted;
		s->rejected += s->n - arg.accepted;
	}
	submit_reset(s);
	return ret;
}

/* Queue one task; @owned, if not NULL, holds @payload until it is sent. */
static int submit_add(struct submission *s, unsigned long pos, const char *id,
		      const char *payload, char *owned)
{
	struct tdispatch_utask *t = &s->t[s->n];

	if (parse_u64(id, &t->id)) {
		fail("submit: %s %lu: '%s' is not a task id", s->unit, pos, id);
		s->rejected++;
		free(owned);
		return 0;
	}
	t->payload = (uintptr_t)payload;
	t->payload_len = strlen(payload);
	t->status = 0;
	t->deadline_ns = s->deadline_ns;
	t->not_before_ns = s->not_before_ns;
	t->max_attempts = s->max_attempts;
	t->flags = s->utask_flags;
	t->watch_key = s->watch_key;
	s->pos[s->n] = pos;
	s->owned[s->n] = owned;
	if (++s->n < TDISPATCH_SUBMIT_MAX)
		return 0;
	return submit_flush(s);
}

/* "ID PAYLOAD" lines: the payload is the rest of the line after blanks. */
static int submit_lines(struct submission *s, FILE *in)
{
	unsigned long line = 0;
	char *buf = NULL, *p;
	size_t size = 0;
	ssize_t len;

	while ((len = getline(&buf, &size, in)) >= 0) {
		line++;
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (!len)
			continue;
		p = buf + strcspn(buf, " \t");
		if (*p)
			*p++ = '\0';
		p += strspn(p, " \t");
		if (submit_add(s, line, buf, p, buf))
			return 1;
		buf = NULL;
		size = 0;
	}
	free(buf);
	if (ferror(in))
		return fail("submit: reading stdin: %s", strerror(errno));
	return 0;
}

static int submit_args(struct submission *s, int argc, char **argv)
{
	int i;

	for (i = 0; i + 1 < argc; i += 2)
		if (submit_add(s, i / 2 + 1, argv[i], argv[i + 1], NULL))
			return 1;
	return 0;
}

static int cmd_submit(int argc, char **argv)
{
	/* Not given: UINT64_MAX is more than --delay-ms takes; --at-ns 0 is "now". */
	__u64 deadline_ms = 0, delay_ms = UINT64_MAX, at_ns = 0, max_attempts = 0, key = 0;
	const char *watch = NULL;
	const struct opt opts[] = {
		NUM_OPT("deadline-ms", &deadline_ms, 0, MS_MAX),
		NUM_OPT("delay-ms", &delay_ms, 0, MS_MAX),
		NUM_OPT("at-ns", &at_ns, 0, UINT64_MAX),
		NUM_OPT("max-attempts", &max_attempts, 0, 65535),
		STR_OPT("watch", &watch),
		NAMED_OPT,
		END_OPT,
	};
	int first = parse_opts(argc, argv, opts);
	bool from_stdin = argc - first == 1 && !strcmp(argv[first], "-");
	struct submission *s;
	int ret;

	if (!from_stdin && (first == argc || (argc - first) % 2))
		usage_exit(argv[0]);
	if (delay_ms != UINT64_MAX && at_ns) {
		fail("submit: --delay-ms and --at-ns both say when the tasks may start; give one");
		usage_exit(argv[0]);
	}
	if (watch && (parse_u64(watch, &key) || (delay_ms == UINT64_MAX && !at_ns))) {
		fail("submit: --watch KEY: a number, for delayed tasks (--delay-ms, --at-ns)");
		usage_exit(argv[0]);
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return fail("submit: %s", strerror(errno));
	s->fd = dispatcher_fd(TDISPATCH_ATTACH_SUBMIT, 0);
	if (s->fd < 0) {
		free(s);
		return 1;
	}
	if (delay_ms != UINT64_MAX) {
		s->not_before_ns = delay_ms * NSEC_PER_MSEC;
		s->flags = TDISPATCH_SUBMIT_RELATIVE;
	} else {
		s->not_before_ns = at_ns;
	}
	s->ver0 = ver0_module(s->fd);
	if (s->ver0 && s->not_before_ns) {
		ret = need_feature(s->fd, TDISPATCH_FEAT_DELAYED,
				   "delayed tasks (--delay-ms, --at-ns)");
		free(s);
		return ret;
	}
	if (s->ver0)
		s->flags = 0;	/* --delay-ms 0: at once, which it knows */
	if ((max_attempts || watch) &&
	    need_feature(s->fd, TDISPATCH_FEAT_LIFECYCLE, "--max-attempts and --watch")) {
		free(s);
		return 1;
	}
	s->max_attempts = max_attempts;
	if (watch) {
		s->utask_flags = TDISPATCH_UTASK_WATCH;
		s->watch_key = key;
	}
	if (deadline_ms)
		s->deadline_ns = now_ns() + deadline_ms * NSEC_PER_MSEC;
	s->unit = from_stdin ? "line" : "task";
	if (from_stdin)
		ret = submit_lines(s, stdin);
	else
		ret = submit_args(s, argc - first, argv + first);
	if (!ret)
		ret = submit_flush(s);
	submit_reset(s);
	printf("accepted %lu, rejected %lu\n", s->accepted, s->rejected);
	if (!ret && s->rejected)
		ret = 1;
	free(s);
	return ret;
}

/* ---- work ---- */

struct worker {
	int fd;
	const char *exec;
	__u32 result;
	struct tdispatch_take tk;
	struct tdispatch_ltask *tasks;
	char *buf;
	/* Verdicts of single tasks, from --exec's $TDISPATCH_RESULTS file. */
	struct tdispatch_task_result *verdicts;
	__u32 nr_verdicts;
	unsigned long batches, tasks_seen, lost, own_verdicts;
	unsigned long results[ARRAY_SIZE(result_names)];
};

static int lookup(const char * const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], s))
			return i;
	return -1;
}

/* Take the next batch; 1 when the timeout passed, -1 on an error. */
static int work_take(struct worker *w, __u64 timeout_ms)
{
	w->tk = (struct tdispatch_take) {
		.size = sizeof(w->tk),
		.timeout_ns = timeout_ms * NSEC_PER_MSEC,
		.tasks = (uintptr_t)w->tasks,
		.buf = (uintptr_t)w->buf,
		.max_tasks = BATCH_MAX,
		.buf_len = BATCH_MAX * TDISPATCH_PAYLOAD_MAX,
	};
	if (!ioctl(w->fd, TDISPATCH_IOC_TAKE, &w->tk))
		return 0;
	if (errno == ETIMEDOUT)
		return 1;
	fail("work: take: %s%s", strerror(errno), errno_hint(errno));
	return -1;
}

/* The batch as "ID PAYLOAD" lines. */
static void write_batch(const struct worker *w, FILE *out)
{
	const struct tdispatch_ltask *t;
	__u32 i;

	for (i = 0; i < w->tk.nr; i++) {
		t = &w->tasks[i];
		fprintf(out, "%llu ", ull(t->id));
		fwrite(w->buf + t->payload_off, 1, t->payload_len, out);
		fputc('\n', out);
	}
}

/*
 * A task's own verdict, "ID RESULT": kept if ID is in the batch (the last
 * line for an ID wins), else reported and ignored.
 */
static void add_verdict(struct worker *w, __u64 id, const char *word)
{
	int result = lookup(result_names, ARRAY_SIZE(result_names), word);
	__u32 i, v;

	for (i = 0; i < w->tk.nr && w->tasks[i].id != id; i++)
		;
	if (result < 0 || i == w->tk.nr) {
		fprintf(stderr, "tdctl: work: batch %llu: ignoring verdict '%llu %s'%s\n",
			ull(w->tk.batch), ull(id), word,
			result < 0 ? ": not a result" : ": no such task in the batch");
		return;
	}
	for (v = 0; v < w->nr_verdicts && w->verdicts[v].id != id; v++)
		;
	w->verdicts[v] = (struct tdispatch_task_result) { .id = id, .result = result };
	w->nr_verdicts += v == w->nr_verdicts;
}

/* What the command wrote to $TDISPATCH_RESULTS. */
static void read_verdicts(struct worker *w, FILE *f)
{
	unsigned long long id;
	char word[16];

	rewind(f);
	while (fscanf(f, "%llu %15s", &id, word) == 2)
		add_verdict(w, id, word);
}

/* In the child: the batch on stdin, a few facts in the environment. */
static void exec_batch(const struct worker *w, int in, const char *results)
{
	char num[24];

	signal(SIGPIPE, SIG_DFL);
	if (dup2(in, STDIN_FILENO) < 0)
		_exit(126);
	close(in);
	snprintf(num, sizeof(num), "%llu", ull(w->tk.batch));
	setenv("TDISPATCH_BATCH", num, 1);
	snprintf(num, sizeof(num), "%u", w->tk.nr);
	setenv("TDISPATCH_BATCH_SIZE", num, 1);
	if (results)
		setenv("TDISPATCH_RESULTS", results, 1);
	execl("/bin/sh", "sh", "-c", w->exec, (char *)NULL);
	fail("/bin/sh: %s", strerror(errno));
	_exit(127);
}

/* The command could not be run: retry the batch after a hold-off. */
static __u32 exec_failed(const char *what)
{
	fail("work: %s: %s", what, strerror(errno));
	return TDISPATCH_RESULT_TRANSIENT;
}

/*
 * Run --exec for the batch and turn its exit status into a result; the
 * lines "ID RESULT" it writes to $TDISPATCH_RESULTS give single tasks
 * their own.
 */
static __u32 work_exec(struct worker *w)
{
	char results[] = "/tmp/tdctl-results.XXXXXX";
	FILE *out, *verdicts = NULL;
	pid_t pid;
	int p[2], st, rfd;

	w->nr_verdicts = 0;
	rfd = mkstemp(results);
	if (rfd >= 0) {
		verdicts = fdopen(rfd, "r");
		if (!verdicts)
			close(rfd);
	}
	if (pipe(p)) {
		if (verdicts)
			fclose(verdicts);
		unlink(results);
		return exec_failed("pipe");
	}
	pid = fork();
	if (!pid) {
		close(p[1]);
		exec_batch(w, p[0], verdicts ? results : NULL);
	}
	close(p[0]);
	out = pid < 0 ? NULL : fdopen(p[1], "w");
	if (!out) {
		close(p[1]);
		if (pid < 0)
			return exec_failed("fork");
	} else {
		write_batch(w, out);
		fclose(out);	/* EPIPE if it did not read it all: its call */
	}
	st = wait_child(pid);
	if (verdicts) {
		if (pid > 0)
			read_verdicts(w, verdicts);
		fclose(verdicts);
	}
	unlink(results);
	if (st == 0)
		return TDISPATCH_RESULT_SUCCESS;
	fprintf(stderr, "tdctl: work: batch %llu: command exited with %d\n",
		ull(w->tk.batch), st);
	return st == EX_TEMPFAIL ? TDISPATCH_RESULT_TRANSIENT : TDISPATCH_RESULT_PERMANENT;
}

static int work_complete(struct worker *w, __u32 result)
{
	struct tdispatch_complete c = {
		.size = sizeof(c),
		.batch = w->tk.batch,
		.result = result,
		.results = (uintptr_t)w->verdicts,
		.nr_results = w->nr_verdicts,
	};

	w->batches++;
	w->tasks_seen += w->tk.nr;
	if (!ioctl(w->fd, TDISPATCH_IOC_COMPLETE, &c)) {
		w->results[result]++;
		w->own_verdicts += w->nr_verdicts;
		w->nr_verdicts = 0;
		return 0;
	}
	w->nr_verdicts = 0;
	if (errno != ENOENT)
		return fail("work: complete: %s%s", strerror(errno), errno_hint(errno));
	fail("work: batch %llu: its lease ran out before it was completed, so it is\n"
	     "       delivered again (create the dispatcher with a longer --lease-ms)",
	     ull(w->tk.batch));
	w->lost++;
	return 0;
}

static void work_summary(const struct worker *w)
{
	size_t i;

	fprintf(stderr, "tdctl: work: %lu batch%s, %lu task%s:", w->batches,
		w->batches == 1 ? "" : "es", w->tasks_seen, plural(w->tasks_seen));
	for (i = 0; i < ARRAY_SIZE(result_names); i++)
		fprintf(stderr, " %lu %s,", w->results[i], result_names[i]);
	fprintf(stderr, " %lu lease%s expired, %lu task%s with a verdict of its own\n",
		w->lost, plural(w->lost), w->own_verdicts, plural(w->own_verdicts));
}

static int work_loop(struct worker *w, __u64 count, __u64 timeout_ms)
{
	__u32 result;
	int ret;

	while (!count || w->batches < count) {
		ret = work_take(w, timeout_ms);
		if (ret)
			return ret < 0;
		if (w->exec) {
			result = work_exec(w);
		} else {
			write_batch(w, stdout);
			/* Not shown, not done: exit, and the batch is redelivered. */
			if (fflush(stdout) || ferror(stdout))
				return fail("work: stdout: %s", strerror(errno));
			result = w->result;
		}
		if (work_complete(w, result))
			return 1;
	}
	return 0;
}

static int cmd_work(int argc, char **argv)
{
	const char *result = "success";
	__u64 count = 0, timeout_ms = 0;
	struct worker w = { .exec = NULL };
	const struct opt opts[] = {
		STR_OPT("exec", &w.exec),
		STR_OPT("result", &result),
		NUM_OPT("count", &count, 0, UINT64_MAX),
		NUM_OPT("timeout-ms", &timeout_ms, 0, MS_MAX),
		END_OPT,
	};
	int ret;

	parse_opts_only(argc, argv, opts);
	if (target)
		return fail("work: -n %s: a named dispatcher's batches are processed by its\n"
			    "       driver; only a dispatcher of 'tdctl create' can be worked on",
			    target);
	ret = lookup(result_names, ARRAY_SIZE(result_names), result);
	if (ret < 0) {
		fail("work: --result: '%s' is not success, congestion, transient or permanent",
		     result);
		usage_exit(argv[0]);
	}
	w.result = ret;
	w.fd = env_fd();
	if (w.fd < 0)
		return 1;
	w.tasks = calloc(BATCH_MAX, sizeof(*w.tasks));
	w.verdicts = calloc(BATCH_MAX, sizeof(*w.verdicts));
	w.buf = malloc(BATCH_MAX * TDISPATCH_PAYLOAD_MAX);
	if (!w.tasks || !w.buf || !w.verdicts) {
		ret = fail("work: %s", strerror(ENOMEM));
	} else {
		signal(SIGPIPE, SIG_IGN);
		ret = work_loop(&w, count, timeout_ms);
		work_summary(&w);
	}
	free(w.tasks);
	free(w.verdicts);
	free(w.buf);
	return ret;
}

/* ---- stats, watch ---- */

static void print_stats_json(const struct tdispatch_stats_user *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counters); i++)
		if (counter_known(s, &counters[i]))
			printf("%s\"%s\":%llu", i ? "," : "{", counters[i].name,
			       ull(counter_value(s, &counters[i])));
	printf("}\n");
}

static void print_stats_text(const struct tdispatch_stats_user *s)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(counters); i++)
		if (counter_known(s, &counters[i]))
			printf("%-15s %llu\n", counters[i].name,
			       ull(counter_value(s, &counters[i])));
}

static int cmd_stats(int argc, char **argv)
{
	bool json = false;
	const struct opt opts[] = {
		FLAG_OPT("json", &json),
		NAMED_OPT,
		END_OPT,
	};
	struct tdispatch_stats_user s;
	int fd;

	parse_opts_only(argc, argv, opts);
	fd = dispatcher_fd(0, 0);
	if (fd < 0 || get_stats(fd, &s))
		return 1;
	if (json)
		print_stats_json(&s);
	else
		print_stats_text(&s);
	return 0;
}

/* A full screen, redrawn in place: each counter and its rate. */
static void watch_screen(const struct tdispatch_stats_user *s,
			 const struct tdispatch_stats_user *prev, __u64 interval_ms)
{
	__u64 v, was;
	size_t i;

	printf("\033[H\033[J");
	if (target)
		printf("tdispatch %s, every %llu ms (Ctrl-C stops)\n\n", target, ull(interval_ms));
	else
		printf("tdispatch on %s=%s, every %llu ms (Ctrl-C stops)\n\n",
		       FD_ENV, getenv(FD_ENV), ull(interval_ms));
	printf("%-15s %14s %12s\n", "counter", "value", "per second");
	for (i = 0; i < ARRAY_SIZE(counters); i++) {
		if (!counter_known(s, &counters[i]))
			continue;
		v = counter_value(s, &counters[i]);
		was = counter_value(prev, &counters[i]);
		printf("%-15s %14llu", counters[i].name, ull(v));
		if (!counters[i].gauge)
			printf(" %12.1f", (v - was) * 1000.0 / interval_ms);
		printf("\n");
	}
}

/* One line per sample, for logs and pipes. */
static void watch_line(const struct tdispatch_stats_user *s, __u64 elapsed_ms)
{
	size_t i;

	printf("%llu.%03llu", ull(elapsed_ms / 1000), ull(elapsed_ms % 1000));
	for (i = 0; i < ARRAY_SIZE(counters); i++)
		if (counter_known(s, &counters[i]))
			printf(" %s=%llu", counters[i].name, ull(counter_value(s, &counters[i])));
	printf("\n");
}

static int cmd_watch(int argc, char **argv)
{
	__u64 interval_ms = 1000, count = 0, n, start = now_ns();
	const struct opt opts[] = {
		NUM_OPT("interval-ms", &interval_ms, 1, MS_MAX),
		NUM_OPT("count", &count, 0, UINT64_MAX),
		NAMED_OPT,
		END_OPT,
	};
	struct tdispatch_stats_user s, prev;
	bool tty = isatty(STDOUT_FILENO);
	int fd;

	parse_opts_only(argc, argv, opts);
	fd = dispatcher_fd(0, 0);
	if (fd < 0 || get_stats(fd, &prev))
		return 1;
	for (n = 0; !count || n < count; n++) {
		if (n)
			sleep_ms(interval_ms);
		if (get_stats(fd, &s))
			return 1;
		if (tty)
			watch_screen(&s, &prev, interval_ms);
		else
			watch_line(&s, (now_ns() - start) / NSEC_PER_MSEC);
		fflush(stdout);
		prev = s;
	}
	return 0;
}

/* ---- events ---- */

static const char *name_of(const char * const *names, size_t n, __u32 i)
{
	return i < n && names[i] ? names[i] : "unknown";
}

static void print_event_json(const struct tdispatch_event *e, const char *outcome)
{
	printf("{\"seq\":%llu,", ull(e->seq));
	if (e->type == TDISPATCH_EVENT_LOST) {
		printf("\"type\":\"lost\",\"lost\":%llu}\n", ull(e->lost));
		return;
	}
	printf("\"type\":\"outcome\",\"outcome\":\"%s\",\"id\":%llu,", outcome, ull(e->id));
	printf("\"latency_ns\":%llu,\"attempts\":%u}\n", ull(e->latency_ns), e->attempts);
}

static void print_event(const struct tdispatch_event *e, bool json)
{
	const char *outcome = name_of(outcome_names, ARRAY_SIZE(outcome_names), e->outcome);

	if (json)
		print_event_json(e, outcome);
	else if (e->type == TDISPATCH_EVENT_LOST)
		printf("#%llu-#%llu lost: %llu event%s dropped, the event queue was full\n",
		       ull(e->seq - e->lost + 1), ull(e->seq), ull(e->lost), plural(e->lost));
	else
		printf("#%llu %s id %llu after %.3f ms, %u %s\n", ull(e->seq), outcome,
		       ull(e->id), e->latency_ns / 1e6, e->attempts, retries(e->attempts));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * read() that, unless @wait, fails with EINTR if no event comes within a
 * few ms: O_NONBLOCK cannot be used, as the file's flags are shared with
 * every process that uses it, and read() has no flag of its own.  The
 * timer repeats, so it also ends a read entered after it first fired.
 */
static ssize_t read_events(int fd, struct tdispatch_event *ev, size_t n, bool wait)
{
	struct itimerval on = { .it_interval.tv_usec = 5000, .it_value.tv_usec = 5000 };
	struct itimerval off = { .it_value.tv_usec = 0 };
	ssize_t ret;
	int err;

	if (wait)
		return read(fd, ev, n * sizeof(*ev));
	setitimer(ITIMER_REAL, &on, NULL);
	ret = read(fd, ev, n * sizeof(*ev));
	err = errno;
	setitimer(ITIMER_REAL, &off, NULL);
	errno = err;
	return ret;
}

static int cmd_events(int argc, char **argv)
{
	bool json = false, follow = false;
	__u64 count = 0, queue = NAMED_QUEUE, shown = 0;
	const struct opt opts[] = {
		FLAG_OPT("json", &json),
		FLAG_OPT("follow", &follow),
		NUM_OPT("count", &count, 0, UINT64_MAX),
		NUM_OPT("queue", &queue, 1, 65536),
		NAMED_OPT,
		END_OPT,
	};
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct tdispatch_event ev[EVENTS_PER_READ];
	size_t room;
	ssize_t n, i;
	int fd;

	parse_opts_only(argc, argv, opts);
	fd = dispatcher_fd(TDISPATCH_ATTACH_EVENTS, queue);
	if (fd < 0 || sigaction(SIGALRM, &sa, NULL))
		return 1;
	/* A new attachment has heard nothing yet: wait for what comes. */
	if (target)
		follow = true;
	do {
		room = ARRAY_SIZE(ev);
		if (count && count - shown < room)
			room = count - shown;
		n = read_events(fd, ev, room, follow);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENXIO)
			return fail("events: this dispatcher queues no events (%s)",
				    "create it with --events N");
		if (n < 0 && errno == ENODEV && target)
			return fail("events: the driver withdrew %s", target);
		if (n < 0)
			return fail("events: %s%s", strerror(errno), errno_hint(errno));
		for (i = 0; i < n / (ssize_t)sizeof(ev[0]); i++)
			print_event(&ev[i], json);
		shown += n / sizeof(ev[0]);
		fflush(stdout);
	} while ((follow || n > 0) && (!count || shown < count));
	return 0;
}

/* ---- cancel, query ---- */

static int cmd_cancel(int argc, char **argv)
{
	struct tdispatch_id a = { .size = sizeof(a), .id = id_operand(argc, argv) };
	int fd = dispatcher_fd(TDISPATCH_ATTACH_SUBMIT, 0);

	if (fd < 0)
		return 1;
	if (!ioctl(fd, TDISPATCH_IOC_CANCEL, &a)) {
		printf("cancelled task %llu\n", ull(a.id));
		return 0;
	}
	if (errno == ENOENT)
		return fail("cancel: no task with id %llu is pending or delayed", ull(a.id));
	if (errno == EBUSY)
		return fail("cancel: task %llu is in flight; only a pending task can be cancelled",
			    ull(a.id));
	return fail("cancel: %s%s", strerror(errno), errno_hint(errno));
}

static int cmd_release(int argc, char **argv)
{
	const char *key = NULL;
	const struct opt opts[] = { STR_OPT("key", &key), NAMED_OPT, END_OPT };
	int first = parse_opts(argc, argv, opts);
	struct tdispatch_id a = { .size = sizeof(a) };
	int fd, ret;

	want_operands(argc, argv, first, !key, !key);
	if (parse_u64(key ? key : argv[first], &a.id)) {
		fail("release: '%s' is not a number", key ? key : argv[first]);
		usage_exit(argv[0]);
	}
	fd = dispatcher_fd(TDISPATCH_ATTACH_SUBMIT, 0);
	if (fd < 0 || need_feature(fd, TDISPATCH_FEAT_LIFECYCLE, "early release"))
		return 1;
	ret = ioctl(fd, key ? TDISPATCH_IOC_RELEASE_KEY : TDISPATCH_IOC_RELEASE, &a);
	if (ret >= 0 && key)
		printf("released %d delayed task%s watching key %llu\n", ret, plural(ret),
		       ull(a.id));
	else if (ret >= 0)
		printf("released delayed task %llu\n", ull(a.id));
	else if (errno == ENOENT && key)
		return fail("release: no delayed task watches key %llu", ull(a.id));
	else if (errno == ENOENT)
		return fail("release: no task with id %llu is delayed", ull(a.id));
	else
		return fail("release: %s%s", strerror(errno), errno_hint(errno));
	return 0;
}

static int cmd_rate(int argc, char **argv)
{
	struct tdispatch_rate r = { .size = sizeof(r) };
	int first = parse_opts(argc, argv, named_opts);
	__u64 rate, burst = 0;
	int fd;

	want_operands(argc, argv, first, 1, 2);
	if (parse_u64(argv[first], &rate) || rate > UINT32_MAX ||
	    (first + 1 < argc && (parse_u64(argv[first + 1], &burst) || burst > 65536))) {
		fail("rate: RATE is 0 to %u tasks a second, BURST 0 to 65536", UINT32_MAX);
		usage_exit(argv[0]);
	}
	r.rate = rate;
	r.burst = burst;
	fd = dispatcher_fd(0, 0);
	if (fd < 0 || need_feature(fd, TDISPATCH_FEAT_LIFECYCLE, "rate limits"))
		return 1;
	if (td_ioctl(fd, TDISPATCH_IOC_SET_RATE, &r, "rate"))
		return 1;
	if (!rate)
		printf("no rate limit\n");
	else if (burst)
		printf("at most %llu tasks a second, in bursts of %llu\n", ull(rate), ull(burst));
	else
		printf("at most %llu tasks a second, in bursts of a batch\n", ull(rate));
	return 0;
}

static int cmd_query(int argc, char **argv)
{
	struct tdispatch_query q = { .size = sizeof(q), .id = id_operand(argc, argv) };
	int fd = dispatcher_fd(0, 0);

	if (fd < 0 || td_ioctl(fd, TDISPATCH_IOC_QUERY, &q, "query"))
		return 1;
	printf("task %llu: %s", ull(q.id), name_of(state_names, ARRAY_SIZE(state_names), q.state));
	if (q.state == TDISPATCH_STATE_PENDING || q.state == TDISPATCH_STATE_IN_FLIGHT)
		printf(", %u %s", q.attempts, retries(q.attempts));
	if (q.waiting)
		printf("; a newer task with this id waits behind it");
	if (q.delayed && q.state != TDISPATCH_STATE_DELAYED)
		printf("; a newer task with this id is delayed, waiting for its not-before time");
	printf("\n");
	return 0;
}

/* ---- periodic ---- */

/* @ns as milliseconds: whole ones as such, else with three decimals. */
static void print_ms(__u64 ns)
{
	if (ns % NSEC_PER_MSEC)
		printf("%.3f", ns / 1e6);
	else
		printf("%llu", ull(ns / NSEC_PER_MSEC));
}

/* What a PERIODIC_* call that failed with @err means for task @id. */
static int periodic_failed(const char *sub, __u64 id, int err)
{
	if (err == ENOENT)
		return fail("periodic %s: no periodic task has id %llu", sub, ull(id));
	if (err == EEXIST)
		return fail("periodic %s: id %llu has a periodic task already\n"
			    "       ('tdctl periodic del %llu' removes it)", sub, ull(id), ull(id));
	if (err == ENOSPC)
		return fail("periodic %s: %s (the dispatcher has 1024 periodic tasks, or holds\n"
			    "       16 MiB of payloads already)", sub, strerror(err));
	return fail("periodic %s: %s%s", sub, strerror(err), errno_hint(err));
}

static int periodic_add(int fd, struct tdispatch_periodic_add *a)
{
	if (ioctl(fd, TDISPATCH_IOC_PERIODIC_ADD, a))
		return periodic_failed("add", a->id, errno);
	printf("periodic task %llu: a run every ", ull(a->id));
	print_ms(a->period_ns);
	printf(" ms, timed out after ");
	print_ms(a->timeout_ns);
	printf(" ms");
	if (a->max_backoff > 1) {
		printf(", backing off to every ");
		print_ms(a->period_ns * a->max_backoff);
		printf(" ms");
	}
	printf("\n");
	return 0;
}

static int periodic_del(int fd, __u64 id)
{
	struct tdispatch_id d = { .size = sizeof(d), .id = id };

	if (ioctl(fd, TDISPATCH_IOC_PERIODIC_DEL, &d))
		return periodic_failed("del", id, errno);
	printf("periodic task %llu removed\n", ull(id));
	return 0;
}

static int periodic_stats(int fd, __u64 id, bool json)
{
	struct tdispatch_periodic_stats_user s = { .size = sizeof(s), .id = id };

	if (ioctl(fd, TDISPATCH_IOC_PERIODIC_STATS, &s))
		return periodic_failed("stats", id, errno);
	if (json) {
		printf("{\"id\":%llu,\"runs\":%llu,\"successes\":%llu,\"timeouts\":%llu,",
		       ull(s.id), ull(s.runs), ull(s.successes), ull(s.timeouts));
		printf("\"failures\":%llu,\"skipped\":%llu,\"interval_ms\":", ull(s.failures),
		       ull(s.skipped));
		print_ms(s.interval_ns);
		printf(",\"interval_ns\":%llu}\n", ull(s.interval_ns));
		return 0;
	}
	printf("task %llu: runs %llu, successes %llu, timeouts %llu, failures %llu, ",
	       ull(s.id), ull(s.runs), ull(s.successes), ull(s.timeouts), ull(s.failures));
	printf("skipped %llu, interval ", ull(s.skipped));
	print_ms(s.interval_ns);
	printf(" ms\n");
	return 0;
}

/* "periodic SUB ...": the operands of SUB, with its options among them. */
static int cmd_periodic(int argc, char **argv)
{
	__u64 period_ms = 0, timeout_ms = 0, max_backoff = 1, id;
	bool json = false;
	const struct opt add_opts[] = {
		NUM_OPT("period-ms", &period_ms, 1, PERIODIC_MAX_MS),
		NUM_OPT("timeout-ms", &timeout_ms, 1, PERIODIC_MAX_MS),
		NUM_OPT("max-backoff", &max_backoff, 1, PERIODIC_MAX_BACKOFF),
		END_OPT,
	};
	const struct opt stats_opts[] = {
		FLAG_OPT("json", &json),
		END_OPT,
	};
	const char *sub = argc > 1 ? argv[1] : "";
	const struct opt *opts = no_opts;
	struct tdispatch_periodic_add a = { .size = sizeof(a) };
	char **ops;
	int fd, nr, ret;

	if (!strcmp(sub, "add")) {
		opts = add_opts;
	} else if (!strcmp(sub, "stats")) {
		opts = stats_opts;
	} else if (strcmp(sub, "del")) {
		/* --help exits here; anything else is a usage error. */
		parse_opts(argc, argv, no_opts);
		if (*sub)
			fail("periodic: '%s' is not add, del or stats", sub);
		usage_exit(argv[0]);
	}
	ops = calloc(argc, sizeof(*ops));
	if (!ops)
		return fail("periodic: %s", strerror(ENOMEM));
	/* Parsed as if the command were "periodic" without SUB. */
	argv[1] = argv[0];
	nr = parse_opts_among(argc - 1, argv + 1, opts, ops);
	if (nr != (opts == add_opts ? 2 : 1))
		usage_exit(argv[0]);
	if (parse_u64(ops[0], &id)) {
		fail("periodic %s: '%s' is not a task id (a number, decimal or 0x hex)",
		     sub, ops[0]);
		usage_exit(argv[0]);
	}
	if (opts == add_opts) {
		if (!period_ms) {
			fail("periodic add: --period-ms N is needed: how often a run is due");
			usage_exit(argv[0]);
		}
		a.id = id;
		a.period_ns = period_ms * NSEC_PER_MSEC;
		a.timeout_ns = (timeout_ms ? timeout_ms : period_ms) * NSEC_PER_MSEC;
		a.max_backoff = max_backoff;
		a.payload_len = strlen(ops[1]);
		a.payload = (uintptr_t)ops[1];
		if (!a.payload_len || a.payload_len > TDISPATCH_PAYLOAD_MAX) {
			free(ops);
			return fail("periodic add: the payload must be 1 to %u bytes",
				    TDISPATCH_PAYLOAD_MAX);
		}
	}
	fd = env_fd();
	if (fd < 0 || need_feature(fd, TDISPATCH_FEAT_PERIODIC, "periodic tasks"))
		ret = 1;
	else if (opts == add_opts)
		ret = periodic_add(fd, &a);
	else if (opts == stats_opts)
		ret = periodic_stats(fd, id, json);
	else
		ret = periodic_del(fd, id);
	free(ops);
	return ret;
}

/* ---- the commands and their help ---- */

static int cmd_help(int argc, char **argv);

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *args;
	const char *summary;
	const char *help;
	bool named;		/* takes -n NAME */
};

#define NAMED_HELP \
	"  -n, --name NAME   attach to the named dispatcher NAME ('tdctl list')\n" \
	"                    instead of using TDISPATCH_FD\n"

static const struct cmd cmds[] = {
	{ "create", cmd_create, "[OPTIONS] [-- CMD [ARG...]]",
	  "create a dispatcher and run CMD with it",
	  "Opens the device, creates a dispatcher owned by that open file and runs\n"
	  "CMD (default: $SHELL, else /bin/sh) with the file inherited and its\n"
	  "descriptor number in TDISPATCH_FD, so that every tdctl command CMD runs\n"
	  "works on this dispatcher.  The dispatcher and the tasks still in it go\n"
	  "away when CMD and everything that inherited the descriptor have exited.\n"
	  "Exits with CMD's status (128+N if signal N killed it; 127 if CMD was not\n"
	  "found).\n"
	  "\n"
	  "options:\n"
	  "  --name NAME              shown in the kernel thread's name and in\n"
	  "                           tracepoints; at most 23 bytes (tdctl)\n"
	  "  --max-buffer N           most pending tasks, 1-65536 (4096); when full,\n"
	  "                           the oldest pending task is dropped\n"
	  "  --max-batch N            most tasks in a batch, 1-1024 and at most\n"
	  "                           --max-buffer (64, or --max-buffer if smaller)\n"
	  "  --max-delay-ms N         release a batch once its oldest task has waited\n"
	  "                           this long, 0-30000 (100); 0 releases at once\n"
	  "  --workers N              most batches out at once, 1-64 (4)\n"
	  "  --lease-ms N             a taken batch not completed within this time is\n"
	  "                           delivered again, 1-3600000 (30000)\n"
	  "  --events N               keep up to N outcome events for 'tdctl events',\n"
	  "                           1-65536 (default: no events)\n"
	  "  --max-input N            most submissions waiting on one CPU for the\n"
	  "                           dispatcher's thread, 1-65536 (4096)\n"
	  "  --congestion-delay-ms N  hold-off after a congestion result, 0-30000 (1000)\n"
	  "  --transient-delay-ms N   hold-off after a transient result, 0-30000 (100)\n"
	  "  --max-delayed N          most tasks waiting for their time ('submit\n"
	  "                           --delay-ms'), 0-1048576 (65536); 0: none allowed\n"
	  "  --max-attempts N         most times a task is handed out; one that comes\n"
	  "                           back from its last wanting a retry ends exhausted,\n"
	  "                           0-65535 (0: no limit)\n"
	  "  --rate N                 most tasks a second handed out (0: no limit; see\n"
	  "                           'tdctl rate')\n"
	  "  --burst N                most handed out at once under --rate, 0-65536\n"
	  "                           (0: the max batch)\n"
	  "\n"
	  "example:\n"
	  "  tdctl create --events 64 -- sh -c 'tdctl submit 7 hi; tdctl work --count 1'\n",
	  false },
	{ "submit", cmd_submit,
	  "[-n NAME] [--deadline-ms N] [--delay-ms N | --at-ns T] ID PAYLOAD [ID PAYLOAD...] | -",
	  "submit tasks",
	  "Submits each ID PAYLOAD pair as a task; with '-', reads \"ID PAYLOAD\" lines\n"
	  "from standard input (the payload is the rest of the line; empty lines are\n"
	  "skipped), up to 1024 tasks per call.  ID is a number, decimal or 0x hex;\n"
	  "a newer task with the same ID replaces one still pending.  A payload is 1\n"
	  "to 4096 bytes.  Prints how many tasks were accepted and rejected, and why\n"
	  "each rejected one was; exits 1 if any was rejected.  A named dispatcher\n"
	  "takes tasks only if its driver accepts them from userspace and grants\n"
	  "you write permission; its driver may refuse single tasks.\n"
	  "\n"
	  "A delayed task waits, counted as delayed, until its time and only then\n"
	  "becomes pending; a newer task with its ID replaces it, and the newest\n"
	  "task's time wins.  The dispatcher must allow delayed tasks (create's\n"
	  "--max-delayed, 65536 by default); beyond that many, they are rejected.\n"
	  "\n"
	  "options:\n"
	  "  --deadline-ms N   the tasks expire if no worker took them within N ms\n"
	  "                    of the submission (a delay counts too)\n"
	  "  --delay-ms N      the tasks wait N ms before they become pending,\n"
	  "                    counted from the call that submits them\n"
	  "  --at-ns T         the tasks wait until CLOCK_MONOTONIC time T, in ns;\n"
	  "                    a time not in the future is at once\n"
	  "  --max-attempts N  each task is leased at most N times (1-65535; 0, the\n"
	  "                    default: the dispatcher's limit), then ends exhausted\n"
	  "  --watch KEY       delayed tasks watch KEY: 'tdctl release --key KEY'\n"
	  "                    lets them all in at once\n"
	  NAMED_HELP, true },
	{ "work", cmd_work,
	  "[--exec CMD] [--result RESULT] [--count N] [--timeout-ms N]",
	  "take batches and complete them",
	  "Takes batches one after the other.  With --exec, runs CMD through /bin/sh\n"
	  "for each batch with the batch's tasks as \"ID PAYLOAD\" lines on its\n"
	  "standard input, and TDISPATCH_BATCH (the lease) and TDISPATCH_BATCH_SIZE\n"
	  "in its environment; its exit status completes the batch: 0 is success,\n"
	  "75 (EX_TEMPFAIL) transient (retried after a hold-off), anything else\n"
	  "permanent (the tasks fail).  Lines \"ID RESULT\" (success, congestion,\n"
	  "transient, permanent) that CMD writes to the file $TDISPATCH_RESULTS give\n"
	  "those tasks a result of their own; only the tasks that need a retry go\n"
	  "back.  Without --exec, prints the tasks as\n"
	  "\"ID PAYLOAD\" lines and completes each batch with --result.  A summary\n"
	  "goes to standard error at the end.  If this process dies, the batch it\n"
	  "holds is delivered again at once.\n"
	  "\n"
	  "options:\n"
	  "  --exec CMD        shell command to run per batch\n"
	  "  --result RESULT   success, congestion, transient or permanent (success)\n"
	  "  --count N         stop after N batches (0: never, the default)\n"
	  "  --timeout-ms N    stop when no batch came for N ms (0: wait forever)\n"
	  "\n"
	  "Only a dispatcher of 'tdctl create': a named dispatcher's batches are\n"
	  "processed by its driver.\n", false },
	{ "stats", cmd_stats, "[-n NAME] [--json]", "print the dispatcher's counters",
	  "Prints every counter: tasks accepted and rejected, where the accepted\n"
	  "ones are (queued, delayed, pending, in_flight) or how they ended (done,\n"
	  "failed, overridden, expired, dropped, cancelled), batches, retries,\n"
	  "hold-offs, redeliveries, failed calls on the file, lost events and the\n"
	  "runs of periodic tasks submitted (counted in accepted too), the failed\n"
	  "tasks that ran out of attempts (exhausted) and the delayed tasks let in\n"
	  "early (released).  At any moment\n"
	  "accepted = queued + delayed + pending + in_flight + done + failed +\n"
	  "overridden + expired + dropped + cancelled.  rejected_calls and\n"
	  "events_lost are the file's: for a named dispatcher, those of the file\n"
	  "tdctl attached.  A module without delayed tasks has no delayed and no\n"
	  "periodic_runs counter; they are not shown.\n"
	  "\n"
	  "options:\n"
	  "  --json            one JSON object instead of \"name value\" lines\n"
	  NAMED_HELP, true },
	{ "watch", cmd_watch, "[-n NAME] [--interval-ms N] [--count N]",
	  "show the counters as they change",
	  "Samples the counters every interval.  On a terminal the screen is redrawn\n"
	  "in place with the rate of each running total; otherwise each sample is\n"
	  "one line: seconds since the start, then name=value pairs.\n"
	  "\n"
	  "options:\n"
	  "  --interval-ms N   time between samples (1000)\n"
	  "  --count N         stop after N samples (0: never, the default)\n"
	  NAMED_HELP, true },
	{ "events", cmd_events, "[-n NAME [--queue N]] [--json] [--follow] [--count N]",
	  "print task outcome events",
	  "Reads the outcome events queued since the last read (the dispatcher must\n"
	  "have been created with --events N): for each task that ended, its\n"
	  "sequence number, outcome (done, failed, overridden, expired, dropped,\n"
	  "cancelled), id, time since submission and retries.  When the queue was\n"
	  "full, a record says how many events were lost at that point.  Reading\n"
	  "consumes the events.  With -n NAME, tdctl attaches with an event queue of\n"
	  "its own, which starts empty: it always follows, until interrupted,\n"
	  "--count is reached or the driver withdraws the dispatcher.\n"
	  "\n"
	  "options:\n"
	  "  --json            one JSON object per line\n"
	  "  --follow          keep waiting for new events instead of stopping\n"
	  "  --count N         stop after N records (0: no limit, the default)\n"
	  NAMED_HELP
	  "  --queue N         with -n: events kept until read, 1-65536 (4096)\n", true },
	{ "cancel", cmd_cancel, "[-n NAME] ID", "cancel a pending or delayed task",
	  "Cancels the pending and the delayed task with this ID.  Fails (exit 1) if\n"
	  "there is none, or if the task is in flight: a batch being worked on\n"
	  "cannot be recalled.  It does not stop a periodic task: see 'periodic del'.\n"
	  "A named dispatcher needs the same rights as submit.\n"
	  "\n"
	  "options:\n"
	  NAMED_HELP, true },
	{ "release", cmd_release, "[-n NAME] ID | [-n NAME] --key KEY",
	  "let a delayed task in now, or every one that watches a key",
	  "Lets the delayed task with this ID into the pending set at once, as if\n"
	  "its time had come (it replaces a pending task of its ID, and expires if\n"
	  "past its deadline); with --key, every delayed task submitted with\n"
	  "'--watch KEY', and prints how many.  Fails (exit 1) if there is none.\n"
	  "Counted in released (and key_releases).  A named dispatcher needs the\n"
	  "same rights as submit.\n"
	  "\n"
	  "options:\n"
	  "  --key KEY         release the tasks that watch KEY\n"
	  NAMED_HELP, true },
	{ "rate", cmd_rate, "RATE [BURST]", "set the dispatcher's rate limit",
	  "At most RATE tasks a second go to workers, in bursts of at most BURST\n"
	  "(0 or left out: the dispatcher's max batch); due tasks wait, still\n"
	  "coalescing, while the limit holds them; 'stats' shows throttled_ns, the\n"
	  "time they waited, and the limit.  RATE 0 lifts the limit.  Only for a\n"
	  "dispatcher of 'tdctl create' (also --rate and --burst there); a named\n"
	  "dispatcher's limit is its driver's.\n",
	  false },
	{ "query", cmd_query, "[-n NAME] ID", "tell where a task is",
	  "Prints whether the task with this ID is in flight, pending, delayed\n"
	  "(waiting for its time) or absent, in that order, its retries so far, and\n"
	  "whether a newer task with the same ID waits behind the one in flight or\n"
	  "is delayed.\n"
	  "\n"
	  "options:\n"
	  NAMED_HELP, true },
	{ "periodic", cmd_periodic,
	  "add ID PAYLOAD --period-ms N [--timeout-ms N] [--max-backoff N]\n"
	  "       tdctl periodic del ID\n"
	  "       tdctl periodic stats [--json] ID",
	  "supervise periodic tasks",
	  "add registers a periodic task: a run, a task with this ID and PAYLOAD, is\n"
	  "submitted at once and then every interval; workers process runs like\n"
	  "any task.  A run that has not ended --timeout-ms after it was submitted,\n"
	  "or whose batch ended with congestion or transient, doubles the interval,\n"
	  "up to --period-ms times --max-backoff; a success resets it to\n"
	  "--period-ms.  The next run falls due one interval after the last one\n"
	  "ended or timed out; runs are not retried, the next run is the retry, and\n"
	  "one that is due while the last one still goes is skipped.  A submit with\n"
	  "the ID replaces a pending run, which then counts as a failure.  Up to\n"
	  "1024 periodic tasks per dispatcher; they go with it.\n"
	  "\n"
	  "del removes one: no run starts after it, a pending run is cancelled, one\n"
	  "being worked on ends as usual.\n"
	  "\n"
	  "stats prints its counters: runs submitted, successes, timeouts, failures\n"
	  "(congestion, transient, permanent, or ended unprocessed), skipped due\n"
	  "times, and the current interval in ms.\n"
	  "\n"
	  "options:\n"
	  "  --period-ms N     add: the base interval, 1-86400000 ms\n"
	  "  --timeout-ms N    add: a run not ended this long after it was submitted\n"
	  "                    has timed out, 1-86400000 ms (the period)\n"
	  "  --max-backoff N   add: the interval grows to at most N times the\n"
	  "                    period, 1-1024 (1: it never grows)\n"
	  "  --json            stats: one JSON object with the keys id, runs,\n"
	  "                    successes, timeouts, failures, skipped, interval_ms\n"
	  "                    and interval_ns\n"
	  "\n"
	  "Only a dispatcher of 'tdctl create', through TDISPATCH_FD.\n"
	  "\n"
	  "example:\n"
	  "  tdctl create --max-delay-ms 0 -- sh -c 'tdctl periodic add 1 ping \\\n"
	  "    --period-ms 1000 --timeout-ms 500 --max-backoff 16;\n"
	  "    tdctl work --exec ./health-check'\n", false },
	{ "list", cmd_list, "[--json]", "list named dispatchers",
	  "Prints every dispatcher a driver published under a name: its name, owner\n"
	  "uid:gid, mode (octal, as a file's: read to attach and read it, write to\n"
	  "submit and cancel), whether its driver takes tasks from userspace, and\n"
	  "what you may do with it: read (stats, watch, events, query) and submit\n"
	  "(submit, cancel).  Use one with 'tdctl -n NAME COMMAND'.\n"
	  "\n"
	  "options:\n"
	  "  --json            a JSON array of objects with the keys name, uid, gid,\n"
	  "                    mode, submit, may_read and may_submit\n", false },
	{ "version", cmd_version, "", "print tdctl's and the module's versions and features",
	  "Opens the device and prints tdctl's release, the module's release (they\n"
	  "come from one VERSION file; DKMS packages it too), the ABI version, the\n"
	  "feature bits (user:\n"
	  "dispatchers for userspace; named: drivers' named dispatchers, list and\n"
	  "-n NAME; delayed: submit --delay-ms and --at-ns, create --max-delayed;\n"
	  "periodic: the periodic command) and the size of the version struct.\n", false },
	{ "help", cmd_help, "[COMMAND]", "print help, for one command too", "", false },
};

static const struct cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (!strcmp(cmds[i].name, name))
			return &cmds[i];
	return NULL;
}

static void cmd_usage(const char *name, FILE *out, bool full)
{
	const struct cmd *c = find_cmd(name);

	fprintf(out, "usage: tdctl %s %s\n", c->name, c->args);
	if (full)
		fprintf(out, "\n%s.\n\n%s", c->summary, c->help);
	else
		fprintf(out, "Try 'tdctl help %s'.\n", c->name);
}

static void print_help(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: tdctl [-d DEVICE] [-n NAME] COMMAND [ARGS]\n"
		"\n"
		"Drive the tdispatch coalescing work dispatcher from the shell.  Tasks\n"
		"are (ID, payload) pairs; a newer task replaces a pending one with the\n"
		"same ID, and pending tasks are handed to workers in batches.\n"
		"\n"
		"A dispatcher belongs to the open file that created it: 'tdctl create'\n"
		"makes one and runs a command (a shell by default) that inherits the file\n"
		"in TDISPATCH_FD; the other commands, run from there, work on it.\n"
		"A driver's dispatcher published under a name ('tdctl list') is reached\n"
		"with -n NAME instead: stats, watch, events, submit, query and cancel\n"
		"then attach to it, with the rights its driver grants you.\n"
		"\n"
		"Tasks may be delayed (submit --delay-ms), and a periodic task submits a\n"
		"run every interval, backing off while runs time out or fail (periodic).\n"
		"\n"
		"commands:\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(out, "  %-9s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(out,
		"\n"
		"options:\n"
		"  -d, --device DEVICE  device node to use (default %s)\n"
		"  -n, --name NAME      work on the named dispatcher NAME instead of\n"
		"                       TDISPATCH_FD (stats, watch, events, submit,\n"
		"                       query, cancel; also after the command)\n"
		"  -h, --help           print this text\n"
		"\n"
		"Exit status: 0 on success, 1 on failure, 2 on a usage error; create\n"
		"exits with its command's status.  'tdctl help COMMAND' tells more.\n"
		"\n"
		"examples:\n"
		"  tdctl create --events 1024 -- sh -c \\\n"
		"    'tdctl submit 7 a 8 b; tdctl work --count 1; tdctl stats; tdctl events'\n"
		"  tdctl list; tdctl -n testdrv-rw submit 7 hello; tdctl stats -n testdrv-rw\n"
		"  tdctl create --max-delay-ms 0 -- sh -c \\\n"
		"    'tdctl periodic add 1 ping --period-ms 1000; tdctl work --count 3'\n",
		dev_path);
}

static int unknown_cmd(const char *name)
{
	fail("no command '%s'; 'tdctl help' lists them", name);
	return EXIT_USAGE;
}

static int cmd_help(int argc, char **argv)
{
	int first = parse_opts(argc, argv, no_opts);

	want_operands(argc, argv, first, 0, 1);
	if (first == argc) {
		print_help(stdout);
		return 0;
	}
	if (!find_cmd(argv[first]))
		return unknown_cmd(argv[first]);
	cmd_usage(argv[first], stdout, true);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct cmd *c;
	int opt;

	while ((opt = getopt_long(argc, argv, "+d:hn:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dev_path = optarg;
			break;
		case 'n':
			target = optarg;
			break;
		case 'h':
			print_help(stdout);
			return 0;
		default:
			print_help(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	c = find_cmd(argv[optind]);
	if (!c)
		return unknown_cmd(argv[optind]);
	if (target && !c->named && c->run != cmd_help) {
		fail("-n NAME selects a named dispatcher for stats, watch, events, submit,\n"
		     "       query and cancel; not for %s%s", c->name,
		     c->run == cmd_create ? " (its own --name names the new dispatcher)" : "");
		return EXIT_USAGE;
	}
	return c->run(argc - optind, argv + optind);
}
