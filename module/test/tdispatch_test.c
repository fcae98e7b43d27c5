// SPDX-License-Identifier: GPL-2.0
/*
 * tdispatch API test: drives the exported API with a recording processor,
 * as Eureka's batcher tests do with their RecordingProcessor, on every
 * kernel (KUnit is not built into the stock ones).  The cases run at load;
 * their KTAP is in /sys/kernel/debug/tdispatch_test/results.
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

/* The most max_buffer and burst may be, as the API documents them. */
#define MAX_BUFFER_LIMIT	BIT(20)

static unsigned int stress_tasks = 1000000;
module_param(stress_tasks, uint, 0444);
MODULE_PARM_DESC(stress_tasks, "tasks the stress case submits in all (default 1000000)");
static bool fault_stress;
module_param(fault_stress, bool, 0444);
MODULE_PARM_DESC(fault_stress,
		 "run the stress once more with the producers' allocations failing (the harness sets up failslab with task-filter)");

#include "recorder.h"

/* ---- the cases ----------------------------------------------------------- */

static void test_single_item_mode(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	unsigned int i;

	if (!r)
		return;
	for (i = 0; i < 5; i++)
		T_EXPECT_EQ(t, submit(r, i, 100 + i), 0);
	if (rec_wait_released(t, r, 5)) {
		T_EXPECT_EQ(t, r->nr_rec, 5);
		for (i = 0; i < 5; i++) {
			T_EXPECT_EQ(t, r->rec[i].nr, 1);
			T_EXPECT_EQ(t, r->payload_of[i], 100 + i);
		}
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DONE), 5);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_batch_never_exceeds_max_batch(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i, total = 0, full = 0;

	cfg.max_batch = 4;
	cfg.max_delay_ns = 50 * NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	for (i = 0; i < 30; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	if (rec_wait_released(t, r, 30)) {
		for (i = 0; i < r->nr_rec; i++) {
			T_EXPECT(t, r->rec[i].nr >= 1 && r->rec[i].nr <= 4);
			total += r->rec[i].nr;
			full += r->rec[i].nr == 4;
		}
		T_EXPECT_EQ(t, total, 30);
		T_EXPECT(t, full >= 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_newer_task_overrides_older(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;

	/* Nothing is cut before destroy flushes: both meet in the set. */
	cfg.max_batch = 8;
	cfg.max_delay_ns = TDISPATCH_MAX_DELAY_NS;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	T_EXPECT_EQ(t, submit(r, 7, 1), 0);
	T_EXPECT_EQ(t, submit(r, 8, 2), 0);
	T_EXPECT_EQ(t, submit(r, 7, 3), 0);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, r->nr_rec, 1);
	T_EXPECT_EQ(t, r->rec[0].nr, 2);
	/* The newer payload won, in the older one's place in line. */
	T_EXPECT_EQ(t, r->rec[0].first_id, 7);
	T_EXPECT_EQ(t, r->payload_of[7], 3);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_OVERRIDDEN], 1);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 2);
	rec_free(r);
}

static enum tdispatch_result transient_first(struct recorder *r,
					     struct tdispatch_batch *b,
					     unsigned int nth)
{
	return nth == 0 ? TDISPATCH_RESULT_TRANSIENT : TDISPATCH_RESULT_SUCCESS;
}

static void test_retried_task_goes_first(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);

	if (!r)
		return;
	r->gated = true;
	r->decide = transient_first;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	gate_wait_entered(t, r);
	T_EXPECT_EQ(t, submit(r, 2, 2), 0);
	T_EXPECT_EQ(t, submit(r, 3, 3), 0);
	td_sync(t, r);
	complete(&r->gate);
	if (rec_wait_released(t, r, 3)) {
		T_EXPECT_EQ(t, r->nr_rec, 4);
		T_EXPECT_EQ(t, r->rec[0].first_id, 1);
		T_EXPECT_EQ(t, r->rec[1].first_id, 1);
		T_EXPECT_EQ(t, r->rec[1].first_attempts, 1);
		T_EXPECT_EQ(t, r->rec[2].first_id, 2);
		T_EXPECT_EQ(t, r->rec[3].first_id, 3);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_oldest_dropped_on_overflow(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i;

	cfg.max_buffer = 3;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->gated = true;
	T_EXPECT_EQ(t, submit(r, 100, 100), 0);
	gate_wait_entered(t, r);
	for (i = 1; i <= 4; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	td_sync(t, r);
	/* The acceptor may have dropped it and be releasing it right now. */
	rec_wait_released(t, r, 1);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DROPPED), 1);
	complete(&r->gate);
	if (rec_wait_released(t, r, 5)) {
		T_EXPECT_EQ(t, r->nr_rec, 4);
		T_EXPECT_EQ(t, r->payload_of[1], 0);	/* never processed */
		for (i = 2; i <= 4; i++)
			T_EXPECT_EQ(t, r->rec[i - 1].first_id, i);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_tasks_within_max_delay_share_a_batch(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;

	cfg.max_batch = 10;
	cfg.max_delay_ns = 500 * NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	T_EXPECT_EQ(t, submit(r, 2, 2), 0);
	/* Cut by age, not by size or destroy. */
	if (rec_wait_released(t, r, 2)) {
		T_EXPECT_EQ(t, r->nr_rec, 1);
		T_EXPECT_EQ(t, r->rec[0].nr, 2);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_expired_tasks_are_not_processed(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	ktime_t soon;

	if (!r)
		return;
	r->gated = true;
	T_EXPECT_EQ(t, submit(r, 100, 100), 0);
	gate_wait_entered(t, r);
	/* Already past its deadline when submitted: expired on arrival. */
	T_EXPECT_EQ(t, tdispatch_submit(r->d, 1, (void *)1, ktime_sub_ns(ktime_get(), 1),
					GFP_KERNEL), 0);
	/* Expires while it waits behind the busy worker. */
	soon = ktime_add_ms(ktime_get(), 20);
	T_EXPECT_EQ(t, tdispatch_submit(r->d, 2, (void *)2, soon, GFP_KERNEL), 0);
	T_EXPECT_EQ(t, submit(r, 3, 3), 0);
	td_sync(t, r);
	rec_wait_released(t, r, 1);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_EXPIRED), 1);
	/* Waiting for time itself to pass: there is no other event. */
	while (ktime_before(ktime_get(), soon))
		usleep_range(2000, 5000);
	complete(&r->gate);
	if (rec_wait_released(t, r, 4)) {
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_EXPIRED), 2);
		T_EXPECT_EQ(t, r->nr_rec, 2);
		T_EXPECT_EQ(t, r->payload_of[1] + r->payload_of[2], 0);
		T_EXPECT_EQ(t, r->payload_of[3], 3);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_batches_spread_across_workers(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i, j, distinct = 0;

	cfg.workers = 4;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->hold_until_running = 4;
	for (i = 0; i < 8; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	if (rec_wait_released(t, r, 8)) {
		T_EXPECT_EQ(t, r->max_running, 4);
		for (i = 0; i < 4; i++) {
			for (j = 0; j < i; j++)
				if (r->rec[j].pid == r->rec[i].pid)
					break;
			distinct += j == i;
		}
		/* The first four ran at once, so on four kworkers. */
		T_EXPECT_EQ(t, distinct, 4);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_cancel(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);

	if (!r)
		return;
	r->gated = true;
	T_EXPECT_EQ(t, submit(r, 100, 100), 0);
	gate_wait_entered(t, r);
	T_EXPECT_EQ(t, submit(r, 5, 5), 0);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 5), 0);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_CANCELLED), 1);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 5), -ENOENT);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 100), -EBUSY);
	/* A newer 100 waits behind the running one and can be cancelled. */
	T_EXPECT_EQ(t, submit(r, 100, 101), 0);
	T_EXPECT_EQ(t, tdispatch_cancel(r->d, 100), 0);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_CANCELLED), 2);
	complete(&r->gate);
	if (rec_wait_released(t, r, 3)) {
		T_EXPECT_EQ(t, r->nr_rec, 1);
		T_EXPECT_EQ(t, r->payload_of[5], 0);
		T_EXPECT_EQ(t, r->payload_of[100], 100);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static enum tdispatch_result first_result(struct recorder *r,
					  struct tdispatch_batch *b,
					  unsigned int nth)
{
	return nth == 0 ? (enum tdispatch_result)tdispatch_task_id(b->tasks[0]) :
			  TDISPATCH_RESULT_SUCCESS;
}

/* After @result the next batch starts no sooner than @delay_ms later. */
static void check_holdoff(struct tcase *t, enum tdispatch_result result,
			  unsigned int delay_ms)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	s64 gap;

	cfg.congestion_delay_ns = 300 * NSEC_PER_MSEC;
	cfg.transient_delay_ns = 150 * NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = first_result;
	r->gated = true;
	/* The id says what the first batch returns. */
	T_EXPECT_EQ(t, submit(r, result, 0), 0);
	gate_wait_entered(t, r);
	T_EXPECT_EQ(t, submit(r, 50, 50), 0);
	td_sync(t, r);
	complete(&r->gate);
	if (rec_wait_released(t, r, 2)) {
		T_EXPECT_EQ(t, r->nr_rec, 3);
		T_EXPECT_EQ(t, r->rec[1].first_id, result);
		gap = ktime_ms_delta(r->rec[1].start, r->rec[0].end);
		T_EXPECT(t, gap >= delay_ms);
		/* Capped: a hold-off never stretches into seconds. */
		T_EXPECT(t, gap < delay_ms + 5000);
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.holdoffs, 1);
		T_EXPECT_EQ(t, st.retries, 1);
		T_EXPECT_EQ(t, st.results[result], 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_shaper_holds_off_after_congestion(struct tcase *t)
{
	check_holdoff(t, TDISPATCH_RESULT_CONGESTION, 300);
}

static void test_shaper_holds_off_after_transient(struct tcase *t)
{
	check_holdoff(t, TDISPATCH_RESULT_TRANSIENT, 150);
}

static enum tdispatch_result permanent_always(struct recorder *r,
					      struct tdispatch_batch *b,
					      unsigned int nth)
{
	return TDISPATCH_RESULT_PERMANENT;
}

static void test_permanent_failure_is_dropped(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);

	if (!r)
		return;
	r->decide = permanent_always;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	if (rec_wait_released(t, r, 1)) {
		T_EXPECT_EQ(t, r->nr_rec, 1);
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_FAILED), 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_destroy_drain_processes_everything(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;
	unsigned int i;

	cfg.max_batch = 4;
	cfg.max_delay_ns = TDISPATCH_MAX_DELAY_NS;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->process_ms = 20;
	for (i = 0; i < 20; i++)
		T_EXPECT_EQ(t, submit(r, i, i + 1), 0);
	/* Some are in flight, the rest pending: all must be done. */
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 20);
	T_EXPECT_EQ(t, r->released, 20);
	rec_free(r);
}

static void test_destroy_discard_cancels_pending(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	unsigned int i;

	if (!r)
		return;
	r->process_ms = 200;
	for (i = 0; i < 10; i++)
		T_EXPECT_EQ(t, submit(r, i, i + 1), 0);
	/* The running batch finishes; everything behind it is cancelled. */
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DISCARD, 0), 0);
	T_EXPECT_EQ(t, r->released, 10);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE] +
		       r->outcome[TDISPATCH_OUTCOME_CANCELLED], 10);
	T_EXPECT(t, r->outcome[TDISPATCH_OUTCOME_CANCELLED] >= 5);
	rec_free(r);
}

static void test_destroy_drain_times_out(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct recorder *r;

	cfg.transient_delay_ns = TDISPATCH_MAX_DELAY_NS;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = transient_first;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	rec_wait_batches(t, r, 1);
	/* The retry is held off for 30 s; the drain gives up after 100 ms. */
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, msecs_to_jiffies(100)),
		    -ETIMEDOUT);
	T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_CANCELLED], 1);
	T_EXPECT_EQ(t, r->released, 1);
	rec_free(r);
}

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
	int last_err;
	struct completion done;
};

static int producer_fn(void *arg)
{
	struct producer *p = arg;
	struct recorder *r = p->r;

#ifdef CONFIG_FAULT_INJECTION
	/* failslab and fail_page_alloc with task-filter fail only this thread. */
	current->make_it_fail = p->faults;
#endif
	while (!p->todo || p->accepted < p->todo) {
		u64 id = get_random_u32_below(4096);
		void *payload = NULL;
		int ret;

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

static struct producer *producers_start_faults(struct tcase *t, struct recorder *r,
					       unsigned long per_cpu, bool faults,
					       unsigned int *nr)
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
			int ret = tdispatch_submit(d, get_random_u32_below(512), NULL, 0,
						   GFP_ATOMIC | __GFP_NOWARN);

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

static void test_submit_races_destroy(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	static struct tdispatch __rcu *slot;
	unsigned long shutdown = 0, other = 0;
	unsigned int cpu, nr = 0, round, i;
	struct racer *rc;

	cfg.workers = 2;
	cfg.max_batch = 16;
	rc = kcalloc(nr_cpu_ids, sizeof(*rc), GFP_KERNEL);
	if (!T_EXPECT(t, rc))
		return;
	for_each_online_cpu(cpu) {
		rc[nr].slot = &slot;
		rc[nr].task = kthread_create_on_cpu(racer_fn, &rc[nr], cpu, "tdrace/%u");
		if (!T_EXPECT(t, !IS_ERR(rc[nr].task)))
			break;
		wake_up_process(rc[nr].task);
		nr++;
	}
	for (round = 0; round < race_rounds && !t->failures; round++) {
		struct recorder *r = rec_start(t, &cfg);
		unsigned long before;

		if (!r)
			break;
		before = racers_accepted(rc, nr);
		rcu_assign_pointer(slot, r->d);
		/* Let them get going, then pull the dispatcher from under them. */
		wait_event_idle_timeout(r->wait, READ_ONCE(r->released) >= 64, WAIT_LIMIT);
		RCU_INIT_POINTER(slot, NULL);
		T_EXPECT_EQ(t, tdispatch_destroy(r->d, round & 1 ? TDISPATCH_DRAIN :
						 TDISPATCH_DISCARD, HZ), 0);
		/* Destroy waited out every section that had the pointer. */
		T_EXPECT_EQ(t, r->released, racers_accepted(rc, nr) - before);
		T_EXPECT_EQ(t, atomic_read(&r->overlaps), 0);
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

/*
 * Drain and destroy: every item submission was released once, unless it
 * merged into one waiting; @done of them were processed.
 */
static void item_finish(struct tcase *t, struct recorder *r, unsigned int merged,
			unsigned int done)
{
	struct tdispatch_stats st;

	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, tdispatch_destroy(r->d, TDISPATCH_DRAIN, WAIT_LIMIT), 0);
	T_EXPECT_EQ(t, r->released + merged, st.accepted);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DONE), done);
	T_EXPECT_EQ(t, atomic_read(&r->overlaps), 0);
	rec_free(r);
}

/*
 * Items: embedded, nothing allocated.  Submitted while processed, an item
 * runs once more after; submitted again while it waits, it merges (counted
 * accepted and overridden at once); ->release() once per time it leaves.
 */
static void test_item_submitted_while_processed_runs_again(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	struct tdispatch_item it;
	struct tdispatch_stats st;
	int i;

	if (!r)
		return;
	r->gated = true;
	tdispatch_item_init(&it, 7, NULL);
	T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it), 0);
	if (!T_EXPECT(t, wait_for_completion_timeout(&r->entered, WAIT_LIMIT)))
		goto out;
	/* In ->process() now: the first goes round again, the others merge. */
	for (i = 0; i < 3; i++)
		T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it), 0);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.accepted, 4);
	T_EXPECT_EQ(t, st.overridden, 2);
	complete(&r->gate);
	if (rec_wait_released(t, r, 2)) {
		T_EXPECT_EQ(t, r->nr_rec, 2);
		T_EXPECT_EQ(t, r->rec[1].first_id, 7);
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_DONE), 2);
		tdispatch_get_stats(r->d, &st);
		check_stats(t, &st);
		T_EXPECT_EQ(t, st.done, 2);
	}
out:
	complete(&r->gate);
	item_finish(t, r, 2, 2);
	/* Free again once released: it may be submitted to another one. */
	T_EXPECT_EQ(t, READ_ONCE(it.task.item_state), 0);
}

static void test_items_waiting_merge_and_yield_to_tasks(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_item *it;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i, round;

	cfg.max_batch = 64;
	cfg.max_delay_ns = 10 * NSEC_PER_SEC;	/* they wait: nothing is cut */
	it = kcalloc(16, sizeof(*it), GFP_KERNEL);
	r = it ? rec_start(t, &cfg) : NULL;
	if (!r) {
		kfree(it);
		return;
	}
	for (i = 0; i < 16; i++)
		tdispatch_item_init(&it[i], i, NULL);
	for (round = 0; round < 3; round++)
		for (i = 0; i < 16; i++)
			T_EXPECT_EQ(t, tdispatch_submit_item(r->d, &it[i]), 0);
	/* A plain task of an item's id replaces it, as a newer task does. */
	T_EXPECT_EQ(t, submit(r, 3, 0x33), 0);
	td_sync(t, r);
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT_EQ(t, st.accepted, 49);
	T_EXPECT_EQ(t, st.overridden, 33);
	T_EXPECT_EQ(t, st.pending, 16);
	T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_OVERRIDDEN), 1);
	/* Ended as overridden, it is free and may go again: it merges no more. */
	T_EXPECT_EQ(t, READ_ONCE(it[3].task.item_state), 0);
	item_finish(t, r, 32, 16);
	for (i = 0; i < 16; i++)
		T_EXPECT_EQ(t, READ_ONCE(it[i].task.item_state), 0);
	kfree(it);
}

/*
 * A ->process() that returns no result: the engine's own redelivery value
 * first, then garbage.  Both are failures, counted, never redeliveries.
 */
static enum tdispatch_result out_of_range(struct recorder *r, struct tdispatch_batch *b,
					  unsigned int nth)
{
	return nth ? 99 : TDISPATCH_NR_RESULTS;
}

static void test_out_of_range_result_is_a_counted_failure(struct tcase *t)
{
	struct recorder *r = rec_start(t, &base_cfg);
	struct tdispatch_stats st;

	if (!r)
		return;
	r->decide = out_of_range;
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	T_EXPECT_EQ(t, submit(r, 2, 2), 0);
	if (rec_wait_released(t, r, 2)) {
		tdispatch_get_stats(r->d, &st);
		check_stats(t, &st);
		T_EXPECT_EQ(t, r->nr_rec, 2);
		T_EXPECT_EQ(t, rec_count(r, TDISPATCH_OUTCOME_FAILED), 2);
		T_EXPECT_EQ(t, st.bad_results, 2);
		T_EXPECT_EQ(t, st.results[TDISPATCH_RESULT_PERMANENT], 2);
		T_EXPECT_EQ(t, st.redelivered, 0);
		T_EXPECT_EQ(t, st.retries, 0);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
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
 * A million tasks from every CPU, random results; with @faults the
 * producers' allocations fail at random too, and each failure must be an
 * -ENOMEM the producer sees, never a task lost or leaked.
 */
static void stress_million_tasks(struct tcase *t, bool faults)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	unsigned long accepted, nomem = 0;
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
	for (i = 0; i < nr; i++)
		nomem += p[i].nomem;
	tdispatch_get_stats(r->d, &st);
	check_stats(t, &st);
	T_EXPECT(t, accepted >= stress_tasks);
	T_EXPECT_EQ(t, st.accepted, accepted);
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

/* Calls of tdispatch_batch_set_result() with bad arguments that failed. */
static atomic_t bad_marks;

/* A batch of four: the second task retries, the third fails, the rest done. */
static enum tdispatch_result mark_some(struct recorder *r, struct tdispatch_batch *b,
				       unsigned int nth)
{
	if (b->nr != 4)
		return TDISPATCH_RESULT_SUCCESS;
	tdispatch_batch_set_result(b, 1, TDISPATCH_RESULT_CONGESTION);
	tdispatch_batch_set_result(b, 1, TDISPATCH_RESULT_TRANSIENT);
	tdispatch_batch_set_result(b, 2, TDISPATCH_RESULT_PERMANENT);
	if (tdispatch_batch_set_result(b, 4, TDISPATCH_RESULT_PERMANENT) == -EINVAL)
		atomic_inc(&bad_marks);
	if (tdispatch_batch_set_result(b, 0, TDISPATCH_NR_RESULTS) == -EINVAL)
		atomic_inc(&bad_marks);
	return TDISPATCH_RESULT_SUCCESS;
}

static void test_per_task_results_retry_only_what_failed(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	unsigned int i;

	cfg.max_batch = 4;
	cfg.max_delay_ns = 20 * NSEC_PER_MSEC;
	/* Longer than max_delay: the retry falls due while it holds. */
	cfg.transient_delay_ns = 100 * NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	atomic_set(&bad_marks, 0);
	r->gated = true;
	r->decide = mark_some;
	T_EXPECT_EQ(t, submit(r, 100, 100), 0);
	gate_wait_entered(t, r);
	for (i = 1; i <= 4; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	td_sync(t, r);
	complete(&r->gate);
	if (rec_wait_released(t, r, 5)) {
		/* The gate's batch, the four, then the retry of id 2 alone. */
		T_EXPECT_EQ(t, r->nr_rec, 3);
		T_EXPECT_EQ(t, r->rec[1].nr, 4);
		T_EXPECT_EQ(t, r->rec[2].nr, 1);
		T_EXPECT_EQ(t, r->rec[2].first_id, 2);
		T_EXPECT_EQ(t, r->rec[2].first_attempts, 1);
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 4);
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_FAILED], 1);
		T_EXPECT_EQ(t, atomic_read(&bad_marks), 2);
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.retries, 1);
		T_EXPECT_EQ(t, st.failed, 1);
		/* The batch said SUCCESS; the shaper heard its worst task. */
		T_EXPECT_EQ(t, st.results[TDISPATCH_RESULT_SUCCESS], 3);
		T_EXPECT_EQ(t, st.holdoffs, 1);
		T_EXPECT(t, ktime_ms_delta(r->rec[2].start, r->rec[1].end) >= 100);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static enum tdispatch_result transient_always(struct recorder *r, struct tdispatch_batch *b,
					      unsigned int nth)
{
	return TDISPATCH_RESULT_TRANSIENT;
}

static void test_max_attempts_end_exhausted(struct tcase *t)
{
	struct tdispatch_submit_opts once = { .max_attempts = 1 };
	struct tdispatch_submit_opts bad = { .max_attempts = TDISPATCH_MAX_ATTEMPTS + 1 };
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;

	cfg.max_attempts = 3;
	cfg.transient_delay_ns = NSEC_PER_MSEC;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	r->decide = transient_always;
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 2, NULL, &bad, GFP_KERNEL), -EINVAL);
	T_EXPECT_EQ(t, submit(r, 1, 1), 0);
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 2, (void *)2, &once, GFP_KERNEL), 0);
	if (rec_wait_released(t, r, 2)) {
		/* Three attempts of id 1, one of id 2. */
		T_EXPECT_EQ(t, r->nr_rec, 4);
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_EXHAUSTED], 2);
		tdispatch_get_stats(r->d, &st);
		T_EXPECT_EQ(t, st.exhausted, 2);
		T_EXPECT_EQ(t, st.failed, 2);
		T_EXPECT_EQ(t, st.retries, 2);
		T_EXPECT_EQ(t, st.rejected, 1);
	}
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/* tdispatch_expedite_key() lets watchers in 256 at a time. */
#define TD_MANY_WATCHERS	600

static void test_expedite_lets_a_delayed_task_in(struct tcase *t)
{
	struct tdispatch_submit_opts watch = { .watch = true, .watch_key = 9 };
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	ktime_t later;
	unsigned int i;

	cfg.max_delayed = 1024;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	later = ktime_add_ns(ktime_get(), 60 * NSEC_PER_SEC);
	T_EXPECT_EQ(t, tdispatch_submit_delayed(r->d, 5, (void *)5, later, 0, GFP_KERNEL), 0);
	T_EXPECT_EQ(t, tdispatch_expedite(r->d, 6), -ENOENT);
	T_EXPECT_EQ(t, tdispatch_expedite(r->d, 5), 0);
	if (rec_wait_released(t, r, 1)) {
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 1);
		T_EXPECT_EQ(t, r->payload_of[5], 5);
	}
	T_EXPECT_EQ(t, tdispatch_expedite(r->d, 5), -ENOENT);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.expedited, 1);
	T_EXPECT_EQ(t, st.delayed, 0);

	/* Two tasks watch key 9 (one of them due at once, so not really). */
	watch.not_before = later;
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 6, (void *)6, &watch, GFP_KERNEL), 0);
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 7, (void *)7, &watch, GFP_KERNEL), 0);
	watch.not_before = 0;
	T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 8, (void *)8, &watch, GFP_KERNEL), 0);
	T_EXPECT_EQ(t, tdispatch_expedite_key(r->d, 10), -ENOENT);
	T_EXPECT_EQ(t, tdispatch_expedite_key(r->d, 9), 2);
	if (rec_wait_released(t, r, 4))
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 4);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.expedited, 3);
	T_EXPECT_EQ(t, st.key_expedites, 1);

	/*
	 * More watchers than one chunk of the expedite, most of them still on
	 * the input lists: one call lets every one in, counted once.
	 */
	watch.watch_key = 11;
	watch.not_before = later;
	for (i = 0; i < TD_MANY_WATCHERS; i++)
		T_EXPECT_EQ(t, tdispatch_submit_with(r->d, 100 + i, (void *)1, &watch,
						     GFP_KERNEL), 0);
	T_EXPECT_EQ(t, tdispatch_expedite_key(r->d, 11), TD_MANY_WATCHERS);
	if (rec_wait_released(t, r, 4 + TD_MANY_WATCHERS))
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_DONE], 4 + TD_MANY_WATCHERS);
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.expedited, 3 + TD_MANY_WATCHERS);
	T_EXPECT_EQ(t, st.key_expedites, 2);
	T_EXPECT_EQ(t, st.delayed, 0);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

/*
 * 40 tasks at 200 a second in bursts of 4: never faster than the bucket
 * lets them go; while it holds them they wait pending and still coalesce.
 */
static void test_rate_limit_paces_batches(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_stats st;
	struct recorder *r;
	ktime_t start;
	unsigned int i;

	cfg.max_batch = 4;
	cfg.rate = 200;
	cfg.burst = 4;
	r = rec_start(t, &cfg);
	if (!r)
		return;
	start = ktime_get();
	for (i = 0; i < 40; i++)
		T_EXPECT_EQ(t, submit(r, i, i), 0);
	if (rec_wait_released(t, r, 40)) {
		/* 4 at once, then 36 more at 5 ms each. */
		T_EXPECT(t, ktime_ms_delta(ktime_get(), start) >= 175);
		for (i = 0; i < min_t(unsigned int, r->nr_rec, MAX_RECORDS); i++)
			T_EXPECT(t, r->rec[i].nr <= 4);
	}
	tdispatch_get_stats(r->d, &st);
	T_EXPECT(t, st.throttled_ns > 0);
	T_EXPECT_EQ(t, st.rate, 200);
	T_EXPECT_EQ(t, st.burst, 4);

	/* One a second: what comes meanwhile waits, and coalesces. */
	T_EXPECT_EQ(t, tdispatch_set_rate(r->d, 1, MAX_BUFFER_LIMIT + 1), -EINVAL);
	T_EXPECT_EQ(t, tdispatch_set_rate(r->d, 1, 1), 0);
	T_EXPECT_EQ(t, submit(r, 50, 50), 0);
	for (i = 0; i < 5; i++)
		T_EXPECT_EQ(t, submit(r, 100, 100 + i), 0);
	td_sync(t, r);
	T_EXPECT_EQ(t, tdispatch_set_rate(r->d, 0, 0), 0);
	if (rec_wait_released(t, r, 46)) {
		T_EXPECT_EQ(t, r->outcome[TDISPATCH_OUTCOME_OVERRIDDEN], 4);
		T_EXPECT_EQ(t, r->payload_of[100], 104);
	}
	tdispatch_get_stats(r->d, &st);
	T_EXPECT_EQ(t, st.rate, 0);
	T_EXPECT_EQ(t, st.burst, 4);
	rec_finish(t, r, TDISPATCH_DRAIN);
}

static void test_create_rejects_bad_config(struct tcase *t)
{
	struct tdispatch_config cfg = base_cfg;
	struct tdispatch_ops no_release = { .process = rec_process };

	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &no_release, NULL)), -EINVAL);
	cfg.max_batch = 0;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.max_batch = cfg.max_buffer + 1;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.workers = 65;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.max_delay_ns = TDISPATCH_MAX_DELAY_NS + 1;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.max_attempts = TDISPATCH_MAX_ATTEMPTS + 1;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
	cfg = base_cfg;
	cfg.burst = MAX_BUFFER_LIMIT + 1;
	T_EXPECT_EQ(t, PTR_ERR(tdispatch_create(&cfg, &rec_ops, NULL)), -EINVAL);
}

static const struct td_case cases[] = {
	CASE(create_rejects_bad_config),
	CASE(single_item_mode),
	CASE(wakeup_only_on_first_add_and_arrival_order),
	CASE(batch_never_exceeds_max_batch),
	CASE(newer_task_overrides_older),
	CASE(retried_task_goes_first),
	CASE(oldest_dropped_on_overflow),
	CASE(tasks_within_max_delay_share_a_batch),
	CASE(expired_tasks_are_not_processed),
	CASE(batches_spread_across_workers),
	CASE(cancel),
	CASE(shaper_holds_off_after_congestion),
	CASE(shaper_holds_off_after_transient),
	CASE(permanent_failure_is_dropped),
	CASE(destroy_drain_processes_everything),
	CASE(destroy_discard_cancels_pending),
	CASE(destroy_drain_times_out),
	CASE(submit_from_irq_contexts),
	CASE(submit_races_destroy),
	CASE(out_of_range_result_is_a_counted_failure),
	CASE(item_submitted_while_processed_runs_again),
	CASE(items_waiting_merge_and_yield_to_tasks),
	CASE(per_id_exclusion_under_concurrency),
	CASE(per_task_results_retry_only_what_failed),
	CASE(max_attempts_end_exhausted),
	CASE(expedite_lets_a_delayed_task_in),
	CASE(rate_limit_paces_batches),
	CASE(stress_million_tasks),
	CASE(stress_million_tasks_under_faults),
};

static int __init tdispatch_test_init(void)
{
	return td_run_cases(cases, ARRAY_SIZE(cases));
}

static void __exit tdispatch_test_exit(void)
{
	td_cases_exit();
}

module_init(tdispatch_test_init);
module_exit(tdispatch_test_exit);
MODULE_DESCRIPTION("tdispatch API tests with a recording processor");
MODULE_LICENSE("GPL");
