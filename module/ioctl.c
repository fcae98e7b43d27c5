// SPDX-License-Identifier: GPL-2.0
/*
 * The parts of /dev/tdispatch's calls that a file's own dispatcher
 * (user.c) and a published one (named.c) share: the copy-in rules of
 * growing structs, the submit vector, and the calls that only read or
 * cancel.  None of them holds a lock across user memory: each copies in,
 * reaches the dispatcher between td_ctx_enter() and td_ctx_exit(), and
 * copies out after.
 */
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/uaccess.h>

#include <uapi/linux/tdispatch.h>

#include "core.h"
#include "dispatch.h"
#include "file.h"
#include "stats.h"
#include "vec.h"

/*
 * The sizes of version 1.0, the smallest the kernel takes: a struct that
 * grows keeps its 1.0 fields, and td_copy_in() then takes its 1.0 size
 * (offsetofend() of its last 1.0 field) as the smallest.
 */
static_assert(sizeof(struct tdispatch_version) == 32);
static_assert(sizeof(struct tdispatch_create) == 104);
static_assert(sizeof(struct tdispatch_submit) == 32);
static_assert(sizeof(struct tdispatch_submit_task) == 56);
static_assert(sizeof(struct tdispatch_take) == 56);
static_assert(sizeof(struct tdispatch_lease_task) == 32);
static_assert(sizeof(struct tdispatch_complete) == 40);
static_assert(sizeof(struct tdispatch_task_result) == 16);
static_assert(sizeof(struct tdispatch_id) == 16);
static_assert(sizeof(struct tdispatch_rate) == 16);
static_assert(sizeof(struct tdispatch_query) == 32);
static_assert(sizeof(struct tdispatch_stats_user) == 216);
static_assert(sizeof(struct tdispatch_periodic_add) == 48);
static_assert(sizeof(struct tdispatch_periodic_stats_user) == 64);
static_assert(sizeof(struct tdispatch_event) == 48);
static_assert(sizeof(struct tdispatch_list) == 24);
static_assert(sizeof(struct tdispatch_entry) == 40);
static_assert(sizeof(struct tdispatch_attach) == 40);
static_assert(sizeof(struct tdispatch_slot) == 64);
static_assert(sizeof(struct tdispatch_slots) == 40);

/* Calls on published dispatchers; named.c's withdrawal waits for them. */
DEFINE_SRCU(td_published_srcu);

/*
 * The call's dispatcher, or NULL once a published one was withdrawn; exit
 * with td_ctx_exit().  A file's own lives as long as the file and takes no
 * section, so that its calls never hold up a driver's unpublish.
 */
struct tdispatch *td_ctx_enter(const struct td_ctx *c, int *idx)
	__acquires(&td_published_srcu)
{
	if (c->d) {
		__acquire(&td_published_srcu);
		return c->d;
	}
	*idx = srcu_read_lock(&td_published_srcu);
	return srcu_dereference(*c->published, &td_published_srcu);
}

void td_ctx_exit(const struct td_ctx *c, int idx)
	__releases(&td_published_srcu)
{
	if (c->d)
		__release(&td_published_srcu);
	else
		srcu_read_unlock(&td_published_srcu, idx);
}

/*
 * Copy a growing struct in: at least its 1.0 size (today's, @ksize), at
 * most a page, and any bytes beyond what we know must be zero (E2BIG
 * otherwise).
 */
int td_copy_in(void *karg, size_t ksize, const void __user *uarg)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < ksize)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	return copy_struct_from_user(karg, ksize, uarg, usize);
}

/* Copy the kernel's view out, no more than the caller's struct holds. */
int td_copy_out(void __user *uarg, const void *karg, size_t ksize)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (copy_to_user(uarg, karg, min_t(size_t, usize, ksize)))
		return -EFAULT;
	return 0;
}

/* When a user task may start: absolute, relative to now, or at once (0). */
ktime_t td_not_before(const struct tdispatch_submit_task *ut, u32 flags)
{
	if (!ut->not_before_ns || !(flags & TDISPATCH_SUBMIT_RELATIVE))
		return ut->not_before_ns;
	return ktime_add_ns(ktime_get(), min_t(u64, ut->not_before_ns, KTIME_MAX / 2));
}

/*
 * SUBMIT: a status per task; tasks before a bad element stay accepted.  The
 * tasks of a vector share a clock reading and one wake-up of the acceptor
 * per %TD_VEC_FLUSH, paid before anything that may sleep: see
 * td_vec_copy_from_user().
 */
int td_submit_vector(void __user *uarg,
		     int (*submit_one)(void *ctx, struct tdispatch_submit_task *ut, u32 flags,
				       struct td_vec *v),
		     void *ctx)
{
	struct td_vec v = { };
	struct tdispatch_submit s;
	u8 __user *next;
	u32 i, stride;
	int ret;

	ret = td_copy_in(&s, sizeof(s), uarg);
	if (ret)
		return ret;
	if ((s.flags & ~TDISPATCH_SUBMIT_RELATIVE) || s.pad ||
	    !s.count || s.count > TDISPATCH_SUBMIT_MAX)
		return -EINVAL;
	/* The elements grow as the arguments do. */
	stride = s.task_size;
	if (stride < sizeof(struct tdispatch_submit_task))
		return -EINVAL;
	if (stride > PAGE_SIZE)
		return -E2BIG;
	next = u64_to_user_ptr(s.tasks);
	s.accepted = 0;
	for (i = 0; i < s.count; i++, next += stride) {
		struct tdispatch_submit_task ut;

		/*
		 * The usual stride spelt as a constant: a copy of a size known
		 * at build time skips the hardened usercopy check of its object.
		 */
		if (stride == sizeof(ut)) {
			ret = td_vec_copy_from_user(&v, &ut, next, sizeof(ut));
		} else {
			/* As td_vec_copy_from_user(): its tail's check may fault too. */
			ret = -EFAULT;
			if (td_vec_owes(&v)) {
				pagefault_disable();
				ret = copy_struct_from_user(&ut, sizeof(ut), next, stride);
				pagefault_enable();
			}
			if (ret == -EFAULT) {
				td_vec_flush_here(&v);
				ret = copy_struct_from_user(&ut, sizeof(ut), next, stride);
			}
		}
		if (ret)
			goto out;
		ut.status = submit_one(ctx, &ut, s.flags, &v);
		if (i % TD_VEC_FLUSH == TD_VEC_FLUSH - 1)
			td_vec_flush(&v);
		if (td_vec_put_user(&v, ut.status, (s32 __user *)(next +
				offsetof(struct tdispatch_submit_task, status)))) {
			ret = -EFAULT;
			goto out;
		}
		s.accepted += !ut.status;
	}
	/* Paid before the copy out, which may sleep. */
	td_vec_flush_here(&v);
	ret = td_copy_out(uarg, &s, sizeof(s));
out:
	td_vec_flush_here(&v);
	return ret;
}

/* An allocation for a vector's task: as td_vec_copy_from_user(), no sleep while @v owes. */
void *td_vec_kmalloc(struct td_vec *v, size_t size, gfp_t gfp)
{
	void *p;

	if (td_vec_owes(v)) {
		p = kmalloc(size, GFP_NOWAIT | (gfp & __GFP_ACCOUNT) | __GFP_NOWARN);
		if (p)
			return p;
		td_vec_flush_here(v);
	}
	return kmalloc(size, gfp);
}

/* The argument of the calls that name one id: CANCEL, EXPEDITE, EXPEDITE_KEY, PERIODIC_DEL. */
int td_copy_id(void __user *uarg, u64 *id)
{
	struct tdispatch_id a;
	int ret;

	ret = td_copy_in(&a, sizeof(a), uarg);
	if (ret)
		return ret;
	if (a.flags)
		return -EINVAL;
	*id = a.id;
	return 0;
}

/* CANCEL, EXPEDITE, EXPEDITE_KEY: @op on the id (or key) the call names. */
int td_ioctl_by_id(const struct td_ctx *c, void __user *uarg,
		   int (*op)(struct tdispatch *d, u64 id))
{
	struct tdispatch *d;
	int idx, ret;
	u64 id;

	ret = td_copy_id(uarg, &id);
	if (ret)
		return ret;
	d = td_ctx_enter(c, &idx);
	ret = d ? op(d, id) : -ENODEV;
	td_ctx_exit(c, idx);
	return ret;
}

/*
 * EXPEDITE_KEY: tdispatch_expedite_key() a chunk at a time, each in a read
 * section of its own, so that a withdrawal waits for one chunk, not for a
 * key that millions of tasks watch.  It stops at a fatal signal, or when
 * the dispatcher is withdrawn, with what it let in so far.
 */
int td_ioctl_expedite_key(const struct td_ctx *c, void __user *uarg)
{
	struct td_key_expedite kr = { };
	struct tdispatch *d, *first;
	int idx, ret;
	bool more;
	u64 key;

	ret = td_copy_id(uarg, &key);
	if (ret)
		return ret;
	first = td_ctx_enter(c, &idx);
	more = first && td_expedite_key_chunk(first, key, &kr);
	td_ctx_exit(c, idx);
	if (!first)
		return -ENODEV;
	while (more && !fatal_signal_pending(current)) {
		cond_resched();
		/* The same one, or withdrawn: the pointer is only compared. */
		d = td_ctx_enter(c, &idx);
		more = d == first && td_expedite_key_chunk(d, key, &kr);
		td_ctx_exit(c, idx);
	}
	return kr.total ?: -ENOENT;
}

int td_ioctl_query(const struct td_ctx *c, void __user *uarg)
{
	struct tdispatch_query q;
	struct tdispatch *d;
	int idx, ret;

	ret = td_copy_in(&q, sizeof(q), uarg);
	if (ret)
		return ret;
	if (q.flags || q.delayed)
		return -EINVAL;
	d = td_ctx_enter(c, &idx);
	if (d)
		td_query(d, q.id, &q.state, &q.attempts, &q.waiting, &q.delayed);
	td_ctx_exit(c, idx);
	return d ? td_copy_out(uarg, &q, sizeof(q)) : -ENODEV;
}

/* The dispatcher's counters, and the file's own @fc. */
int td_ioctl_stats(const struct td_ctx *c, void __user *uarg, const struct td_file_counts *fc)
{
	struct tdispatch_stats_user s;
	struct tdispatch_stats st;
	struct tdispatch *d;
	int idx, ret;
	u32 usize;

	ret = td_copy_in(&s, sizeof(s), uarg);
	if (ret)
		return ret;
	if (s.flags)
		return -EINVAL;
	usize = s.size;
	d = td_ctx_enter(c, &idx);
	if (d)
		tdispatch_get_stats(d, &st);
	td_ctx_exit(c, idx);
	if (!d)
		return -ENODEV;
	s = (struct tdispatch_stats_user) {
		/* What the caller gets, not what the kernel knows. */
		.size = min_t(u32, usize, sizeof(s)),
		.accepted = st.accepted,
		.rejected = st.rejected + fc->rejected,
		.queued = st.queued,
		.pending = st.pending,
		.in_flight = st.in_flight,
		.done = st.done,
		.failed = st.failed,
		.overridden = st.overridden,
		.expired = st.expired,
		.dropped = st.dropped,
		.cancelled = st.cancelled,
		.batches = st.batches,
		.retries = st.retries,
		.holdoffs = st.holdoffs,
		.redelivered = st.redelivered,
		.rejected_calls = fc->rejected_calls,
		.events_lost = fc->events_lost,
		.delayed = st.delayed,
		.periodic_runs = st.periodic_runs,
		.exhausted = st.exhausted,
		.expedited = st.expedited,
		.key_expedites = st.key_expedites,
		.throttled_ns = st.throttled_ns,
		.rate = st.rate,
		.burst = st.burst,
		.slot_writes = fc->slot_writes,
	};
	return td_copy_out(uarg, &s, sizeof(s));
}
