// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/tdispatch: the userspace face of the dispatcher.
 *
 * The device is world read-write, like /dev/fuse: opening it grants
 * nothing by itself.  A file either owns a dispatcher it created
 * (user.c) or is attached to one a driver published (named.c); nothing
 * else is reachable through it.  This file routes the calls and holds
 * what both kinds share: the copy-in rules of growing structs and the
 * calls that only read or cancel.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/linux/tdispatch.h>

#include "internal.h"

static_assert(sizeof(struct tdispatch_id) == TDISPATCH_ID_SIZE_VER0);
static_assert(sizeof(struct tdispatch_query) == TDISPATCH_QUERY_SIZE_VER0);
static_assert(sizeof(struct tdispatch_stats_user) == TDISPATCH_STATS_SIZE_VER1);
static_assert(sizeof(struct tdispatch_submit) == TDISPATCH_SUBMIT_SIZE_VER1);
static_assert(sizeof(struct tdispatch_utask) == TDISPATCH_UTASK_SIZE_VER1);

/*
 * Copy a growing struct in: at least @ver0 bytes, at most a page, and any
 * bytes beyond what we know must be zero (E2BIG otherwise).
 */
int td_copy_in(void *karg, size_t ksize, const void __user *uarg, size_t ver0)
{
	u32 usize;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < ver0)
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
ktime_t td_not_before(const struct tdispatch_utask *ut, u32 flags)
{
	if (!ut->not_before_ns || !(flags & TDISPATCH_SUBMIT_RELATIVE))
		return ut->not_before_ns;
	return ktime_add_ns(ktime_get(), min_t(u64, ut->not_before_ns, KTIME_MAX / 2));
}

/* SUBMIT: a status per task; tasks before a bad element stay accepted. */
int td_submit_vector(void __user *uarg,
		     int (*submit_one)(void *ctx, struct tdispatch_utask *ut, u32 flags),
		     void *ctx)
{
	struct tdispatch_submit s;
	u8 __user *next;
	u32 i, stride;
	int ret;

	ret = td_copy_in(&s, sizeof(s), uarg, TDISPATCH_SUBMIT_SIZE_VER0);
	if (ret)
		return ret;
	if ((s.flags & ~TDISPATCH_SUBMIT_RELATIVE) || s.pad ||
	    !s.count || s.count > TDISPATCH_SUBMIT_MAX)
		return -EINVAL;
	stride = s.task_size;
	if (!stride)
		stride = s.size < TDISPATCH_SUBMIT_SIZE_VER1 ? TDISPATCH_UTASK_SIZE_VER0 :
							       TDISPATCH_UTASK_SIZE_VER1;
	if (stride < TDISPATCH_UTASK_SIZE_VER0 || stride > PAGE_SIZE)
		return -EINVAL;
	next = u64_to_user_ptr(s.tasks);
	s.accepted = 0;
	for (i = 0; i < s.count; i++, next += stride) {
		struct tdispatch_utask ut;

		ret = copy_struct_from_user(&ut, sizeof(ut), next, stride);
		if (ret)
			return ret;
		ut.status = submit_one(ctx, &ut, s.flags);
		if (put_user(ut.status, (s32 __user *)(next +
				offsetof(struct tdispatch_utask, status))))
			return -EFAULT;
		s.accepted += !ut.status;
	}
	return td_copy_out(uarg, &s, sizeof(s));
}

/* The argument of the calls that name one id: CANCEL, PERIODIC_DEL. */
int td_copy_id(void __user *uarg, u64 *id)
{
	struct tdispatch_id a;
	int ret;

	ret = td_copy_in(&a, sizeof(a), uarg, TDISPATCH_ID_SIZE_VER0);
	if (ret)
		return ret;
	if (a.flags)
		return -EINVAL;
	*id = a.id;
	return 0;
}

int td_ioctl_cancel(struct tdispatch *d, void __user *uarg)
{
	u64 id;
	int ret = td_copy_id(uarg, &id);

	return ret ?: tdispatch_cancel(d, id);
}

int td_ioctl_query(struct tdispatch *d, void __user *uarg)
{
	struct tdispatch_query q;
	int ret;

	ret = td_copy_in(&q, sizeof(q), uarg, TDISPATCH_QUERY_SIZE_VER0);
	if (ret)
		return ret;
	if (q.flags || q.delayed)
		return -EINVAL;
	td_query(d, q.id, &q.state, &q.attempts, &q.waiting, &q.delayed);
	return td_copy_out(uarg, &q, sizeof(q));
}

/* @rejected: tasks refused before the engine saw them; the engine's are added. */
int td_ioctl_stats(struct tdispatch *d, void __user *uarg, u64 rejected,
		   u64 rejected_calls, u64 events_lost)
{
	struct tdispatch_stats_user s;
	struct tdispatch_stats st;
	int ret;

	ret = td_copy_in(&s, sizeof(s), uarg, TDISPATCH_STATS_SIZE_VER0);
	if (ret)
		return ret;
	if (s.flags)
		return -EINVAL;
	tdispatch_get_stats(d, &st);
	s = (struct tdispatch_stats_user) {
		.size = sizeof(s),
		.accepted = st.accepted,
		.rejected = st.rejected + rejected,
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
		.rejected_calls = rejected_calls,
		.events_lost = events_lost,
		.delayed = st.delayed,
		.periodic_runs = st.periodic_runs,
	};
	return td_copy_out(uarg, &s, sizeof(s));
}

static long td_ioctl_version(struct tdispatch_version __user *uarg)
{
	struct tdispatch_version kver = {
		.abi_version = TDISPATCH_ABI_VERSION,
		.features = TDISPATCH_FEAT_ALL,
	};
	u32 usize;

	if (get_user(usize, &uarg->size))
		return -EFAULT;
	if (usize < TDISPATCH_VERSION_SIZE_VER0)
		return -EINVAL;
	/* Output only: an older caller gets the prefix it knows about. */
	kver.size = min_t(u32, usize, sizeof(kver));
	if (copy_to_user(uarg, &kver, kver.size))
		return -EFAULT;
	return 0;
}

static struct td_user *td_file_user(struct td_file *f)
{
	/* Pairs with smp_store_release() in td_user_create(). */
	return smp_load_acquire(&f->user);
}

static struct td_attach *td_file_attach(struct td_file *f)
{
	/* Pairs with smp_store_release() in td_named_attach(). */
	return smp_load_acquire(&f->attach);
}

/*
 * An ioctl number carries the size of the struct in the caller's header,
 * which grows; the struct's own size field is what the kernel goes by, so
 * the number of every version of a call, from the first on, is that call.
 */
static unsigned int td_ioctl_call(unsigned int cmd)
{
	static const struct {
		unsigned int cmd;
		unsigned int ver0;	/* the first version's struct size */
	} calls[] = {
		{ TDISPATCH_IOC_VERSION, TDISPATCH_VERSION_SIZE_VER0 },
		{ TDISPATCH_IOC_CREATE, TDISPATCH_CREATE_SIZE_VER0 },
		{ TDISPATCH_IOC_SUBMIT, TDISPATCH_SUBMIT_SIZE_VER0 },
		{ TDISPATCH_IOC_TAKE, TDISPATCH_TAKE_SIZE_VER0 },
		{ TDISPATCH_IOC_COMPLETE, TDISPATCH_COMPLETE_SIZE_VER0 },
		{ TDISPATCH_IOC_CANCEL, TDISPATCH_ID_SIZE_VER0 },
		{ TDISPATCH_IOC_QUERY, TDISPATCH_QUERY_SIZE_VER0 },
		{ TDISPATCH_IOC_STATS, TDISPATCH_STATS_SIZE_VER0 },
		{ TDISPATCH_IOC_LIST, TDISPATCH_LIST_SIZE_VER0 },
		{ TDISPATCH_IOC_ATTACH, TDISPATCH_ATTACH_SIZE_VER0 },
		{ TDISPATCH_IOC_PERIODIC_ADD, TDISPATCH_PERIODIC_ADD_SIZE_VER0 },
		{ TDISPATCH_IOC_PERIODIC_DEL, TDISPATCH_ID_SIZE_VER0 },
		{ TDISPATCH_IOC_PERIODIC_STATS, TDISPATCH_PERIODIC_STATS_SIZE_VER0 },
	};
	unsigned int nr = _IOC_NR(cmd);

	if (_IOC_TYPE(cmd) != TDISPATCH_IOC_MAGIC || nr >= ARRAY_SIZE(calls) ||
	    _IOC_NR(calls[nr].cmd) != nr || _IOC_DIR(calls[nr].cmd) != _IOC_DIR(cmd) ||
	    _IOC_SIZE(cmd) < calls[nr].ver0)
		return 0;
	return calls[nr].cmd;
}

static long td_file_ioctl(struct file *file, unsigned int cmd, void __user *uarg)
{
	struct td_file *f = file->private_data;
	struct td_attach *a = td_file_attach(f);
	struct td_user *u = td_file_user(f);
	unsigned int call = td_ioctl_call(cmd);

	switch (call) {
	case TDISPATCH_IOC_VERSION:
		return td_ioctl_version(uarg);
	case TDISPATCH_IOC_LIST:
		return td_named_list(uarg, file->f_cred);
	case TDISPATCH_IOC_CREATE:
		return td_user_create(f, uarg);
	case TDISPATCH_IOC_ATTACH:
		return td_named_attach(f, file->f_cred, uarg);
	case TDISPATCH_IOC_SUBMIT:
	case TDISPATCH_IOC_TAKE:
	case TDISPATCH_IOC_COMPLETE:
	case TDISPATCH_IOC_CANCEL:
	case TDISPATCH_IOC_QUERY:
	case TDISPATCH_IOC_STATS:
	case TDISPATCH_IOC_PERIODIC_ADD:
	case TDISPATCH_IOC_PERIODIC_DEL:
	case TDISPATCH_IOC_PERIODIC_STATS:
		if (u)
			return td_user_ioctl(f, u, file, call, uarg);
		if (a)
			return td_named_ioctl(f, a, call, uarg);
		return -ENXIO;
	default:
		return -ENOTTY;	/* whether or not there is a dispatcher */
	}
}

static long td_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct td_file *f = file->private_data;
	long ret = td_file_ioctl(file, cmd, (void __user *)arg);

	/* Every failed call is counted; a wait that ends without work is not one. */
	if (ret && ret != -EAGAIN && ret != -ETIMEDOUT && ret != -ERESTARTSYS)
		atomic_long_inc(&f->rejected_calls);
	return ret;
}

static ssize_t td_read(struct file *file, char __user *buf, size_t len, loff_t *pos)
{
	struct td_file *f = file->private_data;
	struct td_attach *a = td_file_attach(f);
	struct td_user *u = td_file_user(f);
	ssize_t ret = -ENXIO;

	if (u)
		ret = td_user_read(u, file, buf, len);
	else if (a)
		ret = td_named_read(a, file, buf, len);
	if (ret < 0 && ret != -EAGAIN && ret != -ERESTARTSYS)
		atomic_long_inc(&f->rejected_calls);
	return ret;
}

static __poll_t td_poll(struct file *file, poll_table *pt)
{
	struct td_file *f = file->private_data;
	struct td_attach *a;
	struct td_user *u;

	poll_wait(file, &f->wait, pt);
	u = td_file_user(f);
	if (u)
		return td_user_poll(u);
	a = td_file_attach(f);
	if (a)
		return td_named_poll(a);
	return 0;
}

/* Each close() of a descriptor: the closer's leases are redelivered. */
static int td_flush(struct file *file, fl_owner_t id)
{
	struct td_user *u = td_file_user(file->private_data);

	if (u)
		td_user_flush(u, id);
	return 0;
}

static int td_open(struct inode *inode, struct file *file)
{
	struct td_file *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	init_waitqueue_head(&f->wait);
	file->private_data = f;
	return 0;
}

static int td_release(struct inode *inode, struct file *file)
{
	struct td_file *f = file->private_data;

	if (f->user)
		td_user_release(f->user);
	if (f->attach)
		td_named_release(f->attach);
	kfree(f);
	return 0;
}

static const struct file_operations td_fops = {
	.owner		= THIS_MODULE,
	.open		= td_open,
	.release	= td_release,
	.flush		= td_flush,
	.read		= td_read,
	.poll		= td_poll,
	.unlocked_ioctl	= td_ioctl,
	/* Every argument has the same layout for 32- and 64-bit callers. */
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* misc_open() set ->private_data to the miscdevice; open replaces it. */
static struct miscdevice td_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= TDISPATCH_DEV_NAME,
	.fops	= &td_fops,
	.mode	= 0666,
};

int td_chardev_init(void)
{
	return misc_register(&td_miscdev);
}

void td_chardev_exit(void)
{
	misc_deregister(&td_miscdev);
}
