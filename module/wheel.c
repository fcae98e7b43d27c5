// SPDX-License-Identifier: GPL-2.0
/*
 * A timing wheel with an exact near window: where delayed tasks wait.
 *
 * Entries due within the current level-0 bucket or earlier sit in an rbtree
 * by (due, arrival), so that they fire exactly at their time, in the order
 * they came.  Later ones sit in the buckets of a hierarchical wheel, as in
 * kernel/time/timer.c, but nothing fires from a bucket: when time reaches a
 * bucket, its entries are placed again, into a lower level or into the
 * rbtree, each at most once per level (but the top level's, again and
 * again for an entry due beyond its span).  Insert and cancel are O(1) in
 * the buckets (O(log n) in the near rbtree), with no per-entry timer; the
 * caller's single hrtimer (the acceptor's sleep) wakes at td_wheel_next().
 * Nothing here locks or reads a clock.
 *
 * An entry is a struct td_wheel_node embedded in the caller's object, with
 * its due time set before td_wheel_add() and left alone until it is out.
 */
#include <kunit/visibility.h>
#include <linux/bitops.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/rbtree.h>
#include <linux/string.h>

#include "wheel.h"

#define TD_WHEEL_NR_BUCKETS	(TD_WHEEL_LEVELS * TD_WHEEL_SIZE)

static inline struct td_wheel_node *td_wheel_rb_entry(const struct rb_node *n)
{
	return rb_entry(n, struct td_wheel_node, rb);
}

/* Earlier due first; equal times in arrival order. */
static bool td_wheel_less(struct rb_node *a, const struct rb_node *b)
{
	const struct td_wheel_node *x = td_wheel_rb_entry(a), *y = td_wheel_rb_entry(b);

	if (x->due != y->due)
		return x->due < y->due;
	return x->seq < y->seq;
}

/*
 * Into the near rbtree.  A bucket's entries come out in the order of their
 * arrival or the reverse (each move down a level reverses it), so a group
 * due at one instant arrives sorted one way or the other: an entry that
 * goes before the first or after the last is linked there at once, with no
 * walk down the tree, and a million entries due together move in O(n),
 * not O(n log n), when nothing else near sorts among them.  The first has
 * no left child, the last no right one.
 */
static void td_wheel_near_add(struct td_wheel *w, struct td_wheel_node *e)
{
	struct rb_node *first = rb_first_cached(&w->near), *n = &e->rb;

	if (!first || td_wheel_less(w->last, n)) {
		if (first)
			rb_link_node(n, w->last, &w->last->rb_right);
		else
			rb_link_node(n, NULL, &w->near.rb_root.rb_node);
		rb_insert_color_cached(n, &w->near, !first);
		w->last = n;
	} else if (td_wheel_less(n, first)) {
		rb_link_node(n, first, &first->rb_left);
		rb_insert_color_cached(n, &w->near, true);
	} else {
		rb_add_cached(n, &w->near, td_wheel_less);
	}
}

/*
 * The first level-0 bucket is the near window, so that what is due within a
 * millisecond of a fresh wheel fires exactly without a cascade.
 */
void td_wheel_init(struct td_wheel *w)
{
	memset(w, 0, sizeof(*w));
	w->horizon = 1ULL << TD_WHEEL_SHIFT;
	w->near = RB_ROOT_CACHED;
}
EXPORT_SYMBOL_IF_KUNIT(td_wheel_init);

/*
 * Into the near rbtree if due before the horizon; else into the lowest
 * level whose 64 buckets from the horizon's reach the due time.  A bucket's
 * start is then at or after the horizon: level 0's because the horizon is
 * bucket-aligned, a higher level's because a lower one would have reached.
 */
static void td_wheel_place(struct td_wheel *w, struct td_wheel_node *e)
{
	u64 due = e->due, h = w->horizon, b;
	unsigned int lvl, idx;

	if (due < h) {
		td_wheel_near_add(w, e);
		return;
	}
	for (lvl = 0; ; lvl++) {
		unsigned int shift = td_wheel_shift(lvl);

		b = due >> shift;
		if (b - (h >> shift) < TD_WHEEL_SIZE)
			break;
		if (lvl == TD_WHEEL_LEVELS - 1) {
			/* Beyond the top: wait in its last bucket, then again. */
			b = (h >> shift) + TD_WHEEL_SIZE - 1;
			break;
		}
	}
	idx = b & (TD_WHEEL_SIZE - 1);
	hlist_add_head(&e->bucket, &w->bucket[lvl][idx]);
	w->map[lvl] |= BIT_ULL(idx);
}

/* Hold @e until it is due; @e's due time must not change meanwhile. */
void td_wheel_add(struct td_wheel *w, struct td_wheel_node *e)
{
	e->seq = w->seq++;
	td_wheel_place(w, e);
}
EXPORT_SYMBOL_IF_KUNIT(td_wheel_add);

/* Take @e out, wherever it waits. */
void td_wheel_del(struct td_wheel *w, struct td_wheel_node *e)
{
	struct hlist_node *n = &e->bucket;
	struct hlist_head *head;
	unsigned int i;

	if (e->due < w->horizon) {
		if (w->last == &e->rb)
			w->last = rb_prev(&e->rb);
		rb_erase_cached(&e->rb, &w->near);
		return;
	}
	/* Only the first entry of a bucket points back into the array. */
	head = container_of(n->pprev, struct hlist_head, first);
	__hlist_del(n);
	if (head < &w->bucket[0][0] || head >= &w->bucket[0][0] + TD_WHEEL_NR_BUCKETS ||
	    head->first)
		return;
	i = head - &w->bucket[0][0];
	w->map[i / TD_WHEEL_SIZE] &= ~BIT_ULL(i % TD_WHEEL_SIZE);
}
EXPORT_SYMBOL_IF_KUNIT(td_wheel_del);

/* @n buckets from @b on, as bits of a level's map. */
static inline u64 td_wheel_span(u64 b, u64 n)
{
	if (n >= TD_WHEEL_SIZE)
		return ~0ULL;
	return rol64(GENMASK_ULL(n - 1, 0), b & (TD_WHEEL_SIZE - 1));
}

/*
 * Move the horizon past @now and place again what waits in every bucket
 * that starts before the new horizon, lowest level first: an entry placed
 * again goes into the rbtree or a lower level, to a bucket that starts at or
 * after the new horizon, so no bucket is visited twice.  (An entry due
 * beyond the top level's span may go back into its last bucket; if that bucket
 * is visited later in the same pass, it is placed there again, harmlessly.)
 * After this, every entry due at or before @now is in the near rbtree.
 */
void td_wheel_advance(struct td_wheel *w, u64 now)
{
	u64 h = w->horizon, nh = ((now >> TD_WHEEL_SHIFT) + 1) << TD_WHEEL_SHIFT;
	unsigned int lvl;

	if (nh <= h)
		return;
	w->horizon = nh;
	for (lvl = 0; lvl < TD_WHEEL_LEVELS; lvl++) {
		unsigned int shift = td_wheel_shift(lvl);
		u64 first = h >> shift;
		u64 due = w->map[lvl] & td_wheel_span(first, ((nh - 1) >> shift) - first + 1);

		while (due) {
			unsigned int idx = __ffs64(due);
			struct hlist_node *tmp;
			struct hlist_head list;
			struct td_wheel_node *e;

			due &= due - 1;
			w->map[lvl] &= ~BIT_ULL(idx);
			hlist_move_list(&w->bucket[lvl][idx], &list);
			hlist_for_each_entry_safe(e, tmp, &list, bucket)
				td_wheel_place(w, e);
		}
	}
}
EXPORT_SYMBOL_IF_KUNIT(td_wheel_advance);

/* The entry that fires first, if it is in the near rbtree. */
struct td_wheel_node *td_wheel_first(struct td_wheel *w)
{
	struct rb_node *n = rb_first_cached(&w->near);

	return n ? td_wheel_rb_entry(n) : NULL;
}
EXPORT_SYMBOL_IF_KUNIT(td_wheel_first);

/*
 * When td_wheel_advance() next has work: the first near entry's due time
 * or the start of the first bucket that holds entries, whichever is earlier;
 * U64_MAX if the wheel is empty.  Never later than the first due time.
 */
u64 td_wheel_next(struct td_wheel *w)
{
	struct td_wheel_node *e = td_wheel_first(w);
	u64 next = e ? e->due : U64_MAX;
	unsigned int lvl;

	for (lvl = 0; lvl < TD_WHEEL_LEVELS; lvl++) {
		unsigned int shift = td_wheel_shift(lvl);
		u64 first = w->horizon >> shift;

		if (!w->map[lvl])
			continue;
		first += __ffs64(ror64(w->map[lvl], first & (TD_WHEEL_SIZE - 1)));
		next = min(next, first << shift);
	}
	return next;
}
EXPORT_SYMBOL_IF_KUNIT(td_wheel_next);

/* Any entry, for emptying the wheel; NULL if it is empty. */
struct td_wheel_node *td_wheel_any(struct td_wheel *w)
{
	struct td_wheel_node *e = td_wheel_first(w);
	unsigned int lvl;

	for (lvl = 0; !e && lvl < TD_WHEEL_LEVELS; lvl++)
		if (w->map[lvl])
			e = hlist_entry(w->bucket[lvl][__ffs64(w->map[lvl])].first,
					struct td_wheel_node, bucket);
	return e;
}
EXPORT_SYMBOL_IF_KUNIT(td_wheel_any);
