// SPDX-License-Identifier: GPL-2.0
/*
 * The pending set's id hash: every task the set holds, chained by ->hnext
 * in a bucket chosen by a keyed hash of its id.  Nothing here locks,
 * allocates or reads a clock; ids_resize.c decides its size.
 */
#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/random.h>
#include <linux/string.h>
#include <linux/tdispatch.h>

#include "ids.h"

void td_ids_init(struct td_ids *h)
{
	memset(h, 0, sizeof(*h));
	h->bucket = h->first;
	h->bits = TD_IDS_MIN_BITS;
	get_random_bytes(&h->key, sizeof(h->key));
	h->last_hash = hsiphash_2u32(0, 0, &h->key);
}
EXPORT_SYMBOL_IF_KUNIT(td_ids_init);

/* Free the buckets if they were allocated; the hash holds no task. */
void td_ids_free(struct td_ids *h)
{
	if (h->bucket != h->first)
		kvfree(h->bucket);
}
EXPORT_SYMBOL_IF_KUNIT(td_ids_free);

/*
 * One step on an id looks it up and links or unlinks it, so the last
 * id's hash is kept (it does not depend on the size).
 */
static struct tdispatch_task **td_ids_bucket(struct td_ids *h, u64 id)
{
	if (id != h->last_id) {
		h->last_id = id;
		h->last_hash = hsiphash_2u32(id, id >> 32, &h->key);
	}
	return &h->bucket[h->last_hash & ((1U << h->bits) - 1)];
}

void td_ids_link(struct td_ids *h, struct tdispatch_task *t)
{
	struct tdispatch_task **b = td_ids_bucket(h, t->id);

	t->hnext = *b;
	*b = t;
	h->nr++;
}
EXPORT_SYMBOL_IF_KUNIT(td_ids_link);

/* The pointer that leads to @t, which must be in @h. */
static struct tdispatch_task **td_ids_link_to(struct td_ids *h, struct tdispatch_task *t)
{
	struct tdispatch_task **pp = td_ids_bucket(h, t->id);

	while (*pp != t) {
		if (WARN_ON_ONCE(!*pp))
			return NULL;
		pp = &(*pp)->hnext;
	}
	return pp;
}

void td_ids_unlink(struct td_ids *h, struct tdispatch_task *t)
{
	struct tdispatch_task **pp = td_ids_link_to(h, t);

	if (pp) {
		*pp = t->hnext;
		h->nr--;
	}
}
EXPORT_SYMBOL_IF_KUNIT(td_ids_unlink);

/* @t, of @old's id, takes @old's place in the hash. */
void td_ids_replace(struct td_ids *h, struct tdispatch_task *old, struct tdispatch_task *t)
{
	struct tdispatch_task **pp = td_ids_link_to(h, old);

	if (pp) {
		t->hnext = old->hnext;
		*pp = t;
	}
}
EXPORT_SYMBOL_IF_KUNIT(td_ids_replace);

/* The first task in @id's chain; follow ->hnext for the rest. */
struct tdispatch_task *td_ids_chain(struct td_ids *h, u64 id)
{
	return *td_ids_bucket(h, id);
}
EXPORT_SYMBOL_IF_KUNIT(td_ids_chain);

/**
 * td_ids_bits() - the size an id hash should have
 * @h: the id hash
 * @nr: for how many tasks
 *
 * Past two tasks a bucket on average, as many buckets as tasks (rounded up
 * to a power of two); below one task in four buckets, as many again.
 *
 * Return: log2 of the number of buckets wanted; the current one if the
 * hash is fine as it is.
 */
unsigned int td_ids_bits(struct td_ids *h, unsigned int nr)
{
	if (nr > 2U << h->bits || nr < (1U << h->bits) / 4)
		return clamp_t(unsigned int, order_base_2(nr), TD_IDS_MIN_BITS,
			       TD_IDS_MAX_BITS);
	return h->bits;
}
EXPORT_SYMBOL_IF_KUNIT(td_ids_bits);

/**
 * td_ids_move() - move an id hash into new buckets
 * @h: the id hash
 * @nb: 1 << @bits zeroed buckets, allocated with kvmalloc(); NULL for the
 *	hash's own few, when @bits is TD_IDS_MIN_BITS
 * @bits: log2 of their number
 *
 * Any size is correct, td_ids_bits() says which is fast.  Each task
 * moves once, so the cost is constant per task over time, but paid at
 * once, under the caller's lock.
 *
 * Return: the old buckets, for the caller to kvfree() once it has dropped
 * its lock (NULL if they were the hash's own).
 */
struct tdispatch_task **td_ids_move(struct td_ids *h, struct tdispatch_task **nb,
				    unsigned int bits)
{
	struct tdispatch_task **old = h->bucket, *t, *next;
	unsigned int i, nr = 1U << h->bits;

	if (!nb) {
		if (WARN_ON_ONCE(bits != TD_IDS_MIN_BITS) || old == h->first)
			return NULL;
		/* Unused while the hash was bigger: stale. */
		nb = h->first;
		memset(nb, 0, sizeof(h->first));
	}
	h->bucket = nb;
	h->bits = bits;
	for (i = 0; i < nr; i++) {
		for (t = old[i]; t; t = next) {
			struct tdispatch_task **b = td_ids_bucket(h, t->id);

			next = t->hnext;
			t->hnext = *b;
			*b = t;
		}
	}
	return old == h->first ? NULL : old;
}
EXPORT_SYMBOL_IF_KUNIT(td_ids_move);
