/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A file's merge table (merge.c).
 */
#ifndef _TDISPATCH_MERGE_H
#define _TDISPATCH_MERGE_H

#include <linux/list_bl.h>
#include <linux/siphash.h>
#include <linux/types.h>

struct td_file_task;
struct td_vec;

/*
 * A file's merge table (merge.c): the tasks whose payload a submission
 * with %TDISPATCH_TASK_MERGE may replace, one an id, by ->x.task.id.
 */
struct td_merge {
	struct hlist_bl_head *heads;	/* 1 << bits; NULL until the first merge */
	unsigned int bits;
	hsiphash_key_t key;
};

void td_merge_init(struct td_merge *m, unsigned int held);
void td_merge_free(struct td_merge *m);
int td_merge_prepare(struct td_merge *m, struct td_vec *v);
struct hlist_bl_head *td_merge_lock(struct td_merge *m, u64 id) __acquires(bitlock);
struct td_file_task *td_merge_find(struct hlist_bl_head *b, u64 id);
void td_merge_add(struct hlist_bl_head *b, struct td_file_task *ft);
void td_merge_del(struct td_file_task *ft);
bool td_merge_out(struct td_file_task *ft);
void td_merge_forget(struct td_merge *m, struct td_file_task *ft);

#endif /* _TDISPATCH_MERGE_H */
