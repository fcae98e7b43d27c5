/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An open /dev/tdispatch file (chardev.c), the calls its own and attached
 * dispatchers share (ioctl.c), and the entry points of the two kinds
 * (user.c, named.c).
 */
#ifndef _TDISPATCH_FILE_H
#define _TDISPATCH_FILE_H

#include <linux/fs.h>
#include <linux/gfp.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/srcu.h>
#include <linux/tdispatch.h>
#include <linux/types.h>
#include <linux/wait.h>

struct cred;
struct mem_cgroup;
struct tdispatch;
struct td_attach;
struct td_user;
struct td_vec;
struct tdispatch_submit_task;
struct vm_area_struct;

/* One per open /dev/tdispatch file: it owns a dispatcher or attaches to one. */
struct td_file {
	struct mutex lock;		/* ->user and ->attach are set once, under it */
	struct td_user *user;
	struct td_attach *attach;
	struct mem_cgroup *memcg;	/* the opener's, charged for all it holds */
	/* Per file, so that poll() before CREATE or ATTACH hears it. */
	wait_queue_head_t wait;
	atomic_long_t rejected_calls;
};

#define TD_USER_MAX_EVENTS	65536U
/*
 * What the engine and a file's calls allocate on a caller's behalf:
 * charged to its memory cgroup, and at the cgroup's limit an errno for the
 * caller, not the OOM killer.
 */
#define TD_GFP_USER		(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

int td_copy_in(void *karg, size_t ksize, const void __user *uarg);
int td_copy_out(void __user *uarg, const void *karg, size_t ksize);
int td_submit_vector(void __user *uarg,
		     int (*submit_one)(void *ctx, struct tdispatch_submit_task *ut, u32 flags,
				       struct td_vec *v),
		     void *ctx);
ktime_t td_not_before(const struct tdispatch_submit_task *ut, u32 flags);
int td_copy_id(void __user *uarg, u64 *id);
/*
 * The dispatcher a shared call works on: a file's own, which lives as long
 * as the file, or a published one (@published), which may be withdrawn at any
 * time and is reached only between td_ctx_enter() and td_ctx_exit(), never
 * across user memory.
 */
struct td_ctx {
	struct tdispatch *d;
	struct tdispatch __rcu **published;	/* td_published_srcu */
};

extern struct srcu_struct td_published_srcu;

struct tdispatch *td_ctx_enter(const struct td_ctx *c, int *idx);
void td_ctx_exit(const struct td_ctx *c, int idx);
int td_ioctl_by_id(const struct td_ctx *c, void __user *uarg,
		   int (*op)(struct tdispatch *d, u64 id));
int td_ioctl_query(const struct td_ctx *c, void __user *uarg);
int td_ioctl_expedite_key(const struct td_ctx *c, void __user *uarg);
/* What a file counts of its own, beside its dispatcher's counters. */
struct td_file_counts {
	u64 rejected;		/* tasks refused before the engine saw them */
	u64 rejected_calls;
	u64 events_lost;
	u64 slot_writes;
};

int td_ioctl_stats(const struct td_ctx *c, void __user *uarg, const struct td_file_counts *fc);

int td_user_create(struct td_file *f, const struct file *file, void __user *uarg);
int td_user_mmap(struct td_user *u, struct vm_area_struct *vma);
long td_user_ioctl(struct td_file *f, struct td_user *u, struct file *file,
		   unsigned int cmd, void __user *uarg);
ssize_t td_user_read(struct td_user *u, struct file *file, char __user *buf, size_t len);
__poll_t td_user_poll(struct td_user *u);
void td_user_flush(struct td_user *u, fl_owner_t id);
void td_user_release(struct td_user *u);

int td_named_list(void __user *uarg, const struct cred *cred);
int td_named_attach(struct td_file *f, const struct file *file, void __user *uarg);
long td_named_ioctl(struct td_file *f, struct td_attach *a, unsigned int cmd,
		    void __user *uarg);
ssize_t td_named_read(struct td_attach *a, struct file *file, char __user *buf, size_t len);
__poll_t td_named_poll(struct td_attach *a);
void td_named_release(struct td_attach *a);

#if IS_ENABLED(CONFIG_TDISPATCH_USER)
int td_chardev_init(void);
void td_chardev_exit(void);
#else
static inline int td_chardev_init(void) { return 0; }
static inline void td_chardev_exit(void) { }
#endif

#endif /* _TDISPATCH_FILE_H */
