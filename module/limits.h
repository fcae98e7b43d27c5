/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What /dev/tdispatch files may make the kernel hold (limits.c): counts of
 * dispatchers and event readers per user, per container and system-wide.
 */
#ifndef _TDISPATCH_LIMITS_H
#define _TDISPATCH_LIMITS_H

#include <linux/types.h>
#include <linux/uidgid.h>

struct file;
struct td_count;
struct user_namespace;
struct attribute_group;

enum td_limit {
	TD_LIMIT_DISPATCHER,
	TD_LIMIT_OBSERVER,
	TD_NR_LIMITS,
};

/* A charge: the counts it holds, its user's and (in a container) its namespace's. */
struct td_charge {
	struct td_count *user;		/* NULL: nothing charged */
	struct td_count *ns;
	enum td_limit what;
};

/* Whom an opener counts as: see td_limit_who(). */
struct td_who {
	struct user_namespace *ns;
	kuid_t uid;
};

int td_limit_charge(struct td_charge *c, const struct file *file, enum td_limit what);
struct td_who td_limit_who(const struct file *file);
bool td_limit_exempt(const struct file *file);
void td_limit_uncharge(struct td_charge *c);
unsigned int td_limit_observers(void);
void td_limit_refused_observer(void);
extern const struct attribute_group *td_limit_groups[];

#endif /* _TDISPATCH_LIMITS_H */
