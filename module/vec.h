/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tasks of one SUBMIT vector share (submit.c), the user copies
 * that pay what it owes before they may sleep, and the payment by a caller
 * that may sleep (worker.c).
 */
#ifndef _TDISPATCH_VEC_H
#define _TDISPATCH_VEC_H

#include <linux/ktime.h>
#include <linux/tdispatch.h>
#include <linux/types.h>
#include <linux/uaccess.h>

struct tdispatch;
struct td_watcher;

/*
 * What the tasks of one SUBMIT vector share: a clock reading (0 until the
 * first reads it) and a wake-up of @wake's acceptor owed since the last
 * td_vec_flush(), which comes every TD_VEC_FLUSH tasks.  The acceptor
 * wakes once for them, not on and off as they arrive.
 */
struct td_vec {
	ktime_t now;
	struct tdispatch *wake;
};

#define TD_VEC_FLUSH		32

int td_submit_task(struct tdispatch *d, struct tdispatch_task *t, u64 id, void *payload,
		   const struct tdispatch_submit_opts *o, struct td_watcher *w, u8 flags,
		   struct td_vec *v);
void td_vec_flush(struct td_vec *v);
void td_vec_flush_here(struct td_vec *v);
void *td_vec_kmalloc(struct td_vec *v, size_t size, gfp_t gfp);

int td_submit_merged(struct tdispatch *d);

/* Whether @v holds a wake-up or a clock reading that a sleep must not hold. */
static inline bool td_vec_owes(const struct td_vec *v)
{
	return v && (v->wake || v->now);
}

/*
 * The user copies of a vector's tasks, which may sleep on a page fault:
 * tried first with page faults off, and only when that fails, after what
 * @v owes is paid (td_vec_flush_here(): the caller may sleep and holds
 * nothing).  A submitter that sleeps (a page being read in, or held back
 * on purpose with userfaultfd) must not hold back the acceptor's wake-up
 * that other tasks on its CPU's list wait for, nor a clock reading that
 * ages while it sleeps; and a batch for a free worker of a dispatcher that
 * lends its batches is leased by the call here as at its end.  Inline, so
 * that a copy of a size known at build time skips the hardened usercopy
 * check of its object.
 */
static __always_inline int td_vec_copy_from_user(struct td_vec *v, void *to,
						 const void __user *from, size_t n)
{
	unsigned long left;

	if (td_vec_owes(v)) {
		pagefault_disable();
		left = copy_from_user(to, from, n);
		pagefault_enable();
		if (!left)
			return 0;
		td_vec_flush_here(v);
	}
	return copy_from_user(to, from, n) ? -EFAULT : 0;
}

static inline int td_vec_put_user(struct td_vec *v, s32 x, s32 __user *to)
{
	int ret;

	if (td_vec_owes(v)) {
		pagefault_disable();
		ret = put_user(x, to);
		pagefault_enable();
		if (!ret)
			return 0;
		td_vec_flush_here(v);
	}
	return put_user(x, to);
}

#endif /* _TDISPATCH_VEC_H */
