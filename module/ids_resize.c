// SPDX-License-Identifier: GPL-2.0
/*
 * The size of the pending set's id hash (ids.c), which follows the tasks held:
 * grown before the acceptor drains a backlog, resized after, and grown at
 * once by any other drain of a burst.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "ids.h"
#include "internal.h"
#include "pending.h"
#include "submit.h"

/* About how many tasks (not items) wait in the input lists, for the id hash. */
static unsigned int td_input_backlog(struct tdispatch *d)
{
	u64 n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += td_input_backlog_cpu(per_cpu_ptr(d->input, cpu));
	return min_t(u64, n, UINT_MAX);
}

/*
 * The id hash follows the tasks held: buckets of 1 << @bits are allocated
 * outside the lock, charged as the dispatcher is, filled under it, and the
 * old ones freed outside it again (or, growing at once for a burst, all
 * under it).  A failed allocation only leaves the chains longer.
 */
static struct tdispatch_task **td_ids_alloc(struct tdispatch *d, unsigned int bits, gfp_t gfp)
{
	struct mem_cgroup *old = set_active_memcg(d->memcg);
	struct tdispatch_task **nb;

	nb = kvcalloc(1U << bits, sizeof(*nb), gfp | __GFP_ACCOUNT | __GFP_NOWARN);
	set_active_memcg(old);
	return nb;
}

void td_resize_ids(struct tdispatch *d, unsigned int bits)
{
	struct tdispatch_task **nb = NULL;

	if (bits > TD_IDS_MIN_BITS) {
		nb = td_ids_alloc(d, bits, GFP_KERNEL | __GFP_RETRY_MAYFAIL);
		if (!nb)
			return;
	}
	mutex_lock(&d->lock);
	nb = td_ids_move(&d->pending.ids, nb, bits);
	mutex_unlock(&d->lock);
	kvfree(nb);
}

/*
 * The size the id hash wants once @incoming more tasks are drained.  A
 * backlog may be many tasks of a few ids, which coalesce; the set holds
 * at most max_buffer pending tasks however many come, so no more count.
 */
static unsigned int td_ids_bits_for(struct td_pending *p, unsigned int incoming)
{
	return td_ids_bits(&p->ids, p->ids.nr + min(incoming, p->max_buffer));
}

/*
 * @nr more tasks are coming, enough to load the id hash past four a bucket
 * (a burst of up to max_input from a CPU, between two of the acceptor's
 * resizes): grow it now, under the lock, without sleeping or reclaiming.
 */
void td_grow_ids_now(struct tdispatch *d, unsigned int nr)
{
	struct td_pending *p = &d->pending;
	unsigned int bits = td_ids_bits_for(p, nr);
	struct tdispatch_task **nb;

	lockdep_assert_held(&d->lock);
	if (bits <= p->ids.bits + 2)
		return;
	nb = td_ids_alloc(d, bits, GFP_NOWAIT);
	if (nb)
		kvfree(td_ids_move(&p->ids, nb, bits));
}

/*
 * Before a drain, grow the id hash for the input that waits, with the
 * allocation outside the lock, so that the drain does not walk chains
 * that stay long until the resize after it.  Read without the lock, the
 * sizes are a guess: any size is correct, and that resize mends a bad one.
 * Return the size wanted, below which that resize must not shrink the
 * hash: a backlog of a few ids would have it grown again at each pass.
 */
unsigned int td_presize_ids(struct tdispatch *d)
{
	struct td_pending *p = &d->pending;
	/* Racy reads of the hash's size and the bound, a guess as said above. */
	unsigned int bits = data_race(td_ids_bits_for(p, td_input_backlog(d)));

	/* Racy: another drainer may grow it at once meanwhile, as said above. */
	if (bits > data_race(p->ids.bits))
		td_resize_ids(d, bits);
	return bits;
}
