// SPDX-License-Identifier: GPL-2.0
/*
 * tdbench: what a vector, and the shared slots, buy through /dev/tdispatch.
 *
 * For vectors of 1, 16, 256 and 1024 tasks per SUBMIT, producer threads
 * submit TASKS tasks between them to a dispatcher of their own file while
 * a no-op worker thread takes and completes batches of up to 1024.  Six
 * workloads: hot (ids 0 to 1023, so a newer task replaces a pending one)
 * and cold (every id distinct), each with one producer per CPU and with
 * one producer; then both with a producer per CPU and every task flagged
 * TDISPATCH_TASK_MERGE (hot-merge, cold-merge); last, both with a producer
 * per CPU writing its tasks into the file's shared slots (one slot an id,
 * tdl_slot_write()) with a KICK owed at most once per vector's worth of
 * writes instead of a SUBMIT (hot-slots, cold-slots).  processed/s is the
 * tasks the worker processed (ended done: a submission merged into a
 * waiting task is no work done) over the time from the first SUBMIT to
 * the last outcome (the last COMPLETE after which nothing is queued,
 * pending or in flight); accepted/s the submissions accepted over the
 * same time.  It is a closed loop, for capacity: producers submit as fast
 * as they can.  Workloads
 * and vector sizes are run in interleaved rounds and the medians, with min
 * and max, printed, beside the submitting side's own rate (tasks over the
 * time until the last SUBMIT returned: what bounds the whole when it is
 * close to it), the CPU time the producers and the worker used per task,
 * and the share of the producers' time they ran (at 100% the submit path
 * bounds them; below, the engine's threads, with which they share the
 * CPUs, preempted them), and the share of the tasks that ended overridden.
 * A run that loses, drops or fails a task fails.  Then the floor of the
 * call: ns per task of vectors whose tasks are all refused before anything
 * is allocated.  Then threads blocked in TAKE on one file (1, 4 and 16,
 * with 16 leases allowed in every case): their CPU per task, the tasks
 * per batch, and the tasks of the least and most served of them against
 * an even share.  Last, one line per size and workload, and per taker count:
 *
 *   BENCH user tdispatch <workload> ids=<rr/1024|distinct> rate=max vector=<n>
 *	producers=<n> accepted_per_s=<x> processed_per_s=<y>
 *   BENCH user takers threads=<n> worker_cpu_ns_per_task=<x>
 *	tasks_per_batch_x100=<b> least_pm=<y> most_pm=<z>
 *
 * usage: tdbench [rounds [tasks]]   (default 11 rounds of 65536 tasks, the most)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include <linux/tdispatch.h>
#include "libtdispatch.h"

#define MAX_ROUNDS	15
#define MAX_PRODUCERS	64
#define MAX_TASKS	65536
#define BATCH		1024
#define HOT_IDS		1024
/*
 * Writes to hot slots cost so little that 65536 of them last a few ms:
 * that workload writes this many times as many, for a steadier figure.
 */
#define SLOT_WRITES	16
#define SEC		1000000000ULL

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const unsigned int vectors[] = { 1, 16, 256, 1024 };
#define NR_VECTORS	ARRAY_SIZE(vectors)

static const struct workload {
	const char *name;
	int hot;
	int per_cpu;
	int merge;		/* TDISPATCH_TASK_MERGE */
	int slots;		/* shared slots and KICK instead of SUBMIT */
} workloads[] = {
	{ "hot", 1, 1, 0, 0 },	/* the target's */
	{ "cold", 0, 1, 0, 0 },
	{ "hot", 1, 0, 0, 0 },
	{ "cold", 0, 0, 0, 0 },
	{ "hot-merge", 1, 1, 1, 0 },
	{ "cold-merge", 0, 1, 1, 0 },
	{ "hot-slots", 1, 1, 0, 1 },
	{ "cold-slots", 0, 1, 0, 1 },
};

#define NR_WORKLOADS	ARRAY_SIZE(workloads)

static unsigned int tasks = 65536;
static unsigned int nr_cpus;

struct run {
	int fd;
	unsigned int vec;
	int hot;
	int merge;
	struct tdl_slots *slots;	/* or NULL: SUBMIT */
	unsigned int producers;
	pthread_barrier_t start;
	int submitted;			/* every producer returned: atomic */
	unsigned long long last_ns;	/* the last outcome */
	unsigned long long cpu_ns;	/* the worker thread's */
	int err;
};

struct producer {
	struct run *r;
	unsigned int nr;
	pthread_t th;
	unsigned long long first;	/* its first id */
	unsigned int slot;		/* its first slot, when cold */
	unsigned long long cpu_ns;
	unsigned long long t0, t1;	/* before its first SUBMIT, after its last */
	int err;
};

/* A figure's median, min and max over the rounds, per workload and vector size. */
struct fig {
	unsigned long long v[MAX_ROUNDS];
};

static unsigned long long clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

static unsigned long long now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "tdbench: %s: %s\n", what, strerror(err));
	exit(1);
}

/* A file of its own with the dispatcher @c. */
static int open_dispatcher(struct tdispatch_create *c)
{
	int fd = open("/dev/" TDISPATCH_DEV_NAME, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open", errno);
	if (ioctl(fd, TDISPATCH_IOC_CREATE, c))
		die("create", errno);
	return fd;
}

/* Nothing queued, pending or in flight: every accepted task has its outcome. */
static int quiescent(int fd, struct tdispatch_stats_user *st)
{
	*st = (struct tdispatch_stats_user) { .size = sizeof(*st) };
	if (ioctl(fd, TDISPATCH_IOC_STATS, st))
		die("stats", errno);
	return !(st->queued + st->delayed + st->pending + st->in_flight);
}

/*
 * One TAKE of up to @max tasks into @lt and @buf (64 bytes a task), waiting
 * 10 ms at most, and the COMPLETE of what it took: the number of tasks
 * processed, 0 if none came, or -errno.
 */
static int take_complete(int fd, struct tdispatch_lease_task *lt, char *buf, unsigned int max)
{
	struct tdispatch_take tk = {
		.size = sizeof(tk), .timeout_ns = SEC / 100,
		.tasks = (unsigned long)lt, .buf = (unsigned long)buf,
		.max_tasks = max, .buf_len = max * 64,
	};
	struct tdispatch_complete c = { .size = sizeof(c) };

	if (ioctl(fd, TDISPATCH_IOC_TAKE, &tk))
		return errno == ETIMEDOUT ? 0 : -errno;
	c.batch = tk.batch;
	c.result = TDISPATCH_RESULT_SUCCESS;
	if (ioctl(fd, TDISPATCH_IOC_COMPLETE, &c))
		return -errno;
	return tk.nr;
}

/*
 * The no-op worker: take and complete until the producers are done and
 * nothing is left.  A TAKE's timeout only ends a wait with nothing to take,
 * which happens at the end (or while the producers fill the first batch).
 */
static void *worker(void *arg)
{
	static struct tdispatch_lease_task lt[BATCH];
	static char buf[BATCH * 64];
	struct tdispatch_stats_user st;
	struct run *r = arg;
	int n;

	for (;;) {
		n = take_complete(r->fd, lt, buf, BATCH);
		if (n < 0) {
			r->err = -n;
			break;
		}
		if (n)
			r->last_ns = now_ns();
		if (__atomic_load_n(&r->submitted, __ATOMIC_ACQUIRE) && quiescent(r->fd, &st))
			break;
	}
	r->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/*
 * Into the shared slots, a KICK after each @r->vec writes if one of them
 * marked its slot: one slot an id, a hot id's shared by the producers.
 */
static void produce_slots(struct producer *p, struct run *r)
{
	unsigned long long payload, n;
	unsigned int i, j, count;
	int owed, ret;

	for (i = 0; i < p->nr; i += r->vec) {
		count = r->vec < p->nr - i ? r->vec : p->nr - i;
		owed = 0;
		for (j = 0; j < count; j++) {
			n = p->first + i + j;
			payload = n;
			ret = tdl_slot_write(r->slots, r->hot ? n % HOT_IDS : p->slot + i + j,
					     r->hot ? n % HOT_IDS : n, &payload, sizeof(payload));
			if (ret < 0) {
				p->err = -ret;
				return;
			}
			owed |= ret;
		}
		/* max_input and max_buffer hold every task: nothing is refused. */
		if (owed && ioctl(r->fd, TDISPATCH_IOC_KICK) < 0) {
			p->err = errno;
			return;
		}
	}
}

static void *produce(void *arg)
{
	struct producer *p = arg;
	struct run *r = p->r;
	unsigned long long payload = p->first, c0;
	struct tdispatch_submit_task *ut;
	unsigned int i, j;

	ut = calloc(r->vec, sizeof(*ut));
	if (!ut) {
		p->err = ENOMEM;
		return NULL;
	}
	pthread_barrier_wait(&r->start);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	p->t0 = now_ns();
	if (r->slots)
		produce_slots(p, r);
	for (i = 0; i < p->nr && !r->slots; i += r->vec) {
		struct tdispatch_submit s = {
			.size = sizeof(s), .tasks = (unsigned long)ut,
			.count = r->vec < p->nr - i ? r->vec : p->nr - i,
			.task_size = sizeof(ut[0]),
		};

		for (j = 0; j < s.count; j++) {
			unsigned long long n = p->first + i + j;

			ut[j] = (struct tdispatch_submit_task) {
				.id = r->hot ? n % HOT_IDS : n,
				.payload = (unsigned long)&payload,
				.payload_len = sizeof(payload),
				.flags = r->merge ? TDISPATCH_TASK_MERGE : 0,
			};
		}
		/* max_input and max_buffer hold every task (MAX_TASKS): nothing is refused. */
		if (ioctl(r->fd, TDISPATCH_IOC_SUBMIT, &s)) {
			p->err = errno;
			break;
		}
		if (s.accepted != s.count) {
			p->err = -ut[0].status;
			break;
		}
	}
	p->t1 = now_ns();
	p->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
	free(ut);
	return NULL;
}

/*
 * One run: processed/s with @vec tasks per SUBMIT; @accepted_s: accepted/s;
 * @sub: the submitting side's rate, @scpu and @wcpu: the producers' and
 * the worker's CPU ns per accepted task (the kernel's threads not counted),
 * @busy: the share of their time (first SUBMIT to last) the producers ran,
 * in thousandths.
 */
static unsigned int producers(const struct workload *w)
{
	return w->per_cpu ? nr_cpus : 1;
}

/* The tasks of a run of @w. */
static unsigned int run_tasks(const struct workload *w)
{
	return w->slots && w->hot ? tasks * SLOT_WRITES : tasks;
}

static unsigned long long run_once(unsigned int vec, const struct workload *w,
				   unsigned long long *accepted_s,
				   unsigned long long *sub, unsigned long long *scpu,
				   unsigned long long *wcpu, unsigned long long *busy,
				   unsigned long long *merged)
{
	struct tdispatch_create c = {
		.size = sizeof(c), .max_buffer = 65536, .max_batch = BATCH,
		.workers = 1, .max_input = 65536, .lease_ns = 60 * SEC,
	};
	struct producer p[MAX_PRODUCERS] = { };
	struct run r = { .vec = vec, .hot = w->hot, .merge = w->merge };
	unsigned long long t0 = ~0ULL, t1 = 0, acc, cpu = 0;
	struct tdispatch_stats_user st;
	struct tdl_slots slots;
	unsigned int i, slot = 0;
	struct tdl t;
	pthread_t th;
	unsigned int n = run_tasks(w);
	int err;

	r.producers = producers(w);
	snprintf(c.name, sizeof(c.name), "tdbench-%u", vec);
	r.fd = open_dispatcher(&c);
	if (w->slots) {
		/* One slot an id: 1024 hot ones, or one a task rounded up. */
		err = tdl_adopt(&t, r.fd);
		if (!err)
			err = tdl_slots_map(&t, &slots, w->hot ? HOT_IDS :
					    (tasks + TDISPATCH_SLOTS_MIN - 1) /
					    TDISPATCH_SLOTS_MIN * TDISPATCH_SLOTS_MIN);
		if (err)
			die("shared slots", -err);
		r.slots = &slots;
	}
	pthread_barrier_init(&r.start, NULL, r.producers + 1);
	for (i = 0; i < r.producers; i++) {
		p[i].r = &r;
		p[i].nr = n / r.producers + (i < n % r.producers);
		p[i].first = (unsigned long long)i * n;
		p[i].slot = slot;
		slot += p[i].nr;
		err = pthread_create(&p[i].th, NULL, produce, &p[i]);
		if (err)
			die("pthread_create", err);
	}
	err = pthread_create(&th, NULL, worker, &r);
	if (err)
		die("pthread_create", err);
	pthread_barrier_wait(&r.start);
	for (i = 0; i < r.producers; i++) {
		pthread_join(p[i].th, NULL);
		if (p[i].err)
			die("a producer", p[i].err);
		cpu += p[i].cpu_ns;
		t0 = p[i].t0 < t0 ? p[i].t0 : t0;
		t1 = p[i].t1 > t1 ? p[i].t1 : t1;
	}
	__atomic_store_n(&r.submitted, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	if (r.err)
		die("worker", r.err);
	quiescent(r.fd, &st);
	if (r.slots)
		tdl_slots_unmap(r.slots);
	close(r.fd);
	pthread_barrier_destroy(&r.start);
	/*
	 * Every task accepted, and each ended done or merged into a newer one;
	 * with slots, every write counted once, in slot_writes.
	 */
	acc = st.accepted;
	if ((r.slots ? st.slot_writes != n : acc != n) || st.done + st.overridden != acc)
		die("a task was lost, dropped or failed", EPROTO);
	acc = n;
	*sub = acc * SEC / (t1 - t0 ? t1 - t0 : 1);
	*scpu = cpu / acc;
	*wcpu = r.cpu_ns / acc;
	*busy = cpu * 1000 / (r.producers * (t1 - t0 ? t1 - t0 : 1));
	/* What never became a task of its own that was processed. */
	*merged = (acc - st.done) * 1000 / acc;
	/* The last outcome may come before the last SUBMIT returns. */
	if (r.last_ns < t1)
		r.last_ns = t1;
	*accepted_s = acc * SEC / (r.last_ns - t0 ? r.last_ns - t0 : 1);
	/* Work done: the tasks the worker processed, never the merged ones. */
	return st.done * SEC / (r.last_ns - t0 ? r.last_ns - t0 : 1);
}

/*
 * The floor of a SUBMIT: ns per task for a vector of @vec tasks that are
 * all refused (an unknown flag: EINVAL, counted) before any is allocated,
 * so what is left is the call, the copy of each element and its status
 * written back.
 */
static unsigned long long floor_ns(unsigned int vec)
{
	struct tdispatch_create c = {
		.size = sizeof(c), .max_buffer = 1024, .max_batch = 1, .workers = 1,
		.max_input = 1024, .lease_ns = 60 * SEC,
	};
	static struct tdispatch_submit_task ut[BATCH];
	unsigned long long payload = 0, t0;
	unsigned int i, j;
	int fd;

	snprintf(c.name, sizeof(c.name), "tdbench-floor");
	fd = open_dispatcher(&c);
	for (j = 0; j < vec; j++)
		ut[j] = (struct tdispatch_submit_task) {
			.id = j, .payload = (unsigned long)&payload,
			.payload_len = sizeof(payload), .flags = 1U << 31,
		};
	t0 = now_ns();
	for (i = 0; i < tasks; i += vec) {
		struct tdispatch_submit s = {
			.size = sizeof(s), .tasks = (unsigned long)ut, .count = vec,
			.task_size = sizeof(ut[0]),
		};

		if (ioctl(fd, TDISPATCH_IOC_SUBMIT, &s))
			die("submit", errno);
		if (s.accepted || ut[0].status != -EINVAL)
			die("a task with an unknown flag", EPROTO);
	}
	t0 = now_ns() - t0;
	close(fd);
	return t0 / ((tasks + vec - 1) / vec * (unsigned long long)vec);
}

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Threads blocked in TAKE on one file: @n worker threads take and complete
 * batches of up to TAKERS_BATCH while this thread submits TAKERS_TASKS distinct
 * tasks a vector (one batch) at a time.  Each ready batch wakes one
 * waiter (an exclusive wait), so the workers' CPU per task should not
 * grow with @n, and the tasks should be shared out evenly.
 */
#define TAKERS_TASKS	64000
#define TAKERS_BATCH	16
#define MAX_TAKERS	16

struct taker {
	int fd;
	int *done;
	unsigned long long batches, tasks, cpu_ns;
	pthread_t th;
	int err;
};

static void *taker(void *arg)
{
	struct tdispatch_lease_task lt[TAKERS_BATCH];
	char buf[TAKERS_BATCH * 64];
	struct tdispatch_stats_user st;
	struct taker *k = arg;
	int n;

	for (;;) {
		n = take_complete(k->fd, lt, buf, TAKERS_BATCH);
		if (n < 0) {
			k->err = -n;
			break;
		}
		if (n) {
			k->batches++;
			k->tasks += n;
		}
		if (__atomic_load_n(k->done, __ATOMIC_ACQUIRE) && quiescent(k->fd, &st))
			break;
	}
	k->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/*
 * One run with @n takers: their CPU ns per task; @least and @most: the
 * tasks of the least and most served, per mille of an even share;
 * @per_batch: tasks per batch, in hundredths.
 */
static unsigned long long takers_once(unsigned int n, unsigned long long *least,
				      unsigned long long *most, unsigned long long *per_batch)
{
	struct tdispatch_create c = {
		.size = sizeof(c), .max_buffer = TAKERS_TASKS, .max_batch = TAKERS_BATCH,
		.workers = MAX_TAKERS, .max_input = TAKERS_TASKS, .lease_ns = 60 * SEC,
	};
	struct tdispatch_submit_task ut[TAKERS_BATCH];
	unsigned long long cpu = 0, batches = 0, taken = 0, lo = ~0ULL, hi = 0, pl = 0;
	struct taker k[MAX_TAKERS] = { };
	struct tdispatch_stats_user st;
	unsigned int i, j;
	int done = 0;

	snprintf(c.name, sizeof(c.name), "tdbench-takers");
	k[0].fd = open_dispatcher(&c);
	for (i = 0; i < n; i++) {
		k[i].fd = k[0].fd;
		k[i].done = &done;
		if (pthread_create(&k[i].th, NULL, taker, &k[i]))
			die("pthread_create", EAGAIN);
	}
	for (i = 0; i < TAKERS_TASKS; i += TAKERS_BATCH) {
		struct tdispatch_submit sub = {
			.size = sizeof(sub), .tasks = (unsigned long)ut,
			.count = TAKERS_BATCH, .task_size = sizeof(ut[0]),
		};

		for (j = 0; j < TAKERS_BATCH; j++)
			ut[j] = (struct tdispatch_submit_task) {
				.id = i + j, .payload = (unsigned long)&pl,
				.payload_len = sizeof(pl),
			};
		if (ioctl(k[0].fd, TDISPATCH_IOC_SUBMIT, &sub))
			die("submit", errno);
		if (sub.accepted != sub.count)
			die("submit", -ut[0].status);
	}
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	for (i = 0; i < n; i++) {
		pthread_join(k[i].th, NULL);
		if (k[i].err)
			die("taker", k[i].err);
		cpu += k[i].cpu_ns;
		batches += k[i].batches;
		taken += k[i].tasks;
		lo = k[i].tasks < lo ? k[i].tasks : lo;
		hi = k[i].tasks > hi ? k[i].tasks : hi;
	}
	quiescent(k[0].fd, &st);
	close(k[0].fd);
	if (taken != TAKERS_TASKS || st.done != TAKERS_TASKS)
		die("takers: a task was lost", EPROTO);
	*least = lo * n * 1000 / taken;
	*most = hi * n * 1000 / taken;
	*per_batch = taken * 100 / batches;
	return cpu / taken;
}

static unsigned long long median(struct fig *f, unsigned int rounds)
{
	qsort(f->v, rounds, sizeof(f->v[0]), cmp);
	return f->v[rounds / 2];
}

static struct fig res[NR_WORKLOADS][NR_VECTORS], sub[NR_WORKLOADS][NR_VECTORS],
		  accs[NR_WORKLOADS][NR_VECTORS],
		  scpu[NR_WORKLOADS][NR_VECTORS], wcpu[NR_WORKLOADS][NR_VECTORS],
		  ovr[NR_WORKLOADS][NR_VECTORS],
		  busy[NR_WORKLOADS][NR_VECTORS], floors[NR_VECTORS];

/* Sorts each figure: a median's v[0] and v[rounds - 1] are then min and max. */
static void table(unsigned int wl, unsigned int rounds)
{
	const struct workload *w = &workloads[wl];
	unsigned long long base = median(&res[wl][0], rounds);
	unsigned int v;

	printf("# %s: %u tasks of %s ids per run, %u producer(s), %u interleaved rounds, ",
	       w->name, run_tasks(w), w->hot ? "1024" : "distinct", producers(w), rounds);
	printf("a no-op worker taking up to %u per batch\n", BATCH);
	printf("| tasks per SUBMIT | processed/s median | min | max | vs 1 | accepted/s |");
	printf(" submitting side | producer CPU ns/accepted | producers ran |");
	printf(" worker CPU ns/accepted | overridden |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (v = 0; v < NR_VECTORS; v++) {
		unsigned long long m = median(&res[wl][v], rounds);

		printf("| %u | %llu | %llu | %llu | %.1fx | %llu | %llu | %llu | %.1f%% | %llu",
		       vectors[v], m, res[wl][v].v[0], res[wl][v].v[rounds - 1],
		       (double)m / (base ? base : 1), median(&accs[wl][v], rounds),
		       median(&sub[wl][v], rounds),
		       median(&scpu[wl][v], rounds), median(&busy[wl][v], rounds) / 10.0,
		       median(&wcpu[wl][v], rounds));
		printf(" | %.1f%% |\n", median(&ovr[wl][v], rounds) / 10.0);
	}
}

/* Worker CPU per batch and the spread of batches with 1, 4 and 16 takers. */
static void takers_table(unsigned int rounds)
{
	static const unsigned int nr[] = { 1, 4, 16 };
	struct fig cpu[ARRAY_SIZE(nr)], lo[ARRAY_SIZE(nr)], hi[ARRAY_SIZE(nr)];
	struct fig tpb[ARRAY_SIZE(nr)];
	unsigned int i, t;

	for (i = 0; i < rounds; i++)
		for (t = 0; t < ARRAY_SIZE(nr); t++)
			cpu[t].v[i] = takers_once(nr[t], &lo[t].v[i], &hi[t].v[i], &tpb[t].v[i]);
	printf("# threads blocked in TAKE on one file: %u tasks in batches of %u, %u rounds\n",
	       TAKERS_TASKS, TAKERS_BATCH, rounds);
	printf("| threads | worker CPU ns per task | tasks per batch | least served |");
	printf(" most served |\n|---|---|---|---|---|\n");
	for (t = 0; t < ARRAY_SIZE(nr); t++)
		printf("| %u | %llu | %.2f | %.1f%% | %.1f%% |\n", nr[t], median(&cpu[t], rounds),
		       median(&tpb[t], rounds) / 100.0, median(&lo[t], rounds) / 10.0,
		       median(&hi[t], rounds) / 10.0);
	for (t = 0; t < ARRAY_SIZE(nr); t++) {
		printf("BENCH user takers threads=%u worker_cpu_ns_per_task=%llu", nr[t],
		       median(&cpu[t], rounds));
		printf(" tasks_per_batch_x100=%llu", median(&tpb[t], rounds));
		printf(" least_pm=%llu most_pm=%llu\n", median(&lo[t], rounds),
		       median(&hi[t], rounds));
	}
}

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 0) : 11;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int v, i, wl;

	nr_cpus = n < 1 ? 1 : n > MAX_PRODUCERS ? MAX_PRODUCERS : n;
	if (argc > 2)
		tasks = strtoul(argv[2], NULL, 0);
	/* max_buffer and max_input hold every task: none is dropped or refused. */
	if (!rounds || rounds > MAX_ROUNDS || tasks < nr_cpus || tasks > MAX_TASKS) {
		fprintf(stderr, "usage: tdbench [rounds (1-%u) [tasks (%u-%u)]]\n", MAX_ROUNDS,
			nr_cpus, MAX_TASKS);
		return 2;
	}
	for (i = 0; i < rounds; i++)
		for (wl = 0; wl < NR_WORKLOADS; wl++)
			for (v = 0; v < NR_VECTORS; v++)
				res[wl][v].v[i] = run_once(vectors[v], &workloads[wl],
							   &accs[wl][v].v[i],
							   &sub[wl][v].v[i], &scpu[wl][v].v[i],
							   &wcpu[wl][v].v[i], &busy[wl][v].v[i],
							   &ovr[wl][v].v[i]);
	for (wl = 0; wl < NR_WORKLOADS; wl++)
		table(wl, rounds);
	/* The target's comparison: each workload's medians against one task per SUBMIT, hot. */
	printf("# processed/s against one task per SUBMIT on the hot workload");
	printf(" (a producer per CPU)\n");
	printf("| workload | 1 | 16 | 256 | 1024 |\n|---|---|---|---|---|\n");
	for (wl = 0; wl < NR_WORKLOADS; wl++) {
		printf("| %s, %u |", workloads[wl].name, producers(&workloads[wl]));
		for (v = 0; v < NR_VECTORS; v++)
			printf(" %.1fx |", (double)res[wl][v].v[rounds / 2] /
			       (res[0][0].v[rounds / 2] ?: 1));
		printf("\n");
	}
	for (i = 0; i < rounds; i++)
		for (v = 0; v < NR_VECTORS; v++)
			floors[v].v[i] = floor_ns(vectors[v]);
	printf("# the floor: ns per task of SUBMITs whose tasks are all refused");
	printf(" before allocation\n");
	printf("| tasks per SUBMIT | ns per task median | min | max |\n|---|---|---|---|\n");
	for (v = 0; v < NR_VECTORS; v++) {
		unsigned long long m = median(&floors[v], rounds);

		printf("| %u | %llu | %llu | %llu |\n", vectors[v], m, floors[v].v[0],
		       floors[v].v[rounds - 1]);
	}
	takers_table(rounds);
	for (wl = 0; wl < NR_WORKLOADS; wl++)
		for (v = 0; v < NR_VECTORS; v++) {
			printf("BENCH user tdispatch %s ids=%s rate=max vector=%u producers=%u",
			       workloads[wl].name, workloads[wl].hot ? "rr/1024" : "distinct",
			       vectors[v], producers(&workloads[wl]));
			printf(" accepted_per_s=%llu processed_per_s=%llu\n",
			       median(&accs[wl][v], rounds), median(&res[wl][v], rounds));
		}
	return 0;
}
