// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/tdispatch: the userspace face of the dispatcher.
 *
 * The device is world read-write, like /dev/fuse: opening it grants
 * nothing by itself, everything a file can reach is created through it
 * or explicitly shared with it.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/minmax.h>
#include <linux/uaccess.h>

#include <uapi/linux/tdispatch.h>

#include "internal.h"

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

static long td_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	long ret;

	if (cmd == TDISPATCH_IOC_VERSION)
		ret = td_ioctl_version(uarg);
	else
		ret = td_user_ioctl(file, cmd, uarg);
	/* Waiting that ends without a batch is not a bad call. */
	if (ret && ret != -EAGAIN && ret != -ETIMEDOUT && ret != -ERESTARTSYS)
		td_file_rejected(file);
	return ret;
}

static ssize_t td_read(struct file *file, char __user *buf, size_t len, loff_t *pos)
{
	ssize_t ret = td_user_read(file, buf, len, pos);

	if (ret < 0 && ret != -EAGAIN && ret != -ERESTARTSYS)
		td_file_rejected(file);
	return ret;
}

static const struct file_operations td_fops = {
	.owner		= THIS_MODULE,
	.open		= td_user_open,
	.release	= td_user_release,
	.flush		= td_user_flush,
	.read		= td_read,
	.poll		= td_user_poll,
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
