/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Merge tables (merge.c): a file's, and a kernel dispatcher's.
 */
#ifndef _TDISPATCH_MERGE_H
#define _TDISPATCH_MERGE_H

#include <linux/list_bl.h>
#include <linux/siphash.h>
#include <linux/tdispatch.h>
#include <linux/types.h>

struct tdispatch;
struct tdispatch_batch;
struct tdispatch_config;
struct tdispatch_task;

/*
 * A merge table (merge.c): the tasks whose payload a submission with
 * %TDISPATCH_TASK_MERGE (a file's) or tdispatch_submit_merge() (a kernel
 * dispatcher's) may replace, one an id.
 */
struct td_merge {
	struct hlist_bl_head *heads;	/* 1 << bits; a file's NULL until its first merge */
	unsigned int bits;
	hsiphash_key_t key;
};

/* A task's place in a merge table, by its id, in the bucket @head. */
struct td_merge_node {
	struct hlist_bl_node node;
	u64 id;
	struct hlist_bl_head *head;
};

/* A task of tdispatch_submit_merge() (%TD_TASK_MERGE_NODE). */
struct td_merge_task {
	struct tdispatch_task task;
	struct td_merge_node merge;
};

static inline struct td_merge_task *td_merge_task(struct tdispatch_task *t)
{
	return container_of(t, struct td_merge_task, task);
}

unsigned int td_merge_held(const struct tdispatch_config *cfg);
void td_merge_init(struct td_merge *m, unsigned int held);
void td_merge_free(struct td_merge *m);
int td_merge_alloc(struct td_merge *m, gfp_t gfp);
struct hlist_bl_head *td_merge_lock(struct td_merge *m, u64 id) __acquires(bitlock);
struct td_merge_node *td_merge_find(struct hlist_bl_head *b, u64 id);
void td_merge_add(struct hlist_bl_head *b, struct td_merge_node *n, u64 id);
void td_merge_del(struct td_merge_node *n);
bool td_merge_out(struct td_merge_node *n);
void td_merge_forget(struct td_merge_node *n);
void td_merge_drop_id(struct td_merge *m, u64 id);
void td_merge_task_end(struct tdispatch_task *t);
void td_merge_batch_close(struct tdispatch_batch *b);
void td_merge_forget_id(struct tdispatch *d, u64 id);

#endif /* _TDISPATCH_MERGE_H */
