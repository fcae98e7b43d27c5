// SPDX-License-Identifier: GPL-2.0
/*
 * tdfresh: freshness and CPU at a fixed offered load through
 * /dev/tdispatch, against what a userspace developer writes instead.
 *
 * N objects, each with a version that producer threads bump when it
 * changes; consumers must act on the newest version of each changed
 * object soon.  A producer thread per CPU offers its share of a fixed
 * rate, paced by an absolute clock_nanosleep() every 100 us; one that falls
 * behind catches up at once.  Modes:
 *
 *   none       the producers alone: pacing and bumping versions
 *   coalescer  the same process does it itself: the object's version is
 *              its state, a dirty bitmap (one atomic OR a change) is the
 *              pending set, an eventfd wakes the consumers when the count
 *              of dirty objects leaves 0, and two consumer threads take
 *              whole bitmap words with an atomic exchange
 *   slots      tdispatch's shared slots, one an object: the change is
 *              written into its slot (tdl_slot_write(), no system call;
 *              a write whose task waits replaces its payload there), a
 *              KICK once a tick if a write owed one, and two consumer
 *              threads in TAKE/COMPLETE
 *   merge      a SUBMIT a tick of the tick's changes, each flagged
 *              TDISPATCH_TASK_MERGE, and the same consumers
 *   redis      Debian's redis-server, started for the run on a Unix
 *              socket (sharing the CPUs), as an RQ or Celery user runs
 *              it: a change is a script (EVALSHA) that puts the newest
 *              version in a hash and, if the id was not in the set of
 *              dirty ids, adds it and pushes it on a list; a tick's
 *              changes are pipelined.  Two consumer threads block on the
 *              list (BLPOP), take up to a batch more (LPOP with a count)
 *              and, pipelined, take each id out of the set and read its
 *              version
 *
 * Figures (as the engine benchmark's): accepted/s (changes handed in),
 * processed/s (objects the consumers acted on), cpu_ns (the CPU time of
 * every thread on the system over the run, from each one's schedstat,
 * less the none mode's at the same rate and ids, per accepted change:
 * producers, consumers, Redis and the kernel's threads alike; busy_ns,
 * the same from every CPU's busy time in /proc/stat, which counts what
 * the idle task does too, and takes less for pacing beside work than in
 * the none mode) and staleness (for every 16th change of each
 * producer, when no sample of its object waits, the time from just before
 * the change to the start of the first processing that reads that
 * version or a newer one; p50, p99).  Ids round-robin, uniform or Zipf
 * (s = 1) over 1,024 objects.  Runs offer load for a second (/proc/stat
 * counts 10 ms ticks), in interleaved rounds; medians.  accepted/s and
 * processed/s are over that second (processed by its end); the CPU window
 * runs on until nothing is left to process.  Samples that no processing
 * reflects (a payload processed last that is older than the object's
 * newest version) are counted beside the table.  Capacity: the highest
 * offered rate (doubling from 100k/s, or halving to 1,562/s if 100k/s is
 * too much, then two bisections) at which the producers offer 95% of it
 * and staleness p99 stays within 2 ms.
 *
 *   BENCH user <mode> trivial ids=<dist>/1024 rate=<r> accepted_per_s=
 *	processed_per_s= cpu_ns= busy_ns= stale_p50_us= stale_p99_us=
 *   BENCH capacity user <mode> trivial ids=uniform/1024 max_rate=
 *
 * usage: tdfresh [rounds [modes [verbose]]]   (default 5 rounds, every mode;
 * modes is a mask: 2 coalescer, 4 slots, 8 merge, 16 redis; verbose 1
 * prints, after each run of slots or merge, the dispatcher's counts and the
 * consumers' TAKE and COMPLETE calls, their mean time and the part of it
 * the calling thread spent on a CPU; and after every run, the CPUs' busy
 * share, the context switches, and the consumers' time on a CPU, runnable
 * and blocked over the run, on stderr)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <linux/tdispatch.h>
#include "libtdispatch.h"

#define NR_OBJS		1024U
#define MAX_PRODUCERS	8U
#define CONSUMERS	2U
#define MAX_ROUNDS	11U
#define TICK_NS		100000ULL
#define RUN_NS		1000000000ULL
#define SEC		1000000000ULL
#define SAMPLE_EVERY	16U
#define LAT_MAX		65536U
#define ZIPF_SEQ	65536U
#define BATCH		64U
#define CAP_SLACK_NS	2000000ULL

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum { M_NONE, M_COALESCER, M_SLOTS, M_MERGE, M_REDIS, NR_MODES };
static const char *const mode_names[NR_MODES] = { "none", "coalescer", "slots", "merge", "redis" };
enum { D_RR, D_UNIFORM, D_ZIPF, NR_D };
static const char *const dist_names[NR_D] = { "rr", "uniform", "zipf" };
static const unsigned long long rates[] = { 100000, 400000, 1600000 };
#define NR_RATES	ARRAY_SIZE(rates)

struct obj {
	uint64_t ver;		/* bumped by each change */
	uint64_t stamp_ver;	/* a sampled change's version, or 0 */
	uint64_t stamp;		/* its time, 0 until written */
};

static struct obj objs[NR_OBJS];
static uint32_t zipf_seq[MAX_PRODUCERS][ZIPF_SEQ];
static unsigned int nr_prods;
static int verbose;		/* the third argument: the consumers' calls, per run */

/* One run's shared state. */
static struct {
	int mode, dist;
	unsigned long long rate, start, end;
	struct tdl t;
	struct tdl_slots slots;
	int efd;			/* coalescer: consumers' wake-up */
	uint64_t dirty[NR_OBJS / 64];	/* coalescer: the pending set */
	long ndirty;			/* coalescer: bits set and not taken */
	int stop;
	unsigned long long processed;
	unsigned long long lat[LAT_MAX];
	unsigned int nlat;
	/* verbose: the consumers' calls, the time spent in them, and on a CPU */
	unsigned long long takes, take_ns, take_cpu_ns;
	unsigned long long completes, complete_ns, complete_cpu_ns;
	/* verbose: the consumers' thread ids, for their schedstat */
	pid_t cons_tid[CONSUMERS];
	unsigned int cons_started;
	sem_t cons_up;			/* posted by each once its id is set */
	struct tdispatch_stats_user st;	/* slots, merge: the counts once drained */
} run;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "tdfresh: %s: %s\n", what, strerror(err));
	exit(1);
}

/* Busy and total time of every CPU, in /proc/stat's ticks. */
static void cpu_ticks(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	unsigned int i;

	if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			 &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) < 8)
		die("/proc/stat", f ? EINVAL : errno);
	fclose(f);
	*total = 0;
	for (i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];	/* less idle and iowait */
}

/* Context switches on every CPU since boot (/proc/stat's ctxt), or 0. */
static unsigned long long context_switches(void)
{
	unsigned long long n = 0;
	FILE *f = fopen("/proc/stat", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %llu", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/* The start of one object's processing, of version @ver. */
static void process(uint32_t id, uint64_t ver)
{
	struct obj *o = &objs[id % NR_OBJS];
	uint64_t sv = __atomic_load_n(&o->stamp_ver, __ATOMIC_ACQUIRE), s, now;

	if (sv && sv <= ver) {
		s = __atomic_exchange_n(&o->stamp, 0, __ATOMIC_ACQ_REL);
		if (s) {
			unsigned int i = __atomic_fetch_add(&run.nlat, 1, __ATOMIC_RELAXED);

			now = now_ns();
			if (i < LAT_MAX)
				run.lat[i] = now > s ? now - s : 0;
			__atomic_store_n(&o->stamp_ver, 0, __ATOMIC_RELEASE);
		}
	}
	__atomic_fetch_add(&run.processed, 1, __ATOMIC_RELAXED);
}

/* ---- Redis, as an RQ or Celery user runs it ------------------------------- */

#define REDIS_SOCK	"/tmp/tdfresh-redis.sock"
/* The newest version in a hash, the dirty ids in a set, a list to block on. */
#define REDIS_CHANGE	"redis.call('HSET','h',ARGV[1],ARGV[2]) " \
			"if redis.call('SADD','d',ARGV[1]) == 1 then " \
			"redis.call('RPUSH','q',ARGV[1]) end return 0"

static pid_t redis_pid;
static char redis_sha[41];

struct conn {
	int fd;
	char in[65536];
	size_t len, off;
	char out[1 << 20];
	size_t olen;
};

static int redis_connect(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = REDIS_SOCK };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket", errno);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void conn_flush(struct conn *c)
{
	size_t off = 0;
	ssize_t n;

	while (off < c->olen) {
		n = write(c->fd, c->out + off, c->olen - off);
		if (n <= 0)
			die("redis write", n ? errno : EPIPE);
		off += n;
	}
	c->olen = 0;
}

/* A command of @argc words in RESP, queued for conn_flush(). */
static void conn_cmd(struct conn *c, int argc, ...)
{
	va_list ap;
	int i;

	if (c->olen > sizeof(c->out) - 4096)
		conn_flush(c);
	c->olen += sprintf(c->out + c->olen, "*%d\r\n", argc);
	va_start(ap, argc);
	for (i = 0; i < argc; i++) {
		const char *w = va_arg(ap, const char *);

		c->olen += sprintf(c->out + c->olen, "$%zu\r\n%s\r\n", strlen(w), w);
	}
	va_end(ap);
}

/* The next line of a reply, without its CRLF. */
static char *conn_line(struct conn *c)
{
	char *nl;
	ssize_t n;

	for (;;) {
		nl = c->len > c->off ? memchr(c->in + c->off, '\n', c->len - c->off) : NULL;
		if (nl) {
			char *line = c->in + c->off;

			*nl = 0;
			if (nl > line && nl[-1] == '\r')
				nl[-1] = 0;
			c->off = nl + 1 - c->in;
			return line;
		}
		if (c->off) {
			memmove(c->in, c->in + c->off, c->len - c->off);
			c->len -= c->off;
			c->off = 0;
		}
		n = read(c->fd, c->in + c->len, sizeof(c->in) - c->len);
		if (n <= 0)
			die("redis read", n ? errno : EPIPE);
		c->len += n;
	}
}

/*
 * One reply: an integer's or a bulk string's value in @val (a bulk string
 * of digits, or the second of a two-element array, as BLPOP gives); 0 for
 * a nil reply, 1 otherwise.
 */
static int conn_reply(struct conn *c, unsigned long long *val)
{
	char *l = conn_line(c);
	long n;

	switch (l[0]) {
	case ':':
		*val = strtoull(l + 1, NULL, 10);
		return 1;
	case '+':
		return 1;
	case '$':
		if (atol(l + 1) < 0)
			return 0;
		l = conn_line(c);
		*val = strtoull(l, NULL, 10);
		return 1;
	case '*':
		n = atol(l + 1);
		if (n < 0)
			return 0;
		while (n--)
			conn_reply(c, val);
		return 1;
	default:
		fprintf(stderr, "tdfresh: redis: %s\n", l);
		exit(1);
	}
}

static void redis_start(void)
{
	unsigned int i;
	int fd = -1;

	unlink(REDIS_SOCK);
	redis_pid = fork();
	if (redis_pid < 0)
		die("fork", errno);
	if (!redis_pid) {
		int null = open("/dev/null", O_WRONLY);

		/* Its start-up and shutdown notices would fill the log. */
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", REDIS_SOCK,
		       "--save", "", "--appendonly", "no", "--loglevel", "warning", NULL);
		_exit(127);
	}
	for (i = 0; i < 500 && fd < 0; i++) {
		fd = redis_connect();
		if (fd < 0)
			usleep(10000);
	}
	if (fd < 0)
		die("redis-server did not start", ECONNREFUSED);
	close(fd);
}

static void redis_stop(void)
{
	kill(redis_pid, SIGTERM);
	waitpid(redis_pid, NULL, 0);
}

/* A connection to the run's server. */
static struct conn *redis_conn(void)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		die("calloc", ENOMEM);
	c->fd = redis_connect();
	if (c->fd < 0)
		die("redis connect", errno);
	return c;
}

/* The change script, loaded once per server before any thread uses it. */
static void redis_load(void)
{
	struct conn *c = redis_conn();
	char *l;

	conn_cmd(c, 3, "SCRIPT", "LOAD", REDIS_CHANGE);
	conn_flush(c);
	l = conn_line(c);
	if (l[0] != '$')
		die("script load", EINVAL);
	l = conn_line(c);
	snprintf(redis_sha, sizeof(redis_sha), "%s", l);
	close(c->fd);
	free(c);
}

static void conn_free(struct conn *c)
{
	close(c->fd);
	free(c);
}

/* An array reply of ids (LPOP with a count): how many, into @ids. */
static unsigned int conn_ids(struct conn *c, unsigned long long *ids, unsigned int max)
{
	char *l = conn_line(c);
	unsigned int i, n;

	if (l[0] != '*' || atol(l + 1) <= 0)
		return 0;
	n = atol(l + 1);
	for (i = 0; i < n; i++)
		conn_reply(c, &ids[i < max ? i : max - 1]);
	return n < max ? n : max;
}

/* A consumer says who it is, for its schedstat (verbose). */
static void consumer_started(void)
{
	unsigned int i = __atomic_fetch_add(&run.cons_started, 1, __ATOMIC_ACQ_REL);

	if (i < CONSUMERS)
		__atomic_store_n(&run.cons_tid[i], (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	sem_post(&run.cons_up);
}

/*
 * The consumers' time on a CPU, runnable without one, and times put on
 * one, summed from /proc/self/task/<tid>/schedstat (CONFIG_SCHED_INFO):
 * 0 if it cannot be read, else 1.
 */
static int consumers_sched(unsigned int n, unsigned long long v[3])
{
	unsigned int i, k;

	memset(v, 0, 3 * sizeof(v[0]));
	for (i = 0; i < n; i++) {
		unsigned long long x[3];
		char path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat",
			 (int)__atomic_load_n(&run.cons_tid[i], __ATOMIC_ACQUIRE));
		f = fopen(path, "r");
		if (!f)
			return 0;
		k = fscanf(f, "%llu %llu %llu", &x[0], &x[1], &x[2]);
		fclose(f);
		if (k != 3)
			return 0;
		for (k = 0; k < 3; k++)
			v[k] += x[k];
	}
	return 1;
}

/*
 * A worker as an RQ user writes one: block on the list for an id, take up
 * to a batch more at once, and for each, pipelined, take it out of the
 * dirty set (a change after that queues it again) and read its newest
 * version.
 */
static void *redis_consumer(void *arg)
{
	unsigned long long id[BATCH], ver;
	struct conn *c = redis_conn();
	unsigned int n, i;
	char ids[24], more[8];

	(void)arg;
	consumer_started();
	snprintf(more, sizeof(more), "%u", BATCH - 1);
	while (!__atomic_load_n(&run.stop, __ATOMIC_ACQUIRE)) {
		conn_cmd(c, 3, "BLPOP", "q", "0.01");
		conn_cmd(c, 3, "LPOP", "q", more);
		conn_flush(c);
		if (!conn_reply(c, &id[0])) {
			conn_ids(c, id, BATCH);
			continue;
		}
		n = 1 + conn_ids(c, id + 1, BATCH - 1);
		for (i = 0; i < n; i++) {
			snprintf(ids, sizeof(ids), "%llu", id[i]);
			conn_cmd(c, 3, "SREM", "d", ids);
			conn_cmd(c, 3, "HGET", "h", ids);
		}
		conn_flush(c);
		for (i = 0; i < n; i++) {
			conn_reply(c, &ver);
			ver = 0;
			conn_reply(c, &ver);
			process(id[i], ver);
		}
	}
	conn_free(c);
	return NULL;
}

/* ---- consumers ------------------------------------------------------------ */

static void *coalescer_consumer(void *arg)
{
	uint64_t n;
	unsigned int w;

	(void)arg;
	consumer_started();
	while (!__atomic_load_n(&run.stop, __ATOMIC_ACQUIRE)) {
		long taken = 0;

		for (w = 0; w < ARRAY_SIZE(run.dirty); w++) {
			uint64_t bits = __atomic_exchange_n(&run.dirty[w], 0, __ATOMIC_ACQ_REL);

			while (bits) {
				unsigned int b = __builtin_ctzll(bits);

				bits &= bits - 1;
				b += w * 64;
				process(b, __atomic_load_n(&objs[b].ver, __ATOMIC_ACQUIRE));
				taken++;
			}
		}
		if (taken && __atomic_sub_fetch(&run.ndirty, taken, __ATOMIC_ACQ_REL))
			continue;
		if (!taken && __atomic_load_n(&run.ndirty, __ATOMIC_ACQUIRE))
			continue;
		if (read(run.efd, &n, sizeof(n)) < 0 && errno != EINTR)
			die("eventfd read", errno);
	}
	return NULL;
}

/* The calling thread's CPU time: user and system, not its waits. */
static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* When a consumer's call began: the clock, and the thread's CPU time. */
struct call_start {
	unsigned long long ns, cpu_ns;
};

static void call_begin(struct call_start *c)
{
	if (!verbose)
		return;
	c->cpu_ns = thread_cpu_ns();
	c->ns = now_ns();
}

/* verbose: count a consumer's call, begun at @c, in @n, @ns and @cpu_ns. */
static void count_call(const struct call_start *c, unsigned long long *n,
		       unsigned long long *ns, unsigned long long *cpu_ns)
{
	if (!verbose)
		return;
	__atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(ns, now_ns() - c->ns, __ATOMIC_RELAXED);
	__atomic_add_fetch(cpu_ns, thread_cpu_ns() - c->cpu_ns, __ATOMIC_RELAXED);
}

static void *tdispatch_consumer(void *arg)
{
	struct tdispatch_lease_task lt[BATCH];
	char buf[BATCH * 64];
	struct call_start t0;
	uint64_t ver;
	unsigned int i;

	(void)arg;
	consumer_started();
	while (!__atomic_load_n(&run.stop, __ATOMIC_ACQUIRE)) {
		struct tdispatch_take tk = {
			.size = sizeof(tk), .timeout_ns = SEC / 100,
			.tasks = (uintptr_t)lt, .buf = (uintptr_t)buf,
			.max_tasks = BATCH, .buf_len = sizeof(buf),
		};
		struct tdispatch_complete c = { .size = sizeof(c) };

		call_begin(&t0);
		if (ioctl(run.t.fd, TDISPATCH_IOC_TAKE, &tk)) {
			if (errno != ETIMEDOUT)
				die("take", errno);
			continue;
		}
		count_call(&t0, &run.takes, &run.take_ns, &run.take_cpu_ns);
		for (i = 0; i < tk.nr; i++) {
			ver = 0;
			if (lt[i].payload_len == sizeof(ver))
				memcpy(&ver, buf + lt[i].payload_off, sizeof(ver));
			process(lt[i].id, ver);
		}
		c.batch = tk.batch;
		c.result = TDISPATCH_RESULT_SUCCESS;
		call_begin(&t0);
		if (ioctl(run.t.fd, TDISPATCH_IOC_COMPLETE, &c))
			die("complete", errno);
		count_call(&t0, &run.completes, &run.complete_ns, &run.complete_cpu_ns);
	}
	return NULL;
}

/* ---- producers -------------------------------------------------------------- */

struct producer {
	unsigned int index;
	unsigned long long rate, accepted;
	uint64_t rng;
	struct tdispatch_submit_task ut[TDISPATCH_SUBMIT_MAX];
	uint64_t pl[TDISPATCH_SUBMIT_MAX];
	unsigned int nut;
	struct conn *redis;
	unsigned int npipe;		/* changes sent, replies not read */
	unsigned long long cpu_ns;	/* its CPU time, at its end */
	pid_t tid;
	pthread_t th;
};

static struct producer prods[MAX_PRODUCERS];

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint32_t next_id(struct producer *p, unsigned long long k)
{
	switch (run.dist) {
	case D_RR:
		return (k + p->index * NR_OBJS / nr_prods) % NR_OBJS;
	case D_UNIFORM:
		return ((rng_next(&p->rng) >> 32) * NR_OBJS) >> 32;
	default:
		return zipf_seq[p->index][k % ZIPF_SEQ];
	}
}

/* A SUBMIT of the merge tasks gathered; they are all accepted or it dies. */
static void flush_merges(struct producer *p)
{
	struct tdispatch_submit s = {
		.size = sizeof(s), .tasks = (uintptr_t)p->ut, .count = p->nut,
		.task_size = sizeof(p->ut[0]),
	};

	if (!p->nut)
		return;
	if (ioctl(run.t.fd, TDISPATCH_IOC_SUBMIT, &s))
		die("submit", errno);
	if (s.accepted != s.count)
		die("submit refused", -p->ut[s.accepted].status);
	p->nut = 0;
}

static int change(struct producer *p, unsigned long long k)
{
	uint32_t id = next_id(p, k);
	struct obj *o = &objs[id];
	uint64_t t = 0, ver, zero = 0;
	int kick = 0, ret;

	if (!(k % SAMPLE_EVERY) && !__atomic_load_n(&o->stamp_ver, __ATOMIC_ACQUIRE))
		t = now_ns();
	ver = __atomic_add_fetch(&o->ver, 1, __ATOMIC_SEQ_CST);
	if (t && __atomic_compare_exchange_n(&o->stamp_ver, &zero, ver, 0, __ATOMIC_ACQ_REL,
					     __ATOMIC_ACQUIRE))
		__atomic_store_n(&o->stamp, t, __ATOMIC_RELEASE);
	switch (run.mode) {
	case M_COALESCER:
		if (!(__atomic_fetch_or(&run.dirty[id / 64], 1ULL << (id % 64), __ATOMIC_ACQ_REL) &
		      (1ULL << (id % 64))) &&
		    !__atomic_fetch_add(&run.ndirty, 1, __ATOMIC_ACQ_REL)) {
			uint64_t one = 1;

			if (write(run.efd, &one, sizeof(one)) < 0)
				die("eventfd write", errno);
		}
		break;
	case M_SLOTS:
		ret = tdl_slot_write(&run.slots, id, id, &ver, sizeof(ver));
		if (ret < 0)
			die("slot write", -ret);
		kick = ret;
		break;
	case M_REDIS: {
		char ids[24], vers[24];

		snprintf(ids, sizeof(ids), "%u", id);
		snprintf(vers, sizeof(vers), "%llu", (unsigned long long)ver);
		conn_cmd(p->redis, 5, "EVALSHA", redis_sha, "0", ids, vers);
		p->npipe++;
		break;
	}
	case M_MERGE:
		p->pl[p->nut] = ver;
		p->ut[p->nut] = (struct tdispatch_submit_task) {
			.id = id, .payload = (uintptr_t)&p->pl[p->nut],
			.payload_len = sizeof(ver), .flags = TDISPATCH_TASK_MERGE,
		};
		if (++p->nut == ARRAY_SIZE(p->ut))
			flush_merges(p);
		break;
	}
	p->accepted++;
	return kick;
}

static void *producer_fn(void *arg)
{
	struct producer *p = arg;
	unsigned long long k = 0, ticks = 0, now, due;
	struct timespec ts;
	int kick;

	__atomic_store_n(&p->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while ((now = now_ns()) < run.end) {
		due = (now - run.start) * p->rate / SEC;
		kick = 0;
		/* A producer behind catches up, but not past the offered time. */
		while (k < due && ((k & 255) || now_ns() < run.end))
			kick |= change(p, k++);
		if (run.mode == M_MERGE)
			flush_merges(p);
		if (run.mode == M_REDIS && p->npipe) {
			unsigned long long v;

			/* The tick's changes, pipelined, as RQ's enqueue_many does. */
			conn_flush(p->redis);
			while (p->npipe) {
				conn_reply(p->redis, &v);
				p->npipe--;
			}
		}
		if (kick) {
			int ret = tdl_kick(&run.t);

			if (ret < 0)
				die("kick", -ret);
		}
		now = run.start + ++ticks * TICK_NS;
		ts.tv_sec = now / SEC;
		ts.tv_nsec = now % SEC;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	p->cpu_ns = thread_cpu_ns();
	return NULL;
}

/* ---- one run ---------------------------------------------------------------- */

/*
 * Every thread's CPU time over a run (schedstat's first field, as
 * CLOCK_THREAD_CPUTIME_ID counts): the consumers, Redis, the kernel's
 * threads; not this one's, nor the producers', which give theirs as they
 * end (one may still be listed after its join).  threads_scan(1) notes
 * each thread's time at the start; threads_scan(0) sums what each ran
 * since, and all of what a thread begun since ran.  A thread that exits
 * between the two is lost.
 */
#define MAX_THREADS	4096

static struct {
	pid_t tid;
	unsigned long long ns;
} thread_starts[MAX_THREADS];
static unsigned int nr_starts;

static int is_producer(pid_t tid)
{
	unsigned int i;

	for (i = 0; i < nr_prods; i++)
		if (__atomic_load_n(&prods[i].tid, __ATOMIC_ACQUIRE) == tid)
			return 1;
	return 0;
}

/* What one thread ran, as threads_scan() counts it. */
static unsigned long long thread_ran(int at_start, pid_t tid, unsigned long long ns)
{
	unsigned int i;

	if (at_start) {
		/* One not noted would be counted whole at the end. */
		if (nr_starts == MAX_THREADS)
			die("threads_scan: too many threads", E2BIG);
		thread_starts[nr_starts].tid = tid;
		thread_starts[nr_starts++].ns = ns;
		return 0;
	}
	for (i = 0; i < nr_starts && thread_starts[i].tid != tid; i++)
		;
	/* Less than at the start: its id was taken again, by a new thread. */
	return i < nr_starts && ns >= thread_starts[i].ns ? ns - thread_starts[i].ns : ns;
}

static unsigned long long threads_scan(int at_start)
{
	pid_t self = syscall(SYS_gettid), tid;
	unsigned long long sum = 0, ns;
	struct dirent *pe, *te;
	char path[600];
	DIR *pd, *td;
	FILE *f;

	if (at_start)
		nr_starts = 0;
	pd = opendir("/proc");
	if (!pd)
		die("/proc", errno);
	while ((pe = readdir(pd))) {
		if (pe->d_name[0] < '1' || pe->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", pe->d_name);
		td = opendir(path);
		if (!td)
			continue;	/* gone meanwhile */
		while ((te = readdir(td))) {
			if (te->d_name[0] < '1' || te->d_name[0] > '9')
				continue;
			tid = atoi(te->d_name);
			if (tid == self || is_producer(tid))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", pe->d_name,
				 te->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			if (fscanf(f, "%llu", &ns) == 1)
				sum += thread_ran(at_start, tid, ns);
			fclose(f);
		}
		closedir(td);
	}
	closedir(pd);
	return sum;
}

/*
 * The check of threads_scan() before the runs: three threads each run
 * CHECK_BURN_NS of their own CPU clock between the two scans, one of
 * them also as much before the first, one begun after it; the rest of
 * the system's threads are counted too, within CHECK_SLACK_NS.  Each
 * miscount looked for (time before the first scan, a thread begun
 * since) is a whole burst.  Each sleeps after a burst: a running
 * thread's schedstat is brought up to date when it leaves its CPU.
 */
#define CHECK_BURN_NS	10000000ULL
#define CHECK_SLACK_NS	8000000ULL

struct burner {
	pthread_t thread;
	int burn_pre;
	sem_t pre, go, done, stop;
};

static void burn(void)
{
	unsigned long long end = thread_cpu_ns() + CHECK_BURN_NS;
	struct timespec nap = { 0, 2000000 };

	while (thread_cpu_ns() < end)
		;
	nanosleep(&nap, NULL);
}

static void *burner_fn(void *arg)
{
	struct burner *b = arg;

	if (b->burn_pre)
		burn();
	sem_post(&b->pre);
	sem_wait(&b->go);
	burn();
	sem_post(&b->done);
	sem_wait(&b->stop);
	return NULL;
}

static void burner_start(struct burner *b, int burn_pre)
{
	int err;

	b->burn_pre = burn_pre;
	sem_init(&b->pre, 0, 0);
	sem_init(&b->go, 0, 0);
	sem_init(&b->done, 0, 0);
	sem_init(&b->stop, 0, 0);
	err = pthread_create(&b->thread, NULL, burner_fn, b);
	if (err)
		die("counting check: pthread_create", err);
}

/* Return 0 if the count is right; if not, say so (the runs still go on). */
static int check_counting(void)
{
	unsigned long long got, want = 3 * CHECK_BURN_NS;
	struct burner b[3];	/* busy before too; there throughout; begun after */
	unsigned int i;

	burner_start(&b[0], 1);
	burner_start(&b[1], 0);
	sem_wait(&b[0].pre);
	sem_wait(&b[1].pre);
	threads_scan(1);
	sem_post(&b[0].go);
	sem_post(&b[1].go);
	burner_start(&b[2], 0);
	sem_post(&b[2].go);
	for (i = 0; i < 3; i++)
		sem_wait(&b[i].done);
	got = threads_scan(0);
	for (i = 0; i < 3; i++) {
		sem_post(&b[i].stop);
		pthread_join(b[i].thread, NULL);
	}
	printf("# counting check: threads busy %llu us, counted %llu us\n", want / 1000,
	       got / 1000);
	if (got >= want - want / 20 && got <= want + CHECK_SLACK_NS)
		return 0;
	printf("# FAIL: counting check: threads busy %llu us were counted as %llu us\n",
	       want / 1000, got / 1000);
	return 1;
}

struct result {
	unsigned long long accepted, processed, busy, threads, p50, p99, run_ns;
	unsigned int left;	/* samples never processed */
};

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static void setup(int mode)
{
	struct tdispatch_create c = {
		.size = sizeof(c), .max_buffer = 65536, .max_batch = BATCH,
		.workers = CONSUMERS, .max_input = 65536, .lease_ns = 60 * SEC,
	};
	int fd, ret;

	memset(run.dirty, 0, sizeof(run.dirty));
	run.ndirty = 0;
	if (mode == M_COALESCER) {
		run.efd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
		if (run.efd < 0)
			die("eventfd", errno);
	}
	if (mode == M_REDIS) {
		redis_start();
		redis_load();
	}
	if (mode != M_SLOTS && mode != M_MERGE)
		return;
	snprintf(c.name, sizeof(c.name), "tdfresh");
	fd = open("/dev/" TDISPATCH_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, TDISPATCH_IOC_CREATE, &c))
		die("create", errno);
	ret = tdl_adopt(&run.t, fd);
	if (!ret && mode == M_SLOTS)
		ret = tdl_slots_map(&run.t, &run.slots, NR_OBJS);
	if (ret)
		die("slots", -ret);
}

static void teardown(int mode, pthread_t *th, unsigned int n)
{
	uint64_t all = CONSUMERS;
	unsigned int i;

	__atomic_store_n(&run.stop, 1, __ATOMIC_RELEASE);
	if (mode == M_COALESCER && write(run.efd, &all, sizeof(all)) < 0)
		die("eventfd write", errno);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	sem_destroy(&run.cons_up);
	if (mode == M_COALESCER)
		close(run.efd);
	if (mode == M_SLOTS)
		tdl_slots_unmap(&run.slots);
	if (mode == M_SLOTS || mode == M_MERGE)
		tdl_close(&run.t);
	if (mode == M_REDIS) {
		for (i = 0; i < nr_prods; i++)
			conn_free(prods[i].redis);
		redis_stop();
	}
}

/* verbose: what the dispatcher counted and what the consumers' calls took. */
static void print_calls(const struct tdispatch_stats_user *st)
{
	fprintf(stderr, "# %s: accepted %llu done %llu overridden %llu batches %llu",
		mode_names[run.mode], (unsigned long long)st->accepted,
		(unsigned long long)st->done, (unsigned long long)st->overridden,
		(unsigned long long)st->batches);
	fprintf(stderr, " takes %llu (%llu ns each, %llu on a CPU)", run.takes,
		run.take_ns / (run.takes ?: 1), run.take_cpu_ns / (run.takes ?: 1));
	fprintf(stderr, " completes %llu (%llu ns each, %llu on a CPU)\n", run.completes,
		run.complete_ns / (run.completes ?: 1),
		run.complete_cpu_ns / (run.completes ?: 1));
}

/* Nothing left to process (or 2 s passed): 1, else 0. */
static int drained(void)
{
	unsigned long long end = now_ns() + 2 * SEC;
	struct tdispatch_stats_user st;

	for (;;) {
		if (run.mode == M_COALESCER) {
			if (!__atomic_load_n(&run.ndirty, __ATOMIC_ACQUIRE))
				return 1;
		} else if (run.mode == M_REDIS) {
			unsigned long long n = 1;

			conn_cmd(prods[0].redis, 2, "SCARD", "d");
			conn_flush(prods[0].redis);
			conn_reply(prods[0].redis, &n);
			if (!n)
				return 1;
		} else {
			st = (struct tdispatch_stats_user) { .size = sizeof(st) };
			if (ioctl(run.t.fd, TDISPATCH_IOC_STATS, &st))
				die("stats", errno);
			if (!(st.queued + st.delayed + st.pending + st.in_flight)) {
				run.st = st;
				return 1;
			}
		}
		if (now_ns() > end)
			return 0;
		usleep(200);
	}
}

/*
 * Samples no processing reflected: with a payload per change, two
 * producers' changes of an object can reach the dispatcher out of order,
 * and the payload processed last be older than the object's newest.
 */
static unsigned int samples_left(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < NR_OBJS; i++)
		n += !!__atomic_load_n(&objs[i].stamp, __ATOMIC_ACQUIRE);
	return n;
}

/*
 * verbose: the CPUs' busy share over a run (@busy_pct), the context
 * switches on every CPU (@sw), and, from @cs0 to @cs1 (NULL: unknown), the
 * consumers' time on a CPU, runnable without one and blocked, out of
 * @cons_ns, and how many times they were put on a CPU.
 */
static void print_sched(int mode, int dist, unsigned long long rate,
			unsigned long long busy_pct, unsigned long long sw,
			const unsigned long long *cs0, const unsigned long long *cs1,
			unsigned long long cons_ns)
{
	unsigned long long on, wait;

	fprintf(stderr, "# %s %s %llu/s: CPUs %llu%% busy, %llu context switches", mode_names[mode],
		dist_names[dist], rate, busy_pct, sw);
	if (!cs0 || !cons_ns) {
		fprintf(stderr, "\n");
		return;
	}
	on = cs1[0] - cs0[0];
	wait = cs1[1] - cs0[1];
	fprintf(stderr, "; consumers %llu%% on a CPU, %llu%% runnable, ", 100 * on / cons_ns,
		100 * wait / cons_ns);
	fprintf(stderr, "%llu%% blocked, %llu times on a CPU\n",
		on + wait < cons_ns ? 100 * (cons_ns - on - wait) / cons_ns : 0, cs1[2] - cs0[2]);
}

static void run_one(int mode, int dist, unsigned long long rate, struct result *r)
{
	pthread_t th[CONSUMERS];
	unsigned long long b0, t0, b1, t1, end, sw, cs0[3], cs1[3], ran;
	int sched_ok = 0;
	unsigned int i, nc = 0;

	memset(objs, 0, sizeof(objs));
	memset(r, 0, sizeof(*r));
	run.mode = mode;
	run.dist = dist;
	run.stop = 0;
	run.processed = 0;
	run.nlat = 0;
	run.takes = 0;
	run.take_ns = 0;
	run.take_cpu_ns = 0;
	run.completes = 0;
	run.complete_ns = 0;
	run.complete_cpu_ns = 0;
	run.cons_started = 0;
	memset(run.cons_tid, 0, sizeof(run.cons_tid));
	memset(&run.st, 0, sizeof(run.st));
	sem_init(&run.cons_up, 0, 0);
	setup(mode);
	for (nc = 0; mode != M_NONE && nc < CONSUMERS; nc++)
		if (pthread_create(&th[nc], NULL, mode == M_COALESCER ? coalescer_consumer :
				   mode == M_REDIS ? redis_consumer : tdispatch_consumer, NULL))
			die("pthread_create", EAGAIN);
	/* verbose: the consumers' schedstat over the same time as the CPUs' */
	for (i = 0; verbose && i < nc; i++)
		while (sem_wait(&run.cons_up) && errno == EINTR)
			;
	memset(prods, 0, sizeof(prods));
	threads_scan(1);
	cpu_ticks(&b0, &t0);
	sched_ok = verbose && consumers_sched(nc, cs0);
	sw = verbose ? context_switches() : 0;
	run.start = now_ns();
	run.end = run.start + RUN_NS;
	for (i = 0; i < nr_prods; i++) {
		prods[i] = (struct producer) {
			.index = i, .rate = (rate + nr_prods - 1 - i) / nr_prods,
			.rng = 0x9e3779b97f4a7c15ULL * (i + 1 + run.start),
		};
		if (mode == M_REDIS)
			prods[i].redis = redis_conn();
		if (pthread_create(&prods[i].th, NULL, producer_fn, &prods[i]))
			die("pthread_create", EAGAIN);
	}
	for (i = 0; i < nr_prods; i++) {
		pthread_join(prods[i].th, NULL);
		r->accepted += prods[i].accepted;
	}
	/* Work done within the offered load's time. */
	r->processed = __atomic_load_n(&run.processed, __ATOMIC_ACQUIRE);
	if (mode != M_NONE && !drained())
		fprintf(stderr, "tdfresh: %s %s rate %llu: not drained in 2 s\n",
			mode_names[mode], dist_names[dist], rate);
	end = now_ns();
	cpu_ticks(&b1, &t1);
	ran = threads_scan(0);
	for (i = 0; i < nr_prods; i++)
		ran += prods[i].cpu_ns;
	sched_ok = sched_ok && consumers_sched(nc, cs1);
	sw = verbose ? context_switches() - sw : 0;
	if (mode != M_NONE)
		r->left = samples_left();
	teardown(mode, th, nc);
	/* After the consumers' exit: their last calls are counted; not if never drained. */
	if (verbose && (mode == M_SLOTS || mode == M_MERGE) && run.st.size)
		print_calls(&run.st);
	if (verbose)
		print_sched(mode, dist, rate, (b1 - b0) * 100 / (t1 - t0 ?: 1), sw,
			    sched_ok ? cs0 : NULL, cs1, nc * (end - run.start));
	r->run_ns = end - run.start;
	r->busy = (b1 - b0) * SEC / (sysconf(_SC_CLK_TCK) ?: 100);	/* ns */
	r->threads = ran;
	run.nlat = run.nlat < LAT_MAX ? run.nlat : LAT_MAX;
	if (run.nlat) {
		qsort(run.lat, run.nlat, sizeof(run.lat[0]), cmp_ull);
		r->p50 = run.lat[run.nlat / 2];
		r->p99 = run.lat[run.nlat * 99 / 100];
	}
}

/* ---- rounds ----------------------------------------------------------------- */

static struct result res[NR_D][NR_RATES][NR_MODES][MAX_ROUNDS];

/* The threads' CPU time per accepted change, less the none mode's. */
static unsigned long long cpu_ns(const struct result *r, const struct result *none)
{
	return (r->threads > none->threads ? r->threads - none->threads : 0) / (r->accepted ?: 1);
}

/* The same from every CPU's busy time: pacing beside work takes less of it. */
static unsigned long long busy_ns(const struct result *r, const struct result *none)
{
	return (r->busy > none->busy ? r->busy - none->busy : 0) / (r->accepted ?: 1);
}

static unsigned long long med(unsigned long long *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_ull);
	return v[n / 2];
}

static void zipf_fill(void)
{
	static double cdf[NR_OBJS];
	double total = 0;
	uint64_t s = 12345;
	unsigned int p, i;

	for (i = 0; i < NR_OBJS; i++)
		cdf[i] = total += 1.0 / (i + 1);
	for (p = 0; p < MAX_PRODUCERS; p++)
		for (i = 0; i < ZIPF_SEQ; i++) {
			double r = (rng_next(&s) >> 11) * (1.0 / 9007199254740992.0) * total;
			unsigned int lo = 0, hi = NR_OBJS - 1;

			while (lo < hi) {
				unsigned int mid = (lo + hi) / 2;

				if (cdf[mid] > r)
					hi = mid;
				else
					lo = mid + 1;
			}
			zipf_seq[p][i] = (uint32_t)(((uint64_t)lo * 2654435761ULL) % NR_OBJS);
		}
}

static int fresh(const struct result *r, unsigned long long rate)
{
	return r->p99 <= CAP_SLACK_NS && r->accepted * SEC / RUN_NS * 100 >= rate * 95;
}

static unsigned long long capacity(int mode)
{
	unsigned long long lo = 0, hi, rate = 100000;
	struct result r;
	unsigned int i;

	for (;;) {
		run_one(mode, D_UNIFORM, rate, &r);
		if (!fresh(&r, rate))
			break;
		lo = rate;
		if (rate >= 6400000)
			return lo;
		rate *= 2;
	}
	hi = rate;
	/* Not even 100k/s: down a halving ladder, to a sixty-fourth of it. */
	while (!lo && rate > 100000 / 64) {
		rate /= 2;
		run_one(mode, D_UNIFORM, rate, &r);
		if (fresh(&r, rate))
			lo = rate;
		else
			hi = rate;
	}
	for (i = 0; i < 2 && lo; i++) {
		rate = (lo + hi) / 2;
		run_one(mode, D_UNIFORM, rate, &r);
		if (fresh(&r, rate))
			lo = rate;
		else
			hi = rate;
	}
	return lo;
}

/* One mode's medians at one rate and distribution: a row and a BENCH line. */
static void report(unsigned int d, unsigned int ri, unsigned int m, unsigned int rounds)
{
	unsigned long long acc[MAX_ROUNDS], proc[MAX_ROUNDS], cpu[MAX_ROUNDS], busy[MAX_ROUNDS];
	unsigned long long p50[MAX_ROUNDS], p99[MAX_ROUNDS];
	unsigned int i, left = 0;

	for (i = 0; i < rounds; i++) {
		struct result *r = &res[d][ri][m][i];

		acc[i] = r->accepted * SEC / RUN_NS;
		proc[i] = r->processed * SEC / RUN_NS;
		left += r->left;
		cpu[i] = cpu_ns(r, &res[d][ri][M_NONE][i]);
		busy[i] = busy_ns(r, &res[d][ri][M_NONE][i]);
		p50[i] = r->p50 / 1000;
		p99[i] = r->p99 / 1000;
	}
	printf("| %s | %llu | %s | %llu | %llu | %llu | %llu | %llu | %llu | %u |\n",
	       dist_names[d], rates[ri], mode_names[m], med(acc, rounds), med(proc, rounds),
	       med(cpu, rounds), med(busy, rounds), med(p50, rounds), med(p99, rounds), left);
	printf("BENCH user %s trivial ids=%s/%u rate=%llu accepted_per_s=%llu", mode_names[m],
	       dist_names[d], NR_OBJS, rates[ri], med(acc, rounds));
	printf(" processed_per_s=%llu cpu_ns=%llu busy_ns=%llu", med(proc, rounds),
	       med(cpu, rounds), med(busy, rounds));
	printf(" stale_p50_us=%llu stale_p99_us=%llu\n", med(p50, rounds), med(p99, rounds));
}

/* Round @i of every mode in @modes at one distribution and rate. */
static void run_modes(unsigned long modes, unsigned int d, unsigned int ri, unsigned int i)
{
	unsigned int m;

	for (m = 0; m < NR_MODES; m++)
		if (modes & (1UL << m))
			run_one(m, d, rates[ri], &res[d][ri][m][i]);
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 5;
	/* Modes to run, a mask (none always runs): 2 coalescer, 4 slots, 8 merge, 16 redis. */
	unsigned long modes = (argc > 2 ? strtoul(argv[2], NULL, 0) : ~0UL) | 1;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int i, d, ri, m;
	int failed;

	verbose = argc > 3 && atoi(argv[3]);

	nr_prods = n < 1 ? 1 : n > (long)MAX_PRODUCERS ? MAX_PRODUCERS : n;
	if (!rounds || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: tdfresh [rounds (1-%u) [modes [verbose]]]\n", MAX_ROUNDS);
		return 2;
	}
	zipf_fill();
	failed = check_counting();
	for (i = 0; i < rounds; i++)
		for (d = 0; d < NR_D; d++)
			for (ri = 0; ri < NR_RATES; ri++)
				run_modes(modes, d, ri, i);
	printf("# %u producers, %u consumers, %u objects, 1 s a run, %lu rounds, medians\n",
	       nr_prods, CONSUMERS, NR_OBJS, rounds);
	printf("| ids | offered/s | mode | accepted/s | processed/s | cpu_ns | busy_ns |");
	printf(" p50 us | p99 us | samples never processed, all rounds |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (d = 0; d < NR_D; d++)
		for (ri = 0; ri < NR_RATES; ri++)
			for (m = 1; m < NR_MODES; m++)
				if (modes & (1UL << m))
					report(d, ri, m, rounds);
	for (m = 1; m < NR_MODES; m++)
		if (modes & (1UL << m))
			printf("BENCH capacity user %s trivial ids=uniform/%u max_rate=%llu\n",
			       mode_names[m], NR_OBJS, capacity(m));
	return failed;
}
