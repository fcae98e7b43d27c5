/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Outcome events for userspace readers (events.c).
 */
#ifndef _TDISPATCH_EVENTS_H
#define _TDISPATCH_EVENTS_H

#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/timekeeping.h>
#include <linux/spinlock.h>
#include <linux/tdispatch.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "limits.h"

struct file;
struct tdispatch;

/* A bounded ring of outcome events for one userspace reader. */
struct td_events {
	struct list_head node;		/* on the dispatcher's observers */
	spinlock_t lock;		/* the ring */
	struct mutex read_lock;		/* one reader at a time */
	wait_queue_head_t *wait;	/* the reader's file's */
	struct td_who who;		/* whose, for the per-user share */
	bool exempt;			/* CAP_SYS_RESOURCE: no per-user share */
	struct tdispatch_event *ring;
	u32 cap, head, count;
	u64 seq, lost, lost_total;
	bool gone;			/* the dispatcher was withdrawn */
};

int td_events_init(struct td_events *ev, u32 cap, wait_queue_head_t *wait);
void td_events_free(struct td_events *ev);
int td_events_attach(struct tdispatch *d, struct td_events *ev);
void td_events_detach(struct tdispatch *d, struct td_events *ev);
/* What readers learn of @t's end; made before ->release() lets @t go. */
static inline struct tdispatch_event td_outcome_event(const struct tdispatch_task *t,
						      enum tdispatch_outcome outcome)
{
	return (struct tdispatch_event) {
		.type = TDISPATCH_EVENT_OUTCOME,
		.outcome = outcome,
		.id = t->id,
		.latency_ns = ktime_to_ns(ktime_sub(ktime_get(), t->submitted)),
		.attempts = t->attempts,
	};
}

#if IS_ENABLED(CONFIG_TDISPATCH_USER)
void td_events_observe(struct tdispatch *d, const struct tdispatch_event *e);
#else
/* Without /dev/tdispatch no reader attaches: ->observers stays empty. */
static inline void td_events_observe(struct tdispatch *d, const struct tdispatch_event *e)
{
}
#endif
bool td_events_ready(struct td_events *ev);
u64 td_events_lost(struct td_events *ev);
ssize_t td_events_read(struct td_events *ev, struct file *file,
		       char __user *buf, size_t len);

#endif /* _TDISPATCH_EVENTS_H */
