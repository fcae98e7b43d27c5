// SPDX-License-Identifier: GPL-2.0
/*
 * Named dispatchers: a driver publishes one of its dispatchers under its
 * name, and /dev/tdispatch files list them and attach to one to read its
 * counters and events and, where the driver allows, to submit.
 *
 * Access is decided once, at attach, like open() of a file: the owner,
 * group and mode the driver published against the credentials of the
 * file's opener, so that a descriptor handed to a less privileged process
 * keeps what its opener was granted and nothing more.  An attachment does
 * not pin the dispatcher: tdispatch_unpublish() cuts every attachment off
 * (their calls fail with ENODEV from then on), so that a driver can
 * always go away.
 */
#include <linux/cred.h>
#include <linux/export.h>
#include <linux/poll.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/linux/tdispatch.h>

#include "internal.h"

static_assert(sizeof(struct tdispatch_entry) == 40);
static_assert(sizeof(struct tdispatch_list) == TDISPATCH_LIST_SIZE_VER0);
static_assert(sizeof(struct tdispatch_attach) == TDISPATCH_ATTACH_SIZE_VER0);
static_assert(TD_NAME_LEN == TDISPATCH_NAME_LEN);

struct td_pub {
	struct rw_semaphore rwsem;	/* ->d, ->attached against calls */
	struct tdispatch *d;		/* NULL once unpublished */
	struct tdispatch_publish acc;
	struct list_head node;		/* on td_registry */
	struct list_head attached;	/* struct td_attach */
	atomic_long_t rejected;		/* user tasks refused before the engine */
	refcount_t ref;			/* the registry's, one per attachment */
};

struct td_attach {
	struct td_pub *pub;
	struct list_head node;		/* on pub->attached */
	bool can_submit;
	bool has_events;
	struct td_events events;
};

static LIST_HEAD(td_registry);
static DEFINE_MUTEX(td_registry_lock);

static const struct tdispatch_publish td_root_only = {
	.uid = GLOBAL_ROOT_UID,
	.gid = GLOBAL_ROOT_GID,
	.mode = 0400,
};

static void td_pub_put(struct td_pub *pub)
{
	if (refcount_dec_and_test(&pub->ref))
		kfree(pub);
}

/**
 * tdispatch_publish() - make a dispatcher visible to userspace by its name
 * @d: the dispatcher
 * @pub: who may attach and submit, see &struct tdispatch_publish; NULL:
 *	root may attach and read, nobody may submit
 *
 * The dispatcher appears in /dev/tdispatch's list under the name it was
 * created with.  tdispatch_destroy() withdraws it.
 *
 * Process context; may sleep.
 *
 * Return: 0; -EINVAL for mode bits beyond 0777 or only one of the two
 * user hooks; -EBUSY if @d is published already; -EEXIST if another
 * dispatcher has that name; -ENOMEM.
 */
int tdispatch_publish(struct tdispatch *d, const struct tdispatch_publish *pub)
{
	struct td_pub *p, *cur;
	int ret = 0;

	might_sleep();
	if (!pub)
		pub = &td_root_only;
	if ((pub->mode & ~0777) || !pub->user_payload != !pub->user_free)
		return -EINVAL;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	init_rwsem(&p->rwsem);
	INIT_LIST_HEAD(&p->attached);
	refcount_set(&p->ref, 1);
	p->d = d;
	p->acc = *pub;

	mutex_lock(&td_registry_lock);
	if (d->pub)
		ret = -EBUSY;
	list_for_each_entry(cur, &td_registry, node)
		if (!ret && !strcmp(cur->d->name, d->name))
			ret = -EEXIST;
	if (!ret) {
		list_add_tail(&p->node, &td_registry);
		d->pub = p;
	}
	mutex_unlock(&td_registry_lock);
	if (ret)
		kfree(p);
	return ret;
}
EXPORT_SYMBOL_GPL(tdispatch_publish);

/**
 * tdispatch_unpublish() - withdraw a dispatcher from userspace
 * @d: the dispatcher; nothing happens if it is not published
 *
 * It leaves the list, and every file attached to it is cut off: its
 * calls fail with ENODEV, and a reader gets the events already queued,
 * then ENODEV.  When this returns no userspace call is still using @d.
 *
 * Process context; may sleep.
 */
void tdispatch_unpublish(struct tdispatch *d)
{
	struct td_attach *a;
	struct td_pub *pub;

	might_sleep();
	mutex_lock(&td_registry_lock);
	pub = d->pub;
	if (pub) {
		list_del(&pub->node);
		d->pub = NULL;
	}
	mutex_unlock(&td_registry_lock);
	if (!pub)
		return;

	down_write(&pub->rwsem);
	list_for_each_entry(a, &pub->attached, node)
		if (a->has_events)
			td_events_detach(d, &a->events);
	pub->d = NULL;
	up_write(&pub->rwsem);
	td_pub_put(pub);
}
EXPORT_SYMBOL_GPL(tdispatch_unpublish);

/* As for a file: the owner's bits, else the group's, else the others'. */
static bool td_pub_may(const struct td_pub *pub, const struct cred *cred, umode_t mask)
{
	const struct group_info *gi = cred->group_info;
	umode_t mode = pub->acc.mode;
	bool in_group = gid_eq(cred->fsgid, pub->acc.gid);
	int i;

	for (i = 0; !in_group && i < gi->ngroups; i++)
		in_group = gid_eq(gi->gid[i], pub->acc.gid);
	if (uid_eq(cred->fsuid, pub->acc.uid))
		mode >>= 6;
	else if (in_group)
		mode >>= 3;
	return !(mask & ~mode & 0007);
}

int td_named_list(void __user *uarg, const struct cred *cred)
{
	struct tdispatch_entry __user *out;
	struct tdispatch_list l;
	struct td_pub *pub;
	int ret;

	ret = td_copy_in(&l, sizeof(l), uarg, TDISPATCH_LIST_SIZE_VER0);
	if (ret)
		return ret;
	if (l.flags)
		return -EINVAL;
	out = u64_to_user_ptr(l.entries);
	l.count = 0;
	mutex_lock(&td_registry_lock);
	list_for_each_entry(pub, &td_registry, node) {
		struct tdispatch_entry e = {
			.uid = from_kuid_munged(current_user_ns(), pub->acc.uid),
			.gid = from_kgid_munged(current_user_ns(), pub->acc.gid),
			.mode = pub->acc.mode,
		};

		if (l.count++ >= l.max_entries)
			continue;
		strscpy_pad(e.name, pub->d->name, sizeof(e.name));
		if (pub->acc.user_payload)
			e.flags |= TDISPATCH_ENTRY_SUBMIT;
		if (td_pub_may(pub, cred, MAY_READ))
			e.flags |= TDISPATCH_ENTRY_MAY_READ;
		if (td_pub_may(pub, cred, MAY_READ | MAY_WRITE))
			e.flags |= TDISPATCH_ENTRY_MAY_WRITE;
		if (copy_to_user(&out[l.count - 1], &e, sizeof(e))) {
			ret = -EFAULT;
			break;
		}
	}
	mutex_unlock(&td_registry_lock);
	return ret ?: td_copy_out(uarg, &l, sizeof(l));
}

/* Find @name and check @cred may have @mask on it; a reference on success. */
static struct td_pub *td_named_get(const char *name, const struct cred *cred,
				   umode_t mask)
{
	struct td_pub *pub, *found = ERR_PTR(-ENOENT);

	mutex_lock(&td_registry_lock);
	list_for_each_entry(pub, &td_registry, node) {
		if (strcmp(pub->d->name, name))
			continue;
		if (!td_pub_may(pub, cred, mask)) {
			found = ERR_PTR(-EACCES);
		} else if ((mask & MAY_WRITE) && !pub->acc.user_payload) {
			found = ERR_PTR(-EOPNOTSUPP);
		} else {
			refcount_inc(&pub->ref);
			found = pub;
		}
		break;
	}
	mutex_unlock(&td_registry_lock);
	return found;
}

static void td_attach_free(struct td_attach *a)
{
	td_events_free(&a->events);
	kfree(a);
}

int td_named_attach(struct td_file *f, const struct cred *cred, void __user *uarg)
{
	struct tdispatch_attach at;
	struct td_attach *a;
	struct td_pub *pub;
	int ret;

	ret = td_copy_in(&at, sizeof(at), uarg, TDISPATCH_ATTACH_SIZE_VER0);
	if (ret)
		return ret;
	if ((at.flags & ~(TDISPATCH_ATTACH_SUBMIT | TDISPATCH_ATTACH_EVENTS)) ||
	    at.pad || !memchr(at.name, 0, sizeof(at.name)) ||
	    !(at.flags & TDISPATCH_ATTACH_EVENTS) != !at.event_queue ||
	    at.event_queue > TD_USER_MAX_EVENTS)
		return -EINVAL;

	a = kzalloc(sizeof(*a), GFP_KERNEL_ACCOUNT);
	if (!a)
		return -ENOMEM;
	a->can_submit = at.flags & TDISPATCH_ATTACH_SUBMIT;
	a->has_events = at.event_queue;
	if (a->has_events && td_events_init(&a->events, at.event_queue, &f->wait)) {
		td_attach_free(a);
		return -ENOMEM;
	}

	mutex_lock(&f->lock);
	ret = -EEXIST;
	if (f->user || f->attach)
		goto fail;
	pub = td_named_get(at.name, cred, a->can_submit ? MAY_READ | MAY_WRITE : MAY_READ);
	ret = PTR_ERR_OR_ZERO(pub);
	if (ret)
		goto fail;
	down_write(&pub->rwsem);
	if (!pub->d) {
		/* Withdrawn since we found it. */
		up_write(&pub->rwsem);
		td_pub_put(pub);
		ret = -ENOENT;
		goto fail;
	}
	a->pub = pub;
	list_add_tail(&a->node, &pub->attached);
	if (a->has_events)
		td_events_attach(pub->d, &a->events);
	up_write(&pub->rwsem);
	/* Pairs with smp_load_acquire() in td_file_attach(). */
	smp_store_release(&f->attach, a);
	mutex_unlock(&f->lock);
	return 0;

fail:
	mutex_unlock(&f->lock);
	td_attach_free(a);
	return ret;
}

static int td_named_submit_one(void *ctx, struct tdispatch_utask *ut, u32 flags)
{
	struct td_pub *pub = ctx;
	struct tdispatch_user_task kt = {
		.id = ut->id,
		.len = ut->payload_len,
		.deadline = ut->deadline_ns,
		.not_before = td_not_before(ut, flags),
	};
	void *data, *payload;
	int ret;

	if (!kt.len || kt.len > TDISPATCH_PAYLOAD_MAX) {
		ret = -EINVAL;
		goto rejected;
	}
	data = memdup_user(u64_to_user_ptr(ut->payload), kt.len);
	if (IS_ERR(data)) {
		ret = PTR_ERR(data);
		goto rejected;
	}
	kt.data = data;
	payload = pub->acc.user_payload(pub->d, &kt);
	kfree(data);
	if (IS_ERR(payload)) {
		ret = PTR_ERR(payload);
		goto rejected;
	}
	/* The engine counts its own refusals. */
	ret = tdispatch_submit_delayed(pub->d, kt.id, payload, kt.not_before, kt.deadline,
				       GFP_KERNEL_ACCOUNT);
	if (ret)
		pub->acc.user_free(pub->d, payload);
	return ret;

rejected:
	atomic_long_inc(&pub->rejected);
	return ret;
}

long td_named_ioctl(struct td_file *f, struct td_attach *a, unsigned int cmd,
		    void __user *uarg)
{
	struct td_pub *pub = a->pub;
	long ret;

	down_read(&pub->rwsem);
	if (!pub->d) {
		ret = -ENODEV;
		goto out;
	}
	switch (cmd) {
	case TDISPATCH_IOC_SUBMIT:
		ret = a->can_submit ? td_submit_vector(uarg, td_named_submit_one, pub) : -EBADF;
		break;
	case TDISPATCH_IOC_CANCEL:
		ret = a->can_submit ? td_ioctl_cancel(pub->d, uarg) : -EBADF;
		break;
	case TDISPATCH_IOC_QUERY:
		ret = td_ioctl_query(pub->d, uarg);
		break;
	case TDISPATCH_IOC_STATS:
		ret = td_ioctl_stats(pub->d, uarg, atomic_long_read(&pub->rejected),
				     atomic_long_read(&f->rejected_calls),
				     a->has_events ? td_events_lost(&a->events) : 0);
		break;
	default:
		/* TAKE, COMPLETE: the driver works on its own batches. */
		ret = -EOPNOTSUPP;
		break;
	}
out:
	up_read(&pub->rwsem);
	return ret;
}

ssize_t td_named_read(struct td_attach *a, struct file *file, char __user *buf, size_t len)
{
	if (!a->has_events)
		return READ_ONCE(a->pub->d) ? -ENXIO : -ENODEV;
	return td_events_read(&a->events, file, buf, len);
}

__poll_t td_named_poll(struct td_attach *a)
{
	__poll_t mask = 0;

	if (a->has_events && td_events_ready(&a->events))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (!READ_ONCE(a->pub->d))
		mask |= EPOLLHUP;
	return mask;
}

void td_named_release(struct td_attach *a)
{
	struct td_pub *pub = a->pub;

	down_write(&pub->rwsem);
	list_del(&a->node);
	if (pub->d && a->has_events)
		td_events_detach(pub->d, &a->events);
	up_write(&pub->rwsem);
	td_pub_put(pub);
	td_attach_free(a);
}
