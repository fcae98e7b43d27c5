/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The delayed set's timing wheel: where tasks wait for their not_before
 * time.  See module/wheel.c.
 */
#ifndef TD_WHEEL_H
#define TD_WHEEL_H

#include <linux/bits.h>
#include <linux/rbtree.h>
#include <linux/types.h>

/*
 * Level 0 has slots of 2^20 ns (about 1 ms); each level's slots are 64
 * times wider than the one below, so level L spans 2^(26 + 6L) ns: 67 ms,
 * 4.3 s, 275 s, 4.9 hours, 13 days and 2.3 years.  Later times wait in the
 * top level's last slot and are placed again when it comes round.
 */
#define TD_WHEEL_SHIFT		20
#define TD_WHEEL_BITS		6
#define TD_WHEEL_SIZE		BIT(TD_WHEEL_BITS)
#define TD_WHEEL_LEVELS		6

/**
 * struct td_wheel - entries waiting for a due time
 * @horizon: every entry due before it is in @near, every later one in a
 *	slot; always a multiple of the level-0 slot.
 * @near: the entries due before @horizon, by due time and then by arrival
 *	(the entry's sequence number), so that firing is exact.
 * @last: @near's last entry, NULL when @near is empty.
 * @seq: the next arrival's sequence number.
 * @map: per level, which slots hold entries.
 * @slot: per level, the entries due in each slot's stretch of time.
 */
struct td_wheel {
	u64 horizon;
	struct rb_root_cached near;
	struct rb_node *last;
	u64 seq;
	u64 map[TD_WHEEL_LEVELS];
	struct hlist_head slot[TD_WHEEL_LEVELS][TD_WHEEL_SIZE];
};

#endif /* TD_WHEEL_H */
