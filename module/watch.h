/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The keys that delayed tasks watch (watch.c).
 */
#ifndef _TDISPATCH_WATCH_H
#define _TDISPATCH_WATCH_H

#include <linux/rbtree.h>
#include <linux/types.h>

struct tdispatch_task;

/*
 * A delayed task's watch key, allocated with the task when it is
 * submitted and freed when it leaves the delayed set (or at once, if it is
 * due at once).  In a tree by key, equal keys in the order they were
 * delayed, so that all watchers of a key are one walk from the first.
 */
struct td_watcher {
	struct rb_node node;
	u64 key;
	struct tdispatch_task *t;
};

void td_watch_add(struct rb_root *root, struct td_watcher *w);
void td_watch_del(struct rb_root *root, struct td_watcher *w);
struct td_watcher *td_watch_first(struct rb_root *root, u64 key);
struct td_watcher *td_watch_next(struct td_watcher *w);

#endif /* _TDISPATCH_WATCH_H */
