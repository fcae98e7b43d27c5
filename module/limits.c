// SPDX-License-Identifier: GPL-2.0
/*
 * What /dev/tdispatch files may make the kernel hold, bounded by limits
 * an admin sets at runtime under /sys/module/tdispatch/parameters/.
 *
 * A dispatcher made through the device costs an acceptor kthread, an
 * unbound workqueue and up to 64 parked kworkers; an event reader costs a
 * ring of up to 3 MiB and a place on a dispatcher's observer list, which
 * the acceptor and workers walk for every outcome.  So both are counted
 * against the user who opened the file, as a user is known to the user
 * namespace that counts it (td_limit_who()), and against the system:
 *
 * - a user of the initial namespace is its uid (the real one, as
 *   RLIMIT_NPROC and inotify count), limited by max_user_*;
 * - a user inside a namespace that some user made counts as that user, so
 *   that subordinate ids and namespaces do not multiply anyone's share;
 * - a namespace that the initial root made (a container, as runtimes make
 *   them) counts its users apart, each a uid in it limited by max_user_*,
 *   and all of them, with every namespace below, by max_userns_*: the
 *   users of two containers never share a count, and no container takes
 *   more than its own.
 *
 * Dispatchers are also counted system-wide (max_dispatchers).
 * CAP_SYS_RESOURCE in the initial namespace lifts the per-user limits, as
 * it lifts rlimits; a container's and the system's hold for everyone.
 * Memory is charged to the opener's memory cgroup besides (chardev.c).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/miscdevice.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/user_namespace.h>

#include "limits.h"

static unsigned int max_dispatchers = 256;
module_param(max_dispatchers, uint, 0644);
MODULE_PARM_DESC(max_dispatchers,
		 "Most dispatchers all /dev/tdispatch files may own at once (ENFILE beyond; default 256)");

static unsigned int max_user_dispatchers = 64;
module_param(max_user_dispatchers, uint, 0644);
MODULE_PARM_DESC(max_user_dispatchers,
		 "Most dispatchers the files one user opened may own (EMFILE beyond; default 64)");

static unsigned int max_userns_dispatchers = 64;
module_param(max_userns_dispatchers, uint, 0644);
MODULE_PARM_DESC(max_userns_dispatchers,
		 "Most dispatchers the users of one user namespace that root made may own together (EMFILE beyond; default 64)");

static unsigned int max_observers = 64;
module_param(max_observers, uint, 0644);
MODULE_PARM_DESC(max_observers,
		 "Most event readers on one dispatcher, a quarter of them per user (EBUSY beyond; default 64)");

static unsigned int max_user_observers = 128;
module_param(max_user_observers, uint, 0644);
MODULE_PARM_DESC(max_user_observers,
		 "Most event readers the files one user opened may hold (EMFILE beyond; default 128)");

static unsigned int max_userns_observers = 128;
module_param(max_userns_observers, uint, 0644);
MODULE_PARM_DESC(max_userns_observers,
		 "Most event readers the users of one user namespace that root made may hold together (EMFILE beyond; default 128)");

/* A user's count, or (->uid invalid) a namespace's, while it counts anything. */
struct td_count {
	struct hlist_node node;
	struct user_namespace *ns;	/* a reference */
	kuid_t uid;
	unsigned int held[TD_NR_LIMITS];
};

static DEFINE_HASHTABLE(td_counts, 6);
static DEFINE_SPINLOCK(td_counts_lock);
static unsigned int td_dispatchers;		/* held system-wide */
static atomic_long_t td_refused[TD_NR_LIMITS];

/**
 * td_limit_who() - whom a file's opener counts as
 * @file: the /dev/tdispatch file
 *
 * Return: the user namespace that counts the opener and its uid there:
 * the initial namespace, or the outermost one below it that its root
 * made, and the opener's uid, or the user who made the namespace it is
 * in below that.
 */
struct td_who td_limit_who(const struct file *file)
{
	struct td_who w = { file->f_cred->user_ns, file->f_cred->uid };

	while (w.ns != &init_user_ns &&
	       (w.ns->parent != &init_user_ns || !uid_eq(w.ns->owner, GLOBAL_ROOT_UID))) {
		w.uid = w.ns->owner;
		w.ns = w.ns->parent;
	}
	return w;
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

static unsigned int td_userns_limit(enum td_limit what)
{
	if (what == TD_LIMIT_DISPATCHER)
		return READ_ONCE(max_userns_dispatchers);
	return READ_ONCE(max_userns_observers);
}

static u32 td_count_hash(const struct user_namespace *ns, kuid_t uid)
{
	return hash_ptr(ns, 32) ^ __kuid_val(uid);
}

static struct td_count *td_count_find(const struct user_namespace *ns, kuid_t uid)
{
	struct td_count *c;

	hash_for_each_possible(td_counts, c, node, td_count_hash(ns, uid))
		if (c->ns == ns && uid_eq(c->uid, uid))
			return c;
	return NULL;
}

/* A new count of @ns's @uid, made of *@spare (zeroed), which it takes. */
static struct td_count *td_count_add(struct td_count **spare, struct user_namespace *ns,
				     kuid_t uid)
{
	struct td_count *c = *spare;

	*spare = NULL;
	c->ns = get_user_ns(ns);
	c->uid = uid;
	hash_add(td_counts, &c->node, td_count_hash(ns, uid));
	return c;
}

/* One less of @what; a count that holds nothing goes, its namespace put. */
static void td_count_put(struct td_count *c, enum td_limit what)
{
	int k;

	c->held[what]--;
	for (k = 0; k < TD_NR_LIMITS; k++)
		if (c->held[k])
			return;
	hash_del(&c->node);
	put_user_ns(c->ns);
	kfree(c);
}

/**
 * td_limit_charge() - count one more dispatcher or event reader for a user
 * @c: filled in; give it back with td_limit_uncharge()
 * @file: the /dev/tdispatch file; its opener's credentials count
 * @what: %TD_LIMIT_DISPATCHER or %TD_LIMIT_OBSERVER
 *
 * Process context.
 *
 * Return: 0; -EMFILE at the user's limit or its namespace's; -ENFILE at
 * the system's limit of dispatchers; -ENOMEM.  Every refusal but ENOMEM
 * is counted.
 */
int td_limit_charge(struct td_charge *c, const struct file *file, enum td_limit what)
{
	struct td_count *spare[2], *user = NULL, *ns = NULL;
	struct td_who w = td_limit_who(file);
	bool exempt = td_limit_exempt(file);
	int ret = 0;

	/* Allocated before the lock; a first charge keeps them. */
	spare[0] = kzalloc(sizeof(*spare[0]), GFP_KERNEL);
	spare[1] = kzalloc(sizeof(*spare[1]), GFP_KERNEL);
	spin_lock(&td_counts_lock);
	if (what == TD_LIMIT_DISPATCHER && td_dispatchers >= READ_ONCE(max_dispatchers)) {
		ret = -ENFILE;
		goto out;
	}
	user = td_count_find(w.ns, w.uid);
	if (!exempt && user && user->held[what] >= td_user_limit(what))
		ret = -EMFILE;
	if (w.ns != &init_user_ns) {
		ns = td_count_find(w.ns, INVALID_UID);
		if (ns && ns->held[what] >= td_userns_limit(what))
			ret = -EMFILE;
	}
	if (!ret && ((!user && !spare[0]) || (w.ns != &init_user_ns && !ns && !spare[1])))
		ret = -ENOMEM;
	if (ret)
		goto out;
	if (!user)
		user = td_count_add(&spare[0], w.ns, w.uid);
	if (w.ns != &init_user_ns && !ns)
		ns = td_count_add(&spare[1], w.ns, INVALID_UID);
	user->held[what]++;
	if (ns)
		ns->held[what]++;
	td_dispatchers += what == TD_LIMIT_DISPATCHER;
	*c = (struct td_charge) { .user = user, .ns = ns, .what = what };
out:
	spin_unlock(&td_counts_lock);
	kfree(spare[0]);
	kfree(spare[1]);
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
	if (!c->user)
		return;
	spin_lock(&td_counts_lock);
	td_count_put(c->user, c->what);
	if (c->ns)
		td_count_put(c->ns, c->what);
	td_dispatchers -= c->what == TD_LIMIT_DISPATCHER;
	spin_unlock(&td_counts_lock);
	c->user = NULL;
	c->ns = NULL;
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

	spin_lock(&td_counts_lock);
	n = td_dispatchers;
	spin_unlock(&td_counts_lock);
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
