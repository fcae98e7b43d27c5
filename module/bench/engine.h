/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of the engine benchmark share: engine_main.c (the
 * rounds, the report, capacity), engine_variants.c (tdispatch and the
 * peers, over the objects every variant shares) and engine_load.c (ids,
 * paced producers, one run).
 */
#ifndef TD_ENGINE_BENCH_H
#define TD_ENGINE_BENCH_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/kthread.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/tdispatch.h>
#include <linux/tick.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#define BATCH		64U
#define WORKERS		2U
#define MAX_REPS	15U
#define MAX_PRODUCERS	8U
#define ZIPF_SEQ	65536U
#define LAT_MAX		65536U
#define CAP_SLACK_NS	(2 * NSEC_PER_MSEC)
#define DRAIN_TIMEOUT	(60 * HZ)
#define TASK_COST_NS	2000
#define BATCH_COST_US	20

struct payload {
	u64 ver;
};

/*
 * td-own-task's change: the task and its payload in one allocation, the
 * task first in a cache-aligned object (one line on 64-bit), as
 * tdispatch_submit_task() suggests.
 */
struct own_payload {
	struct tdispatch_task task;
	struct payload p;
};

struct obj {
	atomic64_t ver;		/* bumped by each change */
	u64 done_ver;		/* the newest version processed */
	u64 stamp_ver;		/* a sampled change's version, or 0 */
	u64 stamp;		/* its time, 0 until written */
	struct payload *newest;	/* irqw-alloc: the change not yet processed */
	union {
		struct tdispatch_item item;
		struct work_struct work;
		struct {
			struct llist_node ll;
			unsigned long pending;
		};
		struct {
			struct list_head fifo;
			bool queued;
		};
	};
};

struct variant {
	const char *name;
	bool alloc;			/* a payload per change */
	unsigned int bytes;		/* per object, and per pending change if alloc */
	int (*setup)(void);
	/* @o changed to @ver: 0, or an errno for a submission refused. */
	int (*submit)(struct obj *o, u64 ver);
	bool (*idle)(void);		/* nothing left to process */
	void (*teardown)(void);
};

struct result {
	u64 accepted, processed, run_ns, busy_ns, refused, submit_ns;
	u64 consumers_ns;	/* CPU time of every thread but the producers */
	u64 processed_run;	/* processed by the end of the offered load */
	u64 p50, p99, max;
	unsigned int nlat;
	bool lost;
};

enum { D_RR, D_UNIFORM, D_ZIPF, NR_D };
#define NR_SPACES	2

enum { V_NONE, V_TI, V_TT, V_TO, V_TM, V_WORK, V_IRQW, V_IRQWA, V_SPIN, V_XA, NR_V };

extern const char *const dist_names[NR_D];
extern atomic64_t processed;
extern const unsigned int id_spaces[NR_SPACES];
extern u32 *zipf_seq[MAX_PRODUCERS];
int zipf_fill(unsigned int n, unsigned int np);
int consumers_init(void);
void check_counting(void);
void consumers_exit(void);
extern struct obj *objs;
extern unsigned int nr_objs;
extern bool costly;
extern struct workqueue_struct *peer_wq;
extern struct kmem_cache *payload_cache, *own_payload_cache;
extern u64 *lat;
extern atomic_t lat_n;
extern atomic64_t replaced;
extern atomic64_t lost;
extern u64 last_processed;
extern unsigned int nr_prods;
extern unsigned int tick_us;
extern unsigned int run_ms;
extern unsigned int sample_every;
void run_one(struct variant *v, unsigned int dist, u64 rate, struct result *r);
extern bool verbose, trace_runs;
/* The xarray peer lets go of the objects it holds. */
void xa_forget(void);
extern struct variant variants[NR_V];

/* With verbose: the gaps busy workers lost in costly runs (see note_step()). */
struct gaps {
	u64 n, ns, max_ns;
	u64 quiet, quiet_ns;	/* of those, with no interrupt counted */
	unsigned int slow;	/* sampled changes that waited over 2 ms, any workload */
};

void gaps_take(struct gaps *g);

#endif /* TD_ENGINE_BENCH_H */
