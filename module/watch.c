// SPDX-License-Identifier: GPL-2.0
/*
 * The tree of watch keys: each delayed task that watches a key, found by
 * the key, so that letting in all tasks that watch one is a walk from the
 * first.  Nothing here locks or allocates; the pending set holds the tree.
 */
#include "watch.h"

/* Strictly less only: rb_add() puts equal keys in the order they came. */
static bool td_watcher_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct td_watcher, node)->key <
	       rb_entry(b, struct td_watcher, node)->key;
}

void td_watch_add(struct rb_root *root, struct td_watcher *w)
{
	rb_add(&w->node, root, td_watcher_less);
}

void td_watch_del(struct rb_root *root, struct td_watcher *w)
{
	rb_erase(&w->node, root);
}

/* The first watcher of @key to come, or NULL. */
struct td_watcher *td_watch_first(struct rb_root *root, u64 key)
{
	struct rb_node *n = root->rb_node, *first = NULL;

	while (n) {
		struct td_watcher *w = rb_entry(n, struct td_watcher, node);

		if (w->key >= key) {
			if (w->key == key)
				first = n;
			n = n->rb_left;
		} else {
			n = n->rb_right;
		}
	}
	return first ? rb_entry(first, struct td_watcher, node) : NULL;
}

/* The next watcher of @w's key, or NULL. */
struct td_watcher *td_watch_next(struct td_watcher *w)
{
	struct rb_node *n = rb_next(&w->node);
	struct td_watcher *next = n ? rb_entry(n, struct td_watcher, node) : NULL;

	return next && next->key == w->key ? next : NULL;
}
