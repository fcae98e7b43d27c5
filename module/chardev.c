// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/tdispatch: the userspace face of the dispatcher.
 *
 * The device is world read-write, like /dev/fuse: opening it grants
 * nothing by itself.  A file either owns a dispatcher it created
 * (user.c) or is attached to one a driver published (named.c); nothing
 * else is reachable through it.  This file routes the calls (what both
 * kinds share is in ioctl.c) and charges every allocation a call makes to
 * the memory cgroup of the file's opener.
 */
#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/miscdevice.h>
#include <linux/minmax.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/linux/tdispatch.h>

#include "file.h"
#include "limits.h"

/* The VERSION file's version must fit, with its NUL. */
static_assert(sizeof(TDISPATCH_MODULE_VERSION) <=
	      sizeof_field(struct tdispatch_version, module_version));

/* Every feature, but shared slots where pages cannot hold the counts. */
#define TD_FEATURES	(TDISPATCH_FEAT_USER | TDISPATCH_FEAT_NAMED |		\
			 TDISPATCH_FEAT_DELAYED | TDISPATCH_FEAT_PERIODIC |	\
			 TDISPATCH_FEAT_RESULTS | TDISPATCH_FEAT_ATTEMPTS |	\
			 TDISPATCH_FEAT_EXPEDITE | TDISPATCH_FEAT_WATCH |	\
			 TDISPATCH_FEAT_RATE | TDISPATCH_FEAT_MERGE |		\
			 (IS_ENABLED(CONFIG_64BIT) ? TDISPATCH_FEAT_SLOTS : 0))

/* Output only: any size from the 1.0 struct's up gets what fits. */
static long td_ioctl_version(struct tdispatch_version __user *uarg)
{
	struct tdispatch_version kver = { .features = TD_FEATURES };
	u32 usize;

	strscpy(kver.module_version, TDISPATCH_MODULE_VERSION, sizeof(kver.module_version));
	if (get_user(usize, &uarg->size))
		return -EFAULT;
	if (usize < sizeof(kver))
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
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

static long td_file_ioctl(struct file *file, unsigned int cmd, void __user *uarg)
{
	struct td_file *f = file->private_data;
	struct td_attach *a = td_file_attach(f);
	struct td_user *u = td_file_user(f);

	switch (cmd) {
	case TDISPATCH_IOC_VERSION:
		return td_ioctl_version(uarg);
	case TDISPATCH_IOC_LIST:
		return td_named_list(uarg, file->f_cred);
	case TDISPATCH_IOC_CREATE:
		return td_user_create(f, file, uarg);
	case TDISPATCH_IOC_ATTACH:
		return td_named_attach(f, file, uarg);
	case TDISPATCH_IOC_SUBMIT:
	case TDISPATCH_IOC_TAKE:
	case TDISPATCH_IOC_COMPLETE:
	case TDISPATCH_IOC_CANCEL:
	case TDISPATCH_IOC_QUERY:
	case TDISPATCH_IOC_STATS:
	case TDISPATCH_IOC_PERIODIC_ADD:
	case TDISPATCH_IOC_PERIODIC_DEL:
	case TDISPATCH_IOC_PERIODIC_STATS:
	case TDISPATCH_IOC_EXPEDITE:
	case TDISPATCH_IOC_SET_RATE:
	case TDISPATCH_IOC_EXPEDITE_KEY:
	case TDISPATCH_IOC_SLOTS:
	case TDISPATCH_IOC_KICK:
		/* What a named dispatcher does not do, it refuses itself. */
		if (u)
			return td_user_ioctl(f, u, file, cmd, uarg);
		if (a)
			return td_named_ioctl(f, a, cmd, uarg);
		return -ENXIO;
	default:
		return -ENOTTY;	/* whether or not there is a dispatcher */
	}
}

static long td_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct td_file *f = file->private_data;
	struct mem_cgroup *old = set_active_memcg(f->memcg);
	long ret = td_file_ioctl(file, cmd, (void __user *)arg);

	set_active_memcg(old);
	/* Every failed call is counted; a wait that ends without work is not one. */
	if (ret < 0 && ret != -EAGAIN && ret != -ETIMEDOUT && ret != -ERESTARTSYS)
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

/* The shared slots of the file's own dispatcher. */
static int td_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct td_file *f = file->private_data;
	struct td_user *u = td_file_user(f);
	int ret = u ? td_user_mmap(u, vma) : -ENXIO;

	if (ret)
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

/*
 * Each close() of a descriptor: the closer's leases are redelivered.  Not
 * on the last one: release follows at once and cancels them, and a batch
 * put back now would only be cut again on the way out.
 */
static int td_flush(struct file *file, fl_owner_t id)
{
	struct td_user *u = td_file_user(file->private_data);

	if (u && file_count(file) > 1)
		td_user_flush(u, id);
	return 0;
}

static int td_open(struct inode *inode, struct file *file)
{
	struct td_file *f = kzalloc(sizeof(*f), TD_GFP_USER);

	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	init_waitqueue_head(&f->wait);
	/* What the file's calls allocate is charged here, whoever calls. */
	f->memcg = get_mem_cgroup_from_mm(current->mm);
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
	mem_cgroup_put(f->memcg);
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
	.mmap		= td_mmap,
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
	.groups	= td_limit_groups,
};

int td_chardev_init(void)
{
	return misc_register(&td_miscdev);
}

void td_chardev_exit(void)
{
	misc_deregister(&td_miscdev);
}
