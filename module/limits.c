// SPDX-License-Identifier: GPL-2.0
/*
 * What /dev/tdispatch files may make the kernel hold, bounded by limits
 * an admin sets at runtime under /sys/module/tdispatch/parameters/.
 *
 * A dispatcher made through the device costs an acceptor kthread, an
 * unbound workqueue and up to 64 parked kworkers; an event reader costs a
 * ring of up to 3 MiB and a place on a dispatcher's observer list, which
 * the acceptor and workers walk for every outcome.  So both are counted,
 * as the kernel's ucounts count inotify instances, by user namespace and
 * uid, at every level up to the initial namespace:
 *
 * - the opener: its uid in its own user namespace (max_user_*), so that
 *   the users of two containers never share a count;
 * - every user namespace the opener is in, with all the namespaces below
 *   it (max_userns_*), so that no container, however many users it maps,
 *   takes more than that;
 * - the owner of each of those namespaces, in the namespace above it, for
 *   all the namespaces it owns there (max_userns_*), so that a user
 *   cannot multiply its share by making namespaces.  The initial
 *   namespace's root, which container runtimes run as, is not held to
 *   that: each of its containers is bounded by the level above.
 *
 * Dispatchers are also counted system-wide (max_dispatchers), for
 * everyone.  CAP_SYS_RESOURCE in the initial namespace lifts the opener's
 * own per-user limit, as it lifts rlimits; the levels above it and the
 * system-wide limit hold all the same.  Memory is charged to the opener's
 * memory cgroup besides (chardev.c).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/miscdevice.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>

#include "internal.h"

static unsigned int max_dispatchers = 256;
module_param(max_dispatchers, uint, 0644);
MODULE_PARM_DESC(max_dispatchers,
		 "Most dispatchers all /dev/tdispatch files may own at once (ENFILE beyond; default 256)");

static unsigned int max_user_dispatchers = 64;
module_param(max_user_dispatchers, uint, 0644);
MODULE_PARM_DESC(max_user_dispatchers,
		 "Most dispatchers the files one user (a uid in a user namespace) opened may own (EMFILE beyond; default 64)");

static unsigned int max_userns_dispatchers = 128;
module_param(max_userns_dispatchers, uint, 0644);
MODULE_PARM_DESC(max_userns_dispatchers,
		 "Most dispatchers the users of one user namespace and those below it, or of the namespaces one user owns, may own (EMFILE beyond; default 128)");

static unsigned int max_observers = 64;
module_param(max_observers, uint, 0644);
MODULE_PARM_DESC(max_observers,
		 "Most event readers on one dispatcher, a quarter of them per user (EBUSY beyond; default 64)");

static unsigned int max_user_observers = 128;
module_param(max_user_observers, uint, 0644);
MODULE_PARM_DESC(max_user_observers,
		 "Most event readers the files one user opened may hold (EMFILE beyond; default 128)");

static unsigned int max_userns_observers = 256;
module_param(max_userns_observers, uint, 0644);
MODULE_PARM_DESC(max_userns_observers,
		 "Most event readers the users of one user namespace and those below it, or of the namespaces one user owns, may hold (EMFILE beyond; default 256)");

enum td_level {
	TD_LEVEL_USER,		/* a uid's own, in its namespace */
	TD_LEVEL_NS,		/* a namespace's, with those below it */
	TD_LEVEL_OWNER,		/* a uid's namespaces', in the namespace above them */
};

/* One level's count, while a charge is made or held there. */
struct td_count {
	struct hlist_node node;
	struct user_namespace *ns;	/* a reference */
	kuid_t uid;			/* INVALID_UID at TD_LEVEL_NS */
	enum td_level level;
	unsigned int held[TD_NR_LIMITS];
};

static DEFINE_HASHTABLE(td_counts, 6);
static DEFINE_MUTEX(td_counts_lock);
static unsigned int td_dispatchers;		/* held system-wide */
static atomic_long_t td_refused[TD_NR_LIMITS];

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

static u32 td_count_hash(const struct user_namespace *ns, kuid_t uid, enum td_level level)
{
	return hash_ptr(ns, 32) ^ __kuid_val(uid) ^ level;
}

/* The count of a level, made (empty) if there is none; NULL without memory. */
static struct td_count *td_count_get(struct user_namespace *ns, kuid_t uid, enum td_level level)
{
	u32 key = td_count_hash(ns, uid, level);
	struct td_count *c;

	lockdep_assert_held(&td_counts_lock);
	hash_for_each_possible(td_counts, c, node, key)
		if (c->ns == ns && uid_eq(c->uid, uid) && c->level == level)
			return c;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return NULL;
	c->ns = get_user_ns(ns);
	c->uid = uid;
	c->level = level;
	hash_add(td_counts, &c->node, key);
	return c;
}

/* A count that holds nothing goes. */
static void td_count_trim(struct td_count *c)
{
	int k;

	for (k = 0; k < TD_NR_LIMITS; k++)
		if (c->held[k])
			return;
	hash_del(&c->node);
	put_user_ns(c->ns);
	kfree(c);
}

enum td_op { TD_CHECK, TD_ADD, TD_TRIM, TD_SUB };

/* One level of a charge, for td_levels(): 0, or why it cannot be charged. */
static int td_level_op(struct user_namespace *ns, kuid_t uid, enum td_level level,
		       unsigned int limit, enum td_limit what, enum td_op op)
{
	struct td_count *c = td_count_get(ns, uid, level);

	if (!c)
		return -ENOMEM;
	switch (op) {
	case TD_CHECK:
		return c->held[what] < limit ? 0 : -EMFILE;
	case TD_ADD:
		c->held[what]++;
		return 0;
	case TD_SUB:
		c->held[what]--;
		fallthrough;
	case TD_TRIM:
		td_count_trim(c);
	}
	return 0;
}

/*
 * @op at every level a charge of @uid in @ns counts at, up to the first
 * that refuses: the user's own, then for each namespace up to the initial
 * one the namespace's and its owner's in the namespace above.
 */
static int td_levels(struct user_namespace *ns, kuid_t uid, bool exempt, enum td_limit what,
		     enum td_op op)
{
	int ret = td_level_op(ns, uid, TD_LEVEL_USER, exempt ? UINT_MAX : td_user_limit(what),
			      what, op);

	for (; !ret && ns != &init_user_ns; ns = ns->parent) {
		ret = td_level_op(ns, INVALID_UID, TD_LEVEL_NS, td_userns_limit(what), what, op);
		if (!ret && (ns->parent != &init_user_ns || !uid_eq(ns->owner, GLOBAL_ROOT_UID)))
			ret = td_level_op(ns->parent, ns->owner, TD_LEVEL_OWNER,
					  td_userns_limit(what), what, op);
	}
	return ret;
}

/* Whom @file's opener counts as for a dispatcher's share of readers. */
kuid_t td_limit_uid(const struct file *file)
{
	return file->f_cred->uid;
}

bool td_limit_exempt(const struct file *file)
{
	return file_ns_capable(file, &init_user_ns, CAP_SYS_RESOURCE);
}

/**
 * td_limit_charge() - count one more dispatcher or event reader for a user
 * @c: filled in; give it back with td_limit_uncharge()
 * @file: the /dev/tdispatch file; its opener's credentials count
 * @what: %TD_LIMIT_DISPATCHER or %TD_LIMIT_OBSERVER
 *
 * Process context; may sleep.
 *
 * Return: 0; -EMFILE at a limit of the user, of a namespace it is in or of
 * the owner of one; -ENFILE at the system's limit of dispatchers; -ENOMEM.
 * Every refusal but ENOMEM is counted.
 */
int td_limit_charge(struct td_charge *c, const struct file *file, enum td_limit what)
{
	struct user_namespace *ns = file->f_cred->user_ns;
	kuid_t uid = file->f_cred->uid;
	bool exempt = td_limit_exempt(file);
	int ret = 0;

	mutex_lock(&td_counts_lock);
	if (what == TD_LIMIT_DISPATCHER && td_dispatchers >= READ_ONCE(max_dispatchers))
		ret = -ENFILE;
	else
		ret = td_levels(ns, uid, exempt, what, TD_CHECK);
	if (!ret) {
		td_levels(ns, uid, exempt, what, TD_ADD);
		td_dispatchers += what == TD_LIMIT_DISPATCHER;
		*c = (struct td_charge) { .ns = get_user_ns(ns), .uid = uid, .what = what };
	} else if (ret != -ENFILE) {
		/* The empty counts the check made go again. */
		td_levels(ns, uid, exempt, what, TD_TRIM);
	}
	mutex_unlock(&td_counts_lock);
	if (ret && ret != -ENOMEM)
		atomic_long_inc(&td_refused[what]);
	return ret;
}

/**
 * td_limit_uncharge() - give back what td_limit_charge() counted
 * @c: the charge; nothing happens if it holds none
 *
 * Process context; may sleep.
 */
void td_limit_uncharge(struct td_charge *c)
{
	if (!c->ns)
		return;
	mutex_lock(&td_counts_lock);
	/* Every level exists while the charge is held: no allocation, no refusal. */
	td_levels(c->ns, c->uid, false, c->what, TD_SUB);
	td_dispatchers -= c->what == TD_LIMIT_DISPATCHER;
	mutex_unlock(&td_counts_lock);
	put_user_ns(c->ns);
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

	mutex_lock(&td_counts_lock);
	n = td_dispatchers;
	mutex_unlock(&td_counts_lock);
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
