// SPDX-License-Identifier: GPL-2.0
/*
 * What /dev/tdispatch files may make the kernel hold, bounded by limits
 * an admin sets at runtime under /sys/module/tdispatch/parameters/.
 *
 * A dispatcher made through the device costs an acceptor kthread, an
 * unbound workqueue and up to 64 parked kworkers; an event reader costs a
 * ring of up to 3 MiB and a place on a dispatcher's observer list, which
 * the acceptor and workers walk for every outcome.  So both are counted
 * against the user who opened the file (its real uid, as RLIMIT_NPROC
 * and inotify's max_user_instances count) and against the system, like
 * inotify's limits; memory is charged to the opener's memory cgroup
 * besides (chardev.c).  An opener inside a user namespace counts as the
 * owner of the outermost namespace below the initial one, so that a user
 * with subordinate ids cannot multiply its share by switching among them.
 * CAP_SYS_RESOURCE in the opener's credentials (in the initial namespace)
 * lifts the per-user limits, as it lifts rlimits; the system-wide ones
 * hold for everyone.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/miscdevice.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "internal.h"

static unsigned int max_dispatchers = 256;
module_param(max_dispatchers, uint, 0644);
MODULE_PARM_DESC(max_dispatchers,
		 "Most dispatchers all /dev/tdispatch files may own at once (ENFILE beyond; default 256)");

static unsigned int max_user_dispatchers = 64;
module_param(max_user_dispatchers, uint, 0644);
MODULE_PARM_DESC(max_user_dispatchers,
		 "Most dispatchers the files one user opened may own (EMFILE beyond; default 64)");

static unsigned int max_observers = 64;
module_param(max_observers, uint, 0644);
MODULE_PARM_DESC(max_observers,
		 "Most event readers on one dispatcher, a quarter of them per user (EBUSY beyond; default 64)");

static unsigned int max_user_observers = 128;
module_param(max_user_observers, uint, 0644);
MODULE_PARM_DESC(max_user_observers,
		 "Most event readers the files one user opened may hold (EMFILE beyond; default 128)");

/* What one user holds, while it holds anything. */
struct td_uid {
	struct hlist_node node;
	kuid_t uid;
	unsigned int held[TD_NR_LIMITS];
};

static DEFINE_HASHTABLE(td_uids, 6);
static DEFINE_SPINLOCK(td_uids_lock);
static unsigned int td_dispatchers;		/* held system-wide */
static atomic_long_t td_refused[TD_NR_LIMITS];

static struct td_uid *td_uid_find(kuid_t uid)
{
	struct td_uid *u;

	hash_for_each_possible(td_uids, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* Whom @file's opener counts as. */
kuid_t td_limit_uid(const struct file *file)
{
	const struct user_namespace *ns = file->f_cred->user_ns;

	if (ns == &init_user_ns)
		return file->f_cred->uid;
	while (ns->parent != &init_user_ns)
		ns = ns->parent;
	return ns->owner;
}

bool td_limit_exempt(const struct file *file)
{
	return file_ns_capable(file, &init_user_ns, CAP_SYS_RESOURCE);
}

static unsigned int td_user_limit(enum td_limit what)
{
	if (what == TD_LIMIT_DISPATCHER)
		return READ_ONCE(max_user_dispatchers);
	return READ_ONCE(max_user_observers);
}

/**
 * td_limit_charge() - count one more dispatcher or event reader for a user
 * @c: filled in; give it back with td_limit_uncharge()
 * @file: the /dev/tdispatch file; its opener's credentials count
 * @what: %TD_LIMIT_DISPATCHER or %TD_LIMIT_OBSERVER
 *
 * Process context.
 *
 * Return: 0; -EMFILE at the user's limit; -ENFILE at the system's limit
 * of dispatchers; -ENOMEM.  Every refusal is counted.
 */
int td_limit_charge(struct td_charge *c, const struct file *file, enum td_limit what)
{
	bool exempt = td_limit_exempt(file);
	kuid_t uid = td_limit_uid(file);
	struct td_uid *u, *spare;
	int ret = 0;

	/* Allocated before the lock; a user's first charge keeps it. */
	spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	spin_lock(&td_uids_lock);
	u = td_uid_find(uid);
	if (!u && !spare) {
		ret = -ENOMEM;
	} else if (what == TD_LIMIT_DISPATCHER &&
		   td_dispatchers >= READ_ONCE(max_dispatchers)) {
		ret = -ENFILE;
	} else if (!exempt && (u ? u->held[what] : 0) >= td_user_limit(what)) {
		ret = -EMFILE;
	} else {
		if (!u) {
			u = spare;
			spare = NULL;
			u->uid = uid;
			hash_add(td_uids, &u->node, __kuid_val(u->uid));
		}
		u->held[what]++;
		td_dispatchers += what == TD_LIMIT_DISPATCHER;
		*c = (struct td_charge) { .uid = u, .what = what };
	}
	spin_unlock(&td_uids_lock);
	kfree(spare);
	if (ret && ret != -ENOMEM)
		atomic_long_inc(&td_refused[what]);
	return ret;
}

/**
 * td_limit_uncharge() - give back what td_limit_charge() counted
 * @c: the charge; nothing happens if it holds none
 */
void td_limit_uncharge(struct td_charge *c)
{
	struct td_uid *u = c->uid, *gone = NULL;
	int i;

	if (!u)
		return;
	spin_lock(&td_uids_lock);
	u->held[c->what]--;
	td_dispatchers -= c->what == TD_LIMIT_DISPATCHER;
	for (i = 0; i < TD_NR_LIMITS && !u->held[i]; i++)
		;
	if (i == TD_NR_LIMITS) {
		hash_del(&u->node);
		gone = u;
	}
	spin_unlock(&td_uids_lock);
	kfree(gone);
	c->uid = NULL;
}

/* The per-dispatcher cap on event readers; read by td_events_attach(). */
unsigned int td_limit_observers(void)
{
	return READ_ONCE(max_observers);
}

void td_limit_refused_observer(void)
{
	atomic_long_inc(&td_refused[TD_LIMIT_OBSERVER]);
}

/* /sys/class/misc/tdispatch/: what is held now and what was refused. */
static ssize_t dispatchers_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	unsigned int n;

	spin_lock(&td_uids_lock);
	n = td_dispatchers;
	spin_unlock(&td_uids_lock);
	return sysfs_emit(buf, "%u\n", n);
}
static DEVICE_ATTR_RO(dispatchers);

static ssize_t refused_dispatchers_show(struct device *dev, struct device_attribute *attr,
					char *buf)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&td_refused[TD_LIMIT_DISPATCHER]));
}
static DEVICE_ATTR_RO(refused_dispatchers);

static ssize_t refused_observers_show(struct device *dev, struct device_attribute *attr,
				      char *buf)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&td_refused[TD_LIMIT_OBSERVER]));
}
static DEVICE_ATTR_RO(refused_observers);

static struct attribute *td_limit_attrs[] = {
	&dev_attr_dispatchers.attr,
	&dev_attr_refused_dispatchers.attr,
	&dev_attr_refused_observers.attr,
	NULL,
};

static const struct attribute_group td_limit_group = {
	.attrs = td_limit_attrs,
};

const struct attribute_group *td_limit_groups[] = {
	&td_limit_group,
	NULL,
};
