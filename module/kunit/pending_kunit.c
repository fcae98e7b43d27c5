// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the pending set and its timing wheel (pending.c, with
 * wheel.c).  The file is included whole so that its static helpers come
 * along; callers pass "now", so nothing here sleeps.  The shaper and
 * periodic registrations have tests of their own beside this one.
 *
 * Every operation on a pending set goes through a wrapper that checks the
 * accounting afterwards: each task taken in is pending, in flight, delayed
 * or on the reap list with its outcome, exactly once.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "../pending.c"
#include "../wheel.c"
#include "../ids.c"
#include "../watch.c"

#define TD_BATCH_MAX	8	/* largest max_batch any case uses */
#define TD_ORDER_MAX	16	/* longest order list any case checks */
#define TD_DELAY	1000	/* max_delay_ns of the pending sets */

/* A 0-terminated list of task ids; ids in these tests start at 1. */
#define TD_IDS(...)	((const u64[]){ __VA_ARGS__, 0 })
#define TD_NONE		((const u64[]){ 0 })
/* Expected p->outcomes[], by designated initializers; the rest are 0. */
#define TD_OUTCOMES(...) ((const u64[TDISPATCH_NR_OUTCOMES]) { __VA_ARGS__ })

struct td_batch {
	unsigned int nr;
	struct tdispatch_task *tasks[TD_BATCH_MAX];
};

struct td_kunit {
	struct kunit *test;
	struct td_pending p;
	struct list_head reap;
	unsigned long serial;	/* payload of the last task made */
};

/* How many tasks of @state the id hash holds. */
static unsigned int td_ids_count(struct td_pending *p, u8 state)
{
	struct tdispatch_task *t;
	unsigned int b, nr = 0;

	for (b = 0; b < 1U << p->ids.bits; b++)
		for (t = p->ids.bucket[b]; t; t = t->hnext)
			nr += t->state == state;
	return nr;
}

/* Pending and in-flight ids: none once every task has ended. */
static unsigned int td_ids_live(struct td_pending *p)
{
	return td_ids_count(p, TD_TASK_PENDING) + td_ids_count(p, TD_TASK_INFLIGHT);
}

/* In the order the wheel lets them in: by not_before, then by arrival. */
static int td_cmp_delayed(const void *a, const void *b)
{
	const struct tdispatch_task *x = *(const struct tdispatch_task **)a;
	const struct tdispatch_task *y = *(const struct tdispatch_task **)b;

	if (td_task_not_before(x) != td_task_not_before(y))
		return td_task_not_before(x) < td_task_not_before(y) ? -1 : 1;
	return td_ext(x)->delay.seq < td_ext(y)->delay.seq ? -1 :
	       td_ext(x)->delay.seq > td_ext(y)->delay.seq;
}

/*
 * Every delayed task, in the order they will be let in, after checking
 * that each is where the wheel's invariants put it: before the horizon in
 * the near rbtree (whose last entry the wheel knows), else in a bucket
 * that the level's map shows.
 */
static struct tdispatch_task **td_delayed_tasks(struct td_kunit *k, unsigned int *nr)
{
	struct td_wheel *w = &k->p.delayed;
	unsigned int lvl, i, n = 0, cap = k->p.nr_delayed;
	struct tdispatch_task **all, *t;
	struct td_wheel_node *e;
	struct rb_node *rb;

	all = kunit_kcalloc(k->test, cap + 1, sizeof(*all), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(k->test, all);
	KUNIT_EXPECT_EQ(k->test, w->horizon % (1ULL << TD_WHEEL_SHIFT), 0);
	/* The near rbtree's last entry, which placing at either end relies on. */
	KUNIT_EXPECT_PTR_EQ(k->test, w->last, rb_last(&w->near.rb_root));
	for (rb = rb_first_cached(&w->near); rb; rb = rb_next(rb)) {
		t = &container_of(rb, struct td_task_ext, delay.rb)->task;
		KUNIT_EXPECT_LT(k->test, (u64)td_task_not_before(t), w->horizon);
		KUNIT_ASSERT_LT(k->test, n, cap);
		all[n++] = t;
	}
	for (lvl = 0; lvl < TD_WHEEL_LEVELS; lvl++) {
		for (i = 0; i < TD_WHEEL_SIZE; i++) {
			KUNIT_EXPECT_EQ(k->test, !hlist_empty(&w->bucket[lvl][i]),
					!!(w->map[lvl] & BIT_ULL(i)));
			hlist_for_each_entry(e, &w->bucket[lvl][i], bucket) {
				t = &container_of(e, struct td_task_ext, delay)->task;
				KUNIT_EXPECT_GE(k->test, (u64)td_task_not_before(t), w->horizon);
				KUNIT_ASSERT_LT(k->test, n, cap);
				all[n++] = t;
			}
		}
	}
	sort(all, n, sizeof(*all), td_cmp_delayed, NULL);
	*nr = n;
	return all;
}

/* The wheel and the id hash hold the same nr_delayed tasks. */
static void td_check_delayed(struct td_kunit *k)
{
	struct td_pending *p = &k->p;
	struct tdispatch_task **all;
	unsigned int i, nr;

	all = td_delayed_tasks(k, &nr);
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_EQ(k->test, all[i]->state, TD_TASK_DELAYED);
		KUNIT_EXPECT_PTR_EQ(k->test, td_pending_lookup_delayed(p, all[i]->id), all[i]);
	}
	/* Never later than the first due time, or promotion would be late. */
	if (nr)
		KUNIT_EXPECT_LE(k->test, td_pending_next_delayed(p), td_task_not_before(all[0]));
	else
		KUNIT_EXPECT_EQ(k->test, td_pending_next_delayed(p), KTIME_MAX);
	KUNIT_EXPECT_EQ(k->test, nr, p->nr_delayed);
	KUNIT_EXPECT_EQ(k->test, td_ids_count(p, TD_TASK_DELAYED), p->nr_delayed);
	kunit_kfree(k->test, all);
}

/*
 * drained == sum(outcomes) + nr_pending + nr_inflight + nr_delayed, and the
 * lists, the wheel and the id hash agree.
 */
static void td_check(struct td_kunit *k)
{
	unsigned int reaped[TDISPATCH_NR_OUTCOMES] = {};
	unsigned int nr = 0, waiting = 0, o;
	struct td_pending *p = &k->p;
	struct tdispatch_task *t;
	u64 ended = 0;

	list_for_each_entry(t, &k->reap, order) {
		KUNIT_ASSERT_LT(k->test, t->state, TDISPATCH_NR_OUTCOMES);
		reaped[t->state]++;
	}
	for (o = 0; o < TDISPATCH_NR_OUTCOMES; o++) {
		KUNIT_EXPECT_EQ_MSG(k->test, p->outcomes[o], reaped[o],
				    "outcome %u: counter vs reap list", o);
		ended += p->outcomes[o];
	}
	list_for_each_entry(t, &p->order, order) {
		KUNIT_EXPECT_GE(k->test, t->state, TD_TASK_PENDING);
		KUNIT_EXPECT_LE(k->test, t->state, TD_TASK_WAITING);
		/* Found by its id; a waiting one only behind an in-flight one. */
		if (t->state == TD_TASK_WAITING) {
			struct tdispatch_task *cur = td_pending_lookup(p, t->id);

			KUNIT_EXPECT_PTR_EQ(k->test, td_pending_waiter(p, t->id), t);
			KUNIT_EXPECT_TRUE(k->test, cur && cur->state == TD_TASK_INFLIGHT);
			waiting++;
		} else {
			KUNIT_EXPECT_PTR_EQ(k->test, td_pending_lookup(p, t->id), t);
		}
		nr++;
	}
	KUNIT_EXPECT_EQ(k->test, nr, p->nr_pending);
	KUNIT_EXPECT_EQ(k->test, waiting, p->nr_waiting);
	/* Every task the set holds is in the id hash, once. */
	KUNIT_EXPECT_EQ(k->test, td_ids_live(p), p->nr_inflight + p->nr_pending - p->nr_waiting);
	KUNIT_EXPECT_EQ(k->test, td_ids_count(p, TD_TASK_WAITING), p->nr_waiting);
	KUNIT_EXPECT_EQ(k->test, p->ids.nr, p->nr_inflight + p->nr_pending + p->nr_delayed);
	td_check_delayed(k);
	KUNIT_EXPECT_EQ(k->test, p->drained,
			ended + p->nr_pending + p->nr_inflight + p->nr_delayed);
}

static struct td_kunit *td_setup(struct kunit *test, unsigned int max_buffer,
				 unsigned int max_batch)
{
	struct td_kunit *k = kunit_kzalloc(test, sizeof(*k), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, k);
	KUNIT_ASSERT_LE(test, max_batch, TD_BATCH_MAX);
	k->test = test;
	INIT_LIST_HEAD(&k->reap);
	td_pending_init(&k->p, max_buffer, max_batch, TD_DELAY);
	return k;
}

/* A task with room for a deadline and a not-before time, as the engine's. */
static struct tdispatch_task *td_task_new(struct td_kunit *k)
{
	struct td_task_ext *x = kunit_kzalloc(k->test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(k->test, x);
	x->task.flags = TD_TASK_EXT;
	return &x->task;
}

/* A task that watches @key; pending.c frees the watcher, as it does in the engine. */
static struct tdispatch_task *td_task_watching(struct td_kunit *k, u64 key)
{
	struct tdispatch_task *t = td_task_new(k);
	struct td_watcher *w = kzalloc(sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(k->test, w);
	w->key = key;
	td_ext(t)->watcher = w;
	t->flags |= TD_TASK_WATCHED;
	return t;
}

static struct tdispatch_task *td_add_task(struct td_kunit *k, struct tdispatch_task *t, u64 id,
					  ktime_t not_before, ktime_t deadline, ktime_t now)
{
	t->id = id;
	t->payload = (void *)(++k->serial);
	t->submitted = now;
	td_ext(t)->deadline = deadline;
	td_ext(t)->delay.due = not_before;
	td_pending_add(&k->p, t, now, &k->reap);
	td_check(k);
	return t;
}

static struct tdispatch_task *td_add_at(struct td_kunit *k, u64 id,
					ktime_t not_before, ktime_t deadline,
					ktime_t now)
{
	return td_add_task(k, td_task_new(k), id, not_before, deadline, now);
}

static unsigned int td_nr_watchers(struct td_kunit *k)
{
	struct rb_node *n;
	unsigned int nr = 0;

	for (n = rb_first(&k->p.watchers); n; n = rb_next(n))
		nr++;
	return nr;
}

static struct tdispatch_task *td_add_dl(struct td_kunit *k, u64 id,
					ktime_t deadline, ktime_t now)
{
	return td_add_at(k, id, 0, deadline, now);
}

/* Add a task of @id that may enter no earlier than @not_before. */
static struct tdispatch_task *td_add_later(struct td_kunit *k, u64 id,
					   ktime_t not_before, ktime_t now)
{
	return td_add_at(k, id, not_before, 0, now);
}

static struct tdispatch_task *td_add(struct td_kunit *k, u64 id, ktime_t now)
{
	return td_add_dl(k, id, 0, now);
}

/* Add ids @first to @last, arriving 1 ns apart from @now. */
static void td_add_ids(struct td_kunit *k, u64 first, u64 last, ktime_t now)
{
	u64 id;

	for (id = first; id <= last; id++)
		td_add(k, id, now + id - first);
}

/* The ids of @tasks are @ids, in that order. */
static void td_expect_ids(struct td_kunit *k, struct tdispatch_task **tasks,
			  unsigned int nr, const u64 *ids)
{
	unsigned int i;

	for (i = 0; i < nr && ids[i]; i++)
		KUNIT_EXPECT_EQ_MSG(k->test, tasks[i]->id, ids[i], "at %u", i);
	KUNIT_EXPECT_EQ_MSG(k->test, i, nr, "fewer ids expected than found");
	KUNIT_EXPECT_EQ_MSG(k->test, ids[i], 0, "more ids expected than found");
}

/* The order list holds @ids, head first. */
static void td_expect_order(struct td_kunit *k, const u64 *ids)
{
	struct tdispatch_task *seen[TD_ORDER_MAX], *t;
	unsigned int nr = 0;

	list_for_each_entry(t, &k->p.order, order) {
		KUNIT_ASSERT_LT(k->test, nr, TD_ORDER_MAX);
		seen[nr++] = t;
	}
	td_expect_ids(k, seen, nr, ids);
}

/* @t ended with @outcome and is on the reap list. */
static void td_expect_ended(struct td_kunit *k, struct tdispatch_task *t,
			    enum tdispatch_outcome outcome)
{
	struct tdispatch_task *r;
	bool found = false;

	list_for_each_entry(r, &k->reap, order)
		found |= r == t;
	KUNIT_EXPECT_TRUE_MSG(k->test, found, "task %llu not reaped", t->id);
	KUNIT_EXPECT_EQ(k->test, t->state, outcome);
}

static void td_expect_outcomes(struct td_kunit *k, const u64 *want)
{
	unsigned int o;

	for (o = 0; o < TDISPATCH_NR_OUTCOMES; o++)
		KUNIT_EXPECT_EQ_MSG(k->test, k->p.outcomes[o], want[o], "outcome %u", o);
}

static void td_expect_lookup(struct td_kunit *k, u64 id, struct tdispatch_task *t)
{
	KUNIT_EXPECT_PTR_EQ(k->test, td_pending_lookup(&k->p, id), t);
}

static void td_expect_delayed_lookup(struct td_kunit *k, u64 id,
				     struct tdispatch_task *t)
{
	KUNIT_EXPECT_PTR_EQ(k->test, td_pending_lookup_delayed(&k->p, id), t);
}

/* The delayed tasks are @ids, in the order they will be promoted. */
static void td_expect_delayed(struct td_kunit *k, const u64 *ids)
{
	struct tdispatch_task **all;
	unsigned int nr;

	all = td_delayed_tasks(k, &nr);
	td_expect_ids(k, all, nr, ids);
	kunit_kfree(k->test, all);
}

/* Promote at @now and expect @nr tasks to leave the delayed set. */
static void td_promote(struct td_kunit *k, ktime_t now, unsigned int nr)
{
	KUNIT_EXPECT_EQ(k->test, td_pending_promote(&k->p, now, &k->reap), nr);
	td_check(k);
}

/* td_pending_due() says @due; if not, that it will be by age at @when. */
static void td_expect_due(struct td_kunit *k, ktime_t now, bool due, ktime_t when)
{
	ktime_t w;

	KUNIT_EXPECT_EQ(k->test, td_pending_due(&k->p, now, &w), due);
	if (!due)
		KUNIT_EXPECT_EQ(k->test, w, when);
}

/* Cut a batch into @b and expect it to hold @ids, now in flight. */
static void td_cut(struct td_kunit *k, struct td_batch *b, ktime_t now,
		   const u64 *ids)
{
	unsigned int i;

	b->nr = td_pending_cut(&k->p, now, k->p.max_batch, b->tasks, &k->reap);
	td_check(k);
	KUNIT_ASSERT_LE(k->test, b->nr, k->p.max_batch);
	td_expect_ids(k, b->tasks, b->nr, ids);
	for (i = 0; i < b->nr; i++) {
		KUNIT_EXPECT_EQ(k->test, b->tasks[i]->state, TD_TASK_INFLIGHT);
		td_expect_lookup(k, b->tasks[i]->id, b->tasks[i]);
	}
}

static void td_requeue(struct td_kunit *k, struct td_batch *b)
{
	td_pending_requeue(&k->p, b->tasks, b->nr, &k->reap);
	td_check(k);
}

static void td_complete(struct td_kunit *k, struct td_batch *b,
			enum tdispatch_outcome outcome)
{
	td_pending_complete(&k->p, b->tasks, b->nr, outcome, &k->reap);
	td_check(k);
}

static int td_cancel(struct td_kunit *k, u64 id)
{
	int ret = td_pending_cancel(&k->p, id, &k->reap);

	td_check(k);
	return ret;
}

/* The pending set */

static void td_test_add_keeps_order(struct kunit *test)
{
	static const u64 ids[] = { 5, 3, 9, 1, 12, 7, 2, 11, 4, 10, 8, 6, 0 };
	struct td_kunit *k = td_setup(test, TD_ORDER_MAX, 4);
	struct tdispatch_task *t;
	unsigned int i;

	for (i = 0; ids[i]; i++)
		td_add(k, ids[i], 100 + i);
	td_expect_order(k, ids);
	for (i = 0; ids[i]; i++) {
		t = td_pending_lookup(&k->p, ids[i]);
		KUNIT_ASSERT_NOT_NULL(test, t);
		KUNIT_EXPECT_EQ(test, t->id, ids[i]);
		KUNIT_EXPECT_EQ(test, t->state, TD_TASK_PENDING);
		KUNIT_EXPECT_EQ(test, t->queued, 100 + i);
	}
	td_expect_lookup(k, 13, NULL);
	KUNIT_EXPECT_EQ(test, k->p.nr_pending, i);
	KUNIT_EXPECT_EQ(test, k->p.drained, i);
	td_expect_outcomes(k, TD_OUTCOMES());
}

/* As the acceptor resizes the id hash. */
static void td_resize(struct td_kunit *k)
{
	unsigned int bits = td_ids_bits(&k->p.ids, k->p.ids.nr);
	struct tdispatch_task **nb = NULL;

	if (bits == k->p.ids.bits)
		return;
	if (bits > TD_IDS_MIN_BITS) {
		nb = kvcalloc(1U << bits, sizeof(*nb), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(k->test, nb);
	}
	kvfree(td_ids_move(&k->p.ids, nb, bits));
}

/*
 * The id hash grows past two tasks a bucket and shrinks back when they go,
 * with tasks in every state: pending, in flight, waiting and delayed.
 */
static void td_test_ids_resize(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 1024, 4);
	struct tdispatch_task *w;
	unsigned int i, nr = 600;
	struct td_batch b;

	for (i = 1; i <= nr; i++)
		td_add(k, i, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2, 3, 4));
	w = td_add(k, 2, 100);
	for (i = 1; i <= 10; i++)
		td_add_later(k, i, 1000, 100);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, TD_IDS_MIN_BITS);
	td_resize(k);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, order_base_2(nr + 11));
	KUNIT_EXPECT_PTR_NE(test, k->p.ids.bucket, &k->p.ids.first[0]);
	for (i = 1; i <= nr; i++) {
		KUNIT_EXPECT_NOT_NULL(test, td_pending_lookup(&k->p, i));
		if (i <= 10)
			KUNIT_EXPECT_NOT_NULL(test, td_pending_lookup_delayed(&k->p, i));
	}
	KUNIT_EXPECT_PTR_EQ(test, td_pending_waiter(&k->p, 2), w);
	td_check(k);
	/* Between one in four and two a bucket: no change. */
	td_resize(k);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, order_base_2(nr + 11));
	/* Below one in four: a smaller allocated array. */
	for (i = 100; i <= nr; i++)
		td_cancel(k, i);
	td_resize(k);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, order_base_2(99 + 11));
	KUNIT_EXPECT_PTR_NE(test, k->p.ids.bucket, &k->p.ids.first[0]);
	td_check(k);
	/* The in-flight batch ends: its waiter moves up, in the new buckets. */
	td_complete(k, &b, TDISPATCH_DONE);
	td_expect_lookup(k, 2, w);
	KUNIT_EXPECT_EQ(test, w->state, TD_TASK_PENDING);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
	td_resize(k);
	KUNIT_EXPECT_EQ(test, k->p.ids.bits, TD_IDS_MIN_BITS);
	KUNIT_EXPECT_PTR_EQ(test, k->p.ids.bucket, &k->p.ids.first[0]);
	td_add(k, 7, 200);
	td_expect_lookup(k, 7, list_first_entry(&k->p.order, struct tdispatch_task, order));
	td_pending_free(&k->p);
}

static void td_test_coalesce(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *old, *new;
	struct td_batch b;

	old = td_add_dl(k, 1, 5000, 100);
	td_add(k, 2, 200);
	new = td_add_dl(k, 1, 9000, 300);
	td_expect_ended(k, old, TDISPATCH_OVERRIDDEN);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OVERRIDDEN] = 1));
	td_expect_lookup(k, 1, new);
	KUNIT_EXPECT_EQ(test, new->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, new->queued, 100);
	KUNIT_EXPECT_EQ(test, k->p.nr_pending, 2);
	td_expect_order(k, TD_IDS(1, 2));
	/* Aged from the older one's arrival. */
	td_expect_due(k, 100 + TD_DELAY - 1, false, 100 + TD_DELAY);
	/* Past the old deadline, before the new one: the newer is cut. */
	td_cut(k, &b, 6000, TD_IDS(1, 2));
	KUNIT_EXPECT_PTR_EQ(test, b.tasks[0], new);
	KUNIT_EXPECT_PTR_EQ(test, tdispatch_task_payload(b.tasks[0]), new->payload);
	KUNIT_EXPECT_PTR_NE(test, new->payload, old->payload);
}

/* Overflow and retries */

static void td_test_overflow_drops_oldest(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 3, 2);
	struct tdispatch_task *first = td_add(k, 1, 100);

	td_add_ids(k, 2, 4, 200);
	td_expect_ended(k, first, TDISPATCH_DROPPED);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2, 3, 4));
	/* Coalescing takes no new place: nothing more is dropped. */
	td_add(k, 3, 300);
	td_expect_order(k, TD_IDS(2, 3, 4));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DROPPED] = 1,
					  [TDISPATCH_OVERRIDDEN] = 1));
}

static void td_test_requeue_to_head(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct td_batch b;

	td_add_ids(k, 1, 4, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_add(k, 5, 200);
	td_requeue(k, &b);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 0);
	KUNIT_EXPECT_EQ(test, b.tasks[0]->state, TD_TASK_PENDING);
	td_expect_lookup(k, 2, b.tasks[1]);
	td_expect_order(k, TD_IDS(1, 2, 3, 4, 5));
	td_cut(k, &b, 300, TD_IDS(1, 2));
	td_expect_outcomes(k, TD_OUTCOMES());
}

static void td_test_full_drops_retry_first(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 4, 2);
	struct td_batch b;

	td_add_ids(k, 1, 3, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_requeue(k, &b);
	td_add(k, 4, 200);
	td_expect_order(k, TD_IDS(1, 2, 3, 4));
	td_add(k, 5, 300);
	td_expect_ended(k, b.tasks[0], TDISPATCH_DROPPED);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2, 3, 4, 5));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DROPPED] = 1));
}

static void td_test_requeue_full_drops_retries(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 3, 2);
	struct td_batch b;

	td_add_ids(k, 1, 2, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_add_ids(k, 3, 5, 200);
	td_requeue(k, &b);
	td_expect_ended(k, b.tasks[0], TDISPATCH_DROPPED);
	td_expect_ended(k, b.tasks[1], TDISPATCH_DROPPED);
	td_expect_lookup(k, 1, NULL);
	td_expect_lookup(k, 2, NULL);
	td_expect_order(k, TD_IDS(3, 4, 5));
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 0);
	KUNIT_EXPECT_EQ(test, k->p.retries, 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DROPPED] = 2));
}

static void td_test_retries_counted(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct td_batch b;
	unsigned int i;

	td_add_ids(k, 1, 2, 100);
	for (i = 1; i <= 3; i++) {
		td_cut(k, &b, 100 * i, TD_IDS(1, 2));
		td_requeue(k, &b);
		KUNIT_EXPECT_EQ(test, tdispatch_task_attempts(b.tasks[0]), i);
		KUNIT_EXPECT_EQ(test, tdispatch_task_attempts(b.tasks[1]), i);
		KUNIT_EXPECT_EQ(test, k->p.retries, 2 * i);
	}
	td_cut(k, &b, 1000, TD_IDS(1, 2));
	td_complete(k, &b, TDISPATCH_DONE);
	td_expect_ended(k, b.tasks[1], TDISPATCH_DONE);
	KUNIT_EXPECT_EQ(test, b.tasks[1]->attempts, 3);
	KUNIT_EXPECT_EQ(test, k->p.retries, 6);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DONE] = 2));
}

/* A task that came back from its last attempt ends exhausted, not pending. */
static void td_test_max_attempts_exhaust(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *t1, *t2;
	struct td_batch b;

	k->p.max_attempts = 2;
	t1 = td_add(k, 1, 100);
	t2 = td_add(k, 2, 100);
	/* Its own limit wins over the set's. */
	t2->max_attempts = 3;
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_requeue(k, &b);
	td_expect_order(k, TD_IDS(1, 2));
	td_cut(k, &b, 200, TD_IDS(1, 2));
	td_requeue(k, &b);
	td_expect_ended(k, t1, TDISPATCH_EXHAUSTED);
	KUNIT_EXPECT_EQ(test, t1->attempts, 2);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2));
	td_cut(k, &b, 300, TD_IDS(2));
	td_requeue(k, &b);
	td_expect_ended(k, t2, TDISPATCH_EXHAUSTED);
	KUNIT_EXPECT_EQ(test, k->p.retries, 3);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_EXHAUSTED] = 2));
}

/* ->attempts stops at TDISPATCH_MAX_ATTEMPTS; a limit that high still ends a task there. */
static void td_test_attempts_saturate(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *t1, *t2;
	struct td_batch b;

	t1 = td_add(k, 1, 100);
	t2 = td_add(k, 2, 100);
	/* No limit: retried for ever, its count stopped at the top. */
	t1->attempts = TDISPATCH_MAX_ATTEMPTS - 1;
	t2->attempts = TDISPATCH_MAX_ATTEMPTS - 1;
	t2->max_attempts = TDISPATCH_MAX_ATTEMPTS;
	td_cut(k, &b, 100, TD_IDS(1, 2));
	td_requeue(k, &b);
	td_expect_ended(k, t2, TDISPATCH_EXHAUSTED);
	KUNIT_EXPECT_EQ(test, t2->attempts, TDISPATCH_MAX_ATTEMPTS);
	KUNIT_EXPECT_EQ(test, t1->attempts, TDISPATCH_MAX_ATTEMPTS);
	td_cut(k, &b, 200, TD_IDS(1));
	td_requeue(k, &b);
	KUNIT_EXPECT_EQ(test, t1->attempts, TDISPATCH_MAX_ATTEMPTS);
	td_expect_order(k, TD_IDS(1));
	td_cut(k, &b, 300, TD_IDS(1));
	td_complete(k, &b, TDISPATCH_DONE);
	td_expect_ended(k, t1, TDISPATCH_DONE);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_EXHAUSTED] = 1, [TDISPATCH_DONE] = 1));
}

/* A delayed task let in early: pending at once, overriding a pending one. */
static void td_test_release_delayed(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *p1, *d1, *d2;

	p1 = td_add(k, 1, 100);
	d1 = td_add_later(k, 1, 5000, 100);
	d2 = td_add_later(k, 2, 5000, 100);
	KUNIT_EXPECT_EQ(test, td_pending_release(&k->p, 2, 200, &k->reap), 0);
	td_check(k);
	td_expect_order(k, TD_IDS(1, 2));
	KUNIT_EXPECT_EQ(test, d2->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, td_pending_release(&k->p, 1, 200, &k->reap), 0);
	td_check(k);
	td_expect_ended(k, p1, TDISPATCH_OVERRIDDEN);
	td_expect_lookup(k, 1, d1);
	KUNIT_EXPECT_EQ(test, td_pending_release(&k->p, 1, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_pending_release(&k->p, 3, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, k->p.released, 2);
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 0);
}

/* Releasing a key lets in exactly the delayed tasks that watch it. */
static void td_test_release_key(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *a, *b, *c, *o, *n, *now;

	a = td_add_task(k, td_task_watching(k, 7), 1, 5000, 0, 100);
	b = td_add_task(k, td_task_watching(k, 7), 2, 5000, 0, 100);
	c = td_add_task(k, td_task_watching(k, 8), 3, 5000, 0, 100);
	td_add_later(k, 4, 5000, 100);
	/* Due at once: no watcher kept. */
	now = td_add_task(k, td_task_watching(k, 7), 5, 0, 0, 100);
	KUNIT_EXPECT_FALSE(test, now->flags & TD_TASK_WATCHED);
	/* Replaced while delayed: the newer task's key counts. */
	o = td_add_task(k, td_task_watching(k, 9), 6, 5000, 0, 100);
	n = td_add_task(k, td_task_watching(k, 10), 6, 5000, 0, 100);
	td_expect_ended(k, o, TDISPATCH_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, td_nr_watchers(k), 4);

	KUNIT_EXPECT_EQ(test, td_pending_release_key(&k->p, 7, 1, 200, &k->reap), 1);
	KUNIT_EXPECT_EQ(test, b->state, TD_TASK_DELAYED);
	KUNIT_EXPECT_EQ(test, td_pending_release_key(&k->p, 7, 8, 200, &k->reap), 1);
	td_check(k);
	KUNIT_EXPECT_EQ(test, a->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, b->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, c->state, TD_TASK_DELAYED);
	td_expect_order(k, TD_IDS(5, 1, 2));
	KUNIT_EXPECT_EQ(test, td_pending_release_key(&k->p, 7, 8, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_pending_release_key(&k->p, 9, 8, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_pending_release_key(&k->p, 10, 8, 200, &k->reap), 1);
	KUNIT_EXPECT_EQ(test, n->state, TD_TASK_PENDING);
	/* Cancelled: it watches no more. */
	KUNIT_EXPECT_EQ(test, td_cancel(k, 3), 0);
	KUNIT_EXPECT_EQ(test, td_pending_release_key(&k->p, 8, 8, 200, &k->reap), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_nr_watchers(k), 0);
	KUNIT_EXPECT_EQ(test, k->p.released, 3);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
}

/* Batch cut */

static void td_test_due_at_max_batch(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 3);

	td_expect_due(k, 100, false, KTIME_MAX);
	td_add_ids(k, 1, 2, 100);
	td_expect_due(k, 101, false, 100 + TD_DELAY);
	td_add(k, 3, 102);
	td_expect_due(k, 102, true, 0);
}

static void td_test_due_after_max_delay(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct td_batch b;

	td_add(k, 1, 100);
	td_add(k, 2, 500);
	td_expect_due(k, 100, false, 100 + TD_DELAY);
	td_expect_due(k, 100 + TD_DELAY - 1, false, 100 + TD_DELAY);
	td_expect_due(k, 100 + TD_DELAY, true, 0);
	td_expect_due(k, 100 * TD_DELAY, true, 0);
	td_cut(k, &b, 100 + TD_DELAY, TD_IDS(1, 2));
	td_expect_due(k, 100 * TD_DELAY, false, KTIME_MAX);
}

/* While destroy drains, anything ready is due, however young. */
static void td_test_due_when_flushing(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);

	td_add(k, 1, 100);
	td_expect_due(k, 101, false, 100 + TD_DELAY);
	k->p.flush = true;
	td_expect_due(k, 101, true, 0);
}

/* Full but short of a batch: only possible with tasks waiting. */
static void td_test_due_when_full(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 3, 3);
	struct td_batch b;

	td_add(k, 1, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	td_add(k, 1, 200);
	td_add(k, 2, 300);
	/* The waiting task is not what ages a batch. */
	td_expect_due(k, 300, false, 300 + TD_DELAY);
	td_add(k, 3, 400);
	KUNIT_EXPECT_EQ(test, k->p.nr_pending, 3);
	td_expect_due(k, 400, true, 0);
}

/*
 * Input that may gather before a producer wakes the acceptor: never past
 * max_input, where the producer would be refused with the acceptor still
 * asleep (workers that chain batches no longer kick it at each batch end).
 */
static void td_test_gather_room(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 16, 8);
	struct td_batch b;

	/* Busy: a whole batch. */
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, true), 8);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 4, true), 4);
	/* A worker free: what makes the next batch due by count. */
	td_add_ids(k, 1, 3, 100);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, false), 5);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 2, false), 2);
	/* A task that waits behind an in-flight one is not ready. */
	td_cut(k, &b, 100, TD_IDS(1, 2, 3));
	td_add(k, 1, 200);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, false), 8);
	/* A batch ready already: the first task wakes it. */
	td_add_ids(k, 10, 17, 300);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, false), 1);
	KUNIT_EXPECT_EQ(test, td_pending_gather_room(&k->p, 1024, true), 8);
	td_complete(k, &b, TDISPATCH_DONE);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
}

static void td_test_cut_max_batch(struct kunit *test)
{
	const u64 *cuts[] = { TD_IDS(1, 2, 3), TD_IDS(4, 5, 6), TD_IDS(7), TD_NONE };
	struct td_kunit *k = td_setup(test, 8, 3);
	struct td_batch b[ARRAY_SIZE(cuts)];
	unsigned int i;

	td_add_ids(k, 1, 7, 100);
	for (i = 0; i < ARRAY_SIZE(cuts); i++)
		td_cut(k, &b[i], 200, cuts[i]);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 7);
	for (i = 0; i < ARRAY_SIZE(cuts); i++)
		td_complete(k, &b[i], TDISPATCH_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DONE] = 7));
}

static void td_test_single_item(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 4, 1);
	struct td_batch b1, b2;

	td_add(k, 1, 100);
	td_expect_due(k, 100, true, 0);
	td_add_ids(k, 2, 3, 100);
	td_cut(k, &b1, 100, TD_IDS(1));
	td_cut(k, &b2, 100, TD_IDS(2));
	td_expect_order(k, TD_IDS(3));
	td_complete(k, &b1, TDISPATCH_DONE);
	td_complete(k, &b2, TDISPATCH_FAILED);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DONE] = 1,
					  [TDISPATCH_FAILED] = 1));
}

/* Expiry */

static void td_test_expired_on_add(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *late, *on_time, *stale;

	late = td_add_dl(k, 1, 99, 100);
	td_expect_ended(k, late, TDISPATCH_EXPIRED);
	td_expect_lookup(k, 1, NULL);
	on_time = td_add_dl(k, 2, 100, 100);
	KUNIT_EXPECT_EQ(test, on_time->state, TD_TASK_PENDING);
	td_add_dl(k, 3, 0, 100 * NSEC_PER_SEC);
	/* An expired newer task does not displace a live one. */
	stale = td_add_dl(k, 2, 50, 200);
	td_expect_ended(k, stale, TDISPATCH_EXPIRED);
	td_expect_lookup(k, 2, on_time);
	td_expect_order(k, TD_IDS(2, 3));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_EXPIRED] = 2));
}

static void td_test_expires_while_pending(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *a, *c;
	struct td_batch b;

	a = td_add_dl(k, 1, 500, 100);
	td_add_dl(k, 2, 0, 100);
	c = td_add_dl(k, 3, 600, 100);
	td_add_dl(k, 4, 2 * NSEC_PER_SEC, 100);
	td_add(k, 5, 100);
	/* The expired ones do not count towards max_batch. */
	td_cut(k, &b, NSEC_PER_SEC, TD_IDS(2, 4));
	td_expect_ended(k, a, TDISPATCH_EXPIRED);
	td_expect_ended(k, c, TDISPATCH_EXPIRED);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(5));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_EXPIRED] = 2));
}

/* Per-id exclusion */

static void td_test_waits_behind_inflight(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *w1, *w2;
	struct td_batch b1, b2;

	td_add_ids(k, 1, 2, 100);
	td_cut(k, &b1, 100, TD_IDS(1, 2));
	w1 = td_add(k, 1, 200);
	KUNIT_EXPECT_EQ(test, w1->state, TD_TASK_WAITING);
	KUNIT_EXPECT_EQ(test, k->p.nr_waiting, 1);
	KUNIT_EXPECT_PTR_EQ(test, td_pending_waiter(&k->p, b1.tasks[0]->id), w1);
	td_expect_lookup(k, 1, b1.tasks[0]);
	td_expect_due(k, 100 * TD_DELAY, false, KTIME_MAX);
	/* Passed over, keeping its place; the ones behind it go. */
	td_add_ids(k, 3, 4, 300);
	td_cut(k, &b2, 300, TD_IDS(3, 4));
	td_expect_order(k, TD_IDS(1));
	/* A further one replaces the waiter in its place. */
	w2 = td_add(k, 1, 400);
	td_expect_ended(k, w1, TDISPATCH_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, w2->state, TD_TASK_WAITING);
	KUNIT_EXPECT_EQ(test, w2->queued, 200);
	KUNIT_EXPECT_PTR_EQ(test, td_pending_waiter(&k->p, b1.tasks[0]->id), w2);
	td_add(k, 5, 500);
	td_expect_order(k, TD_IDS(1, 5));
	/* The in-flight one ends: the waiter is free to go, first. */
	td_complete(k, &b1, TDISPATCH_DONE);
	KUNIT_EXPECT_EQ(test, w2->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, k->p.nr_waiting, 0);
	td_expect_lookup(k, 1, w2);
	td_cut(k, &b1, 600, TD_IDS(1, 5));
	KUNIT_EXPECT_PTR_EQ(test, b1.tasks[0], w2);
	td_complete(k, &b1, TDISPATCH_DONE);
	td_complete(k, &b2, TDISPATCH_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DONE] = 6,
					  [TDISPATCH_OVERRIDDEN] = 1));
}

static void td_test_requeue_loses_to_waiter(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *w;
	struct td_batch b;

	td_add_ids(k, 1, 2, 100);
	td_cut(k, &b, 100, TD_IDS(1, 2));
	w = td_add(k, 1, 200);
	td_requeue(k, &b);
	td_expect_ended(k, b.tasks[0], TDISPATCH_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, w->state, TD_TASK_PENDING);
	td_expect_lookup(k, 1, w);
	td_expect_order(k, TD_IDS(2, 1));
	KUNIT_EXPECT_EQ(test, k->p.nr_waiting, 0);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 0);
	KUNIT_EXPECT_EQ(test, k->p.retries, 1);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OVERRIDDEN] = 1));
}

static void td_test_waiter_expires(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *w;
	struct td_batch b1, b2;

	td_add(k, 1, 100);
	td_cut(k, &b1, 100, TD_IDS(1));
	w = td_add_dl(k, 1, 300, 200);
	td_cut(k, &b2, 400, TD_NONE);
	td_expect_ended(k, w, TDISPATCH_EXPIRED);
	KUNIT_EXPECT_NULL(test, td_pending_waiter(&k->p, b1.tasks[0]->id));
	td_complete(k, &b1, TDISPATCH_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DONE] = 1,
					  [TDISPATCH_EXPIRED] = 1));
}

/* Cancel */

static void td_test_cancel_pending(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *t = td_add(k, 1, 100);

	td_add(k, 2, 100);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), 0);
	td_expect_ended(k, t, TDISPATCH_CANCELLED);
	td_expect_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2));
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -ENOENT);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 99), -ENOENT);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_CANCELLED] = 1));
}

static void td_test_cancel_inflight(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 2);
	struct tdispatch_task *w;
	struct td_batch b;

	td_add(k, 1, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -EBUSY);
	td_expect_outcomes(k, TD_OUTCOMES());
	w = td_add(k, 1, 200);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), 0);
	td_expect_ended(k, w, TDISPATCH_CANCELLED);
	KUNIT_EXPECT_NULL(test, td_pending_waiter(&k->p, b.tasks[0]->id));
	KUNIT_EXPECT_EQ(test, k->p.nr_waiting, 0);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -EBUSY);
	td_complete(k, &b, TDISPATCH_DONE);
	td_expect_lookup(k, 1, NULL);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_CANCELLED] = 1,
					  [TDISPATCH_DONE] = 1));
}

static void td_test_cancel_all(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 1);
	struct td_batch b;

	td_add_ids(k, 1, 3, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	td_add(k, 1, 200);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
	td_expect_order(k, TD_NONE);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 1);
	KUNIT_EXPECT_NULL(test, td_pending_waiter(&k->p, b.tasks[0]->id));
	td_expect_lookup(k, 1, b.tasks[0]);
	td_expect_lookup(k, 2, NULL);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_CANCELLED] = 3));
	td_complete(k, &b, TDISPATCH_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
}

/* Delayed tasks */

static void td_test_delayed_waits(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *t, *at_once;

	t = td_add_later(k, 1, 2000, 100);
	KUNIT_EXPECT_EQ(test, t->state, TD_TASK_DELAYED);
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 1);
	KUNIT_EXPECT_EQ(test, k->p.nr_pending, 0);
	td_expect_lookup(k, 1, NULL);
	td_expect_delayed_lookup(k, 1, t);
	td_expect_due(k, 1999, false, KTIME_MAX);
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 2000);
	/* A not_before of now or earlier is no delay. */
	at_once = td_add_later(k, 2, 100, 100);
	KUNIT_EXPECT_EQ(test, at_once->state, TD_TASK_PENDING);
	td_expect_order(k, TD_IDS(2));
	td_promote(k, 1999, 0);
	KUNIT_EXPECT_EQ(test, t->state, TD_TASK_DELAYED);
	td_promote(k, 2000, 1);
	KUNIT_EXPECT_EQ(test, t->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, t->queued, 2000);
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 0);
	td_expect_lookup(k, 1, t);
	td_expect_delayed_lookup(k, 1, NULL);
	td_expect_order(k, TD_IDS(2, 1));
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), KTIME_MAX);
	td_promote(k, 5000, 0);
	/* Drained once, not again when promoted. */
	KUNIT_EXPECT_EQ(test, k->p.drained, 2);
	td_expect_outcomes(k, TD_OUTCOMES());
}

static void td_test_delayed_order(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 8);

	td_add_later(k, 1, 3000, 100);
	td_add_later(k, 2, 2000, 101);
	td_add_later(k, 3, 3000, 102);
	td_add_later(k, 4, 1000, 103);
	td_add_later(k, 5, 2000, 104);
	/* Equal times keep their arrival order. */
	td_expect_delayed(k, TD_IDS(4, 2, 5, 1, 3));
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 1000);
	td_promote(k, 2500, 3);
	td_expect_order(k, TD_IDS(4, 2, 5));
	td_expect_delayed(k, TD_IDS(1, 3));
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 3000);
	td_promote(k, 3000, 2);
	td_expect_order(k, TD_IDS(4, 2, 5, 1, 3));
	td_expect_delayed(k, TD_NONE);
}

/* The newest task of an id wins, with its own not_before time. */
static void td_test_delayed_overridden(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *first, *later, *earlier;

	first = td_add_later(k, 1, 2000, 100);
	td_add_later(k, 2, 2500, 100);
	later = td_add_later(k, 1, 3000, 200);
	td_expect_ended(k, first, TDISPATCH_OVERRIDDEN);
	td_expect_delayed_lookup(k, 1, later);
	td_expect_delayed(k, TD_IDS(2, 1));
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 2);
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 2500);
	td_promote(k, 2000, 0);
	earlier = td_add_later(k, 1, 1500, 300);
	td_expect_ended(k, later, TDISPATCH_OVERRIDDEN);
	td_expect_delayed(k, TD_IDS(1, 2));
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), 1500);
	td_promote(k, 1500, 1);
	td_expect_lookup(k, 1, earlier);
	td_expect_order(k, TD_IDS(1));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OVERRIDDEN] = 2));
}

static void td_test_delayed_overridden_at_once(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *d, *t;

	d = td_add_later(k, 1, 2000, 100);
	t = td_add(k, 1, 200);
	td_expect_ended(k, d, TDISPATCH_OVERRIDDEN);
	KUNIT_EXPECT_EQ(test, t->state, TD_TASK_PENDING);
	KUNIT_EXPECT_EQ(test, t->queued, 200);
	td_expect_lookup(k, 1, t);
	td_expect_delayed_lookup(k, 1, NULL);
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), KTIME_MAX);
	td_promote(k, 2000, 0);
	td_expect_order(k, TD_IDS(1));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OVERRIDDEN] = 1));
}

/* It leaves a pending task of its id alone until it is promoted. */
static void td_test_delayed_leaves_pending(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *p1, *d;
	struct td_batch b;

	p1 = td_add(k, 1, 100);
	td_add(k, 2, 150);
	d = td_add_later(k, 1, 2000, 200);
	KUNIT_EXPECT_EQ(test, p1->state, TD_TASK_PENDING);
	td_expect_lookup(k, 1, p1);
	td_expect_delayed_lookup(k, 1, d);
	td_expect_outcomes(k, TD_OUTCOMES());
	td_promote(k, 2000, 1);
	td_expect_ended(k, p1, TDISPATCH_OVERRIDDEN);
	td_expect_lookup(k, 1, d);
	/* It takes the overridden task's place in line, as any newer one. */
	KUNIT_EXPECT_EQ(test, d->queued, 100);
	td_expect_order(k, TD_IDS(1, 2));
	td_cut(k, &b, 2000, TD_IDS(1, 2));
	KUNIT_EXPECT_PTR_EQ(test, b.tasks[0], d);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_OVERRIDDEN] = 1));
}

static void td_test_delayed_behind_inflight(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *d;
	struct td_batch b;

	td_add(k, 1, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	d = td_add_later(k, 1, 2000, 200);
	KUNIT_EXPECT_NULL(test, td_pending_waiter(&k->p, b.tasks[0]->id));
	td_promote(k, 2000, 1);
	KUNIT_EXPECT_EQ(test, d->state, TD_TASK_WAITING);
	KUNIT_EXPECT_PTR_EQ(test, td_pending_waiter(&k->p, b.tasks[0]->id), d);
	KUNIT_EXPECT_EQ(test, d->queued, 2000);
	td_complete(k, &b, TDISPATCH_DONE);
	KUNIT_EXPECT_EQ(test, d->state, TD_TASK_PENDING);
	td_expect_lookup(k, 1, d);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DONE] = 1));
}

/* A promoted task that needs a place makes room as any other. */
static void td_test_delayed_makes_room(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 2, 2);
	struct tdispatch_task *oldest;

	/* Delayed tasks are not pending: the bound does not count them. */
	td_add_later(k, 3, 1000, 100);
	td_add_later(k, 4, 1000, 100);
	oldest = td_add(k, 1, 100);
	td_add(k, 2, 200);
	td_expect_outcomes(k, TD_OUTCOMES());
	td_promote(k, 1000, 2);
	td_expect_ended(k, oldest, TDISPATCH_DROPPED);
	td_expect_order(k, TD_IDS(3, 4));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_DROPPED] = 2));
}

static void td_test_delayed_expires(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *d, *stale, *edge;

	d = td_add_at(k, 1, 2000, 1500, 100);
	KUNIT_EXPECT_EQ(test, d->state, TD_TASK_DELAYED);
	/* Expired on arrival: it does not displace the delayed one. */
	stale = td_add_at(k, 1, 3000, 50, 100);
	td_expect_ended(k, stale, TDISPATCH_EXPIRED);
	td_expect_delayed_lookup(k, 1, d);
	/* A deadline equal to the promotion time has not passed. */
	edge = td_add_at(k, 2, 2000, 2000, 100);
	td_promote(k, 2000, 2);
	td_expect_ended(k, d, TDISPATCH_EXPIRED);
	KUNIT_EXPECT_EQ(test, edge->state, TD_TASK_PENDING);
	td_expect_order(k, TD_IDS(2));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_EXPIRED] = 2));
}

static void td_test_cancel_delayed(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 4);
	struct tdispatch_task *d1, *p2, *d2, *d3;
	struct td_batch b;

	d1 = td_add_later(k, 1, 2000, 100);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), 0);
	td_expect_ended(k, d1, TDISPATCH_CANCELLED);
	td_expect_delayed_lookup(k, 1, NULL);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 1), -ENOENT);
	/* Both the pending and the delayed task of an id go. */
	p2 = td_add(k, 2, 100);
	d2 = td_add_later(k, 2, 2000, 100);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 2), 0);
	td_expect_ended(k, p2, TDISPATCH_CANCELLED);
	td_expect_ended(k, d2, TDISPATCH_CANCELLED);
	td_expect_lookup(k, 2, NULL);
	/* In flight and delayed: the delayed one can be recalled. */
	td_add(k, 3, 100);
	td_cut(k, &b, 100, TD_IDS(3));
	d3 = td_add_later(k, 3, 2000, 100);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 3), 0);
	td_expect_ended(k, d3, TDISPATCH_CANCELLED);
	KUNIT_EXPECT_EQ(test, td_cancel(k, 3), -EBUSY);
	KUNIT_EXPECT_EQ(test, k->p.nr_delayed, 0);
	td_promote(k, 2000, 0);
	td_complete(k, &b, TDISPATCH_DONE);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_CANCELLED] = 4,
					  [TDISPATCH_DONE] = 1));
}

static void td_test_cancel_all_delayed(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 8, 1);
	struct td_batch b;

	td_add_ids(k, 1, 2, 100);
	td_cut(k, &b, 100, TD_IDS(1));
	td_add(k, 1, 200);
	td_add_later(k, 1, 3000, 200);
	td_add_later(k, 2, 2000, 200);
	td_add_later(k, 3, 1000, 200);
	td_pending_cancel_all(&k->p, &k->reap);
	td_check(k);
	td_expect_order(k, TD_NONE);
	td_expect_delayed(k, TD_NONE);
	KUNIT_EXPECT_EQ(test, td_pending_next_delayed(&k->p), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, k->p.nr_inflight, 1);
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_CANCELLED] = 5));
	td_complete(k, &b, TDISPATCH_DONE);
	KUNIT_EXPECT_EQ(test, td_ids_live(&k->p), 0);
}

/* The wheel: far due times, cascades, order and a random walk */

#define TD_MS		NSEC_PER_MSEC
#define TD_HOUR		(3600ULL * NSEC_PER_SEC)

/*
 * Follow td_pending_next_delayed() to a task's time: each step may only
 * move tasks nearer (a cascade) until the wheel names the due time itself;
 * nothing is let in early, and at its time the task is let in at once.
 */
static void td_wheel_walk_to(struct td_kunit *k, struct tdispatch_task *t)
{
	unsigned int steps = 0;
	ktime_t next;

	while ((next = td_pending_next_delayed(&k->p)) < td_task_not_before(t)) {
		KUNIT_ASSERT_LT(k->test, steps++, 2 * TD_WHEEL_LEVELS);
		td_promote(k, next, 0);
	}
	KUNIT_EXPECT_EQ(k->test, next, td_task_not_before(t));
	td_promote(k, td_task_not_before(t) - 1, 0);
	KUNIT_EXPECT_EQ(k->test, t->state, TD_TASK_DELAYED);
	td_promote(k, td_task_not_before(t), 1);
	KUNIT_EXPECT_EQ(k->test, t->state, TD_TASK_PENDING);
}

/* From a millisecond to beyond the top level, each one exactly on time. */
static void td_test_wheel_levels(struct kunit *test)
{
	static const u64 after[] = {
		3 * TD_MS + 7, 500 * TD_MS + 1, 30ULL * NSEC_PER_SEC + 11,
		TD_HOUR + 3, 30 * 24 * TD_HOUR + 5, 5 * 365 * 24 * TD_HOUR + 13,
	};
	struct td_kunit *k = td_setup(test, 16, 4);
	struct tdispatch_task *t[ARRAY_SIZE(after)];
	ktime_t now = 10 * NSEC_PER_SEC;
	unsigned int i;

	td_promote(k, now, 0);
	for (i = 0; i < ARRAY_SIZE(after); i++)
		t[i] = td_add_later(k, i + 1, now + after[i], now);
	/* One per level up to 3; then 30 days and 5 years, both in the top one. */
	for (i = 0; i < TD_WHEEL_LEVELS; i++)
		KUNIT_EXPECT_EQ_MSG(test, hweight64(k->p.delayed.map[i]),
				    i < 4 ? 1 : i == TD_WHEEL_LEVELS - 1 ? 2 : 0, "level %u", i);
	for (i = 0; i < ARRAY_SIZE(after); i++)
		td_wheel_walk_to(k, t[i]);
	td_expect_order(k, TD_IDS(1, 2, 3, 4, 5, 6));
	for (i = 0; i < TD_WHEEL_LEVELS; i++)
		KUNIT_EXPECT_EQ(test, k->p.delayed.map[i], 0);
}

/*
 * Equal times keep their arrival order even when the first comes down
 * from a higher level after the later ones were put lower or near: 1 waits
 * in level 2 for its bucket (which starts 5 ms before its time) while 2 goes
 * into level 0 and, once that bucket has come, 3 straight into the rbtree.
 */
static void td_test_wheel_equal_times(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 16, 4);
	ktime_t bucket2 = 26ULL << td_wheel_shift(2), due = bucket2 + 5 * TD_MS;

	td_add_later(k, 1, due, 0);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 1);
	td_promote(k, bucket2 - 2 * TD_MS, 0);
	td_add_later(k, 2, due, bucket2 - 2 * TD_MS);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[0]), 1);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 1);
	td_promote(k, due - TD_MS / 2, 0);
	KUNIT_EXPECT_EQ(test, k->p.delayed.map[2], 0);
	td_add_later(k, 3, due, due - TD_MS / 2);
	td_add_later(k, 4, due - 1, due - TD_MS / 2);
	td_expect_delayed(k, TD_IDS(4, 1, 2, 3));
	td_promote(k, due, 4);
	td_expect_order(k, TD_IDS(4, 1, 2, 3));
}

/*
 * A group due at one instant reaches the near rbtree in arrival order or
 * the reverse, by how many times it moved (each move reverses a bucket's
 * list): 1, 2 and 3 moves here.  Two tasks that came before it, due just
 * before and just after it, show the order: moved newest first, the group
 * and both go in at an end of the tree without a walk; oldest first, the
 * group goes in between the two by a walk.  Either way, by arrival.
 */
static void td_test_wheel_group(struct kunit *test)
{
	static const struct {
		ktime_t due, step;	/* step: a promotion before the last two */
	} cases[] = {
		{ 10 * TD_MS, 0 },			/* level 0, then near */
		{ 100 * TD_MS, 0 },			/* level 1, 0, near */
		{ 5000 * TD_MS, 1ULL << 32 },		/* level 2, 1, 0, near */
	};
	unsigned int c;
	u64 id;

	for (c = 0; c < ARRAY_SIZE(cases); c++) {
		struct td_kunit *k = td_setup(test, TD_ORDER_MAX, 4);
		ktime_t due = cases[c].due;

		td_add_later(k, 13, due + 1, 0);
		td_add_later(k, 14, due - 1, 0);
		for (id = 1; id <= 12; id++)
			td_add_later(k, id, due, id);
		if (cases[c].step)
			td_promote(k, cases[c].step, 0);
		td_promote(k, due - TD_MS, 0);
		td_promote(k, due + 1, 14);
		td_expect_order(k, TD_IDS(14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13));
	}
}

/* Cancel and release take tasks from buckets, and the maps follow. */
static void td_test_wheel_cancel(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, 16, 4);
	ktime_t now = NSEC_PER_SEC;

	td_promote(k, now, 0);
	td_add_later(k, 1, now + 20ULL * NSEC_PER_SEC, now);
	td_add_later(k, 2, now + 20ULL * NSEC_PER_SEC + 1, now);
	td_add_later(k, 3, now + 40ULL * NSEC_PER_SEC, now);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 2);
	KUNIT_EXPECT_EQ(test, td_pending_cancel(&k->p, 1, &k->reap), 0);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 2);
	KUNIT_EXPECT_EQ(test, td_pending_release(&k->p, 2, now, &k->reap), 0);
	KUNIT_EXPECT_EQ(test, hweight64(k->p.delayed.map[2]), 1);
	KUNIT_EXPECT_EQ(test, td_pending_cancel(&k->p, 3, &k->reap), 0);
	KUNIT_EXPECT_EQ(test, k->p.delayed.map[2], 0);
	td_check(k);
	td_expect_order(k, TD_IDS(2));
	td_expect_outcomes(k, TD_OUTCOMES([TDISPATCH_CANCELLED] = 2));
}

#define TD_WALK_TASKS	400

static u64 td_walk_rng(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * Random due times over every level, random cancels and releases, time
 * moving in random steps: at each promotion exactly the tasks due by then
 * come in, in (due, arrival) order, none before its time.
 */
static void td_test_wheel_random(struct kunit *test)
{
	struct td_kunit *k = td_setup(test, TD_WALK_TASKS, 4);
	struct tdispatch_task **t;
	ktime_t now = 5 * NSEC_PER_SEC, last = now;
	unsigned int i, left, added = 0, steps = 0;
	u64 rng = 0x9e3779b97f4a7c15ULL;
	int ret;

	t = kunit_kcalloc(test, TD_WALK_TASKS, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	while (added < TD_WALK_TASKS || k->p.nr_delayed) {
		u64 r = td_walk_rng(&rng);
		unsigned int due_now = 0, n, seen = 0;
		struct tdispatch_task *it, *prev;

		/* A lost task would keep the walk going: fail instead. */
		KUNIT_ASSERT_LT(test, steps++, 100000);
		if (added < TD_WALK_TASKS && r % 3) {
			/* 1 ns to about 4.9 hours ahead: every level but the top. */
			u64 ahead = 1 + (td_walk_rng(&rng) >> (20 + r % 44));

			t[added] = td_add_later(k, added + 1, now + ahead, now);
			added++;
			continue;
		}
		if (added && !(r % 5)) {
			it = t[td_walk_rng(&rng) % added];
			if (it->state != TD_TASK_DELAYED)
				continue;
			ret = r & 8 ? td_pending_cancel(&k->p, it->id, &k->reap) :
				      td_pending_release(&k->p, it->id, now, &k->reap);
			KUNIT_EXPECT_EQ(test, ret, 0);
			td_check(k);
			continue;
		}
		/* To the wheel's next time, or a random step past it. */
		now = td_pending_next_delayed(&k->p);
		if (now == KTIME_MAX || r & 16)
			now = last + (td_walk_rng(&rng) >> (24 + r % 40));
		now = max(now, last);
		for (i = 0; i < added; i++)
			due_now += t[i]->state == TD_TASK_DELAYED &&
				   td_task_not_before(t[i]) <= now;
		n = k->p.nr_pending;
		td_promote(k, now, due_now);
		for (i = 0; i < added; i++)
			if (t[i]->state == TD_TASK_DELAYED)
				KUNIT_EXPECT_GT(test, td_task_not_before(t[i]), now);
		/* The newcomers are at the tail of the line, by (due, arrival). */
		prev = NULL;
		list_for_each_entry(it, &k->p.order, order) {
			if (seen++ < n)
				continue;
			KUNIT_EXPECT_LE(test, td_task_not_before(it), now);
			if (prev) {
				ktime_t a = td_task_not_before(prev), b = td_task_not_before(it);

				KUNIT_EXPECT_TRUE(test, a < b || (a == b && prev->id < it->id));
			}
			prev = it;
		}
		last = now;
		/* Batch the line away, to keep room for what comes next. */
		while (k->p.nr_pending) {
			struct td_batch b;

			b.nr = td_pending_cut(&k->p, now, k->p.max_batch, b.tasks, &k->reap);
			KUNIT_ASSERT_GT(test, b.nr, 0);
			td_complete(k, &b, TDISPATCH_DONE);
		}
	}
	for (i = 0, left = 0; i < added; i++)
		left += t[i]->state == TD_TASK_DELAYED;
	KUNIT_EXPECT_EQ(test, left, 0);
	for (i = 0; i < TD_WHEEL_LEVELS; i++)
		KUNIT_EXPECT_EQ(test, k->p.delayed.map[i], 0);
}

static struct kunit_case td_pending_cases[] = {
	KUNIT_CASE(td_test_ids_resize),
	KUNIT_CASE(td_test_add_keeps_order),
	KUNIT_CASE(td_test_coalesce),
	{}
};

static struct kunit_case td_overflow_cases[] = {
	KUNIT_CASE(td_test_overflow_drops_oldest),
	KUNIT_CASE(td_test_requeue_to_head),
	KUNIT_CASE(td_test_full_drops_retry_first),
	KUNIT_CASE(td_test_requeue_full_drops_retries),
	KUNIT_CASE(td_test_retries_counted),
	KUNIT_CASE(td_test_max_attempts_exhaust),
	KUNIT_CASE(td_test_attempts_saturate),
	{}
};

static struct kunit_case td_batch_cases[] = {
	KUNIT_CASE(td_test_due_at_max_batch),
	KUNIT_CASE(td_test_due_after_max_delay),
	KUNIT_CASE(td_test_due_when_full),
	KUNIT_CASE(td_test_due_when_flushing),
	KUNIT_CASE(td_test_gather_room),
	KUNIT_CASE(td_test_cut_max_batch),
	KUNIT_CASE(td_test_single_item),
	{}
};

static struct kunit_case td_expiry_cases[] = {
	KUNIT_CASE(td_test_expired_on_add),
	KUNIT_CASE(td_test_expires_while_pending),
	{}
};

static struct kunit_case td_exclusion_cases[] = {
	KUNIT_CASE(td_test_waits_behind_inflight),
	KUNIT_CASE(td_test_requeue_loses_to_waiter),
	KUNIT_CASE(td_test_waiter_expires),
	{}
};

static struct kunit_case td_cancel_cases[] = {
	KUNIT_CASE(td_test_cancel_pending),
	KUNIT_CASE(td_test_cancel_inflight),
	KUNIT_CASE(td_test_cancel_all),
	{}
};

static struct kunit_case td_delayed_cases[] = {
	KUNIT_CASE(td_test_delayed_waits),
	KUNIT_CASE(td_test_delayed_order),
	KUNIT_CASE(td_test_delayed_overridden),
	KUNIT_CASE(td_test_delayed_overridden_at_once),
	KUNIT_CASE(td_test_delayed_leaves_pending),
	KUNIT_CASE(td_test_delayed_behind_inflight),
	KUNIT_CASE(td_test_delayed_makes_room),
	KUNIT_CASE(td_test_delayed_expires),
	KUNIT_CASE(td_test_cancel_delayed),
	KUNIT_CASE(td_test_cancel_all_delayed),
	KUNIT_CASE(td_test_release_delayed),
	KUNIT_CASE(td_test_release_key),
	{}
};

static struct kunit_case td_wheel_cases[] = {
	KUNIT_CASE(td_test_wheel_levels),
	KUNIT_CASE(td_test_wheel_equal_times),
	KUNIT_CASE(td_test_wheel_group),
	KUNIT_CASE(td_test_wheel_cancel),
	KUNIT_CASE(td_test_wheel_random),
	{}
};

#define TD_SUITE(_name)						\
	static struct kunit_suite td_##_name##_suite = {		\
		.name = "tdispatch_" #_name,				\
		.test_cases = td_##_name##_cases,			\
	}

TD_SUITE(pending);
TD_SUITE(overflow);
TD_SUITE(batch);
TD_SUITE(expiry);
TD_SUITE(exclusion);
TD_SUITE(cancel);
TD_SUITE(delayed);
TD_SUITE(wheel);

kunit_test_suites(&td_pending_suite, &td_overflow_suite, &td_batch_suite,
		  &td_expiry_suite, &td_exclusion_suite, &td_cancel_suite,
		  &td_delayed_suite, &td_wheel_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests of the tdispatch pending set and its timing wheel");
