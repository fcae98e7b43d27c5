// SPDX-License-Identifier: GPL-2.0
/*
 * tdbench: what a vector buys through /dev/tdispatch.
 *
 * For vectors of 1, 16, 256 and 1024 tasks per SUBMIT, one thread submits
 * TASKS tasks of distinct ids to a dispatcher of its own file while a
 * no-op worker thread takes and completes batches of up to 1024; tasks/s
 * runs from the first SUBMIT to the last COMPLETE.  The vector sizes are
 * run in interleaved rounds (1 16 256 1024 1 16 ...) and the medians,
 * with min and max, printed, beside the submitting side's own rate (tasks
 * over the time until the last SUBMIT returned: what bounds the whole when
 * it is close to it) and the CPU time the submitting and the worker
 * threads used per task (a submitter whose CPU time is its wall time
 * never waited: the submit path bounds it; one with less was preempted by
 * the engine's threads, with which it shares the two CPUs), then one line
 * per size:
 *
 *   BENCH user vector=<n> tasks_per_s=<x>
 *
 * usage: tdbench [rounds [tasks]]   (default 11 rounds of 65536 tasks)
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

#define MAX_ROUNDS	15
#define BATCH		1024
#define SEC		1000000000ULL

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const unsigned int vectors[] = { 1, 16, 256, 1024 };
#define NR_VECTORS	ARRAY_SIZE(vectors)

static unsigned int tasks = 65536;

struct run {
	int fd;
	unsigned long long taken;
	unsigned long long cpu_ns;	/* the worker thread's */
	int err;
};

/* A figure's median, min and max over the rounds, per vector size. */
struct fig {
	unsigned long long v[MAX_ROUNDS];
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

static unsigned long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "tdbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The no-op worker: take and complete until every task was taken. */
static void *worker(void *arg)
{
	static struct tdispatch_ltask lt[BATCH];
	static char buf[BATCH * 64];
	struct run *r = arg;

	while (r->taken < tasks) {
		struct tdispatch_take tk = {
			.size = sizeof(tk), .timeout_ns = 10 * SEC,
			.tasks = (unsigned long)lt, .buf = (unsigned long)buf,
			.max_tasks = BATCH, .buf_len = sizeof(buf),
		};
		struct tdispatch_complete c = { .size = sizeof(c) };

		if (ioctl(r->fd, TDISPATCH_IOC_TAKE, &tk)) {
			r->err = errno;
			return NULL;
		}
		c.batch = tk.batch;
		c.result = TDISPATCH_RESULT_SUCCESS;
		if (ioctl(r->fd, TDISPATCH_IOC_COMPLETE, &c)) {
			r->err = errno;
			return NULL;
		}
		r->taken += tk.nr;
	}
	r->cpu_ns = thread_cpu_ns();
	return NULL;
}

/*
 * One run: tasks/s with @vec tasks per SUBMIT; @sub: the submitter's rate,
 * @scpu and @wcpu: the submitting and worker threads' CPU ns per task.
 */
static unsigned long long run_once(unsigned int vec, unsigned int round,
				   unsigned long long *sub, unsigned long long *scpu,
				   unsigned long long *wcpu)
{
	static struct tdispatch_utask ut[BATCH];
	struct tdispatch_create c = {
		.size = sizeof(c), .max_buffer = 65536, .max_batch = BATCH,
		.workers = 1, .max_input = 65536, .lease_ns = 60 * SEC,
	};
	unsigned long long payload = round, t0, t1, c0;
	struct run r = { 0 };
	pthread_t th;
	unsigned int i, j;

	r.fd = open("/dev/" TDISPATCH_DEV_NAME, O_RDWR | O_CLOEXEC);
	if (r.fd < 0)
		die("open");
	snprintf(c.name, sizeof(c.name), "tdbench-%u", vec);
	if (ioctl(r.fd, TDISPATCH_IOC_CREATE, &c))
		die("create");
	if (pthread_create(&th, NULL, worker, &r))
		die("pthread_create");
	t0 = now_ns();
	c0 = thread_cpu_ns();
	for (i = 0; i < tasks; i += vec) {
		struct tdispatch_submit s = {
			.size = sizeof(s), .tasks = (unsigned long)ut,
			.count = vec < tasks - i ? vec : tasks - i, .task_size = sizeof(ut[0]),
		};

		for (j = 0; j < s.count; j++)
			ut[j] = (struct tdispatch_utask) {
				.id = i + j, .payload = (unsigned long)&payload,
				.payload_len = sizeof(payload),
			};
		/* max_input and max_buffer hold every task: nothing is refused. */
		if (ioctl(r.fd, TDISPATCH_IOC_SUBMIT, &s))
			die("submit");
		if (s.accepted != s.count) {
			errno = -ut[0].status;
			die("a task was refused");
		}
	}
	*sub = (unsigned long long)tasks * SEC / (now_ns() - t0 ? now_ns() - t0 : 1);
	*scpu = (thread_cpu_ns() - c0) / tasks;
	pthread_join(th, NULL);
	*wcpu = r.cpu_ns / tasks;
	t1 = now_ns();
	if (r.err) {
		errno = r.err;
		die("worker");
	}
	close(r.fd);
	return r.taken * SEC / (t1 - t0 ? t1 - t0 : 1);
}

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long median(struct fig *f, unsigned int rounds)
{
	qsort(f->v, rounds, sizeof(f->v[0]), cmp);
	return f->v[rounds / 2];
}

int main(int argc, char **argv)
{
	static struct fig res[NR_VECTORS], sub[NR_VECTORS], scpu[NR_VECTORS], wcpu[NR_VECTORS];
	unsigned int rounds = argc > 1 ? atoi(argv[1]) : 11, v, i;
	unsigned long long base;

	if (argc > 2)
		tasks = atoi(argv[2]);
	if (!rounds || rounds > MAX_ROUNDS || !tasks)
		return 2;
	for (i = 0; i < rounds; i++)
		for (v = 0; v < NR_VECTORS; v++)
			res[v].v[i] = run_once(vectors[v], i, &sub[v].v[i], &scpu[v].v[i],
					       &wcpu[v].v[i]);
	printf("# %u tasks of distinct ids per run, %u interleaved rounds, ", tasks, rounds);
	printf("a no-op worker taking up to %u per batch\n", BATCH);
	printf("| tasks per SUBMIT | tasks/s median | min | max | vs 1 | submitting side |");
	printf(" submitter CPU ns/task | worker CPU ns/task |\n");
	printf("|---|---|---|---|---|---|---|---|\n");
	base = median(&res[0], rounds);
	for (v = 0; v < NR_VECTORS; v++) {
		unsigned long long m = median(&res[v], rounds);

		printf("| %u | %llu | %llu | %llu | %.1fx | %llu | %llu | %llu |\n", vectors[v],
		       m, res[v].v[0], res[v].v[rounds - 1], (double)m / (base ? base : 1),
		       median(&sub[v], rounds), median(&scpu[v], rounds),
		       median(&wcpu[v], rounds));
	}
	for (v = 0; v < NR_VECTORS; v++)
		printf("BENCH user vector=%u tasks_per_s=%llu\n", vectors[v], res[v].v[rounds / 2]);
	return 0;
}
