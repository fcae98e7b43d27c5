// SPDX-License-Identifier: GPL-2.0
/*
 * The engine benchmark's offered load (engine_main.c): ids, paced
 * producers, and one run of a variant at a rate.
 */
#include "bench.h"
#include "engine.h"

/* ---- ids ------------------------------------------------------------------ */

const char *const dist_names[NR_D] = { "rr", "uniform", "zipf" };
const unsigned int id_spaces[NR_SPACES] = { 1024, 1000000 };

/* Zipf (s = 1) samples for each producer, ranks scattered over the ids. */
u32 *zipf_seq[MAX_PRODUCERS];

static u64 rng_next(u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static u32 rng_below(u64 *s, u32 ceil)
{
	return (rng_next(s) >> 32) * ceil >> 32;
}

int zipf_fill(unsigned int n, unsigned int np)
{
	u64 *cdf = vmalloc(array_size(n, sizeof(u64))), total = 0, s = 0x9e3779b97f4a7c15ULL;
	unsigned int p, i;

	if (!cdf)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		total += div_u64(1ULL << 40, i + 1);
		cdf[i] = total;
	}
	for (p = 0; p < np; p++) {
		for (i = 0; i < ZIPF_SEQ; i++) {
			unsigned int lo = 0, hi = n - 1;
			u64 r;

			div64_u64_rem(rng_next(&s), total, &r);
			while (lo < hi) {
				unsigned int mid = (lo + hi) / 2;

				if (cdf[mid] > r)
					hi = mid;
				else
					lo = mid + 1;
			}
			/* 2654435761 is prime to 2 and 5: a bijection on n ids. */
			zipf_seq[p][i] = (u32)(((u64)lo * 2654435761ULL) % n);
		}
	}
	vfree(cdf);
	return 0;
}

/* ---- producers -------------------------------------------------------------- */

struct producer {
	struct task_struct *task;
	struct variant *v;
	unsigned int index, dist;
	u64 rate;		/* its share, submissions/s */
	u64 rng;
	u64 accepted, refused;
	u64 submit_ns, timed;	/* a 16th of the submit calls, at random, timed */
};

static struct producer prods[MAX_PRODUCERS];
unsigned int nr_prods;
static DECLARE_COMPLETION(go);
static DECLARE_COMPLETION(producers_done);
static atomic_t producers_left;
static u64 run_start, run_end;

static unsigned int next_id(struct producer *p, u64 k)
{
	switch (p->dist) {
	case D_RR:
		return (u32)((k + (u64)p->index * nr_objs / nr_prods) % nr_objs);
	case D_UNIFORM:
		return rng_below(&p->rng, nr_objs);
	default:
		return zipf_seq[p->index][k % ZIPF_SEQ];
	}
}

static void submit_one(struct producer *p, u64 k)
{
	struct obj *o = &objs[next_id(p, k)];
	u64 t = 0, ver;
	bool sampled = false;
	int ret;

	if (!(k % sample_every) && !READ_ONCE(o->stamp_ver))
		t = ktime_get_ns();
	/* The change; fully ordered, so a peek at a pending flag after it is safe. */
	ver = atomic64_inc_return(&o->ver);
	if (t && !cmpxchg(&o->stamp_ver, 0, ver)) {
		WRITE_ONCE(o->stamp, t);
		sampled = true;
	}
	/* At random, not every 16th: a tick's first call, which wakes, would alias. */
	if (!rng_below(&p->rng, 16)) {
		u64 t0 = ktime_get_ns();

		ret = p->v->submit(o, ver);
		p->submit_ns += ktime_get_ns() - t0;
		p->timed++;
	} else {
		ret = p->v->submit(o, ver);
	}
	if (!ret) {
		p->accepted++;
		return;
	}
	p->refused++;
	if (sampled && xchg(&o->stamp, 0)) {
		/* Given back as obj_process() does: the stamp cleared first. */
		smp_store_release(&o->stamp_ver, 0);
	}
}

static int producer_fn(void *arg)
{
	struct producer *p = arg;
	u64 k = 0, now, due, ticks = 0;
	ktime_t next;

	wait_for_completion(&go);
	for (;;) {
		now = ktime_get_ns();
		if (now >= run_end)
			break;
		due = div64_u64((now - run_start) * p->rate, NSEC_PER_SEC);
		while (k < due)
			submit_one(p, k++);
		next = ns_to_ktime(run_start + ++ticks * tick_us * NSEC_PER_USEC);
		if (ktime_to_ns(next) > now) {
			set_current_state(TASK_UNINTERRUPTIBLE);
			schedule_hrtimeout_range(&next, 0, HRTIMER_MODE_ABS);
		} else {
			cond_resched();
		}
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

/* Every online CPU's idle time in ns, or U64_MAX where it is not kept. */
static u64 idle_ns(void)
{
	u64 sum = 0, us;
	int cpu;

	for_each_online_cpu(cpu) {
		us = get_cpu_idle_time_us(cpu, NULL);
		if (us == (u64)-1)
			return U64_MAX;
		sum += us * NSEC_PER_USEC;
		us = get_cpu_iowait_time_us(cpu, NULL);
		if (us != (u64)-1)
			sum += us * NSEC_PER_USEC;
	}
	return sum;
}

static bool is_producer(struct task_struct *p)
{
	unsigned int i;

	for (i = 0; i < nr_prods; i++)
		if (p == prods[i].task)
			return true;
	return false;
}

/*
 * The consumers' CPU time (kworkers, the acceptor, whatever else runs:
 * every thread but the producers and this one, the bench's own), from
 * the start of a run to its end, both read when they are idle.  Each
 * thread there at the start is held and counted from its time then, so
 * that one that exits meanwhile (a destroyed pool's kworker, reaped
 * late) is counted to its end; one begun since is counted whole.
 */
#define MAX_THREADS	4096

struct thread_start {
	struct task_struct *p;
	u64 ns;
};

static struct thread_start *thread_starts;
static unsigned int nr_starts;

static void consumers_start(void)
{
	struct task_struct *g, *p;

	nr_starts = 0;
	rcu_read_lock();
	for_each_process_thread(g, p) {
		if (p == current || is_producer(p) || nr_starts == MAX_THREADS)
			continue;
		/* Listed, it is not freed before a grace period: a reference holds. */
		thread_starts[nr_starts].p = get_task_struct(p);
		thread_starts[nr_starts++].ns = READ_ONCE(p->se.sum_exec_runtime);
	}
	rcu_read_unlock();
}

/* With verbose, a thread that ran over 2 ms of a run (not the producers). */
static void thread_ran(const struct variant *v, struct task_struct *p, u64 ns)
{
	if (verbose && v != &variants[V_NONE] && ns > 2 * NSEC_PER_MSEC)
		seq_buf_printf(&out, "# %s: %s/%d ran %llu us\n", v->name, p->comm,
			       task_pid_nr(p), div_u64(ns, NSEC_PER_USEC));
}

/*
 * Their time since consumers_start(), and their references dropped;
 * U64_MAX if some were too many to note there (those would count whole).
 */
static u64 consumers_end(const struct variant *v)
{
	struct task_struct *g, *p;
	unsigned int i;
	u64 sum = 0;

	rcu_read_lock();
	for_each_process_thread(g, p) {
		if (p == current || is_producer(p))
			continue;
		for (i = 0; i < nr_starts && thread_starts[i].p != p; i++)
			;
		if (i == nr_starts) {
			sum += READ_ONCE(p->se.sum_exec_runtime);
			thread_ran(v, p, READ_ONCE(p->se.sum_exec_runtime));
		}
	}
	rcu_read_unlock();
	for (i = 0; i < nr_starts; i++) {
		u64 ns = READ_ONCE(thread_starts[i].p->se.sum_exec_runtime) - thread_starts[i].ns;

		sum += ns;
		thread_ran(v, thread_starts[i].p, ns);
		put_task_struct(thread_starts[i].p);
	}
	return nr_starts == MAX_THREADS ? U64_MAX : sum;
}

/*
 * The check of that counting, before the runs: three threads busy for
 * CHECK_BURN_NS each between consumers_start() and consumers_end(), one
 * of them also busy before the start, one exiting before the end, one
 * begun after the start.  Real-time, so that nothing takes their CPU;
 * what the rest of the system runs meanwhile (kthreadd making the third)
 * is counted too, within CHECK_SLACK_NS.  Each miscount the check is
 * for (a thread's time before the start, one that exits, one begun
 * since) is a whole burst.
 */
#define CHECK_BURN_NS	(10 * NSEC_PER_MSEC)
#define CHECK_SLACK_NS	(8 * NSEC_PER_MSEC)

struct burner {
	struct task_struct *task;
	struct completion pre, go, done;
	bool burn_pre;		/* busy once before the start as well */
	bool stay;		/* until kthread_stop(), else exit when done */
};

static void burn(void)
{
	u64 end = ktime_get_ns() + CHECK_BURN_NS;

	while (ktime_get_ns() < end)
		cpu_relax();
}

static int burner_fn(void *arg)
{
	struct burner *b = arg;

	/*
	 * After each burst, off the CPU for a tick: a thread's clock is
	 * brought up to date when it leaves its CPU, and read while it runs
	 * it would lack the burst.
	 */
	if (b->burn_pre) {
		burn();
		schedule_timeout_idle(1);
	}
	complete(&b->pre);
	wait_for_completion(&b->go);
	burn();
	schedule_timeout_idle(1);
	complete(&b->done);
	/* The caller's kthread_stop() waits for us: @b is still there. */
	while (b->stay && !kthread_should_stop())
		schedule_timeout_idle(HZ);
	return 0;
}

static int burner_start(struct burner *b, bool burn_pre, bool stay)
{
	init_completion(&b->pre);
	init_completion(&b->go);
	init_completion(&b->done);
	b->burn_pre = burn_pre;
	b->stay = stay;
	b->task = kthread_create(burner_fn, b, "td_eb_burn");
	if (IS_ERR(b->task))
		return PTR_ERR(b->task);
	/* Held: kthread_stop() waits for one that returned by itself. */
	get_task_struct(b->task);
	sched_set_fifo(b->task);
	wake_up_process(b->task);
	return 0;
}

/* Let @b run its bursts if it has not, and wait for its end. */
static void burner_end(struct burner *b)
{
	complete(&b->go);
	kthread_stop(b->task);
	put_task_struct(b->task);
}

void check_counting(void)
{
	struct burner b[3];	/* busy before too and exits; stays; begun after */
	u64 got, want = 3 * CHECK_BURN_NS;
	int ret;

	ret = burner_start(&b[0], true, false);
	if (ret)
		goto fail;
	ret = burner_start(&b[1], false, true);
	if (ret) {
		burner_end(&b[0]);
		goto fail;
	}
	wait_for_completion(&b[0].pre);
	wait_for_completion(&b[1].pre);
	consumers_start();
	complete(&b[0].go);
	complete(&b[1].go);
	ret = burner_start(&b[2], false, true);
	if (!ret) {
		complete(&b[2].go);
		wait_for_completion(&b[2].done);
	}
	wait_for_completion(&b[1].done);
	/* Exited by the end (listed or not): counted through its reference. */
	burner_end(&b[0]);
	got = consumers_end(&variants[V_NONE]);
	burner_end(&b[1]);
	if (ret)
		goto fail;
	burner_end(&b[2]);
	seq_buf_printf(&out, "# counting check: threads busy %llu us, counted %llu us\n",
		       div_u64(want, NSEC_PER_USEC), div_u64(got, NSEC_PER_USEC));
	if (got < want - want / 20 || got > want + CHECK_SLACK_NS)
		fail("counting check: threads busy %llu us were counted as %llu us",
		     div_u64(want, NSEC_PER_USEC), div_u64(got, NSEC_PER_USEC));
	return;
fail:
	fail("counting check: no thread (%d)", ret);
}

int consumers_init(void)
{
	thread_starts = vmalloc(array_size(MAX_THREADS, sizeof(*thread_starts)));
	return thread_starts ? 0 : -ENOMEM;
}

void consumers_exit(void)
{
	vfree(thread_starts);
}

static int start_producers(struct variant *v, unsigned int dist, u64 rate)
{
	unsigned int cpu, np = 0;

	reinit_completion(&go);
	reinit_completion(&producers_done);
	for_each_online_cpu(cpu) {
		struct producer *p = &prods[np];
		struct task_struct *t;

		if (np == nr_prods)
			break;
		memset(p, 0, sizeof(*p));
		p->v = v;
		p->index = np;
		p->dist = dist;
		p->rate = div_u64(rate + nr_prods - 1 - np, nr_prods);
		p->rng = (u64)get_random_u32() << 32 | get_random_u32() | 1;
		t = kthread_create_on_cpu(producer_fn, p, cpu, "td_eb_prod/%u");
		if (IS_ERR(t)) {
			while (np--) {
				kthread_stop(prods[np].task);
				put_task_struct(prods[np].task);
			}
			return PTR_ERR(t);
		}
		/* Held past its exit: is_producer() tells it apart. */
		p->task = get_task_struct(t);
		np++;
	}
	atomic_set(&producers_left, np);
	for (cpu = 0; cpu < np; cpu++)
		wake_up_process(prods[cpu].task);
	return 0;
}

static void clear_objects(void)
{
	unsigned int i;

	for (i = 0; i < nr_objs; i++) {
		struct obj *o = &objs[i];

		atomic64_set(&o->ver, 0);
		o->done_ver = 0;
		o->stamp_ver = 0;
		o->stamp = 0;
		if (!(i & 4095))
			cond_resched();
	}
}

/*
 * Every object's newest version processed.  With a payload per change,
 * two producers may hand in their versions out of order, and the one
 * handed in last is what is processed: there, every payload must be
 * processed or replaced instead.
 */
static bool all_fresh(struct variant *v, const struct result *r)
{
	unsigned int i;

	if (v == &variants[V_NONE])
		return true;
	if (v->alloc)
		return atomic64_read(&processed) + atomic64_read(&replaced) == r->accepted;

	for (i = 0; i < nr_objs; i++)
		if (READ_ONCE(objs[i].done_ver) != atomic64_read(&objs[i].ver))
			return false;
	return true;
}

void run_one(struct variant *v, unsigned int dist, u64 rate, struct result *r)
{
	struct gaps g;
	unsigned long end;
	u64 idle0, idle1, t;
	unsigned int i;
	int ret;

	memset(r, 0, sizeof(*r));
	clear_objects();
	gaps_take(&g);
	atomic_set(&lat_n, 0);
	atomic64_set(&processed, 0);
	atomic64_set(&replaced, 0);
	atomic64_set(&lost, 0);
	WRITE_ONCE(last_processed, 0);

	ret = v->setup();
	if (ret) {
		fail("%s: setup: %d", v->name, ret);
		r->lost = true;
		goto out;
	}
	ret = start_producers(v, dist, rate);
	if (ret) {
		fail("%s: producers: %d", v->name, ret);
		r->lost = true;
		goto out;
	}
	consumers_start();
	idle0 = idle_ns();
	run_start = ktime_get_ns();
	run_end = run_start + (u64)run_ms * NSEC_PER_MSEC;
	if (trace_runs && v != &variants[V_NONE])
		tracing_on();
	complete_all(&go);
	wait_for_completion(&producers_done);
	r->processed_run = atomic64_read(&processed);
	for (i = 0, t = 0; i < nr_prods; i++) {
		kthread_stop(prods[i].task);
		r->accepted += prods[i].accepted;
		r->refused += prods[i].refused;
		r->submit_ns += prods[i].submit_ns;
		t += prods[i].timed;
	}
	r->submit_ns = div64_u64(r->submit_ns, max_t(u64, t, 1));
	/*
	 * Until every object's newest version is processed; the CPU time is
	 * read before the check, whose scan of every object is the bench's.
	 */
	end = jiffies + DRAIN_TIMEOUT;
	for (;;) {
		bool idle = v->idle();

		t = ktime_get_ns();
		idle1 = idle_ns();
		if (idle && all_fresh(v, r))
			break;
		if (time_after(jiffies, end)) {
			r->lost = true;
			break;
		}
		usleep_range(200, 400);
	}
	r->consumers_ns = consumers_end(v);
	/* Through the drain: every work the run queued has ended. */
	if (trace_runs)
		tracing_off();
	for (i = 0; i < nr_prods; i++)
		put_task_struct(prods[i].task);
	r->run_ns = max(READ_ONCE(last_processed), run_end) - run_start;
	if (idle0 == U64_MAX || idle1 == U64_MAX)
		r->busy_ns = U64_MAX;
	else
		r->busy_ns = (t - run_start) * num_online_cpus() - min(idle1 - idle0,
			(t - run_start) * num_online_cpus());
	r->processed = atomic64_read(&processed);
	r->nlat = min_t(unsigned int, atomic_read(&lat_n), LAT_MAX);
	if (r->nlat) {
		sort(lat, r->nlat, sizeof(*lat), cmp_u64, NULL);
		r->p50 = lat[r->nlat / 2];
		r->p99 = lat[r->nlat * 99 / 100];
		r->max = lat[r->nlat - 1];
	}
	if (verbose && v != &variants[V_NONE]) {
		gaps_take(&g);
		seq_buf_printf(&out, "# %s %s %s/%u %llu/s: samples over 2 ms %u of %u",
			       v->name, costly ? "costly" : "trivial", dist_names[dist], nr_objs,
			       rate, g.slow, r->nlat);
		if (costly && !preempt_model_preemptible()) {
			seq_buf_printf(&out, "; busy workers lost %llu gaps over 100 us, %llu us",
				       g.n, div_u64(g.ns, NSEC_PER_USEC));
			seq_buf_printf(&out, " in all, at most %llu us; no interrupt %llu, %llu us",
				       div_u64(g.max_ns, NSEC_PER_USEC), g.quiet,
				       div_u64(g.quiet_ns, NSEC_PER_USEC));
		} else if (costly) {
			seq_buf_printf(&out, "; gaps not counted: the kernel preempts");
		}
		seq_buf_printf(&out, "\n");
	}
	if (r->refused)
		fail("%s %s/%u rate %llu: %llu submissions refused", v->name, dist_names[dist],
		     nr_objs, rate, r->refused);
	if (atomic64_read(&lost))
		r->lost = true;
	if (r->lost)
		fail("%s %s/%u rate %llu: objects left unprocessed or stale", v->name,
		     dist_names[dist], nr_objs, rate);
out:
	v->teardown();
}
