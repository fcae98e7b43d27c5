/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A dispatcher owned by an open /dev/tdispatch file: the file's side of it,
 * shared by the units that make it up.  user.c creates it and takes its
 * ioctls; upayload.c holds the tasks' payloads; lease.c hands batches to
 * userspace workers (TAKE, COMPLETE); umerge.c merges submissions into the
 * waiting task of their id; uslots.c makes tasks of shared slots.
 */
#ifndef _TDISPATCH_USER_H
#define _TDISPATCH_USER_H

#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <uapi/linux/tdispatch.h>

#include "events.h"
#include "file.h"
#include "limits.h"
#include "merge.h"
#include "pending.h"
#include "watch.h"

struct tdispatch;
struct td_lease;
struct td_uslots;
struct td_vec;

#define TD_USER_MAX_BUFFER	65536U
#define TD_USER_MAX_BATCH	1024U
#define TD_USER_MAX_BYTES	(16U << 20)	/* task bytes held per dispatcher */
#define TD_USER_MAX_DELAYED	SZ_1M
#define TD_LEASE_MIN_NS		NSEC_PER_MSEC
/*
 * A task of up to TD_FILE_TASK_SMALL payload bytes is allocated at that size
 * and, when it ends, kept for the next SUBMIT, up to TD_USER_MAX_SPARE of
 * them per dispatcher (228 bytes each on 64-bit, from kmalloc-256: at most
 * 256 KiB, charged to the memory cgroup that allocated them, beside
 * TD_USER_MAX_BYTES).
 */
#define TD_FILE_TASK_SMALL		64U
#define TD_USER_MAX_SPARE	1024

/* A merge replaces a payload where it is: every small task has the room. */
static_assert(TD_FILE_TASK_SMALL == TDISPATCH_MERGE_PAYLOAD_MAX);
/* A slot's payload is read through the bounce buffer of a small one. */
static_assert(TDISPATCH_SLOT_PAYLOAD_MAX <= TD_FILE_TASK_SMALL);

/* The engine's owner bits, for a task SUBMIT made: see below. */
#define TD_TASK_MERGE		TD_TASK_OWNER0	/* in the merge table: merge.c */
#define TD_TASK_SLOT		TD_TASK_OWNER1	/* its payload a shared slot's */

struct td_payload {
	u32 len;
	u32 held;	/* bytes counted against the bound, given back at free */
	u8 data[];
};

/*
 * A task SUBMIT made, with its deadline, not-before time and key (struct
 * td_task_ext) and its payload in the same allocation: the engine frees
 * nothing of it (%TD_TASK_OWNED), td_user_task_release() frees it
 * all.  A periodic registration's payload is one too, its task unused.
 * One submitted with %TDISPATCH_TASK_MERGE (%TD_TASK_MERGE) is in the
 * file's merge table until its payload is taken, a submission of its id
 * without the flag comes, or it ends; while a TAKE copies its payload out
 * (->taking, under its bucket's lock) merges make a task of their own.
 */
struct td_file_task {
	struct td_task_ext x;
	struct td_merge_node merge;	/* in the merge table: merge.c */
	bool taking;
	struct td_payload p;
};

/*
 * The payload of a task of a shared slot (%TD_TASK_SLOT), which KICK made:
 * its slot, the sequence count a TAKE copied it out at, and whether a TAKE
 * that succeeded read it.
 */
struct td_slot_ref {
	u32 index;
	u32 seq;
	bool read;
};

struct td_user {
	struct tdispatch *d;
	struct td_ctx ctx;		/* for the calls ioctl.c shares */
	struct td_charge charge;	/* against max_user_dispatchers */
	struct td_charge events_charge;	/* against max_user_observers */
	u64 lease_ns;
	struct mutex lock;		/* leases, events */
	struct list_head ready;
	struct list_head copying;
	struct list_head taken;
	u64 next_lease;
	bool closing;
	wait_queue_head_t *wait;	/* the file's: readers and pollers */
	wait_queue_head_t take_wait;	/* TAKE callers, one woken per ready batch */
	struct td_lease *leases;	/* one per engine worker: lease.c */
	atomic_long_t bytes;		/* payload bytes held */
	atomic_long_t rejected;		/* tasks refused before the engine saw them */
	atomic64_t slot_writes;		/* by the slots' own counts: see td_slot_count() */
	/*
	 * Small tasks that ended, for td_file_task_get() to reuse: a task is
	 * allocated on the submitter's CPU and freed on a worker's, where
	 * SLUB keeps the freed objects' slabs, so the submitter's CPU kept
	 * taking fresh slabs (and shuffling each one's free list).  Put from
	 * any context, taken under ->spare_lock.
	 */
	struct llist_head spare;
	spinlock_t spare_lock;		/* serialises takers of ->spare */
	atomic_t nr_spare;		/* >= the nodes on ->spare */
	struct td_merge merge;
	struct td_uslots *slots;	/* set once by SLOTS */
	/* KICKs the kernel owes: see td_slot_read(). */
	struct delayed_work kick_retry;
	unsigned long kick_backoff;	/* jiffies; under the work's own serialisation */
	bool has_events;
	struct td_events events;
};

/*
 * What a task of @len payload bytes holds: the bound counts all of it,
 * its watch key too (freed earlier than the task, so counted to the end).
 */
static inline size_t td_task_bytes(u32 len, bool watch)
{
	return sizeof(struct td_file_task) + len + (watch ? sizeof(struct td_watcher) : 0);
}

/* upayload.c */
struct td_file_task *td_file_task_get(struct td_user *u, u32 len, bool watch, struct td_vec *v);
struct td_file_task *td_file_task_new(struct td_user *u, u64 uptr, u32 len, bool watch,
				      struct td_vec *v);
void td_payload_free(struct td_user *u, struct td_payload *p);

/* lease.c */
enum tdispatch_result td_user_process(struct tdispatch *d, struct tdispatch_batch *b);
int td_ioctl_take(struct td_user *u, struct file *file, void __user *uarg);
int td_ioctl_complete(struct td_user *u, void __user *uarg);
void td_user_abandon(struct td_user *u, fl_owner_t owner, bool all);
int td_leases_init(struct td_user *u);
void td_leases_stop(struct td_user *u);

/* umerge.c */
int td_submit_merge(struct td_user *u, const struct tdispatch_submit_task *ut, struct td_vec *v);
int td_submit_unmerged(struct td_user *u, struct td_file_task *task, u64 id,
		       const struct tdispatch_submit_opts *o, struct td_watcher *w,
		       u8 flags, struct td_vec *v);

/* uslots.c */
void td_slot_forget(struct td_user *u, struct td_slot_ref *r);
void td_slot_read(struct td_user *u, struct td_slot_ref *r, struct td_vec *v);
int td_ioctl_slots(struct td_user *u, void __user *uarg);
int td_ioctl_kick(struct td_user *u);
void td_kick_retry(struct work_struct *work);

#endif /* _TDISPATCH_USER_H */
