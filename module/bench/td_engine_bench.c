// SPDX-License-Identifier: GPL-2.0
/*
 * What does tdispatch cost against what a driver would write instead?  This
 * module runs one coalescing workload, in one boot, three ways:
 *
 *   tdispatch   tdispatch_submit() with a no-op ->process()
 *   queue_work  a work item allocated and queue_work()ed per task, on an
 *               unbound workqueue: no coalescing at all
 *   spin+hash   a spinlock, a hashtable of per-id entries and a FIFO; a
 *               submit for a pending id updates its entry, and one
 *               work_struct drains up to 64 entries per run
 *
 * One kthread per online CPU submits max_tasks tasks in all, over ids
 * random ids.  Every sample_every-th submission stamps its id's slot
 * (unless a stamp waits there already) just before the submit; the next
 * processing of that id takes the stamp and records the latency.  For
 * queue_work, where every task is processed on its own, only the stamped
 * task itself takes the stamp.
 *
 * It runs at load ("make bench"); the results are plain text in
 * /sys/kernel/debug/td_engine_bench/results.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/seq_buf.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/tdispatch.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

/* Named as td_timer_bench's, so that one BENCH_ARGS serves both. */
static unsigned int max_tasks = 200000;
module_param(max_tasks, uint, 0444);
MODULE_PARM_DESC(max_tasks, "tasks submitted per variant (default 200000)");

static unsigned int reps = 1;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "rounds over the three variants (default 1)");

static unsigned int ids = 1024;
module_param(ids, uint, 0444);
MODULE_PARM_DESC(ids, "distinct task ids (default 1024)");

static unsigned int sample_every = 64;
module_param(sample_every, uint, 0444);
MODULE_PARM_DESC(sample_every, "stamp every Nth submission for latency (default 64)");

static unsigned int delay_us = 100;
module_param(delay_us, uint, 0444);
MODULE_PARM_DESC(delay_us, "tdispatch max_delay in microseconds (default 100)");

#define BATCH		64U
#define DRAIN_TIMEOUT	(300 * HZ)

/* ---- what every variant shares ------------------------------------------ */

static u64 *stamps;		/* per id: submit time of a sampled task, or 0 */
static u64 *lat;		/* latency samples */
static unsigned int lat_max;
static atomic_t lat_n;
static atomic64_t processed, batches;
static u64 last_processed;

static void note_processed(u64 id, bool take)
{
	u64 now = ktime_get_ns(), s;
	unsigned int i;

	if (take) {
		s = xchg(&stamps[id], 0);
		if (s) {
			i = atomic_inc_return(&lat_n) - 1;
			if (i < lat_max)
				lat[i] = now - s;
		}
	}
	if (now > READ_ONCE(last_processed))
		WRITE_ONCE(last_processed, now);
}

struct variant {
	const char *name;
	unsigned int bytes;			/* per pending item */
	int (*setup)(struct variant *v);
	int (*submit)(u64 id, bool sampled);
	int (*drain)(void);			/* until all is processed */
	void (*teardown)(void);
};

/* ---- tdispatch ------------------------------------------------------------ */

static struct tdispatch *td;
static struct tdispatch_stats td_stats;	/* once drained, for the report */

static enum tdispatch_result td_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		note_processed(tdispatch_task_id(tdispatch_batch_task(b, i)), true);
	atomic64_add(b->nr, &processed);
	atomic64_inc(&batches);
	return TDISPATCH_SUCCESS;
}

static void td_release(struct tdispatch *d, struct tdispatch_task *t,
		       enum tdispatch_outcome outcome)
{
}

static const struct tdispatch_ops td_ops = {
	.process = td_process,
	.release = td_release,
};

static int td_setup(struct variant *v)
{
	struct tdispatch_config cfg = {
		.name = "td_engine_bench",
		.max_buffer = max(ids, BATCH),
		.max_batch = BATCH,
		.max_delay_ns = (u64)delay_us * NSEC_PER_USEC,
		.workers = 2,
		.max_input = clamp_t(unsigned int, max_tasks, 1, SZ_1M),
	};

	/* td_task_cache is tdispatch's own; its objects are this size. */
	v->bytes = sizeof(struct tdispatch_task);
	memset(&td_stats, 0, sizeof(td_stats));
	td = tdispatch_create(&cfg, &td_ops, NULL);
	return PTR_ERR_OR_ZERO(td);
}

static int td_submit(u64 id, bool sampled)
{
	return tdispatch_submit(td, id, NULL, 0, GFP_KERNEL);
}

static int td_drain(void)
{
	unsigned long end = jiffies + DRAIN_TIMEOUT;
	struct tdispatch_stats st;

	for (;;) {
		tdispatch_get_stats(td, &st);
		if (!st.queued && !st.pending && !st.in_flight)
			break;
		if (time_after(jiffies, end))
			return -ETIMEDOUT;
		usleep_range(500, 1000);
	}
	td_stats = st;
	if (st.done != atomic64_read(&processed) || st.dropped || st.expired)
		return -EIO;
	return 0;
}

static void td_teardown(void)
{
	if (!IS_ERR_OR_NULL(td))
		tdispatch_destroy(td, TDISPATCH_DISCARD, 0);
	td = NULL;
}

/* ---- baseline A: queue_work() per task ------------------------------------ */

struct qw_item {
	struct work_struct work;
	u64 id;
	bool sampled;
};

static struct kmem_cache *qw_cache;
static struct workqueue_struct *qw_wq;

static void qw_fn(struct work_struct *w)
{
	struct qw_item *it = container_of(w, struct qw_item, work);

	note_processed(it->id, it->sampled);
	atomic64_inc(&processed);
	atomic64_inc(&batches);
	kmem_cache_free(qw_cache, it);
}

static int qw_setup(struct variant *v)
{
	qw_cache = KMEM_CACHE(qw_item, 0);
	if (!qw_cache)
		return -ENOMEM;
	v->bytes = kmem_cache_size(qw_cache);
	qw_wq = alloc_workqueue("td_eb_qw", WQ_UNBOUND, 0);
	return qw_wq ? 0 : -ENOMEM;
}

static int qw_submit(u64 id, bool sampled)
{
	struct qw_item *it = kmem_cache_alloc(qw_cache, GFP_KERNEL);

	if (!it)
		return -ENOMEM;
	INIT_WORK(&it->work, qw_fn);
	it->id = id;
	it->sampled = sampled;
	queue_work(qw_wq, &it->work);
	return 0;
}

static int qw_drain(void)
{
	flush_workqueue(qw_wq);
	return 0;
}

static void qw_teardown(void)
{
	if (qw_wq)
		destroy_workqueue(qw_wq);
	qw_wq = NULL;
	kmem_cache_destroy(qw_cache);
	qw_cache = NULL;
}

/* ---- baseline B: spinlock + hashtable coalescer --------------------------- */

struct sh_ent {
	struct hlist_node hnode;
	struct list_head fifo;
	u64 id;
	void *payload;
};

static DEFINE_HASHTABLE(sh_hash, 10);
static DEFINE_SPINLOCK(sh_lock);
static LIST_HEAD(sh_fifo);
static struct kmem_cache *sh_cache;
static struct workqueue_struct *sh_wq;
static struct work_struct sh_work;

static struct sh_ent *sh_find(u64 id)
{
	struct sh_ent *e;

	hash_for_each_possible(sh_hash, e, hnode, id)
		if (e->id == id)
			return e;
	return NULL;
}

static void sh_fn(struct work_struct *w)
{
	struct sh_ent *e, *tmp;
	LIST_HEAD(batch);
	unsigned int n = 0;
	bool more;

	spin_lock(&sh_lock);
	while (n < BATCH && !list_empty(&sh_fifo)) {
		e = list_first_entry(&sh_fifo, struct sh_ent, fifo);
		hash_del(&e->hnode);
		list_move_tail(&e->fifo, &batch);
		n++;
	}
	more = !list_empty(&sh_fifo);
	spin_unlock(&sh_lock);
	if (more)
		queue_work(sh_wq, &sh_work);
	if (!n)
		return;
	list_for_each_entry_safe(e, tmp, &batch, fifo) {
		note_processed(e->id, true);
		kmem_cache_free(sh_cache, e);
	}
	atomic64_add(n, &processed);
	atomic64_inc(&batches);
}

static int sh_setup(struct variant *v)
{
	sh_cache = KMEM_CACHE(sh_ent, 0);
	if (!sh_cache)
		return -ENOMEM;
	v->bytes = kmem_cache_size(sh_cache);
	INIT_WORK(&sh_work, sh_fn);
	sh_wq = alloc_workqueue("td_eb_sh", WQ_UNBOUND, 0);
	return sh_wq ? 0 : -ENOMEM;
}

static bool sh_update(u64 id)
{
	struct sh_ent *e = sh_find(id);

	if (e)
		e->payload = NULL;	/* stands for the newer payload */
	return e;
}

static int sh_submit(u64 id, bool sampled)
{
	struct sh_ent *n;
	bool found;

	spin_lock(&sh_lock);
	found = sh_update(id);
	spin_unlock(&sh_lock);
	if (found)
		return 0;
	/* Not pending: allocate outside the lock, then look again. */
	n = kmem_cache_alloc(sh_cache, GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	n->id = id;
	n->payload = NULL;
	spin_lock(&sh_lock);
	found = sh_update(id);
	if (!found) {
		hash_add(sh_hash, &n->hnode, id);
		list_add_tail(&n->fifo, &sh_fifo);
	}
	spin_unlock(&sh_lock);
	if (found)
		kmem_cache_free(sh_cache, n);
	else
		queue_work(sh_wq, &sh_work);
	return 0;
}

static int sh_drain(void)
{
	/* The work queues itself again; drain_workqueue() follows that. */
	drain_workqueue(sh_wq);
	return list_empty(&sh_fifo) ? 0 : -EIO;
}

static void sh_teardown(void)
{
	struct sh_ent *e, *tmp;

	if (sh_wq)
		destroy_workqueue(sh_wq);
	sh_wq = NULL;
	list_for_each_entry_safe(e, tmp, &sh_fifo, fifo) {
		hash_del(&e->hnode);
		list_del(&e->fifo);
		kmem_cache_free(sh_cache, e);
	}
	kmem_cache_destroy(sh_cache);
	sh_cache = NULL;
}

static struct variant variants[] = {
	{ .name = "tdispatch", .setup = td_setup, .submit = td_submit,
	  .drain = td_drain, .teardown = td_teardown },
	{ .name = "queue_work", .setup = qw_setup, .submit = qw_submit,
	  .drain = qw_drain, .teardown = qw_teardown },
	{ .name = "spin+hash", .setup = sh_setup, .submit = sh_submit,
	  .drain = sh_drain, .teardown = sh_teardown },
};

enum { V_TD, V_QW, V_SH };

/* ---- producers ------------------------------------------------------------ */

struct producer {
	struct task_struct *task;
	struct variant *v;
	unsigned int n;
	u64 rng;
	u64 cost_ns;		/* summed around the submit calls */
	unsigned int rejected;
};

static DECLARE_COMPLETION(go);
static DECLARE_COMPLETION(producers_done);
static atomic_t producers_left;

static u32 rng_below(u64 *state, u32 ceil)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return ((*state * 0x2545f4914f6cdd1dULL) >> 32) * ceil >> 32;
}

static int producer_fn(void *arg)
{
	struct producer *p = arg;
	unsigned int i;

	wait_for_completion(&go);
	for (i = 0; i < p->n; i++) {
		u64 id = rng_below(&p->rng, ids), t;
		bool sampled = false;
		int err;

		if (!(i % sample_every))
			sampled = !cmpxchg(&stamps[id], 0, ktime_get_ns());
		t = ktime_get_ns();
		err = p->v->submit(id, sampled);
		p->cost_ns += ktime_get_ns() - t;
		if (err) {
			p->rejected++;
			if (sampled)
				WRITE_ONCE(stamps[id], 0);
		}
		if (!(i & 255))
			cond_resched();
	}
	if (atomic_dec_and_test(&producers_left))
		complete(&producers_done);
	/* Wait for kthread_stop(), so that the module outlives this thread. */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* ---- one run ---------------------------------------------------------------- */

struct result {
	u64 submitted, rejected, cost_ns, submit_ns, run_ns;
	u64 processed, batches, p50, p99;
	unsigned int nlat, bytes;
};

static struct result results[ARRAY_SIZE(variants)];

#define SEQ_SIZE	(16 * 1024)
static struct seq_buf out;
static char *out_buf;
static unsigned int failures;

static void __printf(1, 2) fail(const char *fmt, ...)
{
	char line[160];
	va_list args;

	failures++;
	va_start(args, fmt);
	vsnprintf(line, sizeof(line), fmt, args);
	va_end(args);
	seq_buf_printf(&out, "# FAIL: %s\n", line);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int run_producers(struct variant *v, struct producer *prods, u64 *start)
{
	unsigned int cpu, np = 0, nr = num_online_cpus(), share;
	int ret = 0;

	share = max_tasks / nr;
	reinit_completion(&go);
	reinit_completion(&producers_done);
	for_each_online_cpu(cpu) {
		struct producer *p = &prods[np];
		struct task_struct *t;

		if (np == nr)
			break;
		memset(p, 0, sizeof(*p));
		p->v = v;
		p->n = share + (np ? 0 : max_tasks - share * nr);
		p->rng = (u64)get_random_u32() << 32 | get_random_u32() | 1;
		t = kthread_create_on_cpu(producer_fn, p, cpu, "td_eb_prod/%u");
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			break;
		}
		p->task = t;
		np++;
	}
	atomic_set(&producers_left, np);
	if (!ret) {
		unsigned int i;

		for (i = 0; i < np; i++)
			wake_up_process(prods[i].task);
		*start = ktime_get_ns();
		complete_all(&go);
		wait_for_completion(&producers_done);
	}
	/* Unwoken ones exit without running producer_fn(). */
	while (np--)
		kthread_stop(prods[np].task);
	return ret;
}

static void run_variant(struct variant *v, struct producer *prods, struct result *r)
{
	unsigned int i, nr = num_online_cpus();
	u64 start = 0, t;
	int ret;

	memset(r, 0, sizeof(*r));
	memset(stamps, 0, ids * sizeof(*stamps));
	atomic_set(&lat_n, 0);
	atomic64_set(&processed, 0);
	atomic64_set(&batches, 0);
	WRITE_ONCE(last_processed, 0);

	ret = v->setup(v);
	if (ret) {
		fail("%s: setup: %d", v->name, ret);
		goto out;
	}
	r->bytes = v->bytes;
	ret = run_producers(v, prods, &start);
	if (ret) {
		fail("%s: producers: %d", v->name, ret);
		goto out;
	}
	t = ktime_get_ns();
	r->submit_ns = t - start;
	for (i = 0; i < nr; i++) {
		r->cost_ns += prods[i].cost_ns;
		r->rejected += prods[i].rejected;
	}
	r->submitted = max_tasks - r->rejected;
	ret = v->drain();
	if (ret)
		fail("%s: drain: %d", v->name, ret);
	r->run_ns = max(READ_ONCE(last_processed), t) - start;
	r->processed = atomic64_read(&processed);
	r->batches = atomic64_read(&batches);
	r->nlat = min_t(unsigned int, atomic_read(&lat_n), lat_max);
	if (r->nlat) {
		sort(lat, r->nlat, sizeof(*lat), cmp_u64, NULL);
		r->p50 = lat[r->nlat / 2];
		r->p99 = lat[r->nlat * 99 / 100];
	}
	if (r->rejected)
		fail("%s: %llu submissions failed", v->name, r->rejected);
	if (!r->processed || r->processed > r->submitted)
		fail("%s: %llu processed of %llu", v->name, r->processed, r->submitted);
	if (v == &variants[V_QW] && r->processed != r->submitted)
		fail("%s: %llu processed of %llu", v->name, r->processed, r->submitted);
out:
	v->teardown();
}

/* ---- output ----------------------------------------------------------------- */

static void print_fixed(u64 num, u64 den, const char *end)
{
	u64 tenths = div64_u64(num * 10, max_t(u64, den, 1));

	seq_buf_printf(&out, " %llu.%llu%s", tenths / 10, tenths % 10, end);
}

static void print_rate(u64 n, u64 ns)
{
	seq_buf_printf(&out, " %llu |", div64_u64(n * NSEC_PER_SEC, max_t(u64, ns, 1)));
}

static void print_row(unsigned int rep, struct variant *v, struct result *r)
{
	seq_buf_printf(&out, "| %u | %s | %llu |", rep, v->name, r->submitted);
	print_rate(r->submitted, r->submit_ns);
	print_fixed(r->cost_ns, r->submitted, " |");
	seq_buf_printf(&out, " %llu |", r->processed);
	print_fixed(r->submitted, r->processed, " |");
	seq_buf_printf(&out, " %llu |", r->batches);
	print_rate(r->batches, r->run_ns);
	print_fixed(r->p50, NSEC_PER_USEC, " |");
	print_fixed(r->p99, NSEC_PER_USEC, " |");
	seq_buf_printf(&out, " %u | %u |\n", r->nlat, r->bytes);
}

/* x / y, to three places: batches against queue_work's runs are tiny. */
static void print_ratio(const char *what, u64 x, u64 y, char end)
{
	u64 r = div64_u64(x * 1000, max_t(u64, y, 1));

	seq_buf_printf(&out, " %s %llu.%03llux%c", what, r / 1000, r % 1000, end);
}

static void print_ratios(unsigned int rep, unsigned int vi, unsigned int base)
{
	struct result *a = &results[vi], *b = &results[base];

	seq_buf_printf(&out, "# ratio rep %u %s/%s:", rep, variants[vi].name,
		       variants[base].name);
	/* tasks/s: (a.sub / a.ns) / (b.sub / b.ns) */
	print_ratio("tasks/s", div64_u64(a->submitted * 1000000, max_t(u64, a->submit_ns, 1)),
		    div64_u64(b->submitted * 1000000, max_t(u64, b->submit_ns, 1)), ',');
	print_ratio("submit_ns", div64_u64(a->cost_ns * 1000, max_t(u64, a->submitted, 1)),
		    div64_u64(b->cost_ns * 1000, max_t(u64, b->submitted, 1)), ',');
	print_ratio("processed", a->processed, b->processed, ',');
	print_ratio("coalescing", div64_u64(a->submitted * 1000, max_t(u64, a->processed, 1)),
		    div64_u64(b->submitted * 1000, max_t(u64, b->processed, 1)), ',');
	print_ratio("batches", a->batches, b->batches, ',');
	print_ratio("p50", a->p50, b->p50, ',');
	print_ratio("p99", a->p99, b->p99, ',');
	print_ratio("bytes", a->bytes, b->bytes, '\n');
}

static int bench_run(void)
{
	unsigned int rep, v, nr = num_online_cpus();
	struct producer *prods;

	if (!ids || !sample_every || !max_tasks)
		return -EINVAL;
	lat_max = max_tasks / sample_every + nr + 1;
	stamps = vmalloc_array(ids, sizeof(*stamps));
	lat = vmalloc_array(lat_max, sizeof(*lat));
	prods = kcalloc(nr, sizeof(*prods), GFP_KERNEL);
	if (!stamps || !lat || !prods) {
		kfree(prods);
		return -ENOMEM;
	}

	seq_buf_printf(&out, "# kernel %s, HZ=%d, %u CPUs (one producer each), ",
		       utsname()->release, HZ, nr);
	seq_buf_printf(&out, "%u tasks over %u ids, ", max_tasks, ids);
	seq_buf_printf(&out, "latency sampled every %u, tdispatch max_delay %u us\n",
		       sample_every, delay_us);
	seq_buf_printf(&out, "| rep | variant | submitted | tasks/s | submit ns/task | ");
	seq_buf_printf(&out, "processed | coalescing | batches | batches/s | p50 us | p99 us | ");
	seq_buf_printf(&out, "samples | bytes/item |\n");
	seq_buf_printf(&out, "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (rep = 0; rep < max(reps, 1U); rep++) {
		for (v = 0; v < ARRAY_SIZE(variants); v++) {
			run_variant(&variants[v], prods, &results[v]);
			print_row(rep, &variants[v], &results[v]);
		}
		seq_buf_printf(&out, "# tdispatch: accepted %llu done %llu overridden %llu ",
			       td_stats.accepted, td_stats.done, td_stats.overridden);
		seq_buf_printf(&out, "dropped %llu wakeups %llu holdoffs %llu\n",
			       td_stats.dropped, td_stats.wakeups, td_stats.holdoffs);
		print_ratios(rep, V_TD, V_SH);
		print_ratios(rep, V_QW, V_SH);
		print_ratios(rep, V_TD, V_QW);
	}
	seq_buf_printf(&out, "# batches: ->process() calls (tdispatch), work runs (others); ");
	seq_buf_printf(&out, "batches/s over first submit to last process\n");
	kfree(prods);
	return 0;
}

static struct dentry *bench_dir;

static ssize_t results_read(struct file *f, char __user *buf, size_t len, loff_t *pos)
{
	return simple_read_from_buffer(buf, len, pos, out_buf, seq_buf_used(&out));
}

static const struct file_operations results_fops = {
	.owner = THIS_MODULE,
	.read = results_read,
	.llseek = default_llseek,
};

static int __init td_engine_bench_init(void)
{
	int ret;

	out_buf = vzalloc(SEQ_SIZE);
	if (!out_buf)
		return -ENOMEM;
	seq_buf_init(&out, out_buf, SEQ_SIZE);
	seq_buf_printf(&out, "KTAP version 1\n1..1\n");
	ret = bench_run();
	if (ret)
		fail("setup failed: %d", ret);
	vfree(lat);
	vfree(stamps);
	seq_buf_printf(&out, "%s 1 td_engine_bench\n", failures ? "not ok" : "ok");
	bench_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	debugfs_create_file("results", 0444, bench_dir, NULL, &results_fops);
	return 0;
}

static void __exit td_engine_bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
	vfree(out_buf);
}

module_init(td_engine_bench_init);
module_exit(td_engine_bench_exit);
MODULE_DESCRIPTION("tdispatch: engine against queue_work and a spinlock+hash coalescer");
MODULE_LICENSE("GPL");
