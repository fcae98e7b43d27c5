// SPDX-License-Identifier: GPL-2.0
/*
 * tdispatch race test: submitters in every context and on every CPU,
 * races with destroy, items, per-id exclusion under load and the stress.
 * Drives the exported API with a recording processor, as Eureka's batcher
 * tests do with their RecordingProcessor, on every kernel (KUnit is not
 * built into the stock ones).  The cases run at load; their KTAP is in
 * /sys/kernel/debug/tdispatch_race_test/results.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/seq_buf.h>
#include <linux/slab.h>
#include <linux/stop_machine.h>
#include <linux/tdispatch.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>

static unsigned int stress_tasks = 1000000;
module_param(stress_tasks, uint, 0444);
MODULE_PARM_DESC(stress_tasks, "tasks the stress case submits in all (default 1000000)");
static bool fault_stress;
module_param(fault_stress, bool, 0444);
MODULE_PARM_DESC(fault_stress,
		 "run the stress once more with the producers' allocations failing (the harness sets up failslab with task-filter)");

#include "recorder.h"

/* Submissions from interrupt context. */
struct irq_submitter {
	struct hrtimer hrt;
	struct timer_list timer;
	struct recorder *r;
	int ret;
	bool in_context;
	struct completion done;
};

static enum hrtimer_restart irq_submit_hard(struct hrtimer *h)
{
	struct irq_submitter *s = container_of(h, struct irq_submitter, hrt);

	s->in_context = in_hardirq();
	s->ret = tdispatch_submit(s->r->d, 1, (void *)1, 0, GFP_ATOMIC);
	complete(&s->done);
	return HRTIMER_NORESTART;
}

static void irq_submit_soft(struct timer_list *tl)
{
	struct irq_submitter *s = from_timer(s, tl, timer);

	s->in_context = in_serving_softirq();
	s->ret = tdispatch_submit(s->r->d, 2, (void *)2, 0, GFP_ATOMIC);
	complete(&s->done);
}

static void test_submit_from_irq_contexts(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	struct irq_submitter s = { .r = r, .ret = -1 };

	if (!r)
		return;
	init_completion(&s.done);
	hrtimer_init_on_stack(&s.hrt, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	s.hrt.function = irq_submit_hard;
	hrtimer_start(&s.hrt, ms_to_ktime(1), HRTIMER_MODE_REL_HARD);
	T_EXPECT(t, wait_for_completion_timeout(&s.done, WAIT_LIMIT));
	hrtimer_cancel(&s.hrt);
	destroy_hrtimer_on_stack(&s.hrt);
	T_EXPECT(t, s.in_context);
	T_EXPECT_EQ(t, s.ret, 0);

	reinit_completion(&s.done);
	s.ret = -1;
	s.in_context = false;
	timer_setup_on_stack(&s.timer, irq_submit_soft, 0);
	mod_timer(&s.timer, jiffies + 1);
	T_EXPECT(t, wait_for_completion_timeout(&s.done, WAIT_LIMIT));
	del_timer_sync(&s.timer);
	destroy_timer_on_stack(&s.timer);
	T_EXPECT(t, s.in_context);
	T_EXPECT_EQ(t, s.ret, 0);

	if (rec_wait_released(t, r, 2)) {
		T_EXPECT_EQ(t, r->payload_of[1], 1);
		T_EXPECT_EQ(t, r->payload_of[2], 2);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * Under stop_machine() every online CPU runs this at once with interrupts
 * off, so the acceptor cannot drain while the CPUs fill their lists.
 */
static unsigned int burst_round;

static int submit_burst_stopped(void *arg)
{
	struct recorder *r = arg;
	unsigned int cpu = smp_processor_id(), i;

	for (i = 0; i < 10; i++)
		if (tdispatch_submit(r->d, cpu * 100 + burst_round * 20 + i, (void *)1,
				     0, GFP_ATOMIC))
			atomic_inc(&r->overlaps);	/* fails the case */
	return 0;
}

static void test_wakeup_only_on_first_add_and_arrival_order(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	unsigned int cpus = num_online_cpus(), round, i, j;
	struct tdispatch_stats st;

	if (!r)
		return;
	for (round = 1; round <= 2; round++) {
		burst_round = round;
		T_EXPECT_EQ(t, stop_machine(submit_burst_stopped, r, cpu_online_mask), 0);
		/* One wakeup per CPU list that went from empty to non-empty. */
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.wakeups, round * cpus);
		if (!rec_wait_released(t, r, round * 10 * cpus))
			break;
	}
	/* Each CPU's tasks were processed in the order that CPU added them. */
	for (i = 0; i < r->nr_rec && i < MAX_RECORDS; i++)
		for (j = 0; j < i; j++)
			if (r->rec[j].first_id / 100 == r->rec[i].first_id / 100 &&
			    r->rec[j].first_id % 100 >= r->rec[i].first_id % 100 &&
			    r->rec[j].first_id != r->rec[i].first_id)
				T_EXPECT(t, false);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/* Producers that run until submission fails, on every CPU. */
struct producer {
	struct task_struct *task;
	struct recorder *r;
	unsigned int seed_cpu;
	unsigned long todo;		/* 0: until an error other than ENOBUFS */
	unsigned long accepted;
	unsigned long busy;		/* -ENOBUFS seen */
	unsigned long nomem;		/* -ENOMEM seen (injected faults) */
	bool faults;			/* under fault injection: -ENOMEM is expected */
	bool items;			/* submits load_items[], not tasks */
	int last_err;
	struct completion done;
};

/*
 * Items under load: one per object, each object's version bumped before
 * each submission of its item, and the version each processing saw.
 */
#define NR_LOAD_ITEMS	4096
static struct tdispatch_item *load_items;
static atomic64_t load_ver[NR_LOAD_ITEMS];
static u64 load_seen[NR_LOAD_ITEMS];
/* Every n-th submission of an item producer a task, of an id above the items'; 0: none. */
static unsigned int load_task_every;

static int producer_fn(void *arg)
{
	struct producer *p = arg;
	struct recorder *r = p->r;

#ifdef CONFIG_FAULT_INJECTION
	/* failslab and fail_page_alloc with task-filter fail only this thread. */
	current->make_it_fail = p->faults;
#endif
	while (!p->todo || p->accepted < p->todo) {
		u64 id = get_random_u32_below(NR_LOAD_ITEMS);
		void *payload = NULL;
		int ret;

		if (p->items && load_task_every && !(p->accepted % load_task_every)) {
			ret = tdispatch_submit(r->d, NR_LOAD_ITEMS + id, NULL, 0, GFP_KERNEL);
			if (!ret) {
				p->accepted++;
			} else if (ret != -ENOBUFS) {
				p->last_err = ret;
				break;
			}
			cond_resched();
			continue;
		}
		if (p->items) {
			atomic64_inc(&load_ver[id]);
			/* A full barrier first: its ->process() sees the version. */
			if (!tdispatch_submit_item(r->d, &load_items[id]))
				p->accepted++;
			if (!(p->accepted % 64))
				cond_resched();
			continue;
		}
		/* Some real payloads: ->release() must free each exactly once. */
		if (r->free_payloads && !(p->accepted % r->free_payloads)) {
			payload = kmalloc(16, GFP_KERNEL);
			if (!payload)
				continue;
		}
		ret = tdispatch_submit(r->d, id, payload, 0, GFP_KERNEL);
		/* Yield now and then: the acceptor and workers need the CPU. */
		if (!(p->accepted % 64))
			cond_resched();
		if (!ret) {
			p->accepted++;
			continue;
		}
		kfree(payload);
		if (ret == -ENOMEM && p->faults) {
			p->nomem++;
			continue;
		}
		if (ret != -ENOBUFS) {
			p->last_err = ret;
			break;
		}
		p->busy++;
		cond_resched();
	}
	complete_all(&p->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ);
	return 0;
}

/* A producer on every online CPU: of tasks (@faults: under failslab), or of items. */
static struct producer *producers_run(struct tcase *t, struct recorder *r, unsigned long per_cpu,
				      bool faults, bool items, unsigned int *nr)
{
	struct producer *p;
	unsigned int cpu, n = 0;

	p = kcalloc(nr_cpu_ids, sizeof(*p), GFP_KERNEL);
	if (!p)
		return NULL;
	for_each_online_cpu(cpu) {
		p[n].r = r;
		p[n].todo = per_cpu;
		p[n].faults = faults;
		p[n].items = items;
		init_completion(&p[n].done);
		p[n].task = kthread_create_on_cpu(producer_fn, &p[n], cpu, "tdtest/%u");
		if (IS_ERR(p[n].task)) {
			T_EXPECT(t, false);
			break;
		}
		wake_up_process(p[n].task);
		n++;
	}
	*nr = n;
	return p;
}

static inline struct producer *producers_start_faults(struct tcase *t, struct recorder *r,
						      unsigned long per_cpu, bool faults,
						      unsigned int *nr)
{
	return producers_run(t, r, per_cpu, faults, false, nr);
}

static inline struct producer *producers_start(struct tcase *t, struct recorder *r,
					       unsigned long per_cpu, unsigned int *nr)
{
	return producers_start_faults(t, r, per_cpu, false, nr);
}

static unsigned long producers_stop(struct producer *p, unsigned int nr)
{
	unsigned long accepted = 0;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		wait_for_completion(&p[i].done);
		kthread_stop(p[i].task);
		accepted += p[i].accepted;
	}
	return accepted;
}

/*
 * Racing destroy the documented way: submitters load the dispatcher from a
 * pointer under rcu_read_lock() and submit in bursts inside the section;
 * the destroyer clears the pointer, then destroys.  Each submission is
 * accepted (and then released exactly once) or gets -ESHUTDOWN, and none
 * touches the freed dispatcher (KASAN on the debug kernel).
 */
static unsigned int race_rounds = 100;
module_param(race_rounds, uint, 0444);

struct racer {
	struct task_struct *task;
	struct tdispatch __rcu **slot;
	struct tdispatch_item *items;	/* 512 to submit, or NULL: tasks */
	unsigned long accepted;
	unsigned long shutdown;
	unsigned long other;
};

static int racer_fn(void *arg)
{
	struct racer *rc = arg;

	while (!kthread_should_stop()) {
		struct tdispatch *d;
		unsigned int i;

		rcu_read_lock();
		d = rcu_dereference(*rc->slot);
		for (i = 0; d && i < 256; i++) {
			u32 id = get_random_u32_below(512);
			int ret = rc->items ? tdispatch_submit_item(d, &rc->items[id]) :
				  tdispatch_submit(d, id, NULL, 0, GFP_ATOMIC | __GFP_NOWARN);

			if (!ret) {
				rc->accepted++;
			} else if (ret == -ESHUTDOWN) {
				rc->shutdown++;
				break;
			} else if (ret != -ENOBUFS && ret != -ENOMEM) {
				rc->other++;
			}
		}
		rcu_read_unlock();
		cond_resched();
	}
	return 0;
}

static unsigned long racers_accepted(struct racer *rc, unsigned int nr)
{
	unsigned long n = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		n += READ_ONCE(rc[i].accepted);
	return n;
}

/*
 * With @items, racers submit 512 items to a dispatcher with no window,
 * on four workers with batches of 8 (express runs, which share what a
 * take holds beyond a batch): destroy finds items taken, shared and in
 * line, and puts each in line once.  Where the racers' sections end
 * before destroy (half the rounds), each accepted submission was
 * released once or merged into one waiting (counted overridden); every
 * item is free again after each destroy.
 */
static void submit_races_destroy(struct tcase *t, struct tdispatch_item *items)
{
	struct tdispatch_config cfg = base_cfg;
	static struct tdispatch __rcu *slot;
	unsigned long shutdown = 0, other = 0;
	unsigned int cpu, nr = 0, round, i;
	struct racer *rc;

	cfg.workers = items ? 4 : 2;
	cfg.max_batch = items ? 8 : 16;
	rc = kcalloc(nr_cpu_ids, sizeof(*rc), GFP_KERNEL);
	if (!T_EXPECT(t, rc))
		return;
	for_each_online_cpu(cpu) {
		rc[nr].slot = &slot;
		rc[nr].items = items;
		rc[nr].task = kthread_create_on_cpu(racer_fn, &rc[nr], cpu, "tdrace/%u");
		if (!T_EXPECT(t, !IS_ERR(rc[nr].task)))
			break;
		wake_up_process(rc[nr].task);
		nr++;
	}
	/* Items: half the rounds; each holds what the tasks' does, and more workers. */
	for (round = 0; round < (items ? race_rounds / 2 : race_rounds) && !t->failures; round++) {
		struct recorder *r = rec_start(t, &cfg);
		struct tdispatch_stats st = { };
		/* Items: every other pair of rounds waits for the racers' sections. */
		bool exact = !items || (round & 2);
		unsigned long before;

		if (!r)
			break;
		before = racers_accepted(rc, nr);
		rcu_assign_pointer(slot, r->d);
		/* Let them get going, then pull the dispatcher from under them. */
		wait_event_idle_timeout(r->wait, READ_ONCE(r->released) >= 64, WAIT_LIMIT);
		RCU_INIT_POINTER(slot, NULL);
		if (items && exact) {
			/* No submission after this: the merges are all counted. */
			synchronize_rcu();
			tdispatch_get_stats(r->d, &st);
			check_stats(t, &st);
			T_EXPECT_EQ(t, st.accepted, racers_accepted(rc, nr) - before);
		}
		/*
		 * A drain of up to max_buffer and every CPU's max_input took
		 * over a second once on the debug kernel: the race, not the
		 * drain's speed, is what is tested.
		 */
		T_EXPECT_EQ(t, tdispatch_destroy(r->d, round & 1 ? TDISPATCH_DRAIN :
						 TDISPATCH_DISCARD, WAIT_LIMIT), 0);
		/* Destroy waited out every section that had the pointer. */
		if (exact)
			T_EXPECT_EQ(t, r->released + st.overridden,
				    racers_accepted(rc, nr) - before);
		else
			T_EXPECT(t, r->released <= racers_accepted(rc, nr) - before);
		T_EXPECT_EQ(t, atomic_read(&r->overlaps), 0);
		for (i = 0; items && i < 512; i++)
			T_EXPECT_EQ(t, READ_ONCE(items[i].task.item_state), 0);
		rec_free(r);
	}
	for (i = 0; i < nr; i++) {
		kthread_stop(rc[i].task);
		shutdown += rc[i].shutdown;
		other += rc[i].other;
	}
	t_log(t, "%u rounds, %lu tasks accepted, %lu submissions met -ESHUTDOWN", round,
	      racers_accepted(rc, nr), shutdown);
	T_EXPECT_EQ(t, other, 0);
	/* Bursts straddle the destroy: some must have met it. */
	T_EXPECT(t, shutdown > 0);
	kfree(rc);
}

static void test_submit_races_destroy(struct tcase *t)
{
	submit_races_destroy(t, NULL);
}

static void test_item_submit_races_destroy(struct tcase *t)
{
	struct tdispatch_item *items = kcalloc(512, sizeof(*items), GFP_KERNEL);
	unsigned int i;

	if (!T_EXPECT(t, items))
		return;
	for (i = 0; i < 512; i++)
		tdispatch_item_init(&items[i], i, NULL);
	submit_races_destroy(t, items);
	kfree(items);
}

static enum tdispatch_result random_result(struct recorder *r,
					   struct tdispatch_batch *b,
					   unsigned int nth)
{
	u32 x = get_random_u32_below(100);

	if (x < 70)
		return TDISPATCH_RESULT_SUCCESS;
	if (x < 80)
		return TDISPATCH_RESULT_CONGESTION;
	if (x < 90)
		return TDISPATCH_RESULT_TRANSIENT;
	return TDISPATCH_RESULT_PERMANENT;
}

static void test_per_id_exclusion_under_concurrency(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	struct producer *p;
	unsigned int nr;

	cfg.workers = 4;
	cfg.max_batch = 4;
	cfg.congestion_delay_ns = 100 * NSEC_PER_USEC;
	cfg.transient_delay_ns = 100 * NSEC_PER_USEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = random_result;
	p = producers_start(t, r, 5000, &nr);
	if (!p)
		return;
	producers_stop(p, nr);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT(t, r->max_running <= 4);
	kfree(p);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * With no window and the one worker busy, a submission wakes no one until
 * a batch's worth waits on its CPU: the worker's batch end, which sets its
 * free bit and then drains the input, takes it.  A full barrier on each
 * side (the submitter's llist_add(), the worker's smp_mb()) keeps a task
 * pushed as the batch ends from waiting for the next push.  Each round,
 * every CPU submits a short burst at once, and nothing more is pushed
 * until every task of the round is released: a stranded task would wait
 * out the round's limit.  A batch end that did not drain fails it at
 * once; the window the barriers close is narrower than it can catch.
 */
static unsigned int burst_rounds = 3000;
module_param(burst_rounds, uint, 0444);
MODULE_PARM_DESC(burst_rounds, "rounds of the bursts case (default 3000)");

/* Below max_batch: a burst alone wakes no one while the worker is busy. */
#define BURST_MAX	12

struct burster {
	struct task_struct *task;
	struct recorder *r;
	unsigned int index;
	unsigned long accepted;
	int last_err;
};

static DECLARE_WAIT_QUEUE_HEAD(burst_wait);
static unsigned int burst_round;
static atomic_t burst_left;

static int burster_fn(void *arg)
{
	struct burster *b = arg;
	unsigned int seen = 0;

	for (;;) {
		unsigned int i, n;

		wait_event_idle(burst_wait, READ_ONCE(burst_round) != seen ||
				kthread_should_stop());
		if (kthread_should_stop())
			return 0;
		seen = READ_ONCE(burst_round);
		n = 1 + get_random_u32_below(BURST_MAX);
		for (i = 0; i < n; i++) {
			u64 id = b->index * 64 + get_random_u32_below(64);
			int ret = tdispatch_submit(b->r->d, id, NULL, 0, GFP_KERNEL);

			if (ret)
				b->last_err = ret;
			else
				b->accepted++;
			udelay(get_random_u32_below(4));
		}
		/* Ordered before it: the driver reads ->accepted after its acquire. */
		if (atomic_dec_and_test(&burst_left))
			wake_up_all(&burst_wait);
	}
}

/* Batches of a random duration: the bursts meet the worker busy, and ending one. */
static enum tdispatch_result burst_decide(struct recorder *r, struct tdispatch_batch *b,
					  unsigned int nth)
{
	udelay(get_random_u32_below(20));
	return TDISPATCH_RESULT_SUCCESS;
}

static void test_bursts_at_batch_end_are_not_stranded(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	unsigned long accepted = 0;
	unsigned int cpu, i, nr = 0, round;
	struct tdispatch_stats st;
	struct burster *b;
	struct recorder *r;

	cfg.max_batch = 16;
	cfg.max_buffer = 8192;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = burst_decide;
	b = kcalloc(nr_cpu_ids, sizeof(*b), GFP_KERNEL);
	if (!T_EXPECT(t, b)) {
		rec_finish(t, r, TDISPATCH_DRAIN);
		return;
	}
	WRITE_ONCE(burst_round, 0);
	for_each_online_cpu(cpu) {
		b[nr] = (struct burster) { .r = r, .index = nr };
		b[nr].task = kthread_create_on_cpu(burster_fn, &b[nr], cpu, "tdburst/%u");
		if (!T_EXPECT(t, !IS_ERR(b[nr].task)))
			break;
		wake_up_process(b[nr].task);
		nr++;
	}
	for (round = 1; nr && round <= burst_rounds && !t->failures; round++) {
		atomic_set(&burst_left, nr);
		WRITE_ONCE(burst_round, round);
		wake_up_all(&burst_wait);
		if (!wait_event_idle_timeout(burst_wait, !atomic_read_acquire(&burst_left),
					     WAIT_LIMIT)) {
			t_log(t, "round %u: the bursts did not end", round);
			t->failures++;
			break;
		}
		for (i = 0, accepted = 0; i < nr; i++)
			accepted += b[i].accepted;
		/* Only the worker's batch ends take what the bursts left. */
		if (!wait_event_idle_timeout(r->wait, READ_ONCE(r->released) >= accepted,
					     WAIT_LIMIT)) {
			tdispatch_get_stats(r->d, &st);
			t_log(t, "round %u: %u of %lu tasks released after %d s, %llu queued",
			      round, READ_ONCE(r->released), accepted, WAIT_LIMIT / HZ, st.queued);
			t->failures++;
		}
	}
	for (i = 0; i < nr; i++) {
		kthread_stop(b[i].task);
		T_EXPECT_EQ(t, b[i].last_err, 0);
	}
	tdispatch_get_stats(r->d, &st);
	t_log(t, "%u rounds on %u CPUs: %lu tasks, %llu batches, %llu wake-ups",
	      round - 1, nr, accepted, st.batches, st.wakeups);
	kfree(b);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/* The newest version of each object a processing saw: all succeed. */
static enum tdispatch_result see_versions(struct recorder *r, struct tdispatch_batch *b,
					  unsigned int nth)
{
	unsigned int i;

	/* One worker at a time per id: a plain store. */
	for (i = 0; i < b->nr; i++) {
		u64 id = tdispatch_task_id(tdispatch_batch_task(b, i));

		if (id < NR_LOAD_ITEMS)
			WRITE_ONCE(load_seen[id], atomic64_read(&load_ver[id]));
	}
	return TDISPATCH_RESULT_SUCCESS;
}

static bool load_items_idle(void)
{
	unsigned int i;

	for (i = 0; i < NR_LOAD_ITEMS; i++)
		if (READ_ONCE(load_items[i].task.item_state))
			return false;
	return true;
}

static bool load_items_seen(void)
{
	unsigned int i;

	/*
	 * After load_items_idle(): each processing's store came before its
	 * item went idle (td_item_ended()'s cmpxchg).
	 */
	smp_rmb();
	for (i = 0; i < NR_LOAD_ITEMS; i++)
		if (READ_ONCE(load_seen[i]) != atomic64_read(&load_ver[i]))
			return false;
	return true;
}

/*
 * Submissions released, but for tasks released as overridden: counted in
 * ->overridden too, as an item's submission merged into one waiting is,
 * unreleased.
 */
static unsigned long load_released(struct recorder *r)
{
	unsigned long n;

	spin_lock(&r->lock);
	n = r->released - r->outcome[TDISPATCH_OUTCOME_OVERRIDDEN];
	spin_unlock(&r->lock);
	return n;
}

/*
 * Producers on every CPU submit @per_cpu items each, while the equation
 * is checked on live snapshots.  Then, with no further call, every item
 * goes idle, and each submission was either released once or merged into
 * one waiting (counted overridden).  Return the submissions accepted.
 */
static unsigned long load_items_round(struct tcase *t, struct recorder *r, unsigned long per_cpu)
{
	struct tdispatch_stats st;
	unsigned long accepted;
	struct producer *p;
	unsigned int nr;

	p = producers_run(t, r, per_cpu, false, true, &nr);
	if (!p)
		return 0;
	if (!T_EXPECT(t, nr == num_online_cpus())) {
		producers_stop(p, nr);
		kfree(p);
		return 0;
	}
	while (!wait_for_completion_timeout(&p[0].done, HZ / 10)) {
		tdispatch_get_stats(r->d, &st);
		check_stats(t, &st);
	}
	accepted = producers_stop(p, nr);
	kfree(p);
	T_EXPECT_EQ(t, accepted, per_cpu * nr);
	/* Idle items are requeued no more: merges are all counted. */
	T_EXPECT(t, wait_event_idle_timeout(r->wait, load_items_idle(), WAIT_LIMIT));
	/* And tasks still on a list are drained: their overrides are counted. */
	td_sync(t, r);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT(t, wait_event_idle_timeout(r->wait, load_released(r) + st.overridden >=
					    st.accepted, WAIT_LIMIT));
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.queued + st.pending + st.in_flight, 0);
	T_EXPECT_EQ(t, load_released(r) + st.overridden, st.accepted);
	return accepted;
}

/*
 * Items with no window on four workers, as a driver's objects would be
 * (express runs: worker.c, with takes of more than a batch shared between
 * the workers): first all succeed, and each object's newest version is
 * processed with no further call, with a task every 64th submission (a
 * take that meets one puts its list, and what runs shared before it, in
 * the pending set's line); then batches fail at random, and no
 * submission is lost or released twice, and no id is in two batches.
 */
static void test_items_under_load_end_with_the_newest_processed(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	unsigned long accepted;
	struct recorder *r;
	unsigned int i;
	int ret;

	cfg.name = "items";
	cfg.workers = 4;
	cfg.max_batch = 8;
	/* Every item, and a task pending and one waiting behind it for each of their ids. */
	cfg.max_buffer = 3 * NR_LOAD_ITEMS;
	cfg.congestion_delay_ns = 100 * NSEC_PER_USEC;
	cfg.transient_delay_ns = 100 * NSEC_PER_USEC;
	load_items = kvcalloc(NR_LOAD_ITEMS, sizeof(*load_items), GFP_KERNEL);
	if (!T_EXPECT(t, load_items))
		return;
	for (i = 0; i < NR_LOAD_ITEMS; i++) {
		tdispatch_item_init(&load_items[i], i, NULL);
		atomic64_set(&load_ver[i], 0);
		load_seen[i] = 0;
	}
	r = rec_start(t, &cfg);
	if (!r)
		goto out;
	r->decide = see_versions;
	load_task_every = 64;
	accepted = load_items_round(t, r, 25000);
	load_task_every = 0;
	T_EXPECT(t, load_items_seen());
	r->decide = random_result;
	accepted += load_items_round(t, r, 10000);
	t_log(t, "%lu item submissions, %u released, %u done, %d at most running",
	      accepted, r->released, r->outcome[TDISPATCH_OUTCOME_DONE], r->max_running);
	ret = tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT);
	T_EXPECT_EQ(t, ret, 0);
	T_EXPECT_EQ(t, atomic_read(&r->overlaps), 0);
	T_EXPECT(t, r->max_running <= 4);
	rec_free(r);
out:
	kvfree(load_items);
	load_items = NULL;
}

/*
 * Merges under load: producers on every CPU and a hard irq timer replace
 * the payloads of waiting tasks (tdispatch_submit_merge()), each id
 * changed by one of them only, so its versions rise.
 */
#define NR_MERGE_IDS	256
#define MERGE_IRQ_IDS	16	/* the timer's, after the threads' */
#define MERGE_IRQ_MODE	(IS_ENABLED(CONFIG_PREEMPT_RT) ? HRTIMER_MODE_REL : HRTIMER_MODE_REL_HARD)

struct merge_change {
	u64 id;
	u64 version;
};

struct merge_load {
	struct tdispatch *d;
	wait_queue_head_t wait;
	u64 last[NR_MERGE_IDS + MERGE_IRQ_IDS];	/* newest accepted, by its submitter */
	u64 seen[NR_MERGE_IDS + MERGE_IRQ_IDS];	/* newest processed */
	atomic_long_t made, returned, released, regressed, retried;
	unsigned int nr_threads;
	struct hrtimer hrt;
	bool irq_stop;
	unsigned int irq_runs;
};

/* Submit @id's next version; false if refused (input full). */
static bool merge_change(struct merge_load *ml, u64 id, gfp_t gfp)
{
	struct merge_change *c = kmalloc(sizeof(*c), gfp);
	u64 version = ml->last[id] + 1;
	void *old;
	int ret;

	if (!c)
		return false;
	*c = (struct merge_change) { .id = id, .version = version };
	ret = tdispatch_submit_merge(ml->d, id, c, gfp, &old);
	if (ret) {
		kfree(c);
		return false;
	}
	/* @c is the engine's now: it may be processed and freed already. */
	atomic_long_inc(&ml->made);
	WRITE_ONCE(ml->last[id], version);
	if (old) {
		struct merge_change *o = old;

		/* Never processed: the older version of the same id. */
		if (o->id != id || o->version >= version)
			atomic_long_inc(&ml->regressed);
		kfree(o);
		atomic_long_inc(&ml->returned);
	}
	return true;
}

static enum hrtimer_restart merge_irq_fn(struct hrtimer *h)
{
	struct merge_load *ml = container_of(h, struct merge_load, hrt);

	merge_change(ml, NR_MERGE_IDS + ml->irq_runs++ % MERGE_IRQ_IDS, GFP_ATOMIC);
	if (READ_ONCE(ml->irq_stop))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(h, ns_to_ktime(50 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

struct merge_thread {
	struct merge_load *ml;
	unsigned int nth;
	unsigned long todo;
	struct task_struct *task;
	struct completion done;
};

static int merge_thread_fn(void *arg)
{
	struct merge_thread *mt = arg;
	struct merge_load *ml = mt->ml;
	unsigned long n;

	for (n = 0; n < mt->todo; n++) {
		u64 id = get_random_u32_below(NR_MERGE_IDS / ml->nr_threads) * ml->nr_threads +
			 mt->nth;

		while (!merge_change(ml, id, GFP_KERNEL))
			cond_resched();
		if (!(n % 64))
			cond_resched();
	}
	complete_all(&mt->done);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ);
	return 0;
}

static enum tdispatch_result merge_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	struct merge_load *ml = tdispatch_priv(d);
	unsigned int i;

	/* Now and then a batch to retry: the newest must still be processed. */
	if (!get_random_u32_below(8)) {
		atomic_long_inc(&ml->retried);
		return TDISPATCH_RESULT_TRANSIENT;
	}
	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *t = tdispatch_batch_task(b, i);
		struct merge_change *c = tdispatch_task_payload(t);

		/* One worker at a time per id: each processing newer than the last. */
		if (c->id != tdispatch_task_id(t) || c->version <= ml->seen[c->id])
			atomic_long_inc(&ml->regressed);
		else
			WRITE_ONCE(ml->seen[c->id], c->version);
	}
	wake_up_all(&ml->wait);
	return TDISPATCH_RESULT_SUCCESS;
}

static void merge_release(struct tdispatch *d, struct tdispatch_task *t,
			  enum tdispatch_outcome outcome)
{
	struct merge_load *ml = tdispatch_priv(d);

	kfree(tdispatch_task_payload(t));
	atomic_long_inc(&ml->released);
}

static const struct tdispatch_ops merge_ops = {
	.process = merge_process,
	.release = merge_release,
};

static bool merge_load_seen(struct merge_load *ml)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ml->last); i++)
		if (READ_ONCE(ml->seen[i]) != READ_ONCE(ml->last[i]))
			return false;
	return true;
}

/*
 * No payload is lost, leaked or freed twice (KASAN and kmemleak on the
 * debug kernel): each is handed back by the merge that replaced it or
 * released once.  No id's processing goes back to an older version, and
 * with no further call each id's newest is processed.  No id is in two
 * batches at once, or the versions would go back.
 */
static void test_merges_under_load_end_with_the_newest_processed(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct merge_thread *mt;
	struct tdispatch_stats st;
	struct merge_load *ml;
	unsigned int i, n = 0;

	cfg.name = "merges";
	cfg.workers = 4;
	cfg.max_batch = 16;
	cfg.flags = TDISPATCH_MERGE;
	cfg.congestion_delay_ns = 100 * NSEC_PER_USEC;
	cfg.transient_delay_ns = 100 * NSEC_PER_USEC;
	ml = kzalloc(sizeof(*ml), GFP_KERNEL);
	mt = kcalloc(nr_cpu_ids, sizeof(*mt), GFP_KERNEL);
	if (!T_EXPECT(t, ml && mt))
		goto out;
	init_waitqueue_head(&ml->wait);
	/* Each with an id of its own at least. */
	ml->nr_threads = min(num_online_cpus(), NR_MERGE_IDS);
	ml->d = tdispatch_create(&cfg, &merge_ops, ml);
	if (!T_EXPECT(t, !IS_ERR(ml->d)))
		goto out;
	/* In hard irq, but for PREEMPT_RT, whose slab may not be called there. */
	hrtimer_init(&ml->hrt, CLOCK_MONOTONIC, MERGE_IRQ_MODE);
	ml->hrt.function = merge_irq_fn;
	hrtimer_start(&ml->hrt, ns_to_ktime(50 * NSEC_PER_USEC), MERGE_IRQ_MODE);
	for_each_online_cpu(i) {
		if (n == ml->nr_threads)
			break;
		mt[n] = (struct merge_thread) { .ml = ml, .nth = n, .todo = 50000 };
		init_completion(&mt[n].done);
		mt[n].task = kthread_create_on_cpu(merge_thread_fn, &mt[n], i, "tdmerge/%u");
		if (!T_EXPECT(t, !IS_ERR(mt[n].task)))
			break;
		wake_up_process(mt[n].task);
		n++;
	}
	for (i = 0; i < n; i++) {
		while (!wait_for_completion_timeout(&mt[i].done, HZ / 10)) {
			tdispatch_get_stats(ml->d, &st);
			check_stats(t, &st);
		}
		kthread_stop(mt[i].task);
	}
	WRITE_ONCE(ml->irq_stop, true);
	hrtimer_cancel(&ml->hrt);
	T_EXPECT(t, wait_event_idle_timeout(ml->wait, merge_load_seen(ml), WAIT_LIMIT));
	tdispatch_get_stats(ml->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.accepted, atomic_long_read(&ml->made));
	T_EXPECT_EQ(t, tdispatch_destroy(ml->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, atomic_long_read(&ml->regressed), 0);
	T_EXPECT_EQ(t, atomic_long_read(&ml->returned) + atomic_long_read(&ml->released),
		    atomic_long_read(&ml->made));
	T_EXPECT(t, ml->irq_runs > 0);
	t_log(t, "%ld accepted, %ld merged, %ld released, %ld batches retried, %u from hard irq",
	      atomic_long_read(&ml->made), atomic_long_read(&ml->returned),
	      atomic_long_read(&ml->released), atomic_long_read(&ml->retried), ml->irq_runs);
out:
	kfree(mt);
	kfree(ml);
}

/*
 * A million tasks from every CPU, random results; with @faults the
 * producers' allocations fail at random too, and each failure must be an
 * -ENOMEM the producer sees, never a task lost or leaked.
 */
static void stress_million_tasks(struct tcase *t, bool faults)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	unsigned long accepted, nomem = 0, busy = 0;
	struct recorder *r;
	struct producer *p;
	unsigned int i, nr, checks = 0;
	ktime_t start = ktime_get();
	s64 ms;

	cfg.name = "stress";
	cfg.workers = 4;
	cfg.max_batch = 64;
	cfg.max_buffer = 8192;
	cfg.max_delay_ns = NSEC_PER_MSEC;
	cfg.congestion_delay_ns = 100 * NSEC_PER_USEC;
	cfg.transient_delay_ns = 100 * NSEC_PER_USEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = random_result;
	r->free_payloads = 16;
	p = producers_start_faults(t, r, DIV_ROUND_UP(stress_tasks, num_online_cpus()),
				   faults, &nr);
	if (!p)
		return;
	/* The equation holds on every snapshot, also mid-flight. */
	while (!wait_for_completion_timeout(&p[0].done, HZ / 10)) {
		tdispatch_get_stats(r->d, &st);
		check_stats(t, &st);
		checks++;
	}
	accepted = producers_stop(p, nr);
	for (i = 0; i < nr; i++) {
		nomem += p[i].nomem;
		busy += p[i].busy;
	}
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT(t, accepted >= stress_tasks);
	T_EXPECT_EQ(t, st.accepted, accepted);
	/* Every refusal is one the producers saw: a full input or a fault. */
	T_EXPECT_EQ(t, st.rejected, nomem + busy);
	T_EXPECT(t, st.overridden > 0);
	if (faults)
		T_EXPECT(t, nomem > 0);
	ms = ktime_ms_delta(ktime_get(), start);
	t_log(t, "submitted %lu on %u CPUs in %lld ms, %u mid-run snapshots, %lu injected -ENOMEM",
	      accepted, nr, ms, checks, nomem);
	t_log(t, "done %llu failed %llu overridden %llu dropped %llu expired %llu",
	      st.done, st.failed, st.overridden, st.dropped, st.expired);
	t_log(t, "batches %llu retries %llu holdoffs %llu rejected %llu",
	      st.batches, st.retries, st.holdoffs, st.rejected);
	kfree(p);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_stress_million_tasks(struct tcase *t)
{
	stress_million_tasks(t, false);
}

static void test_stress_million_tasks_under_faults(struct tcase *t)
{
	if (!IS_ENABLED(CONFIG_FAILSLAB) || !fault_stress) {
		t->skip = "no failslab set up (fault_stress=0)";
		return;
	}
	stress_million_tasks(t, true);
}

static const struct td_case cases[] = {
	CASE(wakeup_only_on_first_add_and_arrival_order),
	CASE(submit_from_irq_contexts),
	CASE(submit_races_destroy),
	CASE(item_submit_races_destroy),
	CASE(per_id_exclusion_under_concurrency),
	CASE(bursts_at_batch_end_are_not_stranded),
	CASE(items_under_load_end_with_the_newest_processed),
	CASE(merges_under_load_end_with_the_newest_processed),
	CASE(stress_million_tasks),
	CASE(stress_million_tasks_under_faults),
};

static int __init tdispatch_race_test_init(void)
{
	return td_run_cases(cases, ARRAY_SIZE(cases));
}

static void __exit tdispatch_race_test_exit(void)
{
	td_cases_exit();
}

module_init(tdispatch_race_test_init);
module_exit(tdispatch_race_test_exit);
MODULE_DESCRIPTION("tdispatch API tests: submitters in every context, races, items, stress");
MODULE_LICENSE("GPL");
