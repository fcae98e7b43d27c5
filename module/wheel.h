/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A timing wheel: where delayed tasks wait for their not-before time.
 * See module/wheel.c.
 */
#ifndef _TDISPATCH_WHEEL_H
#define _TDISPATCH_WHEEL_H

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/types.h>

/*
 * Level 0 has buckets of 2^20 ns (about 1 ms); each level's buckets are
 * 64 times wider than the one below, so level L spans 2^(26 + 6L) ns:
 * 67 ms, 4.3 s, 275 s, 4.9 hours, 13 days and 2.3 years.  Later times wait
 * in the top level's last bucket and are placed again when it comes round.
 */
#define TD_WHEEL_SHIFT		20
#define TD_WHEEL_BITS		6
#define TD_WHEEL_SIZE		BIT(TD_WHEEL_BITS)
#define TD_WHEEL_LEVELS		6

/* Where level @lvl's bucket number starts in a time. */
static inline unsigned int td_wheel_shift(unsigned int lvl)
{
	return TD_WHEEL_SHIFT + lvl * TD_WHEEL_BITS;
}

/**
 * struct td_wheel_node - an entry, embedded in what waits
 * @due: when it is due, in nanoseconds; set before td_wheel_add() and
 *	left alone until td_wheel_del().
 * @seq: the wheel's: its arrival number, so that equal times keep order.
 * @rb: the wheel's: its place in the near rbtree...
 * @bucket: ...or in a bucket.
 */
struct td_wheel_node {
	u64 due;
	u64 seq;
	union {
		struct rb_node rb;
		struct hlist_node bucket;
	};
};

/**
 * struct td_wheel - entries waiting for a due time
 * @horizon: every entry due before it is in @near, every later one in a
 *	bucket; always a multiple of the level-0 bucket's span.
 * @near: the entries due before @horizon, by due time and then by arrival,
 *	so that firing is exact.
 * @last: @near's last entry, NULL when @near is empty.
 * @seq: the next arrival's number.
 * @map: per level, which buckets hold entries.
 * @bucket: per level, the entries due in each bucket's stretch of time.
 */
struct td_wheel {
	u64 horizon;
	struct rb_root_cached near;
	struct rb_node *last;
	u64 seq;
	u64 map[TD_WHEEL_LEVELS];
	struct hlist_head bucket[TD_WHEEL_LEVELS][TD_WHEEL_SIZE];
};

void td_wheel_init(struct td_wheel *w);
void td_wheel_add(struct td_wheel *w, struct td_wheel_node *e);
void td_wheel_del(struct td_wheel *w, struct td_wheel_node *e);
void td_wheel_advance(struct td_wheel *w, u64 now);
struct td_wheel_node *td_wheel_first(struct td_wheel *w);
u64 td_wheel_next(struct td_wheel *w);
struct td_wheel_node *td_wheel_any(struct td_wheel *w);

#endif /* _TDISPATCH_WHEEL_H */
