// SPDX-License-Identifier: GPL-2.0
/*
 * tdispatch demo: producers on every CPU post bursts of readings from 16
 * "sensors"; a slow consumer that is sometimes congested gets only the
 * newest reading per sensor, in batches.  Then the same with each sensor
 * an object that embeds a struct tdispatch_item: the producers store the
 * reading and submit the item, and nothing is allocated.  The report goes
 * to the kernel log; "make demo" shows it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/tdispatch.h>

#define SENSORS		16
#define READINGS	20000	/* per producer */

static atomic_t demo_last[SENSORS];
static atomic_t demo_batches;
static atomic_t demo_running = ATOMIC_INIT(1);
static DECLARE_COMPLETION(demo_producers_done);

static enum tdispatch_result demo_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	unsigned int i;

	/* Every fifth batch finds the device busy: retried after a hold-off. */
	if (!(atomic_inc_return(&demo_batches) % 5))
		return TDISPATCH_RESULT_CONGESTION;
	for (i = 0; i < b->nr; i++) {
		struct tdispatch_task *t = tdispatch_batch_task(b, i);

		atomic_set(&demo_last[tdispatch_task_id(t)],
			   (unsigned long)tdispatch_task_payload(t));
	}
	usleep_range(2000, 3000);	/* talking to the device */
	return TDISPATCH_RESULT_SUCCESS;
}

static void demo_release(struct tdispatch *d, struct tdispatch_task *t,
			 enum tdispatch_outcome outcome)
{
}

static const struct tdispatch_ops demo_ops = {
	.process = demo_process,
	.release = demo_release,
};

/* A sensor as a driver would have it: the item lives in the object. */
struct demo_sensor {
	atomic_long_t reading;
	struct tdispatch_item item;
};

static struct demo_sensor demo_sensors[SENSORS];
static bool demo_items;		/* the second round */

static enum tdispatch_result demo_item_process(struct tdispatch *d, struct tdispatch_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++) {
		struct tdispatch_item *it = tdispatch_task_item(tdispatch_batch_task(b, i));
		struct demo_sensor *s = container_of(it, struct demo_sensor, item);

		/* The newest reading: stored before the item was submitted. */
		atomic_set(&demo_last[s - demo_sensors], atomic_long_read(&s->reading));
	}
	usleep_range(2000, 3000);
	return TDISPATCH_RESULT_SUCCESS;
}

static const struct tdispatch_ops demo_item_ops = {
	.process = demo_item_process,
	.release = demo_release,
};

static int demo_producer(void *arg)
{
	struct tdispatch *d = arg;
	unsigned long n;

	for (n = 1; n <= READINGS; n++) {
		/* Every 1000th reading is stale on arrival: it expires. */
		ktime_t deadline = n % 1000 ? 0 : ktime_sub_ns(ktime_get(), 1);
		struct demo_sensor *s = &demo_sensors[n % SENSORS];

		if (demo_items) {
			atomic_long_set(&s->reading, n);
			tdispatch_submit_item(d, &s->item);
		} else {
			tdispatch_submit(d, n % SENSORS, (void *)n, deadline, GFP_KERNEL);
		}
		/* Bursts of 200 readings, a breath between them. */
		if (!(n % 200))
			usleep_range(1000, 2000);
	}
	if (atomic_dec_and_test(&demo_running))
		complete(&demo_producers_done);
	return 0;
}

static void demo_report(struct tdispatch *d, const char *when)
{
	struct tdispatch_stats st;

	tdispatch_get_stats(d, &st);
	pr_info("%s: accepted %llu rejected %llu | queued %llu pending %llu in_flight %llu\n",
		when, st.accepted, st.rejected, st.queued, st.pending, st.in_flight);
	pr_info("%s: done %llu overridden %llu dropped %llu expired %llu failed %llu cancelled %llu\n",
		when, st.done, st.overridden, st.dropped, st.expired, st.failed, st.cancelled);
	pr_info("%s: batches %llu congested %llu retries %llu holdoffs %llu\n", when,
		st.batches, st.results[TDISPATCH_RESULT_CONGESTION], st.retries, st.holdoffs);
}

static const struct tdispatch_config demo_cfg = {
	.name = "demo",
	.max_buffer = SENSORS,
	.max_batch = 8,
	.max_delay_ns = 5 * NSEC_PER_MSEC,
	.workers = 2,
	.congestion_delay_ns = 20 * NSEC_PER_MSEC,
	.transient_delay_ns = 20 * NSEC_PER_MSEC,
	.max_input = 1024,
};

/* One round: producers on every CPU, then a drain and the newest readings. */
static int demo_round(const struct tdispatch_ops *ops)
{
	struct task_struct **producers;
	struct tdispatch *d;
	unsigned int cpu, i, n = 0;

	producers = kcalloc(nr_cpu_ids, sizeof(*producers), GFP_KERNEL);
	if (!producers)
		return -ENOMEM;
	d = tdispatch_create(&demo_cfg, ops, NULL);
	if (IS_ERR(d)) {
		kfree(producers);
		return PTR_ERR(d);
	}
	pr_info("%u producers x %u readings over %u sensors%s; max_buffer %u, max_batch %u\n",
		num_online_cpus(), READINGS, SENSORS, demo_items ? " as embedded items" : "",
		demo_cfg.max_buffer, demo_cfg.max_batch);
	demo_report(d, "before");
	atomic_set(&demo_running, 1);
	reinit_completion(&demo_producers_done);
	for_each_online_cpu(cpu) {
		struct task_struct *p = kthread_create_on_cpu(demo_producer, d, cpu, "tddemo/%u");

		if (IS_ERR(p))
			continue;
		/* Hold a reference: the thread finishes on its own. */
		producers[n++] = get_task_struct(p);
		atomic_inc(&demo_running);
		wake_up_process(p);
	}
	if (!atomic_dec_and_test(&demo_running))
		wait_for_completion(&demo_producers_done);
	for (i = 0; i < n; i++) {
		kthread_stop(producers[i]);
		put_task_struct(producers[i]);
	}
	kfree(producers);
	demo_report(d, "producers done");
	tdispatch_destroy(d, TDISPATCH_DRAIN, 30 * HZ);
	pr_info("after drain: newest reading per sensor: %d %d %d %d ... %d\n",
		atomic_read(&demo_last[0]), atomic_read(&demo_last[1]),
		atomic_read(&demo_last[2]), atomic_read(&demo_last[3]),
		atomic_read(&demo_last[SENSORS - 1]));
	return 0;
}

static int __init tdispatch_demo_init(void)
{
	unsigned int i;
	int ret;

	ret = demo_round(&demo_ops);
	if (ret)
		return ret;
	for (i = 0; i < SENSORS; i++)
		tdispatch_item_init(&demo_sensors[i].item, i, NULL);
	demo_items = true;
	return demo_round(&demo_item_ops);
}

static void __exit tdispatch_demo_exit(void)
{
}

module_init(tdispatch_demo_init);
module_exit(tdispatch_demo_exit);
MODULE_DESCRIPTION("tdispatch demo: coalescing sensor readings");
MODULE_LICENSE("GPL");
