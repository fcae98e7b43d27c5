// SPDX-License-Identifier: GPL-2.0
/*
 * A timing wheel with an exact near window: where delayed tasks wait.
 *
 * Entries due within the current level-0 slot or earlier sit in an rbtree
 * by (due, arrival), so that they fire exactly at their time, in the order
 * they came.  Later ones sit in the slots of a hierarchical wheel, as in
 * kernel/time/timer.c, but nothing fires from a slot: when time reaches a
 * slot, its entries are placed again, into a lower level or into the
 * rbtree, each at most once per level (but the top level's, again and
 * again for an entry due beyond its span).  Insert and cancel are O(1) in
 * the slots (O(log n) in the near rbtree), with no per-entry timer; the
 * caller's single hrtimer (the acceptor's sleep) wakes at td_wheel_next().
 * Nothing here locks or reads a clock.
 *
 * This file is included, not linked, by the code whose entries it holds
 * (pending.c, and the benchmark that measured it), after defining:
 *
 *   TD_WHEEL_ENTRY	the entry's type
 *   TD_WHEEL_DUE(e)	its due time, u64 nanoseconds; constant while held
 *   TD_WHEEL_SEQ(e)	an lvalue the wheel may use for its arrival number
 *   TD_WHEEL_RB	the member, a struct rb_node, for the near rbtree
 *   TD_WHEEL_SLOT	the member, a struct hlist_node, for a slot; it may
 *			share a union with TD_WHEEL_RB
 */
#include <linux/bitops.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/rbtree.h>
#include <linux/string.h>

#include "wheel.h"

#define TD_WHEEL_NR_SLOTS	(TD_WHEEL_LEVELS * TD_WHEEL_SIZE)

static inline TD_WHEEL_ENTRY *td_wheel_rb_entry(const struct rb_node *n)
{
	return rb_entry(n, TD_WHEEL_ENTRY, TD_WHEEL_RB);
}

/* Earlier due first; equal times in arrival order. */
static bool td_wheel_less(struct rb_node *a, const struct rb_node *b)
{
	TD_WHEEL_ENTRY *x = td_wheel_rb_entry(a), *y = td_wheel_rb_entry(b);

	if (TD_WHEEL_DUE(x) != TD_WHEEL_DUE(y))
		return TD_WHEEL_DUE(x) < TD_WHEEL_DUE(y);
	return TD_WHEEL_SEQ(x) < TD_WHEEL_SEQ(y);
}

/*
 * Into the near rbtree.  A slot's entries come out in the order of their
 * arrival or the reverse (each move down a level reverses it), so a group
 * due at one instant arrives sorted one way or the other: an entry that
 * goes before the first or after the last is linked there at once, with no
 * walk down the tree, and a million entries due together move in O(n),
 * not O(n log n), when nothing else near sorts among them.  The first has
 * no left child, the last no right one.
 */
static void td_wheel_near_add(struct td_wheel *w, TD_WHEEL_ENTRY *e)
{
	struct rb_node *first = rb_first_cached(&w->near), *n = &e->TD_WHEEL_RB;

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

static inline unsigned int td_wheel_shift(unsigned int lvl)
{
	return TD_WHEEL_SHIFT + lvl * TD_WHEEL_BITS;
}

/*
 * The first level-0 slot is the near window, so that what is due within a
 * millisecond of a fresh wheel fires exactly without a cascade.
 */
static void td_wheel_init(struct td_wheel *w)
{
	memset(w, 0, sizeof(*w));
	w->horizon = 1ULL << TD_WHEEL_SHIFT;
	w->near = RB_ROOT_CACHED;
}

/*
 * Into the near rbtree if due before the horizon; else into the lowest
 * level whose 64 slots from the horizon's reach the due time.  A slot's
 * start is then at or after the horizon: level 0's because the horizon is
 * slot-aligned, a higher level's because a lower one would have reached.
 */
static void td_wheel_place(struct td_wheel *w, TD_WHEEL_ENTRY *e)
{
	u64 due = TD_WHEEL_DUE(e), h = w->horizon, slot;
	unsigned int lvl, idx;

	if (due < h) {
		td_wheel_near_add(w, e);
		return;
	}
	for (lvl = 0; ; lvl++) {
		unsigned int shift = td_wheel_shift(lvl);

		slot = due >> shift;
		if (slot - (h >> shift) < TD_WHEEL_SIZE)
			break;
		if (lvl == TD_WHEEL_LEVELS - 1) {
			/* Beyond the top: wait in its last slot, then again. */
			slot = (h >> shift) + TD_WHEEL_SIZE - 1;
			break;
		}
	}
	idx = slot & (TD_WHEEL_SIZE - 1);
	hlist_add_head(&e->TD_WHEEL_SLOT, &w->slot[lvl][idx]);
	w->map[lvl] |= BIT_ULL(idx);
}

/* Hold @e until it is due; @e's due time must not change meanwhile. */
static void td_wheel_add(struct td_wheel *w, TD_WHEEL_ENTRY *e)
{
	TD_WHEEL_SEQ(e) = w->seq++;
	td_wheel_place(w, e);
}

/* Take @e out, wherever it waits. */
static void td_wheel_del(struct td_wheel *w, TD_WHEEL_ENTRY *e)
{
	struct hlist_node *n = &e->TD_WHEEL_SLOT;
	struct hlist_head *head;
	unsigned int i;

	if (TD_WHEEL_DUE(e) < w->horizon) {
		if (w->last == &e->TD_WHEEL_RB)
			w->last = rb_prev(&e->TD_WHEEL_RB);
		rb_erase_cached(&e->TD_WHEEL_RB, &w->near);
		return;
	}
	/* Only the first entry of a slot points back into the slot array. */
	head = container_of(n->pprev, struct hlist_head, first);
	__hlist_del(n);
	if (head < &w->slot[0][0] || head >= &w->slot[0][0] + TD_WHEEL_NR_SLOTS ||
	    head->first)
		return;
	i = head - &w->slot[0][0];
	w->map[i / TD_WHEEL_SIZE] &= ~BIT_ULL(i % TD_WHEEL_SIZE);
}

/* @n slots from @slot on, as bits of a level's map. */
static inline u64 td_wheel_span(u64 slot, u64 n)
{
	if (n >= TD_WHEEL_SIZE)
		return ~0ULL;
	return rol64(GENMASK_ULL(n - 1, 0), slot & (TD_WHEEL_SIZE - 1));
}

/*
 * Move the horizon past @now and place again what waits in every slot
 * that starts before the new horizon, lowest level first: an entry placed
 * again goes into the rbtree or a lower level, to a slot that starts at or
 * after the new horizon, so no slot is visited twice.  (An entry due
 * beyond the top level's span may go back into its last slot; if that slot
 * is visited later in the same pass, it is placed there again, harmlessly.)
 * After this, every entry due at or before @now is in the near rbtree.
 */
static void td_wheel_advance(struct td_wheel *w, u64 now)
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
			TD_WHEEL_ENTRY *e;

			due &= due - 1;
			w->map[lvl] &= ~BIT_ULL(idx);
			hlist_move_list(&w->slot[lvl][idx], &list);
			hlist_for_each_entry_safe(e, tmp, &list, TD_WHEEL_SLOT)
				td_wheel_place(w, e);
		}
	}
}

/* The entry that fires first, if it is in the near rbtree. */
static TD_WHEEL_ENTRY *td_wheel_first(struct td_wheel *w)
{
	struct rb_node *n = rb_first_cached(&w->near);

	return n ? td_wheel_rb_entry(n) : NULL;
}

/*
 * When td_wheel_advance() next has work: the first near entry's due time
 * or the start of the first slot that holds entries, whichever is earlier;
 * U64_MAX if the wheel is empty.  Never later than the first due time.
 */
static u64 td_wheel_next(struct td_wheel *w)
{
	TD_WHEEL_ENTRY *e = td_wheel_first(w);
	u64 next = e ? TD_WHEEL_DUE(e) : U64_MAX;
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

/* Any entry, for emptying the wheel; NULL if it is empty. */
static TD_WHEEL_ENTRY *td_wheel_any(struct td_wheel *w)
{
	TD_WHEEL_ENTRY *e = td_wheel_first(w);
	unsigned int lvl;

	for (lvl = 0; !e && lvl < TD_WHEEL_LEVELS; lvl++)
		if (w->map[lvl])
			e = hlist_entry(w->slot[lvl][__ffs64(w->map[lvl])].first,
					TD_WHEEL_ENTRY, TD_WHEEL_SLOT);
	return e;
}
