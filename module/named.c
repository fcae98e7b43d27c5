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
 *
 * Calls reach a published dispatcher inside an SRCU read section that
 * holds no user memory: arguments are copied in before and results out
 * after, so unpublish waits at most for engine calls and the driver's
 * user_payload and ->release() hooks, never for a user's page fault.
 */
#include <linux/cred.h>
#include <linux/export.h>
#include <linux/poll.h>
#include <linux/refcount.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <uapi/linux/tdispatch.h>

#include "events.h"
#include "file.h"
#include "internal.h"
#include "limits.h"
#include "submit.h"
#include "vec.h"
#include "watch.h"

static_assert(sizeof(struct tdispatch_entry) == 40);
static_assert(TD_NAME_LEN == TDISPATCH_NAME_LEN);

struct td_pub {
	struct mutex lock;		/* ->attached; ->d's withdrawal */
	struct tdispatch __rcu *d;	/* NULL once unpublished; td_published_srcu */
	char name[TD_NAME_LEN];
	struct tdispatch_publish acc;
	struct list_head node;		/* on td_registry */
	struct list_head attached;	/* struct td_attach */
	atomic_long_t rejected;		/* user tasks refused before the engine */
	refcount_t ref;			/* the registry's, one per attachment */
};

struct td_attach {
	struct td_pub *pub;
	struct td_ctx ctx;		/* for the calls ioctl.c shares */
	struct list_head node;		/* on pub->attached */
	wait_queue_head_t *wait;	/* the file's, woken at withdrawal */
	struct td_charge charge;	/* an event reader, per user */
	bool can_submit;
	bool has_events;
	struct td_events events;
};

static LIST_HEAD(td_registry);
static DEFINE_MUTEX(td_registry_lock);	/* never held across user memory */
static unsigned int td_registry_len;

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
 * dispatcher has that name; -ENOMEM; -EOPNOTSUPP in a kernel built
 * without /dev/tdispatch (CONFIG_TDISPATCH_USER).
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
	mutex_init(&p->lock);
	INIT_LIST_HEAD(&p->attached);
	refcount_set(&p->ref, 1);
	RCU_INIT_POINTER(p->d, d);
	strscpy(p->name, d->name, sizeof(p->name));
	p->acc = *pub;

	mutex_lock(&td_registry_lock);
	if (d->pub)
		ret = -EBUSY;
	list_for_each_entry(cur, &td_registry, node)
		if (!ret && !strcmp(cur->name, p->name))
			ret = -EEXIST;
	if (!ret) {
		list_add_tail(&p->node, &td_registry);
		td_registry_len++;
		d->pub = p;
		/* core.c's destroy withdraws it through this; it stays set. */
		WRITE_ONCE(d->withdraw, tdispatch_unpublish);
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
 * calls fail with ENODEV, a reader gets the events already queued, then
 * ENODEV, and a poller sees EPOLLHUP.  When this returns no userspace
 * call is still using @d.  It waits for calls already inside the engine
 * or the driver's @user_payload or ->release() hooks, never for user
 * memory: do not call it holding a lock those hooks take.
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
		td_registry_len--;
		d->pub = NULL;
	}
	mutex_unlock(&td_registry_lock);
	if (!pub)
		return;

	mutex_lock(&pub->lock);
	RCU_INIT_POINTER(pub->d, NULL);
	list_for_each_entry(a, &pub->attached, node) {
		if (a->has_events)
			td_events_detach(d, &a->events);
		else
			wake_up_interruptible_poll(a->wait, EPOLLHUP);
	}
	mutex_unlock(&pub->lock);
	/* Calls that found @d are out of the engine and the driver's hooks. */
	synchronize_srcu(&td_published_srcu);
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

/*
 * The entries are taken under td_registry_lock into a kernel buffer and
 * copied out after, so that a caller's slow page fault holds up nobody.
 */
int td_named_list(void __user *uarg, const struct cred *cred)
{
	struct tdispatch_entry *ents = NULL;
	struct tdispatch_list l;
	struct td_pub *pub;
	u32 n = 0, room;
	int ret;

	ret = td_copy_in(&l, sizeof(l), uarg);
	if (ret)
		return ret;
	if (l.flags)
		return -EINVAL;
	/* Sized first and filled after, so nothing allocates under the lock. */
	room = min(l.max_entries, READ_ONCE(td_registry_len));
	if (room) {
		ents = kvcalloc(room, sizeof(*ents), TD_GFP_USER);
		if (!ents)
			return -ENOMEM;
	}
	mutex_lock(&td_registry_lock);
	l.count = td_registry_len;
	list_for_each_entry(pub, &td_registry, node) {
		struct tdispatch_entry *e;

		if (n >= room)
			break;
		e = &ents[n];
		*e = (struct tdispatch_entry) {
			.uid = from_kuid_munged(current_user_ns(), pub->acc.uid),
			.gid = from_kgid_munged(current_user_ns(), pub->acc.gid),
			.mode = pub->acc.mode,
		};
		strscpy_pad(e->name, pub->name, sizeof(e->name));
		if (pub->acc.user_payload)
			e->flags |= TDISPATCH_ENTRY_SUBMIT;
		if (td_pub_may(pub, cred, MAY_READ))
			e->flags |= TDISPATCH_ENTRY_MAY_READ;
		if (td_pub_may(pub, cred, MAY_READ | MAY_WRITE))
			e->flags |= TDISPATCH_ENTRY_MAY_WRITE;
		n++;
	}
	mutex_unlock(&td_registry_lock);
	if (!ret && n && copy_to_user(u64_to_user_ptr(l.entries), ents, n * sizeof(*ents)))
		ret = -EFAULT;
	kvfree(ents);
	return ret ?: td_copy_out(uarg, &l, sizeof(l));
}

/* Find @name and check @cred may have @mask on it; a reference on success. */
static struct td_pub *td_named_get(const char *name, const struct cred *cred,
				   umode_t mask)
{
	struct td_pub *pub, *found = ERR_PTR(-ENOENT);

	mutex_lock(&td_registry_lock);
	list_for_each_entry(pub, &td_registry, node) {
		if (strcmp(pub->name, name))
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
	td_limit_uncharge(&a->charge);
	kfree(a);
}

int td_named_attach(struct td_file *f, const struct file *file, void __user *uarg)
{
	const struct cred *cred = file->f_cred;
	struct tdispatch *d;
	struct tdispatch_attach at;
	struct td_attach *a;
	struct td_pub *pub;
	int ret;

	ret = td_copy_in(&at, sizeof(at), uarg);
	if (ret)
		return ret;
	if ((at.flags & ~(TDISPATCH_ATTACH_SUBMIT | TDISPATCH_ATTACH_EVENTS)) ||
	    at.pad || !memchr(at.name, 0, sizeof(at.name)) ||
	    !(at.flags & TDISPATCH_ATTACH_EVENTS) != !at.event_queue ||
	    at.event_queue > TD_USER_MAX_EVENTS)
		return -EINVAL;

	a = kzalloc(sizeof(*a), TD_GFP_USER);
	if (!a)
		return -ENOMEM;
	a->can_submit = at.flags & TDISPATCH_ATTACH_SUBMIT;
	a->has_events = at.event_queue;
	a->wait = &f->wait;
	if (a->has_events) {
		ret = td_limit_charge(&a->charge, file, TD_LIMIT_OBSERVER);
		if (!ret && td_events_init(&a->events, at.event_queue, &f->wait))
			ret = -ENOMEM;
		a->events.who = td_limit_who(file);
		a->events.exempt = td_limit_exempt(file);
		if (ret) {
			td_attach_free(a);
			return ret;
		}
	}

	mutex_lock(&f->lock);
	ret = -EEXIST;
	if (f->user || f->attach)
		goto fail;
	pub = td_named_get(at.name, cred, a->can_submit ? MAY_READ | MAY_WRITE : MAY_READ);
	ret = PTR_ERR_OR_ZERO(pub);
	if (ret)
		goto fail;
	mutex_lock(&pub->lock);
	d = rcu_dereference_protected(pub->d, lockdep_is_held(&pub->lock));
	/* ENOENT: withdrawn since we found it. */
	ret = !d ? -ENOENT : a->has_events ? td_events_attach(d, &a->events) : 0;
	if (ret) {
		mutex_unlock(&pub->lock);
		td_pub_put(pub);
		goto fail;
	}
	a->pub = pub;
	a->ctx.published = &pub->d;
	list_add_tail(&a->node, &pub->attached);
	mutex_unlock(&pub->lock);
	/* Pairs with smp_load_acquire() in td_file_attach(). */
	smp_store_release(&f->attach, a);
	mutex_unlock(&f->lock);
	return 0;

fail:
	mutex_unlock(&f->lock);
	td_attach_free(a);
	return ret;
}

static int td_named_submit_one(void *ctx, struct tdispatch_submit_task *ut, u32 flags,
			       struct td_vec *v)
{
	struct td_attach *a = ctx;
	struct td_pub *pub = a->pub;
	struct tdispatch_user_task kt = {
		.id = ut->id,
		.len = ut->payload_len,
		.deadline = ut->deadline_ns,
		.not_before = td_not_before(ut, flags),
		.max_attempts = ut->max_attempts,
		.watch = ut->flags & TDISPATCH_TASK_WATCH,
		.watch_key = ut->watch_key,
	};
	struct td_watcher *w = NULL;
	struct tdispatch_task *t;
	void *data, *payload;
	struct tdispatch *d;
	int idx, ret;

	if (!kt.len || kt.len > TDISPATCH_PAYLOAD_MAX || (ut->flags & ~TDISPATCH_TASK_WATCH)) {
		ret = -EINVAL;
		goto rejected;
	}
	/* The user's bytes first, outside the section. */
	data = memdup_user(u64_to_user_ptr(ut->payload), kt.len);
	if (IS_ERR(data)) {
		ret = PTR_ERR(data);
		goto rejected;
	}
	kt.data = data;
	/* Our own allocation too: nothing of ours reclaims inside the section. */
	t = td_task_alloc(TD_GFP_USER, kt.deadline || kt.not_before);
	if (kt.watch && kt.not_before)
		w = kmalloc(sizeof(*w), TD_GFP_USER);
	d = td_ctx_enter(&a->ctx, &idx);
	if (!d) {
		td_ctx_exit(&a->ctx, idx);
		ret = -ENODEV;
		payload = NULL;
		goto out;
	}
	payload = pub->acc.user_payload(d, &kt);
	if (IS_ERR(payload)) {
		ret = PTR_ERR(payload);
	} else {
		/* The engine counts its own refusals. */
		struct tdispatch_submit_opts o = {
			.deadline = kt.deadline,
			.not_before = kt.not_before,
			.max_attempts = kt.max_attempts,
			.watch = kt.watch,
			.watch_key = kt.watch_key,
		};

		/* A user may ask for fewer attempts than the driver allows, not more. */
		if (d->cfg.max_attempts &&
		    (!o.max_attempts || o.max_attempts > d->cfg.max_attempts))
			o.max_attempts = d->cfg.max_attempts;

		/*
		 * Not @v: the dispatcher may be withdrawn between two tasks,
		 * and a wake-up owed across them would outlive it.
		 */
		ret = td_submit_task(d, t, kt.id, payload, &o, w, 0, NULL);
		if (ret)
			pub->acc.user_free(d, payload);
	}
	td_ctx_exit(&a->ctx, idx);
out:
	if (ret) {
		kfree(w);
		if (t)
			td_task_free(t);
	}
	kfree(data);
	if (!IS_ERR(payload))
		return ret;

rejected:
	atomic_long_inc(&pub->rejected);
	return ret;
}

long td_named_ioctl(struct td_file *f, struct td_attach *a, unsigned int cmd,
		    void __user *uarg)
{
	struct td_pub *pub = a->pub;

	/* Each call checks again where it reaches the engine. */
	if (!rcu_access_pointer(pub->d))
		return -ENODEV;
	switch (cmd) {
	case TDISPATCH_IOC_SUBMIT:
		return a->can_submit ? td_submit_vector(uarg, td_named_submit_one, a) : -EBADF;
	case TDISPATCH_IOC_CANCEL:
		return a->can_submit ? td_ioctl_by_id(&a->ctx, uarg, tdispatch_cancel) : -EBADF;
	case TDISPATCH_IOC_EXPEDITE:
		return a->can_submit ? td_ioctl_by_id(&a->ctx, uarg, tdispatch_expedite) : -EBADF;
	case TDISPATCH_IOC_EXPEDITE_KEY:
		return a->can_submit ? td_ioctl_expedite_key(&a->ctx, uarg) : -EBADF;
	case TDISPATCH_IOC_QUERY:
		return td_ioctl_query(&a->ctx, uarg);
	case TDISPATCH_IOC_STATS:
		return td_ioctl_stats(&a->ctx, uarg, &(struct td_file_counts) {
			.rejected = atomic_long_read(&pub->rejected),
			.rejected_calls = atomic_long_read(&f->rejected_calls),
			.events_lost = a->has_events ? td_events_lost(&a->events) : 0,
		});
	default:
		/*
		 * TAKE, COMPLETE: the driver works on its own batches; SET_RATE,
		 * PERIODIC_*: its config; SLOTS, KICK: a file's own memory.
		 */
		return -EOPNOTSUPP;
	}
}

ssize_t td_named_read(struct td_attach *a, struct file *file, char __user *buf, size_t len)
{
	if (!a->has_events)
		return rcu_access_pointer(a->pub->d) ? -ENXIO : -ENODEV;
	return td_events_read(&a->events, file, buf, len);
}

__poll_t td_named_poll(struct td_attach *a)
{
	__poll_t mask = 0;

	if (a->has_events && td_events_ready(&a->events))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (!rcu_access_pointer(a->pub->d))
		mask |= EPOLLHUP;
	return mask;
}

void td_named_release(struct td_attach *a)
{
	struct td_pub *pub = a->pub;
	struct tdispatch *d;

	mutex_lock(&pub->lock);
	list_del(&a->node);
	d = rcu_dereference_protected(pub->d, lockdep_is_held(&pub->lock));
	if (d && a->has_events)
		td_events_detach(d, &a->events);
	mutex_unlock(&pub->lock);
	td_pub_put(pub);
	td_attach_free(a);
}
