/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The harness the API test modules share: a KTAP reporter in debugfs and
 * a recording processor, as Eureka's batcher tests have.  Included by
 * each test module; every definition is static.
 */
#ifndef _TD_RECORDER_H
#define _TD_RECORDER_H

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/tdispatch.h>
#include <linux/vmalloc.h>

#define WAIT_LIMIT	(60 * HZ)	/* an event that takes longer is a failure */
#define MAX_RECORDS	256
#define MAX_IDS		8192
#define SYNC_ID		U64_MAX		/* never submitted; see td_sync() */

/* ---- a small KTAP reporter ---------------------------------------------- */

static struct seq_buf ktap;
static char *ktap_buf;
static unsigned int ktap_cases;

struct tcase {
	const char *name;
	const char *skip;	/* why the case did not run, or NULL */
	int failures;
};

static inline __printf(2, 3) void t_log(struct tcase *t, const char *fmt, ...)
{
	char line[192];
	va_list args;

	va_start(args, fmt);
	vsnprintf(line, sizeof(line), fmt, args);
	va_end(args);
	seq_buf_printf(&ktap, "# %s: %s\n", t->name, line);
}

static inline bool t_check(struct tcase *t, bool ok, int line, const char *what,
			   long long a, long long b, bool eq)
{
	if (ok)
		return true;
	t->failures++;
	if (eq)
		t_log(t, "line %d: expected %s, got %lld and %lld", line, what, a, b);
	else
		t_log(t, "line %d: expected %s", line, what);
	return false;
}

#define T_EXPECT(t, cond) t_check(t, (cond), __LINE__, #cond, 0, 0, false)
#define T_EXPECT_EQ(t, a, b) ({						\
	long long __a = (a), __b = (b);					\
	t_check(t, __a == __b, __LINE__, #a " == " #b, __a, __b, true);	\
})

/* ---- the recording processor ---------------------------------------------- */

struct record {
	unsigned int nr;
	u64 first_id;
	unsigned long first_payload;
	unsigned int first_attempts;
	ktime_t submitted;
	ktime_t not_before;
	ktime_t deadline;
	ktime_t start;
	ktime_t end;
	pid_t pid;
	enum tdispatch_result result;
};

struct recorder {
	struct tdispatch *d;
	spinlock_t lock;		/* records, outcomes */
	wait_queue_head_t wait;
	struct record rec[MAX_RECORDS];
	unsigned int nr_rec;		/* batches begun */
	unsigned int nr_recorded;	/* of those, whose record is written */
	unsigned int outcome[TDISPATCH_NR_OUTCOMES];
	unsigned int released;
	unsigned long payload_of[MAX_IDS];	/* last processed payload per id */
	unsigned long *busy;		/* ids in a running batch */
	atomic_t overlaps;		/* an id in two running batches */
	atomic_t running;
	int max_running;
	/* behaviour */
	enum tdispatch_result (*decide)(struct recorder *r, struct tdispatch_batch *b,
					unsigned int nth);
	struct completion gate;		/* first batch waits here if gated */
	struct completion entered;	/* ... after saying it arrived */
	bool gated;
	unsigned int hold_until_running;	/* wait for this many concurrent */
	unsigned int process_ms;
	unsigned int free_payloads;	/* every n-th task gets a kmalloc'ed payload */
};

static enum tdispatch_result rec_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	struct recorder *r = tdispatch_priv(d);
	enum tdispatch_result res = TDISPATCH_RESULT_SUCCESS;
	unsigned int i, nth;
	int running;
	ktime_t start = ktime_get();

	running = atomic_inc_return(&r->running);
	spin_lock(&r->lock);
	nth = r->nr_rec++;
	r->max_running = max(r->max_running, running);
	spin_unlock(&r->lock);
	wake_up_all(&r->wait);

	for (i = 0; i < b->nr; i++) {
		u64 id = tdispatch_task_id(tdispatch_batch_task(b, i)) % MAX_IDS;

		if (test_and_set_bit(id, r->busy))
			atomic_inc(&r->overlaps);
	}
	if (r->gated && nth == 0) {
		complete(&r->entered);
		wait_for_completion_timeout(&r->gate, WAIT_LIMIT);
	}
	if (r->hold_until_running)
		wait_event_idle_timeout(r->wait, READ_ONCE(r->max_running) >=
				   r->hold_until_running, WAIT_LIMIT);
	if (r->process_ms)
		msleep(r->process_ms);
	if (r->decide)
		res = r->decide(r, b, nth);

	spin_lock(&r->lock);
	if (nth < MAX_RECORDS) {
		r->rec[nth] = (struct record) {
			.nr = b->nr,
			.first_id = tdispatch_task_id(b->tasks[0]),
			.first_payload = (unsigned long)tdispatch_task_payload(b->tasks[0]),
			.first_attempts = tdispatch_task_attempts(b->tasks[0]),
			.submitted = tdispatch_task_submitted(b->tasks[0]),
			.not_before = tdispatch_task_not_before(b->tasks[0]),
			.deadline = tdispatch_task_deadline(b->tasks[0]),
			.start = start,
			.end = ktime_get(),
			.pid = current->pid,
			.result = res,
		};
	}
	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *task = tdispatch_batch_task(b, i);
		u64 id = tdispatch_task_id(task) % MAX_IDS;

		r->payload_of[id] = (unsigned long)tdispatch_task_payload(task);
		clear_bit(id, r->busy);
	}
	r->nr_recorded++;
	spin_unlock(&r->lock);
	atomic_dec(&r->running);
	wake_up_all(&r->wait);
	return res;
}

static void rec_release(struct tdispatch *d, struct tdispatch_task *t,
			enum tdispatch_outcome outcome)
{
	struct recorder *r = tdispatch_priv(d);

	if (r->free_payloads)
		kfree(tdispatch_task_payload(t));
	spin_lock(&r->lock);
	r->outcome[outcome]++;
	r->released++;
	spin_unlock(&r->lock);
	wake_up_all(&r->wait);
}

static const struct tdispatch_ops rec_ops = {
	.process = rec_process,
	.release = rec_release,
};

static const struct tdispatch_config base_cfg __maybe_unused = {
	.name = "test",
	.max_buffer = 1024,
	.max_batch = 1,
	.max_delay_ns = 0,
	.workers = 1,
	.congestion_delay_ns = 10 * NSEC_PER_MSEC,
	.transient_delay_ns = 10 * NSEC_PER_MSEC,
	.max_input = 4096,
};

static struct recorder *rec_start(struct tcase *t, const struct tdispatch_config *cfg)
{
	struct recorder *r = kzalloc(sizeof(*r), GFP_KERNEL);

	if (!r)
		return NULL;
	r->busy = bitmap_zalloc(MAX_IDS, GFP_KERNEL);
	spin_lock_init(&r->lock);
	init_waitqueue_head(&r->wait);
	init_completion(&r->gate);
	init_completion(&r->entered);
	r->d = tdispatch_create(cfg, &rec_ops, r);
	if (!r->busy || IS_ERR(r->d)) {
		t_log(t, "cannot create dispatcher: %d", PTR_ERR_OR_ZERO(r->d));
		t->failures++;
		bitmap_free(r->busy);
		kfree(r);
		return NULL;
	}
	return r;
}

static inline void rec_free(struct recorder *r)
{
	bitmap_free(r->busy);
	kfree(r);
}

static inline unsigned int rec_count(struct recorder *r, enum tdispatch_outcome o)
{
	unsigned int n;

	spin_lock(&r->lock);
	n = r->outcome[o];
	spin_unlock(&r->lock);
	return n;
}

static inline bool rec_wait_released(struct tcase *t, struct recorder *r, unsigned int n)
{
	return T_EXPECT(t, wait_event_idle_timeout(r->wait, READ_ONCE(r->released) >= n,
					      WAIT_LIMIT));
}

static inline bool rec_wait_batches(struct tcase *t, struct recorder *r, unsigned int n)
{
	return T_EXPECT(t, wait_event_idle_timeout(r->wait, READ_ONCE(r->nr_rec) >= n &&
					      !atomic_read(&r->running), WAIT_LIMIT));
}

/* The accounting equation, on a live snapshot. */
static inline void check_stats(struct tcase *t, struct tdispatch_stats *st)
{
	T_EXPECT_EQ(t, st->accepted, st->queued + st->delayed + st->pending + st->in_flight +
		    st->done + st->failed + st->overridden + st->expired +
		    st->dropped + st->cancelled);
}

/*
 * Destroy, then check that every accepted task was released exactly once,
 * with the outcome the counters gave it.
 */
static inline void rec_finish(struct tcase *t, struct recorder *r,
			      enum tdispatch_destroy_mode mode)
{
	struct tdispatch_stats st;
	int ret;

	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	ret = tdispatch_destroy(r->d, mode, WAIT_LIMIT);
	T_EXPECT_EQ(t, ret, 0);
	/* After destroy nothing is queued, pending or in flight any more. */
	T_EXPECT_EQ(t, r->released, st.accepted);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_DONE] >= st.done);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_FAILED] +
		    r->outcome[TDISPATCH_OUTCOME_EXHAUSTED] >= st.failed);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_EXHAUSTED] >= st.exhausted);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_OVERRIDDEN] >= st.overridden);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_EXPIRED] >= st.expired);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_DROPPED] >= st.dropped);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_CANCELLED] >= st.cancelled);
	T_EXPECT_EQ(t, atomic_read(&r->overlaps), 0);
	rec_free(r);
}

static inline int submit(struct recorder *r, u64 id, unsigned long payload)
{
	return tdispatch_submit(r->d, id, (void *)payload, 0, GFP_KERNEL);
}

/* tdispatch_cancel() drains every earlier submission into the pending set. */
static inline void td_sync(struct tcase *t, struct recorder *r)
{
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, SYNC_ID), -ENOENT);
}

/* Gated: the first batch is in ->process() and stays there until opened. */
static inline void gate_wait_entered(struct tcase *t, struct recorder *r)
{
	T_EXPECT(t, wait_for_completion_timeout(&r->entered, WAIT_LIMIT));
}

/* Started gated: the first batch, id 100's, stays in ->process() until opened. */
static inline struct recorder *rec_start_gated(struct tcase *t, const struct tdispatch_config *cfg)
{
	struct recorder *r = rec_start(t, cfg);

	if (!r)
		return NULL;
	r->gated = true;
	T_EXPECT_EQ(t, submit(r, 100, 100), 0);
	gate_wait_entered(t, r);
	return r;
}

struct td_case {
	const char *name;
	void (*fn)(struct tcase *t);
};

#define CASE(f) { #f, test_##f }

#define KTAP_SIZE	(64 * 1024)

static struct dentry *td_test_dir;

static ssize_t results_read(struct file *f, char __user *buf, size_t len, loff_t *pos)
{
	return simple_read_from_buffer(buf, len, pos, ktap_buf, seq_buf_used(&ktap));
}

static const struct file_operations results_fops = {
	.owner = THIS_MODULE,
	.read = results_read,
	.llseek = default_llseek,
};

/* Run @cases at module load; their KTAP goes to debugfs. */
static int td_run_cases(const struct td_case *cases, unsigned int nr)
{
	unsigned int i, failed = 0;

	ktap_buf = vzalloc(KTAP_SIZE);
	if (!ktap_buf)
		return -ENOMEM;
	seq_buf_init(&ktap, ktap_buf, KTAP_SIZE);
	ktap_cases = nr;
	seq_buf_printf(&ktap, "KTAP version 1\n1..%u\n", ktap_cases);
	for (i = 0; i < nr; i++) {
		struct tcase t = { .name = cases[i].name };

		cases[i].fn(&t);
		failed += !!t.failures;
		seq_buf_printf(&ktap, "%s %u %s%s%s\n", t.failures ? "not ok" : "ok",
			       i + 1, t.name, t.skip ? " # SKIP " : "",
			       t.skip ?: "");
	}
	pr_info("%u of %u cases passed\n", ktap_cases - failed, ktap_cases);
	td_test_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("results", 0444, td_test_dir, NULL, &results_fops);
	return 0;
}

static void td_cases_exit(void)
{
	debugfs_remove_recursive(td_test_dir);
	vfree(ktap_buf);
}

#endif /* _TD_RECORDER_H */
