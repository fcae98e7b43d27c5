/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pending set's id hash (ids.c) and the acceptor's sizing of it
 * (ids_resize.c).
 */
#ifndef _TDISPATCH_IDS_H
#define _TDISPATCH_IDS_H

#include <linux/siphash.h>
#include <linux/types.h>

struct tdispatch;
struct tdispatch_task;

#define TD_IDS_MIN_BITS		4
#define TD_IDS_MAX_BITS		22

/*
 * A bucket is a chain of ->hnext, one pointer a task.  Keyed: ids come
 * from users, who must not be able to fill one bucket.
 */
struct td_ids {
	struct tdispatch_task **bucket;
	unsigned int bits;
	unsigned int nr;
	hsiphash_key_t key;
	u64 last_id;			/* td_ids_bucket()'s last, and its hash */
	u32 last_hash;
	struct tdispatch_task *first[1U << TD_IDS_MIN_BITS];	/* until it grows */
};

void td_ids_init(struct td_ids *h);
void td_ids_free(struct td_ids *h);
struct tdispatch_task *td_ids_chain(struct td_ids *h, u64 id);
void td_ids_link(struct td_ids *h, struct tdispatch_task *t);
void td_ids_unlink(struct td_ids *h, struct tdispatch_task *t);
void td_ids_replace(struct td_ids *h, struct tdispatch_task *old, struct tdispatch_task *t);
unsigned int td_ids_bits(struct td_ids *h, unsigned int nr);
struct tdispatch_task **td_ids_move(struct td_ids *h, struct tdispatch_task **nb,
				    unsigned int bits);

/* ids_resize.c */
void td_grow_ids_now(struct tdispatch *d, unsigned int nr);
unsigned int td_presize_ids(struct tdispatch *d);
void td_resize_ids(struct tdispatch *d, unsigned int bits);

#endif /* _TDISPATCH_IDS_H */
