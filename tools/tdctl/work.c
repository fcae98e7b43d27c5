// SPDX-License-Identifier: GPL-2.0
/*
 * tdctl work: take batches, hand them to a command, complete them with
 * its result and its per-task verdicts.
 */
#include "tdctl.h"

/*
 * libtdispatch's worker holds the batch (w->lw.batch) and the verdicts of
 * single tasks, from --exec's $TDISPATCH_RESULTS file, until completion.
 */
struct worker {
	struct tdl_worker lw;
	const char *exec;
	__u32 result;
	unsigned long batches, tasks_seen, lost, own_verdicts;
	unsigned long results[ARRAY_SIZE(result_names)];
};

/* Take the next batch; 1 when the timeout passed, -1 on an error. */
static int work_take(struct worker *w, __u64 timeout_ms)
{
	int ret = tdl_take(&w->lw, timeout_ms * NSEC_PER_MSEC, 0);

	if (!ret)
		return 0;
	if (ret == -ETIMEDOUT)
		return 1;
	fail("work: take: %s%s", strerror(-ret), errno_hint(-ret));
	return -1;
}

/* The batch as "ID PAYLOAD" lines. */
static void write_batch(const struct worker *w, FILE *out)
{
	const struct tdl_batch *b = &w->lw.batch;
	const void *payload;
	__u32 i, len;

	for (i = 0; i < b->nr; i++) {
		payload = tdl_payload(b, i, &len);
		fprintf(out, "%llu ", ull(b->tasks[i].id));
		fwrite(payload, 1, len, out);
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
	struct tdl_batch *b = &w->lw.batch;
	__u32 i;

	for (i = 0; i < b->nr && b->tasks[i].id != id; i++)
		;
	if (result < 0 || i == b->nr) {
		fprintf(stderr, "tdctl: work: batch %llu: ignoring verdict '%llu %s'%s\n",
			ull(b->lease), ull(id), word,
			result < 0 ? ": not a result" : ": no such task in the batch");
		return;
	}
	tdl_set_result(b, i, result);
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
	snprintf(num, sizeof(num), "%llu", ull(w->lw.batch.lease));
	setenv("TDISPATCH_BATCH", num, 1);
	snprintf(num, sizeof(num), "%u", w->lw.batch.nr);
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

	/* A module without per-task results gets none: the batch's only. */
	rfd = w->lw.t->features & TDISPATCH_FEAT_RESULTS ? mkstemp(results) : -1;
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
		ull(w->lw.batch.lease), st);
	return st == EX_TEMPFAIL ? TDISPATCH_RESULT_TRANSIENT : TDISPATCH_RESULT_PERMANENT;
}

static int work_complete(struct worker *w, __u32 result)
{
	__u64 lease = w->lw.batch.lease;
	__u32 verdicts = w->lw.batch.nr_results;
	int ret;

	w->batches++;
	w->tasks_seen += w->lw.batch.nr;
	ret = tdl_complete(&w->lw, result);
	if (!ret) {
		w->results[result]++;
		w->own_verdicts += verdicts;
		return 0;
	}
	if (ret != -ENOENT)
		return fail("work: complete: %s%s", strerror(-ret), errno_hint(-ret));
	fail("work: batch %llu: its lease ran out before it was completed, so it is\n"
	     "       delivered again (create the dispatcher with a longer --lease-ms)",
	     ull(lease));
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

int cmd_work(int argc, char **argv)
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
	struct tdl *t;
	int fd, ret;

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
	fd = env_fd();
	if (fd < 0)
		return 1;
	t = td_lib(fd, "work");
	if (!t)
		return 1;
	ret = tdl_worker_init(&w.lw, t);
	if (ret)
		return fail("work: %s", strerror(-ret));
	signal(SIGPIPE, SIG_IGN);
	ret = work_loop(&w, count, timeout_ms);
	work_summary(&w);
	tdl_worker_free(&w.lw);
	return ret;
}
