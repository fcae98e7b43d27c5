// SPDX-License-Identifier: GPL-2.0
/*
 * The candidates of the timer benchmark (timer_main.c): each structure
 * that could hold tdispatch's delayed tasks, with its entry, its insert,
 * cancel and firing.
 */
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/slab.h>
#include <linux/timer.h>

#include "timer_bench.h"
#include "../wheel.h"
/* The wheel tdispatch.ko uses, built into this module too. */
#include "../wheel.c"

/* ---- 1: a timer_list per task, in the timer wheel ------------------------ */

struct wheel_ent {
	struct timer_list timer;
	u64 id;
	u64 due;
};

static void wheel_fn(struct timer_list *t)
{
	struct wheel_ent *w = from_timer(w, t, timer);

	td_bench_fired(w->id, w->due);
}

static void wheel_insert(void *e, u64 id, u64 due)
{
	struct wheel_ent *w = e;

	w->id = id;
	w->due = due;
	timer_setup(&w->timer, wheel_fn, 0);
	/*
	 * Round up, and add one for the part of the current jiffy already
	 * gone, so that the timer never runs before @due.
	 */
	w->timer.expires = td_base_j + 1 +
		nsecs_to_jiffies64(due - td_base_ns + TICK_NSEC - 1);
	add_timer(&w->timer);
}

static bool wheel_cancel(void *e)
{
	return timer_delete(&((struct wheel_ent *)e)->timer);
}

static void wheel_sync(void *e)
{
	timer_delete_sync(&((struct wheel_ent *)e)->timer);
}

/* ---- 2: an rbtree by due time, popped by the acceptor -------------------- */

struct rb_ent {
	struct rb_node node;
	u64 id;
	u64 due;	/* no sequence: rb_add_cached() puts equal keys right */
};

/* Stands for the dispatcher's mutex, under which the tree would live. */
static DEFINE_MUTEX(rb_lock);
static struct rb_root_cached rb_root = RB_ROOT_CACHED;

static bool rb_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct rb_ent, node)->due <
	       rb_entry(b, struct rb_ent, node)->due;
}

static void rb_insert(void *e, u64 id, u64 due)
{
	struct rb_ent *r = e;

	r->id = id;
	r->due = due;
	mutex_lock(&rb_lock);
	rb_add_cached(&r->node, &rb_root, rb_less);
	mutex_unlock(&rb_lock);
}

static bool rb_cancel(void *e)
{
	struct rb_ent *r = e;
	bool waiting;

	mutex_lock(&rb_lock);
	waiting = !RB_EMPTY_NODE(&r->node);
	if (waiting) {
		rb_erase_cached(&r->node, &rb_root);
		RB_CLEAR_NODE(&r->node);
	}
	mutex_unlock(&rb_lock);
	return waiting;
}

static void rb_sync(void *e)
{
	rb_cancel(e);
}

static void rb_init(void *e)
{
	RB_CLEAR_NODE(&((struct rb_ent *)e)->node);
}

/* The acceptor's loop, reduced to popping due entries and sleeping. */
/* Fire what is due at @now; the next due time still waiting, or U64_MAX. */
static u64 rb_pop(u64 now)
{
	struct rb_node *node;

	while ((node = rb_first_cached(&rb_root))) {
		struct rb_ent *r = rb_entry(node, struct rb_ent, node);

		if (r->due > now)
			return r->due;
		rb_erase_cached(node, &rb_root);
		RB_CLEAR_NODE(node);
		td_bench_fired(r->id, r->due);
	}
	return U64_MAX;
}

static bool rb_wait(void)
{
	return td_pop_wait(&rb_lock, rb_pop);
}

/* ---- 3: tdispatch's wheel with an exact near window ---------------------- */

struct wh_ent {
	struct td_wheel_node node;	/* .due 0 while not waiting */
	u64 id;
};

/* As rb_lock: the dispatcher's mutex, under which the wheel lives. */
static DEFINE_MUTEX(wh_lock);
static struct td_wheel wh;

static void wh_init(void *e)
{
	((struct wh_ent *)e)->node.due = 0;
}

static void wh_insert(void *e, u64 id, u64 due)
{
	struct wh_ent *w = e;

	w->id = id;
	w->node.due = due;
	mutex_lock(&wh_lock);
	td_wheel_add(&wh, &w->node);
	mutex_unlock(&wh_lock);
}

static bool wh_cancel(void *e)
{
	struct wh_ent *w = e;
	bool waiting;

	mutex_lock(&wh_lock);
	waiting = w->node.due;
	if (waiting) {
		td_wheel_del(&wh, &w->node);
		w->node.due = 0;
	}
	mutex_unlock(&wh_lock);
	return waiting;
}

static void wh_sync(void *e)
{
	wh_cancel(e);
}

/* rb_wait() with the wheel: move it on, pop what is due, sleep. */
static u64 wh_pop(u64 now)
{
	struct td_wheel_node *e;

	td_wheel_advance(&wh, now);
	while ((e = td_wheel_first(&wh)) && e->due <= now) {
		u64 due = e->due;

		td_wheel_del(&wh, e);
		e->due = 0;
		td_bench_fired(container_of(e, struct wh_ent, node)->id, due);
	}
	return td_wheel_next(&wh);
}

static bool wh_wait(void)
{
	return td_pop_wait(&wh_lock, wh_pop);
}

void td_wh_reset(void)
{
	td_wheel_init(&wh);
}

bool td_wh_empty(void)
{
	return !td_wheel_any(&wh);
}

/* ---- 4: an hrtimer per task ---------------------------------------------- */

struct hr_ent {
	struct hrtimer timer;	/* its expiry is the due time */
	u64 id;
};

static enum hrtimer_restart hr_fn(struct hrtimer *t)
{
	struct hr_ent *h = container_of(t, struct hr_ent, timer);

	td_bench_fired(h->id, ktime_to_ns(hrtimer_get_expires(t)));
	return HRTIMER_NORESTART;
}

static void hr_insert(void *e, u64 id, u64 due)
{
	struct hr_ent *h = e;

	h->id = id;
	/* hrtimer_setup() only came in 6.13; hrtimer_init() is in 6.1 and 6.12. */
	hrtimer_init(&h->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_HARD);
	h->timer.function = hr_fn;
	hrtimer_start(&h->timer, ns_to_ktime(due), HRTIMER_MODE_ABS_HARD);
}

static bool hr_cancel(void *e)
{
	return hrtimer_try_to_cancel(&((struct hr_ent *)e)->timer) == 1;
}

static void hr_sync(void *e)
{
	hrtimer_cancel(&((struct hr_ent *)e)->timer);
}

struct cand td_cands[NR_CANDS] = {
	{ .name = "timer_list", .cache_name = "td_bench_timer_list",
	  .size = sizeof(struct wheel_ent), .insert = wheel_insert,
	  .cancel = wheel_cancel, .sync = wheel_sync, .wait = td_bench_wait },
	{ .name = "rbtree", .cache_name = "td_bench_rbtree",
	  .size = sizeof(struct rb_ent), .init = rb_init, .insert = rb_insert,
	  .cancel = rb_cancel, .sync = rb_sync, .wait = rb_wait },
	{ .name = "wheel", .cache_name = "td_bench_td_wheel",
	  .size = sizeof(struct wh_ent), .init = wh_init, .insert = wh_insert,
	  .cancel = wh_cancel, .sync = wh_sync, .wait = wh_wait },
	{ .name = "hrtimer", .cache_name = "td_bench_hrtimer",
	  .size = sizeof(struct hr_ent), .fire_max = &hrtimer_fire_max,
	  .insert = hr_insert, .cancel = hr_cancel, .sync = hr_sync,
	  .wait = td_bench_wait },
};
